"""The search player on random situations of every option combination (tiny budgets)."""

from __future__ import annotations

import random

import pytest

from game.engine import Game
from game.options import TableOptions
from game.players.expert import ExpertPlayer
from game.players.search import SearchPlayer
from game.simulate import pick
from tests.core.helpers import random_moves
from tests.test_players import ALL_COMBOS


def _small(kind: str, seed: int) -> SearchPlayer:
    if kind == "esperto":
        return ExpertPlayer(seed, budget=300, candidates=2)
    return SearchPlayer(seed, budget=150, min_worlds=1, max_worlds=2, bid_candidates=1)


@pytest.mark.parametrize(
    ("kind", "combo"),
    [("forte", c) for c in range(len(ALL_COMBOS))]
    + [("esperto", c) for c in range(0, len(ALL_COMBOS), 3)],
)
def test_search_returns_a_legal_action_in_random_situations(kind: str, combo: int) -> None:
    """Reproducible from the seed too: a twin player chooses the same."""
    options = TableOptions(**ALL_COMBOS[combo], match_end="hands:1")
    player = _small(kind, combo)
    rng = random.Random(combo)
    for case in range(8 if kind == "forte" else 3):
        game = random_moves(
            Game.new(options, random.Random(combo * 1000 + case)), rng, rng.randrange(0, 60)
        )
        if game.is_over():
            continue
        seat = game.current_seat()
        assert seat is not None
        view = game.view(seat)
        action = player.choose(view)
        assert action.code in view.legal
        assert _small(kind, combo).choose(view) == action
        game.apply(seat, action)


def test_search_is_deterministic_and_budget_bounded() -> None:
    game = Game.new(TableOptions(), random.Random(4))
    mover = random.Random(4)
    while game.phase.value != "play" or game.trick_no < 3:
        seat = game.current_seat()
        assert seat is not None
        game.apply(seat, pick(mover, game.legal_actions(seat)))
    seat = game.current_seat()
    assert seat is not None
    view = game.view(seat)
    a = SearchPlayer(3, budget=2000, max_worlds=30)
    b = SearchPlayer(3, budget=2000, max_worlds=30)
    assert a.choose(view) == b.choose(view)
    legal = len(view.legal)
    cost = legal * sum(view.hand_sizes)
    if legal > 1:
        assert a.last_worlds == max(a.min_worlds, min(30, 2000 // cost))
