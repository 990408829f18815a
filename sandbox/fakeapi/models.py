"""Data model of the fake Telegram world: bot identity, user accounts, chats, messages,
pending updates."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .errors import FakeClientError
from .html import entity_text
from .markup import Button, inline_buttons

MEMBER_STATUSES = frozenset({"creator", "administrator", "member"})

DEFAULT_BOT_RIGHTS: dict[str, bool] = {
    "can_be_edited": False,
    "is_anonymous": False,
    "can_manage_chat": True,
    "can_delete_messages": True,
    "can_manage_video_chats": True,
    "can_restrict_members": True,
    "can_promote_members": False,
    "can_change_info": True,
    "can_invite_users": True,
    "can_post_stories": False,
    "can_edit_stories": False,
    "can_delete_stories": False,
    "can_pin_messages": True,
    "can_manage_topics": True,
}


@dataclass
class BotIdentity:
    """The bot user (what getMe returns)."""

    id: int
    first_name: str = "Briscola Test"
    username: str = "BriscolaTestBot"
    can_join_groups: bool = True
    can_read_all_group_messages: bool = False
    supports_inline_queries: bool = False

    def user_json(self) -> dict[str, Any]:
        """The bot as the ``from`` of its messages."""
        return {
            "id": self.id,
            "is_bot": True,
            "first_name": self.first_name,
            "username": self.username,
        }

    def get_me(self) -> dict[str, Any]:
        """The full getMe result."""
        return {
            **self.user_json(),
            "can_join_groups": self.can_join_groups,
            "can_read_all_group_messages": self.can_read_all_group_messages,
            "supports_inline_queries": self.supports_inline_queries,
            "can_connect_to_business": False,
            "has_main_web_app": False,
        }


class UserAccount:
    """A Telegram user as the server knows them: the Bot API's ``User`` object and their
    standing with the bot. `FakeUser` (client.py) is one who also acts."""

    def __init__(
        self,
        id: int,
        first_name: str,
        *,
        last_name: str | None = None,
        username: str | None = None,
        language_code: str | None = None,
        is_premium: bool = False,
    ):
        self.id = id
        self.first_name = first_name
        self.last_name = last_name
        self.username = username
        self.language_code = language_code
        self.is_premium = is_premium
        self.started = False  # has pressed Start (or written to the bot) at least once
        self.blocked = False  # has blocked the bot

    # -- JSON ---------------------------------------------------------------------------
    def name_fields(self) -> dict[str, Any]:
        data: dict[str, Any] = {"first_name": self.first_name}
        if self.last_name:
            data["last_name"] = self.last_name
        if self.username:
            data["username"] = self.username
        return data

    def to_api(self) -> dict[str, Any]:
        """The ``User`` JSON object."""
        data: dict[str, Any] = {"id": self.id, "is_bot": False, **self.name_fields()}
        if self.language_code:
            data["language_code"] = self.language_code
        if self.is_premium:
            data["is_premium"] = True
        return data

    @property
    def full_name(self) -> str:
        return f"{self.first_name} {self.last_name}" if self.last_name else self.first_name

    def __repr__(self) -> str:
        return f"<FakeUser {self.id} {self.full_name!r}>"


@dataclass(eq=False)
class FakeChat:
    """A private chat, basic group or supergroup (optionally a forum)."""

    id: int
    type: str  # "private", "group" or "supergroup"
    title: str | None = None
    username: str | None = None
    is_forum: bool = False
    user: UserAccount | None = None  # the other party of a private chat
    members: dict[int, str] = field(default_factory=dict)  # user id -> status
    bot_status: str = "member"  # member / administrator / left / kicked
    bot_rights: dict[str, bool] = field(default_factory=dict)
    migrated_to: int | None = None
    migrated_from: int | None = None
    topics: dict[int, str] = field(default_factory=dict)  # thread id -> name
    closed_topics: set[int] = field(default_factory=set)  # thread ids closed
    messages: dict[int, FakeMessage] = field(default_factory=dict)
    next_message_id: int = 1
    pinned: list[int] = field(default_factory=list)
    last_action: str | None = None

    @property
    def is_group(self) -> bool:
        """Basic group or supergroup."""
        return self.type in ("group", "supergroup")

    @property
    def kind_name(self) -> str:
        """``group``/``supergroup`` as used in Forbidden descriptions."""
        return "supergroup" if self.type == "supergroup" else "group"

    @property
    def bot_is_member(self) -> bool:
        return self.type == "private" or self.bot_status in ("member", "administrator")

    @property
    def bot_is_admin(self) -> bool:
        return self.type == "private" or self.bot_status == "administrator"

    def bot_can(self, right: str) -> bool:
        """Whether the bot is admin with ``right`` (always true in private chats)."""
        return self.bot_is_admin and (self.type == "private" or self.bot_rights.get(right, False))

    def status_of(self, user_id: int) -> str:
        """Membership status of a user (``left`` if unknown)."""
        if self.type == "private":
            return "member" if self.user is not None and self.user.id == user_id else "left"
        return self.members.get(user_id, "left")

    def is_member(self, user_id: int) -> bool:
        return self.status_of(user_id) in MEMBER_STATUSES

    def take_message_id(self) -> int:
        message_id = self.next_message_id
        self.next_message_id += 1
        return message_id

    def to_api(self) -> dict[str, Any]:
        """The ``Chat`` JSON object."""
        if self.type == "private":
            assert self.user is not None
            data: dict[str, Any] = {"id": self.id, "type": "private"}
            data.update(self.user.name_fields())
            return data
        data = {"id": self.id, "type": self.type, "title": self.title}
        if self.username:
            data["username"] = self.username
        if self.is_forum:
            data["is_forum"] = True
        return data

    def __repr__(self) -> str:
        name = self.title if self.type != "private" or self.user is None else self.user.first_name
        return f"<FakeChat {self.type} {self.id} {name!r}>"


@dataclass(frozen=True)
class MessageVersion:
    """A previous state of an edited message."""

    text: str | None
    entities: tuple[dict[str, Any], ...]
    reply_markup: dict[str, Any] | None
    caption: str | None
    edit_date: int | None


@dataclass(eq=False)
class FakeMessage:
    """A message as stored by the fake server (current state + edit history)."""

    chat: FakeChat
    message_id: int
    sender: UserAccount | None  # None: the bot
    date: int
    text: str | None = None
    entities: list[dict[str, Any]] = field(default_factory=list)
    caption: str | None = None
    caption_entities: list[dict[str, Any]] = field(default_factory=list)
    media: dict[str, Any] | None = None  # e.g. {"photo": [...]}
    reply_markup: dict[str, Any] | None = None  # inline keyboards only
    other_markup: dict[str, Any] | None = None  # reply keyboard / remove / force_reply
    thread_id: int | None = None
    is_topic_message: bool = False
    reply_to: FakeMessage | None = None
    service: dict[str, Any] | None = None
    #: sent by a user through the bot's inline mode (a chosen inline result)
    via_bot: bool = False
    source: str | None = None  # text as the bot sent it (e.g. the HTML)
    parse_mode: str | None = None
    edit_date: int | None = None
    history: list[MessageVersion] = field(default_factory=list)
    deleted: bool = False
    _parsed_keyboard: tuple[dict[str, Any] | None, list[list[Button]]] | None = field(
        default=None, init=False, repr=False
    )

    # -- convenience for tests ---------------------------------------------------------
    @property
    def chat_id(self) -> int:
        return self.chat.id

    @property
    def from_bot(self) -> bool:
        return self.sender is None

    @property
    def content(self) -> str:
        """Text or caption ("" for service messages)."""
        return self.text if self.text is not None else (self.caption or "")

    @property
    def keyboard(self) -> list[list[Button]]:
        """Inline keyboard rows (parsed once per markup: simulated players look for their
        buttons on every redraw)."""
        markup = self.reply_markup
        cached = self._parsed_keyboard
        if cached is None or cached[0] is not markup:
            cached = self._parsed_keyboard = (markup, inline_buttons(markup))
        return cached[1]

    @property
    def buttons(self) -> list[Button]:
        """All inline buttons, row by row."""
        return [button for row in self.keyboard for button in row]

    @property
    def button_pairs(self) -> list[list[tuple[str, str | None]]]:
        """Rows of ``(text, callback_data or url)``."""
        return [[(b.text, b.target) for b in row] for row in self.keyboard]

    def button(self, text: str) -> Button:
        """The unique button whose text contains ``text`` (exact match preferred)."""
        exact = [b for b in self.buttons if b.text == text]
        if len(exact) == 1:
            return exact[0]
        found = [b for b in self.buttons if text in b.text]
        if len(found) != 1:
            raise FakeClientError(
                f"{len(found)} buttons contain {text!r} in message {self.message_id} "
                f"of chat {self.chat.id}: {self.button_pairs}"
            )
        return found[0]

    def entity_texts(self, entity_type: str) -> list[str]:
        """The substrings covered by entities of ``entity_type`` (e.g. ``"bold"``)."""
        return [
            entity_text(self.content, e) for e in self._all_entities() if e["type"] == entity_type
        ]

    def _all_entities(self) -> list[dict[str, Any]]:
        return self.entities if self.text is not None else self.caption_entities

    def snapshot(self) -> MessageVersion:
        return MessageVersion(
            self.text, tuple(self.entities), self.reply_markup, self.caption, self.edit_date
        )

    def __repr__(self) -> str:
        who = "bot" if self.sender is None else self.sender.first_name
        body = self.content if self.service is None else f"service {sorted(self.service)}"
        flags = " deleted" if self.deleted else ""
        keys = f" buttons={self.button_pairs}" if self.reply_markup else ""
        return f"<FakeMessage {self.chat.id}/{self.message_id} {who}: {body[:80]!r}{keys}{flags}>"


@dataclass
class PendingUpdate:
    """An update waiting to be confirmed by getUpdates, with its timing (for latency).

    All times are ``time.monotonic()``.  ``offered_at`` is when a getUpdates answer first
    carried it (``offers`` counts every answer that carried it: more than one after a bot
    restart before confirming).  ``handled_at`` is when the bot's first API call *for it*
    arrived: for a callback query the ``answerCallbackQuery`` with its id; for a message,
    the first call addressed to the message's chat after it was offered (an
    approximation: any call to that chat counts). ``confirmed_at``: when Telegram
    considered it delivered (a getUpdates with a higher offset, or a 2xx webhook answer).
    """

    update_id: int
    kind: str
    payload: dict[str, Any]
    delivered: bool = False
    created_at: float = 0.0
    offered_at: float | None = None
    offers: int = 0
    handled_at: float | None = None
    handled_by: str | None = None
    chat_id: int | None = None
    query_id: str | None = None
    confirmed_at: float | None = None

    @property
    def latency(self) -> float | None:
        """Seconds from first offered by getUpdates to the bot's first call for it."""
        if self.offered_at is None or self.handled_at is None:
            return None
        return self.handled_at - self.offered_at

    @property
    def age(self) -> float | None:
        """Seconds from the user's action to the bot's first call for it."""
        return None if self.handled_at is None else self.handled_at - self.created_at
