"""Telegram's message budgets, paced evenly: per chat, and one for the whole bot.

* :class:`ChatPace`: the calls of one chat go out at most one per ``interval`` (a group:
  ``60 s / GROUP_MESSAGES_PER_MINUTE``, ~3.3 s at 18; a private chat ``1 / chat_rate``),
  evenly, never burst-then-wait: a chat idle for a while may send ``burst`` calls at once
  (the slots it did not use; a group's `chat_burst`, 1 by default: strictly even; a
  private chat's `private_burst`, 2: the presser's own message shows the press at once
  even right after their turn's edit; and a second press of theirs, one call beyond the
  burst: ``bot.outbox.edits.PRESSED_EXTRA``, :data:`ARRIVAL_JITTER` after its slot),
  then one per interval again. A rolling
  window of ``per_window`` calls guards groups on top (it delays a call by at most an
  interval).
  Callers *reserve* the next slot, so nobody overtakes a call already waiting.
* :class:`GlobalBudget`: the bot's overall rate (``TELEGRAM_MESSAGES_PER_SECOND``),
  granted by :class:`Priority` first, then in order of request: the message a person
  just pressed (their own move shown) goes first, then what unblocks play, then the
  group tables, then the hands of players who cannot act.

**Saturation** (many busy tables: the turns alone would fill the budget). The group tables
get what the turns leave, but never less than a bounded share: a table call that waited
``table_wait`` (one group pacing interval, see ``bot.outbox``), or a group's redraw
past its ``overdue_at`` (4 s after the group's last call, whatever its rank: issue 46,
a group is redrawn at least every 6 s while its table moves), is *due*, and takes one
grant in ``table_share`` ahead of the turns, the one due first first (the stalest
group); with no turn waiting it goes before the other tables and the idle hands.
With the outbox's share (one in ten, ``bot.outbox.pace.TABLE_SHARE``) the turns keep
nine tenths of the budget whatever the number of tables: in play a table's next move can
come at best every ``tables × 2 / (0.9 × rate)`` seconds (two private calls a move: the
presser's own message, the next player's buttons), the player's own thinking included,
and the groups share the last tenth (~2.7 edits a second at 27/s): a busy group is
redrawn every ``tables / 2.7`` seconds (50 tables: ~18 s), each edit showing every move
since the last one (the outbox merges them; the players see each trick in their own
hands meanwhile). A group never freezes, but when Telegram's ~30 calls a second cannot
give every group an edit per pacing interval *and* every player their buttons, the
buttons win. The hands of players who cannot act get nothing then (they are brought up
to date when their turn comes).

*The presser's own message* goes before the turns (:attr:`Priority.PRESSED`): a person
sees their press at once however busy the bot is. In play a move then costs two private
calls (the presser's hand, the next player's buttons) plus the group's share, so that at
saturation the next button waits for the others' presses to be shown: with ``c`` calls a
move, ``tables`` tables and the player's own thinking ``think``, a table's next button
comes after about ``tables × c / rate − think`` seconds (50 tables, c ≈ 2.3, 27/s, 1 s of
thinking: ~3.3 s; measured by ``python -m bench.load --tables 50``). Holding the
presser's message instead (merged into their next turn's edit: c ≈ 1.35) made the next
button ~1.5 s and the own redraw 8–17 s: a press not shown is what a player notices.

In a group's auction the bidder in turn bids from their private hand (issue 32; it was
the group's keyboard, paced at ~20 calls a minute): a bid costs the presser's own edit and
the next bidder's hand, both private, and the group table is an edit at the table's
rank. A player live in the Mini App (:mod:`bot.presence`) gets nothing in their chat per
move, and the group of a table with a live player takes the lowest rank
(:attr:`Priority.IDLE`), its edits held until a milestone (:mod:`bot.tables.render`).

Only message-producing calls (sends and edits) are counted, as Telegram does: callback
answers never wait here.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import time
from collections import deque
from dataclasses import dataclass, field
from enum import IntEnum

log = logging.getLogger(__name__)


class Priority(IntEnum):
    #: The message whose button a person just pressed, redrawn to show their own move:
    #: part of answering the press (it goes before everything else).
    PRESSED = 0
    #: The buttons of the seat in turn (their private hand: bids and cards), the answer
    #: to a person's command.
    TURN = 1
    #: The group table, results, announcements.
    TABLE = 2
    #: Hands of players who cannot act now (held and merged; brought up to date at the
    #: end of each trick and at the player's turn); the group of a table with players in
    #: the Mini App (spectators look at it: the players see their page or their hand).
    IDLE = 3


#: Names of the priorities, in order (the budget's log line).
PRIORITY_NAMES = tuple(p.name.lower() for p in Priority)


#: How much later than reserved a chat's calls may reach Telegram (the event loop's lag,
#: the network). A call beyond the burst (a negative ``keep``) goes this much after its
#: slot: the chat's bucket then keeps this much of its refill besides, so calls that
#: reach Telegram up to this late still find a whole call's room there (a burst of three
#: at once right after a steady run drew a 429 in a fresh-clone run of the suite, where
#: the pace is twenty times Telegram's and its own margin is 12.5 ms). Not scaled with
#: the pace: the lag is the machine's (in the suite the steady pace's slot comes sooner).
#: The other calls leave a whole call of Telegram's bucket of three unused: they may
#: reach it an interval late. A bucket replayed from the chat's recent calls did this
#: before: after a steady run it held the call for the pace, and in a fresh-clone run
#: of the suite the last card of the every-press browser test waited a second.
ARRIVAL_JITTER = 0.1


@dataclass
class ChatPace:
    interval: float
    #: At most ``per_window`` calls in any ``window`` seconds (0: no window).
    per_window: int = 0
    window: float = 60.0
    #: Calls that may go at once after the chat was idle (slots not used).
    burst: int = 1
    #: The next slot of the steady schedule.
    next_at: float = 0.0
    sent: deque[float] = field(default_factory=deque)
    #: :meth:`assume_used` applied already.
    assumed: bool = False
    #: The calls :meth:`assume_used` put in the window, and the next slot as this
    #: process's own calls left it: :meth:`restore` replaces the assumption with what
    #: is known (they were merged: a group used before the pacing was read then had its
    #: window full for half a minute, issue 46).
    _assumed: frozenset[float] | None = None
    _own_next: float = 0.0

    def ready_at(self, now: float, keep: int = 0) -> float:
        """When the next call may go (``now`` or later); ``keep``: calls of the burst
        left for a more urgent call (this one goes at the steady pace beyond them); a
        negative ``keep``: calls this one may take beyond the burst, each
        :data:`ARRIVAL_JITTER` after its slot (never later than the steady pace's)."""
        at = max(now, self.next_at - max(0, self.burst - 1 - max(keep, 0)) * self.interval)
        if keep < 0:  # (its slot beyond the burst, late by the jitter, if that is sooner)
            beyond = self.next_at - (self.burst - 1 - keep) * self.interval
            at = min(at, max(now, beyond + ARRIVAL_JITTER))
        if self.per_window:
            while self.sent and at - self.sent[0] >= self.window:
                self.sent.popleft()
            if len(self.sent) >= self.per_window:
                at = max(at, self.sent[-self.per_window] + self.window)
        return at

    def reserve(self, now: float) -> float:
        """Take the next slot; return when it is (sleep until then)."""
        at = self.ready_at(now)
        self.next_at = max(self.next_at, at) + self.interval
        self._own_next = max(self._own_next, at) + self.interval
        if self.per_window:
            self.sent.append(at)
        return at

    def assume_used(self, now: float) -> None:
        """The process before a restart may have used the budget up to its death, evenly
        paced: the window is taken as full at that pace, its last call one interval ago
        (the restart itself took longer than that), so one call may go now, the next one
        an interval later; and the rolling window never sees more than ``per_window``.
        Only when nothing better is known (the pacing kept across restarts could not be
        read, see :mod:`bot.tables.pacing`); once per chat (assumed twice, the window
        held twice the calls, and the chat waited half a minute)."""
        if self.assumed:
            return
        self.assumed = True
        self._assumed = frozenset()
        if self.per_window and self.interval > 0:
            n = min(self.per_window, int(self.window / self.interval))
            past = [now - i * self.interval for i in range(n, 0, -1)]
            self._assumed = frozenset(past) - set(self.sent)
            self.sent = deque(sorted({*self.sent, *past}))
        self._own_next = self.next_at
        self.next_at = max(self.next_at, now + (self.burst - 1) * self.interval)

    def restore(self, next_at: float, sent: list[float]) -> None:
        """The state a process before this one left (kept across restarts; monotonic
        times of this process), merged with this process's own calls; what
        :meth:`assume_used` assumed before it was known is dropped."""
        if self._assumed is not None:
            self.sent = deque(t for t in self.sent if t not in self._assumed)
            self.next_at = self._own_next
            self._assumed = None
        self.next_at = max(self.next_at, next_at)
        if self.per_window:
            self.sent = deque(sorted([*self.sent, *sent])[-self.per_window:])

    def assume_calls_between(self, start: float, until: float) -> None:
        """Calls the process before may have made after it last saved the pacing
        (``start``) and before it died (``until`` at the latest), at this pace: taken as
        made, at the earliest slots the pace allowed."""
        for _ in range(self.burst + int((until - start) / max(self.interval, 1e-3)) + 1):
            at = self.ready_at(start)
            if at > until:
                return
            self.reserve(at)


class _Waiter:
    __slots__ = ("future", "overdue_at", "priority", "since")

    def __init__(self, priority: int) -> None:
        self.priority = priority
        self.since = time.monotonic()
        #: When a call of a table's or a lower rank comes due (see :class:`GlobalBudget`):
        #: a group's redraw sets it from its last call (``bot.outbox.pace``).
        self.overdue_at = float("inf")
        self.future: asyncio.Future[None] = asyncio.get_running_loop().create_future()


@dataclass
class BudgetReport:
    """Grants per priority and how long they waited, logged every ``every`` seconds while
    anything waited (a saturated bot says so in its log, with figures)."""

    every: float = 60.0
    started: float = field(default_factory=time.monotonic)
    grants: list[int] = field(default_factory=lambda: [0] * len(Priority))
    waited: list[float] = field(default_factory=lambda: [0.0] * len(Priority))
    longest: list[float] = field(default_factory=lambda: [0.0] * len(Priority))

    def note(self, priority: int, waited: float) -> None:
        p = min(priority, Priority.IDLE)
        self.grants[p] += 1
        self.waited[p] += waited
        self.longest[p] = max(self.longest[p], waited)
        now = time.monotonic()
        if now - self.started >= self.every:
            if any(self.waited):
                span = now - self.started
                log.info("global budget, last %.0f s: %s", span, ", ".join(
                    f"{name} {n / span:.1f}/s (waited mean {w / max(1, n):.2f} s, "
                    f"max {m:.1f} s)" for name, n, w, m in zip(
                        PRIORITY_NAMES, self.grants, self.waited, self.longest,
                        strict=True)))
            self.started = now
            self.grants = [0] * len(Priority)
            self.waited, self.longest = [0.0] * len(Priority), [0.0] * len(Priority)


class GlobalBudget:
    """An even rate for the whole bot, granted by priority (see :class:`Priority`)."""

    def __init__(self, rate: float, burst: float = 1.0, table_wait: float = 0.0,
                 table_share: int = 5) -> None:
        self.interval = 1.0 / rate if rate > 0 else 0.0
        self.burst = max(1.0, burst)
        #: A table call that waited ``table_wait`` seconds (0: never), or a call of a
        #: table's rank or lower past its own ``overdue_at`` (a group's redraw, from the
        #: group's last call), is *due*: it goes before the other calls but the
        #: presser's own message, the one due first first; while turns wait, one grant
        #: in ``table_share`` (when the turns alone fill the budget, the groups still see
        #: the game move, and the turns keep the rest).
        self.table_wait = table_wait
        self.table_share = max(2, table_share)
        self._due: list[tuple[float, int, _Waiter]] = []
        self._turns_in_a_row = 0
        self._next = 0.0
        self._heap: list[tuple[int, int, _Waiter]] = []
        self._seq = itertools.count()
        self._dispatcher: asyncio.Task[None] | None = None
        #: Calls granted, per priority (for the benchmark).
        self.granted = [0] * len(Priority)
        self.report = BudgetReport()

    def _take(self, now: float) -> None:
        self._next = max(self._next, now) + self.interval

    def _free(self, now: float, priority: int = Priority.TURN) -> bool:
        """Whether a call of ``priority`` may go now: the idle hands only while a call is
        left over for what comes next (they never take the last one: under a saturated
        budget they are held, and the tables get what the turns leave)."""
        spare = self.interval if priority >= Priority.IDLE else 0.0
        return self._free_at() + spare <= now

    def _free_at(self) -> float:
        """When the next call is within the budget (up to ``burst`` ahead of schedule)."""
        return self._next - (self.burst - 1) * self.interval

    def waiter(self, priority: int) -> _Waiter:
        return _Waiter(priority)

    async def acquire(self, priority: int, waiter: _Waiter | None = None) -> None:
        """Wait for one call of the budget; higher priorities are served first."""
        now = time.monotonic()
        if not self._heap and self._free(now, priority):
            self._take(now)
            self.granted[min(priority, Priority.IDLE)] += 1
            self.report.note(priority, 0.0)
            return
        w = waiter or _Waiter(priority)
        w.priority = min(w.priority, priority)
        heapq.heappush(self._heap, (w.priority, next(self._seq), w))
        if w.priority == Priority.TABLE and self.table_wait > 0:
            w.overdue_at = min(w.overdue_at, now + self.table_wait)
        if w.priority >= Priority.TABLE and w.overdue_at < float("inf"):
            heapq.heappush(self._due, (w.overdue_at, next(self._seq), w))
        if self._dispatcher is None or self._dispatcher.done():
            self._dispatcher = asyncio.get_running_loop().create_task(self._dispatch())
        try:
            await w.future
        except asyncio.CancelledError:
            if w.future.done() and not w.future.cancelled():
                self.refund()  # granted, but the caller went away
            raise

    def promote(self, waiter: _Waiter, priority: int) -> None:
        """A waiter now carries something more urgent."""
        if priority < waiter.priority and not waiter.future.done():
            waiter.priority = priority
            waiter.since = time.monotonic()  # (its wait at this rank, for the report)
            heapq.heappush(self._heap, (priority, next(self._seq), waiter))

    def refund(self) -> None:
        """A granted call was not made."""
        self._next -= self.interval

    def _overdue(self, now: float, turns_waiting: bool) -> _Waiter | None:
        """The call due first, if one is due and its turn has come (see ``table_share``),
        taken off the line of due calls."""
        if turns_waiting and self._turns_in_a_row < self.table_share - 1:
            return None
        due = self._due
        while due and (due[0][2].future.done() or due[0][2].priority < Priority.TABLE):
            heapq.heappop(due)  # served, cancelled, or promoted to a turn's rank
        if due and due[0][0] <= now:
            return heapq.heappop(due)[2]
        return None

    async def _dispatch(self) -> None:
        while self._heap:
            prio, _, w = self._heap[0]
            if w.future.done() or prio != w.priority:
                heapq.heappop(self._heap)  # served, cancelled or promoted meanwhile
                continue
            now = time.monotonic()
            if prio > Priority.PRESSED and self._free(now) and (
                    due := self._overdue(now, prio <= Priority.TURN)) is not None:
                self._take(now)
                self._turns_in_a_row = 0
                self.granted[Priority.TABLE] += 1
                self.report.note(Priority.TABLE, now - due.since)
                due.future.set_result(None)
                continue
            if not self._free(now, prio):
                spare = self.interval if prio >= Priority.IDLE else 0.0
                await asyncio.sleep(max(self._free_at() + spare - now, 0.001))
                continue
            heapq.heappop(self._heap)
            self._take(now)
            self.granted[min(prio, Priority.IDLE)] += 1
            self.report.note(prio, now - w.since)
            self._turns_in_a_row = self._turns_in_a_row + 1 if prio <= Priority.TURN else 0
            w.future.set_result(None)

    def has_room(self) -> bool:
        """Whether a call could go now with nothing waiting for the budget (an extra call
        then delays no turn)."""
        return not self.waiting() and self._free(time.monotonic())

    def waiting(self) -> int:
        return sum(1 for _, _, w in self._heap if not w.future.done())

    async def close(self) -> None:
        if self._dispatcher is not None and not self._dispatcher.done():
            self._dispatcher.cancel()
            await asyncio.gather(self._dispatcher, return_exceptions=True)
        for _, _, w in self._heap:
            if not w.future.done():
                w.future.cancel()
        self._heap.clear()
        self._due.clear()
