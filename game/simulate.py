"""Play many random smazzate through the public API and print speed and statistics.

    python -m game.simulate --games 20000 --seed 1 [--option monte=on ...]

Random players choose uniformly among ``legal_actions`` (monte included). The figure of
merit is smazzate per second on one core, legal-action computation at every step included.
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from itertools import groupby

from game.actions import Action, PlayCard
from game.engine import Game
from game.events import AuctionWon, DealVoided, SmazzataScored
from game.options import TableOptions


@dataclass
class Stats:
    smazzate: int = 0
    voided: Counter[str] = field(default_factory=Counter)
    contracts: Counter[str] = field(default_factory=Counter)
    chiamante_wins: int = 0
    cappotti: int = 0
    in_mano: int = 0
    actions: int = 0


def parse_options(pairs: list[str]) -> dict[str, str]:
    result: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise SystemExit(f"--option wants name=value, got {pair!r}")
        result[key] = value
    return result


def pick(rng: random.Random, legal: list[Action]) -> Action:
    """A random legal action: a uniformly chosen kind (pass, rank call, 2-call, obbligato,
    a carichi, monte; or a card), then a uniform action of that kind.

    Uniform over all actions would almost never call a rank (one rank call against up to
    hundreds of 2- and obbligato calls), which makes the auction statistics meaningless.
    """
    if len(legal) <= 8 or type(legal[0]) is PlayCard:
        return legal[rng.randrange(len(legal))]
    # legal_actions lists each kind contiguously, so groupby finds the kinds in C.
    groups = [list(group) for _, group in groupby(legal, type)]
    group = groups[rng.randrange(len(groups))]
    return group[rng.randrange(len(group))]


def simulate(
    smazzate: int, seed: int, overrides: dict[str, str] | None = None, per_match: int = 20
) -> Stats:
    """Play until ``smazzate`` scored smazzate, in matches of ``per_match`` smazzate."""
    stats = Stats()
    chooser = random.Random(seed)
    match_no = 0
    while stats.smazzate < smazzate:
        todo = min(per_match, smazzate - stats.smazzate)
        options = TableOptions.model_validate({**(overrides or {}), "match_end": f"hands:{todo}"})
        game = Game.new(options, random.Random(seed * 1_000_003 + match_no))
        match_no += 1
        while not game.is_over():
            seat = game.current_seat()
            assert seat is not None
            legal = game.legal_actions(seat)
            game.apply(seat, pick(chooser, legal))
        stats.actions += game.version
        for event in game.history:
            if isinstance(event, AuctionWon):
                stats.contracts[event.contract] += 1
            elif isinstance(event, DealVoided):
                stats.voided[event.reason] += 1
            elif isinstance(event, SmazzataScored):
                stats.smazzate += 1
                stats.chiamante_wins += event.won
                stats.cappotti += event.cappotto
                stats.in_mano += event.in_mano
    return stats


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10_000, help="smazzate to play")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--option", action="append", default=[], help="name=value, repeatable")
    args = parser.parse_args(argv)
    overrides = parse_options(args.option)
    start = time.perf_counter()
    cpu_start = time.process_time()
    stats = simulate(args.games, args.seed, overrides)
    wall = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    n = max(stats.smazzate, 1)
    won = sum(stats.contracts.values())
    print(f"smazzate scored     {stats.smazzate}")
    print(f"wall time           {wall:.2f} s  (cpu {cpu:.2f} s)")
    print(f"smazzate per second {stats.smazzate / wall:,.0f}")
    print(f"actions per second  {stats.actions / wall:,.0f}")
    print(f"voided deals        {dict(stats.voided)}")
    print(
        "auction won by kind "
        + ", ".join(
            f"{kind} {count / max(won, 1):.1%}" for kind, count in stats.contracts.most_common()
        )
    )
    print(f"chiamante win rate  {stats.chiamante_wins / n:.1%}")
    print(f"cappotti            {stats.cappotti / n:.2%}")
    print(f"in mano             {stats.in_mano / n:.1%}")


if __name__ == "__main__":
    main()
