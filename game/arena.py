"""Duplicate-deal arena: measure computer players against each other, luck cancelled.

    python -m game.arena --deals 200 --seed 1 --a search --b heuristic [--jobs 2]
    python -m game.arena --deals 100 --seed 1 --mix [--types random,heuristic,search]

*Duplicate.* Each deal (the shuffle, drawn from ``seed`` and the deal number) is played
five times: the candidate ``--a`` sits in seat 0, then 1, … 4, the other four seats are
played by ``--b``. Every seat of the same cards is thus played once by the candidate, so
the luck of the cards cancels: against a field of equals the candidate averages 0.

*Mix.* With ``--mix`` the types listed in ``--types`` (default all three) share the
table: for each deal, every rotation k (0–4) and every offset j, seat s is played by
``types[((s − k) mod 5 + j) mod T]``, so each type sits in each seat equally often.

For each player type it prints the mean score per smazzata of one of its seats (score
points, R73–R76) with a 95% confidence interval over deals (the deals are independent;
the games of one deal are not), the auction win rate (smazzate won as chiamante per
seat-smazzata), the chiamante success rate (contracts made), the mean contract (the card points the
calling side needed, 61 = a plain call), and the mean and 95th percentile of the time a
decision takes (over all decisions, and over the decisions with a real choice, i.e. more
than one legal action). In chiamata it also splits each type's score by the role its
seat had (chiamante, socio, one of the others): the part of the score a smazzata earned
in each role (the parts add up to the score), the mean score in that role and how many
times. Each smazzata is a one-hand match
(``match_end=hands:1``); a voided deal is redealt from the same stream, so rotations stay
comparable.

*Every variant.* ``--option players=4`` (il morto: its seat is dealt by the deal's stream,
nobody plays it, and the candidate takes every *human* seat in turn; the four seats in
play do not sum to zero, so it also prints the candidate's score minus the field's,
paired by deal), ``players=6``,
``a_punti=on`` and ``game=briscola`` with ``players=2|3|4`` run the same way. In plain
Briscola the candidate takes a whole side (both partners with 4 players), and the score
of a seat is its side's card points minus an even share (120 / number of sides), so it
is zero-sum like the chiamata scores; "auction won" is then the rate of smazzate won by
the side.
"""

from __future__ import annotations

import argparse
import importlib
import math
import random
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing import Pool
from typing import TypeVar

from game.engine import Game
from game.events import BriscolaScored, Event, SmazzataScored
from game.options import TableOptions
from game.players import Player, create_player
from game.simulate import parse_options

_TYPE_NAMES = {
    "random": "random",
    "heuristic": "heuristic",
    "normale": "heuristic",
    "search": "search",
    "forte": "search",
    "facile": "facile",
    "expert": "expert",
    "esperto": "expert",
    "champion": "champion",
    "campione": "champion",
}


@dataclass
class GameResult:
    """One smazzata: the type in each seat, each seat's score, and the decision times."""

    types: tuple[str, ...]
    deltas: tuple[float, ...]
    chiamante: int
    won: bool
    times: dict[str, list[float]] = field(default_factory=dict)
    #: the decisions with more than one legal action (no trivial last-trick plays)
    choice_times: dict[str, list[float]] = field(default_factory=dict)
    #: il morto's seat (not played by anyone, not counted), None without il morto
    morto: int | None = None
    #: plain Briscola: the seats whose side won the smazzata
    side_won: tuple[int, ...] = ()
    #: the contract's target (card points the calling side needed), 0 in plain Briscola
    target: int = 0
    #: the socio's seat (None: solo, or plain Briscola)
    socio: int | None = None
    #: plain Briscola: the sides (a seat each, or the pairs)
    sides: tuple[tuple[int, ...], ...] = ()


_T = TypeVar("_T")
_R = TypeVar("_R")

#: Makes the player of a type name for a seed (``create_player``, or a tuning tool's).
PlayerFactory = Callable[[str, int], Player]


def deal_seed_of(seed: int, deal: int) -> int:
    """The seed of the shuffle of the arena's ``deal``-th deal from ``seed``."""
    return seed * 1_000_003 + deal


def seat_seed(player_seed: int, seat: int) -> int:
    """The seed of the player in ``seat`` (the arena uses the deal's seed as
    ``player_seed``)."""
    return player_seed * 10 + seat


