"""§14 and §19: plain Briscola for 2, 3 and 4 players (R98–R111, R119–R124, R127)."""

from __future__ import annotations

import random

import pytest
from pydantic import ValidationError

from game import Game, IllegalAction, TableOptions
from game.cards import CARD_POINTS, card_code, parse_card
from game.events import BriscolaScored, CardsDrawn, MatchOver, StockLaid, TrickWon
from game.options import Ruleset
from game.scoring import briscola_match_over, briscola_smazzata_winner
from tests.core.helpers import act, briscola, cards, codes


def finish_smazzata(game: Game, rng: random.Random | None = None) -> list:
    rng = rng or random.Random(0)
    events: list = []
    start = game.smazzata_index
    while not game.is_over() and game.smazzata_index == start:
        seat = game.current_seat()
        legal = game.legal_actions(seat)
        events.extend(game.apply(seat, legal[rng.randrange(len(legal))]))
    return events


def play_match(options: TableOptions, seed: int) -> Game:
    game = Game.new(options, random.Random(seed))
    rng = random.Random(seed)
    while not game.is_over():
        seat = game.current_seat()
        legal = game.legal_actions(seat)
        game.apply(seat, legal[rng.randrange(len(legal))])
    return game


def test_R98_two_three_or_four_players_pairs_sit_opposite() -> None:
    for players, sides in [(2, ((0,), (1,))), (3, ((0,), (1,), (2,))), (4, ((0, 2), (1, 3)))]:
        game = briscola(players=players)
        assert game.n == players and game.view(None).sides == sides
        assert game.view(0).game == "briscola"


def test_R99_forty_cards_or_39_without_the_2_of_bastoni() -> None:
    for players, size in [(2, 40), (3, 39), (4, 40)]:
        deck = Ruleset.for_options(TableOptions(game="briscola", players=players)).deck
        assert len(deck) == size and sum(CARD_POINTS[c] for c in deck) == 120
    three = Ruleset.for_options(TableOptions(game="briscola", players=3)).deck
    assert parse_card("2b") not in three


def test_R100_random_first_dealer_then_next_dealer() -> None:
    dealers = {Game.new(TableOptions(game="briscola"), random.Random(s)).dealer for s in range(30)}
    assert dealers == {0, 1}
    game = briscola(dealer=2, players=3, briscola_match="rounds:3")
    seen = [game.dealer]
    for _ in range(2):
        finish_smazzata(game)
        seen.append(game.dealer)
    assert seen == [2, 0, 1]


def test_R101_R119_deal_three_each_then_face_up_and_stock() -> None:
    deck = cards("Ac 3c Rc Cc Fc 7c Ad 3d Rd")
    game = briscola(deck, dealer=0, players=2)
    assert game.hands[1] == cards("Ac Rc Fc") and game.hands[0] == cards("3c Cc 7c")
    laid = next(e for e in game.history if isinstance(e, StockLaid))
    assert laid.face_up == parse_card("Ad") and game.trump == 1
    assert laid.stock[0] == parse_card("3d") and laid.stock[1] == parse_card("Rd")
    assert laid.stock[-1] == parse_card("Ad") and len(laid.stock) == 34
    for seat in (None, 0, 1):
        view = game.view(seat)
        assert view.face_up == parse_card("Ad") and view.stock_count == 34
        assert view.trump == 1 and view.trump_public


def test_R102_trick_one_led_by_next_dealer_in_turn_order() -> None:
    game = briscola(dealer=1, players=3)
    assert game.current_seat() == 2 and game.phase.value == "play"
    act(game, 2, codes(game, 2)[0])
    assert game.current_seat() == 0


def test_R103_any_card_may_be_played_follow_suit_ignored() -> None:
    game = briscola("Ac Ad 3c As 2c Ab Rb", dealer=0, players=2, follow_suit=True)
    act(game, 1, "cAc")
    assert sorted(codes(game, 0)) == sorted(["cAd", "cAs", "cAb"])


