"""Fit the two-player play model (:mod:`game.players.playmodel`) by maximum likelihood.

    python -m game.players.playfit --games 60 --seed 8000 --jobs 2

*Data.* Two-player Briscola games between a mix of players, ``--games`` of each pair of
:data:`PAIRS` (seats swapped every other game; game ``g`` of pair ``p`` is dealt from
seed ``seed + 1000 p + g``, its players seeded ``10 × that + seat``). Every card play
with more than one card in hand is a sample: the player's hand, the cards on the
table, the cards it has not seen, the cards left to draw, and the card it played.

``campione`` plays with the opponent model it had before this one (the rule-based
card with probability 0.9, its last 4 plays), so the data does not depend on θ.

*Fit.* θ of the conditional logit maximises the log-likelihood of the plays, each
player's plays (``esperto``, ``forte``, ``normale``, ``campione``) weighted alike so
that the model is not one player's, with an L2 penalty ``DECAY`` × |θ|² / 2: Newton's
method from θ = 0, ``STEPS`` steps (halved while the likelihood does not rise).
Deterministic, pure Python.

It prints the fit on the even games judged on the odd ones (log-likelihood a play, per
player, against the old model: the rule-based card with probability 0.9, any other the
rest, and against a uniform choice), then θ fitted on every game: what
:data:`game.players.playmodel.THETA` holds, with its digest.
"""

from __future__ import annotations

import argparse
import math
import random
from collections.abc import Sequence

from game.actions import PlayCard
from game.engine import Game
from game.options import TableOptions
from game.players import Player, briscola, create_player
from game.players.champion import ChampionPlayer, unseen_cards
from game.players.common import map_jobs
from game.players.playmodel import FEATURES, digest, features, softmax, stock_before

#: The pairs of players whose games are fitted.
PAIRS = (
    ("esperto", "esperto"),
    ("forte", "forte"),
    ("normale", "normale"),
    ("campione", "esperto"),
    ("campione", "forte"),
    ("campione", "normale"),
    ("esperto", "forte"),
    ("esperto", "normale"),
    ("forte", "normale"),
)
#: L2 penalty and Newton steps.
DECAY = 1.0
STEPS = 12
#: The old model's chance of the rule-based card (champion's ``MATCH`` before this one).
OLD_MATCH = 0.9

#: One play: player, game seed, hand, cards on the table, trump, unseen cards (mask),
#: cards left to draw, card played.
Play = tuple[str, int, tuple[int, ...], tuple[int, ...], int, int, int, int]


def game_plays(task: tuple[int, int, int]) -> list[Play]:
    """The plays with a choice of game ``g`` of pair ``p`` (``task``: seed, p, g)."""
    seed, p, g = task
    deal = seed + 1000 * p + g
    options = TableOptions.model_validate(
        {"game": "briscola", "players": 2, "match_end": "hands:1"}
    )
    game = Game.new(options, random.Random(deal))
    kinds = PAIRS[p] if g % 2 == 0 else PAIRS[p][::-1]
    players = [_player(kinds[s], 10 * deal + s) for s in range(2)]
    plays: list[Play] = []
    while not game.is_over() and game.scored_count == 0:
        seat = game.current_seat()
        assert seat is not None
        view = game.view(seat)
        action = players[seat].choose(view)
        if view.phase == "play" and len(view.legal) > 1 and view.trump is not None:
            table = tuple(c for _, c in view.current_trick)
            unseen = sum(1 << card for card in unseen_cards(view))
            assert isinstance(action, PlayCard)
            chosen = action.card
            plays.append(
                (
                    kinds[seat],
                    deal,
                    tuple(view.hand),
                    table,
                    view.trump,
                    unseen,
                    stock_before(len(view.tricks)),
                    chosen,
                )
            )
        game.apply(seat, action)
    return plays


def _player(kind: str, seed: int) -> Player:
    """The level ``kind``; ``campione`` as it was before the play model (the rule-based
    card with probability 0.9, its last 4 plays), so the data does not depend on θ."""
    if kind == "campione":
        return ChampionPlayer(seed, depth=4, match=OLD_MATCH, theta=None)
    return create_player(kind, seed)


#: A play ready to fit: its weight, each card's sparse features, the index played.
_Sample = tuple[float, list[list[tuple[int, float]]], int]


def samples(plays: Sequence[Play]) -> list[_Sample]:
    """The plays' features, each player's plays weighted alike (mean weight 1)."""
    counts: dict[str, int] = {}
    for play in plays:
        counts[play[0]] = counts.get(play[0], 0) + 1
    out: list[_Sample] = []
    for kind, _deal, hand, table, trump, unseen, stock, card in plays:
        weight = len(plays) / (len(counts) * counts[kind])
        pick = briscola.choose_card(hand, table, 0, 0 if not table else 1, 2, trump, None)
        rows = [features(c, hand, table, trump, unseen, stock, pick) for c in hand]
        out.append((weight, rows, hand.index(card)))
    return out


