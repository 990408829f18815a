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
pure function of the seed and the view), and a wall-clock cap (``DECISION_CAP_SECONDS``,
the wait for a free worker included) guards the table: past it, the rule-based
``normale`` decides instead (an overloaded bot degrades, it does not fall behind). The cheap levels
decide in a thread. :func:`shutdown` (called when the bot stops, and at exit) cancels
what is queued and lets the workers go.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import multiprocessing
import os
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from game import Action, View, parse_action
from game.players import LEVELS, create_player

log = logging.getLogger(__name__)

__all__ = ["LEVELS", "SEARCH_LEVELS", "choose", "decide", "shutdown"]

#: Levels whose decisions run in the process pool.
SEARCH_LEVELS = frozenset({"forte", "esperto", "campione"})
#: Worker processes of the pool (one per core, at most two: a bot shares its machine).
SEARCH_WORKERS = max(1, min(2, os.cpu_count() or 1))
#: Past this, a search decision is abandoned for the rule-based one.
DECISION_CAP_SECONDS = 3.0
#: The search's own wall-clock cap (it then stops sampling: rarely, under heavy load).
SEARCH_SOFT_SECONDS = 1.0

_pool: ProcessPoolExecutor | None = None
_slots: asyncio.Semaphore | None = None
_slots_loop: asyncio.AbstractEventLoop | None = None


def choose(level: str, seed: int, view: View, max_seconds: float | None = None) -> Action:
    """One decision of a ``level`` player (deterministic given seed and view)."""
    try:
        player = create_player(level if level in LEVELS else "normale", seed, max_seconds)
        action = player.choose(view)
        if action.code in view.legal:
            return action
        log.error("computer player %s chose illegal %s", level, action.code)
    except Exception:
        log.exception("computer player %s failed", level)
    return parse_action(view.legal[0])


def _context() -> multiprocessing.context.BaseContext:
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def _warm_up() -> None:
    """Worker initializer: import the search once, not on the first decision."""
    import game.players.expert  # noqa: F401


def _get_pool() -> ProcessPoolExecutor:
    global _pool
    if _pool is None:
        _pool = ProcessPoolExecutor(
            max_workers=SEARCH_WORKERS, mp_context=_context(), initializer=_warm_up
        )
    return _pool


def _get_slots() -> asyncio.Semaphore:
    global _slots, _slots_loop
    loop = asyncio.get_running_loop()
    if _slots is None or _slots_loop is not loop:
        _slots, _slots_loop = asyncio.Semaphore(SEARCH_WORKERS), loop
    return _slots


async def decide(level: str, seed: int, view: View) -> Action:
    """One decision, off the event loop: search levels in the process pool (bounded,
    capped), the others in a thread."""
    if level not in SEARCH_LEVELS:
        return await asyncio.to_thread(choose, level, seed, view)
    slots = _get_slots()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + DECISION_CAP_SECONDS  # the wait for a worker counts too
    try:
        await asyncio.wait_for(slots.acquire(), DECISION_CAP_SECONDS)
    except TimeoutError:
        log.warning("computer %s: every search worker busy for %.1fs, the rule-based one "
                    "plays", level, DECISION_CAP_SECONDS)
        return await asyncio.to_thread(choose, "normale", seed, view)

    def release(_: object = None) -> None:
        # a closed loop raises RuntimeError: nobody waits for a slot any more
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(slots.release)

    try:
        future: Future[Action] = _get_pool().submit(
            choose, level, seed, view, SEARCH_SOFT_SECONDS
        )
    except (RuntimeError, BrokenProcessPool):  # shut down, or a worker died
        slots.release()
        log.error("computer %s: the search pool is unavailable; restarting it", level)
        _reset_pool()
        return await asyncio.to_thread(choose, "normale", seed, view)
    # the slot frees when the worker does, not when we stop waiting for it
    future.add_done_callback(release)
    try:
        remaining = max(0.0, deadline - loop.time())
        return await asyncio.wait_for(asyncio.wrap_future(future), remaining)
    except TimeoutError:
        log.warning("computer %s: no decision in %.1fs, the rule-based one plays",
                    level, DECISION_CAP_SECONDS)
    except BrokenProcessPool:
        log.error("computer %s: the search pool broke; restarting it", level)
        _reset_pool()
    return await asyncio.to_thread(choose, "normale", seed, view)


def _reset_pool() -> None:
    global _pool
    pool, _pool = _pool, None
    if pool is not None:
        pool.shutdown(wait=False, cancel_futures=True)


def shutdown() -> None:
    """Cancel the queued decisions and let the workers exit (idempotent)."""
    _reset_pool()


atexit.register(shutdown)