def test_R104_trump_from_the_face_up_card_wins() -> None:
    # seat 1 leads Ac, seat 0 plays 2d: Denari (the face-up suit) is trump
    game = briscola("Ac 2d 3c 4d 3s 5d 7d", dealer=0, players=2)
    events = act(game, 1, "cAc") + act(game, 0, "c2d")
    won = next(e for e in events if isinstance(e, TrickWon))
    assert won.seat == 0 and won.points == 11


def test_R105_R120_winner_draws_first_and_face_up_card_last() -> None:
    game = briscola("Ac 2d 3c 4d 3s 5d 7d Rb Cb", dealer=0, players=2)
    events = act(game, 1, "cAc") + act(game, 0, "c2d")
    drawn = next(e for e in events if isinstance(e, CardsDrawn))
    assert drawn.draws == ((0, parse_card("Rb")), (1, parse_card("Cb")))
    assert game.view(0).stock_count == 32 and game.current_seat() == 0
    events = finish_smazzata(game)
    draws = [e for e in game.history if isinstance(e, CardsDrawn)]
    assert len(draws) == 17  # 34 cards, two a round
    last = draws[-1]
    assert last.draws[-1][1] == parse_card("7d")  # the face-up card is drawn last
    tricks = [e for e in game.history if isinstance(e, TrickWon)]
    winner = tricks[last.trick].seat
    assert last.draws[-1][0] == (winner - 1) % 2  # the seat before the winner (R120)
    assert any(isinstance(e, BriscolaScored) for e in events)


@pytest.mark.parametrize(("players", "stock"), [(2, 34), (3, 30), (4, 28)])
def test_R105_stock_size_is_a_multiple_of_the_players(players: int, stock: int) -> None:
    game = briscola(players=players)
    assert game.view(None).stock_count == stock and stock % players == 0


@pytest.mark.parametrize(("players", "tricks"), [(2, 20), (3, 13), (4, 10)])
def test_R106_trick_count_and_last_three_without_drawing(players: int, tricks: int) -> None:
    game = briscola(players=players)
    finish_smazzata(game)
    won = [e for e in game.history if isinstance(e, TrickWon)]
    draws = [e for e in game.history if isinstance(e, CardsDrawn)]
    assert len(won) == tricks
    assert [d.trick for d in draws] == list(range(tricks - 3))


def test_R107_R124_partner_hand_and_pair_points_after_last_draw_to_partners_only() -> None:
    game = briscola(players=4, dealer=3)
    rng = random.Random(2)
    seen_before = False
    while game.stock:
        for seat in range(4):
            view = game.view(seat)
            seen_before |= view.partner_hand is not None or view.side_points is not None
        seat = game.current_seat()
        game.apply(seat, game.legal_actions(seat)[rng.randrange(len(game.hands[seat]))])
    assert not seen_before
    for seat in range(4):
        view = game.view(seat)
        partner = (seat + 2) % 4
        assert view.partner_hand == tuple(game.hands[partner])
        assert view.side_points == game.captured[seat] + game.captured[partner]
    assert game.view(None).partner_hand is None and game.view(None).side_points is None
    # opponents: a seat's view shows its partner's hand only, never an opponent's
    assert set(game.view(0).partner_hand or ()) == set(game.hands[2])


def test_R107_no_partner_hand_with_two_or_three_players() -> None:
    for players in (2, 3):
        game = briscola(players=players)
        while game.stock:
            seat = game.current_seat()
            game.apply(seat, game.legal_actions(seat)[0])
        assert all(game.view(s).partner_hand is None for s in range(players))


def test_R108_61_wins_60_60_is_patta() -> None:
    assert briscola_smazzata_winner((61, 59), "majority") == 0
    assert briscola_smazzata_winner((40, 80), "majority") == 1
    assert briscola_smazzata_winner((60, 60), "majority") is None