def play_deal(
    deal_seed: int,
    types: Sequence[str],
    options: TableOptions,
    player_seed: int,
    cpu_clock: bool = False,
    make: PlayerFactory = create_player,
    history: list[Event] | None = None,
) -> GameResult:
    """Play one smazzata of the deal drawn from ``deal_seed`` with ``types[seat]``
    (decisions timed in CPU time of this process with ``cpu_clock``, else wall time);
    the game's events are appended to ``history`` when given (:mod:`game.audit`)."""
    clock = time.process_time if cpu_clock else time.perf_counter
    game = Game.new(options, random.Random(deal_seed))
    players: list[Player] = [
        make(kind, seat_seed(player_seed, seat)) for seat, kind in enumerate(types)
    ]
    times: dict[str, list[float]] = {}
    choice_times: dict[str, list[float]] = {}
    while not game.is_over() and game.scored_count == 0:
        seat = game.current_seat()
        assert seat is not None
        view = game.view(seat)
        start = clock()
        action = players[seat].choose(view)
        elapsed = clock() - start
        times.setdefault(types[seat], []).append(elapsed)
        if len(view.legal) > 1:
            choice_times.setdefault(types[seat], []).append(elapsed)
        game.apply(seat, action)
    if history is not None:
        history.extend(game.history)
    briscola = [e for e in game.history if isinstance(e, BriscolaScored)]
    if briscola:
        result = briscola[0]
        share = 120 / len(result.sides)
        deltas = [0.0] * game.n
        for side, points in zip(result.sides, result.points, strict=True):
            for seat in side:
                deltas[seat] = points - share
        won = result.sides[result.winner] if result.winner is not None else ()
        return GameResult(
            tuple(types), tuple(deltas), -1, False, times, choice_times, None, won,
            sides=tuple(tuple(side) for side in result.sides),
        )
    scored = next(e for e in game.history if isinstance(e, SmazzataScored))
    return GameResult(
        tuple(types),
        scored.deltas,
        scored.chiamante,
        scored.won,
        times,
        choice_times,
        morto=game.morto,
        target=scored.target,
        socio=scored.socio,
    )


def schedule(
    mix_types: Sequence[str] | None,
    a: str,
    b: str,
    seats: int = 5,
    units: Sequence[Sequence[int]] | None = None,
) -> list[tuple[str, ...]]:
    """The seat assignments played on every deal (see the module docstring).

    ``units`` are what the candidate takes in turn: every seat (default), the human
    seats with il morto, or the sides of plain Briscola."""
    if units is None:
        units = [(seat,) for seat in range(seats)]
    if mix_types is None:
        return [tuple(a if seat in unit else b for seat in range(seats)) for unit in units]
    t = len(mix_types)
    return [
        tuple(mix_types[((seat - k) % seats + j) % t] for seat in range(seats))
        for k in range(seats)
        for j in range(t)
    ]


def units_of(options: TableOptions, deal_seed: int) -> tuple[int, list[tuple[int, ...]]]:
    """The seats of the deal's table and the candidate's units (see :func:`schedule`)."""
    game = Game.new(options, random.Random(deal_seed))
    if game.rules.sides:
        return game.n, [tuple(side) for side in game.rules.sides]
    return game.n, [(seat,) for seat in range(game.n) if seat != game.morto]


_Task = tuple[int, int, Sequence[str] | None, str, str, TableOptions, bool, PlayerFactory]


def _run_deal(args: _Task) -> list[GameResult]:
    deal, seed, mix_types, a, b, options, cpu_clock, make = args
    deal_seed = deal_seed_of(seed, deal)
    seats, units = units_of(options, deal_seed)
    assignments = schedule(mix_types, a, b, seats, units)
    return [
        play_deal(deal_seed, types, options, deal_seed, cpu_clock, make) for types in assignments
    ]


@dataclass
class TypeStats:
    per_deal: list[float] = field(default_factory=list)
    seats: int = 0
    auctions: int = 0
    made: int = 0
    #: the targets of the contracts won as chiamante
    targets: list[int] = field(default_factory=list)
    times: list[float] = field(default_factory=list)
    choice_times: list[float] = field(default_factory=list)
    #: chiamata: the score and the number of seats in each role (see ``ROLES``)
    role_sums: dict[str, float] = field(default_factory=dict)
    role_seats: dict[str, int] = field(default_factory=dict)
    #: plain Briscola: smazzate won, drawn (patta) and lost, counted once a side
    wins: int = 0
    draws: int = 0
    losses: int = 0
    #: plain Briscola: per deal, the mean match score (win 1, patta ½, loss 0) and the
    #: mean card points of the side minus the best other side's
    score_per_deal: list[float] = field(default_factory=list)
    margin_per_deal: list[float] = field(default_factory=list)


