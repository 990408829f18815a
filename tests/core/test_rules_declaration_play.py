"""R47–R67: declaration, briscola and socio; the play; what each seat may see."""

from __future__ import annotations

import pytest

from game import IllegalAction
from game.cards import parse_card, trick_winner_index
from game.engine import Phase
from game.events import PartnerRevealed, SuitDeclared, TrickWon, TrumpRevealed
from tests.core.helpers import act, cards, codes, deal, kinds, play_out, run

# dealer 0: seat 1 opens the auction and leads trick 1.
TABLE = {
    1: "Ad 4c 5c 6c 4s 5s 6s 7s",
    2: "3d 4d 5d 6d 7d Fd Cd 2d",
    3: "Ab 2b 3b Rb Cb Fb 7b 6b",
    4: "Rd Ac 3c Rc Cc Fc 2c 4b",
    0: "7c As 3s Rs Cs Fs 2s 5b",
}
PASSES = [(2, "P"), (3, "P"), (4, "P"), (0, "P")]


def contract(bid: str, suit: str | None, **options: object):
    game = deal(dict(TABLE), **options)
    run(game, [(1, bid), *PASSES])
    if suit is not None:
        act(game, 1, "s" + suit)
    return game


def c(code: str) -> int:
    return parse_card(code)


def test_R47_called_card_and_briscola_announced_at_once() -> None:
    game = deal(dict(TABLE))
    run(game, [(1, "rA"), *PASSES])
    events = act(game, 1, "sb")
    assert kinds(events) == ["suit_declared", "trump_revealed"]
    assert events[1] == TrumpRevealed(3, c("Ab"))
    assert game.view(None).trump == 3 and game.view(None).called_card == c("Ab")
    # A 2-call names the 2 of the suit.
    game = contract("t70", "c")
    assert game.called_card == c("2c")


def test_R48_obbligato_suit_must_match_the_obbligato_rank() -> None:
    game = deal({1: "2c 4c 5c Ad 3d 7s 2b Rb"})
    run(game, [(1, "o4.61"), *PASSES])
    assert codes(game, 1) == ["sb"]
    with pytest.raises(IllegalAction) as info:
        act(game, 1, "sc")
    assert info.value.code == "suit_not_allowed"


def test_R49_calling_in_mano_is_solo_and_secret() -> None:
    game = contract("rA", "d")  # seat 1 holds Ad
    assert game.in_mano and game.socio is None
    assert game.view(1).solo is True
    for seat in (None, 0, 2, 3, 4):
        assert game.view(seat).solo is None and game.view(seat).socio is None


def test_R50_without_in_mano_the_called_card_must_be_lacking() -> None:
    game = deal(dict(TABLE), in_mano=False)
    run(game, [(1, "rA"), *PASSES])
    assert codes(game, 1) == ["sc", "ss", "sb"]
    with pytest.raises(IllegalAction) as info:
        act(game, 1, "sd")
    assert info.value.code == "in_mano_disabled"


def test_R51_the_holder_of_the_called_card_is_socio_and_only_they_know() -> None:
    game = contract("rA", "b")  # Ab is in seat 3's hand
    assert game.socio == 3
    assert game.view(3).socio == 3 and game.view(3).solo is False
    for seat in (None, 0, 1, 2, 4):
        assert game.view(seat).socio is None


def test_R52_al_buio_suit_secret_until_trick_one_but_used_in_it() -> None:
    game = contract("rA", "b", al_buio=True)
    assert game.view(None).trump is None and game.view(2).trump is None
    assert game.view(1).trump == 3  # the chiamante knows
    assert game.view(3).socio is None  # the holder of Ab cannot know the suit yet
    events = run(game, [(1, "cAd"), (2, "c3d"), (3, "c2b"), (4, "cRd"), (0, "c7c")])  # T6
    assert game.view(None).trump == 3
    won = next(e for e in events if isinstance(e, TrickWon))
    assert won.seat == 3  # the 2 of the secret briscola took the trick


