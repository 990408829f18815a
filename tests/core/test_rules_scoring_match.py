"""R68–R84: scoring a smazzata and the match, plus every case of scoring_vectors.json."""

from __future__ import annotations

import random

import pytest

from game import Game, TableOptions
from game.events import MatchOver, SmazzataScored
from game.scoring import (
    bid_multiplier,
    competition_positions,
    contract_points,
    match_winners,
    score_contract,
    seat_deltas,
)
from tests.core.helpers import SCORING_VECTORS, act, deal, play_out, run, score_vector

VECTORS = SCORING_VECTORS


@pytest.mark.parametrize("case", VECTORS, ids=[case["name"] for case in VECTORS])
def test_scoring_vectors(case: dict) -> None:
    options = case["options"]
    result = score_vector(case)
    expected = case["expected"]
    assert (result.chiamante, result.socio, result.each_opponent) == (
        expected["chiamante"],
        expected["socio"],
        expected["each_opponent"],
    )
    opponents = options["players"] - (1 if result.socio is None else 2)
    assert result.chiamante + (result.socio or 0) + opponents * result.each_opponent == 0


def score(kind="rank", points=61, in_mano=False, p=61, tie=False, cappotto="double"):
    return score_contract(
        kind=kind,
        points=points,
        in_mano=in_mano,
        caller_points=p,
        players=5,
        tie_goes_to_caller=tie,
        cappotto=cappotto,
    )


def test_R68_calling_side_points_are_chiamante_plus_socio() -> None:
    game = deal({1: "Ad 4c 5c 6c 4s 5s 6s 7s", 3: "Ab 2b 3b Rb Cb Fb 7b 6b"})
    run(game, [(1, "rA"), (2, "P"), (3, "P"), (4, "P"), (0, "P"), (1, "sb")])
    events = play_out(game)
    taken = [0] * 5
    for event in events:
        if event.kind == "trick_won":
            taken[event.seat] += event.points
    scored = next(e for e in events if isinstance(e, SmazzataScored))
    assert scored.caller_points == taken[1] + taken[3]
    assert sum(taken) == 120


def test_R69_solo_is_in_mano_or_a_carichi() -> None:
    assert score(in_mano=True).socio is None
    assert score(kind="carichi").socio is None
    assert score().socio == 1


def test_R70_contract_points() -> None:
    assert contract_points("rank", 61) == 61 and contract_points("carichi", 61) == 61
    assert contract_points("two", 85) == 85 and contract_points("obbligato", 72) == 72
    assert score(kind="two", points=85, p=84).won is False
    assert score(kind="two", points=85, p=85).won is True


def test_R71_tie_goes_to_caller_only_at_61() -> None:
    assert score(p=60, tie=True).won and not score(p=60, tie=False).won
    assert score(kind="carichi", p=60, tie=True).won  # solo contracts included
    assert not score(kind="two", points=62, p=61, tie=True).won


def test_R72_win_iff_points_reach_the_target_no_draw() -> None:
    for p in range(121):
        assert score(kind="two", points=75, p=p).won is (p >= 75)


def test_R73_base_scores() -> None:
    assert (score(p=70).chiamante, score(p=70).socio, score(p=70).each_opponent) == (2, 1, -1)
    lost = score(p=50)
    assert (lost.chiamante, lost.socio, lost.each_opponent) == (-2, -1, 1)
    solo = score(in_mano=True, p=70)
    assert (solo.chiamante, solo.socio, solo.each_opponent) == (4, None, -1)


def test_R74_bid_multiplier_by_contract_points() -> None:
    assert [bid_multiplier(n) for n in (61, 70, 71, 80, 81, 120)] == [1, 1, 2, 2, 3, 3]
    assert score(kind="two", points=81, p=50).chiamante == -6  # applies to losses
    assert score(kind="two", points=75, in_mano=True, p=90).chiamante == 8  # and to solo


