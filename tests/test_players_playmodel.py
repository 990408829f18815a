"""The two-player play model (game.players.playmodel), its fitting tool and the opponent
model campione reads the opponent with."""

from __future__ import annotations

import math
import random
from collections.abc import Iterator

from game import Game, TableOptions
from game.players import briscola, playfit, playmodel
from game.players.champion import MATCH, OpponentModel, inferred_deals, unseen_cards
from game.players.heuristic import HeuristicPlayer
from game.view import View


def _options() -> TableOptions:
    return TableOptions.model_validate(
        {"game": "briscola", "players": 2, "match_end": "hands:1", "briscola_match": "wins:1"}
    )


class _Forgetful(dict[tuple[int, tuple[int, ...]], float]):
    """A memo that keeps nothing."""

    def __setitem__(self, key: tuple[int, tuple[int, ...]], value: float) -> None:
        return None


def _positions(seeds: range) -> Iterator[tuple[Game, int, View]]:
    """Every position of two-player games between rule-based players (the game, the
    seat on turn and its view), the games dealt from ``seeds``."""
    for seed in seeds:
        game = Game.new(_options(), random.Random(seed))
        players = [HeuristicPlayer(s) for s in range(2)]
        while not game.scored_count:
            seat = game.current_seat()
            assert seat is not None
            view = game.view(seat)
            yield game, seat, view
            game.apply(seat, players[seat].choose(view))


def _likelihoods(view: View, hands: list[list[int]], forget: bool, share: float) -> list[float]:
    model = OpponentModel(view, depth=5, share=share)
    if forget:
        model._memo = _Forgetful()
    return [model.likelihood(h) for h in hands]


def test_the_fitted_theta_has_one_float_a_feature_and_its_recorded_digest() -> None:
    assert len(playmodel.THETA) == len(playmodel.FEATURES) == len(set(playmodel.FEATURES))
    assert all(isinstance(t, float) and math.isfinite(t) for t in playmodel.THETA)
    assert playmodel.digest(playmodel.THETA) == playmodel.THETA_DIGEST
    changed = (playmodel.THETA[0] + 1e-5, *playmodel.THETA[1:])
    assert playmodel.digest(changed) != playmodel.THETA_DIGEST


def test_the_model_gives_each_card_of_a_hand_a_chance_and_they_sum_to_one() -> None:
    rng = random.Random(5)
    seen_rule = 0
    for _ in range(300):
        cards = rng.sample(range(40), 5)
        hand = cards[: rng.choice((2, 3))]
        trick = cards[3:4] if rng.random() < 0.5 else []
        trump = rng.randrange(4)
        own = sum(1 << c for c in hand) | sum(1 << c for c in trick)
        unseen = ((1 << 40) - 1) & ~own & rng.getrandbits(40)
        stock = rng.choice((0, 4, 20, 34))
        probs = playmodel.probabilities(hand, trick, trump, unseen, stock)
        assert len(probs) == len(hand)
        assert all(0.0 < p < 1.0 for p in probs)
        assert math.isclose(sum(probs), 1.0, rel_tol=1e-12)
        # the model leans to the rule-based card more often than not
        pick = briscola.choose_card(hand, trick, 0, 1 if trick else 0, 2, trump, None)
        seen_rule += probs[hand.index(pick)] > 1.0 / len(hand)
    assert seen_rule > 150


def test_the_memoised_likelihoods_equal_those_computed_with_nothing_remembered() -> None:
    checked = 0
    for share in (1.0, 0.5):
        for game, seat, view in _positions(range(23, 24)):
            if view.stock_count > 4 and len(view.tricks) >= 5 and len(view.tricks) % 3 == 0:
                rng = random.Random(len(view.tricks))
                hands = [briscola.sample_world(view, rng)[0][1 - seat] for _ in range(30)]
                hands.append(list(game.hands[1 - seat]))
                remembered = _likelihoods(view, hands, False, share)
                assert remembered == _likelihoods(view, hands, True, share)
                assert len(set(remembered)) > 1
                checked += 1
    assert checked >= 6


