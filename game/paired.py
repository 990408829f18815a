"""The paired yardstick: two players compared on the same deals, seats and random streams,
decision by decision, with a sequential stopping rule fixed before the run.

    python -m game.paired --a esperto --b forte --seed 4701 --sprt 0,0.10 --max-deals 800
    python -m game.paired --a campione --b esperto --option game=briscola \\
        --option players=2 --width 0.03 --max-deals 2000 --per-deal
    python -m game.paired --a esperto --b forte --continuation normale ...  (cheap, biased)

Which to use (docs/yardstick.md has the validation): the exact pairing is the arena, deal
for deal, with a sequential rule; it is cheaper than the arena only when the two players
part late or rarely (esperto and forte part in the auction: 1.11 times the arena's CPU).
The continuation mode was cheaper a deal but 1.9–3.2 times noisier, and in two-player
Briscola biased (campione vs esperto: 0.278 against the arena's 0.642); it is there to
be improved, not to be trusted.

*What it compares.* The duplicate arena (:mod:`game.arena`) plays each deal once per
*unit* of the table (a seat; a side in plain Briscola): the candidate ``--a`` in that unit,
``--b`` in the others. Every player decides as a pure function of its seed and the view
(``decision_rng``), and the arena seeds a seat's player by the deal and the seat, whoever
sits there. So the game with ``a`` in unit ``u`` is the game of ``b`` in every seat (the
*reference*) until ``a``'s first decision in ``u`` that differs from ``b``'s: before it,
every seat sees the same views and makes the same moves. The yardstick plays the
reference once a deal and, at each decision of the reference, asks ``a`` what it would
do there; only where they differ does anything more get played.

*Two continuations.*

* ``exact`` (the default): at the first differing decision of unit ``u`` the game is
  cloned, ``a``'s move applied, and played to the end with ``a`` in ``u`` and ``b``
  elsewhere: the arena's game, exactly. The deal's figure, the mean over units of ``a``'s
  score minus ``b``'s in the reference, plus the reference's mean, *is* the arena's
  figure for that deal, number for number (``tests/test_paired.py`` checks it), so the
  interval is the arena's: no bias, and no less variance. What it saves is the shared
  prefixes: one reference game a deal instead of one game a unit, and every game's moves
  before ``a`` first differs. How much that is depends on how early the two players part
  (printed: ``first difference at move``).
* ``--continuation R`` (a fixed reference policy, e.g. ``normale``): at *every*
  decision of the reference where ``a`` and ``b`` differ, the game is cloned twice, ``a``'s
  move applied to one and ``b``'s to the other, and both are played out by ``R`` in every
  seat with the same seeds. The difference of the deciding unit's score is that
  decision's *advantage*; a unit's figure is the sum of its decisions' advantages. This is
  the performance-difference identity (V(a) − V(b) = the sum, along ``b``'s games, of
  Q(state, a's move) − Q(state, b's move)) with the true continuation, ``a`` in the unit
  and ``b`` elsewhere, replaced by ``R`` everywhere. **Its bias**: it measures each
  differing decision's value *as if everyone then played like* ``R``, on the states
  ``b``'s games reach, and it adds the decisions' values as if they did not interact
  (``a``'s later moves do not change what an earlier one is worth). A bid that only pays
  with strong play afterwards, or a card whose point is a later finesse, is valued by
  what ``R`` makes of it. It is exact when ``R`` plays as ``a`` in the unit and as ``b``
  elsewhere (and the states are ``b``'s), and it is not checked against that here: the
  validation (docs/yardstick.md) is what says whether it is close enough.

*Sequential stop.* The deals are taken in order (``deal_seed_of(seed, k)``, the arena's
deals for the same seed) and after each one the rule is checked on the deals so far, in
order, whatever ``--jobs`` is (deals computed beyond the stopping point are dropped):

* ``--width H``: stop at the first n ≥ ``--min-deals`` whose 95% interval (normal, the
  sample's standard deviation) has half-width ≤ H: a fixed-width sequential interval
  (Chow–Robbins; its coverage is the nominal one only asymptotically, which is why
  ``--min-deals`` is there).
* ``--sprt MU0,MU1``: Wald's sequential probability ratio test of "``a``'s score ≤ MU0"
  against "≥ MU1" (``--alpha``, ``--beta``, default 0.05), the per-deal figures taken as
  normal with the running variance (the GSPRT of engine testing): the log-likelihood
  ratio (MU1 − MU0)·Σ(x − (MU0 + MU1)/2)/s² is compared with log(β/(1−α)) and
  log((1−β)/α).

Either way ``--max-deals`` ends the run (verdict ``max``). The rule and the seed belong in
the repository before the run (docs/yardstick.md for the validation). A measurement may
span sessions: ``--per-deal`` prints each deal's figure, and a later run given them
(``--prior v0,v1,…``) plays on from the next deal and checks the rule on the whole
sequence, as one run would have (pool only when the rule and the seed were committed
before the first run).

*Scores.* In chiamata a unit's score is its seat's score points of the smazzata (R73–R76);
in plain Briscola, its side's match score (win 1, patta ½, loss 0), with the card points
over the best other side beside it. ``a``'s figure is the reference's mean plus the mean
paired difference: in five-player chiamata the reference's mean is 0 (the scores sum to
zero), in two-player Briscola ½, so the figures compare with the arena's.

*Cost.* Each deal's CPU time (``time.process_time`` in the process that played it) is
summed; the arena's cost for the same interval is its CPU seconds a deal times the
deals its own variance needs (docs/yardstick.md).
"""

