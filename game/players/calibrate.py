"""Fit the hand-evaluation model of :mod:`game.players.bidding` on self-play rollouts.

    python -m game.players.calibrate --deals 4000 --seed 7

For random deals it makes one seat the chiamante with each plausible briscola and called
card, plays the smazzata out with the heuristic policy for all seats
(:class:`game.players.sim.World`), and regresses the calling side's card points on the
hand features by least squares. It prints coefficient tuples to paste into
``bidding.py``. Pure Python (no numpy): the normal equations are 9×9.
"""

from __future__ import annotations

import argparse
import math
import random

from game.players.bidding import carichi_features, features
from game.players.sim import World


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting and a tiny ridge for stability."""
    n = len(b)
    m = [[*row[:], b[i]] for i, row in enumerate(a)]
    for i in range(n):
        m[i][i] += 1e-6
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[pivot] = m[pivot], m[col]
        for r in range(n):
            if r != col and m[col][col]:
                f = m[r][col] / m[col][col]
                for k in range(col, n + 1):
                    m[r][k] -= f * m[col][k]
    return [m[i][n] / m[i][i] if m[i][i] else 0.0 for i in range(n)]


def least_squares(xs: list[list[float]], ys: list[float]) -> tuple[list[float], float]:
    """Coefficients and residual standard deviation."""
    k = len(xs[0])
    ata = [[0.0] * k for _ in range(k)]
    aty = [0.0] * k
    for x, y in zip(xs, ys, strict=True):
        for i in range(k):
            aty[i] += x[i] * y
            xi = x[i]
            row = ata[i]
            for j in range(k):
                row[j] += xi * x[j]
    coef = _solve(ata, aty)
    resid = [
        y - sum(c * v for c, v in zip(coef, x, strict=True)) for x, y in zip(xs, ys, strict=True)
    ]
    sd = math.sqrt(sum(r * r for r in resid) / max(1, len(resid) - k))
    return coef, sd


def play_out(
    hands: list[list[int]],
    chiamante: int,
    leader: int,
    trump: int | None,
    called: int | None,
    kind: str,
    follow_suit: bool = False,
) -> int:
    """Team points of the chiamante's side after a heuristic rollout of a fresh deal."""
    socio = None
    if called is not None:
        holder = next(s for s in range(5) if called in hands[s])
        socio = None if holder == chiamante else holder
    world = World(
        hands=[list(h) for h in hands],
        trump=trump,
        trump_public=True,
        al_buio=False,
        chiamante=chiamante,
        socio=socio,
        called=called,
        revealed=False,
        kind=kind,
        points=61,
        follow_suit=follow_suit,
        tie=False,
        cappotto=True,
        leader=leader,
        trick=[],
        trick_no=0,
        captured=[0] * 5,
        played=0,
        voids=[0] * 5,
    )
    world.rollout()
    return world.caller_points()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    team_x: list[list[float]] = []
    team_y: list[float] = []
    solo_x: list[list[float]] = []
    solo_y: list[float] = []
    car_x: list[list[float]] = []
    car_y: list[float] = []
    for _ in range(args.deals):
        deck = list(range(40))
        rng.shuffle(deck)
        hands = [deck[i * 8 : i * 8 + 8] for i in range(5)]
        me = rng.randrange(5)
        leader = rng.randrange(5)
        hand = hands[me]
        for suit in range(4):
            trumps = [c for c in hand if c // 10 == suit]
            if len(trumps) < 2:
                continue
            held = {c % 10 for c in trumps}
            top_missing = next(r for r in range(10) if r not in held)
            calls = {suit * 10 + top_missing}
            if 9 not in held:
                calls.add(suit * 10 + 9)
            for called in calls:
                team_x.append(features(hand, suit, called))
                team_y.append(play_out(hands, me, leader, suit, called, "rank"))
            if len(trumps) >= 4:
                own = max(trumps)  # call the weakest trump held: in mano
                solo_x.append(features(hand, suit, None))
                solo_y.append(play_out(hands, me, leader, suit, own, "rank"))
        if sum(1 for c in hand if c % 10 <= 1) >= 3:
            car_x.append(carichi_features(hand))
            car_y.append(play_out(hands, me, leader, None, None, "carichi"))
    fits = (("TEAM", team_x, team_y), ("SOLO", solo_x, solo_y), ("CARICHI", car_x, car_y))
    for name, xs, ys in fits:
        coef, sd = least_squares(xs, ys)
        mean = sum(ys) / len(ys)
        print(f"{name}_COEF = ({', '.join(f'{c:.3f}' for c in coef)})")
        print(f"{name}_SD = {sd:.2f}   # n={len(ys)} mean={mean:.1f}")


if __name__ == "__main__":
    main()
