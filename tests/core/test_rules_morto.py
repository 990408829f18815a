"""§12 and §19: chiamata with four players and il morto (R85–R93, R113–R116, R125, R126, R128)."""

from __future__ import annotations

import itertools
import random

import pytest

from game import Game, IllegalAction, TableOptions, parse_action
from game.events import CardPlayed, MatchOver, MortoSeated, PartnerRevealed, SmazzataScored
from game.scoring import match_winners, score_contract, seat_deltas
from tests.core.helpers import act, cards, codes, deal_variant, play_out, run

FOUR = TableOptions(players=4)


def morto_game(fixed=None, dealer=0, morto=4, **options) -> Game:
    return deal_variant(fixed, dealer, morto, players=4, **options)


def test_R85_four_players_use_five_seats_with_il_morto() -> None:
    game = Game.new(FOUR, random.Random(3))
    assert game.n == 5 and game.morto is not None
    assert sorted(c for hand in game.hands for c in hand) == list(range(40))
    assert all(len(hand) == 8 for hand in game.hands)
    assert game.view(None).morto == game.morto


def test_R86_morto_seat_is_random_and_fixed_for_the_match() -> None:
    seats = set()
    for seed in range(60):
        game = Game.new(TableOptions(players=4, match_end="hands:3"), random.Random(seed))
        seats.add(game.morto)
        rng = random.Random(seed)
        first = game.morto
        while not game.is_over():
            seat = game.current_seat()
            legal = game.legal_actions(seat)
            game.apply(seat, legal[rng.randrange(len(legal))])
            assert game.morto == first
        assert sum(isinstance(e, MortoSeated) for e in game.history) == 1
    assert seats == {0, 1, 2, 3, 4}


def test_R87_R125_morto_cards_hidden_in_every_view_even_the_chiamante() -> None:
    # Seat 1 calls the Asso di Bastoni, which il morto (seat 4) holds: the morto is socio.
    game = morto_game({4: "Ab 2c 3c 4c 5c 6c 7c Fc"})
    run(game, [(1, "rA"), (2, "P"), (3, "P"), (0, "P"), (1, "sb")])
    morto_cards = set(game.hands[4])
    for seat in [None, 0, 1, 2, 3, 4]:
        view = game.view(seat)
        assert not morto_cards & set(view.hand)
        if view.partner_hand is not None:
            assert not morto_cards & set(view.partner_hand)
    assert game.view(4).hand == () and game.view(4).legal == ()
    assert game.view(1).socio is None  # the chiamante does not know the morto is socio
    assert game.view(None).hand_sizes[4] == 8 - len(game.played_by[4])


def test_R88_R114_morto_never_deals_and_dealer_skips_it() -> None:
    options = TableOptions(players=4, match_end="hands:12")
    for seed in range(5):
        game = Game.new(options, random.Random(seed))
        rng = random.Random(seed)
        dealers = [game.dealer]
        while not game.is_over():
            seat = game.current_seat()
            legal = game.legal_actions(seat)
            game.apply(seat, legal[rng.randrange(len(legal))])
            if not game.is_over() and game.dealer != dealers[-1]:
                dealers.append(game.dealer)
        assert game.morto not in dealers
        humans = [s for s in range(5) if s != game.morto]
        for before, after in itertools.pairwise(dealers):
            assert after == humans[(humans.index(before) + 1) % 4]


def test_R88_R114_morto_after_the_dealer_leads_trick_1_but_does_not_bid() -> None:
    game = morto_game({1: "Ab 2c 3c 4c 5c 6c 7c Fc"}, dealer=0, morto=1)
    assert game.current_seat() == 2  # first human after the dealer
    events = run(game, [(2, "rA"), (3, "P"), (4, "P"), (0, "P"), (2, "sd")])
    first = next(e for e in events if isinstance(e, CardPlayed))
    assert first == CardPlayed(1, cards("Ab")[0], 0, True)  # il morto leads trick 1
    assert game.current_seat() == 2


def test_R89_morto_counts_as_passed_auction_ends_after_three_human_passes() -> None:
    game = morto_game(dealer=0, morto=3)
    view = game.view(None)
    assert view.passed == (False, False, False, True, False) and view.auction == ()
    assert game.current_seat() == 1
    events = run(game, [(1, "rR"), (2, "P"), (4, "P"), (0, "P")])
    assert events[-1].kind == "auction_won" and game.chiamante == 1


