"""Inference by the learned policy (game.players.netinfer) and campione reading it."""

from __future__ import annotations

import copy
import dataclasses
import random

import numpy as np
import pytest

from game.actions import parse_action
from game.arena import factory
from game.cards import card_code, parse_card
from game.engine import Game
from game.options import TableOptions
from game.players import briscola, create_player
from game.players.champion import (
    NET_SHARE,
    ChampionPlayer,
    _answers,
    inferred_deals,
    likelihoods,
)
from game.players.classic import ANSWERS, CLASSIC, NETWORK
from game.players.net import default_network, features, masked_policy
from game.players.netinfer import EPSILON, NetOpponent, answer_view, past_view
from game.players.opponent import OpponentModel
from game.view import View
from tests.test_players_endgame import plays_legally_and_deterministically
from tests.test_players_net import scramble_hidden, tiny_network

TWO = TableOptions.model_validate({"game": "briscola", "players": 2, "match_end": "hands:1"})


def played_game(
    seed: int, level: str = "normale"
) -> tuple[list[tuple[Game, int]], dict[int, list[View]]]:
    """A smazzata of two-player Briscola: a copy of the game at each decision with the
    seat in turn, and each seat's views at its decisions."""
    game = Game.new(TWO, random.Random(seed))
    players = [create_player(level, seed * 10 + s) for s in range(2)]
    states: list[tuple[Game, int]] = []
    views: dict[int, list[View]] = {0: [], 1: []}
    while not game.is_over() and game.scored_count == 0:
        seat = game.current_seat()
        assert seat is not None
        view = game.view(seat)
        states.append((copy.deepcopy(game), seat))
        views[seat].append(view)
        game.apply(seat, players[seat].choose(view))
    return states, views


def opponent_plays(view: View) -> list[tuple[int, int]]:
    """(trick index, position) of each play of the other seat, in order."""
    assert view.seat is not None
    tricks = [t.plays for t in view.tricks] + [view.current_trick]
    return [
        (index, position)
        for index, trick in enumerate(tricks)
        for position, (seat, _) in enumerate(trick)
        if seat != view.seat
    ]


@pytest.mark.parametrize("seed", [1, 2])
def test_the_rebuilt_view_gives_the_features_the_opponent_had(seed: int) -> None:
    """At every decision, each earlier play of the other seat: the view rebuilt from
    the public record with the hand it held then has the features of the view the
    engine gave it then."""
    states, views = played_game(seed)
    checked = 0
    for game, seat in states:
        view = game.view(seat)
        theirs = views[1 - seat]
        for k, (index, position) in enumerate(opponent_plays(view)):
            real = theirs[k]
            rebuilt = past_view(view, 1 - seat, index, position, real.hand)
            assert np.array_equal(features(rebuilt), features(real)), (index, position)
            checked += 1
    assert checked > 300


def _chance(view: View, card: int) -> float:
    """The network's chance of ``card`` in ``view`` (full features, mixed as NetOpponent
    mixes it)."""
    legal, probs, _ = masked_policy(default_network(), view)
    if len(legal) == 1:
        return 1.0
    index = [a.card for a in legal].index(card)  # type: ignore[attr-defined]
    return (1.0 - EPSILON) * float(probs[index]) + EPSILON / len(legal)


def _hands_holding(
    view: View, k: int, card: int, rng: random.Random, count: int
) -> list[tuple[int, ...]]:
    """``count`` hands the other seat could hold at its play ``k`` with ``card`` in it."""
    size = view.hand_sizes[view.seat or 0]
    seen = {c for cards in view.played for c in cards} | {c for _, c in view.current_trick}
    assert view.face_up is not None
    if view.face_up_holder is None:
        seen.add(view.face_up)
    pool = [c for c in range(40) if c not in seen and c != card]
    return [tuple(sorted([card, *rng.sample(pool, size - 1)])) for _ in range(count)]


def test_the_batched_chances_equal_the_network_on_each_rebuilt_view() -> None:
    """The first layer's public part computed once per play and suit order, each hand's
    cards added: the same chance as the network on the whole view."""
    states, _ = played_game(3)
    rng = random.Random(0)
    compared = 0
    for game, seat in states[::5]:
        view = game.view(seat)
        net = NetOpponent(view)
        for k, play in enumerate(net.plays):
            hands = _hands_holding(play.view, k, play.card, rng, 6)
            for hand, chance in zip(hands, net.chances(k, hands), strict=True):
                whole = dataclasses.replace(
                    play.view, hand=hand, legal=tuple("c" + card_code(c) for c in hand)
                )
                assert chance == pytest.approx(_chance(whole, play.card), abs=1e-5)
                compared += 1
    assert compared > 200


