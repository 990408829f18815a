"""The bot's computer decisions: search levels in the process pool, bounded and capped."""

from __future__ import annotations

import asyncio

import pytest

from bot import players
from game.view import View
from tests.core.helpers import heuristic_play_views


def _play_views(count: int) -> list[View]:
    """Views of the play phase with a real choice."""
    return heuristic_play_views([11], count)


@pytest.fixture
def fresh_pool() -> object:
    players.shutdown()
    yield
    players.shutdown()


async def test_search_decisions_run_in_the_pool_and_match_the_player(
    fresh_pool: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the wall-clock caps (tested below) out of the way: on a loaded machine the search
    # in the pool would stop sampling early and decide otherwise than the one here
    monkeypatch.setattr(players, "SEARCH_SOFT_SECONDS", 60.0)
    monkeypatch.setattr(players, "DECISION_CAP_SECONDS", 120.0)
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


async def test_past_the_cap_the_rule_based_player_decides(
    fresh_pool: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    view = _play_views(1)[0]
    # a fresh pool starts its workers in more than this
    monkeypatch.setattr(players, "DECISION_CAP_SECONDS", 0.01)
    action = await players.decide("esperto", 5, view)
    assert action == players.choose("normale", 5, view)


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
    assert action == players.choose("normale", 5, view)
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
