"""§13 six players (R94–R97, R112, R126) and §6.7 a punti (R44–R46, R117, R118)."""

from __future__ import annotations

import random

import pytest

from game import Game, IllegalAction, TableOptions
from game.cards import CARD_POINTS, Rank
from game.engine import obbligato_ranks
from game.events import AuctionWon, SmazzataScored, SuitDeclared, TrumpRevealed
from game.options import Ruleset
from game.scoring import score_contract, seat_deltas
from tests.core.helpers import (
    SCORING_VECTORS,
    act,
    cards,
    codes,
    deal_variant,
    play_out,
    run,
    score_vector,
)

SIX_SEAT_CASES = [case for case in SCORING_VECTORS if case["options"]["players"] == 6]


def six(fixed=None, dealer=0, **options) -> Game:
    return deal_variant(fixed, dealer, players=6, **options)


# ---------------------------------------------------------------- six players


def test_R94_six_players_36_cards_without_4s_six_each_six_tricks() -> None:
    rules = Ruleset.for_options(TableOptions(players=6))
    assert len(rules.deck) == 36 and all(c % 10 != Rank.QUATTRO for c in rules.deck)
    assert sum(CARD_POINTS[c] for c in rules.deck) == 120
    game = Game.new(TableOptions(players=6, match_end="hands:1"), random.Random(1))
    assert game.n == 6 and all(len(hand) == 6 for hand in game.hands)
    play_out(game)
    assert len([e for e in game.history if e.kind == "trick_won"]) == 6


def test_R94_deal_one_at_a_time_from_next_dealer() -> None:
    rules = Ruleset.for_options(TableOptions(players=6))
    deck = list(rules.deck)
    random.Random(5).shuffle(deck)
    game = Game.with_deck(TableOptions(players=6), 2, deck)
    for i, card in enumerate(deck):
        assert card in game.hands[(2 + 1 + i) % 6]


def test_R95_rank_calls_without_4_and_auction_ends_after_five_passes() -> None:
    game = six()
    ranks = [c for c in codes(game, 1) if c.startswith("r")]
    assert ranks == ["rA", "r3", "rR", "rC", "rF", "r7", "r6", "r5"]
    with pytest.raises(IllegalAction) as error:
        act(game, 1, "r4")
    assert error.value.code == "rank_not_in_game"
    events = run(game, [(1, "r7"), (2, "P"), (3, "P"), (4, "P"), (5, "P")])
    assert not any(isinstance(e, AuctionWon) for e in events)
    events = run(game, [(0, "P")])
    assert isinstance(events[-1], AuctionWon) and events[-1].seat == 1


def test_R95_R112_obbligato_order_skips_the_4() -> None:
    order = Ruleset.for_options(TableOptions(players=6)).obbligato_order
    assert [r.code for r in order] == ["2", "5", "6", "7", "F", "C", "R", "3", "A"]
    # holding 2 and 5 of Coppe, the obbligato rank is the 6 (there is no 4c)
    assert obbligato_ranks(cards("2c 5c Ad 3d Rs Cb"), order) == {int(Rank.SEI): [0]}
    game = six({1: "2c 5c Ad 3d Rs Cb"})
    assert "o6.61" in codes(game, 1) and "o4.61" not in codes(game, 1)


def test_R112_after_rank_5_no_lower_rank_call_with_six() -> None:
    game = six()
    act(game, 1, "r5")
    assert not [c for c in codes(game, 2) if c.startswith("r")]


def test_R112_monte_needs_six_lisci() -> None:
    game = six({1: "7c 6c 5c 2c 7d 6d"}, monte=True)
    assert "M" in codes(game, 1)
    other = six({1: "7c 6c 5c 2c 7d Fd"}, monte=True)
    assert "M" not in codes(other, 1)


def test_R96_calling_side_two_against_four_solo_against_five() -> None:
    result = score_contract(
        kind="rank",
        points=61,
        in_mano=False,
        caller_points=70,
        players=6,
        tie_goes_to_caller=False,
        cappotto="double",
    )
    deltas = seat_deltas(result, 6, 0, 3)
    assert deltas == (3, -1, -1, 1, -1, -1)
    solo = score_contract(
        kind="rank",
        points=61,
        in_mano=True,
        caller_points=70,
        players=6,
        tie_goes_to_caller=False,
        cappotto="double",
    )
    assert seat_deltas(solo, 6, 2, None) == (-1, -1, 5, -1, -1, -1)


@pytest.mark.parametrize("case", SIX_SEAT_CASES, ids=[c["name"] for c in SIX_SEAT_CASES])
def test_R97_six_seat_scoring_vectors_spread_over_the_table(case: dict) -> None:
    result = score_vector(case)
    expected = case["expected"]
    socio = None if expected["socio"] is None else 4
    deltas = seat_deltas(result, 6, 1, socio)
    assert deltas[1] == expected["chiamante"]
    if socio is not None:
        assert deltas[4] == expected["socio"]
    others = [d for s, d in enumerate(deltas) if s not in (1, socio)]
    assert others == [expected["each_opponent"]] * (6 - (1 if socio is None else 2))
    assert sum(deltas) == 0


def test_R97_R126_engine_scores_six_players_with_units_of_one() -> None:
    for seed in range(20):
        game = Game.new(TableOptions(players=6, match_end="hands:1"), random.Random(seed))
        play_out(game, random.Random(seed))
        scored = next(e for e in game.history if isinstance(e, SmazzataScored))
        unit = scored.multiplier * (1 if scored.won else -1)
        for seat, delta in enumerate(scored.deltas):
            if seat == scored.chiamante:
                assert delta == unit * (5 if scored.socio is None else 3)
            elif seat == scored.socio:
                assert delta == unit
            else:
                assert delta == -unit
        assert sum(scored.deltas) == 0


