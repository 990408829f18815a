"""Bot API method implementations of the fake server (the bot's side of the world).

Every method is a synchronous function ``(BotApi, Params) -> result`` registered with `api`;
they raise `ApiError` with Telegram's wording.  Long polling and webhooks live in
``server.py`` because they need the event loop.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar
from urllib.parse import urlsplit

from .client import CallbackAnswer, CallbackQueryHandle, InlineAnswer, InlineQueryHandle
from .errors import (
    NOT_MODIFIED,
    QUERY_TOO_OLD,
    TOPIC_CLOSED,
    ApiError,
    bad_request,
    chat_migrated,
    forbidden,
)
from .html import HtmlParseError, finalize_text, parse_html, utf16_len
from .inline import (
    MAX_RESULTS,
    PREPARED_SECONDS,
    PreparedMessage,
    validate_button,
    validate_result,
)
from .limits import FloodController
from .markup import check_chat_allows, validate_reply_markup
from .models import MEMBER_STATUSES, FakeChat, FakeMessage
from .params import Params, UploadedFile
from .world import ALL_UPDATE_KINDS, DEFAULT_ALLOWED, World, member_json, scope_key

Handler = Callable[["BotApi", Params], Any]
QueryHandle = TypeVar("QueryHandle", CallbackQueryHandle, InlineQueryHandle)
REGISTRY: dict[str, tuple[str, Handler]] = {}

TEXT_LIMIT = 4096
CAPTION_LIMIT = 1024
CALLBACK_TEXT_LIMIT = 200
CHAT_ACTIONS = frozenset(
    {
        "typing", "upload_photo", "record_video", "upload_video", "record_voice",
        "upload_voice", "upload_document", "choose_sticker", "find_location",
        "record_video_note", "upload_video_note",
    }
)  # fmt: skip
ENTITY_TYPES = frozenset(
    {
        "mention", "hashtag", "cashtag", "bot_command", "url", "email", "phone_number",
        "bold", "italic", "underline", "strikethrough", "spoiler", "blockquote",
        "expandable_blockquote", "code", "pre", "text_link", "text_mention", "custom_emoji",
    }
)  # fmt: skip
SCOPE_TYPES = frozenset(
    {
        "default", "all_private_chats", "all_group_chats", "all_chat_administrators",
        "chat", "chat_administrators", "chat_member",
    }
)  # fmt: skip
_COMMAND_NAME_RE = re.compile(r"^[a-z0-9_]{1,32}$")
_LANGUAGE_RE = re.compile(r"^[a-z]{2}$")
_START_LINK_RE = re.compile(
    r"^(?:https?://)?(?:www\.)?(?:t|telegram)\.me/(?P<bot>[A-Za-z0-9_]{3,32})"
    r"\?start=(?P<payload>[A-Za-z0-9_-]{0,64})$"
)


def api(name: str) -> Callable[[Handler], Handler]:
    """Register a Bot API method implementation under its (case-insensitive) name."""

    def register(func: Handler) -> Handler:
        REGISTRY[name.lower()] = (name, func)
        return func

    return register


class BotApi:
    """The bot-facing operations on a `World`, with flood control."""

    def __init__(
        self,
        world: World,
        flood: FloodController,
        *,
        strict_html: bool = True,
        callback_timeout: float = 15.0,
    ):
        self.world = world
        self.flood = flood
        self.strict_html = strict_html
        self.callback_timeout = callback_timeout
        self._file_seq = 0

    # -- lookup helpers -------------------------------------------------------------------
    def chat(self, p: Params, *, send: bool, name: str = "chat_id") -> FakeChat:
        """Resolve ``chat_id`` and check that the bot may act there."""
        chat = self.world.find_chat(p.chat_id(name))
        if chat is None:
            raise bad_request("chat not found")
        if chat.migrated_to is not None:
            raise chat_migrated(chat.migrated_to)
        self.check_access(chat, send=send)
        return chat

    def check_access(self, chat: FakeChat, *, send: bool) -> None:
        """403 if the bot may not write to ``chat`` (or, for groups, even read it)."""
        if chat.type == "private":
            user = chat.user
            assert user is not None
            if send and user.blocked:
                raise forbidden("bot was blocked by the user")
            if send and not user.started:
                raise forbidden("bot can't initiate conversation with a user")
            return
        if chat.bot_status == "kicked":
            raise forbidden(f"bot was kicked from the {chat.kind_name} chat")
        if chat.bot_status == "left":
            raise forbidden(f"bot is not a member of the {chat.kind_name} chat")

    def message(self, chat: FakeChat, p: Params, missing: str) -> FakeMessage:
        """The (not deleted) message ``message_id`` of ``chat``."""
        if not p.has("message_id"):
            raise bad_request("message identifier is not specified")
        found = chat.messages.get(p.integer("message_id"))
        if found is None or found.deleted:
            raise bad_request(missing)
        return found

    def thread(self, chat: FakeChat, p: Params) -> int | None:
        thread_id: int | None = p.integer("message_thread_id")
        if thread_id is None or not chat.is_forum:
            return thread_id if chat.type == "supergroup" else None
        if thread_id not in chat.topics:
            raise bad_request("message thread not found")
        return thread_id

    def open_topic(self, chat: FakeChat, thread_id: int | None) -> None:
        """A closed topic takes messages only from an admin that may manage topics
        (Telegram: 400 ``TOPIC_CLOSED``)."""
        if thread_id is None or thread_id not in chat.closed_topics:
            return
        if chat.bot_status == "administrator" and chat.bot_rights.get("can_manage_topics"):
            return
        raise ApiError(400, TOPIC_CLOSED)

    def reply_target(self, chat: FakeChat, p: Params) -> FakeMessage | None:
        params = p.json("reply_parameters") or {}
        if not isinstance(params, dict):
            raise bad_request("can't parse reply parameters JSON object")
        message_id = params.get("message_id", p.integer("reply_to_message_id"))
        if message_id is None:
            return None
        allow_missing = params.get("allow_sending_without_reply") or p.flag(
            "allow_sending_without_reply"
        )
        target = chat.messages.get(int(message_id))
        if target is None or target.deleted:
            if allow_missing:
                return None
            raise bad_request("message to be replied not found")
        return target

    # -- content helpers -------------------------------------------------------------------
    def formatted(
        self, p: Params, key: str, entities_key: str, *, limit: int, noun: str, required: bool
    ) -> tuple[str | None, list[dict[str, Any]]]:
        """Parse ``key`` per ``parse_mode``/``entities_key``; check the length limit."""
        raw = p.string(key)
        if raw is None and not required:
            return None, []
        empty = f"message {noun} is empty"
        if raw is None:
            raise bad_request(empty)
        text, entities = self.parse_text(raw, p.string("parse_mode"), p.json(entities_key))
        text, entities = finalize_text(text, entities)
        if not text:
            if required:
                raise bad_request(empty)
            return None, []
        if utf16_len(text) > limit:
            raise bad_request(
                f"message {noun} is too long" if noun == "caption" else "message is too long"
            )
        return text, self.resolve_mentions(entities)

    def parse_text(
        self, raw: str, parse_mode: str | None, entities: Any
    ) -> tuple[str, list[dict[str, Any]]]:
        mode = (parse_mode or "").strip().lower()
        if mode == "html":
            try:
                return parse_html(raw, strict_ampersand=self.strict_html)
            except HtmlParseError as exc:
                raise bad_request(f"can't parse entities: {exc}") from None
        if mode in ("markdown", "markdownv2"):
            raise bad_request(
                f"can't parse entities: parse_mode {parse_mode} is not supported by the fake "
                "Telegram server; use HTML"
            )
        if mode:
            raise bad_request("unsupported parse_mode")
        return raw, _check_entities(raw, entities)

    def resolve_mentions(self, entities: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Fill text_mention users from the world; drop mentions of unknown users."""
        result = []
        for entity in entities:
            if entity["type"] == "text_mention":
                user = self.world.users.get(int(entity["user"]["id"]))
                if user is None:
                    continue
                entity = {**entity, "user": user.to_api()}
            result.append(entity)
        return result

    def markup(
        self, p: Params, chat: FakeChat
    ) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """``(inline_keyboard markup, other markup)`` of the call (in ``chat``)."""
        raw = p.json("reply_markup", what="reply keyboard markup")
        if raw is None:
            return None, None
        markup = validate_reply_markup(raw)
        check_chat_allows(markup, chat.type == "private")
        return (markup, None) if "inline_keyboard" in markup else (None, markup)

    def take_flood_token(self, method: str, chat: FakeChat) -> None:
        self.flood.acquire(method, chat.id, chat.is_group)

    def store_file(self, value: Any, kind: str) -> str:
        """A file_id for an uploaded file or the file_id/URL that was sent."""
        if isinstance(value, str) and value and not value.startswith(("http://", "https://")):
            return value
        if not isinstance(value, str | UploadedFile):
            raise bad_request(f"there is no {kind} in the request")
        self._file_seq += 1
        return f"FAKE{kind.upper()}{self._file_seq:08d}"