def test_R53_al_buio_end_of_trick_one_order() -> None:
    game = contract("rA", "b", al_buio=True)
    events = run(game, [(1, "cAd"), (2, "c3d"), (3, "cAb"), (4, "cRd"), (0, "c7c")])
    tail = [e for e in events if e.kind != "card_played"]
    assert tail == [
        TrumpRevealed(3, c("Ab")),
        PartnerRevealed(3, False),
        TrickWon(0, 3, 1, tuple(cards("Ad 3d Ab Rd 7c")), 11 + 10 + 11 + 4),
    ]


def test_R54_al_buio_does_nothing_under_a_carichi() -> None:
    game = deal(dict(TABLE), al_buio=True, a_carichi=True)
    act(game, 1, "K")
    events = play_out(game)
    assert not any(e.kind in ("suit_declared", "trump_revealed") for e in events)


def test_R55_eight_tricks_each_seat_one_card_in_turn_order() -> None:
    game = contract("rA", "b")
    events = play_out(game)
    tricks = [e for e in events if isinstance(e, TrickWon)]
    assert len(tricks) == 8
    played = [e for e in events if e.kind == "card_played"]
    for t in tricks:
        seats = [e.seat for e in played if e.trick == t.trick]
        assert seats == [(t.leader + i) % 5 for i in range(5)]


def test_R56_first_leader_is_next_of_dealer_whoever_calls() -> None:
    game = deal(dict(TABLE))
    run(game, [(1, "P"), (2, "P"), (3, "rA"), (4, "P"), (0, "P"), (3, "sb")])
    assert game.current_seat() == 1


def test_R57_led_suit_is_the_suit_of_the_first_card() -> None:
    game = contract("rA", "b", follow_suit=True)
    act(game, 1, "c4s")
    assert len(codes(game, 2)) == 8  # seat 2 has no spade: any card
    act(game, 2, "c3d")
    assert codes(game, 3) == ["cAb", "c2b", "c3b", "cRb", "cCb", "cFb", "c7b", "c6b"]
    act(game, 3, "c6b")
    act(game, 4, "cAc")
    assert codes(game, 0) == ["cAs", "c3s", "cRs", "cCs", "cFs", "c2s"]  # follows spades


def test_R58_follow_suit_only_when_on_and_no_obligation_to_overtake() -> None:
    free = contract("rA", "b")
    act(free, 1, "c4s")
    act(free, 2, "c3d")
    act(free, 3, "c6b")
    act(free, 4, "cAc")
    assert len(codes(free, 0)) == 8  # off: anything
    forced = contract("rA", "c", follow_suit=True)  # T5: briscola Coppe
    act(forced, 1, "c7s")
    act(forced, 2, "c3d")
    act(forced, 3, "c6b")
    act(forced, 4, "c2c")
    legal = codes(forced, 0)
    assert "c2s" in legal and "c7c" not in legal  # may play under, may not trump


@pytest.mark.parametrize(
    ("trump", "trick", "winner"),
    [
        ("d", "Ac 3c 2d Rc As", 2),  # T1
        ("d", "5s 3s Ab 7s Cs", 1),  # T2
        ("s", "7s 3c As 2s Rb", 2),  # T3
        (None, "4b Ab 2b 3c Rb", 1),  # T4 (a carichi)
    ],
)
def test_R59_trick_winner(trump: str | None, trick: str, winner: int) -> None:
    suit = None if trump is None else "cdsb".index(trump)
    assert trick_winner_index(cards(trick), suit) == winner


def test_R60_the_winner_captures_and_leads_next() -> None:
    game = contract("rA", "d")
    events = run(game, [(1, "c4s"), (2, "c3d"), (3, "c6b"), (4, "cAc"), (0, "cAs")])
    won = events[-1]
    assert isinstance(won, TrickWon) and won.seat == 2 and won.points == 10 + 11 + 11
    assert game.current_seat() == 2 and game.captured[2] == 32