from __future__ import annotations

import argparse
import math
import random
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from multiprocessing import Pool

from game.actions import Action
from game.arena import (
    PlayerFactory,
    Serial,
    deal_seed_of,
    factory,
    mean_ci,
    seat_seed,
    units_of,
)
from game.engine import Game
from game.events import BriscolaScored, SmazzataScored
from game.options import TableOptions
from game.players import Player, create_player
from game.simulate import parse_options

#: The 95% normal quantile of the intervals.
Z95 = 1.96


# ---------------------------------------------------------------------------- outcomes


@dataclass(frozen=True)
class Outcome:
    """A finished smazzata, per unit: the score (chiamata: the seat's score points;
    Briscola: the side's match score) and, in Briscola, the side's card points over the
    best other side's (0.0 in chiamata)."""

    scores: tuple[float, ...]
    margins: tuple[float, ...]


def outcome(game: Game, units: Sequence[Sequence[int]]) -> Outcome:
    """The units' scores of a game whose smazzata was scored."""
    briscola = [e for e in game.history if isinstance(e, BriscolaScored)]
    if briscola:
        result = briscola[0]
        scores: list[float] = []
        margins: list[float] = []
        for unit in units:
            side = next(i for i, s in enumerate(result.sides) if unit[0] in s)
            best_other = max(p for i, p in enumerate(result.points) if i != side)
            margins.append(float(result.points[side] - best_other))
            if result.winner is None:
                scores.append(0.5)
            else:
                scores.append(1.0 if result.winner == side else 0.0)
        return Outcome(tuple(scores), tuple(margins))
    scored = next(e for e in game.history if isinstance(e, SmazzataScored))
    return Outcome(
        tuple(sum(scored.deltas[s] for s in unit) / len(unit) for unit in units),
        tuple(0.0 for _ in units),
    )


def _done(game: Game) -> bool:
    return game.is_over() or game.scored_count > 0


# ---------------------------------------------------------------------------- one deal


@dataclass
class DealResult:
    """One deal: per unit, ``a``'s score minus ``b``'s in the same unit (``diffs``,
    ``margin_diffs``), the reference's scores, and what it cost."""

    deal: int
    diffs: tuple[float, ...]
    margin_diffs: tuple[float, ...]
    reference: tuple[float, ...]
    reference_margins: tuple[float, ...]
    cpu: float
    #: decisions asked, by player type (the reference's, ``a``'s asks, continuations')
    asked: dict[str, int] = field(default_factory=dict)
    #: decisions of the reference with a choice, and where ``a`` differed from ``b``
    choices: int = 0
    differing: int = 0
    #: per unit, the index (in the reference's moves) of ``a``'s first differing move,
    #: None where it never differed
    first: tuple[int | None, ...] = ()
    continuations: int = 0
    #: ``diff`` split by the phase of the differing decision (exact: of the unit's first)
    by_phase: dict[str, float] = field(default_factory=dict)

    @property
    def value(self) -> float:
        """``a``'s figure for the deal: the reference's mean plus the mean difference."""
        return _mean(self.reference) + _mean(self.diffs)

    @property
    def diff(self) -> float:
        return _mean(self.diffs)

    @property
    def margin_value(self) -> float:
        return _mean(self.reference_margins) + _mean(self.margin_diffs)


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