def _check_entities(text: str, entities: Any) -> list[dict[str, Any]]:
    """Validate explicitly passed ``entities``."""
    if entities is None:
        return []
    if not isinstance(entities, list):
        raise bad_request("can't parse entities JSON object")
    size = utf16_len(text)
    checked = []
    for entity in entities:
        if not isinstance(entity, dict) or entity.get("type") not in ENTITY_TYPES:
            raise bad_request("can't parse entities: unsupported entity type")
        offset, length = entity.get("offset"), entity.get("length")
        if not isinstance(offset, int) or not isinstance(length, int) or offset < 0 or length <= 0:
            raise bad_request("can't parse entities: invalid entity offset or length")
        if offset + length > size:
            raise bad_request("can't parse entities: entity beyond the end of the text")
        checked.append(dict(entity))
    checked.sort(key=lambda e: (e["offset"], -e["length"]))
    return checked


# -- identity / commands ------------------------------------------------------------------


@api("getMe")
def get_me(self: BotApi, p: Params) -> Any:
    return self.world.bot.get_me()


@api("logOut")
def log_out(self: BotApi, p: Params) -> Any:
    return True


@api("close")
def close(self: BotApi, p: Params) -> Any:
    return True


def _scope(self: BotApi, p: Params) -> str:
    scope = p.json("scope")
    if scope is None:
        return "default"
    if not isinstance(scope, dict) or scope.get("type") not in SCOPE_TYPES:
        raise bad_request("can't parse BotCommandScope JSON object")
    if "chat_id" in scope or scope["type"] in ("chat", "chat_administrators", "chat_member"):
        chat = self.world.find_chat(Params(scope).chat_id())
        if chat is None:
            raise bad_request("chat not found")
        scope = {**scope, "chat_id": chat.id}
    if scope["type"] == "chat_member":
        scope["user_id"] = Params(scope).integer("user_id", required=True)
    return scope_key(scope)


