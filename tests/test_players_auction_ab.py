"""The paired auction comparison (game.players.auction_ab): forks only where a bid differs."""

from __future__ import annotations

from typing import Any

import pytest

from game.arena import deal_seed_of, play_deal
from game.options import TableOptions
from game.players import Player, create_player
from game.players.auction_ab import VariantStats, parse_settings, play_seat, report
from game.players.expert import ExpertPlayer

TABLE = TableOptions().model_copy(update={"match_end": "hands:1"})
SMALL: dict[str, Any] = {"budget": 2000}
DEAL_SEED = deal_seed_of(900, 0)


def _arena_player(kind: str, seed: int) -> Player:
    return ExpertPlayer(seed, **SMALL) if kind == "expert" else create_player(kind, seed)


def test_a_variant_that_bids_alike_never_forks() -> None:
    base, outcomes = play_seat(DEAL_SEED, 0, TABLE, [{"call_margin": -0.1}], SMALL)
    assert outcomes == [base] and not base.forked and base.score == 0.0


def test_a_variant_that_bids_otherwise_plays_its_own_smazzata() -> None:
    seat = 0
    eager: dict[str, Any] = {"call_margin": -5.0}  # calls with any hand
    base, [variant] = play_seat(DEAL_SEED, seat, TABLE, [eager], SMALL)
    assert variant.forked and variant.chiamante
    # the base's smazzata is the arena's, and so is the variant's with the variant seated
    types = ["expert" if s == seat else "search" for s in range(5)]
    arena = play_deal(DEAL_SEED, types, TABLE, DEAL_SEED, make=_arena_player)
    assert base.score == arena.deltas[seat] and base.chiamante == (arena.chiamante == seat)

    def eager_player(kind: str, seed: int) -> Player:
        if kind == "expert":
            return ExpertPlayer(seed, **SMALL, **eager)
        return create_player(kind, seed)

    arena = play_deal(DEAL_SEED, types, TABLE, DEAL_SEED, make=eager_player)
    assert variant.score == arena.deltas[seat] and arena.chiamante == seat


def test_settings_are_read_and_checked() -> None:
    assert parse_settings("call_margin=-0.35,bid_candidates=4") == {
        "call_margin": -0.35,
        "bid_candidates": 4,
    }
    with pytest.raises(TypeError):
        parse_settings("no_such_setting=1")
    with pytest.raises(ValueError):
        parse_settings("call_margin")


def test_the_report_gives_the_difference_and_the_forked_contracts() -> None:
    eager = VariantStats([0.4, 0.0, -0.1], smazzate=15, forks=3, won=2, made=1, targets=130)
    alike = VariantStats([0.0, 0.0, 0.0], smazzate=15)
    text = report(["call_margin=-0.5", "call_margin=-0.1"], [eager, alike])
    header, first, second = text.split("\n")
    assert "minus base" in header
    assert first.split()[:2] == ["call_margin=-0.5", "+0.1000"] and "3/15" in first
    assert "2 / 50% / 65.0 (0 / - / -)" in first
    assert second.split()[1] == "+0.0000" and "0/15" in second
