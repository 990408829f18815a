"""Auction settings of ``esperto`` compared move for move on the arena's deals.

    python -m game.players.auction_ab --deals 200 --seed 28 --jobs 2 \\
        --variant call_margin=-0.35 --variant shift=0,shift_doubled=0.06

The deals, seats and player seeds are the arena's (``python -m game.arena --a expert
--b search``): ``esperto`` takes each seat in turn, ``forte`` the other seats. At every
auction and declaration decision of that seat, each variant (``esperto`` with the
settings given, any keyword of :class:`~game.players.expert.ExpertPlayer`) is asked
too. A variant that chooses differently forks the smazzata there (:meth:`Game.clone`)
and plays it to the end in that seat; the score it gets minus the base's is its
difference. A variant that never chooses differently would play exactly the base's
smazzata (every decision is a pure function of the seed and the view), so its
difference is exactly 0, and a smazzata where no variant differs is not played past the
auction.

So the comparison is paired move for move: only the smazzate where a bid changes carry
any noise. Those differ by whole points, so it is about twice as sharp as two arena
runs, not more: over 240 deals (seed 28) the 95% intervals were ±0.06 with a quarter
of the smazzate forked and ±0.07 with a tenth, where two independent 400-deal arena
runs give ±0.1 on their difference. It measures the auction only: the variants must
play the cards as the base does (a setting that changes the play would be measured
only after a fork).
"""

from __future__ import annotations

import argparse
import random
import time
from dataclasses import dataclass, field
from typing import Any

from game.arena import deal_seed_of, mean_ci, seat_seed, units_of
from game.engine import Game
from game.events import SmazzataScored
from game.options import TableOptions
from game.players import Player, create_player
from game.players.common import map_jobs
from game.players.expert import ExpertPlayer
from game.simulate import parse_options

#: A variant: the keyword arguments of ExpertPlayer it changes.
Settings = dict[str, Any]


@dataclass(frozen=True)
class Outcome:
    """One smazzata of the candidate seat under one variant."""

    score: float
    forked: bool
    chiamante: bool
    made: bool
    target: int


@dataclass
class VariantStats:
    """A variant's differences to the base, per deal (mean over the candidate's seats)."""

    per_deal: list[float] = field(default_factory=list)
    smazzate: int = 0
    forks: int = 0
    #: over the forked smazzate: (contracts won, made, sum of targets) of variant and base
    won: int = 0
    made: int = 0
    targets: int = 0
    base_won: int = 0
    base_made: int = 0
    base_targets: int = 0


#: The outcome recorded when no variant forks: the smazzata is not played on, and every
#: difference is 0.
_NOT_PLAYED = Outcome(0.0, False, False, False, 0)


def parse_settings(text: str) -> Settings:
    """``"call_margin=-0.35,shift=0"`` -> the keyword arguments (numbers as floats, or
    ints when written without a point)."""
    settings: Settings = {}
    for part in text.split(","):
        name, _, value = part.partition("=")
        name = name.strip()
        if not name or not value:
            raise ValueError(f"expected name=value, got {part!r}")
        settings[name] = int(value) if value.strip().lstrip("-").isdigit() else float(value)
    ExpertPlayer(0, **settings)  # fail early on an unknown keyword
    return settings


def _outcome(game: Game, seat: int, forked: bool) -> Outcome:
    scored = next(e for e in game.history if isinstance(e, SmazzataScored))
    return Outcome(
        scored.deltas[seat],
        forked,
        scored.chiamante == seat,
        scored.chiamante == seat and scored.won,
        scored.target if scored.chiamante == seat else 0,
    )


def _finish(game: Game, players: list[Player]) -> Game:
    while not game.is_over() and game.scored_count == 0:
        seat = game.current_seat()
        assert seat is not None
        game.apply(seat, players[seat].choose(game.view(seat)))
    return game