def _language(p: Params) -> str:
    language = p.string("language_code") or ""
    if language and not _LANGUAGE_RE.match(language):
        raise bad_request("invalid language code specified")
    return language


@api("setMyCommands")
def set_my_commands(self: BotApi, p: Params) -> Any:
    commands = p.json("commands")
    if not isinstance(commands, list):
        raise bad_request("can't parse commands JSON object")
    if len(commands) > 100:
        raise bad_request("BOT_COMMANDS_TOO_MUCH")
    checked = []
    for item in commands:
        if not isinstance(item, dict):
            raise bad_request("can't parse BotCommand JSON object")
        command, description = item.get("command"), item.get("description")
        if not isinstance(command, str) or not _COMMAND_NAME_RE.match(command):
            raise bad_request("BOT_COMMAND_INVALID")
        if not isinstance(description, str) or not 1 <= len(description.strip()) <= 256:
            raise bad_request("BOT_COMMAND_DESCRIPTION_INVALID")
        checked.append({"command": command, "description": description})
    key = (_scope(self, p), _language(p))
    if checked:
        self.world.commands[key] = checked
    else:
        self.world.commands.pop(key, None)
    return True


@api("getMyCommands")
def get_my_commands(self: BotApi, p: Params) -> Any:
    return self.world.commands.get((_scope(self, p), _language(p)), [])


@api("deleteMyCommands")
def delete_my_commands(self: BotApi, p: Params) -> Any:
    self.world.commands.pop((_scope(self, p), _language(p)), None)
    return True


def _bot_text(kind: str, limit: int) -> tuple[Handler, Handler]:
    def setter(self: BotApi, p: Params) -> Any:
        value = p.string(kind) or ""
        if len(value) > limit:
            raise bad_request(f"{kind} is too long")
        key = (kind, _language(p))
        if value:
            self.world.bot_texts[key] = value
        else:
            self.world.bot_texts.pop(key, None)
        return True

    def getter(self: BotApi, p: Params) -> Any:
        language = _language(p)
        texts = self.world.bot_texts
        return {kind: texts.get((kind, language), texts.get((kind, ""), ""))}

    return setter, getter