class _Table:
    """The players of one deal, made on demand and counted: ``kind`` in ``seat``."""

    def __init__(self, make: PlayerFactory, player_seed: int) -> None:
        self.make = make
        self.player_seed = player_seed
        self.players: dict[tuple[str, int], Player] = {}
        self.asked: dict[str, int] = {}

    def choose(self, kind: str, seat: int, game: Game) -> tuple[Action, int]:
        """``kind``'s move in ``seat`` and the number of legal actions it had."""
        player = self.players.get((kind, seat))
        if player is None:
            player = self.make(kind, seat_seed(self.player_seed, seat))
            self.players[(kind, seat)] = player
        view = game.view(seat)
        self.asked[kind] = self.asked.get(kind, 0) + 1
        return player.choose(view), len(view.legal)

    def play_out(self, game: Game, kinds: Sequence[str]) -> None:
        """Play ``game`` to the end of the smazzata with ``kinds[seat]``."""
        while not _done(game):
            seat = game.current_seat()
            assert seat is not None
            action, _ = self.choose(kinds[seat], seat, game)
            game.apply(seat, action)


def play_deal(
    deal: int,
    seed: int,
    a: str,
    b: str,
    options: TableOptions,
    continuation: str | None = None,
    make: PlayerFactory = create_player,
) -> DealResult:
    """The paired comparison of ``a`` and ``b`` on the arena's ``deal``-th deal from
    ``seed`` (module docstring): ``continuation`` None is ``exact``, else the reference
    policy that plays out every differing decision."""
    start = time.process_time()
    deal_seed = deal_seed_of(seed, deal)
    seats, units = units_of(options, deal_seed)
    unit_of = {seat: i for i, unit in enumerate(units) for seat in unit}
    table = _Table(make, deal_seed)
    game = Game.new(options, random.Random(deal_seed))
    diffs = [0.0] * len(units)
    margin_diffs = [0.0] * len(units)
    first: list[int | None] = [None] * len(units)
    #: exact: the clone at each unit's first differing move, and ``a``'s move there
    branches: list[tuple[int, Game, Action]] = []
    #: continuation b: each differing move's play-out, compared with the reference at the end
    one_step: list[tuple[int, str, Outcome]] = []
    #: per unit, its difference by the phase of the decision that made it
    phases: list[dict[str, float]] = [{} for _ in units]
    first_phase: list[str] = ["" for _ in units]
    choices = differing = continuations = 0
    index = 0
    while not _done(game):
        seat = game.current_seat()
        assert seat is not None
        action, legal = table.choose(b, seat, game)
        unit = unit_of.get(seat)
        ask = unit is not None and legal > 1 and (continuation is not None or first[unit] is None)
        if ask:
            assert unit is not None
            choices += 1
            other, _ = table.choose(a, seat, game)
            if other != action:
                differing += 1
                phase = game.phase.value
                if first[unit] is None:
                    first[unit] = index
                    first_phase[unit] = phase
                if continuation is None:
                    branches.append((unit, game.clone(), other))
                elif continuation == b:
                    # b's move played out by b is the reference itself: one play-out
                    branch = game.clone()
                    branch.apply(seat, other)
                    table.play_out(branch, [b] * seats)
                    one_step.append((unit, phase, outcome(branch, units)))
                    continuations += 1
                else:
                    gain, margin = _advantage(
                        table, game, seat, other, action, continuation, units, unit
                    )
                    diffs[unit] += gain
                    margin_diffs[unit] += margin
                    _add(phases[unit], phase, gain)
                    continuations += 2
        game.apply(seat, action)
        index += 1
    reference = outcome(game, units)
    for unit, phase, result in one_step:
        diffs[unit] += result.scores[unit] - reference.scores[unit]
        margin_diffs[unit] += result.margins[unit] - reference.margins[unit]
        _add(phases[unit], phase, result.scores[unit] - reference.scores[unit])
    for unit, branch, other in branches:
        seat_kinds = [a if unit_of.get(s) == unit else b for s in range(seats)]
        seat = branch.current_seat()
        assert seat is not None
        branch.apply(seat, other)
        table.play_out(branch, seat_kinds)
        result = outcome(branch, units)
        diffs[unit] = result.scores[unit] - reference.scores[unit]
        margin_diffs[unit] = result.margins[unit] - reference.margins[unit]
        _add(phases[unit], first_phase[unit], diffs[unit])
        continuations += 1
    by_phase: dict[str, float] = {}
    for split in phases:
        for phase, value in split.items():
            _add(by_phase, phase, value / len(units))
    return DealResult(
        deal,
        tuple(diffs),
        tuple(margin_diffs),
        reference.scores,
        reference.margins,
        time.process_time() - start,
        dict(table.asked),
        choices,
        differing,
        tuple(first),
        continuations,
        by_phase,
    )


