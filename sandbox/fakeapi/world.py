"""State of the fake Telegram world: users, chats, messages, the update queue.

`World` holds everything and renders Bot API JSON.  It is driven from two sides: the API
method implementations (`methods.py`, the bot's side) and `FakeUser` actions (`client.py`,
the users' side).  It is not thread-safe: use it from the event loop that runs the server.
"""

from __future__ import annotations

import re
import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from .client import CallbackQueryHandle, FakeUser, InlineQueryHandle
from .errors import FakeClientError
from .html import utf16_len
from .inline import CHAT_TYPES, MAX_QUERY, PreparedMessage
from .models import DEFAULT_BOT_RIGHTS, BotIdentity, FakeChat, FakeMessage, PendingUpdate

ALL_UPDATE_KINDS = frozenset(
    {
        "message", "edited_message", "channel_post", "edited_channel_post",
        "business_connection", "business_message", "edited_business_message",
        "deleted_business_messages", "message_reaction", "message_reaction_count",
        "inline_query", "chosen_inline_result", "callback_query", "shipping_query",
        "pre_checkout_query", "purchased_paid_media", "poll", "poll_answer",
        "my_chat_member", "chat_member", "chat_join_request", "chat_boost",
        "removed_chat_boost",
    }
)  # fmt: skip
DEFAULT_ALLOWED = ALL_UPDATE_KINDS - {"chat_member", "message_reaction", "message_reaction_count"}

_COMMAND_RE = re.compile(r"(?<!\S)/[A-Za-z0-9_]{1,32}(?:@[A-Za-z0-9_]{3,32})?(?=$|[\s.,;:!?])")
_MENTION_RE = re.compile(r"(?<![\w@])@[A-Za-z][A-Za-z0-9_]{4,31}(?![\w@])")

FIRST_USER_ID = 5_000_000_001  # > 2**32 on purpose
FIRST_GROUP_ID = -4_100_000_001
FIRST_SUPERGROUP_ID = -1_002_100_000_001


def text_entities(text: str) -> list[dict[str, Any]]:
    """bot_command and mention entities as a Telegram client would attach them."""
    found: list[dict[str, Any]] = []
    for kind, regex in (("bot_command", _COMMAND_RE), ("mention", _MENTION_RE)):
        for match in regex.finditer(text):
            offset = utf16_len(text[: match.start()])
            found.append({"type": kind, "offset": offset, "length": utf16_len(match.group())})
    found.sort(key=lambda e: e["offset"])
    return found


def member_json(
    user: dict[str, Any], status: str, rights: dict[str, bool] | None = None
) -> dict[str, Any]:
    """A ``ChatMember`` JSON object for ``status``."""
    data: dict[str, Any] = {"status": status, "user": user}
    if status == "creator":
        data["is_anonymous"] = False
    elif status == "administrator":
        data.update(DEFAULT_BOT_RIGHTS)
        data.update(rights or {})
    elif status == "kicked":
        data["until_date"] = 0
    return data


def scope_key(scope: dict[str, Any] | None) -> str:
    """A hashable key for a BotCommandScope (validated by the caller)."""
    if not scope:
        return "default"
    kind = scope["type"]
    if kind in ("chat", "chat_administrators"):
        return f"{kind}:{scope['chat_id']}"
    if kind == "chat_member":
        return f"chat_member:{scope['chat_id']}:{scope['user_id']}"
    return str(kind)


