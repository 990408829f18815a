"""What does a search budget buy? Play and auction decisions against a big-budget search.

    python -m game.players.regret --deals 30 --decisions 180 --budgets 25000,30000,35000,50000 \
        --seed 77 --jobs 2
    python -m game.players.regret --auction 60:3,400:3,400:5 --deals 25 --seed 5 --jobs 2

A duplicate arena needs hundreds of deals to see a few hundredths of a point; this
asks a narrower question, quickly. Play decisions with a real choice are drawn at random
(``--decisions`` of them) from rule-based self-play (``--deals`` deals, every seat's).
For each, an *oracle*, the ``esperto`` search with ``--oracle-worlds`` sampled deals (its
own seed), values every legal card; ``esperto`` with each budget then chooses (three
decision seeds), and its *regret* is the oracle's value of the best card minus the
oracle's value of the card chosen, in score points. It prints, for each budget, the mean
regret a decision with its standard error, the mean CPU time a decision, and the
difference from the first budget, paired by decision.

With ``--auction`` it asks the same of the auction: every auction decision of
``--deals`` deals of rule-based self-play where the search rolls calls out (a hand with
no call near paying off passes without). Each setting ``deals:calls`` caps the sampled
deals (the budget permitting) and names how many of the most promising calls are rolled
out; the oracle rolls out ``--oracle-calls`` calls on ``--oracle-worlds`` deals. The
regret is the oracle's expected score of its best action (passing is worth the call
margin) minus its expected score of the action chosen; *optimism* is the chosen call's
chance of being made as the chooser estimated it minus the oracle's estimate (over the
decisions that call).

The regret is measured against the same kind of search with far more deals, so it shows
what more sampled deals buy, not how far the search is from perfect play.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time
from collections.abc import Sequence

from game.engine import Game
from game.options import TableOptions
from game.players.common import decision_rng, map_jobs
from game.players.expert import ExpertPlayer
from game.players.heuristic import HeuristicPlayer
from game.simulate import parse_options
from game.view import View

#: Decision seeds per view and budget.
SEEDS = 3
#: The oracle's seed (the choosers use 0, 1, 2).
ORACLE_SEED = 999


def decision_views(deals: int, seed: int, options: TableOptions, phase: str) -> list[View]:
    """The decisions of ``phase`` with a choice (not the morto's, not a monte) of
    rule-based self-play."""
    views = []
    for deal in range(deals):
        game = Game.new(options, random.Random(seed * 1000 + deal))
        players = [HeuristicPlayer(deal * 10 + s) for s in range(game.n)]
        while not game.is_over() and game.scored_count == 0:
            seat = game.current_seat()
            assert seat is not None
            view = game.view(seat)
            if (
                view.phase == phase
                and len(view.legal) > 1
                and seat != view.morto
                and "M" not in view.legal
            ):
                views.append(view)
            game.apply(seat, players[seat].choose(view))
    return views


def play_views(deals: int, seed: int, options: TableOptions) -> list[View]:
    """The play decisions with more than one legal card of rule-based self-play."""
    return decision_views(deals, seed, options, "play")


def auction_views(deals: int, seed: int, options: TableOptions) -> list[View]:
    """The auction decisions with a choice of rule-based self-play."""
    return decision_views(deals, seed, options, "auction")


#: One auction setting: (at most this many sampled deals, this many calls rolled out).
AuctionSetting = tuple[int, int]


def auction_regrets(
    view: View, settings: Sequence[AuctionSetting], oracle_worlds: int, oracle_calls: int
) -> list[tuple[float, float, float, float]] | None:
    """For each setting, means over the decision seeds of: regret, optimism of the
    chosen call (over the seeds that call; NaN if none does), sampled deals, CPU
    seconds. None when the oracle's hand passes without rollouts."""
    seat = view.seat or 0
    oracle = ExpertPlayer(
        seed=ORACLE_SEED, budget=10**9, auction_worlds=oracle_worlds, bid_candidates=oracle_calls
    )
    values = oracle.bid_values(view, decision_rng(ORACLE_SEED, view.smazzata, view.version, seat))
    if oracle.last_worlds == 0:
        return None
    chance = dict(oracle.last_bid_p)
    if "P" in view.legal:
        values["P"] = oracle.call_margin
    best = max(values.values())
    rows = []
    for worlds, calls in settings:
        regret = optimism = deals = 0.0
        calling = 0
        start = time.process_time()
        for seed in range(SEEDS):
            player = ExpertPlayer(seed=seed, auction_worlds=worlds, bid_candidates=calls)
            code = player.choose(view).code
            regret += best - values[code]
            if code in chance:
                optimism += player.last_bid_p[code] - chance[code]
                calling += 1
            deals += player.last_worlds
        seconds = time.process_time() - start
        mean_optimism = optimism / calling if calling else math.nan
        rows.append((regret / SEEDS, mean_optimism, deals / SEEDS, seconds / SEEDS))
    return rows


def _auction_task(
    args: tuple[View, tuple[AuctionSetting, ...], int, int],
) -> list[tuple[float, float, float, float]] | None:
    return auction_regrets(*args)


def view_regrets(
    view: View, budgets: Sequence[int], oracle_worlds: int
) -> tuple[list[float], list[float]]:
    """For each budget: the mean regret of its choices on ``view`` and the mean CPU
    seconds a choice."""
    oracle = ExpertPlayer(seed=ORACLE_SEED, budget=10**9)
    oracle.max_worlds = oracle_worlds
    seat = view.seat or 0
    _, values = oracle.card_values(
        view, decision_rng(ORACLE_SEED, view.smazzata, view.version, seat)
    )
    best = max(values)
    regrets, seconds = [], []
    for budget in budgets:
        regret = 0.0
        start = time.process_time()
        for seed in range(SEEDS):
            chosen = ExpertPlayer(seed=seed, budget=budget).choose(view)
            regret += best - values[view.legal.index(chosen.code)]
        seconds.append((time.process_time() - start) / SEEDS)
        regrets.append(regret / SEEDS)
    return regrets, seconds


def _task(args: tuple[View, tuple[int, ...], int]) -> tuple[list[float], list[float]]:
    return view_regrets(*args)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--deals", type=int, default=30)
    parser.add_argument("--decisions", type=int, default=180, help="drawn from those deals")
    parser.add_argument("--budgets", default="25000,35000,50000")
    parser.add_argument("--oracle-worlds", type=int, default=400)
    parser.add_argument("--seed", type=int, default=77)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--option", action="append", default=[], help="name=value")
    parser.add_argument(
        "--auction", default="", help="deals:calls,... measure auction decisions instead"
    )
    parser.add_argument("--oracle-calls", type=int, default=6, help="with --auction")
    args = parser.parse_args(argv)
    options = TableOptions.model_validate(parse_options(args.option))
    if args.auction:
        _auction_main(args, options)
        return
    budgets = tuple(int(b) for b in args.budgets.split(","))
    views = play_views(args.deals, args.seed, options)
    random.Random(args.seed).shuffle(views)
    views = views[: args.decisions]
    tasks = [(view, budgets, args.oracle_worlds) for view in views]
    results = map_jobs(_task, tasks, args.jobs, chunksize=2)
    n = len(results)
    print(f"{n} play decisions drawn from {args.deals} deals (seed {args.seed}); "
          f"oracle: esperto with {args.oracle_worlds} sampled deals")
    print("budget    regret a decision (se)   CPU a decision   minus the first budget (se)")
    first = [r[0] for r, _ in results]
    for i, budget in enumerate(budgets):
        regrets = [r[i] for r, _ in results]
        cpu = statistics.mean(s[i] for _, s in results)
        line = f"{budget:>7}   {statistics.mean(regrets):.4f} ({_se(regrets):.4f})"
        line += f"          {1000 * cpu:6.1f} ms"
        if i:
            diff = [a - b for a, b in zip(regrets, first, strict=True)]
            line += f"        {statistics.mean(diff):+.4f} ({_se(diff):.4f})"
        print(line)


def _auction_main(args: argparse.Namespace, options: TableOptions) -> None:
    settings = tuple(
        (int(worlds), int(calls))
        for worlds, calls in (item.split(":") for item in args.auction.split(","))
    )
    views = auction_views(args.deals, args.seed, options)
    tasks = [(view, settings, args.oracle_worlds, args.oracle_calls) for view in views]
    found = map_jobs(_auction_task, tasks, args.jobs)
    results = [rows for rows in found if rows is not None]
    print(f"{len(results)} auction decisions with rollouts of {len(views)} in {args.deals} "
          f"deals (seed {args.seed}); oracle: esperto rolling out {args.oracle_calls} calls "
          f"on {args.oracle_worlds} sampled deals")
    print("deals:calls  deals used  regret a decision (se)  optimism (se)     CPU a decision"
          "   minus the first (se)")
    first = [rows[0][0] for rows in results]
    for i, (worlds, calls) in enumerate(settings):
        regrets = [rows[i][0] for rows in results]
        optimism = [rows[i][1] for rows in results if not math.isnan(rows[i][1])]
        line = f"{worlds:>7}:{calls:<3} {statistics.mean(rows[i][2] for rows in results):>10.1f}"
        line += f"  {statistics.mean(regrets):.4f} ({_se(regrets):.4f})"
        line += f"         {statistics.mean(optimism):+.4f} ({_se(optimism):.4f})"
        line += f"  {1000 * statistics.mean(rows[i][3] for rows in results):8.1f} ms"
        if i:
            diff = [a - b for a, b in zip(regrets, first, strict=True)]
            line += f"     {statistics.mean(diff):+.4f} ({_se(diff):.4f})"
        print(line)


def _se(values: Sequence[float]) -> float:
    return statistics.stdev(values) / len(values) ** 0.5 if len(values) > 1 else 0.0


if __name__ == "__main__":
    main()
