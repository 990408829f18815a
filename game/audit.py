"""Where the card points go: a move-by-move audit of a plain-Briscola arena run.

    python -m game.audit --deals 100 --seed 1 --a campione --b esperto [--players 2]
        [--make MODULE:FUNCTION]

It plays the arena's duplicate deals (:mod:`game.arena`: the same deals, seats and
player seeds) and prints, for each player type, a smazzata on average:

* *points by phase*: the card points its side took in the tricks played while there
  was a stock, and in the last tricks (no draws);
* *carichi taken*: of the plain Assi and Tre (carichi that are not trumps) an opponent
  led, how many it took (with a higher card of the suit or a trump);
* *own carichi lost*: the card points of its own Assi and Tre (trumps included) that
  ended in an opponent's trick;
* *points from leads*: the card points it took in the tricks it led;
* *trumps*: the trumps it played and the card points of the tricks they won.

Every figure is judged per smazzata of one side, with its 95% interval over deals.
``--make`` names the players' factory, as the arena's does (the yardsticks of a change:
``game.players.classic:make_player``).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass, field

from game.arena import (
    PlayerFactory,
    deal_seed_of,
    factory,
    mean_ci,
    play_deal,
    schedule,
    units_of,
)
from game.cards import CARD_POINTS
from game.events import BriscolaScored, CardsDrawn, Event, StockLaid, TrickWon
from game.options import TableOptions
from game.players import create_player
from game.players.common import map_jobs

#: The figures of one side in one smazzata, in the order printed.
FIGURES = (
    ("stock_points", "points while there is a stock"),
    ("last_points", "points in the last tricks"),
    ("carichi_led_against", "carichi led by the opponent"),
    ("carichi_taken", "  of them taken"),
    ("own_carichi_lost", "own carichi lost (points)"),
    ("lead_points", "points from own leads"),
    ("trumps_played", "trumps played"),
    ("trump_points", "points taken by them"),
)

_ASSO, _TRE = 0, 1


@dataclass
class SideAudit:
    """One side's figures in one smazzata (see :data:`FIGURES`)."""

    stock_points: int = 0
    last_points: int = 0
    carichi_led_against: int = 0
    carichi_taken: int = 0
    own_carichi_lost: int = 0
    lead_points: int = 0
    trumps_played: int = 0
    trump_points: int = 0


def audit_history(history: Sequence[Event], side: Sequence[int]) -> SideAudit:
    """The figures of ``side`` (its seats) in one plain-Briscola smazzata."""
    result = SideAudit()
    trump = next(e.face_up // 10 for e in history if isinstance(e, StockLaid))
    tricks: list[tuple[TrickWon, bool]] = []
    for event in history:
        if isinstance(event, TrickWon):
            tricks.append((event, False))
        elif isinstance(event, CardsDrawn) and tricks:
            tricks[-1] = (tricks[-1][0], True)  # a draw followed: the stock was there
    ours = set(side)
    for trick, with_stock in tricks:
        players = len(trick.cards)
        seats = [(trick.leader + i) % players for i in range(players)]
        won = trick.seat in ours
        if won:
            if with_stock:
                result.stock_points += trick.points
            else:
                result.last_points += trick.points
            if trick.leader in ours:
                result.lead_points += trick.points
        lead = trick.cards[0]
        plain_carico = lead // 10 != trump and lead % 10 in (_ASSO, _TRE)
        if plain_carico and trick.leader not in ours:
            result.carichi_led_against += 1
            result.carichi_taken += won
        winning_index = seats.index(trick.seat)
        for seat, card in zip(seats, trick.cards, strict=True):
            if seat not in ours:
                continue
            if card % 10 in (_ASSO, _TRE) and not won:
                result.own_carichi_lost += CARD_POINTS[card]
            if card // 10 == trump:
                result.trumps_played += 1
                if trick.cards[winning_index] == card:
                    result.trump_points += trick.points
    return result


@dataclass
class AuditStats:
    """Per type: every side's figures, and per deal their mean (for the intervals)."""

    per_deal: dict[str, list[float]] = field(default_factory=dict)
    sides: int = 0


_Task = tuple[int, int, str, str, TableOptions, PlayerFactory]


def _audit_deal(task: _Task) -> dict[str, list[SideAudit]]:
    deal, seed, a, b, options, make = task
    deal_seed = deal_seed_of(seed, deal)
    seats, units = units_of(options, deal_seed)
    found: dict[str, list[SideAudit]] = {}
    for types in schedule(None, a, b, seats, units):
        history: list[Event] = []
        play_deal(deal_seed, types, options, deal_seed, make=make, history=history)
        scored = next(e for e in history if isinstance(e, BriscolaScored))
        for side in scored.sides:
            found.setdefault(types[side[0]], []).append(audit_history(history, side))
    return found


def run_audit(
    deals: int, seed: int, a: str, b: str, options: TableOptions, jobs: int = 1,
    make: PlayerFactory = create_player,
) -> dict[str, AuditStats]:
    """Play the arena's deals and audit every side (see the module docstring); ``make``
    builds the players."""
    options = options.model_copy(update={"match_end": "hands:1"})
    tasks: list[_Task] = [(deal, seed, a, b, options, make) for deal in range(deals)]
    stats: dict[str, AuditStats] = {}
    for found in map_jobs(_audit_deal, tasks, jobs):
        for kind, audits in found.items():
            entry = stats.setdefault(kind, AuditStats())
            entry.sides += len(audits)
            for name, _label in FIGURES:
                values = [getattr(audit, name) for audit in audits]
                entry.per_deal.setdefault(name, []).append(sum(values) / len(values))
    return stats


def report(stats: dict[str, AuditStats], order: Sequence[str]) -> str:
    kinds = [kind for kind in order if kind in stats]
    lines = [f"{'a smazzata, one side (95% CI)':<34}" + "".join(f"{k:>24}" for k in kinds)]
    for name, label in FIGURES:
        cells = []
        for kind in kinds:
            mean, half = mean_ci(stats[kind].per_deal[name])
            cells.append(f"{f'{mean:.2f} (±{half:.2f})':>24}")
        lines.append(f"{label:<34}" + "".join(cells))
    rates = []
    for kind in kinds:
        per_deal = stats[kind].per_deal
        led, taken = sum(per_deal["carichi_led_against"]), sum(per_deal["carichi_taken"])
        rates.append(f"{(taken / led if led else 0.0):>24.1%}")
    lines.append(f"{'carichi taken / led against':<34}" + "".join(rates))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--deals", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--a", default="campione")
    parser.add_argument("--b", default="esperto")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--make", help="the players' factory, MODULE:FUNCTION")
    args = parser.parse_args(argv)
    options = TableOptions.model_validate({"game": "briscola", "players": args.players})
    make = factory(args.make) if args.make else create_player
    stats = run_audit(args.deals, args.seed, args.a, args.b, options, args.jobs, make)
    print(
        f"audit: {args.a} vs {args.b}, plain Briscola with {args.players}; {args.deals} "
        f"deals, seed {args.seed}"
    )
    print(report(stats, [args.a, args.b]))


if __name__ == "__main__":
    main()
