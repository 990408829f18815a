"""Fit the lead correction of ``campione``'s two-player rollout policy to its own search.

    python -m game.players.leadfit --deals 400 --seed 3561 --jobs 2

Expert iteration, one round. The rollouts of ``campione`` (:mod:`game.players.champion`)
play every seat with the chiamata players' policy (:func:`game.players.briscola.policy_card`),
which leads much less like the search itself: on the middle-game leads of esperto's
games, the policy leads the card the search values best about a third of the time. This
tool collects those decisions and fits a linear correction of the policy's leads to the
search's own values:

* *Data.* ``--deals`` two-player deals of ``esperto`` against ``esperto`` (game seed
  ``seed * 100000 + deal``), both seats; at every lead with a choice and more than
  ``EXACT_STOCK`` cards left to draw, ``campione``'s search values every legal card
  (its own sampled and weighted deals, rollouts by the policy *without* the
  correction, exact last tricks; :func:`search_values`).
* *Model.* A lead's score is the policy's value of the card plus ``theta`` times its
  :func:`game.players.briscola.lead_features`; the rollouts lead the best score.
* *Fit.* ``theta`` from 0 by plain gradient ascent (``STEPS`` steps of ``RATE``) on the
  mean search value of a soft-argmax choice (temperature ``TEMPERATURE`` policy points,
  L2 ``DECAY``): deterministic, pure Python.

It prints the fit on the even deals judged on the odd ones (the search's value of the
card chosen minus the best card's, a lead, against the policy's own leads), then the
coefficients fitted on every deal: what :data:`game.players.champion.ROLLOUT_LEAD` holds.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
from collections.abc import Sequence

from game.cards import parse_card
from game.engine import Game
from game.options import TableOptions
from game.players import briscola, create_player, policy
from game.players.champion import (
    EXACT_STOCK,
    ROLLOUT_WEIGHTS,
    WORLDS,
    ChampionPlayer,
    inferred_deals,
)
from game.players.common import decision_rng, map_jobs
from game.players.endgame import LastMemo
from game.view import View

#: Soft-argmax temperature (policy value points), learning rate, steps and L2 decay.
TEMPERATURE = 0.25
RATE = 4.0
STEPS = 300
DECAY = 1e-3

#: One lead: the policy's value and the features of each card of the hand, and the
#: search's value of each (the hand's order).
Sample = tuple[list[float], list[list[float]], list[float]]


def search_values(view: View, expert: ChampionPlayer) -> dict[int, float]:
    """``expert``'s search value (mean outcome) of each legal card of ``view``."""
    me = view.seat
    assert me is not None
    rng = decision_rng(expert.seed, view.smazzata, view.version, me)
    deals = inferred_deals(view, rng, WORLDS, expert.candidates, expert._model(view))
    legal = [parse_card(code[1:]) for code in view.legal]
    totals = dict.fromkeys(legal, 0.0)
    memo: LastMemo = {}
    count = 0
    for (hands, stock), times in deals:
        count += times
        for card in legal:
            mine, _ = briscola.rollout(
                view, [list(h) for h in hands], list(stock), card, me, memo, ROLLOUT_WEIGHTS
            )
            result = 1 if mine > 60 else 0 if mine == 60 else -1
            totals[card] += times * (result + 0.01 * mine)
    return {card: total / count for card, total in totals.items()}


def lead_sample(view: View, values: dict[int, float]) -> Sample:
    """The policy's value and the features of each card ``view``'s seat may lead."""
    me = view.seat
    assert me is not None and view.trump is not None and view.face_up is not None
    seen = 0
    for trick in view.tricks:
        for _, card in trick.plays:
            seen |= 1 << card
    seen |= 1 << view.face_up
    hand = list(view.hand)
    own = 0
    for card in hand:
        own |= 1 << card
    unseen = ((1 << 40) - 1) & ~(own | seen)
    tricks_left = 20 - len(view.tricks)
    scores: list[float] = []
    policy.choose_card(
        me, hand, [], view.leader, view.trump, (1.0, 0.0) if me == 0 else (0.0, 1.0),
        unseen, (0, 0), tuple(view.hand_sizes), False, tricks_left, -1, 2, scores,
        ROLLOUT_WEIGHTS,
    )
    p_trump, stage = briscola.lead_context(unseen, view.hand_sizes[1 - me], view.trump, tricks_left)
    features = [briscola.lead_features(c, view.trump, unseen, p_trump, stage) for c in hand]
    return scores, features, [values[c] for c in hand]


