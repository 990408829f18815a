"""R16–R43: monte, the auction, chiamata obbligata and a carichi."""

from __future__ import annotations

import pytest

from game import IllegalAction
from game.engine import Phase, obbligato_ranks
from game.events import AuctionWon, BidMade, Dealt, DealVoided, MonteDeclared
from game.options import Ruleset, TableOptions
from tests.core.helpers import act, cards, codes, deal, kinds, run

ZERO_HAND = "7c 6c 5d 4d 2s 7s 6b 5b"  # E7: worth 0 points
E5_HAND = "2c 4c 5c Ad 3d 7s 2b Rb"


def refusal(game, seat: int, code: str) -> str:
    before = game.to_json()
    with pytest.raises(IllegalAction) as info:
        act(game, seat, code)
    assert game.to_json() == before, "a refused action changed the state"
    return info.value.code


# --- monte (R16–R19) --------------------------------------------------------------


def test_R16_monte_only_with_option_and_a_zero_point_hand() -> None:
    on = deal({4: ZERO_HAND}, monte=True)
    assert "M" in codes(on, 4)
    assert all("M" not in codes(on, s) for s in range(4))  # their hands have points
    off = deal({4: ZERO_HAND})
    assert "M" not in codes(off, 4)
    assert refusal(off, 4, "M") == "option_disabled"


def test_R17_monte_out_of_turn_even_after_passing_until_first_bid() -> None:
    game = deal({4: ZERO_HAND}, monte=True)
    act(game, 1, "P")
    act(game, 2, "P")
    act(game, 3, "P")
    act(game, 4, "P")
    assert game.current_seat() == 0 and "M" in codes(game, 4)  # passed, off turn
    act(game, 0, "rA")  # a bid is recorded: too late
    assert "M" not in codes(game, 4)


def test_R18_monte_voids_the_deal_and_the_dealer_moves_on() -> None:
    game = deal({4: ZERO_HAND}, dealer=0, monte=True)
    act(game, 1, "P")
    events = act(game, 4, "M")  # E7
    assert kinds(events) == ["monte", "voided", "dealt"]
    assert isinstance(events[1], DealVoided) and events[1].reason == "monte"
    assert game.dealer == 1 and game.totals == [0] * 5 and game.scored_count == 0


def test_R19_monte_rejections() -> None:
    game = deal({4: ZERO_HAND}, monte=True)
    assert refusal(game, 3, "M") == "monte_hand_has_points"
    act(game, 1, "r7")
    assert refusal(game, 4, "M") == "monte_after_bid"
    # The first declaration processed takes effect: the deal is then new.
    game = deal({4: ZERO_HAND, 3: "7d 6d 5c 4c 2c 4s 4b 2b"}, monte=True)
    events = act(game, 3, "M")
    assert isinstance(events[0], MonteDeclared) and events[0].seat == 3
    assert isinstance(events[-1], Dealt) and game.smazzata_index == 1


# --- calls and turns (R20–R25) -----------------------------------------------------


def test_R20_calls_available_at_the_opening() -> None:
    game = deal({1: E5_HAND}, a_carichi=True)
    legal = codes(game, 1)
    assert legal[0] == "P"
    assert [c for c in legal if c.startswith("r")] == [f"r{r}" for r in "A3RCF7654"]
    assert [c for c in legal if c.startswith("t")] == [f"t{n}" for n in range(61, 121)]
    assert {c.split(".")[0] for c in legal if c.startswith("o")} == {"o6", "o4"}
    assert "K" in legal
    assert "r2" not in legal


def test_R21_current_call_and_the_two_level() -> None:
    game = deal()
    act(game, 1, "rR")
    assert game.view(None).current_bid == "rR"
    act(game, 2, "t61")
    view = game.view(None)
    assert view.current_bid == "t61" and view.current_bidder == 2
    assert not any(c.startswith("r") for c in codes(game, 3))


def test_R22_auction_starts_with_next_of_dealer() -> None:
    for dealer in range(5):
        assert deal(dealer=dealer).current_seat() == (dealer + 1) % 5


