"""Computer players for empty, abandoned or timed-out seats (``game.players``).

The bot only ever asks for one decision at a time through :func:`decide` (or the
synchronous :func:`choose`), which guards the table against a misbehaving player: an
exception or an illegal choice is logged and replaced by the first legal action, so a
bug in a player never stops a match.

*Where the work runs.* A search decision (``forte``, ``esperto``, ``campione``) is up to
a few hundred milliseconds of pure CPU: in a thread it would hold the GIL and delay every other
table's updates, so it runs in a small **process** pool (``forkserver`` start method
where available, else ``spawn``: never a fork of the running event loop). The pool is
bounded (at most ``SEARCH_WORKERS`` decisions in flight; the others wait their turn on
the event loop), the search budget is counted in simulated card plays (a decision is a
pure function of the seed and the view when no clock stops it). The cheap levels decide
in a thread. :func:`shutdown` (called when the bot stops, and at exit) cancels what is
queued and lets the workers go.

*Under load the computers stay on time* (issue 47). Each decision has a **budget**: the
seconds it may take, the wait for a worker included (the driver gives the turn's display
pause, during which the decision runs; else ``DECISION_BUDGET_SECONDS``). From the
decisions already waiting for the pool or in it and the time a decision has taken
lately (a running mean, from submitted to done), :func:`decide` expects how long this one
would wait for a worker: unless the pool is idle, or that wait and a decision of the
usual length fit in the budget, the cheap ``FALLBACK_LEVEL`` decides at once; otherwise
the search runs with its wall-clock cap shortened to what is left of the budget (it stops
sampling there; never under its minimum of sampled deals). A decision that waits for a
worker past its budget, or gets no answer by then (``LATE_SECONDS`` after it; at most
``DECISION_CAP_SECONDS``, the wait included), is also played by ``FALLBACK_LEVEL``. So
the pool never queues more than it can serve within the budget: an overloaded bot plays
weaker, not later. An idle pool searches in full (the counted budget, with
``SEARCH_SOFT_SECONDS`` as its clock).
The log says so once a minute at most, as a summary (:class:`Load`), not per move.
Every decision, shortened or fallen back, is a legal action of the core's view.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import multiprocessing
import os
import time
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Final

from game import Action, View, parse_action
from game.players import LEVELS, create_player

log = logging.getLogger(__name__)

__all__ = ["FALLBACK_LEVEL", "LEVELS", "SEARCH_LEVELS", "Load", "choose", "decide", "load",
           "shutdown"]

#: Levels whose decisions run in the process pool.
SEARCH_LEVELS = frozenset({"forte", "esperto", "campione"})
#: The level that decides when the pool cannot in time (and when it is unavailable): the
#: network level, deciding in the bot's process (a thread) in about a millisecond, and
#: stronger than normale in every variant (game/players/NET-MANIFEST.md).
FALLBACK_LEVEL: Final = "rapido"
#: Worker processes of the pool (one per core, at most two: a bot shares its machine).
SEARCH_WORKERS = max(1, min(2, os.cpu_count() or 1))
#: The workers' niceness, added to the bot's: on a busy machine the event loop (every
#: press, every store, every redraw) comes before a search, which then falls back sooner.
SEARCH_NICE = 5
#: A decision's budget when the caller gives none (the bot's default display pause).
DECISION_BUDGET_SECONDS = 1.0
#: The least time worth a search: with less of the budget left, the fallback decides.
MIN_SEARCH_SECONDS = 0.1
#: How long past its budget a search's answer is still awaited (it stops sampling by then,
#: but never under its minimum of sampled deals: on a starved machine that is later)
#: before the fallback plays instead.
LATE_SECONDS = 0.2
#: Past this, a search decision is abandoned for the fallback's (the wait included),
#: whatever its budget.
DECISION_CAP_SECONDS = 3.0
#: The search's own wall-clock cap on an idle pool (it then stops sampling: rarely).
SEARCH_SOFT_SECONDS = 1.0
#: Kept from a decision's budget for the trips to the worker and back.
TRIP_SECONDS = 0.02
#: The time a pool decision takes (submitted -> answered) before any was measured, and
#: the weight of each new one in the running mean.
FIRST_DECISION_SECONDS = 0.2
MEAN_WEIGHT = 0.2
#: At most one summary of a degraded minute in the log.
SUMMARY_SECONDS = 60.0

_pool: ProcessPoolExecutor | None = None
#: Decisions of a new pool still to be sent (each may wait for a worker to start: seconds,
#: not what a decision takes, so not in the running mean).
_starting = 0
_slots: asyncio.Semaphore | None = None
_slots_loop: asyncio.AbstractEventLoop | None = None


@dataclass
class Load:
    """What the pool did since the last summary, and its running estimates."""

    #: search decisions made in full / stopped by a shortened clock / played by the
    #: fallback because the pool could not serve them in time (or at all)
    full: int = 0
    shortened: int = 0
    fell_back: int = 0
    #: the most decisions waiting for the pool or in it, seen by a new one
    most_waiting: int = 0
    #: decisions waiting for a worker or in one, now (a search whose answer came too
    #: late still holds its worker)
    waiting: int = 0
    #: running mean of a pool decision's time, submitted -> done (seconds)
    mean_seconds: float = FIRST_DECISION_SECONDS
    #: when the counted period began (``clock()``); None: not yet
    since: float | None = None

    def expected_wait(self) -> float:
        """Seconds a new decision would wait for a worker: the decisions ahead of it,
        served ``SEARCH_WORKERS`` at a time at the running mean."""
        queued = max(0, self.waiting + 1 - SEARCH_WORKERS)
        return queued * self.mean_seconds / SEARCH_WORKERS

    def admits(self, budget: float) -> bool:
        """Whether a new decision can be searched within ``budget`` seconds: the pool
        is idle (which also keeps the mean current), or the decisions ahead of it and
        one of the usual length fit in it. (On a starved machine, where a search takes
        longer than the budget, one at a time: more would only take the CPU that the
        bot's own work needs, and answer too late.)"""
        if budget < MIN_SEARCH_SECONDS:
            return False
        return self.waiting == 0 or self.expected_wait() + self.mean_seconds <= budget

    def took(self, seconds: float) -> None:
        self.mean_seconds += MEAN_WEIGHT * (seconds - self.mean_seconds)

    def count(self, outcome: str, now: float) -> None:
        """One decision ended as ``outcome`` (``full``, ``shortened``, ``fell_back``); log
        the summary when the period is over and some decision was degraded."""
        if self.since is None:
            self.since = now
        setattr(self, outcome, getattr(self, outcome) + 1)
        if now - self.since < SUMMARY_SECONDS:
            return
        if self.shortened or self.fell_back:
            log.warning(
                "computer decisions in the last %.0fs: %d searched in full, %d cut short by "
                "the clock, %d played by %s (the search pool could not serve them within "
                "their budget; up to %d waiting, %.2fs a decision)",
                now - self.since, self.full, self.shortened, self.fell_back,
                FALLBACK_LEVEL, self.most_waiting, self.mean_seconds)
        self.full = self.shortened = self.fell_back = 0
        self.most_waiting = self.waiting
        self.since = now


#: The pool's load (one bot, one pool).
load = Load()
#: The summary's clock (a test sets its own).
clock: Callable[[], float] = time.monotonic


def choose(level: str, seed: int, view: View, max_seconds: float | None = None) -> Action:
    """One decision of a ``level`` player (deterministic given seed and view)."""
    try:
        player = create_player(level if level in LEVELS else FALLBACK_LEVEL, seed, max_seconds)
        action = player.choose(view)
        if action.code in view.legal:
            return action
        log.error("computer player %s chose illegal %s", level, action.code)
    except Exception:
        log.exception("computer player %s failed", level)
    return parse_action(view.legal[0])


def _search(level: str, seed: int, view: View, max_seconds: float) -> tuple[Action, bool]:
    """In a worker: the decision, and whether the clock stopped it."""
    started = time.perf_counter()
    action = choose(level, seed, view, max_seconds)
    return action, time.perf_counter() - started >= max_seconds


#: numpy's BLAS (OpenBLAS in its wheels) runs a matrix product on every core by default;
#: a bot shares its cores between its event loop and the pool's workers, and a batch of
#: the network's (1,800 hands in campione's inference, issue 49) took 17.8 ms of CPU
#: with the default threads against 3.6 ms with one. One thread in every process that
#: runs the computers, unless set otherwise (read by numpy at its first import).
BLAS_THREADS: Final = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}