#: A seat's role in a smazzata of chiamata: the chiamante, the socio (not a solo's
#: chiamante), or one of the others.
ROLES = ("chiamante", "socio", "others")


def role_of(game: GameResult, seat: int) -> str:
    if seat == game.chiamante:
        return "chiamante"
    return "socio" if seat == game.socio else "others"


def mean_ci(values: Sequence[float]) -> tuple[float, float]:
    """Mean and the half-width of its 95% normal confidence interval."""
    n = len(values)
    if n == 0:
        return 0.0, 0.0
    mean = sum(values) / n
    if n < 2:
        return mean, math.inf
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, 1.96 * math.sqrt(var / n)


def paired_difference(stats: dict[str, TypeStats], a: str, b: str) -> tuple[float, float]:
    """Mean and 95% half-width of ``a``'s score minus ``b``'s, deal by deal (both play
    every deal). Where a smazzata's scores do not sum to zero (il morto) this, not
    ``a``'s own score, is how much better ``a`` plays."""
    if a not in stats or b not in stats:
        return 0.0, 0.0
    return mean_ci(
        [x - y for x, y in zip(stats[a].per_deal, stats[b].per_deal, strict=True)]
    )


def percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))
    return ordered[index]


def _briscola_outcome(game: GameResult, side: Sequence[int]) -> tuple[float, float]:
    """Plain Briscola: the side's match score (1, ½, 0) and its card points minus the
    best other side's (the deltas are card points minus an even share)."""
    mine = game.deltas[side[0]]
    best_other = max(game.deltas[other[0]] for other in game.sides if other[0] not in side)
    if not game.side_won:
        return 0.5, mine - best_other  # patta
    score = 1.0 if side[0] in game.side_won else 0.0
    return score, mine - best_other


def aggregate(deals: list[list[GameResult]]) -> dict[str, TypeStats]:
    stats: dict[str, TypeStats] = {}
    for games in deals:
        sums: dict[str, list[float]] = {}
        scores: dict[str, list[float]] = {}
        margins: dict[str, list[float]] = {}
        for game in games:
            if game.chiamante < 0:
                _count_briscola(game, stats, scores, margins)
            for seat, kind in enumerate(game.types):
                if seat == game.morto:
                    continue  # il morto is nobody's seat
                entry = stats.setdefault(kind, TypeStats())
                sums.setdefault(kind, []).append(game.deltas[seat])
                entry.seats += 1
                if game.chiamante >= 0:
                    role = role_of(game, seat)
                    entry.role_sums[role] = entry.role_sums.get(role, 0.0) + game.deltas[seat]
                    entry.role_seats[role] = entry.role_seats.get(role, 0) + 1
                if seat == game.chiamante:
                    entry.auctions += 1
                    entry.made += game.won
                    entry.targets.append(game.target)
                if seat in game.side_won:
                    entry.auctions += 1  # plain Briscola: smazzate won by the side
            for kind, values in game.times.items():
                stats.setdefault(kind, TypeStats()).times.extend(values)
            for kind, values in game.choice_times.items():
                stats.setdefault(kind, TypeStats()).choice_times.extend(values)
        for kind, values in sums.items():
            stats[kind].per_deal.append(sum(values) / len(values))
        for kind, values in scores.items():
            stats[kind].score_per_deal.append(sum(values) / len(values))
            stats[kind].margin_per_deal.append(sum(margins[kind]) / len(margins[kind]))
    return stats


def _count_briscola(
    game: GameResult,
    stats: dict[str, TypeStats],
    scores: dict[str, list[float]],
    margins: dict[str, list[float]],
) -> None:
    """Plain Briscola: each side's result once, under the type that played it."""
    for side in game.sides:
        kind = game.types[side[0]]
        entry = stats.setdefault(kind, TypeStats())
        score, margin = _briscola_outcome(game, side)
        if score == 1.0:
            entry.wins += 1
        elif score == 0.0:
            entry.losses += 1
        else:
            entry.draws += 1
        scores.setdefault(kind, []).append(score)
        margins.setdefault(kind, []).append(margin)