def _reference(view: View, hand: tuple[int, ...], depth: int) -> float:
    """The likelihood the slow way: every way the hand came to be (which card each draw
    brought), the network on each whole rebuilt view."""
    me = view.seat
    assert me is not None and view.face_up is not None
    opp = 1 - me
    spots = opponent_plays(view)[-depth:]
    tricks = [t.plays for t in view.tricks] + [view.current_trick]

    def before(k: int, after: tuple[int, ...]) -> float:
        if k < 0:
            return 1.0
        index, position = spots[k]
        card = tricks[index][position][1]
        drew = index < len(view.tricks) and index < 17
        if not drew:
            options = [(*after, card)]
        elif index == 16 and view.face_up_holder == opp:
            options = [(*(c for c in after if c != view.face_up), card)]
        else:
            options = [(*(c for c in after if c != d), card) for d in after]
        total = 0.0
        for held in options:
            held = tuple(sorted(held))
            rebuilt = past_view(view, opp, index, position, held)
            total += _chance(rebuilt, card) * before(k - 1, held)
        return total / len(options)

    return before(len(spots) - 1, tuple(sorted(hand)))


def test_the_likelihoods_equal_the_slow_recursion() -> None:
    states, _ = played_game(4)
    rng = random.Random(1)
    checked = 0
    for game, seat in states[10:40:6]:
        view = game.view(seat)
        net = NetOpponent(view, depth=4)
        deals = [briscola.sample_world(view, rng) for _ in range(5)]
        hands = [tuple(sorted(h[1 - seat])) for h, _ in deals]
        for hand, value in zip(hands, net.likelihoods(hands), strict=True):
            assert value == pytest.approx(_reference(view, hand, 4), rel=1e-4)
            checked += 1
    assert checked >= 20


def test_the_weights_read_only_public_information() -> None:
    """Every card the seat cannot see dealt again (the other hand, the stock): the same
    weights for the same hands, from the network's kind and from campione's mix."""
    rng = random.Random(7)
    changed = 0
    for game, seat in played_game(5)[0][4::4]:
        view = game.view(seat)
        if not view.tricks or view.stock_count <= 2:
            continue  # no play to read, or the other hand is known
        other = scramble_hidden(game, seat, rng)
        if other.hands[1 - seat] != game.hands[1 - seat] or other.stock != game.stock:
            changed += 1
        deal_rng = random.Random(2)
        deals = [briscola.sample_world(view, deal_rng) for _ in range(30)]
        hands = [h[1 - seat] for h, _ in deals]
        again = other.view(seat)
        first = NetOpponent(view).likelihoods(hands)
        assert first == NetOpponent(again).likelihoods(hands)
        mixed = likelihoods(OpponentModel(view, 20), hands, NetOpponent(view), 0.5)
        assert mixed == likelihoods(OpponentModel(again, 20), hands, NetOpponent(again), 0.5)
        assert len(set(first)) > 1  # the hands do move the weights
    assert changed > 5


def test_a_different_network_gives_different_weights() -> None:
    """The weights come from the network (an untrained one weighs the hands otherwise)."""
    states, _ = played_game(6)
    game, seat = states[20]
    view = game.view(seat)
    deal_rng = random.Random(3)
    deals = [briscola.sample_world(view, deal_rng) for _ in range(20)]
    hands = [h[1 - seat] for h, _ in deals]
    shipped = NetOpponent(view).likelihoods(hands)
    other = NetOpponent(view, network=tiny_network(1)).likelihoods(hands)
    assert shipped != other


def test_campione_with_the_network_plays_legally_and_deterministically() -> None:
    """``campione-rete`` (the network read, as in campione: ``NET_INFERENCE``), whole
    smazzate of two-player Briscola, the only variant where it reads the network: every
    card legal, the same card from a twin with the same seed."""
    for seed in (1, 2):
        game = Game.new(TWO, random.Random(40 + seed))
        plays_legally_and_deterministically(
            game, lambda s: ChampionPlayer(s, worlds=8, net_share=NET_SHARE), smazzate=1
        )
        assert game.scored_count == 1


def test_the_network_changes_the_weighted_deals() -> None:
    states, _ = played_game(7)
    changed = 0
    for game, seat in states[8:30:3]:
        view = game.view(seat)
        model = OpponentModel(view, 20)
        plain = inferred_deals(view, random.Random(5), 20, 3, model)
        mixed = inferred_deals(view, random.Random(5), 20, 3, model, NetOpponent(view), 0.8)
        changed += plain != mixed
    assert changed >= 3