def test_R89_all_four_humans_passing_voids_the_deal() -> None:
    game = morto_game(dealer=0, morto=3)
    events = run(game, [(1, "P"), (2, "P"), (4, "P"), (0, "P")])
    assert [e.kind for e in events][-2:] == ["voided", "dealt"]
    assert game.dealer == 1


def test_R90_R113_morto_plays_its_first_card_in_deal_order_by_itself() -> None:
    hand = "4c Ab 2c 3c 5c 6c 7c Fc"
    game = morto_game({4: hand}, dealer=0, morto=4)
    run(game, [(1, "rR"), (2, "P"), (3, "P"), (0, "P"), (1, "sd")])
    # seats 1, 2, 3 play; seat 3's card makes il morto's turn come, within that apply
    act(game, 1, codes(game, 1)[0])
    act(game, 2, codes(game, 2)[0])
    events = game.apply(3, game.legal_actions(3)[0])
    assert CardPlayed(4, cards("4c")[0], 0, True) in events
    assert game.current_seat() == 0
    play_out(game)
    plays = [e for e in game.history if isinstance(e, CardPlayed)]
    assert [e.card for e in plays if e.seat == 4] == cards(hand)  # deal order (R13)
    assert all(e.automatic == (e.seat == 4) for e in plays)
    assert game.scored_count == 1


def test_R90_morto_seat_never_acts_and_is_exempt_from_following_suit() -> None:
    game = morto_game(
        {4: "Ab Ad As Ac 2c 3c 4c 5c", 3: "Rb Cb Fb 7b 6b 5b 4b 3b"},
        dealer=2,
        morto=4,
        follow_suit=True,
    )
    assert game.legal_actions(4) == []
    with pytest.raises(IllegalAction) as error:
        game.apply(4, parse_action("P"))
    assert error.value.code == "morto_plays_itself"
    # dealer 2: seat 3 leads trick 1, il morto follows with Ab although it holds no Bastoni
    run(game, [(3, "rR"), (0, "P"), (1, "P"), (2, "P"), (3, "sd"), (3, "cRb")])
    plays = [e for e in game.history if isinstance(e, CardPlayed)]
    assert plays[-1] == CardPlayed(4, cards("Ab")[0], 0, True)
    assert game.current_seat() == 0


def test_R90_morto_plays_its_first_card_even_when_it_could_follow() -> None:
    game = morto_game(
        {4: "Ad Ab 2c 3c 4c 5c 6c 7c", 3: "Rb Cb Fb 7b 6b 5b 4b 3b"},
        dealer=2,
        morto=4,
        follow_suit=True,
    )
    run(game, [(3, "rR"), (0, "P"), (1, "P"), (2, "P"), (3, "sc"), (3, "cRb")])
    plays = [e for e in game.history if isinstance(e, CardPlayed)]
    assert plays[-1] == CardPlayed(4, cards("Ad")[0], 0, True)  # not the Bastoni it holds


def test_R91_called_card_in_morto_hand_makes_it_socio_revealed_when_played() -> None:
    game = morto_game({4: "Ab 2c 3c 4c 5c 6c 7c Fc"}, dealer=3, morto=4)
    events = run(game, [(0, "rA"), (1, "P"), (2, "P"), (3, "P"), (0, "sb")])
    # dealer 3: il morto leads trick 1 and plays Ab at once, revealing itself as socio
    reveal = [e for e in events if isinstance(e, PartnerRevealed)]
    assert reveal == [PartnerRevealed(4, False)]
    assert game.view(2).socio == 4
    events = play_out(game)
    scored = next(e for e in events if isinstance(e, SmazzataScored))
    assert scored.socio == 4
    taken = [0] * 5
    for e in game.history:
        if e.kind == "trick_won":
            taken[e.seat] += e.points
    assert scored.caller_points == taken[0] + taken[4]


def test_R91_otherwise_morto_is_an_opponent() -> None:
    game = morto_game({1: "Ab 2c 3c 4c 5c 6c 7c Fc"}, dealer=0, morto=4)
    run(game, [(1, "rA"), (2, "P"), (3, "P"), (0, "P"), (1, "sb")])
    scored = next(e for e in play_out(game) if isinstance(e, SmazzataScored))
    assert scored.in_mano and scored.socio is None
    assert scored.deltas[4] == 0  # R116: one of the opponents, but it has no score