def match_report(stats: dict[str, TypeStats], order: Sequence[str]) -> str:
    """Plain Briscola: wins, patte, losses, the score (patta ½) with its 95% interval
    over deals, and the card points a smazzata over the best other side."""
    lines = [
        f"{'player':<10} {'wins':>7} {'draws':>6} {'losses':>7} {'score (draw 1/2)':>17} "
        f"{'95% CI':>16} {'card points':>12} {'95% CI':>16}"
    ]
    for kind in order:
        entry = stats.get(kind)
        if entry is None or not entry.score_per_deal:
            continue
        score, half = mean_ci(entry.score_per_deal)
        margin, m_half = mean_ci(entry.margin_per_deal)
        lines.append(
            f"{kind:<10} {entry.wins:>7} {entry.draws:>6} {entry.losses:>7} {score:>17.3f} "
            f"{f'{score - half:.3f}..{score + half:.3f}':>16} {margin:>+12.2f} "
            f"{f'{margin - m_half:+.2f}..{margin + m_half:+.2f}':>16}"
        )
    return "\n".join(lines)


def report(stats: dict[str, TypeStats], order: Sequence[str]) -> str:
    lines = [
        f"{'player':<10} {'score/smazzata':>15} {'95% CI':>18} {'auction won':>12} "
        f"{'contract made':>14} {'mean contract':>14} {'decision mean':>14} {'p95':>9} "
        f"{'p95 choice':>11} {'decisions':>10}"
    ]
    for kind in order:
        entry = stats.get(kind)
        if entry is None:
            continue
        mean, half = mean_ci(entry.per_deal)
        auctions = entry.auctions / entry.seats if entry.seats else 0.0
        made = entry.made / entry.auctions if entry.auctions else 0.0
        contract = f"{sum(entry.targets) / len(entry.targets):.1f}" if entry.targets else "-"
        mean_t = sum(entry.times) / len(entry.times) if entry.times else 0.0
        p95 = percentile(entry.times, 0.95)
        p95_choice = percentile(entry.choice_times, 0.95)
        lines.append(
            f"{kind:<10} {mean:>+15.3f} {f'[{mean - half:+.3f}, {mean + half:+.3f}]':>18} "
            f"{auctions:>12.1%} {made:>14.1%} {contract:>14} {mean_t * 1000:>11.1f} ms "
            f"{p95 * 1000:>6.1f} ms {p95_choice * 1000:>8.1f} ms {len(entry.times):>10}"
        )
    roles = [kind for kind in order if kind in stats and stats[kind].role_seats]
    if roles:
        lines.append(
            "by role: the part of the score a smazzata earned in each role (the parts add "
            "up to the score; in brackets, the mean score a smazzata in that role and how "
            "many)"
        )
    for kind in roles:
        entry = stats[kind]
        parts = []
        for role in ROLES:
            count = entry.role_seats.get(role, 0)
            total = entry.role_sums.get(role, 0.0)
            mean = total / count if count else 0.0
            parts.append(f"{role} {total / entry.seats:+.3f} ({mean:+.2f}, {count})")
        lines.append(f"{kind:<10} " + ", ".join(parts))
    return "\n".join(lines)


def run(
    deals: int,
    seed: int,
    a: str,
    b: str,
    mix_types: Sequence[str] | None = None,
    options: TableOptions | None = None,
    jobs: int = 1,
    progress: int = 0,
    cpu_clock: bool = False,
    make: PlayerFactory = create_player,
) -> dict[str, TypeStats]:
    """Play the arena and return the per-type statistics (with ``progress``, print the
    candidate's running figure every that many deals; ``make`` builds the players, it
    must be picklable with ``jobs`` > 1)."""
    base = options or TableOptions()
    options = base.model_copy(update={"match_end": "hands:1"})
    tasks: list[_Task] = [
        (deal, seed, mix_types, a, b, options, cpu_clock, make) for deal in range(deals)
    ]
    results: list[list[GameResult]] = []
    with Pool(jobs) if jobs > 1 else Serial() as pool:
        for result in pool.imap(_run_deal, tasks, chunksize=1):
            results.append(result)
            if progress and len(results) % progress == 0 and len(results) < deals:
                stats = aggregate(results)
                mean, half = mean_ci(stats[a].per_deal) if a in stats else (0.0, 0.0)
                print(
                    f"... {len(results)} deals: {a} {mean:+.3f} "
                    f"(95% CI {mean - half:+.3f} .. {mean + half:+.3f})",
                    flush=True,
                )
                order = list(dict.fromkeys(mix_types or [a, b]))
                print(report(stats, order), flush=True)
                if any(stats[kind].score_per_deal for kind in order if kind in stats):
                    print(match_report(stats, order), flush=True)
    return aggregate(results)