for _kind, _method, _limit in (
    ("description", "MyDescription", 512),
    ("short_description", "MyShortDescription", 120),
    ("name", "MyName", 64),
):
    _set, _get = _bot_text(_kind, _limit)
    api(f"set{_method}")(_set)
    api(f"get{_method}")(_get)


# -- messages ------------------------------------------------------------------------------


@api("sendMessage")
def send_message(self: BotApi, p: Params) -> Any:
    chat = self.chat(p, send=True)
    text, entities = self.formatted(
        p, "text", "entities", limit=TEXT_LIMIT, noun="text", required=True
    )
    inline, other = self.markup(p, chat)
    thread_id = self.thread(chat, p)
    self.open_topic(chat, thread_id)
    reply_to = self.reply_target(chat, p)
    self.take_flood_token("sendMessage", chat)
    message = self.world.new_message(
        chat,
        None,
        text=text,
        entities=entities,
        reply_markup=inline,
        other_markup=other,
        thread_id=thread_id,
        is_topic_message=thread_id is not None and chat.is_forum,
        reply_to=reply_to,
        source=p.string("text"),
        parse_mode=p.string("parse_mode"),
    )
    return self.world.message_json(message)


def _send_media(self: BotApi, p: Params, method: str, kind: str) -> Any:
    chat = self.chat(p, send=True)
    file_id = self.store_file(p.raw.get(kind), kind)
    caption, entities = self.formatted(
        p, "caption", "caption_entities", limit=CAPTION_LIMIT, noun="caption", required=False
    )
    inline, other = self.markup(p, chat)
    thread_id = self.thread(chat, p)
    self.open_topic(chat, thread_id)
    reply_to = self.reply_target(chat, p)
    self.take_flood_token(method, chat)
    unique = f"U{file_id[-10:]}"
    if kind == "photo":
        media: dict[str, Any] = {
            "photo": [{"file_id": file_id, "file_unique_id": unique, "width": 90, "height": 90}]
        }
    else:
        media = {"document": {"file_id": file_id, "file_unique_id": unique}}
    message = self.world.new_message(
        chat,
        None,
        media=media,
        caption=caption,
        caption_entities=entities,
        reply_markup=inline,
        other_markup=other,
        thread_id=thread_id,
        is_topic_message=thread_id is not None and chat.is_forum,
        reply_to=reply_to,
    )
    return self.world.message_json(message)


@api("sendPhoto")
def send_photo(self: BotApi, p: Params) -> Any:
    return _send_media(self, p, "sendPhoto", "photo")


@api("sendDocument")
def send_document(self: BotApi, p: Params) -> Any:
    return _send_media(self, p, "sendDocument", "document")


def _edit_target(self: BotApi, p: Params) -> FakeMessage:
    if p.has("inline_message_id"):
        raise bad_request("MESSAGE_ID_INVALID (inline messages are not supported by the fake)")
    chat = self.chat(p, send=True)
    message = self.message(chat, p, "message to edit not found")
    if not message.from_bot:
        raise bad_request("message can't be edited")
    return message


def _apply_edit(self: BotApi, method: str, message: FakeMessage, **changes: Any) -> Any:
    if all(getattr(message, key) == value for key, value in changes.items()):
        raise ApiError(400, NOT_MODIFIED)
    self.take_flood_token(method, message.chat)
    message.history.append(message.snapshot())
    for key, value in changes.items():
        setattr(message, key, value)
    message.edit_date = int(time.time())
    return self.world.message_json(message)


@api("editMessageText")
def edit_message_text(self: BotApi, p: Params) -> Any:
    message = _edit_target(self, p)
    if message.text is None:
        raise bad_request("there is no text in the message to edit")
    text, entities = self.formatted(
        p, "text", "entities", limit=TEXT_LIMIT, noun="text", required=True
    )
    inline, _ = self.markup(p, message.chat)
    return _apply_edit(
        self, "editMessageText", message, text=text, entities=entities, reply_markup=inline
    )


@api("editMessageCaption")
def edit_message_caption(self: BotApi, p: Params) -> Any:
    message = _edit_target(self, p)
    if message.media is None:
        raise bad_request("there is no caption in the message to edit")
    caption, entities = self.formatted(
        p, "caption", "caption_entities", limit=CAPTION_LIMIT, noun="caption", required=False
    )
    inline, _ = self.markup(p, message.chat)
    return _apply_edit(
        self,
        "editMessageCaption",
        message,
        caption=caption,
        caption_entities=entities,
        reply_markup=inline,
    )