def test_one_play_s_chance_is_the_play_model_s_for_the_hand_it_was_played_from() -> None:
    """The opponent has just led (no draw since): the likelihood of a hand is the play
    model's chance of that lead from the hand plus the card led, read from what the
    opponent knew."""
    checked = 0
    for game, seat, view in _positions(range(40, 44)):
        if not view.current_trick or view.stock_count == 0:
            continue
        assert view.trump is not None and view.face_up is not None
        led = view.current_trick[0][1]
        theirs = list(game.hands[1 - seat])
        before = tuple(sorted((*theirs, led)))
        known = 1 << view.face_up
        for trick in view.tricks:
            for _, card in trick.plays:
                known |= 1 << card
        for card in before:
            known |= 1 << card
        unseen = ((1 << 40) - 1) & ~known
        stock = playmodel.stock_before(len(view.tricks))
        probs = playmodel.probabilities(before, [], view.trump, unseen, stock)
        model = OpponentModel(view, depth=1, share=1.0)
        assert math.isclose(model.likelihood(theirs), probs[before.index(led)])
        checked += 1
    assert checked >= 20


def test_the_model_s_deals_place_the_opponent_s_cards_better_than_uniform_deals() -> None:
    """On middle-game positions of rule-based games, the deals the opponent model
    weights put more of the opponent's real hidden cards in its hand than uniform ones,
    and give them a higher mean log-probability."""
    placed = {"model": 0.0, "uniform": 0.0}
    scores = {"model": 0.0, "uniform": 0.0}
    positions = 0
    for game, seat, view in _positions(range(60, 62)):
        if view.stock_count > 4 and len(view.tricks) >= 3 and len(view.legal) > 1:
            positions += 1
            pool = unseen_cards(view)
            truth = set(game.hands[1 - seat]) & set(pool)
            rng = random.Random(positions)
            deals = {
                "model": inferred_deals(view, rng, 100, 3, OpponentModel(view)),
                "uniform": [(briscola.sample_world(view, rng), 1) for _ in range(100)],
            }
            for name, drawn in deals.items():
                weight = dict.fromkeys(pool, 0.0)
                total = 0
                for (hands, _stock), times in drawn:
                    total += times
                    for card in hands[1 - seat]:
                        if card in weight:
                            weight[card] += times
                placed[name] += sum(weight[c] for c in truth) / total / len(truth)
                scores[name] += sum(math.log((weight[c] + 0.5) / (total + 1)) for c in truth) / len(
                    truth
                )
    assert positions >= 20
    assert placed["model"] > placed["uniform"] + 0.01 * positions
    assert scores["model"] > scores["uniform"]


def test_the_fit_raises_the_likelihood_of_plays_and_judges_each_player() -> None:
    plays = [p for g in range(2) for p in playfit.game_plays((8000, 2, g))]
    assert plays and all(p[0] == "normale" for p in plays)
    data = playfit.samples(plays)
    theta = playfit.fit(data)
    assert playfit.log_likelihood(data, theta) > playfit.log_likelihood(data, [0.0] * len(theta))
    # normale plays the rule-based card: the fit says so
    assert theta[playmodel.FEATURES.index("lead rule-based card")] > 0.5
    assert theta[playmodel.FEATURES.index("follow rule-based card")] > 0.5
    judged = playfit.judge(plays, theta)
    n, new, old, uniform = judged["normale"]
    assert n == len(plays) and new > uniform and old > uniform


def test_the_answers_to_a_lead_are_weighed_by_how_likely_each_kind_of_player_is() -> None:
    """The opponent's chances of answering a lead sum to one over its hand; a model of
    the rule-based card alone gives that card ``match``; an opponent whose plays so far
    were all the rule-based card is read as that kind (its answer is the rule-based
    card's, more than under the even prior), one whose plays were not, as the play
    model's."""
    checked = 0
    for game, seat, view in _positions(range(70, 72)):
        if view.current_trick or view.stock_count <= 4 or len(view.tricks) < 4:
            continue
        assert view.trump is not None
        theirs = list(game.hands[1 - seat])
        led = view.hand[0]
        model = OpponentModel(view, depth=20)
        chances = model.reply_chances(theirs, led, view.stock_count)
        assert len(chances) == len(theirs)
        assert all(0.0 < c < 1.0 for c in chances)
        assert math.isclose(sum(chances), 1.0, rel_tol=1e-12)
        pick = briscola.choose_card(theirs, [led], 1 - seat, seat, 2, view.trump, None)
        rule = OpponentModel(view, depth=20, theta=None).reply_chances(
            theirs, led, view.stock_count
        )
        assert rule[theirs.index(pick)] == MATCH
        # the opponent is normale (the rule-based card): its plays say so
        model_share, rule_share = model.kinds(theirs)
        assert rule_share > model_share
        assert chances[theirs.index(pick)] > 0.5 * MATCH
        checked += 1
    assert checked >= 5
    assert OpponentModel(view).reply_chances([5], 3, 0) == [1.0]