class Serial:
    """``Pool``'s ``imap`` in this process (``--jobs 1``; :mod:`game.paired` too)."""

    def __enter__(self) -> Serial:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def imap(self, func: Callable[[_T], _R], tasks: Iterable[_T], chunksize: int) -> Iterator[_R]:
        return map(func, tasks)


def candidate_report(
    stats: dict[str, TypeStats], a: str, b: str, options: TableOptions, seed: int
) -> str:
    """The candidate ``a``'s own score against ``b``, and with il morto (the seats in
    play do not sum to zero) the difference of the two, paired by deal."""
    mean, half = mean_ci(stats[a].per_deal) if a in stats else (0.0, 0.0)
    lines = [
        f"candidate {a}: {mean:+.3f} points per smazzata "
        f"(95% CI {mean - half:+.3f} .. {mean + half:+.3f}) against {b}"
    ]
    seats, units = units_of(options.model_copy(update={"match_end": "hands:1"}), seed)
    if sum(len(unit) for unit in units) < seats:
        mean, half = paired_difference(stats, a, b)
        lines.append(
            f"{a} minus {b}, paired by deal: {mean:+.3f} "
            f"(95% CI {mean - half:+.3f} .. {mean + half:+.3f}); il morto's seat is "
            "nobody's, so the scores in play do not sum to zero"
        )
    return "\n".join(lines)


def factory(spec: str) -> PlayerFactory:
    """The player factory named ``MODULE:FUNCTION`` (``--make``)."""
    module, _, name = spec.partition(":")
    if not module or not name:
        raise SystemExit(f"--make wants MODULE:FUNCTION, not {spec!r}")
    made: PlayerFactory = getattr(importlib.import_module(module), name)
    return made


def _parse_options(pairs: list[str]) -> TableOptions:
    return TableOptions.model_validate(parse_options(pairs))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--deals", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--a", default="search", help="candidate player type")
    parser.add_argument("--b", default="heuristic", help="the field (the other four seats)")
    parser.add_argument("--mix", action="store_true", help="all types at one table")
    parser.add_argument("--types", default="random,heuristic,search", help="types for --mix")
    parser.add_argument("--option", action="append", default=[], help="name=value, repeatable")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (deals in parallel)")
    parser.add_argument("--progress", type=int, default=0, help="running figure every N deals")
    parser.add_argument(
        "--make",
        default="",
        help="MODULE:FUNCTION that makes the players of a type name and a seed "
        "(default: game.players.create_player), for a variant no level offers",
    )
    parser.add_argument(
        "--cpu-clock",
        action="store_true",
        help="time decisions in CPU seconds (one core, whatever else the machine runs)",
    )
    args = parser.parse_args(argv)
    options = _parse_options(args.option)
    mix_types = [t.strip() for t in args.types.split(",")] if args.mix else None
    make = factory(args.make) if args.make else create_player
    for kind in mix_types or [args.a, args.b]:
        make(kind, 0)  # fail early on an unknown type
    start = time.perf_counter()
    stats = run(
        args.deals,
        args.seed,
        args.a,
        args.b,
        mix_types,
        options,
        args.jobs,
        args.progress,
        args.cpu_clock,
        make,
    )
    wall = time.perf_counter() - start
    order = list(dict.fromkeys(mix_types or [args.a, args.b]))
    seats, units = units_of(options.model_copy(update={"match_end": "hands:1"}), args.seed)
    games = args.deals * len(schedule(mix_types, args.a, args.b, seats, units))
    field_size = len(units) - 1
    unit, rest = ("1 side", f"{field_size} side") if len(units[0]) > 1 else ("1 seat", "")
    rest = rest or f"{sum(len(u) for u in units) - 1} seat"
    rest += "s" if field_size > 1 or not rest.endswith("side") else ""
    mode = f"mix of {', '.join(order)}" if mix_types else f"{args.a} ({unit}) vs {args.b} ({rest})"
    print(f"duplicate arena: {mode}; {args.deals} deals, {games} smazzate, seed {args.seed}")
    print(report(stats, order))
    if any(stats[kind].score_per_deal for kind in order if kind in stats):
        print(match_report(stats, order))
    if not mix_types:
        print(candidate_report(stats, args.a, args.b, options, args.seed))
    print(f"wall time {wall:.1f} s")


if __name__ == "__main__":
    main()