@api("editMessageReplyMarkup")
def edit_message_reply_markup(self: BotApi, p: Params) -> Any:
    message = _edit_target(self, p)
    inline, _ = self.markup(p, message.chat)
    return _apply_edit(self, "editMessageReplyMarkup", message, reply_markup=inline)


def _can_delete(chat: FakeChat, message: FakeMessage) -> bool:
    return message.from_bot or chat.type == "private" or chat.bot_can("can_delete_messages")


def _delete(chat: FakeChat, message: FakeMessage) -> None:
    message.deleted = True
    if message.message_id in chat.pinned:
        chat.pinned.remove(message.message_id)


@api("deleteMessage")
def delete_message(self: BotApi, p: Params) -> Any:
    chat = self.chat(p, send=False)
    message = self.message(chat, p, "message to delete not found")
    if not _can_delete(chat, message):
        raise bad_request("message can't be deleted")
    _delete(chat, message)
    return True


@api("deleteMessages")
def delete_messages(self: BotApi, p: Params) -> Any:
    chat = self.chat(p, send=False)
    ids = p.json("message_ids")
    if not isinstance(ids, list) or not 1 <= len(ids) <= 100:
        raise bad_request("message_ids must be a non-empty list of at most 100 identifiers")
    found = [chat.messages.get(int(i)) for i in ids]
    targets = [m for m in found if m is not None and not m.deleted and _can_delete(chat, m)]
    if not targets:
        raise bad_request("message to delete not found")
    for message in targets:
        _delete(chat, message)
    return True


# -- callback queries ------------------------------------------------------------------------


def _open_query(self: BotApi, handles: Mapping[str, QueryHandle], query_id: str) -> QueryHandle:
    """A query the bot may still answer: known, not answered, not too old."""
    handle = handles.get(query_id)
    expired = handle is not None and time.monotonic() - handle.created_at > self.callback_timeout
    if handle is None or handle.answered or expired:
        raise ApiError(400, QUERY_TOO_OLD)
    return handle


@api("answerCallbackQuery")
def answer_callback_query(self: BotApi, p: Params) -> Any:
    handle = _open_query(self, self.world.callbacks, p.string("callback_query_id",
                                                              required=True))
    text = p.string("text")
    if text is not None and utf16_len(text) > CALLBACK_TEXT_LIMIT:
        raise bad_request("MESSAGE_TOO_LONG")
    url = p.string("url")
    if url:
        match = _START_LINK_RE.match(url)
        if match is None or match.group("bot").lower() != self.world.bot.username.lower():
            raise bad_request("URL_INVALID")
    handle.resolve(
        CallbackAnswer(
            text=text,
            show_alert=p.flag("show_alert"),
            url=url,
            cache_time=p.integer("cache_time", default=0),
            at=time.monotonic(),
        )
    )
    return True


# -- inline mode ----------------------------------------------------------------------------


def _inline_result(self: BotApi, raw: Any) -> dict[str, Any]:
    """A result checked (see inline.py), its message text parsed as it will be sent."""
    result = validate_result(raw)
    content = result["input_message_content"]
    source = content.get("message_text")
    if not isinstance(source, str):
        raise bad_request("MESSAGE_EMPTY")
    text, entities = self.parse_text(source, content.get("parse_mode"), content.get("entities"))
    text, entities = finalize_text(text, entities)
    if not text:
        raise bad_request("MESSAGE_EMPTY")
    if utf16_len(text) > TEXT_LIMIT:
        raise bad_request("MESSAGE_TOO_LONG")
    parsed = {**content, "text": text, "entities": self.resolve_mentions(entities)}
    return {**result, "input_message_content": parsed}


@api("answerInlineQuery")
def answer_inline_query(self: BotApi, p: Params) -> Any:
    handle = _open_query(self, self.world.inline_queries, p.string("inline_query_id",
                                                                   required=True))
    raw = p.json("results")
    if not isinstance(raw, list):
        raise bad_request("can't parse inline query results JSON object")
    if len(raw) > MAX_RESULTS:
        raise bad_request("RESULTS_TOO_MUCH")
    results = [_inline_result(self, r) for r in raw]
    ids = [r["id"] for r in results]
    if len(set(ids)) != len(ids):
        raise bad_request("RESULT_ID_DUPLICATE")
    next_offset = p.string("next_offset") or ""
    if len(next_offset.encode()) > 64:
        raise bad_request("NEXT_OFFSET_INVALID")
    handle.resolve(InlineAnswer(
        results=results, cache_time=p.integer("cache_time", default=300),
        is_personal=p.flag("is_personal"), next_offset=next_offset,
        button=validate_button(p.json("button")), at=time.monotonic(),
    ))
    return True