def test_R75_cappotto_either_side_doubles() -> None:
    assert score(p=120).chiamante == 4 and score(p=0).chiamante == -4
    assert score(kind="two", points=120, p=120).chiamante == 12  # always a cappotto
    assert score(kind="two", points=85, p=0).socio == -6
    assert score(p=120, cappotto="off").chiamante == 2
    assert score(p=119).cappotto is False


def test_R76_changes_multiply_and_sum_to_zero() -> None:
    for kind, points in (("rank", 61), ("two", 75), ("obbligato", 90), ("carichi", 61)):
        for p in (0, 30, 60, 61, 90, 120):
            for in_mano in (False, True):
                result = score(kind=kind, points=points, in_mano=in_mano, p=p)
                socio = None if result.socio is None else 2
                assert sum(seat_deltas(result, 5, 0, socio)) == 0


def _match(seed: int, **options: object) -> Game:
    game = Game.new(TableOptions.model_validate(options), random.Random(seed))
    rng = random.Random(seed)
    while not game.is_over():
        play_out(game, rng)
    return game


def test_R77_match_score_is_the_sum_of_changes() -> None:
    game = _match(3, match_end="hands:4", monte=True)
    scored = [e for e in game.history if isinstance(e, SmazzataScored)]
    assert [sum(e.deltas[s] for e in scored) for s in range(5)] == game.totals


def test_R78_target_ends_the_match_after_a_scored_smazzata() -> None:
    for seed in range(5):
        game = _match(seed, match_end="target:5")
        scored = [e for e in game.history if isinstance(e, SmazzataScored)]
        assert max(scored[-1].totals) >= 5
        assert all(max(e.totals) < 5 for e in scored[:-1])
        assert isinstance(game.history[-1], MatchOver)


def test_R79_hands_ends_after_n_scored_smazzate() -> None:
    game = _match(9, match_end="hands:3")
    assert game.scored_count == 3 and game.is_over()


def test_R80_voided_deals_do_not_count_towards_hands() -> None:
    game = deal(match_end="hands:1")
    run(game, [(s, "P") for s in (1, 2, 3, 4, 0)])
    assert not game.is_over() and game.scored_count == 0
    play_out(game)
    assert game.is_over() and game.scored_count == 1


def test_R81_the_match_ends_only_at_the_end_of_a_smazzata() -> None:
    game = deal(match_end="target:1")
    run(game, [(1, "rA"), (2, "P"), (3, "P"), (4, "P"), (0, "P")])
    act(game, 1, "sd")
    events = play_out(game)
    assert events[-1].kind == "match_over" and events[-2].kind == "scored"


def test_R82_competition_ranking() -> None:
    assert competition_positions([7, 3, 3, -5, -8]) == (1, 2, 2, 4, 5)
    assert competition_positions([0, 0, 0, 0, 0]) == (1, 1, 1, 1, 1)
    assert competition_positions([-1, 4, 4, 4, 2]) == (5, 1, 1, 1, 4)


@pytest.mark.parametrize(
    ("totals", "top", "seed000"),
    [
        ([7, 3, 3, -5, -8], [0], [0, 1, 2]),
        ([4, 1, -1, -1, -3], [0], [0, 1]),
        ([8, -2, -2, -2, -2], [0], [0]),
        ([5, 5, -2, -3, -5], [0, 1], [0, 1]),
        ([0, 0, 0, 0, 0], [0, 1, 2, 3, 4], [0, 1, 2, 3, 4]),
    ],
)
def test_R83_R84_winners(totals: list[int], top: list[int], seed000: list[int]) -> None:
    assert list(match_winners(totals, "top")) == top
    assert list(match_winners(totals, "seed000")) == seed000


def test_R83_match_over_event_lists_winners_and_positions() -> None:
    game = _match(4, match_end="hands:3", winners="seed000")
    over = game.history[-1]
    assert isinstance(over, MatchOver)
    assert over.winners == match_winners(game.totals, "seed000")
    assert over.positions == competition_positions(game.totals)
