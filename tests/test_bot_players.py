"""The bot's computer decisions: search levels in the process pool, bounded and capped."""

from __future__ import annotations

import asyncio
import re

import pytest

from bot import players
from game.view import View
from tests.core.helpers import heuristic_play_views


def _play_views(count: int) -> list[View]:
    """Views of the play phase with a real choice."""
    return heuristic_play_views([11], count)


@pytest.fixture
def fresh_pool(monkeypatch: pytest.MonkeyPatch) -> object:
    players.shutdown()
    monkeypatch.setattr(players, "load", players.Load())  # no count of another test's
    yield
    players.shutdown()


async def test_search_decisions_run_in_the_pool_and_match_the_player(
    fresh_pool: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the wall-clock caps (tested below) out of the way: on a loaded machine the search
    # in the pool would stop sampling early and decide otherwise than the one here
    monkeypatch.setattr(players, "SEARCH_SOFT_SECONDS", 60.0)
    monkeypatch.setattr(players, "DECISION_CAP_SECONDS", 120.0)
    monkeypatch.setattr(players, "DECISION_BUDGET_SECONDS", 120.0)  # (the pool starts)
    views = _play_views(4)
    # several at once: bounded by the slots, every one answered
    actions = await asyncio.gather(
        *(players.decide("esperto", 7 + i, view) for i, view in enumerate(views))
    )
    assert players._pool is not None  # the pool was used
    for i, (view, action) in enumerate(zip(views, actions, strict=True)):
        assert action.code in view.legal
        # the counted budget: the same decision as the player in this process
        assert action == players.choose("esperto", 7 + i, view)
    forte = await players.decide("forte", 3, views[0])
    assert forte == players.choose("forte", 3, views[0])
    assert players._get_slots()._value == players.SEARCH_WORKERS  # every slot given back


def _blas_threads() -> tuple[str | None, int]:
    """In a worker of the pool: the BLAS setting, and the process's threads once numpy
    has multiplied two matrices (OpenBLAS starts its threads then)."""
    import os

    import numpy as np

    product = np.ones((600, 600)) @ np.ones((600, 600))
    assert product[0, 0] == 600
    return os.environ.get("OPENBLAS_NUM_THREADS"), len(os.listdir("/proc/self/task"))


async def test_the_pools_workers_run_numpy_on_one_thread(
    fresh_pool: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The network's batches in the pool's workers (issue 49) are matrix products: numpy's
    BLAS ran them on every core (five times the CPU), beside the bot's event loop."""
    for name in players.BLAS_THREADS:
        monkeypatch.delenv(name, raising=False)
    setting, threads = await asyncio.wrap_future(players._get_pool().submit(_blas_threads))
    assert setting == "1"
    assert threads == 1


async def test_past_the_cap_the_rule_based_player_decides(
    fresh_pool: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    view = _play_views(1)[0]
    # a fresh pool starts its workers in more than this
    monkeypatch.setattr(players, "DECISION_CAP_SECONDS", 0.01)
    action = await players.decide("esperto", 5, view)
    assert action == players.choose(players.FALLBACK_LEVEL, 5, view)


async def test_with_every_worker_busy_the_rule_based_player_decides_in_time(
    fresh_pool: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    view = _play_views(1)[0]
    monkeypatch.setattr(players, "DECISION_CAP_SECONDS", 0.3)
    slots = players._get_slots()
    for _ in range(players.SEARCH_WORKERS):
        await slots.acquire()  # as if every worker were deciding for another table
    loop = asyncio.get_running_loop()
    started = loop.time()
    action = await players.decide("esperto", 5, view)
    assert loop.time() - started < 2.0
    assert action == players.choose(players.FALLBACK_LEVEL, 5, view)
    assert players._pool is None  # nothing was sent to the pool
    for _ in range(players.SEARCH_WORKERS):
        slots.release()


async def test_after_shutdown_a_new_pool_serves(fresh_pool: object) -> None:
    view = _play_views(1)[0]
    await players.decide("forte", 1, view)
    players.shutdown()
    assert players._pool is None
    action = await players.decide("forte", 1, view)
    assert action.code in view.legal


async def test_cheap_levels_do_not_start_the_pool(fresh_pool: object) -> None:
    view = _play_views(1)[0]
    action = await players.decide("normale", 1, view)
    assert action == players.choose("normale", 1, view)
    assert players._pool is None


async def _warm(monkeypatch: pytest.MonkeyPatch, view: View) -> None:
    """Decisions while the pool's workers start (seconds on a loaded machine), then the
    counts and estimates afresh."""
    with monkeypatch.context() as patch:
        patch.setattr(players, "DECISION_CAP_SECONDS", 120.0)
        await asyncio.gather(*(players.decide("esperto", i, view, budget=60.0)
                               for i in range(players.SEARCH_WORKERS)))
    monkeypatch.setattr(players, "load", players.Load())


class _Spy:
    """The pool, recording the wall-clock cap each search is sent with."""

    def __init__(self, pool: object) -> None:
        self.pool, self.caps = pool, []  # type: list[float]

    def submit(self, fn: object, *args: object) -> object:
        self.caps.append(args[-1])  # type: ignore[arg-type]
        return self.pool.submit(fn, *args)  # type: ignore[attr-defined]


async def test_an_idle_pool_searches_in_full(
    fresh_pool: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No decision waiting: each gets the whole budget as its clock (the search stops
    earlier by its counted budget), and none falls back."""
    views = _play_views(4)
    await _warm(monkeypatch, views[0])
    spy = _Spy(players._get_pool())
    monkeypatch.setattr(players, "_get_pool", lambda: spy)
    for i, view in enumerate(views[1:]):  # one at a time (a loaded machine: 3 s each)
        action = await players.decide("esperto", 20 + i, view, budget=3.0)
        assert action.code in view.legal
    assert spy.caps == [players.SEARCH_SOFT_SECONDS] * 3  # the idle pool's clock
    assert players.load.fell_back == 0 and players.load.full + players.load.shortened == 3
    assert players.load.waiting == 0


async def test_a_saturated_pool_answers_within_the_budget_and_logs_once_a_minute(
    fresh_pool: object, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Many tables' decisions at once, far more than two workers can search in half a
    second: each is answered legally within its budget (and the short wait for a late
    search), most by the fallback; one summary in the log a minute."""
    now = [1000.0]
    monkeypatch.setattr(players, "clock", lambda: now[0])
    views = heuristic_play_views([11, 12], 40)
    assert len(views) == 40
    await _warm(monkeypatch, views[0])
    monkeypatch.setattr(players, "DECISION_CAP_SECONDS", 2.0)
    spy = _Spy(players._get_pool())
    monkeypatch.setattr(players, "_get_pool", lambda: spy)
    loop = asyncio.get_running_loop()

    async def timed(i: int, view: View) -> tuple[float, str]:
        started = loop.time()
        action = await players.decide("esperto", 100 + i, view, budget=0.5)
        return loop.time() - started, action.code

    caplog.set_level("WARNING", logger=players.__name__)
    answers = await asyncio.gather(*(timed(i, view) for i, view in enumerate(views)))
    for (took, code), view in zip(answers, views, strict=True):
        assert code in view.legal
        # within the budget and the wait for a late answer (+ a loaded machine's
        # second), under the hard cap
        assert took < 0.5 + players.LATE_SECONDS + 1.0 < players.DECISION_CAP_SECONDS
    load = players.load
    assert load.full + load.shortened + load.fell_back == 40
    # the queue was bounded: a few searches were sent to the pool, each with its clock
    # shortened to what the wait left of the budget; the others fell back at once
    assert 2 <= len(spy.caps) <= 10 and load.fell_back >= 40 - len(spy.caps)
    assert all(cap <= 0.5 - players.TRIP_SECONDS for cap in spy.caps)
    assert 2 <= load.most_waiting <= 10  # (of the 40 asked at once)
    for _ in range(100):  # a search answered too late frees its worker when it ends
        if load.waiting == 0:
            break
        await asyncio.sleep(0.05)
    assert load.waiting == 0 and players._get_slots()._value == players.SEARCH_WORKERS
    fell_back, searched = load.fell_back, load.full + load.shortened
    assert not caplog.records  # not per move
    now[0] += players.SUMMARY_SECONDS + 1  # a minute later, the next decision
    await players.decide("esperto", 7, views[1], budget=3.0)  # (searched: the pool is idle)
    summaries = [r.getMessage() for r in caplog.records]
    assert len(summaries) == 1
    counts = re.search(r"(\d+) searched in full, (\d+) cut short by the clock, (\d+) "
                       rf"played by {players.FALLBACK_LEVEL}", summaries[0])
    assert counts is not None, summaries[0]
    full, short, fallen = map(int, counts.groups())
    assert (full + short, fallen) == (searched + 1, fell_back)
    now[0] += 1
    await players.decide("esperto", 8, views[2], budget=3.0)
    assert len(caplog.records) == 1  # the next minute's summary waits for its minute
    assert (load.full + load.shortened, load.fell_back) == (1, 0)
