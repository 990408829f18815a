"""The card-play policy's weights: what they change, how they are tuned, and that the
search players' rollouts play with their own weights."""

from __future__ import annotations

from typing import Any

import pytest

from game.cards import parse_card
from game.players import sim
from game.players.expert import ExpertPlayer
from game.players.heuristic import heuristic_card
from game.players.policy import DEFAULT_WEIGHTS, Weights
from game.players.search import SearchPlayer
from game.players.tune import CANDIDATE, FOUND, make_player, paired, per_deal
from game.view import View
from tests.core.compiled import pure, use_sources
from tests.core.helpers import heuristic_play_views


def _play_views(deals: int) -> list[View]:
    return heuristic_play_views(range(deals))


def _is_trump(view: View, code: str) -> bool:
    return view.trump is not None and parse_card(code[1:]) // 10 == view.trump


def test_a_dearer_trump_is_never_spent_where_the_cheaper_one_was_kept() -> None:
    dear = DEFAULT_WEIGHTS._replace(power=2.9)
    kept = 0
    for view in _play_views(12):
        plain = heuristic_card(view)
        careful = heuristic_card(view, dear)
        assert careful in view.legal
        if _is_trump(view, careful):
            assert _is_trump(view, plain)
        kept += _is_trump(view, plain) and not _is_trump(view, careful)
    assert kept > 0  # and it does keep trumps the default weights spend


def test_a_candidate_with_the_default_weights_plays_like_the_field() -> None:
    scores = per_deal(DEFAULT_WEIGHTS, 12, 5, 1, "normale")
    assert scores == [0.0] * 12
    other = per_deal(FOUND, 12, 5, 1, "normale")
    assert other != scores  # different weights, different play on these deals
    diff, half = paired(other, scores)
    assert diff == pytest.approx(sum(other) / 12)
    assert half > 0
    assert make_player(CANDIDATE, 1, FOUND).weights == FOUND  # type: ignore[attr-defined]
    assert make_player("normale", 1).weights == DEFAULT_WEIGHTS  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "player",
    [
        SearchPlayer(3, budget=1500),
        SearchPlayer(3, budget=1500, weights=FOUND),
        SearchPlayer(3, budget=1500, own_weights=FOUND),
        ExpertPlayer(3, budget=1500),
    ],
    ids=["forte", "forte-all-found", "forte-own-found", "esperto"],
)
def test_the_rollouts_play_with_the_players_weights(
    player: SearchPlayer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every seat of a rollout plays with the player's ``weights``, except the searching
    seat's own later moves, which follow its ``own_weights``."""
    seats: dict[int, set[Weights]] = {}
    # the compiled simulator calls the policy natively: watch the sources' rollouts
    use_sources(monkeypatch)
    source_sim = pure(sim)
    real = source_sim.choose_card

    def recording(*args: Any) -> int:
        seats.setdefault(args[0], set()).add(args[-1])
        return int(real(*args))

    monkeypatch.setattr(source_sim, "choose_card", recording)
    view = next(v for v in _play_views(1) if v.trick_no < 4)
    player.choose(view)
    assert view.seat is not None
    assert seats.pop(view.seat) == {player.own_weights}
    assert seats and all(found == {player.weights} for found in seats.values())