def test_every_way_to_hold_the_card_is_counted() -> None:
    """The hands before a play with a draw after it: one per card of today's hand (the
    one drawn), each holding the card played."""
    states, _ = played_game(8)
    checked = 0
    for game, seat in states[4:30]:
        view = game.view(seat)
        if view.current_trick:
            continue  # the other seat's last play is a completed trick's, a draw after it
        net = NetOpponent(view, depth=1)
        (play,) = net.plays
        assert play.drew and not play.face_up_draw
        hand = tuple(sorted(game.hands[1 - seat]))
        befores = [tuple(sorted((*(c for c in hand if c != d), play.card))) for d in hand]
        expected = sum(net.chances(0, befores)) / len(hand)
        assert net.likelihoods([hand]) == [pytest.approx(expected)]
        checked += 1
    assert checked > 5


def test_the_arena_makes_campione_without_the_network_by_name() -> None:
    """``game.arena --make game.players.classic:make_player --a campione-classico``:
    campione as before issue 49 beside today's, for a paired comparison."""
    make = factory("game.players.classic:make_player")
    classic = make(CLASSIC, 3)
    assert isinstance(classic, ChampionPlayer) and classic.net_share == 0.0
    assert classic.name == CLASSIC
    today = make("campione", 3)  # (the network's inference on: NET_INFERENCE)
    assert isinstance(today, ChampionPlayer) and today.net_share == NET_SHARE
    assert not today.net_answers
    network = make(NETWORK, 3)
    assert isinstance(network, ChampionPlayer) and network.net_share == NET_SHARE > 0.0
    assert network.name == NETWORK and not network.net_answers
    answers = make(ANSWERS, 3)
    assert isinstance(answers, ChampionPlayer) and answers.net_answers
    assert answers.net_share == NET_SHARE
    with pytest.raises(SystemExit):
        factory("game.players.classic")


def test_the_answer_view_gives_the_features_the_opponent_has_after_the_lead() -> None:
    """This seat leads a card: the other seat's view rebuilt from this one's (with its
    real hand) has the features of the view the engine gives it then."""
    states, _ = played_game(9)
    checked = 0
    for game, seat in states:
        view = game.view(seat)
        if view.current_trick or len(view.legal) < 2:
            continue
        for code in view.legal:
            after = copy.deepcopy(game)
            after.apply(seat, parse_action(code))
            if after.current_seat() != 1 - seat:
                continue
            real = after.view(1 - seat)
            rebuilt = dataclasses.replace(
                answer_view(view, parse_card(code[1:])), hand=real.hand, legal=real.legal
            )
            assert np.array_equal(features(rebuilt), features(real))
            checked += 1
    assert checked > 20


def test_the_prepared_answers_equal_the_network_on_each_answer_view() -> None:
    states, _ = played_game(10)
    rng = random.Random(4)
    compared = 0
    for game, seat in states[6:34]:
        view = game.view(seat)
        if view.current_trick or view.stock_count < 4:
            continue
        net = NetOpponent(view)
        deals = [briscola.sample_world(view, rng) for _ in range(8)]
        hands = [h[1 - seat] for h, _ in deals]
        leds = [parse_card(code[1:]) for code in view.legal]
        net.prepare_answers(hands, leds)
        for hand in hands:
            for led in leds:
                whole = dataclasses.replace(
                    answer_view(view, led),
                    hand=tuple(hand),
                    legal=tuple("c" + card_code(c) for c in hand),
                )
                legal, probs, _ = masked_policy(default_network(), whole)
                by_card = {a.code: float(p) for a, p in zip(legal, probs, strict=True)}
                expected = [
                    (1.0 - EPSILON) * by_card["c" + card_code(c)] + EPSILON / len(hand)
                    for c in hand
                ]
                assert net.answer(hand, led) == pytest.approx(expected, abs=1e-5)
                compared += 1
    assert compared > 50


def test_campione_with_the_network_s_answers_decides_legally_and_deterministically() -> None:
    """At every lead of a smazzata: a legal card, the same card for the same seed, and
    answers that read the network (they differ from the opponent model's alone)."""
    states, _ = played_game(12)
    player = ChampionPlayer(3, worlds=8, net_share=NET_SHARE, net_answers=True)
    twin = ChampionPlayer(3, worlds=8, net_share=NET_SHARE, net_answers=True)
    leads = [g.view(s) for g, s in states if not g.view(s).current_trick and g.view(s).tricks]
    answered = 0
    for view in leads:
        card = player.choose(view)
        assert card.code in view.legal and twin.choose(view) == card
        if view.stock_count > 4:
            model = OpponentModel(view, 20)
            net = NetOpponent(view, 8)
            deals = inferred_deals(view, random.Random(1), 8, 3, model, net, 0.8)
            (hands, _), _ = deals[0]
            led = parse_card(view.legal[0][1:])
            answered += _answers(view, model)(hands, led) != _answers(view, model, net, 0.8, deals)(
                hands, led
            )
    assert len(leads) > 10 and answered > 3