@pytest.mark.parametrize(
    ("points", "caller", "socio", "expected_sum"),
    [(75, 120 - 0, True, -2 * 2), (61, 61, False, 1), (61, 30, True, 1), (61, 30, False, -1)],
)
def test_R92_scores_discard_the_morto_share(points, caller, socio, expected_sum) -> None:
    kind = "two" if points > 61 else "rank"
    result = score_contract(
        kind=kind,
        points=points,
        in_mano=False,
        caller_points=caller,
        players=5,
        tie_goes_to_caller=False,
        cappotto="double",
    )
    morto = 4
    deltas = seat_deltas(result, 5, 0, 4 if socio else 1, morto)
    assert deltas[morto] == 0
    assert sum(deltas) == expected_sum
    # each human gets what the same role earns with five players
    five = seat_deltas(result, 5, 0, 4 if socio else 1)
    assert deltas[:4] == five[:4]


def test_R92_rules_example_2_a_75_with_morto_socio() -> None:
    result = score_contract(
        kind="two",
        points=75,
        in_mano=False,
        caller_points=80,
        players=5,
        tie_goes_to_caller=False,
        cappotto="double",
    )
    deltas = seat_deltas(result, 5, 0, 4, morto=4)
    assert deltas == (4, -2, -2, -2, 0) and sum(deltas) == -2


def test_R92_R116_engine_scores_only_the_humans() -> None:
    for seed in range(30):
        game = Game.new(TableOptions(players=4, match_end="hands:1"), random.Random(seed))
        play_out(game, random.Random(seed))
        scored = [e for e in game.history if isinstance(e, SmazzataScored)]
        for event in scored:
            assert event.deltas[game.morto] == 0 and event.totals[game.morto] == 0
        assert game.totals[game.morto] == 0


def test_R93_standings_and_winners_are_the_humans_only() -> None:
    game = Game.new(TableOptions(players=4, match_end="hands:2"), random.Random(7))
    rng = random.Random(1)
    while not game.is_over():
        seat = game.current_seat()
        legal = game.legal_actions(seat)
        game.apply(seat, legal[rng.randrange(len(legal))])
    final = game.history[-1]
    assert isinstance(final, MatchOver)
    assert final.positions[game.morto] == 0 and game.morto not in final.winners
    humans = sorted(p for s, p in enumerate(final.positions) if s != game.morto)
    assert humans[0] == 1
    # a morto total of 0 above every human total still does not win
    assert match_winners([-3, -1, -2, -4, 0], "top", unranked=4) == (1,)


def test_R115_morto_never_declares_monte() -> None:
    game = morto_game(
        {4: "7c 6c 5c 4c 2c 7d 6d 5d", 1: "7s 6s 5s 4s 2s 7b 6b 5b"}, dealer=0, morto=4, monte=True
    )
    assert "M" not in codes(game, 4)
    assert "M" in codes(game, 1)  # a human with 8 lisci may
    with pytest.raises(IllegalAction):
        act(game, 4, "M")


def test_R126_with_four_players_the_humans_sum_is_not_zero() -> None:
    sums = set()
    for seed in range(40):
        game = Game.new(TableOptions(players=4, match_end="hands:1"), random.Random(seed))
        play_out(game, random.Random(seed))
        scored = next(e for e in game.history if isinstance(e, SmazzataScored))
        sums.add(sum(scored.deltas))
    assert sums - {0}  # not zero-sum (R92); each sum is checked exactly by the properties


def test_R128_seed000_winners_with_four_ranked_humans() -> None:
    # P = 4 humans: the second-best win with the leader only if fewer than 3 share it
    assert match_winners([5, 2, 2, -1, 0], "seed000", unranked=4) == (0, 1, 2)
    assert match_winners([5, 2, 2, 2, 0], "seed000", unranked=4) == (0,)
    assert match_winners([5, 2, 2, 2], "seed000") == (0,)  # 3 share second = P - 1
    # P = 5: R84 unchanged; P = 6: fewer than 5 share second
    assert match_winners([7, 3, 3, -5, -8], "seed000") == (0, 1, 2)
    assert match_winners([8, -2, -2, -2, -2], "seed000") == (0,)
    assert match_winners([5, 1, 1, 1, 1, 0], "seed000") == (0, 1, 2, 3, 4)
    assert match_winners([5, 1, 1, 1, 1, 1], "seed000") == (0,)
