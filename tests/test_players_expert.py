"""The ``esperto`` auction: the chance of making a call is corrected for the auction's
optimism (the winning bidder's estimate was measured ~0.13 too high, see expert.py)."""

from __future__ import annotations

import random

from game.engine import Game
from game.options import TableOptions
from game.players.auction_check import play_contract, summary
from game.players.expert import CALL_MARGIN, ExpertPlayer
from game.players.heuristic import HeuristicPlayer
from game.players.search import SearchPlayer
from game.view import View


def _auction_views(count: int) -> list[View]:
    """Auction decisions of random deals, after the heuristic players' first actions."""
    views: list[View] = []
    options = TableOptions(match_end="hands:1")
    for case in range(count):
        game = Game.new(options, random.Random(case))
        field = HeuristicPlayer(case)
        for _ in range(case % 4):
            seat = game.current_seat()
            assert seat is not None
            game.apply(seat, field.choose(game.view(seat)))
        if game.phase.value != "auction":
            continue
        seat = game.current_seat()
        assert seat is not None
        views.append(game.view(seat))
    return views


def test_a_cautious_esperto_never_calls_where_the_plain_one_passes() -> None:
    plain_calls = 0
    lowered = 0
    for i, view in enumerate(_auction_views(24)):
        plain = ExpertPlayer(i, budget=2000, shift=0.0, shift_doubled=0.0, call_margin=0.25)
        cautious = ExpertPlayer(i, budget=2000, shift=0.1, shift_doubled=0.2, call_margin=0.25)
        a = plain.choose(view).code
        b = cautious.choose(view).code
        plain_calls += a not in ("P", "M")
        if a == "P":
            assert b == "P"
        # the same deals are rolled out: every estimate is the plain one, lowered
        for code, p in cautious.last_bid_p.items():
            if code in plain.last_bid_p:
                assert p <= plain.last_bid_p[code]
                lowered += p < plain.last_bid_p[code]
    assert plain_calls > 0  # the cases include hands worth a call
    assert lowered > 0


def test_the_default_correction_lowers_an_optimistic_estimate() -> None:
    """Most for the doubled contracts (71 and up), where the optimism was largest."""
    player = ExpertPlayer(0)
    assert player._bid_p(0.7, 61) < 0.7
    assert player._bid_p(0.7, 71) < player._bid_p(0.7, 70)
    assert player._bid_p(0.0, 81) >= 0.0 and player._bid_p(1.0, 61) <= 1.0
    assert player._bid_p(0.5, 64) < player._bid_p(0.6, 64) < player._bid_p(0.8, 64)


def test_the_auction_check_sets_each_estimate_against_its_contract() -> None:
    def tiny(seed: int) -> SearchPlayer:
        return SearchPlayer(
            seed, budget=300, min_worlds=2, max_worlds=4, bid_candidates=2, auction_worlds=6
        )

    contracts = [play_contract(seed, tiny) for seed in range(4)]
    weighed = [c for c in contracts if c.estimate is not None]
    assert weighed  # the search weighed the call it won with
    for contract in contracts:
        assert contract.target >= 60
        assert (contract.score > 0) == contract.made
        assert contract.estimate is None or 0.0 <= contract.estimate <= 1.0
    table = summary(contracts).splitlines()
    assert table[-1].split()[:2] == ["all", str(len(contracts))]


def test_esperto_calls_a_little_below_zero_because_passing_costs() -> None:
    """Passing is worth about −0.14 a smazzata (the chiamante gains on average), so
    ``esperto`` makes a call from an expected score just below 0; every call the
    ``forte`` margin (0.25) makes, it makes too, and some more."""
    assert CALL_MARGIN < 0.0
    more = 0
    for i, view in enumerate(_auction_views(24)):
        careful = ExpertPlayer(i, budget=2000, call_margin=0.25).choose(view).code
        bolder = ExpertPlayer(i, budget=2000).choose(view).code
        if careful != "P":
            assert bolder == careful  # the same estimates: the same best call
        more += careful == "P" and bolder != "P"
    assert more > 0


def test_the_auction_rolls_out_more_calls_on_as_many_deals_as_the_budget_pays_for() -> None:
    """The auction spends the budget like the play (``forte``: 3 calls on at most 50
    deals, whatever its budget)."""
    rolled = 0
    for i, view in enumerate(_auction_views(12)):
        wide = ExpertPlayer(i, budget=30_000, candidates=2)
        narrow = ExpertPlayer(i, budget=30_000, candidates=2, bid_candidates=3, auction_worlds=50)
        wide.bid_values(view, random.Random(i))
        narrow.bid_values(view, random.Random(i))
        if wide.last_worlds == 0:
            continue  # a hopeless hand passes without rollouts, whatever the settings
        rolled += 1
        assert narrow.last_worlds <= 50 and 100 <= wide.last_worlds <= 30_000 // 40
    assert rolled