def test_R23_turn_skips_passed_seats_and_goes_round() -> None:
    game = deal()
    run(game, [(1, "rR"), (2, "P"), (3, "r7"), (4, "t61"), (0, "t65")])
    assert game.current_seat() == 1
    act(game, 1, "P")
    assert game.current_seat() == 3  # seat 2 has passed and is skipped


def test_R24_a_pass_is_final() -> None:
    game = deal()
    run(game, [(1, "P"), (2, "rA"), (3, "P"), (4, "P"), (0, "r3")])
    assert game.current_seat() == 2
    assert codes(game, 1) == []
    assert refusal(game, 1, "t70") == "already_passed"


def test_R25_every_call_is_public_but_the_obbligato_suit() -> None:
    game = deal({1: E5_HAND})
    run(game, [(1, "o6.61"), (2, "P")])
    for seat in (None, 0, 3):
        assert game.view(seat).auction == ((1, "o6.61"), (2, "P"))
    assert all("c" not in code[1:] for _, code in game.view(None).auction)


# --- legal bids (R26–R30) -----------------------------------------------------------


def test_R26_rank_calls_go_strictly_lower_and_stop_at_the_two_level() -> None:
    game = deal()
    act(game, 1, "rR")
    assert [c for c in codes(game, 2) if c.startswith("r")] == [f"r{r}" for r in "CF7654"]
    assert refusal(game, 2, "rR") == "rank_not_lower"
    assert refusal(game, 2, "r3") == "rank_not_lower"
    act(game, 2, "t61")
    assert refusal(game, 3, "r4") == "rank_at_two_level"


def test_R27_two_calls_range_and_raises() -> None:
    game = deal()
    act(game, 1, "t70")  # opening at 2 a 70 is legal
    legal = codes(game, 2)
    assert "t70" not in legal and "t71" in legal and "t120" in legal
    assert refusal(game, 2, "t70") == "points_too_low"
    after_plain = deal()
    act(after_plain, 1, "t61")
    assert refusal(after_plain, 2, "t61") == "points_too_low"
    act(after_plain, 2, "t62")


def test_R28_only_higher_two_level_bids_carichi_and_pass_at_the_two_level() -> None:
    game = deal({2: E5_HAND}, a_carichi=True)
    act(game, 1, "t65")
    legal = set(codes(game, 2))
    expected = {"P", "K"} | {f"t{n}" for n in range(66, 121)}
    expected |= {f"o{r}.{n}" for r in "64" for n in range(66, 121)}
    assert legal == expected


def test_R29_at_two_a_120_only_pass_and_carichi() -> None:
    game = deal(a_carichi=True)
    act(game, 1, "t120")
    assert set(codes(game, 2)) == {"P", "K"}
    game = deal()
    act(game, 1, "t120")
    assert codes(game, 2) == ["P"]


def test_R30_without_in_mano_no_call_of_a_rank_whose_four_cards_are_held() -> None:
    hand = "Rc Rd Rs Rb 2c 2d 2s 2b"
    game = deal({1: hand}, in_mano=False)
    legal = codes(game, 1)
    assert "rR" not in legal and not any(c.startswith("t") for c in legal)
    assert refusal(game, 1, "rR") == "holds_all_four"
    assert refusal(game, 1, "t61") == "holds_all_four"
    assert "rA" in legal
    assert "rR" in codes(deal({1: hand}), 1)  # with in mano allowed, it is fine


# --- end of the auction (R31–R33) ----------------------------------------------------


def test_R31_auction_ends_after_four_passes_following_a_bid() -> None:
    game = deal()
    events = run(game, [(1, "r3"), (2, "P"), (3, "P"), (4, "P"), (0, "P")])  # E3
    won = events[-1]
    assert isinstance(won, AuctionWon) and (won.seat, won.contract, won.rank) == (1, "rank", 1)
    assert game.phase is Phase.DECLARATION and game.current_seat() == 1


def test_R32_everyone_passing_voids_the_deal() -> None:
    game = deal(dealer=0)
    events = run(game, [(s, "P") for s in (1, 2, 3, 4, 0)])  # E2
    assert kinds(events)[-2:] == ["voided", "dealt"]
    assert game.dealer == 1 and game.scored_count == 0