@api("savePreparedInlineMessage")
def save_prepared_inline_message(self: BotApi, p: Params) -> Any:
    user_id = p.integer("user_id", required=True)
    if user_id not in self.world.users:
        raise bad_request("USER_ID_INVALID")
    allowed = frozenset(kind for kind in ("users", "bots", "groups", "channels")
                        if p.flag(f"allow_{kind[:-1]}_chats"))
    if not allowed:
        raise bad_request("at least one chat type must be allowed")
    result = _inline_result(self, p.json("result"))
    prepared_id = f"P{len(self.world.prepared) + 1:08d}"
    expiration = int(time.time()) + PREPARED_SECONDS
    self.world.prepared[prepared_id] = PreparedMessage(prepared_id, user_id, result, allowed,
                                                       expiration)
    return {"id": prepared_id, "expiration_date": expiration}


# -- chats ---------------------------------------------------------------------------------


@api("getChat")
def get_chat(self: BotApi, p: Params) -> Any:
    return self.world.chat_full_info(self.chat(p, send=False))


@api("getChatMember")
def get_chat_member(self: BotApi, p: Params) -> Any:
    chat = self.chat(p, send=False)
    user_id = p.integer("user_id", required=True)
    if user_id == self.world.bot.id:
        return self.world.bot_member_json(chat)
    user = self.world.users.get(user_id)
    if user is None:
        raise bad_request("user not found")
    return self.world.user_member_json(chat, user)


@api("getChatAdministrators")
def get_chat_administrators(self: BotApi, p: Params) -> Any:
    chat = self.chat(p, send=False)
    if chat.type == "private":
        raise bad_request("there are no administrators in the private chat")
    users = self.world.users
    ranked = sorted(
        (uid for uid, status in chat.members.items() if status in ("creator", "administrator")),
        key=lambda uid: chat.members[uid] != "creator",
    )
    result = [member_json(users[uid].to_api(), chat.members[uid]) for uid in ranked]
    if chat.bot_status == "administrator":
        result.append(self.world.bot_member_json(chat))
    return result


@api("getChatMemberCount")
def get_chat_member_count(self: BotApi, p: Params) -> Any:
    chat = self.chat(p, send=False)
    if chat.type == "private":
        return 2
    humans = sum(1 for status in chat.members.values() if status in MEMBER_STATUSES)
    return humans + (1 if chat.bot_is_member else 0)


@api("sendChatAction")
def send_chat_action(self: BotApi, p: Params) -> Any:
    chat = self.chat(p, send=True)
    action = p.string("action", required=True)
    if action not in CHAT_ACTIONS:
        raise bad_request("wrong parameter action in request")
    self.thread(chat, p)
    chat.last_action = action
    return True


def _check_pin_rights(chat: FakeChat) -> None:
    if chat.is_group and not chat.bot_can("can_pin_messages"):
        raise bad_request("not enough rights to manage pinned messages in the chat")


@api("pinChatMessage")
def pin_chat_message(self: BotApi, p: Params) -> Any:
    chat = self.chat(p, send=True)
    _check_pin_rights(chat)
    message = self.message(chat, p, "message to pin not found")
    if message.message_id in chat.pinned:
        chat.pinned.remove(message.message_id)
    chat.pinned.append(message.message_id)
    if chat.is_group:
        pinned = self.world.message_json(message, nested=True)
        self.world.service_message(chat, None, {"pinned_message": pinned}, deliver=False)
    return True


@api("unpinChatMessage")
def unpin_chat_message(self: BotApi, p: Params) -> Any:
    chat = self.chat(p, send=True)
    _check_pin_rights(chat)
    if p.has("message_id"):
        message = self.message(chat, p, "message to unpin not found")
        if message.message_id in chat.pinned:
            chat.pinned.remove(message.message_id)
    elif chat.pinned:
        chat.pinned.pop()
    return True