def _add(totals: dict[str, float], key: str, value: float) -> None:
    totals[key] = totals.get(key, 0.0) + value


def _advantage(
    table: _Table,
    game: Game,
    seat: int,
    mine: Action,
    theirs: Action,
    continuation: str,
    units: Sequence[Sequence[int]],
    unit: int,
) -> tuple[float, float]:
    """The deciding unit's score (and margin) after ``mine`` minus after ``theirs``, both
    played out by ``continuation`` in every seat, with the same seeds."""
    kinds = [continuation] * game.n
    results = []
    for action in (mine, theirs):
        branch = game.clone()
        branch.apply(seat, action)
        table.play_out(branch, kinds)
        results.append(outcome(branch, units))
    return (
        results[0].scores[unit] - results[1].scores[unit],
        results[0].margins[unit] - results[1].margins[unit],
    )


# ---------------------------------------------------------------------------- stopping


@dataclass(frozen=True)
class Verdict:
    """Why a run stopped: ``width`` (the interval is narrow enough), ``H0`` / ``H1``
    (the SPRT accepted one), or ``max`` (``max_deals`` reached)."""

    reason: str
    deals: int


@dataclass(frozen=True)
class FixedWidth:
    """Stop at the first n ≥ ``min_deals`` whose 95% half-width is ≤ ``half_width``
    (None: play ``max_deals``)."""

    half_width: float | None
    min_deals: int = 30
    max_deals: int = 10_000

    def check(self, values: Sequence[float]) -> Verdict | None:
        n = len(values)
        if self.half_width is not None and n >= self.min_deals:
            _, half = mean_ci(values)
            if half <= self.half_width:
                return Verdict("width", n)
        return Verdict("max", n) if n >= self.max_deals else None


@dataclass(frozen=True)
class Sprt:
    """Wald's SPRT of mean ≤ ``mu0`` (H0) against mean ≥ ``mu1`` (H1), normal per-deal
    figures with the running variance, checked from ``min_deals`` on."""

    mu0: float
    mu1: float
    alpha: float = 0.05
    beta: float = 0.05
    min_deals: int = 30
    max_deals: int = 10_000

    @property
    def bounds(self) -> tuple[float, float]:
        """The log-likelihood ratio's lower (accept H0) and upper (accept H1) bounds."""
        return math.log(self.beta / (1 - self.alpha)), math.log((1 - self.beta) / self.alpha)

    def llr(self, values: Sequence[float]) -> float:
        n = len(values)
        if n < 2:
            return 0.0
        mean = sum(values) / n
        var = sum((v - mean) ** 2 for v in values) / (n - 1)
        if var <= 0.0:
            var = 1e-12
        middle = (self.mu0 + self.mu1) / 2
        return (self.mu1 - self.mu0) * sum(v - middle for v in values) / var

    def check(self, values: Sequence[float]) -> Verdict | None:
        n = len(values)
        if n >= self.min_deals:
            lower, upper = self.bounds
            llr = self.llr(values)
            if llr >= upper:
                return Verdict("H1", n)
            if llr <= lower:
                return Verdict("H0", n)
        return Verdict("max", n) if n >= self.max_deals else None