def test_R33_last_seat_gets_a_turn_and_any_bid_ends_the_auction() -> None:
    game = deal(dealer=0)
    run(game, [(1, "P"), (2, "P"), (3, "P"), (4, "P")])
    assert game.current_seat() == 0
    events = act(game, 0, "rA")  # E4
    assert isinstance(events[-1], AuctionWon) and events[-1].seat == 0
    # E1 in full.
    game = deal(dealer=0)
    run(
        game,
        [
            (1, "rR"),
            (2, "P"),
            (3, "r7"),
            (4, "t61"),
            (0, "t65"),
            (1, "P"),
            (3, "t70"),
            (4, "P"),
            (0, "t72"),
        ],
    )
    events = act(game, 3, "P")
    assert isinstance(events[-1], AuctionWon)
    assert (events[-1].seat, events[-1].contract, events[-1].points) == (0, "two", 72)


# --- chiamata obbligata (R34–R39) -----------------------------------------------------


def test_R34_obbligato_rank_is_the_lowest_rank_not_held() -> None:
    order = Ruleset.for_options(TableOptions()).obbligato_order
    assert obbligato_ranks(cards(E5_HAND), order) == {6: [0], 8: [3]}  # 6 of Coppe, 4 of Bastoni
    assert obbligato_ranks(cards("2d 4d Ac Ab 3c 3b Rc Rb"), order) == {7: [1]}  # seed 002: 5
    assert obbligato_ranks(cards("2c 4c 5c 6c 7c Fc Cc Rc"), order) == {1: [0]}  # the 3


def test_R35_obbligato_legal_wherever_a_two_call_is() -> None:
    game = deal({1: E5_HAND, 2: "3c Rc Cd Fd As 3s Cb Fb"})
    assert "o6.61" in codes(game, 1) and "o4.120" in codes(game, 1)  # as the opening call
    act(game, 1, "o4.70")
    assert game.view(None).current_bid == "o4.70"
    assert refusal(game, 2, "o6.75") == "not_obbligato_rank"  # seat 2 holds no 2 at all
    assert not any(c.startswith("o") for c in codes(game, 2))


def test_R36_obbligato_rank_is_checked_against_the_hand() -> None:
    game = deal({1: E5_HAND})
    assert refusal(game, 1, "o5.61") == "not_obbligato_rank"
    assert refusal(game, 1, "o6.60") == "unknown_action"  # no such call exists


def test_R37_obbligato_counts_as_a_two_call() -> None:
    game = deal({2: E5_HAND})
    run(game, [(1, "r5"), (2, "o6.61")])  # E8: legal after the rank call 5
    assert refusal(game, 3, "r4") == "rank_at_two_level"
    assert refusal(game, 3, "t61") == "points_too_low"
    act(game, 3, "t62")


def test_R38_an_obbligato_contract_always_has_a_socio() -> None:
    game = deal({1: E5_HAND})
    run(game, [(1, "o6.61"), (2, "P"), (3, "P"), (4, "P"), (0, "P")])
    assert codes(game, 1) == ["sc"]  # E5: must name Coppe; the called card is 6c
    events = act(game, 1, "sc")
    assert events[0].called_card == cards("6c")[0]
    assert game.socio is not None and game.socio != 1 and not game.in_mano


def test_R39_obbligato_calls_are_illegal_when_disabled() -> None:
    game = deal({1: E5_HAND}, chiamata_obbligata=False)
    assert not any(c.startswith("o") for c in codes(game, 1))
    assert refusal(game, 1, "o6.61") == "option_disabled"


