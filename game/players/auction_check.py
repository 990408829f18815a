"""How sober is a search player's auction? Its estimates against the contracts made.

    python -m game.players.auction_check --level forte --smazzate 200 --seed 888000 --jobs 2

Self-play smazzate of five-player chiamata with the level in every seat. For each
contract the chiamante's own estimate of making the call it won with
(``SearchPlayer.last_bid_p``) is set against what happened, by contract level (61–70
plain score, 71 and up doubled or tripled). An estimate well above the rate made means
the auction is optimistic (the seat that wins it is the one whose estimate was highest);
``esperto`` corrects its estimates by the gaps this measured
(:mod:`game.players.expert`).
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Callable
from dataclasses import dataclass

from game.engine import Game
from game.events import SmazzataScored
from game.options import TableOptions
from game.players import create_player
from game.players.common import map_jobs
from game.players.search import SearchPlayer


@dataclass(frozen=True)
class Contract:
    """One smazzata's contract: its target, the chiamante's estimate (None if its
    winning call was not weighed by rollouts), whether it was made, its score."""

    target: int
    estimate: float | None
    made: bool
    score: float


def play_contract(
    seed: int, make: Callable[[int], SearchPlayer], options: TableOptions | None = None
) -> Contract:
    """Play one self-play smazzata of the deal drawn from ``seed``."""
    base = options or TableOptions()
    game = Game.new(base.model_copy(update={"match_end": "hands:1"}), random.Random(seed))
    players = [make(seed * 10 + seat) for seat in range(game.n)]
    estimates: dict[int, dict[str, float]] = {}
    while not game.is_over() and game.scored_count == 0:
        seat = game.current_seat()
        assert seat is not None
        view = game.view(seat)
        action = players[seat].choose(view)
        if view.phase == "auction" and len(view.legal) > 1:
            estimates[seat] = players[seat].last_bid_p
        game.apply(seat, action)
    scored = next(e for e in game.history if isinstance(e, SmazzataScored))
    chiamante = scored.chiamante
    calls = [code for seat, code in game.view(chiamante).auction if seat == chiamante]
    won_with = next((code for code in reversed(calls) if code not in ("P", "M")), None)
    estimate = estimates.get(chiamante, {}).get(won_with or "")
    return Contract(scored.target, estimate, scored.won, scored.deltas[chiamante])


def summary(contracts: list[Contract]) -> str:
    """Estimate against made, per contract level."""
    lines = [f"{'contracts':<10} {'n':>5} {'estimate':>9} {'made':>7} {'chiamante score':>16}"]
    for name, low, high in (("61-70", 0, 70), ("71+", 71, 120), ("all", 0, 120)):
        rows = [c for c in contracts if low <= c.target <= high]
        if not rows:
            continue
        est = [c.estimate for c in rows if c.estimate is not None]
        mean_est = f"{sum(est) / len(est):.3f}" if est else "-"
        made = sum(c.made for c in rows) / len(rows)
        score = sum(c.score for c in rows) / len(rows)
        lines.append(f"{name:<10} {len(rows):>5} {mean_est:>9} {made:>7.3f} {score:>+16.3f}")
    return "\n".join(lines)


def _task(args: tuple[str, int]) -> Contract:
    level, seed = args
    return play_contract(seed, lambda s: _search(level, s))


def _search(level: str, seed: int) -> SearchPlayer:
    player = create_player(level, seed)
    if not isinstance(player, SearchPlayer):
        raise ValueError(f"not a search level: {level!r}")
    return player


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--level", default="forte", help="forte or esperto")
    parser.add_argument("--smazzate", type=int, default=200)
    parser.add_argument("--seed", type=int, default=888_000)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args(argv)
    _search(args.level, 0)  # fail early on a level without an auction search
    tasks = [(args.level, args.seed + i) for i in range(args.smazzate)]
    contracts = map_jobs(_task, tasks, args.jobs)
    print(f"{args.level} self-play, {args.smazzate} smazzate from seed {args.seed}")
    print(summary(contracts))


if __name__ == "__main__":
    main()