StopRule = FixedWidth | Sprt


def stop_at(rule: StopRule, values: Iterable[float]) -> Verdict | None:
    """The rule's verdict on a stream of per-deal figures taken in order (None: the
    stream ended first)."""
    seen: list[float] = []
    for value in values:
        seen.append(value)
        verdict = rule.check(seen)
        if verdict is not None:
            return verdict
    return None


# ---------------------------------------------------------------------------- a run


_Task = tuple[int, int, str, str, TableOptions, str | None, PlayerFactory]


def _run(task: _Task) -> DealResult:
    deal, seed, a, b, options, continuation, make = task
    return play_deal(deal, seed, a, b, options, continuation, make)


@dataclass
class Run:
    """The deals a run kept (in order) and its verdict."""

    results: list[DealResult]
    verdict: Verdict
    #: the earlier runs' figures this run continued (``run``'s ``prior``)
    prior: list[float] = field(default_factory=list)

    @property
    def values(self) -> list[float]:
        """The figures of every deal, the prior ones first."""
        return self.prior + [r.value for r in self.results]

    @property
    def cpu(self) -> float:
        return sum(r.cpu for r in self.results)


def run(
    seed: int,
    a: str,
    b: str,
    rule: StopRule,
    options: TableOptions | None = None,
    continuation: str | None = None,
    jobs: int = 1,
    progress: int = 0,
    make: PlayerFactory = create_player,
    echo: Callable[[str], None] = lambda line: None,
    prior: Sequence[float] = (),
    per_deal: bool = False,
) -> Run:
    """Compare ``a`` with ``b`` deal after deal until ``rule`` stops (every ``progress``
    deals, ``echo`` gets a running line; with ``per_deal``, a line a deal).

    ``prior``: the figures of deals 0 … k−1 of the same seed, pair and continuation from
    an earlier run (its ``per_deal`` lines): this run plays deals k, k+1, … and the rule
    is checked on the pooled sequence, as if one run had played them all."""
    options = (options or TableOptions()).model_copy(update={"match_end": "hands:1"})
    first = len(prior)
    tasks = (
        (deal, seed, a, b, options, continuation, make)
        for deal in range(first, max(first, rule.max_deals))
    )
    results: list[DealResult] = []
    values: list[float] = list(prior)
    verdict = rule.check(values) if values else None
    if verdict is None:
        with Pool(jobs) if jobs > 1 else Serial() as pool:
            for result in pool.imap(_run, tasks, chunksize=1):
                results.append(result)
                values.append(result.value)
                verdict = rule.check(values)
                if per_deal:
                    echo(f"deal {result.deal} {result.value!r}")
                if progress and len(results) % progress == 0 and verdict is None:
                    echo("... " + summary_line(results))
                if verdict is not None:
                    break
    assert verdict is not None
    return Run(results, verdict, list(prior))


def summary_line(results: Sequence[DealResult]) -> str:
    mean, half = mean_ci([r.value for r in results])
    cpu = sum(r.cpu for r in results)
    return (
        f"{len(results)} deals: {mean:+.3f} (95% CI {mean - half:+.3f} .. {mean + half:+.3f}), "
        f"{cpu:.0f} CPU-s"
    )