def test_obbligato_options_are_the_hands_calls_for_the_rest_of_the_auction() -> None:
    """What a UI may show ahead (out of turn): the ranks of R34/R35 while the seat has
    not passed and a call at points is left; at its turn, exactly its legal calls'."""
    game = deal({1: E5_HAND, 2: "3c Rc Cc Fc As 3s Cb Fb", 3: "2s 4s 5s 6s Cd Fd 7d 6d"})
    assert sorted(game.obbligato_options(1)) == ["4", "6"]
    assert list(game.view(1).obbligato_ranks) == game.obbligato_options(1)
    assert game.obbligato_options(3) == ["7"]  # out of turn too
    assert game.obbligato_options(2) == [] and game.view(None).obbligato_ranks == ()
    ranks = sorted({c[1:].split(".")[0] for c in codes(game, 1) if c[0] == "o"})
    assert sorted(game.obbligato_options(1)) == ranks  # at its turn: its legal calls
    run(game, [(1, "r5"), (2, "t119")])
    assert sorted(game.obbligato_options(1)) == ["4", "6"]  # 120 is still open
    act(game, 3, "P")
    assert game.obbligato_options(3) == []  # passed
    act(game, 4, "t120")
    assert game.obbligato_options(1) == []  # no call at points left
    assert deal({1: E5_HAND}, chiamata_obbligata=False).obbligato_options(1) == []
    assert deal({1: E5_HAND}, a_punti=True).obbligato_options(1) == []


# --- a carichi (R40–R43) ---------------------------------------------------------------


def test_R40_a_carichi_any_time_ends_the_auction_at_once() -> None:
    for opening in ([], [(1, "t120")], [(1, "rA"), (2, "t70")]):
        game = deal(a_carichi=True)
        run(game, opening)
        seat = game.current_seat()
        assert seat is not None
        events = act(game, seat, "K")  # E6 when opening is 2 a 70
        assert isinstance(events[0], BidMade) and isinstance(events[-1], AuctionWon)
        assert (events[-1].seat, events[-1].contract, events[-1].points) == (seat, "carichi", 61)
    assert refusal(deal(), 1, "K") == "option_disabled"


def test_R41_a_carichi_has_no_trump_no_called_card_no_socio() -> None:
    game = deal(a_carichi=True)
    act(game, 1, "K")
    assert game.phase is Phase.PLAY  # no declaration
    assert game.trump is None and game.called_card is None and game.socio is None
    assert game.current_seat() == 1  # next(dealer) leads


def test_R42_a_carichi_obliges_everyone_to_follow_suit() -> None:
    game = deal({1: "4b Ac 2c 3d 2d 5s 6s 7s", 2: "Ab Rc 4c 5c 6c 7c Fc Cc"}, a_carichi=True)
    act(game, 1, "K")
    act(game, 1, "c4b")
    assert codes(game, 2) == ["cAb"]
    assert refusal(game, 2, "cRc") == "must_follow_suit"


def test_R43_a_carichi_is_scored_solo() -> None:
    from tests.core.helpers import play_out

    game = deal(a_carichi=True)
    act(game, 1, "K")
    events = play_out(game)
    scored = next(e for e in events if e.kind == "scored")
    assert scored.socio is None and scored.contract == "carichi"
    assert abs(scored.deltas[1]) == 4 * scored.multiplier
    assert sum(scored.deltas) == 0


# --- what the table knows of the calls (the group keyboard) ------------------------


def test_public_calls_follow_the_current_call_and_ignore_the_hand() -> None:
    game = deal({1: "Rc Rd Rs Rb 2c 2d 2s 2b"}, in_mano=False, a_carichi=True)
    assert [a.code for a in game.public_calls()] == ["P"] + [f"r{r}" for r in "A3RCF7654"] + ["K"]
    assert game.min_call_points() == 61
    # Seat 1 may not call the Re nor a 2 (R30), but the table cannot know that.
    assert "rR" not in codes(game, 1) and "rR" in game.view(None).public_calls
    act(game, 1, "rC")
    assert [a.code for a in game.public_calls()] == ["P", "rF", "r7", "r6", "r5", "r4", "K"]
    act(game, 2, "t70")
    view = game.view(None)
    assert view.public_calls == ("P", "K") and view.min_call_points == 71
    act(game, 3, "t120")
    assert game.min_call_points() is None and game.view(None).min_call_points is None


def test_no_public_calls_outside_the_auction() -> None:
    game = deal()
    run(game, [(1, "r3"), (2, "P"), (3, "P"), (4, "P"), (0, "P")])
    assert game.public_calls() == [] and game.min_call_points() is None
    view = game.view(None)
    assert view.public_calls == () and view.min_call_points is None