class World:
    """All the state of one fake Telegram server."""

    def __init__(self, bot: BotIdentity, *, privacy_mode: bool = True):
        self.bot = bot
        self.privacy_mode = privacy_mode
        self.users: dict[int, FakeUser] = {}
        self.chats: dict[int, FakeChat] = {}
        self.updates: deque[PendingUpdate] = deque()
        self.allowed_updates: frozenset[str] = DEFAULT_ALLOWED
        self.callbacks: dict[str, CallbackQueryHandle] = {}
        self.commands: dict[tuple[str, str], list[dict[str, str]]] = {}
        self.bot_texts: dict[tuple[str, str], str] = {}
        self.menu_buttons: dict[int, dict[str, Any]] = {}
        self.webhook_url = ""
        #: setWebhook's secret_token, sent in X-Telegram-Bot-Api-Secret-Token ("" = none)
        self.webhook_secret = ""
        self.webhook_max_connections = 40
        #: (unix date, message) of the last failed webhook delivery, for getWebhookInfo
        self.webhook_last_error: tuple[int, str] | None = None
        #: called when the webhook is set or deleted
        self.on_webhook: Callable[[], None] = lambda: None
        #: Every update ever emitted, with its timing (see `PendingUpdate`).
        self.update_log: list[PendingUpdate] = []
        self.keep_update_log = True
        self.on_update: Callable[[], None] = lambda: None
        self.on_change: Callable[[], None] = lambda: None
        self._next_update_id = 1_000
        self._next_user_id = FIRST_USER_ID
        self._next_group_id = FIRST_GROUP_ID
        self._next_supergroup_id = FIRST_SUPERGROUP_ID
        self._next_query = 1
        #: inline mode switched on with @BotFather (/setinline), and inline feedback
        #: (/setinlinefeedback: chosen_inline_result updates)
        self.inline_mode = False
        self.inline_feedback = False
        self.inline_queries: dict[str, InlineQueryHandle] = {}
        #: savePreparedInlineMessage's results, by id
        self.prepared: dict[str, PreparedMessage] = {}

    # -- identities ---------------------------------------------------------------------
    def add_user(self, first_name: str, *, id: int | None = None, **fields: Any) -> FakeUser:
        """Create a user (see `FakeUser` for the optional fields)."""
        if id is None:
            id = self._next_user_id
            self._next_user_id += 1
        if id in self.users or id == self.bot.id:
            raise FakeClientError(f"user id {id} already exists")
        user = FakeUser(self, id, first_name, **fields)
        self.users[id] = user
        return user

    def private_chat(self, user: FakeUser) -> FakeChat:
        """The private chat with ``user`` (created on first use; id == user id)."""
        chat = self.chats.get(user.id)
        if chat is None:
            chat = self.chats[user.id] = FakeChat(id=user.id, type="private", user=user)
        return chat

    def new_chat_id(self, supergroup: bool) -> int:
        if supergroup:
            chat_id = self._next_supergroup_id
            self._next_supergroup_id -= 1
        else:
            chat_id = self._next_group_id
            self._next_group_id -= 1
        return chat_id

    def add_group(
        self,
        title: str,
        members: Iterable[FakeUser] = (),
        *,
        admins: Iterable[FakeUser] = (),
        owner: FakeUser | None = None,
        supergroup: bool = False,
        forum: bool = False,
        username: str | None = None,
        bot_status: str = "member",
        bot_rights: dict[str, bool] | None = None,
        id: int | None = None,
    ) -> FakeChat:
        """Create a group silently (no updates); see `FakeTelegram.add_group`."""
        supergroup = supergroup or forum or username is not None
        chat = FakeChat(
            id=id if id is not None else self.new_chat_id(supergroup),
            type="supergroup" if supergroup else "group",
            title=title,
            username=username,
            is_forum=forum,
            bot_status=bot_status,
            bot_rights={**DEFAULT_BOT_RIGHTS, **(bot_rights or {})},
        )
        admins = list(admins)
        everyone = [*members, *admins, *([owner] if owner else [])]
        creator = owner or (admins[0] if admins else (everyone[0] if everyone else None))
        for user in everyone:
            chat.members[user.id] = "member"
        for user in admins:
            chat.members[user.id] = "administrator"
        if creator is not None:
            chat.members[creator.id] = "creator"
        self.chats[chat.id] = chat
        return chat

    def find_chat(self, chat_id: int | str) -> FakeChat | None:
        """A chat by id or ``@username``."""
        if isinstance(chat_id, str):
            name = chat_id[1:].lower()
            for chat in self.chats.values():
                if chat.username and chat.username.lower() == name:
                    return chat
            return None
        found = self.chats.get(chat_id)
        if found is None and chat_id in self.users:
            found = self.private_chat(self.users[chat_id])
        return found

    # -- updates ------------------------------------------------------------------------
    def emit(self, kind: str, payload: dict[str, Any]) -> PendingUpdate | None:
        """Queue an update (dropped if ``kind`` is not in the bot's allowed_updates)."""
        if kind not in self.allowed_updates:
            return None
        update_id = self._next_update_id
        self._next_update_id += 1
        update = PendingUpdate(
            update_id, kind, {"update_id": update_id, kind: payload}, created_at=time.monotonic()
        )
        if kind in ("callback_query", "inline_query"):
            update.query_id = str(payload.get("id"))
            update.chat_id = payload.get("message", {}).get("chat", {}).get("id")
        else:
            chat = payload.get("chat")
            update.chat_id = chat.get("id") if isinstance(chat, dict) else None
        self.updates.append(update)
        if self.keep_update_log:
            self.update_log.append(update)
        self.on_update()
        self.on_change()
        return update

    def confirm(self, offset: int) -> None:
        """Forget updates confirmed by a getUpdates ``offset`` (negative: keep the last N)."""
        if offset > 0:
            while self.updates and self.updates[0].update_id < offset:
                self.updates.popleft().confirmed_at = time.monotonic()
        elif offset < 0:
            while len(self.updates) > -offset:
                self.updates.popleft()

    def undelivered(self) -> list[PendingUpdate]:
        return [u for u in self.updates if not u.delivered]

    # -- JSON ---------------------------------------------------------------------------
    def sender_json(self, message: FakeMessage) -> dict[str, Any]:
        return self.bot.user_json() if message.sender is None else message.sender.to_api()

    def message_json(self, message: FakeMessage, *, nested: bool = False) -> dict[str, Any]:
        """The ``Message`` JSON object of the current state of ``message``."""
        data: dict[str, Any] = {
            "message_id": message.message_id,
            "from": self.sender_json(message),
            "chat": message.chat.to_api(),
            "date": message.date,
        }
        if message.thread_id is not None:
            data["message_thread_id"] = message.thread_id
            if message.is_topic_message:
                data["is_topic_message"] = True
        if message.reply_to is not None and not nested:
            data["reply_to_message"] = self.message_json(message.reply_to, nested=True)
        if message.edit_date is not None:
            data["edit_date"] = message.edit_date
        if message.text is not None:
            data["text"] = message.text
            if message.entities:
                data["entities"] = message.entities
        if message.media:
            data.update(message.media)
        if message.caption is not None:
            data["caption"] = message.caption
            if message.caption_entities:
                data["caption_entities"] = message.caption_entities
        if message.reply_markup is not None:
            data["reply_markup"] = message.reply_markup
        if message.service:
            data.update(message.service)
        if message.via_bot:
            data["via_bot"] = self.bot.user_json()
        return data

    def bot_member_json(self, chat: FakeChat) -> dict[str, Any]:
        status = "member" if chat.type == "private" else chat.bot_status
        return member_json(self.bot.user_json(), status, chat.bot_rights)

    def user_member_json(self, chat: FakeChat, user: FakeUser) -> dict[str, Any]:
        return member_json(user.to_api(), chat.status_of(user.id))

    def chat_full_info(self, chat: FakeChat) -> dict[str, Any]:
        """The ``ChatFullInfo`` JSON object (getChat)."""
        data = chat.to_api()
        data.update(
            {
                "accent_color_id": 0,
                "max_reaction_count": 11,
                "accepted_gift_types": {
                    "unlimited_gifts": False,
                    "limited_gifts": False,
                    "unique_gifts": False,
                    "premium_subscription": False,
                    "gifts_from_channels": False,
                },
            }
        )
        if chat.pinned and chat.pinned[-1] in chat.messages:
            data["pinned_message"] = self.message_json(chat.messages[chat.pinned[-1]], nested=True)
        if chat.migrated_from is not None:
            data["migrated_from_chat_id"] = chat.migrated_from
        return data

    # -- messages -------------------------------------------------------------------------
    def new_message(self, chat: FakeChat, sender: FakeUser | None, **fields: Any) -> FakeMessage:
        """Store a new message in ``chat`` (no update is sent)."""
        message = FakeMessage(chat, chat.take_message_id(), sender, int(time.time()), **fields)
        chat.messages[message.message_id] = message
        self.on_change()
        return message

    def bot_sees(self, message: FakeMessage) -> bool:
        """Whether the bot gets an update for a user's message (membership + privacy mode)."""
        chat = message.chat
        if chat.type == "private":
            return True
        if not chat.bot_is_member:
            return False
        if not self.privacy_mode or chat.bot_status == "administrator" or message.service:
            return True
        if message.via_bot:  # privacy mode lets through the messages sent via the bot
            return True
        if message.reply_to is not None and message.reply_to.from_bot:
            return True
        return any(self._command_for_bot(message, e) for e in message.entities)

    def _command_for_bot(self, message: FakeMessage, entity: dict[str, Any]) -> bool:
        if entity["type"] != "bot_command" or message.text is None:
            return False
        command = message.text.encode("utf-16-le")[
            2 * entity["offset"] : 2 * (entity["offset"] + entity["length"])
        ].decode("utf-16-le")
        _, _, target = command.partition("@")
        return not target or target.lower() == self.bot.username.lower()

    def deliver(self, message: FakeMessage, kind: str = "message") -> None:
        """Send ``message`` to the bot as an update if the bot can see it."""
        if self.bot_sees(message):
            self.emit(kind, self.message_json(message))

    def service_message(
        self,
        chat: FakeChat,
        sender: FakeUser | None,
        fields: dict[str, Any],
        *,
        deliver: bool = True,
    ) -> FakeMessage:
        """A service message (new_chat_members, migrate_to_chat_id, ...)."""
        message = self.new_message(chat, sender, service=fields)
        if deliver and sender is not None:
            self.deliver(message)
        return message

    def lookup_message(self, ref: Any) -> FakeMessage:
        """The stored message for a FakeMessage, PTB Message or ``(chat_id, message_id)``."""
        if isinstance(ref, FakeMessage):
            chat_id, message_id = ref.chat.id, ref.message_id
        elif isinstance(ref, tuple):
            chat_id, message_id = ref
        else:
            chat_id, message_id = ref.chat_id, ref.message_id
        chat = self.chats.get(chat_id)
        message = chat.messages.get(message_id) if chat else None
        if message is None or message.deleted:
            raise FakeClientError(f"message {chat_id}/{message_id} does not exist (or was deleted)")
        return message

    # -- users' actions -------------------------------------------------------------------
    def _check_can_write(self, user: FakeUser, chat: FakeChat) -> None:
        if chat.migrated_to is not None:
            raise FakeClientError(f"{chat!r} was migrated to {chat.migrated_to}")
        if chat.type == "private":
            if chat.user is not user:
                raise FakeClientError(f"{user!r} cannot write in the private chat {chat!r}")
            if user.blocked:
                raise FakeClientError(f"{user!r} blocked the bot; use start_bot()/unblock_bot()")
            user.started = True
        elif not chat.is_member(user.id):
            raise FakeClientError(f"{user!r} is not a member of {chat!r}")

    def user_message(
        self,
        user: FakeUser,
        chat: FakeChat,
        text: str,
        *,
        reply_to: FakeMessage | None = None,
        thread_id: int | None = None,
    ) -> FakeMessage:
        """A text message written by ``user`` (delivered if the bot can see it)."""
        self._check_can_write(user, chat)
        if not text.strip() or utf16_len(text) > 4096:
            raise FakeClientError("a client cannot send an empty or >4096 character text")
        if reply_to is not None and reply_to.chat is not chat:
            raise FakeClientError("reply_to must be a message of the same chat")
        if thread_id is None and reply_to is not None:
            thread_id = reply_to.thread_id
        if thread_id is not None and chat.is_forum and thread_id not in chat.topics:
            raise FakeClientError(f"{chat!r} has no topic {thread_id}")
        message = self.new_message(
            chat,
            user,
            text=text,
            entities=text_entities(text),
            reply_to=reply_to,
            thread_id=thread_id,
            is_topic_message=thread_id is not None and chat.is_forum,
        )
        self.deliver(message)
        return message

    def user_edit(self, user: FakeUser, message: FakeMessage, text: str) -> FakeMessage:
        """``user`` edits their own text message (edited_message update)."""
        current = self.lookup_message(message)
        if current.sender is not user or current.text is None:
            raise FakeClientError(f"{user!r} cannot edit {current!r}")
        current.history.append(current.snapshot())
        current.text, current.entities = text, text_entities(text)
        current.edit_date = int(time.time())
        self.deliver(current, "edited_message")
        self.on_change()
        return current

    def callback_query(
        self, user: FakeUser, message: FakeMessage, data: str | bytes
    ) -> CallbackQueryHandle:
        """``user`` presses a callback button on ``message``.

        ``data`` as bytes models a forged client: bytes that are not UTF-8 reach the bot as
        a string with lone surrogates (``surrogateescape``), sent as ``\\udcXX`` JSON
        escapes — the most hostile thing a JSON string can carry.
        """
        if isinstance(data, bytes):
            data = data.decode("utf-8", "surrogateescape")
        chat = message.chat
        if chat.type == "private" and chat.user is not user:
            raise FakeClientError(f"{user!r} cannot see {message!r}")
        if chat.is_group and not chat.is_member(user.id):
            raise FakeClientError(f"{user!r} is not a member of {chat!r}")
        if not message.from_bot:
            raise FakeClientError("only the bot's messages have inline buttons")
        query_id = f"{user.id % 10**9:09d}{self._next_query:010d}"
        self._next_query += 1
        handle = CallbackQueryHandle(query_id, user, message, data)
        self.callbacks[query_id] = handle
        self.emit(
            "callback_query",
            {
                "id": query_id,
                "from": user.to_api(),
                "message": self.message_json(message),
                "chat_instance": str((chat.id * 2_654_435_761) % 2**63),
                "data": data,
            },
        )
        return handle

    # -- inline mode ------------------------------------------------------------------------
    def inline_query(
        self, user: FakeUser, query: str, chat: FakeChat | None = None
    ) -> InlineQueryHandle:
        """``user`` types ``@bot query`` in ``chat`` (None: the private chat with the bot;
        a chat of the user's where the bot need not be)."""
        if not self.inline_mode:
            raise FakeClientError("the bot's inline mode is off: /setinline with @BotFather "
                                  "(FakeTelegram(inline_mode=True))")
        if len(query) > MAX_QUERY:
            raise FakeClientError(f"an inline query is at most {MAX_QUERY} characters")
        if chat is None:
            chat, chat_type = self.private_chat(user), "sender"
        else:
            self._check_can_write(user, chat)
            chat_type = "private" if chat.type == "private" else chat.type
        assert chat_type in CHAT_TYPES
        query_id = f"{user.id % 10**9:09d}{self._next_query:010d}"
        self._next_query += 1
        handle = InlineQueryHandle(query_id, user, query, chat, chat_type)
        self.inline_queries[query_id] = handle
        self.emit("inline_query", {"id": query_id, "from": user.to_api(), "query": query,
                                   "offset": "", "chat_type": chat_type})
        return handle

    def choose_inline_result(self, handle: InlineQueryHandle, result_id: str) -> FakeMessage:
        """The user picks a result of an answered inline query: it is sent to the chat
        where the query was typed, by the user, via the bot."""
        if handle.answer is None:
            raise FakeClientError(f"inline query {handle.id} was not answered")
        result = handle.answer.result(result_id)
        message = self._via_bot(handle.user, handle.chat, result)  # type: ignore[arg-type]
        if self.inline_feedback:
            self.emit("chosen_inline_result", {"result_id": result_id,
                                               "from": handle.user.to_api(),
                                               "query": handle.query})
        return message

    def share_prepared(self, user: FakeUser, prepared_id: str, chat: FakeChat) -> FakeMessage:
        """The Mini App's ``shareMessage(prepared_id)``: the user picks ``chat``."""
        prepared = self.prepared.get(prepared_id)
        if prepared is None or prepared.user_id != user.id:
            raise FakeClientError(f"no prepared message {prepared_id!r} for {user!r}")
        if prepared.expiration_date < time.time():
            raise FakeClientError(f"prepared message {prepared_id!r} expired")
        if not prepared.allows(chat):
            raise FakeClientError(f"prepared message {prepared_id!r} may not go to {chat!r}")
        message = self._via_bot(user, chat, prepared.result)
        prepared.shared_to.append(chat.id)
        return message

    def _via_bot(self, user: FakeUser, chat: FakeChat, result: dict[str, Any]) -> FakeMessage:
        self._check_can_write(user, chat)
        content = result["input_message_content"]
        message = self.new_message(
            chat, user, text=content["text"], entities=content["entities"],
            source=content["message_text"], parse_mode=content.get("parse_mode"),
            reply_markup=result.get("reply_markup"), via_bot=True,
        )
        self.deliver(message)
        return message

    # -- membership -------------------------------------------------------------------------
    def my_chat_member(self, chat: FakeChat, by: FakeUser | None, old: str, new: str) -> None:
        """Send a my_chat_member update about the bot's status change in ``chat``."""
        actor = by.to_api() if by is not None else self.bot.user_json()
        self.emit(
            "my_chat_member",
            {
                "chat": chat.to_api(),
                "from": actor,
                "date": int(time.time()),
                "old_chat_member": member_json(self.bot.user_json(), old, chat.bot_rights),
                "new_chat_member": member_json(self.bot.user_json(), new, chat.bot_rights),
            },
        )

    def set_bot_status(self, chat: FakeChat, status: str, by: FakeUser | None) -> None:
        """Change the bot's status in a group and notify it with my_chat_member."""
        old = chat.bot_status
        if old == status:
            return
        chat.bot_status = status
        self.my_chat_member(chat, by, old, status)
        self.on_change()

    def add_member(self, chat: FakeChat, user: FakeUser, *, announce: bool) -> FakeMessage | None:
        if not chat.is_group:
            raise FakeClientError(f"{chat!r} is not a group")
        if chat.is_member(user.id):
            return None
        chat.members[user.id] = "member"
        if not announce:
            return None
        return self.service_message(chat, user, {"new_chat_members": [user.to_api()]})

    def remove_member(
        self, chat: FakeChat, user: FakeUser, *, announce: bool
    ) -> FakeMessage | None:
        if not chat.is_member(user.id):
            return None
        chat.members[user.id] = "left"
        if not announce:
            return None
        return self.service_message(chat, user, {"left_chat_member": user.to_api()})