def test_R109_R122_three_players_strictly_highest_else_draw() -> None:
    assert briscola_smazzata_winner((41, 40, 39), "highest") == 0
    assert briscola_smazzata_winner((50, 50, 20), "highest") is None
    assert briscola_smazzata_winner((40, 40, 40), "highest") is None
    assert briscola_smazzata_winner((30, 45, 45), "highest") is None


def test_R108_R109_engine_result_matches_the_points() -> None:
    for players in (2, 3, 4):
        for seed in range(10):
            game = play_match(TableOptions(game="briscola", players=players), seed)
            for event in game.history:
                if isinstance(event, BriscolaScored):
                    rule = "highest" if players == 3 else "majority"
                    assert event.winner == briscola_smazzata_winner(event.points, rule)


def test_R110_wins_n_first_side_to_n() -> None:
    for seed in range(10):
        game = play_match(TableOptions(game="briscola", briscola_match="wins:3"), seed)
        final = game.history[-1]
        assert isinstance(final, MatchOver)
        assert max(game.wins) == 3 and sorted(game.wins)[0] < 3
        winner = game.wins.index(3)
        assert final.winners == game.rules.sides[winner]
    assert briscola_match_over((2, 1), 3, "wins", 2)
    assert not briscola_match_over((1, 1), 5, "wins", 2)


def test_R110_R123_rounds_n_all_played_then_tie_break() -> None:
    assert not briscola_match_over((3, 0), 3, "rounds", 5)  # decided, still played (R123)
    assert briscola_match_over((3, 2), 5, "rounds", 5)
    assert not briscola_match_over((2, 2), 5, "rounds", 5)  # tie: one more smazzata
    assert not briscola_match_over((2, 2, 1), 6, "rounds", 5)
    assert briscola_match_over((2, 3, 1), 6, "rounds", 5)
    for players in (2, 3, 4):
        for seed in range(8):
            game = play_match(
                TableOptions(game="briscola", players=players, briscola_match="rounds:3"), seed
            )
            scored = [e for e in game.history if isinstance(e, BriscolaScored)]
            assert len(scored) >= 3
            final_wins = scored[-1].wins
            assert sum(1 for w in final_wins if w == max(final_wins)) == 1
            for event in scored[2:-1]:  # every earlier end had a tie for most wins
                assert sum(1 for w in event.wins if w == max(event.wins)) > 1


def test_R110_draws_count_for_nobody() -> None:
    for seed in range(40):
        game = play_match(TableOptions(game="briscola", players=3), seed)
        scored = [e for e in game.history if isinstance(e, BriscolaScored)]
        assert scored[-1].wins == tuple(
            sum(1 for e in scored if e.winner == side) for side in range(3)
        )


def test_R111_chiamata_options_are_ignored() -> None:
    options = {
        "monte": True,
        "a_carichi": True,
        "al_buio": True,
        "follow_suit": True,
        "a_punti": True,
        "match_end": "hands:1",
        "players": 4,
    }
    game = briscola(**options)
    view = game.view(None)
    assert game.phase.value == "play" and view.auction == () and view.trump_public
    seat = game.current_seat()
    assert len(codes(game, seat)) == 3  # any card, no monte, no call
    with pytest.raises(IllegalAction):
        act(game, seat, "P")


def test_R121_no_voided_deal_every_smazzata_counts() -> None:
    for seed in range(10):
        game = play_match(TableOptions(game="briscola", briscola_match="rounds:2"), seed)
        assert not any(e.kind == "voided" for e in game.history)
        scored = [e for e in game.history if isinstance(e, BriscolaScored)]
        assert [e.smazzata for e in scored] == list(range(len(scored)))


def test_R127_players_outside_the_game_values_are_refused_clearly() -> None:
    for bad in [
        {"game": "briscola", "players": 5},
        {"game": "briscola", "players": 1},
        {"players": 3},
        {"players": 7},
    ]:
        with pytest.raises(ValidationError, match="players must be one of"):
            TableOptions.model_validate(bad)
    assert TableOptions(game="briscola").players == 2
    assert card_code(briscola().face_up or 0)