# ---------------------------------------------------------------- a punti


@pytest.mark.parametrize("players", [4, 5, 6])
def test_R44_R117_point_calls_replace_rank_two_and_obbligato_calls(players: int) -> None:
    game = deal_variant({1: "2c 5c Ad 3d"}, 0, None, players=players, a_punti=True, a_carichi=True)
    seat = game.current_seat()
    legal = codes(game, seat)
    assert legal == ["P", "K", *(f"n{n}" for n in range(61, 121))]
    for bad in ("rA", "t61", "o5.61"):
        with pytest.raises(IllegalAction) as error:
            act(game, seat, bad)
        assert error.value.code == "option_disabled"


def test_R44_each_point_call_must_exceed_the_current_one_and_120_leaves_pass() -> None:
    game = deal_variant(a_punti=True)
    act(game, 1, "n70")
    assert codes(game, 2)[:2] == ["P", "n71"]
    with pytest.raises(IllegalAction) as error:
        act(game, 2, "n70")
    assert error.value.code == "points_too_low"
    act(game, 2, "n120")
    assert codes(game, 3) == ["P"]
    assert game.view(3).min_call_points is None


def test_R44_auction_ends_as_usual_after_the_others_pass() -> None:
    game = deal_variant(a_punti=True)
    events = run(game, [(1, "n65"), (2, "P"), (3, "P"), (4, "P"), (0, "P")])
    assert events[-1] == AuctionWon(1, "punti", None, 65)


def test_R45_chiamante_names_the_whole_card_rank_and_suit_together() -> None:
    game = deal_variant({3: "Rb 2c 3c 4c 5c 6c 7c Fc"}, a_punti=True)
    run(game, [(1, "n65"), (2, "P"), (3, "P"), (4, "P"), (0, "P")])
    assert len(codes(game, 1)) == 40 and codes(game, 1)[0] == "dAc"
    with pytest.raises(IllegalAction) as error:
        act(game, 1, "sb")
    assert error.value.code == "name_a_card"
    events = act(game, 1, "dRb")
    assert SuitDeclared(1, 3, cards("Rb")[0], False) in events
    assert TrumpRevealed(3, cards("Rb")[0]) in events
    view = game.view(2)
    assert view.trump == 3 and view.called_card == cards("Rb")[0]
    assert view.contract_rank == int(Rank.RE)
    assert game.socio == 3


def test_R45_al_buio_announces_the_rank_and_hides_the_suit() -> None:
    game = deal_variant(a_punti=True, al_buio=True)
    run(game, [(1, "n65"), (2, "P"), (3, "P"), (4, "P"), (0, "P"), (1, "dCs")])
    other = game.view(2)
    assert other.contract_rank == int(Rank.CAVALLO)
    assert other.trump is None and other.called_card is None
    assert game.view(1).trump == 2


def test_R46_point_contract_scored_as_2_a_n() -> None:
    game = deal_variant(a_punti=True)
    run(game, [(1, "n75"), (2, "P"), (3, "P"), (4, "P"), (0, "P"), (1, "dAb")])
    scored = next(e for e in play_out(game) if isinstance(e, SmazzataScored))
    two = score_contract(
        kind="two",
        points=75,
        in_mano=scored.in_mano,
        caller_points=scored.caller_points,
        players=5,
        tie_goes_to_caller=False,
        cappotto="double",
    )
    assert scored.contract == "punti" and scored.points == 75 and scored.target == 75
    assert scored.multiplier == two.multiplier and scored.won == two.won


def test_R117_R30_does_not_apply_under_a_punti() -> None:
    game = deal_variant({1: "Ac Ad As Ab 2c 3c 4c 5c"}, a_punti=True, in_mano=False)
    assert "n61" in codes(game, 1)


def test_R118_named_card_must_be_in_the_deck_in_play() -> None:
    game = deal_variant(None, 0, None, players=6, a_punti=True)
    run(game, [(1, "n61"), (2, "P"), (3, "P"), (4, "P"), (5, "P"), (0, "P")])
    assert "d4c" not in codes(game, 1) and len(codes(game, 1)) == 36
    with pytest.raises(IllegalAction) as error:
        act(game, 1, "d4c")
    assert error.value.code == "card_not_in_game"


def test_R118_own_card_is_in_mano_only_with_in_mano_on() -> None:
    game = deal_variant({1: "Ab 2c 3c 4c 5c 6c 7c Fc"}, a_punti=True)
    run(game, [(1, "n61"), (2, "P"), (3, "P"), (4, "P"), (0, "P"), (1, "dAb")])
    assert game.in_mano and game.socio is None and game.trump == 3
    closed = deal_variant({1: "Ab 2c 3c 4c 5c 6c 7c Fc"}, a_punti=True, in_mano=False)
    run(closed, [(1, "n61"), (2, "P"), (3, "P"), (4, "P"), (0, "P")])
    assert "dAb" not in codes(closed, 1) and len(codes(closed, 1)) == 32
    with pytest.raises(IllegalAction) as error:
        act(closed, 1, "dAb")
    assert error.value.code == "in_mano_disabled"


def test_R118_tie_goes_to_caller_applies_at_61() -> None:
    game = deal_variant(a_punti=True, tie_goes_to_caller=True)
    run(game, [(1, "n61"), (2, "P"), (3, "P"), (4, "P"), (0, "P"), (1, "dAb")])
    scored = next(e for e in play_out(game) if isinstance(e, SmazzataScored))
    assert scored.target == 60