@api("unpinAllChatMessages")
def unpin_all_chat_messages(self: BotApi, p: Params) -> Any:
    chat = self.chat(p, send=True)
    _check_pin_rights(chat)
    chat.pinned.clear()
    return True


@api("leaveChat")
def leave_chat(self: BotApi, p: Params) -> Any:
    chat = self.chat(p, send=False)
    if chat.type == "private":
        raise bad_request("chat member status can't be changed in private chats")
    self.world.set_bot_status(chat, "left", None)
    return True


@api("setChatMenuButton")
def set_chat_menu_button(self: BotApi, p: Params) -> Any:
    key = 0
    if p.has("chat_id"):
        chat = self.chat(p, send=False)
        if chat.type != "private":
            raise bad_request("menu button can be changed only in private chats")
        key = chat.id
    button = p.json("menu_button") or {"type": "default"}
    if not isinstance(button, dict) or button.get("type") not in ("commands", "web_app", "default"):
        raise bad_request("can't parse menu button JSON object")
    if button["type"] == "web_app" and not (
        isinstance(button.get("text"), str) and isinstance(button.get("web_app"), dict)
    ):
        raise bad_request("can't parse menu button JSON object")
    self.world.menu_buttons[key] = button
    return True


@api("getChatMenuButton")
def get_chat_menu_button(self: BotApi, p: Params) -> Any:
    key = self.chat(p, send=False).id if p.has("chat_id") else 0
    buttons = self.world.menu_buttons
    return buttons.get(key) or buttons.get(0) or {"type": "default"}


# -- webhooks (delivery by POST: server.py) ---------------------------------------------

_SECRET_RE = re.compile(r"[A-Za-z0-9_-]{1,256}")


def is_loopback_url(url: str) -> bool:
    """Whether ``url`` points at this machine: the only webhooks the fake POSTs to (it
    never sends traffic elsewhere), and the only ones where it accepts plain http:// (a
    test's bot cannot serve HTTPS; Telegram wants HTTPS everywhere)."""
    try:
        return urlsplit(url).hostname in ("127.0.0.1", "localhost", "::1")
    except ValueError:
        return False


@api("setWebhook")
def set_webhook(self: BotApi, p: Params) -> Any:
    url = p.string("url") or ""
    if url and not (
        url.startswith("https://") or (url.startswith("http://") and is_loopback_url(url))
    ):
        raise bad_request("bad webhook: An HTTPS URL must be provided for webhook")
    secret = p.string("secret_token") or ""
    if secret and not _SECRET_RE.fullmatch(secret):
        raise bad_request("secret token contains unallowed characters")
    max_connections = p.integer("max_connections", default=40)
    if not 1 <= max_connections <= 100:
        raise bad_request("bad webhook: max_connections must be between 1 and 100")
    self.world.webhook_url = url
    self.world.webhook_secret = secret if url else ""
    self.world.webhook_max_connections = max_connections
    self.world.webhook_last_error = None
    _set_allowed(self, p)
    if p.flag("drop_pending_updates"):
        self.world.updates.clear()
    self.world.on_webhook()
    return True


@api("deleteWebhook")
def delete_webhook(self: BotApi, p: Params) -> Any:
    self.world.webhook_url = ""
    self.world.webhook_secret = ""
    self.world.webhook_last_error = None
    if p.flag("drop_pending_updates"):
        self.world.updates.clear()
    self.world.on_webhook()
    return True


@api("getWebhookInfo")
def get_webhook_info(self: BotApi, p: Params) -> Any:
    info: dict[str, Any] = {
        "url": self.world.webhook_url,
        "has_custom_certificate": False,
        "pending_update_count": len(self.world.updates),
    }
    if self.world.webhook_url:
        info["max_connections"] = self.world.webhook_max_connections
    if self.world.webhook_last_error is not None:
        info["last_error_date"], info["last_error_message"] = self.world.webhook_last_error
    return info


def _set_allowed(self: BotApi, p: Params) -> None:
    """Apply ``allowed_updates`` (an empty list means the default set)."""
    allowed = p.json("allowed_updates")
    if allowed is None:
        return
    if not isinstance(allowed, list):
        raise bad_request("can't parse allowed_updates JSON object")
    chosen = frozenset(str(kind) for kind in allowed) & ALL_UPDATE_KINDS
    self.world.allowed_updates = chosen or DEFAULT_ALLOWED


set_allowed_updates = _set_allowed