def one_blas_thread() -> None:
    """Ask numpy's BLAS for one thread (see :data:`BLAS_THREADS`), before numpy is
    imported; a value already in the environment is kept."""
    for name, value in BLAS_THREADS.items():
        os.environ.setdefault(name, value)


def _context() -> multiprocessing.context.BaseContext:
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def _warm_up() -> None:
    """Worker initializer: yield the CPU to the bot's event loop (``SEARCH_NICE``), and
    import the search once, not on the first decision; numpy's BLAS on one thread."""
    one_blas_thread()
    with contextlib.suppress(OSError):
        os.nice(SEARCH_NICE)
    import game.players.expert  # noqa: F401


def warm_up() -> None:
    """Read the fallback's network now (~0.6 s of CPU: numpy and the weights), so that
    the first decision a busy pool hands over does not pay for it. Run in a thread."""
    one_blas_thread()
    from game.players.net import default_network  # (numpy: not at the bot's import)

    default_network()


def _get_pool() -> ProcessPoolExecutor:
    global _pool, _starting
    if _pool is None:
        _pool = ProcessPoolExecutor(
            max_workers=SEARCH_WORKERS, mp_context=_context(), initializer=_warm_up
        )
        _starting = SEARCH_WORKERS
    return _pool


def _timed() -> bool:
    """Whether the decision being sent counts in the running mean (not the first ones
    of a new pool, whose workers start meanwhile)."""
    global _starting
    _starting -= 1
    return _starting < 0