def log_likelihood(data: Sequence[_Sample], theta: Sequence[float]) -> float:
    """The weighted log-likelihood of the plays, minus the L2 penalty."""
    total = -0.5 * DECAY * sum(t * t for t in theta)
    for weight, rows, chosen in data:
        total += weight * math.log(softmax(rows, theta)[chosen])
    return total


def fit(data: Sequence[_Sample]) -> list[float]:
    """θ by Newton's method from 0 (module doc)."""
    n = len(FEATURES)
    theta = [0.0] * n
    current = log_likelihood(data, theta)
    for _ in range(STEPS):
        grad = [-DECAY * t for t in theta]
        hess = [[DECAY if i == j else 0.0 for j in range(n)] for i in range(n)]
        for weight, rows, chosen in data:
            probs = softmax(rows, theta)
            mean: dict[int, float] = {}
            for p, row in zip(probs, rows, strict=True):
                for i, v in row:
                    mean[i] = mean.get(i, 0.0) + p * v
            for i, v in rows[chosen]:
                grad[i] += weight * v
            for i, v in mean.items():
                grad[i] -= weight * v
            for p, row in zip(probs, rows, strict=True):
                centred = dict((i, -v) for i, v in mean.items())
                for i, v in row:
                    centred[i] = centred.get(i, 0.0) + v
                items = list(centred.items())
                for i, a in items:
                    line = hess[i]
                    for j, b in items:
                        line[j] += weight * p * a * b
        step = _solve(hess, grad)
        scale = 1.0
        while scale > 1e-4:
            trial = [t + scale * s for t, s in zip(theta, step, strict=True)]
            value = log_likelihood(data, trial)
            if value > current:
                theta, current = trial, value
                break
            scale /= 2
        else:
            break
    return theta


def _solve(matrix: list[list[float]], vector: list[float]) -> list[float]:
    """x with matrix · x = vector (Gaussian elimination, partial pivoting)."""
    n = len(vector)
    a = [[*row, b] for row, b in zip(matrix, vector, strict=True)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        a[col], a[pivot] = a[pivot], a[col]
        for r in range(col + 1, n):
            factor = a[r][col] / a[col][col]
            if factor:
                for k in range(col, n + 1):
                    a[r][k] -= factor * a[col][k]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        x[r] = (a[r][n] - sum(a[r][k] * x[k] for k in range(r + 1, n))) / a[r][r]
    return x


def judge(
    plays: Sequence[Play], theta: Sequence[float]
) -> dict[str, tuple[int, float, float, float]]:
    """Per player: plays, and the mean log-likelihood a play of the fitted model, the
    old model and a uniform choice."""
    out: dict[str, list[float]] = {}
    for play, (_w, rows, chosen) in zip(plays, samples(plays), strict=True):
        kind, _deal, hand, table, trump = play[:5]
        pick = briscola.choose_card(hand, table, 0, 0 if not table else 1, 2, trump, None)
        old = OLD_MATCH if hand[chosen] == pick else (1 - OLD_MATCH) / (len(hand) - 1)
        new = math.log(softmax(rows, theta)[chosen])
        sums = out.setdefault(kind, [0, 0.0, 0.0, 0.0])
        sums[0] += 1
        sums[1] += new
        sums[2] += math.log(old)
        sums[3] += -math.log(len(hand))
    return {k: (int(s[0]), s[1] / s[0], s[2] / s[0], s[3] / s[0]) for k, s in out.items()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--games", type=int, default=60)
    parser.add_argument("--seed", type=int, default=8000)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args(argv)
    tasks = [(args.seed, p, g) for p in range(len(PAIRS)) for g in range(args.games)]
    plays = [play for game in map_jobs(game_plays, tasks, args.jobs) for play in game]
    report(plays)


def report(plays: Sequence[Play]) -> list[float]:
    """Print the held-out figures and θ fitted on every play; return θ."""
    even = [p for p in plays if p[1] % 2 == 0]
    odd = [p for p in plays if p[1] % 2 == 1]
    theta = fit(samples(even))
    print(f"{len(even)} plays fitted (even games), {len(odd)} judged (odd games):")
    print("player      plays  log-likelihood a play: model   old (0.9)  uniform")
    for kind, (n, new, old, uniform) in sorted(judge(odd, theta).items()):
        print(f"{kind:10s} {n:6d}  {new:30.4f} {old:9.4f} {uniform:8.4f}")
    theta = fit(samples(plays))
    print("THETA = (" + ", ".join(f"{t:.6f}" for t in theta) + ")")
    print("digest", digest(theta))
    for name, t in zip(FEATURES, theta, strict=True):
        print(f"  {name:36s} {t:+.3f}")
    return theta


if __name__ == "__main__":
    main()
