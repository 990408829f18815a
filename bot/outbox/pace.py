"""The outbox's budgets: each chat's pace and the bot's overall rate (:mod:`bot.budget`),
kept across restarts (:meth:`Pacer.restore_pacing`, :meth:`Pacer.pace_changes`), and
:class:`PacedRateLimiter`, which charges the calls made outside the outbox to the same
account per chat.

* **Even pacing**: each chat at most one call per interval (a group one per
  ``60 s / group_per_minute``, ~3.3 s at 18: never burst-then-wait), and the whole bot
  ``messages_per_second``, granted by priority (see :mod:`bot.budget`).
* **Restarts**: the pacing of every chat is kept across restarts
  (:mod:`bot.tables.pacing` saves :meth:`Pacer.pace_changes` every half second and gives
  them back with :meth:`Pacer.restore_pacing`): a chat's first call after a restart goes
  as soon as the limits allow, as if the process had not stopped. Only if they cannot be
  read is a chat first used in the first window after start paced as if the process
  before had just used its budget (:meth:`~bot.budget.ChatPace.assume_used`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from contextvars import ContextVar
from typing import Any, Protocol

from telegram.ext import AIORateLimiter

from bot.budget import ChatPace, GlobalBudget, Priority

#: Set while the outbox itself calls the Bot API (it has taken the chat's budget already).
PACED: ContextVar[bool] = ContextVar("outbox_paced", default=False)
#: The methods Telegram counts against a chat's limits.
COUNTED = frozenset({"sendMessage", "editMessageText", "editMessageReplyMarkup",
                     "editMessageCaption", "sendPhoto", "sendDocument"})
#: A group table call that waited this many group pacing intervals in the global budget
#: takes one grant in :data:`TABLE_SHARE` ahead of the turns (see :mod:`bot.budget`).
#: Without it the turns alone filled the budget at 50 busy tables and the groups froze
#: (staleness p95 28 s).
TABLE_WAIT_INTERVALS = 1.0
#: Under saturation the group tables get one grant in this many (a tenth of the budget)
#: and the seats in turn (their own press shown, the next player's buttons) the rest. One
#: in three (a third) left the turns 18 calls/s: at 200 busy tables a move then waited
#: ~10-11 s for its buttons. One in five gave the groups 0.49 calls a move at 50 tables
#: of fast players (2.48 calls a move: issue 32 wants at most 2.3, the two private calls
#: of a move being 1.98): a tenth gives them ~0.22, each group edit showing the moves of
#: ~18 s at 50 busy tables (the players see each trick in their own hands).
TABLE_SHARE = 10
#: A group's redraw waiting for the bot's budget comes due this long after the group's
#: last call (:meth:`Pacer.overdue_at`), whatever its rank: then it goes before every
#: other rank but the presser's own message, one grant in :data:`TABLE_SHARE` while
#: turns wait (issue 46: while its table moves, a group is redrawn at least every 6 s;
#: its own pace allows a call every 3.3 s, the rest is the wait for a share).
GROUP_OVERDUE_SECONDS = 4.0


class Pacer:
    """The pace of every chat and the bot's global budget."""

    def __init__(
        self,
        *,
        group_per_minute: float,
        chat_rate: float,
        chat_burst: float,
        private_burst: float,
        window_seconds: float,
        messages_per_second: float,
    ) -> None:
        self.group_per_minute = group_per_minute
        self.chat_rate = chat_rate
        #: Calls a group / a private chat may send at once after being idle (see ChatPace):
        #: a private chat two (Telegram tolerates short bursts, ~1 a second on average;
        #: the fake server 3 at once, then 1/s: one is kept as a margin, three gave 429s
        #: on a loaded machine), so that the presser's own message shows the press at
        #: once even right after their turn's edit.
        self.chat_burst = chat_burst
        self.private_burst = private_burst
        self.window_seconds = window_seconds
        self.budget = GlobalBudget(messages_per_second, burst=max(1.0, messages_per_second / 5),
                                   table_wait=TABLE_WAIT_INTERVALS * self.interval(-1),
                                   table_share=TABLE_SHARE)
        self._started = time.monotonic()
        #: Pacing kept across a restart (see :meth:`restore_pacing`); None: not known.
        self._restored: dict[int, tuple[float, list[float]]] | None = None
        self._unrecorded: tuple[float, float] | None = None
        #: Chats whose pacing changed since :meth:`pace_changes` was last asked.
        self._dirty: set[int] = set()
        self._paces: dict[int, ChatPace] = {}

    def interval(self, chat_id: int) -> float:
        """Seconds between two calls of this chat (the pacing interval)."""
        private = self.private_interval()
        if chat_id >= 0:
            return private
        return max(private, self.window_seconds / max(1.0, self.group_per_minute))

    def private_interval(self) -> float:
        """Seconds between two calls of a private chat (1.25 s by default)."""
        return 1.0 / self.chat_rate if self.chat_rate > 0 else 0.0

    def known(self, chat_id: int) -> ChatPace | None:
        return self._paces.get(chat_id)

    def pace(self, chat_id: int) -> ChatPace:
        """The chat's pace (made at its first use)."""
        pace = self._paces.get(chat_id)
        if pace is None:
            is_group = chat_id < 0
            per_window = int(self.group_per_minute) if is_group else 0
            burst = self.chat_burst if is_group else self.private_burst
            pace = ChatPace(self.interval(chat_id), per_window, self.window_seconds,
                            max(1, int(burst)))
            self._paces[chat_id] = pace
            self._resume_pace(chat_id, pace)
        return pace

    def wait_for(self, chat_id: int) -> float:
        """Seconds until a new call of this chat could go (its pace, with the calls it
        has reserved already)."""
        pace = self._paces.get(chat_id)
        if pace is None:
            return 0.0
        now = time.monotonic()
        return max(0.0, pace.ready_at(now) - now)

    def _resume_pace(self, chat_id: int, pace: ChatPace) -> None:
        """A chat's pacing at its first use in this process: as the process before left
        it (kept across restarts), or if that is not known, as if it had just used it."""
        if self._restored is None:
            now = time.monotonic()
            if now - self._started < self.window_seconds:
                pace.assume_used(now)  # maybe a restart: the last budget may be in use
            return
        state = self._restored.pop(chat_id, None)
        if state is not None:
            pace.restore(*state)
        if self._unrecorded is not None:
            pace.assume_calls_between(*self._unrecorded)

    def restore_pacing(self, states: dict[int, tuple[float, list[float]]],
                       unrecorded: tuple[float, float] | None) -> None:
        """The pacing the process before left: per chat (next slot, calls of the rolling
        window), monotonic times of this process; ``unrecorded``: the span after its
        last save in which it may have made calls not saved (each chat takes them at the
        earliest slots its pace allowed)."""
        self._restored = dict(states)
        self._unrecorded = unrecorded
        for chat_id, pace in self._paces.items():  # (used before this: merge)
            self._resume_pace(chat_id, pace)

    def pace_changes(self) -> dict[int, tuple[float, list[float]]]:
        """The pacing of the chats that made calls since the last time this was asked:
        (next slot, calls of the rolling window), monotonic times."""
        changed = {}
        for chat_id in self._dirty:
            pace = self._paces.get(chat_id)
            if pace is not None:
                changed[chat_id] = (pace.next_at, list(pace.sent))
        self._dirty.clear()
        return changed

    def reserve(self, chat_id: int, now: float) -> float:
        """Take the chat's next slot; when it is."""
        self._dirty.add(chat_id)
        return self.pace(chat_id).reserve(now)

    async def take(self, chat_id: int, priority: int) -> None:
        """Wait for and spend one call of the chat's and the bot's budget, ahead of the
        chat's queued edits and new messages (a reply to a person's command)."""
        wait = self.reserve(chat_id, time.monotonic()) - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
        await self.budget.acquire(priority)

    def overdue_at(self, chat_id: int) -> float:
        """When a group's redraw waiting for the bot's budget comes due (see
        :mod:`bot.budget`): :data:`GROUP_OVERDUE_SECONDS` after the group's last call
        (kept across restarts), at once if it has none in the window."""
        sent = self.pace(chat_id).sent
        return (sent[-1] if sent else float("-inf")) + GROUP_OVERDUE_SECONDS


class _Taker(Protocol):
    async def take(self, chat_id: int, priority: int = Priority.TURN) -> None: ...


class PacedRateLimiter(AIORateLimiter):
    """PTB's limiter (overall and per-group rates, retries on 429) that also charges the
    calls made outside the outbox (command replies, callback edits) to the outbox's budget
    of their chat, so that both share one account per chat."""

    outbox: _Taker | None = None

    async def process_request(
        self,
        callback: Callable[..., Coroutine[Any, Any, Any]],
        args: Any,
        kwargs: dict[str, Any],
        endpoint: str,
        data: dict[str, Any],
        rate_limit_args: int | None,
    ) -> Any:
        chat_id = data.get("chat_id")
        if endpoint not in COUNTED:
            # Chat actions, deletes, reads: not messages, so not in Telegram's message
            # budget; PTB's limiter would queue them (e.g. the private probe of a player
            # joining a lobby) behind every pending edit. It still retries them on 429.
            data = {key: value for key, value in data.items() if key != "chat_id"}
        elif self.outbox is not None and not PACED.get() and isinstance(chat_id, int):
            await self.outbox.take(chat_id)
        return await super().process_request(
            callback, args, kwargs, endpoint, data, rate_limit_args
        )
