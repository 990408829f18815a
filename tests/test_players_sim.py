"""The search's rollout simulator plays by the engine's rules (property tests).

:class:`game.players.sim.World` is a faster copy of the play phase for the search's
rollouts. Here it is checked against the engine over random deals of every chiamata
variant (5 players with every option combination, il morto, 6 players, a punti): from a
random state in the play phase, the world made from the true deal is played out with the
rollout policy, and every card it plays is replayed through the engine. At every step
the seat in turn and its legal cards must be the engine's; at the end the cards played
(il morto's, which the engine plays by itself, included), the tricks' winners, the card
points each seat took, and every human seat's score change must be the engine's.
Plain Briscola's rollout (its own, with the stock) is checked the same way.
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from game.actions import parse_action
from game.cards import card_code, parse_card
from game.engine import Game
from game.events import BriscolaScored, CardPlayed, SmazzataScored, TrickWon
from game.options import TableOptions
from game.players import briscola
from game.players.knowledge import known_voids
from game.players.sampling import Deal, Sampler
from game.simulate import pick
from tests.core.helpers import ALL_COMBINATIONS, minimax, random_moves


def _options(combo: int, players: int, a_punti: bool) -> TableOptions:
    return TableOptions.model_validate(
        {**ALL_COMBINATIONS[combo], "players": players, "a_punti": a_punti, "match_end": "hands:1"}
    )


def _in_play(options: TableOptions, seed: int, plays: int) -> Game | None:
    """A game after a random auction and ``plays`` random card plays (None if the deal
    was void or the smazzata ended first)."""
    game = Game.new(options, random.Random(seed))
    mover = random.Random(seed ^ 0x51A)
    played = 0
    while not game.is_over():
        seat = game.current_seat()
        assert seat is not None
        phase = game.view(seat).phase
        if phase == "play":
            if played == plays:
                return game
            played += 1
        elif game.smazzata_index > 0:
            return None  # a void deal was dealt again: keep the case simple
        game.apply(seat, pick(mover, game.legal_actions(seat)))
    return None


def _true_deal(game: Game) -> Deal:
    return Deal(
        hands=tuple(tuple(hand) for hand in game.hands),
        trump=game.trump if game.contract != "carichi" else None,
        called=game.called_card,
    )


@settings(max_examples=300, deadline=None)
@given(
    combo=st.integers(0, len(ALL_COMBINATIONS) - 1),
    players=st.sampled_from([4, 5, 6]),
    a_punti=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
    plays=st.integers(0, 29),  # every table size has 30 human plays or more
)
def test_a_rollout_plays_as_the_engine_does(
    combo: int, players: int, a_punti: bool, seed: int, plays: int
) -> None:
    options = _options(combo, players, a_punti)
    game = _in_play(options, seed, plays)
    if game is None:
        return
    me = game.current_seat()
    assert me is not None
    view = game.view(me)
    world = Sampler(view).world_of(_true_deal(game))
    start = len(game.history)
    expected: list[tuple[int, int]] = []
    while not world.is_over():
        seat = world.current()
        card = world.policy_card()
        expected.append((seat, card))
        if seat == game.morto:
            world.play(card)  # the engine played il morto's card by itself
            continue
        assert game.current_seat() == seat
        legal = sorted(a.code for a in game.legal_actions(seat))
        assert sorted("c" + card_code(c) for c in world.legal(seat)) == legal
        world.play(card)
        game.apply(seat, parse_action("c" + card_code(card)))
    events = game.history[start:]
    played = [(e.seat, e.card) for e in events if isinstance(e, CardPlayed)]
    assert played == expected
    trick_winners = [e.seat for e in events if isinstance(e, TrickWon)]
    assert trick_winners and trick_winners[-1] == world.leader
    assert list(game.captured) == world.captured
    scored = next(e for e in events if isinstance(e, SmazzataScored))
    assert scored.caller_points == world.caller_points()
    for seat in range(game.n):
        if seat != game.morto:
            assert world.seat_score(seat) == scored.deltas[seat], seat


def test_il_morto_s_discards_prove_no_void() -> None:
    """Il morto plays its first card in deal order (R90), exempt from following suit:
    when it plays off the led suit, neither the players nor the search's deals take it
    for void in that suit (a human's discard, under following, proves one)."""
    options = TableOptions(players=4, follow_suit=True, match_end="hands:1")
    for seed in range(200):
        game = Game.new(options, random.Random(seed))
        mover = random.Random(seed)
        while not game.is_over():
            seat = game.current_seat()
            assert seat is not None
            game.apply(seat, pick(mover, game.legal_actions(seat)))
            view = game.view(seat)
            if view.phase != "play" or game.morto is None:
                continue
            discards = [
                (s, c // 10)
                for t in [trick.plays for trick in view.tricks] + [view.current_trick]
                for s, c in t[1:]
                if c // 10 != t[0][1] // 10
            ]
            morto_discards = [suit for s, suit in discards if s == game.morto]
            if morto_discards and game.hands[game.morto]:
                voids = known_voids(view)
                assert voids[game.morto] == 0
                for s, suit in discards:
                    if s != game.morto:
                        assert voids[s] >> suit & 1
                still_held = [c for c in game.hands[game.morto] if c // 10 in morto_discards]
                if still_held:
                    allowed = Sampler(view).base_allowed
                    assert all(allowed[c] >> game.morto & 1 for c in still_held)
                    return
    raise AssertionError("no smazzata where il morto discarded and kept that suit")


@settings(max_examples=150, deadline=None)
@given(
    players=st.sampled_from([2, 3, 4]),
    seed=st.integers(0, 2**32 - 1),
    plays=st.integers(0, 35),
)
def test_a_briscola_rollout_ends_as_the_engine_does(players: int, seed: int, plays: int) -> None:
    """Plain Briscola's rollout (:func:`game.players.briscola.rollout`: draws, tricks,
    the sides' points) against the engine, on the true hands and stock of a random
    state: the engine, every seat playing the rollout's heuristic, ends the smazzata
    with the same points."""
    options = TableOptions(game="briscola", players=players, briscola_match="wins:1")
    mover = random.Random(seed ^ 0xB15)
    game = random_moves(Game.new(options, random.Random(seed)), mover, plays)
    me = game.current_seat()
    if game.is_over() or me is None:
        return
    view = game.view(me)
    first = mover.choice([parse_card(code[1:]) for code in view.legal])
    assert view.trump is not None
    hands = [list(hand) for hand in game.hands]
    mine, others = briscola.rollout(view, hands, list(game.stock), first, me)
    events = list(game.apply(me, parse_action("c" + card_code(first))))
    while not any(isinstance(e, BriscolaScored) for e in events):
        seat = game.current_seat()
        assert seat is not None
        seen = game.view(seat)
        trick = [c for _, c in seen.current_trick]
        card = briscola.choose_card(
            seen.hand, trick, seat, seen.leader, players, view.trump,
            briscola.partner_of(seen, seat),
        )
        events += game.apply(seat, parse_action("c" + card_code(card)))
    scored = next(e for e in events if isinstance(e, BriscolaScored))
    side = next(i for i, s in enumerate(scored.sides) if me in s)
    assert mine == scored.points[side]
    assert others == max(p for i, p in enumerate(scored.points) if i != side)


def _engine_caller_points(game: Game) -> int:
    """Minimax through the engine: the caller side's card points at the end, the
    chiamante and the socio taking the most, the others the least."""

    def caller_points(end: Game) -> int:
        return next(e for e in end.history if isinstance(e, SmazzataScored)).caller_points

    return minimax(game, caller_points, lambda seat: seat in (game.chiamante, game.socio))


@settings(max_examples=60, deadline=None)
@given(
    players=st.sampled_from([5, 6]),
    seed=st.integers(0, 2**32 - 1),
    follow_suit=st.booleans(),
)
def test_a_rollout_s_exact_last_tricks_are_minimax_through_the_engine(
    players: int, seed: int, follow_suit: bool
) -> None:
    """With ``exact`` 2, a rollout from the start of the last two tricks ends with the
    caller side's points of a minimax through the engine (every hand known). Where a
    card can be forced (following suit) it plays the policy's cards, as with 0."""
    options = TableOptions.model_validate(
        {"players": players, "match_end": "hands:1", "follow_suit": follow_suit}
    )
    plays = (40 if players == 5 else 36) - 2 * players
    game = _in_play(options, seed, plays)
    if game is None:
        return
    me = game.current_seat()
    assert me is not None
    world = Sampler(game.view(me)).world_of(_true_deal(game))
    policy = world.copy()
    world.exact = 2
    world.rollout()
    assert world.is_over() and not any(world.hands)
    if follow_suit or game.contract == "carichi":
        policy.rollout()
        assert world.captured == policy.captured
    else:
        assert world.caller_points() == _engine_caller_points(game)
