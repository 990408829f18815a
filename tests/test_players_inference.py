"""The esperto player and its inference: weights that favour the real deal, legal
choices in every variant, decisions reproducible from the seed."""

from __future__ import annotations

import random

import pytest

from game.engine import Game
from game.options import TableOptions
from game.players.expert import ExpertPlayer
from game.players.heuristic import HeuristicPlayer
from game.players.inference import Inference, resample
from game.players.policy import choose_card
from game.players.sampling import Deal, Sampler


def test_the_weights_favour_the_real_deal() -> None:
    """Against players who act like the model, the real layout of the unseen cards is
    more likely than the uniform deals: the weighted share of cards placed with their
    real holder beats the uniform share, over views of the play phase."""
    options = TableOptions(follow_suit=True, match_end="hands:1")
    uniform = weighted = 0.0
    views = 0
    for seed in range(3):
        game = Game.new(options, random.Random(100 + seed))
        players = [HeuristicPlayer(seat) for seat in range(game.n)]
        step = 0
        while not game.is_over() and game.scored_count == 0:
            seat = game.current_seat()
            assert seat is not None
            view = game.view(seat)
            if view.phase == "play" and len(view.legal) > 1 and step % 4 == 0 and view.trick_no:
                truth = {c: s for s, hand in enumerate(game.hands) for c in hand}
                sampler = Sampler(view)
                inference = Inference(view, sampler)
                rng = random.Random(step)
                deals = [sampler.deal(rng) for _ in range(60)]
                weights = [inference.weight(deal) for deal in deals]
                shares = [_share(deal, truth, seat) for deal in deals]
                uniform += sum(shares) / len(shares)
                weighted += sum(w * s for w, s in zip(weights, shares, strict=True)) / sum(
                    weights
                )
                views += 1
            step += 1
            game.apply(seat, players[seat].choose(view))
    assert views >= 10
    assert weighted / views > uniform / views + 0.02, (weighted / views, uniform / views)


def _share(deal: Deal, truth: dict[int, int], me: int) -> float:
    right = total = 0
    for seat, hand in enumerate(deal.hands):
        if seat == me:
            continue
        for card in hand:
            total += 1
            right += truth.get(card) == seat
    return right / total if total else 1.0


def test_resampling_follows_the_weights() -> None:
    deals = [Deal(((i,),), None, None) for i in range(4)]
    drawn = resample(deals, [0.0, 3.0, 1.0, 0.0], 8, random.Random(1))
    counts = {deal.hands[0][0]: count for deal, count in drawn}
    assert sum(counts.values()) == 8
    assert counts == {1: 6, 2: 2}  # systematic: exactly in proportion, nothing at 0
    # no information: the first deals, once each
    assert [c for _, c in resample(deals, [0.0] * 4, 2, random.Random(1))] == [1, 1]


def test_the_policy_values_agree_with_its_choice() -> None:
    rng = random.Random(5)
    for _ in range(200):
        cards = rng.sample(range(40), 12)
        legal, trick = cards[:4], cards[4 : 4 + rng.randrange(0, 4)]
        unseen = sum(1 << c for c in cards[8:])
        args = (1, legal, trick, 0, rng.choice([None, 0, 1, 2, 3]), [1.0, 0.3, 0.6, 0.2, 0.5],
                unseen, [0] * 5, [4, 4, 4, 4, 4], True, 4)
        values: list[float] = []
        choice = choose_card(*args, values=values)  # type: ignore[arg-type]
        assert choice == choose_card(*args)  # type: ignore[arg-type]
        assert len(values) == len(legal)
        assert legal[values.index(max(values))] == choice


@pytest.mark.parametrize(
    "update", [{}, {"players": 6}, {"players": 4}, {"a_punti": True}, {"game": "briscola"}]
)
def test_esperto_plays_whole_smazzate(update: dict[str, object]) -> None:
    """Every decision of a smazzata (auction, declaration, play) in the main variants."""
    options = TableOptions.model_validate({**update, "match_end": "hands:1"})
    game = Game.new(options, random.Random(7))
    player = ExpertPlayer(1, budget=400, candidates=2)
    while not game.is_over() and game.scored_count == 0:
        seat = game.current_seat()
        assert seat is not None
        view = game.view(seat)
        action = player.choose(view)
        assert action.code in view.legal
        game.apply(seat, action)
    assert game.scored_count == 1
