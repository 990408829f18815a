"""R1–R15: cards, seats, dealer and deal."""

from __future__ import annotations

import random
from collections import Counter
from itertools import combinations

import pytest

from game import Game, TableOptions, deck_face
from game.cards import (
    CARD_POINTS,
    RANK_CODES,
    SUIT_CODES,
    Rank,
    Suit,
    card_code,
    category,
    make_card,
    parse_card,
    trick_winner_index,
)
from game.events import Dealt, MatchStarted
from game.options import Ruleset
from tests.core.helpers import act, deal, play_out, run

STRENGTH_ORDER = ["A", "3", "R", "C", "F", "7", "6", "5", "4", "2"]


def test_R1_deck_has_40_cards_in_four_suits_of_ten_ranks() -> None:
    deck = Ruleset.for_options(TableOptions()).deck
    assert len(deck) == len(set(deck)) == 40
    assert Counter(c // 10 for c in deck) == {0: 10, 1: 10, 2: 10, 3: 10}
    assert {card_code(c)[:-1] for c in deck} == set(STRENGTH_ORDER)


def test_R2_strength_order_is_the_same_in_every_suit() -> None:
    for suit in "cdsb":
        for stronger, weaker in combinations(STRENGTH_ORDER, 2):
            pair = [parse_card(weaker + suit), parse_card(stronger + suit)]
            # Same suit, no trump: the stronger card wins whichever is led.
            assert trick_winner_index(pair, None) == 1
            assert trick_winner_index(pair[::-1], None) == 0
            # The same order holds inside the trump suit.
            assert trick_winner_index(pair, int(parse_card("A" + suit) // 10)) == 1


def test_R3_card_points_and_total_of_120() -> None:
    expected = {"A": 11, "3": 10, "R": 4, "C": 3, "F": 2, "7": 0, "6": 0, "5": 0, "4": 0, "2": 0}
    for code, points in expected.items():
        for suit in "cdsb":
            assert CARD_POINTS[parse_card(code + suit)] == points
    assert sum(CARD_POINTS) == 120


def test_R4_categories_carichi_figure_lisci() -> None:
    assert {category(parse_card(c + "d")) for c in "A3"} == {"carico"}
    assert {category(parse_card(c + "d")) for c in "RCF"} == {"figura"}
    assert {category(parse_card(c + "d")) for c in "76542"} == {"liscio"}


def test_R5_deck_style_changes_only_display() -> None:
    italian, french = deck_face("napoletane"), deck_face("francesi")
    assert italian.suit_names == ("Coppe", "Denari", "Spade", "Bastoni")
    assert french.suit_names == ("Cuori", "Quadri", "Picche", "Fiori")
    assert french.rank_name(Rank.CAVALLO) == "Donna"
    assert deck_face("toscane").french
    a = Game.new(TableOptions(match_end="hands:2"), random.Random(7))
    b = Game.new(TableOptions(match_end="hands:2", deck_style="toscane"), random.Random(7))
    rng_a, rng_b = random.Random(1), random.Random(1)
    while not a.is_over():
        play_out(a, rng_a)
        play_out(b, rng_b)
    assert a.history[1:] == b.history[1:]
    assert a.totals == b.totals


def test_R6_notation_round_trips() -> None:
    assert parse_card("Ad") == make_card(Rank.ASSO, Suit.DENARI)
    assert parse_card("Cs") == make_card(Rank.CAVALLO, Suit.SPADE)
    assert parse_card("2b") == make_card(Rank.DUE, Suit.BASTONI)
    assert [card_code(parse_card(r + s)) for r in RANK_CODES for s in SUIT_CODES] == [
        r + s for r in RANK_CODES for s in SUIT_CODES
    ]
    with pytest.raises(ValueError):
        parse_card("1d")


def test_R7_five_players_eight_cards_each_no_sides_before_auction() -> None:
    game = Game.new(TableOptions(), random.Random(3))
    assert game.n == 5
    assert [len(h) for h in game.hands] == [8] * 5
    assert all(game.view(s).socio is None for s in range(5))


def test_R8_next_seat_is_seat_plus_one_mod_five() -> None:
    game = deal(dealer=3)
    order = []
    for _ in range(4):
        seat = game.current_seat()
        assert seat is not None
        order.append(seat)
        act(game, seat, "P")
    assert order == [4, 0, 1, 2]


def test_R9_direction_is_display_only() -> None:
    a = Game.new(TableOptions(match_end="hands:1"), random.Random(5))
    b = Game.new(TableOptions(match_end="hands:1", direction="orario"), random.Random(5))
    play_out(a, random.Random(2))
    play_out(b, random.Random(2))
    assert a.history[1:] == b.history[1:]


def test_R10_seats_keep_their_identity_for_the_whole_match() -> None:
    game = Game.new(TableOptions(match_end="hands:3"), random.Random(11))
    running = [0] * 5
    rng = random.Random(4)
    while not game.is_over():
        events = play_out(game, rng)
        for event in events:
            if event.kind == "scored":
                running = [t + d for t, d in zip(running, event.deltas, strict=True)]
    assert running == game.totals


def test_R11_first_dealer_is_drawn_at_random_and_recorded() -> None:
    firsts = Counter()
    for seed in range(500):
        game = Game.new(TableOptions(), random.Random(seed))
        started = game.history[0]
        assert isinstance(started, MatchStarted)
        assert game.dealer == started.first_dealer
        firsts[started.first_dealer] += 1
    assert set(firsts) == {0, 1, 2, 3, 4}
    assert min(firsts.values()) > 60  # 100 expected per seat


def test_R12_dealer_rotates_after_scored_and_voided_smazzate() -> None:
    game = deal(dealer=2)
    run(game, [(3, "P"), (4, "P"), (0, "P"), (1, "P"), (2, "P")])  # all pass: voided
    assert game.dealer == 3
    run(game, [(4, "rA"), (0, "P"), (1, "P"), (2, "P"), (3, "P"), (4, "sc")])
    play_out(game)
    assert game.dealer == 4


def test_R13_deal_maps_shuffled_deck_to_seats_in_turn_order() -> None:
    seed = 21
    game = Game.new(TableOptions(), random.Random(seed))
    mirror = random.Random(seed)
    dealer = mirror.randrange(5)
    deck = list(range(40))
    mirror.shuffle(deck)
    dealt = game.history[1]
    assert isinstance(dealt, Dealt) and dealt.dealer == dealer
    for i, card in enumerate(deck):
        seat = (dealer + 1 + i) % 5
        assert dealt.hands[seat][i // 5] == card  # deal order kept in the hand


def test_R14_primo_di_mano_opens_auction_and_leads_first_trick() -> None:
    game = deal(dealer=4)
    assert game.current_seat() == 0
    run(game, [(0, "P"), (1, "rR"), (2, "P"), (3, "P"), (4, "P"), (1, "sd")])
    assert game.current_seat() == 0


def test_R15_every_card_is_dealt_and_none_is_face_up() -> None:
    game = Game.new(TableOptions(), random.Random(8))
    assert sorted(c for hand in game.hands for c in hand) == list(range(40))
    assert game.view(None).trump is None