def deal_samples(task: tuple[int, int]) -> list[Sample]:
    """The leads of one deal (both seats) with the search's values."""
    seed, deal = task
    options = TableOptions.model_validate({"game": "briscola", "players": 2})
    game = Game.new(options, random.Random(seed * 100000 + deal))
    players = [create_player("esperto", deal * 10 + s) for s in range(2)]
    expert = ChampionPlayer(0, rollout_lead=None)
    samples = []
    while not game.is_over() and game.scored_count == 0 and len(game.stock) > EXACT_STOCK:
        seat = game.current_seat()
        assert seat is not None
        view = game.view(seat)
        if len(view.legal) > 1 and not view.current_trick:
            samples.append(lead_sample(view, search_values(view, expert)))
        game.apply(seat, players[seat].choose(view))
    return samples


def _scores(sample: Sample, theta: Sequence[float]) -> list[float]:
    values, features, _ = sample
    return [
        v + sum(t * x for t, x in zip(theta, f, strict=True))
        for v, f in zip(values, features, strict=True)
    ]


def regrets(samples: Sequence[Sample], theta: Sequence[float]) -> list[float]:
    """The search's value of the card led minus the best card's, a lead."""
    out = []
    for sample in samples:
        scores = _scores(sample, theta)
        chosen = max(range(len(scores)), key=scores.__getitem__)
        out.append(sample[2][chosen] - max(sample[2]))
    return out


def fit(samples: Sequence[Sample]) -> list[float]:
    """``theta`` (module doc: soft-argmax gradient ascent from 0)."""
    theta = [0.0] * len(briscola.LEAD_FEATURES)
    for _ in range(STEPS):
        grad = [0.0] * len(theta)
        for sample in samples:
            scores = _scores(sample, theta)
            top = max(scores)
            weights = [math.exp((s - top) / TEMPERATURE) for s in scores]
            total = sum(weights)
            chance = [w / total for w in weights]
            expected = sum(p * v for p, v in zip(chance, sample[2], strict=True))
            for p, v, features in zip(chance, sample[2], sample[1], strict=True):
                coefficient = p * (v - expected) / TEMPERATURE
                for k, x in enumerate(features):
                    grad[k] += coefficient * x
        n = len(samples)
        theta = [t + RATE * (g / n - DECAY * t) for t, g in zip(theta, grad, strict=True)]
    return theta


def _se(values: Sequence[float]) -> float:
    return float(statistics.stdev(values)) / math.sqrt(len(values))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--deals", type=int, default=400)
    parser.add_argument("--seed", type=int, default=3561)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args(argv)
    per_deal = map_jobs(deal_samples, [(args.seed, d) for d in range(args.deals)], args.jobs)
    even = [s for d, samples in enumerate(per_deal) if d % 2 == 0 for s in samples]
    odd = [s for d, samples in enumerate(per_deal) if d % 2 == 1 for s in samples]
    zero = [0.0] * len(briscola.LEAD_FEATURES)
    theta = fit(even)
    base, new = regrets(odd, zero), regrets(odd, theta)
    diff = [a - b for a, b in zip(new, base, strict=True)]
    print(f"{len(even)} leads fitted (even deals), {len(odd)} judged (odd deals): regret a lead "
          f"{-statistics.mean(base):.4f} without the correction, {-statistics.mean(new):.4f} "
          f"with it, gain {statistics.mean(diff):+.4f} (se {_se(diff):.4f})")
    final = fit(even + odd)
    print("ROLLOUT_LEAD = (" + ", ".join(f"{t:.4f}" for t in final) + ")")
    for name, t in zip(briscola.LEAD_FEATURES, final, strict=True):
        print(f"  {name:18} {t:+.4f}")


if __name__ == "__main__":
    main()
