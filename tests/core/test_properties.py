"""Property tests: thousands of random legal smazzate across all option combinations."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from game import Game, TableOptions
from game.cards import CARD_POINTS
from game.events import CardPlayed, Dealt, PartnerRevealed, SmazzataScored, TrickWon, TrumpRevealed
from tests.core.helpers import ALL_COMBINATIONS, check_legality, play_random, random_move


def oracle_winner(plays: list[int], trump: int | None) -> int:
    """Independent trick oracle: trumps beat the led suit, which beats the rest; then R2."""
    led = plays[0] // 10

    def key(card: int) -> tuple[int, int]:
        suit, rank = divmod(card, 10)
        tier = 2 if suit == trump else 1 if suit == led else 0
        return (tier, -rank)

    return max(range(len(plays)), key=lambda i: key(plays[i]))


def check_smazzata_invariants(events: list, options: TableOptions) -> None:
    """40 cards dealt and played once each, 8 tricks, 120 points, zero-sum, oracle winner."""
    dealt = next(e for e in events if isinstance(e, Dealt))
    assert sorted(c for hand in dealt.hands for c in hand) == list(range(40))
    assert all(len(hand) == 8 for hand in dealt.hands)
    played = [e for e in events if isinstance(e, CardPlayed)]
    assert sorted(e.card for e in played) == list(range(40))
    for event in played:
        assert event.card in dealt.hands[event.seat]
    tricks = [e for e in events if isinstance(e, TrickWon)]
    assert len(tricks) == 8 and sum(t.points for t in tricks) == 120
    scored = next(e for e in events if isinstance(e, SmazzataScored))
    assert sum(scored.deltas) == 0
    for trick in tricks:
        expected = (trick.leader + oracle_winner(list(trick.cards), scored.trump)) % 5
        assert trick.seat == expected
    assert (
        sum(
            CARD_POINTS[c]
            for t in tricks
            if t.seat in (scored.chiamante, scored.socio)
            for c in t.cards
        )
        == scored.caller_points
    )


def check_view_secrecy(game: Game) -> None:
    """view(seat) holds no other seat's unplayed card, no hidden socio, no hidden suit."""
    played = {c for p in game.played_by for c in p}
    for seat in [None, *range(game.n)]:
        view = game.view(seat)
        own = set(game.hands[seat]) if seat is not None else set()
        seen = set(view.hand) | {c for _, c in view.current_trick}
        seen |= {c for t in view.tricks for _, c in t.plays} | {c for p in view.played for c in p}
        assert seen <= own | played, "a view shows another seat's card"
        if not game.partner_revealed and game.contract != "carichi":
            holds_called = seat is not None and game.called_card in game.hands[seat]
            if seat != game.chiamante and not holds_called:
                assert view.socio is None and view.solo is None
        if game.options.al_buio and not game.trump_public and seat != game.chiamante:
            assert view.trump is None and view.called_card is None
            if game.contract != "carichi":  # an a carichi contract is public and solo
                # Even the holder of the called card cannot know it is the socio yet.
                assert view.socio is None and view.solo is None


def play_checked(
    options: TableOptions, seed: int, *, views: bool, legality: str | None, json: bool
) -> Game:
    def before_move(game: Game, rng: random.Random) -> None:
        if views:
            check_view_secrecy(game)
        if legality:
            check_legality(game, rng, sample=None if legality == "full" else 25)

    return play_random(
        options,
        seed,
        before_move=before_move,
        after_smazzata=lambda events, game: check_smazzata_invariants(events, game.options),
        json=json,
    )


def test_thousands_of_random_smazzate_in_every_option_combination() -> None:
    played = 0
    for index, combo in enumerate(ALL_COMBINATIONS):
        options = TableOptions(**combo, match_end="hands:16")
        game = play_checked(options, index, views=False, legality=None, json=False)
        played += game.scored_count
    assert played == 16 * len(ALL_COMBINATIONS) >= 2000


def test_views_never_leak_in_any_option_combination() -> None:
    for index, combo in enumerate(ALL_COMBINATIONS):
        options = TableOptions(**combo, match_end="hands:2")
        play_checked(options, 1000 + index, views=True, legality=None, json=False)


def test_legal_actions_match_verify_exactly() -> None:
    for index, combo in enumerate(ALL_COMBINATIONS[::32]):
        options = TableOptions(**combo, match_end="hands:1")
        play_checked(options, 2000 + index, views=False, legality="full", json=False)
    for index, combo in enumerate(ALL_COMBINATIONS):
        options = TableOptions(**combo, match_end="hands:1")
        play_checked(options, 3000 + index, views=False, legality="sample", json=False)


@settings(max_examples=40, deadline=None)
@given(combo=st.sampled_from(ALL_COMBINATIONS), seed=st.integers(0, 2**32))
def test_json_round_trip_at_every_step_continues_identically(combo: dict, seed: int) -> None:
    play_checked(
        TableOptions(**combo, match_end="hands:1"), seed, views=False, legality=None, json=True
    )


@settings(max_examples=30, deadline=None)
@given(combo=st.sampled_from(ALL_COMBINATIONS), seed=st.integers(0, 2**32))
def test_seed_and_action_log_replay_to_the_same_state(combo: dict, seed: int) -> None:
    options = TableOptions(**combo, match_end="hands:2")
    game = play_checked(options, seed, views=False, legality=None, json=False)
    replayed = Game.replay(options, seed, game.actions)
    assert replayed.history == game.history and replayed.totals == game.totals


def test_partner_and_trump_reveals_happen_exactly_once_per_smazzata() -> None:
    for index, combo in enumerate(ALL_COMBINATIONS[::4]):
        options = TableOptions(**combo, match_end="hands:3")
        game = play_checked(options, 4000 + index, views=False, legality=None, json=False)
        scored = [e for e in game.history if isinstance(e, SmazzataScored)]
        reveals = [e for e in game.history if isinstance(e, TrumpRevealed)]
        partners = [e for e in game.history if isinstance(e, PartnerRevealed)]
        card_contracts = [e for e in scored if e.contract != "carichi"]
        assert len(reveals) == len(card_contracts) == len(partners)


def check_public_calls(game: Game) -> None:
    """The group's calls are the legal ones of the seat on turn, before the hand's limits."""
    seat = game.current_seat()
    public = {a.code for a in game.public_calls()}
    low = game.min_call_points()
    if seat is None or game.phase.value != "auction":
        assert not public and low is None
        return
    legal = {a.code for a in game.legal_actions(seat)} - {"M"}
    free = {code for code in legal if not code.startswith(("t", "o"))}
    assert free <= public
    if game.options.in_mano:  # R30 limits nothing: exactly what the seat may call
        assert free == public
    at_points = [int(code[1:].split(".")[-1]) for code in legal if code.startswith(("t", "o"))]
    if at_points:
        assert low == min(at_points)
    if low is not None and game.options.in_mano:
        assert f"t{low}" in legal


def test_public_calls_are_the_legal_calls_before_the_hand_in_every_combination() -> None:
    for index, combo in enumerate(ALL_COMBINATIONS):
        options = TableOptions.model_validate(combo)
        game = Game.new(options, random.Random(index))
        rng = random.Random(index + 1)
        while not game.is_over():
            check_public_calls(game)
            game.apply(*random_move(game, rng))
