"""The sandbox's web page: a browser view of the fake Telegram world, and its users' hands.

`SandboxWeb` serves a static page (``sandbox/static/``) and a small JSON API over the
`FakeTelegram` world running in the same event loop:

* ``GET /api/state?user=ID&rev=N`` — what that user sees (their groups and their private
  chat with the bot), held until something changes after revision ``N`` (long poll);
* ``POST /api/send`` ``{user, chat, text[, thread]}`` — the user writes (commands
  included; ``thread``: in that topic of a forum, which the page shows as a chat of its
  own, ``key`` ``"<chat>:<thread>"``);
* ``POST /api/press`` ``{user, chat, message, data}`` — the user presses an inline button:
  a real ``callback_query`` through the fake, answered by the bot; the answer is returned
  (``gone`` instead when the message no longer has that button: the page was behind);
* ``POST /api/start`` ``{user, payload}`` — the user opens a ``t.me/<bot>?start=`` link;
* ``POST /api/users`` ``{name, language}`` — a new user, member of the sandbox's group;
* ``POST /api/webapp`` ``{user, chat, message, url}`` or ``{user, chat, short_name,
  start_param}`` — the user opens the Mini App (a ``web_app`` button, a direct link): the
  URL to load, with ``initData`` signed like Telegram signs it.

Everything a user does goes through `FakeUser`, so the fake refuses what a Telegram client
could not do (pressing a button the message no longer has, writing where one is not a
member). Message texts are rendered from the entities the fake parsed out of the bot's
HTML, so the page shows what Telegram would, and nothing the bot did not send.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from aiohttp import web

from sandbox.fakeapi import (
    FakeChat,
    FakeClientError,
    FakeMessage,
    FakeTelegram,
    FakeUser,
    InlineQueryHandle,
    WaitTimeout,
)

STATIC_DIR = Path(__file__).resolve().parent / "static"
#: Messages of a chat sent to the page (the newest).
MESSAGES_SHOWN = 80
#: Seconds a state request is held when nothing changes.
LONG_POLL_SECONDS = 25.0
#: Seconds to wait for more changes before answering (a move changes several messages).
SETTLE_SECONDS = 0.05
#: Seconds the page waits for the bot to answer a button press.
ANSWER_SECONDS = 15.0
#: The fake's call log is trimmed to this many calls (the sandbox may run for hours).
KEPT_CALLS = 500
_NAME_LIMIT = 64

_TAGS = {
    "bold": ("<b>", "</b>"),
    "italic": ("<i>", "</i>"),
    "underline": ("<u>", "</u>"),
    "strikethrough": ("<s>", "</s>"),
    "spoiler": ('<span class="spoiler">', "</span>"),
    "code": ("<code>", "</code>"),
    "pre": ("<pre>", "</pre>"),
    "blockquote": ("<blockquote>", "</blockquote>"),
    "expandable_blockquote": ("<blockquote>", "</blockquote>"),
    "bot_command": ('<span class="command">', "</span>"),
    "mention": ('<span class="mention">', "</span>"),
}
_SAFE_URL = re.compile(r"^(https?|tg)://", re.IGNORECASE)


def entities_to_html(text: str, entities: list[dict[str, Any]]) -> str:
    """Safe HTML for a Telegram text and its entities (UTF-16 offsets, properly nested as
    Telegram's parser produces them); the text itself is always escaped."""
    index = _utf16_index(text)
    spans: list[tuple[int, int, str, str]] = []
    for entity in entities:
        start = index.get(entity["offset"])
        end = index.get(entity["offset"] + entity["length"])
        tags = _tags_of(entity)
        if start is None or end is None or tags is None or end <= start:
            continue
        spans.append((start, end, *tags))
    spans.sort(key=lambda s: (s[0], -s[1]))
    out: list[str] = []
    stack: list[tuple[int, int, str, str]] = []
    position = 0
    for span in [*spans, (len(text), len(text), "", "")]:
        start = span[0]
        while stack and stack[-1][1] <= start:  # close what ends before this span starts
            end = stack[-1][1]
            out.append(html.escape(text[position:end], quote=False))
            position = end
            out.append(stack.pop()[3])
        out.append(html.escape(text[position:start], quote=False))
        position = start
        if span[2]:
            out.append(span[2])
            stack.append(span)
    out.append(html.escape(text[position:], quote=False))
    return "".join(out)


def _utf16_index(text: str) -> dict[int, int]:
    """UTF-16 code unit offset -> index in the Python string."""
    mapping: dict[int, int] = {}
    units = 0
    for i, char in enumerate(text):
        mapping[units] = i
        units += 2 if ord(char) > 0xFFFF else 1
    mapping[units] = len(text)
    return mapping


def _tags_of(entity: dict[str, Any]) -> tuple[str, str] | None:
    kind = entity["type"]
    if kind == "text_link":
        url = str(entity.get("url", ""))
        if not _SAFE_URL.match(url):
            return None
        href = html.escape(url, quote=True)
        return f'<a href="{href}" target="_blank" rel="noopener noreferrer">', "</a>"
    return _TAGS.get(kind)


class SandboxWeb:
    """The page and its JSON API for one `FakeTelegram` world (same event loop)."""

    def __init__(self, tg: FakeTelegram, groups: list[FakeChat]) -> None:
        self.tg = tg
        self.groups = groups
        #: The bot's Mini Apps by short name (BotFather's /newapp): their URLs.
        self.web_apps: dict[str, str] = {}
        self.revision = 0
        #: Inline queries typed on the page, by id (their results can be chosen).
        self.inline_queries: dict[str, InlineQueryHandle] = {}
        self._changed = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self.port = 0
        tg.world.keep_update_log = False  # the timing log is for benchmarks
        tg.listeners.append(self._bump)

    # ------------------------------------------------------------------ lifecycle

    def application(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024)
        app.router.add_get("/", self._index)
        app.router.add_get("/api/state", self._state)
        app.router.add_post("/api/send", self._guarded(self._send))
        app.router.add_post("/api/press", self._guarded(self._press))
        app.router.add_post("/api/start", self._guarded(self._start))
        app.router.add_post("/api/users", self._guarded(self._add_user))
        app.router.add_post("/api/webapp", self._guarded(self._web_app))
        app.router.add_post("/api/inline", self._guarded(self._inline))
        app.router.add_post("/api/inline/choose", self._guarded(self._choose))
        app.router.add_post("/api/startgroup", self._guarded(self._startgroup))
        app.router.add_post("/api/share", self._guarded(self._share))
        app.router.add_static("/static/", STATIC_DIR)
        return app

    async def start(self, host: str, port: int) -> int:
        """Serve on ``host:port`` (0: a free port); return the port."""
        runner = web.AppRunner(self.application(), access_log=None, shutdown_timeout=0.5)
        await runner.setup()
        site = web.TCPSite(runner, host, port, reuse_address=True)
        await site.start()
        self._runner = runner
        self.port = runner.addresses[0][1]
        return self.port

    async def stop(self) -> None:
        self._bump()  # release the held requests
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def _bump(self) -> None:
        self.revision += 1
        if len(self.tg.calls) > 2 * KEPT_CALLS:
            del self.tg.calls[:-KEPT_CALLS]
        self._changed.set()

    # ------------------------------------------------------------------ reading

    async def _index(self, request: web.Request) -> web.FileResponse:
        return web.FileResponse(STATIC_DIR / "index.html")

    async def _state(self, request: web.Request) -> web.Response:
        user = self._user(request.query.get("user"))
        try:
            seen = int(request.query.get("rev", "-1"))
        except ValueError:
            seen = -1
        if seen == self.revision:
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), LONG_POLL_SECONDS)
            await asyncio.sleep(SETTLE_SECONDS)
        return web.json_response(self.state(user), dumps=_dumps)

    def state(self, user: FakeUser | None) -> dict[str, Any]:
        """What ``user`` sees (every user, for the switch; their chats with messages)."""
        chats: list[dict[str, Any]] = []
        if user is not None:  # the groups, the private chat, then a forum's topics
            mine = [g for g in self.groups if g.is_member(user.id)]
            chats = [self._chat_json(g, user) for g in mine if not g.is_forum]
            chats.append(self._chat_json(user.private_chat, user))
            chats += [self._chat_json(g, user, thread) for g in mine if g.is_forum
                      for thread in g.topics]
        return {
            "revision": self.revision,
            "bot": {"name": self.tg.bot.first_name, "username": self.tg.bot.username},
            "users": [
                {"id": u.id, "name": u.full_name, "language": u.language_code}
                for u in self.tg.world.users.values()
            ],
            "user": None if user is None else user.id,
            "chats": chats,
        }

    def _chat_json(self, chat: FakeChat, user: FakeUser,
                   thread: int | None = None) -> dict[str, Any]:
        messages = self.tg.chat_messages(chat, service=True)
        title = chat.title or self.tg.bot.first_name
        if thread is not None:  # a forum's topic: its own messages
            messages = [m for m in messages if m.thread_id == thread]
            title = f"{title} › {chat.topics[thread]}"
        messages = messages[-MESSAGES_SHOWN:]
        return {
            "id": chat.id,
            "key": str(chat.id) if thread is None else f"{chat.id}:{thread}",
            "thread": thread,
            "closed": thread is not None and thread in chat.closed_topics,
            "type": chat.type,
            "title": title,
            "messages": [self._message_json(m) for m in messages],
            # the command menu this user sees here (setMyCommands, resolved like Telegram)
            "commands": [
                {"command": c["command"], "description": c["description"]}
                for c in self.tg.visible_commands(chat, user)
            ],
        }

    def _message_json(self, message: FakeMessage) -> dict[str, Any]:
        if message.service is not None:
            return {"id": message.message_id, "service": _service_text(message)}
        buttons = [
            [{"text": b.text, "data": b.callback_data, "url": b.url,
              "web_app": (b.raw.get("web_app") or {}).get("url")} for b in row]
            for row in message.keyboard
        ]
        entities = message.entities if message.text is not None else message.caption_entities
        return {
            "id": message.message_id,
            "bot": message.from_bot,
            "sender": None if message.sender is None else message.sender.full_name,
            "sender_id": None if message.sender is None else message.sender.id,
            "html": entities_to_html(message.content, entities),
            "buttons": buttons,
            "edited": message.edit_date is not None,
        }

    # ------------------------------------------------------------------ acting

    def _guarded(
        self, handler: Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
    ) -> Callable[[web.Request], Awaitable[web.Response]]:
        """JSON in, JSON out; what a client could not do is a 400 with the reason."""

        async def route(request: web.Request) -> web.Response:
            try:
                body = await request.json()
                if not isinstance(body, dict):
                    raise ValueError("a JSON object is expected")
                result = await handler(body)
            except (FakeClientError, ValueError, KeyError, TypeError) as exc:
                return web.json_response({"ok": False, "error": str(exc)}, status=400)
            return web.json_response({"ok": True, **result}, dumps=_dumps)

        return route

    def _user(self, value: object) -> FakeUser | None:
        try:
            return self.tg.world.users.get(int(str(value)))
        except ValueError:
            return None

    def _acting(self, body: dict[str, Any]) -> FakeUser:
        user = self._user(body.get("user"))
        if user is None:
            raise ValueError("unknown user")
        return user

    def _chat(self, user: FakeUser, value: object) -> FakeChat:
        chat_id = int(str(value))
        if chat_id == user.id:
            return user.private_chat
        chat = next((g for g in self.groups if g.id == chat_id), None)
        if chat is None:
            raise ValueError("unknown chat")
        return chat

    async def _send(self, body: dict[str, Any]) -> dict[str, Any]:
        user = self._acting(body)
        chat = self._chat(user, body.get("chat"))
        text = str(body.get("text", "")).strip()
        if not text:
            raise ValueError("empty message")
        thread = body.get("thread")
        if thread is not None and (not isinstance(thread, int) or thread not in chat.topics):
            raise ValueError("unknown topic")
        message = await user.send(chat, text, thread_id=thread)
        return {"message": message.message_id}

    async def _press(self, body: dict[str, Any]) -> dict[str, Any]:
        user = self._acting(body)
        chat = self._chat(user, body.get("chat"))
        data = body.get("data")
        if not isinstance(data, str):
            raise ValueError("no callback data")
        message = self.tg.world.lookup_message((chat.id, int(body["message"])))
        if data not in [b.callback_data for b in message.buttons]:
            # the page showed a keyboard the message no longer has (its redraw was coming)
            return {"answer": None, "gone": True}
        handle = await user.press(message, data)
        try:
            answer = await handle.wait(ANSWER_SECONDS)
        except WaitTimeout:  # the bot did not answer: Telegram's client shows nothing either
            return {"answer": None}
        return {
            "answer": {"text": answer.text, "alert": answer.show_alert, "url": answer.url}
        }

    async def _start(self, body: dict[str, Any]) -> dict[str, Any]:
        user = self._acting(body)
        payload = body.get("payload") or None
        message = await user.start_bot(None if payload is None else str(payload))
        return {"message": message.message_id}

    async def _web_app(self, body: dict[str, Any]) -> dict[str, Any]:
        """The user opens the Mini App: from a ``web_app`` button of a message in their
        private chat, or from a direct link (``short_name``, ``start_param``) in a chat.
        Answers the URL their client would load (initData signed by the fake)."""
        user = self._acting(body)
        chat = self._chat(user, body.get("chat"))
        if body.get("short_name") is not None:
            url = self.web_apps.get(str(body["short_name"]))
            if url is None:
                raise ValueError("no such Mini App")
            start = str(body.get("start_param") or "")[:512] or None
            return {"url": self.tg.open_web_app(user, url, start_param=start, chat=chat)}
        message = self.tg.message(chat, int(body["message"]))
        urls = [(b.raw.get("web_app") or {}).get("url") for b in message.buttons]
        if body.get("url") not in urls or chat.type != "private":
            raise ValueError("no such web_app button")
        return {"url": self.tg.open_web_app(user, str(body["url"]))}

    async def _inline(self, body: dict[str, Any]) -> dict[str, Any]:
        """``@bot query`` typed in a chat's composer: the bot's answer (its results)."""
        user = self._acting(body)
        chat = self._chat(user, body.get("chat"))
        query = str(body.get("query", ""))[:256]
        handle = await user.inline(query, None if chat.type == "private" else chat)
        try:
            answer = await handle.wait(ANSWER_SECONDS)
        except WaitTimeout:
            return {"query": None, "results": [], "button": None}
        if len(self.inline_queries) > 100:
            self.inline_queries.clear()
        self.inline_queries[handle.id] = handle
        return {
            "query": handle.id,
            "results": [{"id": r["id"], "title": r.get("title", ""),
                         "description": r.get("description", "")} for r in answer.results],
            "button": None if answer.button is None else {"text": answer.button["text"]},
        }

    async def _choose(self, body: dict[str, Any]) -> dict[str, Any]:
        """A result of an inline query picked: sent by the user, via the bot."""
        user = self._acting(body)
        handle = self.inline_queries.get(str(body.get("query")))
        if handle is None or handle.user is not user:
            raise ValueError("no such inline query")
        message = await user.choose(handle, str(body.get("result")))
        return {"message": message.message_id}

    async def _startgroup(self, body: dict[str, Any]) -> dict[str, Any]:
        """A ``t.me/<bot>?startgroup=<payload>`` link: the user picked this group, where
        Telegram sends ``/start@<bot> <payload>`` for them."""
        user = self._acting(body)
        chat = self._chat(user, body.get("chat"))
        payload = str(body.get("payload") or "")
        if chat.type == "private" or not re.fullmatch(r"[A-Za-z0-9_-]{0,64}", payload):
            raise ValueError("a group and a start payload are needed")
        text = f"/start@{self.tg.bot.username}" + (f" {payload}" if payload else "")
        message = await user.send(chat, text)
        return {"message": message.message_id}

    async def _share(self, body: dict[str, Any]) -> dict[str, Any]:
        """The Mini App's ``shareMessage(id)``: the user sends it to the chat they pick."""
        user = self._acting(body)
        chat = self._chat(user, body.get("chat"))
        message = self.tg.world.share_prepared(user, str(body.get("id")), chat)
        return {"message": message.message_id}

    async def _add_user(self, body: dict[str, Any]) -> dict[str, Any]:
        name = " ".join(str(body.get("name", "")).split())[:_NAME_LIMIT]
        if not name:
            raise ValueError("a name is needed")
        language = str(body.get("language") or "it")[:8]
        user = add_player(self.tg, self.groups, name, language)
        await user.start_bot()
        return {"user": user.id}


def add_player(tg: FakeTelegram, groups: list[FakeChat], name: str, language: str) -> FakeUser:
    """A new user, member of the sandbox's groups (joining announces them)."""
    user = tg.add_user(name, language_code=language)
    for group in groups:
        tg.world.add_member(group, user, announce=True)
    return user


def _service_text(message: FakeMessage) -> str:
    service = message.service or {}
    if "new_chat_members" in service:
        names = ", ".join(m.get("first_name", "?") for m in service["new_chat_members"])
        return f"{names} joined the group"
    if "left_chat_member" in service:
        return f"{service['left_chat_member'].get('first_name', '?')} left the group"
    return ", ".join(sorted(service))


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
