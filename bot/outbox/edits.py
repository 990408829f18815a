"""The outbox's edit queue: the content each message should show, per chat, and one
flusher task per chat that makes the edits.

* **Coalescing**: an edit only records the *desired* content of a message (with a
  :class:`~bot.budget.Priority` and by when it is due: at once, or after a ``delay`` for
  content nobody needs right now); the chat's flusher sends the latest desired content
  when it is due and the budgets (:mod:`bot.outbox.pace`) allow. A burst of moves becomes
  one edit.
* **Skip identical edits** (:mod:`bot.outbox.digests`): an edit that would show what the
  message shows already is never made; "message is not modified" counts as accepted.
* **Telegram's refusals** are handled where they happen: a message gone is not tried
  again, flood control and network errors keep the edit wanted for later (with a
  backoff), a migrated group's old messages are read-only, a chat that refused is told.
* **Re-sent messages** (:meth:`EditQueue.retire`): edits queued for a message that was
  replaced (``/mano``) are dropped, and its deletion waits for the edit in flight, if any
  (:meth:`EditQueue.released`).
* **One line per chat** (issue 46): a new message of the chat (:meth:`EditQueue.slot`,
  for :meth:`bot.outbox.Outbox.send`) waits in the same line as its edits, served by the
  same flusher by rank, then by when it was asked for. A send used to take the chat's
  next slot at once, ahead of every edit waiting: at a smazzata's end the group's result
  and new table went before the old table's closing edit (its last trick shown 10 s
  late), and a group with sends in a row got no edit meanwhile.
* **The presser's own message never waits for the chat's pace** (issue 46): in a private
  chat (a burst of two calls) the other calls leave the burst's last call to it
  (:data:`PRESSED_KEEPS`); alone against the computers, their moves' redraws used the
  chat's calls up and the presser's card was shown up to 1.25 s late. It may take one
  call beyond the burst too (:data:`PRESSED_EXTRA`): two presses in a row (a trick won,
  the next one led) were the second one's wait.
* **A group's redraw comes due** (:meth:`bot.outbox.pace.Pacer.overdue_at`): its place
  in the bot's budget ages from the group's last call, whatever its rank (see
  :mod:`bot.budget`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from telegram import Bot, InlineKeyboardMarkup
from telegram.error import (
    BadRequest,
    ChatMigrated,
    Forbidden,
    NetworkError,
    RetryAfter,
    TelegramError,
)

from bot.aiohttp_request import Fenced
from bot.budget import ChatPace, Priority
from bot.outbox.digests import Digests
from bot.outbox.pace import PACED, Pacer

#: Calls of a private chat's burst that the calls other than the presser's own message
#: leave unused (the presser's redraw goes at once even right after the chat's other
#: calls; they go at the chat's steady pace).
PRESSED_KEEPS = 1
#: Calls beyond the burst that the presser's own redraw may take in a private chat: a
#: player whose card wins the trick leads the next one at once, and the two presses'
#: redraws came right after their turn's call; the second one waited for the chat's next
#: slot (1.0-1.1 s, issue 46). Three calls at once fit Telegram's tolerance of short
#: bursts (and the fake server's: 3 at once, then 1/s); the chat's steady pace (0.8/s)
#: lets its bucket fill again before the next turn, and every call pushes the steady
#: schedule on by one interval as before. It goes :data:`bot.budget.ARRIVAL_JITTER` after
#: its slot (a 429 in a fresh-clone run of the suite), or at the pace if that is sooner.
PRESSED_EXTRA = 1
#: A presser's own redraw that waited longer than this for its call is logged (a WARNING:
#: it should go at once, issue 46).
PRESSED_LATE_SECONDS = 0.5

log = logging.getLogger(__name__)


def backoff(failures: int, *, first: float = 0.25, cap: float = 8.0) -> float:
    """Seconds to wait before the next attempt after ``failures`` failures in a row."""
    return float(min(cap, first * 2 ** max(0, failures - 1)))


def keyboard_key(kb: InlineKeyboardMarkup | None) -> str:
    """The keyboard as recorded in the digests ("" for none)."""
    return "" if kb is None else str(kb.to_dict())


def count_call(stats: Counter[str], chat_id: int, kind: str) -> None:
    """Count a call of this kind in a group or a private chat (:attr:`Outbox.stats`)."""
    stats[("group_" if chat_id < 0 else "private_") + kind] += 1


@dataclass
class _Edit:
    text: str
    kb: InlineKeyboardMarkup | None
    priority: int
    due: float
    #: Only the keyboard changes (editMessageReplyMarkup when the text is as sent).
    markup_only: bool = False
    #: Called once the message shows this content (not if a newer one replaced it).
    shown: Callable[[], None] | None = None
    #: When the presser's own redraw was first asked (``Priority.PRESSED``), if it was.
    pressed_at: float | None = None


@dataclass
class _Slot:
    """A call of the chat asked for a new message (see :meth:`EditQueue.slot`)."""

    priority: int
    asked: float
    future: asyncio.Future[None]


@dataclass
class _Chat:
    is_group: bool
    pace: ChatPace
    desired: dict[int, _Edit] = field(default_factory=dict)
    #: New messages waiting for a call of the chat, in the order asked.
    slots: list[_Slot] = field(default_factory=list)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    flusher: asyncio.Task[None] | None = None
    #: The flusher's place in the global budget while it waits there.
    waiter: Any = None
    #: Network failures in a row of the edits of each message (for the backoff).
    failures: dict[int, int] = field(default_factory=dict)
    #: Messages replaced by a new one (``/mano``): never edited again.
    dead: set[int] = field(default_factory=set)
    #: How many times the chat was dropped (the bot removed): a send that was waiting
    #: for the budget when it changed does not go out.
    drops: int = 0


class EditQueue:
    """The edits wanted in every chat and the flushers that make them (for
    :class:`bot.outbox.Outbox`, which composes it and keeps the migrated groups' ids)."""

    def __init__(
        self,
        bot: Bot,
        pacer: Pacer,
        digests: Digests,
        stats: Counter[str],
        *,
        moved: dict[int, int],
        on_migrated: Callable[[int, int], None],
        on_forbidden: Callable[[int, Forbidden], Awaitable[None]],
    ) -> None:
        self.bot = bot
        self.pacer = pacer
        self.budget = pacer.budget
        self.digests = digests
        self.stats = stats
        #: The migrated groups (old id -> new id), kept by the outbox: edits of their old
        #: messages are dropped (read-only now).
        self.moved = moved
        self.on_migrated = on_migrated
        self.on_forbidden = on_forbidden
        self._chats: dict[int, _Chat] = {}
        #: The text each message was last sent or edited with by this process.
        self.texts: dict[tuple[int, int], str] = {}
        #: Edits being sent, per chat and per message (see :meth:`busy`, :meth:`retire`).
        self._inflight: Counter[int] = Counter()
        self._inflight_messages: Counter[tuple[int, int]] = Counter()
        #: Events of :meth:`settled` calls, per chat they wait for: set when an edit of
        #: that chat finished.
        self._settle_waiters: dict[int, set[asyncio.Event]] = {}
        self._closed = False

    def chat(self, chat_id: int) -> _Chat:
        """The chat's edits and pace (made on first use)."""
        chat = self._chats.get(chat_id)
        if chat is None:
            chat = self._chats[chat_id] = _Chat(chat_id < 0, self.pacer.pace(chat_id))
        return chat

    def resolve(self, chat_id: int) -> int:
        """The id a chat has now (a migrated group's supergroup id)."""
        while chat_id in self.moved:
            chat_id = self.moved[chat_id]
        return chat_id

    def drop_edits(self, chat_id: int) -> None:
        """Forget the edits wanted in this chat (a migrated group's old id)."""
        chat = self._chats.get(chat_id)
        if chat is not None:
            chat.desired.clear()
            chat.wake.set()

    def drop_chat(self, chat_id: int) -> None:
        """See :meth:`bot.outbox.Outbox.drop_chat`."""
        chat = self._chats.get(chat_id)
        if chat is not None:
            chat.drops += 1
            chat.desired.clear()
            chat.failures.clear()
            chat.wake.set()

    def edit_markup(
        self, chat_id: int, message_id: int, kb: InlineKeyboardMarkup | None,
        fallback_text: str, priority: int,
    ) -> None:
        """See :meth:`bot.outbox.Outbox.edit_markup`."""
        chat = self._chats.get(chat_id)
        waiting = None if chat is None else chat.desired.get(message_id)
        key = (chat_id, message_id)
        sent = self.texts.get(key, fallback_text)
        text = sent if waiting is None else waiting.text
        markup_only = text == sent or self.digests.same_text(key, text)
        self.want(chat_id, message_id, text, kb, 0.0, priority, markup_only=markup_only)

    def want(
        self, chat_id: int, message_id: int, text: str, kb: InlineKeyboardMarkup | None,
        delay: float, priority: int, *, markup_only: bool,
        shown: Callable[[], None] | None = None,
    ) -> None:
        """Record the content the message should show (see :meth:`bot.outbox.Outbox.edit`)
        and wake the chat's flusher."""
        if chat_id in self.moved:
            return  # a message of a migrated group: read-only now
        chat = self.chat(chat_id)
        if message_id in chat.dead:
            return
        if self.digests.shows((chat_id, message_id), text, keyboard_key(kb)):
            chat.desired.pop(message_id, None)
            _call(shown)
            return
        now = time.monotonic()
        due = now + delay
        pressed_at = now if priority <= Priority.PRESSED else None
        old = chat.desired.get(message_id)
        if old is not None:
            due, priority = min(due, old.due), min(priority, old.priority)
            pressed_at = old.pressed_at or pressed_at
        chat.desired[message_id] = _Edit(text, kb, priority, due, markup_only, shown,
                                         pressed_at)
        if chat.waiter is not None:
            self.budget.promote(chat.waiter, priority)
        self._wake(chat_id, chat)

    def _wake(self, chat_id: int, chat: _Chat) -> None:
        chat.wake.set()
        if not self._closed and (chat.flusher is None or chat.flusher.done()):
            chat.flusher = asyncio.create_task(self._flush(chat_id))

    def _again_later(self, chat_id: int, message_id: int, edit: _Edit, delay: float) -> None:
        """Keep a failed edit wanted (unless a newer content is wanted already)."""
        chat = self.chat(chat_id)
        if message_id not in chat.desired and message_id not in chat.dead:
            edit.due = time.monotonic() + delay
            chat.desired[message_id] = edit
            self._wake(chat_id, chat)

    async def slot(self, chat_id: int, priority: int) -> None:
        """Wait for a call of the chat and of the bot's budget for a new message, in line
        with the chat's edits (by rank, then by when asked); the caller makes its call
        at once, or refunds it (``budget.refund()``). Stopped: cancelled at once, as
        the ones waiting at the stop were (no flusher would ever grant it)."""
        if self._closed:
            raise asyncio.CancelledError
        chat = self.chat(chat_id)
        slot = _Slot(priority, time.monotonic(),
                     asyncio.get_running_loop().create_future())
        chat.slots.append(slot)
        if chat.waiter is not None:  # (waiting for the budget with a less urgent edit)
            self.budget.promote(chat.waiter, priority)
        self._wake(chat_id, chat)
        try:
            await slot.future
        except asyncio.CancelledError:
            if slot.future.done() and not slot.future.cancelled():
                self.budget.refund()  # granted, but the caller went away
            with contextlib.suppress(ValueError):
                chat.slots.remove(slot)
            raise

    def promote(self, chat_id: int, priority: int) -> None:
        """The new messages waiting in this chat now carry something more urgent (a new
        hand whose player's turn came: issue 32)."""
        chat = self._chats.get(chat_id)
        if chat is None:
            return
        for slot in chat.slots:
            slot.priority = min(slot.priority, priority)
        if chat.slots and chat.waiter is not None:
            self.budget.promote(chat.waiter, priority)

    async def edit_now(
        self, chat_id: int, message_id: int, text: str, kb: InlineKeyboardMarkup | None
    ) -> None:
        """See :meth:`bot.outbox.Outbox.edit_now`."""
        chat = self.chat(chat_id)
        chat.desired.pop(message_id, None)
        await self.pacer.take(chat_id, Priority.TURN)
        await self._edit(chat_id, message_id, _Edit(text, kb, Priority.TURN, 0.0))

    def _next_call(self, chat: _Chat, now: float) -> tuple[int | _Slot | None, int, float]:
        """The chat's most urgent call due: a message to edit (its id) or a new message's
        slot, and its rank; or None and when the next edit is due."""
        best: tuple[int, float, int] | None = None
        chosen: int | _Slot | None = None
        soonest = float("inf")
        for mid, edit in chat.desired.items():
            if edit.due <= now:
                key = (edit.priority, edit.due, 0)
                if best is None or key < best:
                    best, chosen = key, mid
            else:
                soonest = min(soonest, edit.due)
        for slot in chat.slots:
            key = (slot.priority, slot.asked, 1)
            if not slot.future.done() and (best is None or key < best):
                best, chosen = key, slot
        if best is None:
            return None, Priority.IDLE, soonest
        return chosen, best[0], now

    def _ready_at(self, chat: _Chat, priority: int, now: float) -> float:
        """When a call of this rank may go in the chat (see :data:`PRESSED_KEEPS` and
        :data:`PRESSED_EXTRA`)."""
        if priority > Priority.PRESSED:
            return chat.pace.ready_at(now, keep=PRESSED_KEEPS)
        return chat.pace.ready_at(now, keep=0 if chat.is_group else -PRESSED_EXTRA)

    async def _sleep_or_wake(self, chat: _Chat, seconds: float) -> None:
        chat.wake.clear()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):  # no task per wait, unlike wait_for
                await chat.wake.wait()

    async def _flush(self, chat_id: int) -> None:
        chat = self.chat(chat_id)
        while (chat.desired or chat.slots) and not self._closed:
            if any(slot.future.done() for slot in chat.slots):  # (their senders went away)
                chat.slots = [slot for slot in chat.slots if not slot.future.done()]
                continue
            now = time.monotonic()
            call, priority, due = self._next_call(chat, now)
            if call is None:  # nothing due yet: sleep until it is, or a newer request
                await self._sleep_or_wake(chat, due - now)
                continue
            ready = self._ready_at(chat, priority, now)
            if ready > now:  # the chat's pace (evenly spaced calls), or a more urgent call
                await self._sleep_or_wake(chat, ready - now)
                continue
            chat.waiter = self.budget.waiter(priority)
            if chat.is_group:  # its redraw ages from its last call (issue 46)
                chat.waiter.overdue_at = self.pacer.overdue_at(chat_id)
            try:
                await self.budget.acquire(chat.waiter.priority, chat.waiter)
            finally:
                chat.waiter = None
            now = time.monotonic()
            call, priority, _ = self._next_call(chat, now)  # maybe a more urgent one now
            if call is None or self._ready_at(chat, priority, now) > now:
                self.budget.refund()  # dropped meanwhile, or a reply took the chat's slot
                continue
            self.pacer.reserve(chat_id, now)
            if isinstance(call, _Slot):  # a new message: its sender calls now
                chat.slots.remove(call)
                call.future.set_result(None)
                continue
            edit = chat.desired.pop(call)
            if edit.pressed_at is not None and now - edit.pressed_at > PRESSED_LATE_SECONDS:
                log.warning("the presser's own redraw of %s/%s waited %.2f s for its call",
                            chat_id, call, now - edit.pressed_at)
            try:
                await self._edit(chat_id, call, edit)
            except Exception:  # never let one failed edit stop the flusher
                log.exception("edit of %s/%s failed", chat_id, call)

    async def _edit(self, chat_id: int, message_id: int, edit: _Edit) -> None:
        key = (chat_id, message_id)
        text, kb = edit.text, edit.kb
        kb_key = keyboard_key(kb)
        if self.digests.shows(key, text, kb_key):
            _call(edit.shown)
            return
        if chat_id in self.moved:
            return
        if message_id in self.chat(chat_id).dead:
            return
        paced = PACED.set(True)
        self._inflight[chat_id] += 1
        self._inflight_messages[key] += 1
        try:
            if self.digests.same_text(key, text) or edit.markup_only:
                await self.bot.edit_message_reply_markup(chat_id, message_id, reply_markup=kb)
                count_call(self.stats, chat_id, "markup_edits")
            else:
                await self.bot.edit_message_text(text, chat_id, message_id, reply_markup=kb)
                count_call(self.stats, chat_id, "edits")
            self.texts[key] = text
            self.chat(chat_id).failures.pop(message_id, None)
            _call(edit.shown)
            await self.digests.accepted(key, text, kb_key)  # before the next call
        except BadRequest as exc:
            reason = str(exc).lower()
            if "not modified" in reason:  # (shown already: accepted)
                log.info("message %s/%s was not modified (it showed this already)",
                         chat_id, message_id)
                self.texts[key] = text
                _call(edit.shown)
                await self.digests.accepted(key, text, kb_key)
            elif "topic_closed" in reason:  # (its table ends: see Outbox.on_topic_closed)
                log.warning("message %s/%s is in a closed topic: not edited", chat_id,
                            message_id)
                self.digests.note(key, text, kb_key)  # (never tried again)
            elif "not found" in reason or "can't be edited" in reason:
                log.warning("message %s/%s is gone: %s", chat_id, message_id, exc)
                self.digests.note(key, text, kb_key)  # (never tried again)
            else:
                raise
        except ChatMigrated as exc:
            self.on_migrated(chat_id, exc.new_chat_id)
        except Forbidden as exc:
            await self.on_forbidden(chat_id, exc)
        except RetryAfter as exc:
            wait = _seconds(exc.retry_after)
            log.warning("flood control on %s: retry after %.0f s", chat_id, wait)
            self._again_later(chat_id, message_id, edit, wait)
        except Fenced:  # standing by: not tried again, the next active instance redraws
            pass
        except NetworkError as exc:  # 5xx, timeout, reset: still wanted, try again later
            chat = self.chat(chat_id)
            failures = chat.failures[message_id] = chat.failures.get(message_id, 0) + 1
            delay = backoff(failures)
            log.warning("edit of %s/%s failed (%s): retry in %.2fs",
                        chat_id, message_id, exc, delay)
            self._again_later(chat_id, message_id, edit, delay)
        except TelegramError:
            log.exception("edit of %s/%s failed", chat_id, message_id)
        finally:
            self._inflight[chat_id] -= 1
            if not self._inflight[chat_id]:
                del self._inflight[chat_id]
            self._inflight_messages[key] -= 1
            if not self._inflight_messages[key]:
                del self._inflight_messages[key]
            PACED.reset(paced)
            for event in self._settle_waiters.get(chat_id, ()):
                event.set()

    def forget(self, chat_id: int, message_id: int) -> None:
        """See :meth:`bot.outbox.Outbox.forget`."""
        self.texts.pop((chat_id, message_id), None)
        self.digests.forget((chat_id, message_id))
        chat = self.chat(chat_id)
        chat.desired.pop(message_id, None)
        chat.failures.pop(message_id, None)

    def withdraw(self, chat_id: int, message_id: int) -> None:
        """See :meth:`bot.outbox.Outbox.withdraw`."""
        chat = self._chats.get(chat_id)
        if chat is not None:
            chat.desired.pop(message_id, None)

    def retire(self, chat_id: int, message_id: int) -> None:
        """The message is being replaced (``/mano``): drop what was queued for it and never
        edit it again (the new message is drawn with the latest content)."""
        self.forget(chat_id, message_id)
        self.chat(chat_id).dead.add(message_id)

    async def released(self, chat_id: int, message_id: int, timeout: float = 10.0) -> None:
        """Wait until no edit of this message is being sent (before deleting it)."""
        deadline = time.monotonic() + timeout
        while (chat_id, message_id) in self._inflight_messages and time.monotonic() < deadline:
            await self.settled({chat_id}, poll=0.2)
            await asyncio.sleep(0)

    def busy(self, chat_id: int) -> bool:
        """Whether an edit of this chat is wanted or being sent."""
        chat = self._chats.get(self.resolve(chat_id))
        return bool(chat is not None and chat.desired) or chat_id in self._inflight

    async def settled(self, chat_ids: set[int], poll: float = 1.0) -> None:
        """Wait until every edit wanted in these chats has been sent (or given up).

        Woken when an edit of one of these chats finishes (not by polling, nor by the
        edits of other chats: with many tables waiting for Telegram's global budget,
        either kept the event loop busy); ``poll`` is only the fallback for edits
        dropped without being sent."""
        event = asyncio.Event()
        for chat_id in chat_ids:
            self._settle_waiters.setdefault(chat_id, set()).add(event)
        try:
            while any(self.busy(c) for c in chat_ids):
                event.clear()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(poll):
                        await event.wait()
        finally:
            for chat_id in chat_ids:
                waiters = self._settle_waiters[chat_id]
                waiters.discard(event)
                if not waiters:
                    del self._settle_waiters[chat_id]

    def pending(self) -> int:
        """Edits waiting to be sent (all chats)."""
        return sum(len(c.desired) for c in self._chats.values())

    def flushers(self) -> list[asyncio.Task[None]]:
        """The flusher tasks still running (for draining or closing)."""
        return [c.flusher for c in self._chats.values() if c.flusher and not c.flusher.done()]

    def stop(self) -> None:
        """No more flushing: wake every flusher so that it ends (see :meth:`flushers`);
        the new messages still waiting for a call are not sent (their senders are
        cancelled)."""
        self._closed = True
        for chat in self._chats.values():
            chat.wake.set()
            for slot in chat.slots:
                slot.future.cancel()


def _call(shown: Callable[[], None] | None) -> None:
    if shown is not None:
        shown()


def _seconds(value: float | timedelta) -> float:
    """``RetryAfter.retry_after`` is an int or a timedelta depending on PTB settings."""
    return value.total_seconds() if isinstance(value, timedelta) else float(value)