def play_seat(
    deal_seed: int,
    seat: int,
    options: TableOptions,
    variants: list[Settings],
    base: Settings | None = None,
) -> tuple[Outcome, list[Outcome]]:
    """The candidate in ``seat`` of the deal: the base's outcome and each variant's
    (``base``: settings of the base and of every variant, e.g. a smaller budget)."""
    game = Game.new(options, random.Random(deal_seed))
    common = base or {}
    player_seed = seat_seed(deal_seed, seat)
    players: list[Player] = [
        ExpertPlayer(player_seed, **common)
        if s == seat
        else create_player("search", seat_seed(deal_seed, s))
        for s in range(game.n)
    ]
    alternatives = [ExpertPlayer(player_seed, **{**common, **settings}) for settings in variants]
    forks: dict[int, Game] = {}
    while not game.is_over() and game.scored_count == 0:
        current = game.current_seat()
        assert current is not None
        view = game.view(current)
        if view.phase == "play" and not forks:
            break  # no variant differs: the rest is the same smazzata for all
        action = players[current].choose(view)
        if current == seat and view.phase != "play" and len(view.legal) > 1:
            for i, alternative in enumerate(alternatives):
                if i in forks:
                    continue
                other = alternative.choose(view)
                if other != action:
                    fork = game.clone()
                    fork.apply(current, other)
                    forks[i] = fork
        game.apply(current, action)
    if not forks:
        return _NOT_PLAYED, [_NOT_PLAYED] * len(variants)
    shipped = _outcome(_finish(game, players), seat, False)
    outcomes = []
    for i, alternative in enumerate(alternatives):
        if i not in forks:
            outcomes.append(shipped)
            continue
        seats = list(players)
        seats[seat] = alternative
        outcomes.append(_outcome(_finish(forks[i], seats), seat, True))
    return shipped, outcomes


_Task = tuple[int, int, TableOptions, list[Settings]]


def _deal_task(task: _Task) -> list[tuple[Outcome, list[Outcome]]]:
    deal, seed, options, variants = task
    deal_seed = deal_seed_of(seed, deal)
    _seats, units = units_of(options, deal_seed)
    return [play_seat(deal_seed, unit[0], options, variants) for unit in units]


def compare(
    deals: int,
    seed: int,
    variants: list[Settings],
    options: TableOptions | None = None,
    jobs: int = 1,
) -> list[VariantStats]:
    """Each variant's differences to the base over the arena's ``deals`` from ``seed``."""
    base_options = options or TableOptions()
    table = base_options.model_copy(update={"match_end": "hands:1"})
    if table.game != "chiamata" or table.a_punti:
        raise ValueError("auction variants need chiamata with an esperto auction")
    tasks: list[_Task] = [(deal, seed, table, variants) for deal in range(deals)]
    stats = [VariantStats() for _ in variants]
    for seats in map_jobs(_deal_task, tasks, jobs):
        for i, variant in enumerate(stats):
            differences = [outcomes[i].score - base.score for base, outcomes in seats]
            variant.per_deal.append(sum(differences) / len(differences))
            for base, outcomes in seats:
                outcome = outcomes[i]
                variant.smazzate += 1
                if not outcome.forked:
                    continue
                variant.forks += 1
                variant.won += outcome.chiamante
                variant.made += outcome.made
                variant.targets += outcome.target
                variant.base_won += base.chiamante
                variant.base_made += base.made
                variant.base_targets += base.target
    return stats


def _contracts(won: int, made: int, targets: int) -> str:
    """Contracts won / the share made / their mean target."""
    if not won:
        return "0 / - / -"
    return f"{won} / {made / won:.0%} / {targets / won:.1f}"


def report(variants: list[str], stats: list[VariantStats]) -> str:
    lines = [
        f"{'variant':<34} {'minus base':>10} {'95% CI':>18} {'forked':>8}"
        f"  {'in the forked smazzate: won / made / contract (base)':<50}"
    ]
    for name, variant in zip(variants, stats, strict=True):
        mean, half = mean_ci(variant.per_deal)
        forked = f"{variant.forks}/{variant.smazzate}"
        lines.append(
            f"{name:<34} {mean:>+10.4f} [{mean - half:+.4f}, {mean + half:+.4f}] {forked:>8}"
            f"  {_contracts(variant.won, variant.made, variant.targets)}"
            f" ({_contracts(variant.base_won, variant.base_made, variant.base_targets)})"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--deals", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--variant", action="append", default=[], help="name=value[,name=value], repeatable"
    )
    parser.add_argument("--option", action="append", default=[], help="name=value, repeatable")
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args(argv)
    if not args.variant:
        parser.error("give at least one --variant")
    variants = [parse_settings(text) for text in args.variant]
    options = TableOptions.model_validate(parse_options(args.option))
    start = time.perf_counter()
    stats = compare(args.deals, args.seed, variants, options, args.jobs)
    print(
        f"esperto's auction variants against esperto, paired move for move; "
        f"{args.deals} deals, seed {args.seed} (the field: forte)"
    )
    print(report(args.variant, stats))
    print(f"wall time {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
