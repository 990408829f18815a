"""The simulated users' side: `FakeUser` actions and callback-query handles.

Every action produces the update a real Telegram client would cause (message,
callback_query, my_chat_member, edited_message) and refuses, with `FakeClientError`,
what a real client could not do (writing in a group the user is not in, pressing a button
that the message does not have, ...).
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, Protocol

from .errors import FakeClientError, WaitTimeout
from .models import FakeChat, FakeMessage, UserAccount

_PAYLOAD_RE = re.compile(r"^[A-Za-z0-9_-]{0,64}$")


class Telegram(Protocol):
    """What a user's actions go through: the fake's `World` (world.py), which creates the
    users; so the users' side needs no import of it."""

    def private_chat(self, user: FakeUser) -> FakeChat: ...

    def inline_query(
        self, user: FakeUser, query: str, chat: FakeChat | None = None
    ) -> InlineQueryHandle: ...

    def choose_inline_result(self, handle: InlineQueryHandle, result_id: str) -> FakeMessage: ...

    def my_chat_member(self, chat: FakeChat, by: FakeUser | None, old: str, new: str) -> None: ...

    def user_message(
        self,
        user: FakeUser,
        chat: FakeChat,
        text: str,
        *,
        reply_to: FakeMessage | None = None,
        thread_id: int | None = None,
    ) -> FakeMessage: ...

    def lookup_message(self, ref: Any) -> FakeMessage: ...

    def user_edit(self, user: FakeUser, message: FakeMessage, text: str) -> FakeMessage: ...

    def callback_query(
        self, user: FakeUser, message: FakeMessage, data: str | bytes
    ) -> CallbackQueryHandle: ...

    def add_member(
        self, chat: FakeChat, user: FakeUser, *, announce: bool
    ) -> FakeMessage | None: ...

    def remove_member(
        self, chat: FakeChat, user: FakeUser, *, announce: bool
    ) -> FakeMessage | None: ...


class FakeUser(UserAccount):
    """A simulated Telegram user.  Create with `FakeTelegram.add_user`."""

    def __init__(self, world: Telegram, id: int, first_name: str, **fields: Any):
        super().__init__(id, first_name, **fields)
        self._world = world

    @property
    def private_chat(self) -> FakeChat:
        """The private chat between this user and the bot."""
        return self._world.private_chat(self)

    # -- private chat with the bot ---------------------------------------------------------
    async def start_bot(self, payload: str | None = None) -> FakeMessage:
        """Press Start (or open a ``t.me/<bot>?start=<payload>`` link): sends ``/start [payload]``.

        Unblocks the bot if it was blocked (a my_chat_member update is sent then).
        """
        if payload is not None and not _PAYLOAD_RE.match(payload):
            raise FakeClientError(f"invalid start payload {payload!r}: [A-Za-z0-9_-]{{0,64}}")
        if self.blocked:
            self.unblock_bot()
        self.started = True
        text = "/start" if not payload else f"/start {payload}"
        return await self.send(self.private_chat, text)

    def block_bot(self) -> None:
        """Block the bot: it gets a my_chat_member (member -> kicked) and 403 on sends."""
        if not self.blocked:
            self.blocked = True
            self._world.my_chat_member(self.private_chat, self, "member", "kicked")

    def unblock_bot(self) -> None:
        """Unblock the bot (my_chat_member kicked -> member)."""
        if self.blocked:
            self.blocked = False
            self._world.my_chat_member(self.private_chat, self, "kicked", "member")

    async def dm(self, text: str) -> FakeMessage:
        """Send ``text`` to the bot in the private chat."""
        return await self.send(self.private_chat, text)

    # -- messages -------------------------------------------------------------------------
    async def send(
        self,
        chat: FakeChat | FakeUser,
        text: str,
        *,
        reply_to: FakeMessage | None = None,
        thread_id: int | None = None,
    ) -> FakeMessage:
        """Send a text message; commands (``/cmd``, ``/cmd@Bot``) get bot_command entities."""
        target = chat.private_chat if isinstance(chat, FakeUser) else chat
        message = self._world.user_message(
            self, target, text, reply_to=reply_to, thread_id=thread_id
        )
        await asyncio.sleep(0)
        return message

    async def reply(self, message: Any, text: str) -> FakeMessage:
        """Reply to ``message`` (a FakeMessage or a PTB Message) in its chat."""
        original = self._world.lookup_message(message)
        return await self.send(original.chat, text, reply_to=original, thread_id=original.thread_id)

    async def edit(self, message: FakeMessage, text: str) -> FakeMessage:
        """Edit one of this user's messages (the bot gets an edited_message update)."""
        edited = self._world.user_edit(self, message, text)
        await asyncio.sleep(0)
        return edited

    # -- buttons ----------------------------------------------------------------------------
    async def press(
        self, message: Any, data: str | bytes, *, check: bool = True
    ) -> CallbackQueryHandle:
        """Press the inline button with ``callback_data == data`` on ``message``.

        ``message`` may be a FakeMessage, a PTB Message or ``(chat_id, message_id)``; the
        current state of the message is used.  With ``check=False`` any data is sent, as
        a client showing an outdated keyboard (or a forged client) would: any length, and
        ``bytes`` that need not be UTF-8 (see `World.callback_query`).
        """
        current = self._world.lookup_message(message)
        if check and data not in [b.callback_data for b in current.buttons]:
            raise FakeClientError(
                f"message {current.chat.id}/{current.message_id} has no button with "
                f"callback_data {data!r}; buttons: {current.button_pairs}"
            )
        handle = self._world.callback_query(self, current, data)
        await asyncio.sleep(0)
        return handle

    async def press_button(self, message: Any, text: str) -> CallbackQueryHandle:
        """Press the callback button whose text equals/contains ``text``."""
        current = self._world.lookup_message(message)
        button = current.button(text)
        if button.callback_data is None:
            raise FakeClientError(f"button {button.text!r} is not a callback button: {button.raw}")
        return await self.press(current, button.callback_data)

    # -- inline mode ------------------------------------------------------------------------
    async def inline(self, query: str = "", chat: FakeChat | None = None) -> InlineQueryHandle:
        """Type ``@bot query`` in ``chat`` (None: the private chat with the bot); await the
        handle for the bot's answer."""
        handle = self._world.inline_query(self, query, chat)
        await asyncio.sleep(0)
        return handle

    async def choose(self, handle: InlineQueryHandle, result_id: str) -> FakeMessage:
        """Pick a result of an answered inline query: it is sent where the query was typed."""
        message = self._world.choose_inline_result(handle, result_id)
        await asyncio.sleep(0)
        return message

    # -- groups -------------------------------------------------------------------------------
    async def join(self, group: FakeChat) -> FakeMessage | None:
        """Join ``group`` (service message new_chat_members)."""
        return self._world.add_member(group, self, announce=True)

    async def leave(self, group: FakeChat) -> FakeMessage | None:
        """Leave ``group`` (service message left_chat_member)."""
        return self._world.remove_member(group, self, announce=True)


