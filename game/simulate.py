"""Play many random smazzate through the public API and print speed and statistics.

    python -m game.simulate --games 20000 --seed 1 [--option monte=on ...]
    python -m game.simulate --games 3000 --option game=briscola --option players=3
    python -m game.simulate --games 3000 --variants --repeat 3

Random players choose uniformly among ``legal_actions`` (monte included). The figure of
merit is smazzate per second on one core, legal-action computation at every step included,
quoted as a ratio to the bare yardstick (:mod:`game.yardstick`) measured in the same run,
both in CPU time:
the yardstick runs just before and just after each measurement and the ratio is taken to
their mean, so a machine shared with other work gives comparable figures. ``--variants``
measures every game and table size; ``--repeat`` repeats each measurement and reports the
median ratio.
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter
from dataclasses import dataclass, field

from game.actions import Action, PlayCard
from game.engine import Game
from game.events import (
    AuctionWon,
    BriscolaScored,
    DealVoided,
    SmazzataScored,
)
from game.options import TableOptions
from game.yardstick import yardstick_rate

#: Every game and table size, as ``--option`` overrides (five-player chiamata first).
VARIANTS: dict[str, dict[str, str]] = {
    "chiamata 5": {},
    "chiamata 4 (morto)": {"players": "4"},
    "chiamata 6": {"players": "6"},
    "chiamata 5 a punti": {"a_punti": "on"},
    "briscola 2": {"game": "briscola", "players": "2"},
    "briscola 3": {"game": "briscola", "players": "3"},
    "briscola 4": {"game": "briscola", "players": "4"},
}


@dataclass
class Stats:
    smazzate: int = 0
    voided: Counter[str] = field(default_factory=Counter)
    contracts: Counter[str] = field(default_factory=Counter)
    chiamante_wins: int = 0
    cappotti: int = 0
    in_mano: int = 0
    actions: int = 0
    patte: int = 0


_COUNTED = frozenset({AuctionWon, DealVoided, SmazzataScored, BriscolaScored})


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
    # int(random() * n) rather than randrange(n): uniform to 2**-53, and 5× cheaper, which
    # matters when the chooser runs at every step of a speed measurement.
    if len(legal) <= 8 or type(legal[0]) is PlayCard:
        return legal[int(rng.random() * len(legal))]
    # legal_actions lists each kind in one contiguous run: gallop, then binary-search, to
    # each run's end (most runs are short: pass, monte, a carichi, the ranks).
    starts = [0]
    size = len(legal)
    while (low := starts[-1]) < size:
        kind_type, step, high = type(legal[low]), 1, low + 1
        while high < size and type(legal[high]) is kind_type:
            low, step = high, step * 2
            high = low + step
        high = min(high, size)
        low += 1
        while low < high:
            middle = (low + high) // 2
            if type(legal[middle]) is kind_type:
                low = middle + 1
            else:
                high = middle
        starts.append(low)
    kind = int(rng.random() * (len(starts) - 1))
    return legal[starts[kind] + int(rng.random() * (starts[kind + 1] - starts[kind]))]


def simulate(
    smazzate: int, seed: int, overrides: dict[str, str] | None = None, per_match: int = 20
) -> Stats:
    """Play until ``smazzate`` scored smazzate, in matches of ``per_match`` smazzate."""
    stats = Stats()
    chooser = random.Random(seed)
    match_no = 0
    while stats.smazzate < smazzate:
        todo = min(per_match, smazzate - stats.smazzate)
        length = (
            {"briscola_match": f"rounds:{todo}"}
            if (overrides or {}).get("game") == "briscola"
            else {"match_end": f"hands:{todo}"}
        )
        options = TableOptions.model_validate({**(overrides or {}), **length})
        game = Game.new(options, random.Random(seed * 1_000_003 + match_no))
        match_no += 1
        # The public API only, through local names: the loop runs ~50 times a smazzata.
        current_seat, legal_actions, apply = game.current_seat, game.legal_actions, game.apply
        while (seat := current_seat()) is not None:  # None once the match is over
            apply(seat, pick(chooser, legal_actions(seat)))
        stats.actions += game.version
        for event in game.history:
            if type(event) not in _COUNTED:  # most events are plays and tricks
                continue
            if type(event) is AuctionWon:
                stats.contracts[event.contract] += 1
            elif type(event) is DealVoided:
                stats.voided[event.reason] += 1
            elif type(event) is SmazzataScored:
                stats.smazzate += 1
                stats.chiamante_wins += event.won
                stats.cappotti += event.cappotto
                stats.in_mano += event.in_mano
            elif type(event) is BriscolaScored:
                stats.smazzate += 1
                stats.patte += event.winner is None
    return stats


@dataclass
class Measure:
    """One timed run of the engine between two runs of the yardstick."""

    stats: Stats
    wall: float
    cpu: float
    yardstick: float

    @property
    def rate(self) -> float:
        """Smazzate per CPU second (the yardstick is measured the same way)."""
        return self.stats.smazzate / max(self.cpu, 1e-9)

    @property
    def ratio(self) -> float:
        return self.rate / self.yardstick


def measure(games: int, seed: int, overrides: dict[str, str], yardstick_deals: int) -> Measure:
    before = yardstick_rate(yardstick_deals, seed)
    start = time.perf_counter()
    cpu_start = time.process_time()
    stats = simulate(games, seed, overrides)
    wall = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    after = yardstick_rate(yardstick_deals, seed)
    return Measure(stats, wall, cpu, (before + after) / 2)


def median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def report_variants(games: int, seed: int, repeat: int, yardstick_deals: int) -> None:
    print(f"{games} smazzate per variant, yardstick {yardstick_deals} deals around each run")
    print(
        f"{'variant':<20} {'smazzate/cpu-s':>14} {'actions/cpu-s':>10} {'yardstick/cpu-s':>12} "
        f"{'ratio (median)':>15}  ratios"
    )
    for name, overrides in VARIANTS.items():
        runs = [measure(games, seed, overrides, yardstick_deals) for _ in range(repeat)]
        ratios = [m.ratio for m in runs]
        best = runs[ratios.index(median(ratios))] if repeat % 2 else runs[0]
        print(
            f"{name:<20} {best.rate:>11,.0f} {best.stats.actions / best.cpu:>10,.0f} "
            f"{best.yardstick:>12,.0f} {median(ratios):>14.2f}x  "
            + " ".join(f"{r:.2f}" for r in ratios)
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10_000, help="smazzate to play")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--option", action="append", default=[], help="name=value, repeatable")
    parser.add_argument("--variants", action="store_true", help="measure every game and size")
    parser.add_argument("--repeat", type=int, default=1, help="measurements per variant")
    parser.add_argument(
        "--yardstick-deals", type=int, default=0, help="yardstick deals (default: --games)"
    )
    args = parser.parse_args(argv)
    yardstick_deals = args.yardstick_deals or args.games
    if args.variants:
        report_variants(args.games, args.seed, max(args.repeat, 1), yardstick_deals)
        return
    overrides = parse_options(args.option)
    runs = [measure(args.games, args.seed, overrides, yardstick_deals) for _ in range(args.repeat)]
    ratios = [m.ratio for m in runs]
    stats, wall, cpu = runs[-1].stats, runs[-1].wall, runs[-1].cpu
    n = max(stats.smazzate, 1)
    won = sum(stats.contracts.values())
    print(f"smazzate scored     {stats.smazzate}")
    print(f"wall time           {wall:.2f} s  (cpu {cpu:.2f} s)")
    print(f"smazzate per second {stats.smazzate / wall:,.0f}")
    print(f"actions per second  {stats.actions / wall:,.0f}")
    if stats.contracts:  # chiamata only
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
    if overrides.get("game") == "briscola":
        print(f"patte (briscola)    {stats.patte / n:.1%}")
    print(f"yardstick           {runs[-1].yardstick:,.0f} deals per second (same run)")
    print(
        f"ratio to yardstick  {median(ratios):.2f}x (median of {len(ratios)}: "
        + " ".join(f"{r:.2f}" for r in ratios)
        + ")"
    )


if __name__ == "__main__":
    main()