def report(run_: Run, a: str, b: str) -> str:
    results = run_.results
    n = len(run_.values)
    mean, half = mean_ci(run_.values)
    diff, diff_half = mean_ci([r.diff for r in results])
    margin, margin_half = mean_ci([r.margin_value for r in results])
    sd = half * math.sqrt(n) / Z95 if n > 1 and math.isfinite(half) else math.nan
    cpu = run_.cpu
    asked: dict[str, int] = {}
    for r in results:
        for kind, count in r.asked.items():
            asked[kind] = asked.get(kind, 0) + count
    choices = sum(r.choices for r in results)
    differing = sum(r.differing for r in results)
    firsts = [f for r in results for f in r.first if f is not None]
    units = sum(len(r.first) for r in results)
    lines = [
        f"{a} vs {b}: {n} deals, stopped by {run_.verdict.reason}"
        + (
            f" ({len(run_.prior)} from earlier runs; the lines below but this one are "
            f"this run's {len(results)})"
            if run_.prior
            else ""
        ),
        f"{a}'s score: {mean:+.4f} (95% CI {mean - half:+.4f} .. {mean + half:+.4f}); "
        f"{a} minus {b} in the same seats: {diff:+.4f} (± {diff_half:.4f}); "
        f"sd a deal {sd:.3f}",
    ]
    if any(r.margin_diffs != tuple(0.0 for _ in r.margin_diffs) for r in results) or any(
        r.reference_margins != tuple(0.0 for _ in r.reference_margins) for r in results
    ):
        lines.append(
            f"card points over the best other side: {margin:+.2f} "
            f"(95% CI {margin - margin_half:+.2f} .. {margin + margin_half:+.2f})"
        )
    lines.append(
        f"decisions with a choice asked of both: {choices}, differing {differing} "
        f"({differing / max(1, choices):.1%}); units that differed {len(firsts)} of {units}"
        + (
            f", first difference at move {_mean([float(f) for f in firsts]):.1f} on average"
            if firsts
            else ""
        )
        + f"; continuations played {sum(r.continuations for r in results)}"
    )
    phases = sorted({phase for r in results for phase in r.by_phase})
    if phases:
        parts = []
        for phase in phases:
            part, part_half = mean_ci([r.by_phase.get(phase, 0.0) for r in results])
            parts.append(f"{phase} {part:+.4f} (± {part_half:.4f})")
        lines.append(f"{a} minus {b} by the phase of the differing decision: " + ", ".join(parts))
    lines.append(
        "decisions asked: " + ", ".join(f"{kind} {count}" for kind, count in sorted(asked.items()))
    )
    lines.append(f"CPU {cpu:.1f} s, {cpu / max(1, len(results)):.2f} s a deal")
    return "\n".join(lines)


def _parse_rule(args: argparse.Namespace) -> StopRule:
    if args.sprt:
        mu0, mu1 = (float(x) for x in args.sprt.split(","))
        return Sprt(mu0, mu1, args.alpha, args.beta, args.min_deals, args.max_deals)
    return FixedWidth(args.width, args.min_deals, args.max_deals)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--a", default="esperto", help="the candidate")
    parser.add_argument("--b", default="forte", help="the field, and the reference games")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--continuation",
        default=None,
        help="a reference policy playing out every differing decision (default: exact)",
    )
    parser.add_argument("--width", type=float, default=None, help="stop at this 95%% half-width")
    parser.add_argument("--sprt", default=None, help="MU0,MU1: Wald's SPRT on a's score")
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--beta", type=float, default=0.05)
    parser.add_argument("--min-deals", type=int, default=30)
    parser.add_argument("--max-deals", type=int, default=1000)
    parser.add_argument("--option", action="append", default=[], help="name=value, repeatable")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--progress", type=int, default=0, help="running line every N deals")
    parser.add_argument(
        "--per-deal", action="store_true", help="print each deal's figure ('deal K VALUE')"
    )
    parser.add_argument(
        "--prior",
        default="",
        help="comma-separated figures of deals 0..k-1 from an earlier run (its --per-deal "
        "lines): play on from deal k and check the rule on them all",
    )
    parser.add_argument(
        "--make",
        default="",
        help="MODULE:FUNCTION that makes the players of a type name and a seed "
        "(default: game.players.create_player), as the arena's --make",
    )
    args = parser.parse_args(argv)
    options = TableOptions.model_validate(parse_options(args.option))
    make = factory(args.make) if args.make else create_player
    for kind in (args.a, args.b, args.continuation):
        if kind is not None:
            make(kind, 0)  # fail early on an unknown type
    rule = _parse_rule(args)
    mode = f"continuation {args.continuation}" if args.continuation else "exact"
    print(
        f"paired yardstick: {args.a} vs {args.b}, {mode}, seed {args.seed}, stop {rule}",
        flush=True,
    )
    start = time.perf_counter()
    result = run(
        args.seed,
        args.a,
        args.b,
        rule,
        options,
        args.continuation,
        args.jobs,
        args.progress,
        make,
        echo=lambda line: print(line, flush=True),
        prior=[float(x) for x in args.prior.split(",") if x.strip()],
        per_deal=args.per_deal,
    )
    print(report(result, args.a, args.b))
    print(f"wall time {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
