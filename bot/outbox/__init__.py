"""All sends and edits of game messages go through here.

The package: this module is the edit queue and the calls; :mod:`bot.outbox.pace` the
budgets (each chat's pace, the bot's rate, kept across restarts; the rate limiter of the
calls made elsewhere); :mod:`bot.outbox.digests` the record of what each message shows.

* **Skip identical edits**: what each message shows, as Telegram last accepted it, is
  recorded right after each call, in memory and in the database
  (:mod:`bot.outbox.digests`): an edit that would show the same is never made, also after
  a restart or a takeover. "Message is not modified" can only come once after a SIGKILL
  (the call answered, its record not yet written), and counts as accepted.
* **Coalescing**: an edit only records the *desired* content of a message (with a
  :class:`~bot.budget.Priority` and by when it is due: at once, or after a ``delay`` for
  content nobody needs right now); one flusher task per chat sends the latest desired
  content when it is due and the budgets allow. A burst of moves becomes one edit.
* **Even pacing** (:mod:`bot.outbox.pace`, :mod:`bot.budget`): each chat at most one
  call per interval, and the whole bot ``messages_per_second``, granted by priority: the
  message a person just pressed first (showing their own move is part of answering the
  press), then the buttons of the seat in turn and replies to a person, then group
  tables, then hands nobody can press.
* **Nobody waits on it**: :meth:`edit` and :meth:`edit_markup` return at once; only
  :meth:`send` (a new message, whose id the caller needs) waits, and never in a handler.
* **Re-sent messages** (:meth:`retarget`): edits queued for a message that was replaced
  (``/mano``) are dropped, and its deletion waits for the edit in flight, if any.
* **Restarts**: the pacing of every chat is kept across restarts (:mod:`bot.outbox.pace`).
* **Migrated groups**: a group that became a supergroup is remembered: sends to the old
  id go to the new one, edits of its old messages are dropped (they are read-only now),
  and ``on_migrated`` is told (in the background) so that the database follows.

Counters of every call (for the closing report) are kept in :attr:`Outbox.stats`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from telegram import Bot, InlineKeyboardMarkup, Message
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
from bot.outbox.pace import COUNTED, PACED, PacedRateLimiter, Pacer

__all__ = ["COUNTED", "Outbox", "PacedRateLimiter", "Priority", "backoff"]

log = logging.getLogger(__name__)

Content = tuple[str, str]  # (text, keyboard json)
#: Attempts of a send that fails with a network error (5xx, timeout, reset).
SEND_ATTEMPTS = 3


def backoff(failures: int, *, first: float = 0.25, cap: float = 8.0) -> float:
    """Seconds to wait before the next attempt after ``failures`` failures in a row."""
    return float(min(cap, first * 2 ** max(0, failures - 1)))


def _kb_key(kb: InlineKeyboardMarkup | None) -> str:
    return "" if kb is None else str(kb.to_dict())


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


@dataclass
class _Chat:
    is_group: bool
    pace: ChatPace
    desired: dict[int, _Edit] = field(default_factory=dict)
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


class Outbox:
    def __init__(
        self,
        bot: Bot,
        *,
        group_per_minute: float = 18,
        chat_rate: float = 0.8,
        chat_burst: float = 1.0,
        private_burst: float = 2.0,
        window_seconds: float = 60.0,
        messages_per_second: float = 27.0,
        on_forbidden: Callable[[int, str], Awaitable[None]] | None = None,
        on_migrated: Callable[[int, int], Coroutine[Any, Any, None]] | None = None,
    ) -> None:
        self.bot = bot
        self.on_forbidden = on_forbidden
        self.on_migrated = on_migrated
        self.pacer = Pacer(
            group_per_minute=group_per_minute, chat_rate=chat_rate, chat_burst=chat_burst,
            private_burst=private_burst, window_seconds=window_seconds,
            messages_per_second=messages_per_second,
        )
        self.budget = self.pacer.budget
        self.window_seconds = window_seconds
        #: What each message shows (see :mod:`bot.outbox.digests`).
        self.digests = Digests()
        self._chats: dict[int, _Chat] = {}
        #: The text each message was last sent or edited with by this process.
        self._texts: dict[tuple[int, int], str] = {}
        self._moved: dict[int, int] = {}
        self._background: set[asyncio.Task[None]] = set()
        #: Edits being sent, per chat and per message (see :meth:`busy`, :meth:`retarget`).
        self._inflight: Counter[int] = Counter()
        self._inflight_messages: Counter[tuple[int, int]] = Counter()
        #: Events of :meth:`settled` calls, per chat they wait for: set when an edit of
        #: that chat finished.
        self._settle_waiters: dict[int, set[asyncio.Event]] = {}
        self.stats: Counter[str] = Counter()
        self._closed = False

    # ------------------------------------------------------------------ budget

    def interval(self, chat_id: int) -> float:
        """Seconds between two calls of this chat (the pacing interval)."""
        return self.pacer.interval(chat_id)

    def private_interval(self) -> float:
        """Seconds between two calls of a private chat (1.25 s by default)."""
        return self.pacer.private_interval()

    def wait_for(self, chat_id: int) -> float:
        """Seconds until a new call of this chat could go."""
        return self.pacer.wait_for(self.resolve(chat_id))

    def restore_pacing(self, states: dict[int, tuple[float, list[float]]],
                       unrecorded: tuple[float, float] | None) -> None:
        """See :meth:`bot.outbox.pace.Pacer.restore_pacing`."""
        self.pacer.restore_pacing(states, unrecorded)

    def pace_changes(self) -> dict[int, tuple[float, list[float]]]:
        """See :meth:`bot.outbox.pace.Pacer.pace_changes`."""
        return self.pacer.pace_changes()

    def _chat(self, chat_id: int) -> _Chat:
        chat = self._chats.get(chat_id)
        if chat is None:
            chat = self._chats[chat_id] = _Chat(chat_id < 0, self.pacer.pace(chat_id))
        return chat

    async def take(self, chat_id: int, priority: int = Priority.TURN) -> None:
        """Wait for and spend one call of the chat's and the bot's budget (for calls made
        elsewhere: a reply to a command goes before the queued edits)."""
        await self._take(self.resolve(chat_id), priority)

    async def _take(self, chat_id: int, priority: int, *, promotable: bool = False) -> None:
        self._chat(chat_id)
        await self.pacer.take(chat_id, priority, promotable=promotable)

    def _count(self, chat_id: int, kind: str) -> None:
        self.stats[("group_" if chat_id < 0 else "private_") + kind] += 1

    # ------------------------------------------------------------------ migrated groups

    def resolve(self, chat_id: int) -> int:
        """The id a chat has now (a migrated group's supergroup id)."""
        while chat_id in self._moved:
            chat_id = self._moved[chat_id]
        return chat_id

    def note_migration(self, old: int, new: int) -> bool:
        """Remember that ``old`` is now ``new``; drop edits of old messages. True if new."""
        if self._moved.get(old) == new or old == new:
            return False
        self._moved[old] = new
        chat = self._chats.get(old)
        if chat is not None:
            chat.desired.clear()
            chat.wake.set()
        return True

    def _migrated(self, old: int, new: int) -> None:
        log.warning("chat %s migrated to %s", old, new)
        if self.note_migration(old, new) and self.on_migrated is not None:
            task = asyncio.get_running_loop().create_task(self.on_migrated(old, new))
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    # ------------------------------------------------------------------ sending

    async def send(
        self,
        chat_id: int,
        text: str,
        kb: InlineKeyboardMarkup | None = None,
        *,
        thread_id: int | None = None,
        priority: int = Priority.TABLE,
        wanted: Callable[[], bool] | None = None,
    ) -> Message | None:
        """Send a new message (waiting for the budgets); None if the chat refused, or if
        ``wanted()`` says no once the budgets granted it (nobody needs it any more: its
        call goes to the next one waiting).

        A network error (5xx, timeout, reset) is retried a few times with a backoff, then
        raised (the caller schedules a redraw)."""
        chat_id = self.resolve(chat_id)
        drops = self._chat(chat_id).drops
        for attempt in range(1, SEND_ATTEMPTS + 1):
            await self._take(chat_id, priority, promotable=True)
            if self._chat(chat_id).drops != drops:
                self.budget.refund()
                log.info("send to %s dropped: the bot was removed from the chat", chat_id)
                return None
            if wanted is not None and not wanted():
                self.budget.refund()
                self.stats["sends_not_wanted"] += 1
                return None
            paced = PACED.set(True)
            try:
                msg = await self.bot.send_message(
                    chat_id, text, reply_markup=kb, message_thread_id=thread_id or None
                )
            except ChatMigrated as exc:
                self._migrated(chat_id, exc.new_chat_id)
                return await self.send(exc.new_chat_id, text, kb, thread_id=thread_id,
                                       priority=priority)
            except Forbidden as exc:
                log.info("chat %s refused a message (403): %s", chat_id, exc)
                await self._forbidden(chat_id, exc)
                return None
            except Fenced:  # standing by: the next active instance redraws (no log)
                self.budget.refund()
                return None
            except NetworkError as exc:
                if attempt == SEND_ATTEMPTS or self._closed:
                    raise
                log.warning("send to %s failed (%s): retrying", chat_id, exc)
                await asyncio.sleep(backoff(attempt, first=0.5))
                continue
            finally:
                PACED.reset(paced)
            self._count(chat_id, "sends")
            key = (chat_id, msg.message_id)
            self._texts[key] = text
            await self.digests.accepted(key, text, _kb_key(kb))
            return msg
        raise AssertionError("unreachable")

    async def _forbidden(self, chat_id: int, exc: Forbidden) -> None:
        if self.on_forbidden is not None:
            await self.on_forbidden(chat_id, str(exc))

    def promote(self, chat_id: int, priority: int) -> None:
        """See :meth:`bot.outbox.pace.Pacer.promote` (a new hand, a turn's now)."""
        self.pacer.promote(self.resolve(chat_id), priority)

    def drop_chat(self, chat_id: int) -> None:
        """The chat is gone (the bot was removed): forget its pending edits, and the
        sends waiting for its budget do not go out (later sends do: it may add the bot
        again)."""
        chat = self._chats.get(chat_id)
        if chat is not None:
            chat.drops += 1
            chat.desired.clear()
            chat.failures.clear()
            chat.wake.set()

    def edit(
        self, chat_id: int, message_id: int, text: str, kb: InlineKeyboardMarkup | None = None,
        *, delay: float = 0.0, priority: int = Priority.TABLE,
        shown: Callable[[], None] | None = None,
    ) -> None:
        """Ask for a message to show this content, at the latest ``delay`` seconds from now;
        sent later, coalesced with later requests for the same message, never twice. The
        most urgent priority and the earliest due time of the coalesced requests count.
        ``shown``: called once the message shows this content (not if a later request
        replaced it first)."""
        self._want(chat_id, message_id, text, kb, delay, priority, markup_only=False,
                   shown=shown)

    def edit_markup(
        self, chat_id: int, message_id: int, kb: InlineKeyboardMarkup | None,
        fallback_text: str, *, priority: int = Priority.PRESSED,
    ) -> None:
        """Redraw the keyboard of a message (picker / confirmation steps), queued like any
        edit; ``fallback_text``: the message's text if never sent by us (e.g. before a
        restart). A newer text still waiting for that message (a held hand) goes with it,
        in the same call, rather than being replaced by the old one."""
        chat = self._chats.get(chat_id)
        waiting = None if chat is None else chat.desired.get(message_id)
        key = (chat_id, message_id)
        sent = self._texts.get(key, fallback_text)
        text = sent if waiting is None else waiting.text
        markup_only = text == sent or self.digests.same_text(key, text)
        self._want(chat_id, message_id, text, kb, 0.0, priority, markup_only=markup_only)

    def _want(
        self, chat_id: int, message_id: int, text: str, kb: InlineKeyboardMarkup | None,
        delay: float, priority: int, *, markup_only: bool,
        shown: Callable[[], None] | None = None,
    ) -> None:
        if chat_id in self._moved:
            return  # a message of a migrated group: read-only now
        chat = self._chat(chat_id)
        if message_id in chat.dead:
            return
        if self.digests.shows((chat_id, message_id), text, _kb_key(kb)):
            chat.desired.pop(message_id, None)
            _call(shown)
            return
        due = time.monotonic() + delay
        old = chat.desired.get(message_id)
        if old is not None:
            due, priority = min(due, old.due), min(priority, old.priority)
        chat.desired[message_id] = _Edit(text, kb, priority, due, markup_only, shown)
        if chat.waiter is not None:
            self.budget.promote(chat.waiter, priority)
        self._wake(chat_id, chat)

    def _wake(self, chat_id: int, chat: _Chat) -> None:
        chat.wake.set()
        if not self._closed and (chat.flusher is None or chat.flusher.done()):
            chat.flusher = asyncio.create_task(self._flush(chat_id))

    def _again_later(self, chat_id: int, message_id: int, edit: _Edit, delay: float) -> None:
        """Keep a failed edit wanted (unless a newer content is wanted already)."""
        chat = self._chat(chat_id)
        if message_id not in chat.desired and message_id not in chat.dead:
            edit.due = time.monotonic() + delay
            chat.desired[message_id] = edit
            self._wake(chat_id, chat)

    async def edit_now(
        self, chat_id: int, message_id: int, text: str, kb: InlineKeyboardMarkup | None = None
    ) -> None:
        """Edit at once, waiting for the budgets (not for handlers: use :meth:`edit`)."""
        chat = self._chat(chat_id)
        chat.desired.pop(message_id, None)
        await self._take(chat_id, Priority.TURN)
        await self._edit(chat_id, message_id, _Edit(text, kb, Priority.TURN, 0.0))

    def _next_edit(self, chat: _Chat, now: float) -> tuple[int | None, float]:
        """The most urgent due message of the chat, or when the next one is due."""
        best: tuple[int, float, int] | None = None
        soonest = float("inf")
        for mid, edit in chat.desired.items():
            if edit.due <= now:
                key = (edit.priority, edit.due, mid)
                if best is None or key < best:
                    best = key
            else:
                soonest = min(soonest, edit.due)
        return (best[2], now) if best is not None else (None, soonest)

    async def _sleep_or_wake(self, chat: _Chat, seconds: float) -> None:
        chat.wake.clear()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):  # no task per wait, unlike wait_for
                await chat.wake.wait()

    async def _flush(self, chat_id: int) -> None:
        chat = self._chat(chat_id)
        while chat.desired and not self._closed:
            now = time.monotonic()
            message_id, due = self._next_edit(chat, now)
            if message_id is None:  # nothing due yet: sleep until it is, or a newer request
                await self._sleep_or_wake(chat, due - now)
                continue
            ready = chat.pace.ready_at(now)
            if ready > now:  # the chat's pace (evenly spaced calls)
                await asyncio.sleep(ready - now)
                continue
            chat.waiter = self.budget.waiter(chat.desired[message_id].priority)
            try:
                await self.budget.acquire(chat.waiter.priority, chat.waiter)
            finally:
                chat.waiter = None
            now = time.monotonic()
            message_id, _ = self._next_edit(chat, now)  # maybe a more urgent one meanwhile
            if message_id is None or chat.pace.ready_at(now) > now:
                self.budget.refund()  # dropped meanwhile, or a reply took the chat's slot
                continue
            self.pacer.reserve(chat_id, now)
            edit = chat.desired.pop(message_id)
            try:
                await self._edit(chat_id, message_id, edit)
            except Exception:  # never let one failed edit stop the flusher
                log.exception("edit of %s/%s failed", chat_id, message_id)

    async def _edit(self, chat_id: int, message_id: int, edit: _Edit) -> None:
        key = (chat_id, message_id)
        text, kb = edit.text, edit.kb
        kb_key = _kb_key(kb)
        if self.digests.shows(key, text, kb_key):
            _call(edit.shown)
            return
        if chat_id in self._moved:
            return
        if message_id in self._chat(chat_id).dead:
            return
        paced = PACED.set(True)
        self._inflight[chat_id] += 1
        self._inflight_messages[key] += 1
        try:
            if self.digests.same_text(key, text) or edit.markup_only:
                await self.bot.edit_message_reply_markup(chat_id, message_id, reply_markup=kb)
                self._count(chat_id, "markup_edits")
            else:
                await self.bot.edit_message_text(text, chat_id, message_id, reply_markup=kb)
                self._count(chat_id, "edits")
            self._texts[key] = text
            self._chat(chat_id).failures.pop(message_id, None)
            _call(edit.shown)
            await self.digests.accepted(key, text, kb_key)  # before the next call
        except BadRequest as exc:
            reason = str(exc).lower()
            if "not modified" in reason:  # (shown already: accepted)
                log.info("message %s/%s was not modified (it showed this already)",
                         chat_id, message_id)
                self._texts[key] = text
                _call(edit.shown)
                await self.digests.accepted(key, text, kb_key)
            elif "not found" in reason or "can't be edited" in reason:
                log.warning("message %s/%s is gone: %s", chat_id, message_id, exc)
                self.digests.note(key, text, kb_key)  # (never tried again)
            else:
                raise
        except ChatMigrated as exc:
            self._migrated(chat_id, exc.new_chat_id)
        except Forbidden as exc:
            await self._forbidden(chat_id, exc)
        except RetryAfter as exc:
            wait = _seconds(exc.retry_after)
            log.warning("flood control on %s: retry after %.0f s", chat_id, wait)
            self._again_later(chat_id, message_id, edit, wait)
        except Fenced:  # standing by: not tried again, the next active instance redraws
            pass
        except NetworkError as exc:  # 5xx, timeout, reset: still wanted, try again later
            chat = self._chat(chat_id)
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
        self._texts.pop((chat_id, message_id), None)
        self.digests.forget((chat_id, message_id))
        chat = self._chat(chat_id)
        chat.desired.pop(message_id, None)
        chat.failures.pop(message_id, None)

    def retire(self, chat_id: int, message_id: int) -> None:
        """The message is being replaced (``/mano``): drop what was queued for it and never
        edit it again (the new message is drawn with the latest content)."""
        self.forget(chat_id, message_id)
        self._chat(chat_id).dead.add(message_id)

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

    async def drain(self, timeout: float = 10.0) -> None:
        """Wait until every pending edit is sent (shutdown, tests)."""
        tasks = [c.flusher for c in self._chats.values() if c.flusher and not c.flusher.done()]
        tasks += list(self._background)
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)

    async def close(self) -> None:
        self._closed = True
        for chat in self._chats.values():
            chat.wake.set()
        tasks = [c.flusher for c in self._chats.values() if c.flusher and not c.flusher.done()]
        tasks += list(self._background)
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        await self.budget.close()


def _call(shown: Callable[[], None] | None) -> None:
    if shown is not None:
        shown()


def _seconds(value: float | timedelta) -> float:
    """``RetryAfter.retry_after`` is an int or a timedelta depending on PTB settings."""
    return value.total_seconds() if isinstance(value, timedelta) else float(value)
