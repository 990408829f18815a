"""What does a search budget buy? Play decisions against a big-budget search.

    python -m game.players.regret --deals 30 --decisions 180 --budgets 25000,30000,35000,50000 \
        --seed 77 --jobs 2

A duplicate arena needs hundreds of deals to see a few hundredths of a point; this
asks a narrower question, quickly. Play decisions with a real choice are drawn at random
(``--decisions`` of them) from rule-based self-play (``--deals`` deals, every seat's).
For each, an *oracle*, the ``esperto`` search with ``--oracle-worlds`` sampled deals (its
own seed), values every legal card; ``esperto`` with each budget then chooses (three
decision seeds), and its *regret* is the oracle's value of the best card minus the
oracle's value of the card chosen, in score points. It prints, for each budget, the mean
regret a decision with its standard error, the mean CPU time a decision, and the
difference from the first budget, paired by decision.

The regret is measured against the same kind of search with far more deals, so it shows
what more sampled deals buy, not how far the search is from perfect play.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Sequence
from multiprocessing import Pool

from game.engine import Game
from game.options import TableOptions
from game.players.common import decision_rng
from game.players.expert import ExpertPlayer
from game.players.heuristic import HeuristicPlayer
from game.simulate import parse_options
from game.view import View

#: Decision seeds per view and budget.
SEEDS = 3
#: The oracle's seed (the choosers use 0, 1, 2).
ORACLE_SEED = 999


def play_views(deals: int, seed: int, options: TableOptions) -> list[View]:
    """The play decisions with more than one legal card of rule-based self-play."""
    views = []
    for deal in range(deals):
        game = Game.new(options, random.Random(seed * 1000 + deal))
        players = [HeuristicPlayer(deal * 10 + s) for s in range(game.n)]
        while not game.is_over() and game.scored_count == 0:
            seat = game.current_seat()
            assert seat is not None
            view = game.view(seat)
            if view.phase == "play" and len(view.legal) > 1 and seat != view.morto:
                views.append(view)
            game.apply(seat, players[seat].choose(view))
    return views


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
    args = parser.parse_args(argv)
    budgets = tuple(int(b) for b in args.budgets.split(","))
    options = TableOptions.model_validate(parse_options(args.option))
    views = play_views(args.deals, args.seed, options)
    random.Random(args.seed).shuffle(views)
    views = views[: args.decisions]
    tasks = [(view, budgets, args.oracle_worlds) for view in views]
    if args.jobs > 1:
        with Pool(args.jobs) as pool:
            results = pool.map(_task, tasks, chunksize=2)
    else:
        results = [_task(task) for task in tasks]
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


def _se(values: Sequence[float]) -> float:
    return statistics.stdev(values) / len(values) ** 0.5 if len(values) > 1 else 0.0


if __name__ == "__main__":
    main()