def _get_slots() -> asyncio.Semaphore:
    global _slots, _slots_loop
    loop = asyncio.get_running_loop()
    if _slots is None or _slots_loop is not loop:
        _slots, _slots_loop = asyncio.Semaphore(SEARCH_WORKERS), loop
    return _slots


async def _fall_back(seed: int, view: View) -> Action:
    load.count("fell_back", clock())
    return await asyncio.to_thread(choose, FALLBACK_LEVEL, seed, view)


async def decide(level: str, seed: int, view: View, budget: float | None = None) -> Action:
    """One decision, off the event loop: search levels in the process pool (bounded,
    within ``budget`` seconds from now, default ``DECISION_BUDGET_SECONDS``: see the
    module's docstring), the others in a thread."""
    if level not in SEARCH_LEVELS:
        return await asyncio.to_thread(choose, level, seed, view)
    budget = DECISION_BUDGET_SECONDS if budget is None else budget
    load.most_waiting = max(load.most_waiting, load.waiting + 1)
    if not load.admits(budget):
        return await _fall_back(seed, view)
    loop = asyncio.get_running_loop()
    return await _in_pool(level, seed, view, loop.time() + budget, loop)


async def _in_pool(level: str, seed: int, view: View, deadline: float,
                   loop: asyncio.AbstractEventLoop) -> Action:
    """The search in a worker by ``deadline`` (``loop.time()``), or the fallback."""
    started = loop.time()
    slots, counts = _get_slots(), load
    counts.waiting += 1  # until a worker is done with it, or it never gets one
    try:
        wait = min(deadline - MIN_SEARCH_SECONDS, started + DECISION_CAP_SECONDS) - started
        await asyncio.wait_for(slots.acquire(), wait)
    except TimeoutError:
        counts.waiting -= 1
        return await _fall_back(seed, view)
    except asyncio.CancelledError:
        counts.waiting -= 1
        raise
    left = deadline - loop.time() - TRIP_SECONDS
    max_seconds = max(MIN_SEARCH_SECONDS, min(SEARCH_SOFT_SECONDS, left))
    try:
        pool = _get_pool()
        timed = _timed()
        submitted = time.monotonic()
        future: Future[tuple[Action, bool]] = pool.submit(
            _search, level, seed, view, max_seconds
        )
    except (RuntimeError, BrokenProcessPool):  # shut down, or a worker died
        slots.release()
        counts.waiting -= 1
        log.error("computer %s: the search pool is unavailable; restarting it", level)
        _reset_pool()
        return await _fall_back(seed, view)

    def done(future: Future[tuple[Action, bool]]) -> None:
        """(In the pool's thread.) The worker is free: its slot too, and the time it
        took counts, even when nobody waits for its answer any more."""
        took = time.monotonic() - submitted

        def free() -> None:
            slots.release()
            counts.waiting -= 1
            if timed and not future.cancelled():
                counts.took(took)

        with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
            loop.call_soon_threadsafe(free)

    future.add_done_callback(done)
    try:
        answer_by = min(deadline + LATE_SECONDS, started + DECISION_CAP_SECONDS)
        remaining = max(0.0, answer_by - loop.time())
        action, stopped = await asyncio.wait_for(asyncio.wrap_future(future), remaining)
    except TimeoutError:
        return await _fall_back(seed, view)
    except BrokenProcessPool:
        log.error("computer %s: the search pool broke; restarting it", level)
        _reset_pool()
        return await _fall_back(seed, view)
    counts.count("shortened" if stopped and max_seconds < SEARCH_SOFT_SECONDS else "full",
                 clock())
    return action


def _reset_pool() -> None:
    global _pool
    pool, _pool = _pool, None
    if pool is not None:
        pool.shutdown(wait=False, cancel_futures=True)


def shutdown() -> None:
    """Cancel the queued decisions and let the workers exit (idempotent)."""
    _reset_pool()


atexit.register(shutdown)