def test_R61_playing_the_called_card_reveals_the_socio_or_in_mano() -> None:
    game = contract("rA", "b")
    run(game, [(1, "c4s"), (2, "c3d")])
    events = act(game, 3, "cAb")
    assert events[-1] == PartnerRevealed(3, False)
    assert all(game.view(s).socio == 3 for s in (None, 0, 1, 2, 4))
    solo = contract("rA", "d")
    events = act(solo, 1, "cAd")
    assert events[-1] == PartnerRevealed(1, True)
    assert solo.view(None).solo is True


def test_R62_after_the_eighth_trick_the_smazzata_is_scored() -> None:
    game = contract("rA", "b", match_end="hands:2")
    events = play_out(game)
    assert kinds(events)[-3:] == ["trick_won", "scored", "dealt"]
    assert game.phase is Phase.AUCTION and game.scored_count == 1


# --- information (R63–R67) ------------------------------------------------------------


def test_R63_each_seat_sees_only_its_own_hand() -> None:
    game = contract("rA", "b")
    for seat in range(5):
        assert list(game.view(seat).hand) == game.hands[seat]
    assert game.view(None).hand == ()


def test_R64_contract_rank_public_at_auction_end_suit_when_announced() -> None:
    game = deal(dict(TABLE), al_buio=True)
    run(game, [(1, "rA"), *PASSES])
    view = game.view(None)
    assert view.contract == "rank" and view.contract_rank == 0 and view.trump is None
    act(game, 1, "sb")
    assert game.view(4).trump is None and game.view(1).trump == 3


def test_R65_played_cards_and_trick_winners_are_public() -> None:
    game = contract("rA", "d")
    run(game, [(1, "c4s"), (2, "c3d"), (3, "c6b"), (4, "cAc"), (0, "cAs")])
    view = game.view(None)
    assert view.tricks[0].plays == (
        (1, c("4s")),
        (2, c("3d")),
        (3, c("6b")),
        (4, c("Ac")),
        (0, c("As")),
    )
    assert view.tricks[0].winner == 2


def _two_worlds(socio_seat: int):
    """Same public history, the called card Ab with seat 3 or seat 4 (their hands swap 1 card)."""
    table = dict(TABLE)
    if socio_seat == 4:
        table[3] = table[3].replace("Ab", "4b")
        table[4] = table[4].replace("4b", "Ab")
    game = deal(table)
    run(game, [(1, "rA"), *PASSES, (1, "sb")])
    run(game, [(1, "c4s"), (2, "c3d"), (3, "c6b"), (4, "cAc"), (0, "cAs")])
    return game


def test_R66_nothing_public_depends_on_who_holds_the_called_card() -> None:
    a, b = _two_worlds(3), _two_worlds(4)
    assert a.socio == 3 and b.socio == 4
    for seat in (None, 0, 1, 2):
        assert a.view(seat) == b.view(seat)
    assert not hasattr(a.view(None), "captured")


def test_R67_everything_is_revealed_at_the_end() -> None:
    game = contract("rA", "b")
    events = play_out(game)
    scored = next(e for e in events if e.kind == "scored")
    assert scored.chiamante == 1 and scored.socio == 3 and scored.called_card == c("Ab")
    taken = sum(e.points for e in events if isinstance(e, TrickWon) and e.seat in (1, 3))
    assert scored.caller_points == taken
    assert sum(scored.deltas) == 0 and game.view(0).last_scored == scored


def test_suit_declared_is_secret_only_under_al_buio() -> None:
    open_game = contract("rA", "b")
    secret = contract("rA", "b", al_buio=True)
    open_event = next(e for e in open_game.history if isinstance(e, SuitDeclared))
    secret_event = next(e for e in secret.history if isinstance(e, SuitDeclared))
    assert open_event.visible_to(None) and open_event.visible_to(2)
    assert not secret_event.visible_to(None) and not secret_event.visible_to(2)
    assert secret_event.visible_to(1)