@dataclass(frozen=True)
class CallbackAnswer:
    """What the bot answered to a callback query."""

    text: str | None
    show_alert: bool
    url: str | None
    cache_time: int
    at: float


class _Answered:
    """Something the bot must answer (a callback query, an inline query): awaitable,
    resolves to the bot's answer."""

    def __init__(self, query_id: str) -> None:
        self.id = query_id
        self.created_at = time.monotonic()
        self.answer: Any = None
        self._event = asyncio.Event()

    @property
    def answered(self) -> bool:
        return self.answer is not None

    def resolve(self, answer: Any) -> None:
        """Record the bot's answer (called by the answering method)."""
        self.answer = answer
        self._event.set()

    def _what(self) -> str:
        raise NotImplementedError

    async def _wait(self, timeout: float) -> Any:
        try:
            await asyncio.wait_for(self._event.wait(), timeout)
        except TimeoutError:
            raise WaitTimeout(f"{self._what()} was not answered within {timeout}s") from None
        assert self.answer is not None
        return self.answer


class CallbackQueryHandle(_Answered):
    """A pressed button: awaitable, resolves to the bot's `CallbackAnswer`."""

    answer: CallbackAnswer | None

    def __init__(self, query_id: str, user: FakeUser, message: FakeMessage, data: str):
        super().__init__(query_id)
        self.user = user
        self.message = message
        self.data = data

    def _what(self) -> str:
        return (f"callback query {self.id} ({self.data!r} by {self.user.full_name!r} on "
                f"message {self.message.chat.id}/{self.message.message_id})")

    async def wait(self, timeout: float = 5.0) -> CallbackAnswer:
        """Wait until the bot answers the query."""
        answer: CallbackAnswer = await self._wait(timeout)
        return answer

    def __await__(self) -> Generator[Any, None, CallbackAnswer]:
        return self.wait().__await__()

    def __repr__(self) -> str:
        state = "answered" if self.answered else "pending"
        return f"<CallbackQuery {self.id} {self.data!r} by {self.user.first_name!r} {state}>"


@dataclass(frozen=True)
class InlineAnswer:
    """What the bot answered to an inline query (``answerInlineQuery``)."""

    results: list[dict[str, Any]]
    cache_time: int
    is_personal: bool
    next_offset: str
    button: dict[str, Any] | None
    at: float

    def result(self, result_id: str) -> dict[str, Any]:
        for result in self.results:
            if result["id"] == result_id:
                return result
        raise FakeClientError(f"no result {result_id!r}; results: "
                              f"{[r['id'] for r in self.results]}")

    @property
    def titles(self) -> list[str]:
        return [str(r.get("title", "")) for r in self.results]


class InlineQueryHandle(_Answered):
    """An inline query typed by a user: awaitable, resolves to the bot's `InlineAnswer`."""

    answer: InlineAnswer | None

    def __init__(self, query_id: str, user: UserAccount, query: str, chat: FakeChat,
                 chat_type: str) -> None:
        super().__init__(query_id)
        self.user = user
        self.query = query
        #: where the query was typed: where a chosen result goes
        self.chat = chat
        self.chat_type = chat_type

    def _what(self) -> str:
        return f"inline query {self.id} ({self.query!r} by {self.user.first_name!r})"

    async def wait(self, timeout: float = 5.0) -> InlineAnswer:
        """Wait until the bot answers the query."""
        answer: InlineAnswer = await self._wait(timeout)
        return answer

    def __await__(self) -> Generator[Any, None, InlineAnswer]:
        return self.wait().__await__()
