"""Scoring of a smazzata (§10) and of a match (§11), as pure functions."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from game.cards import TOTAL_POINTS

ContractKind = Literal["rank", "two", "obbligato", "carichi", "punti"]


@dataclass(frozen=True, slots=True)
class ContractScore:
    """Score changes by role: ``socio`` is None for a solo contract (R69)."""

    chiamante: int
    socio: int | None
    each_opponent: int
    won: bool
    target: int
    multiplier: int
    cappotto: bool


def contract_points(kind: ContractKind, points: int) -> int:
    """N of R70: 61 for rank and a carichi contracts, else the bid points (R46: a point
    contract "N" counts as "2 a N")."""
    return 61 if kind in ("rank", "carichi") else points


def bid_multiplier(n: int) -> int:
    """R74: ×1 up to 70, ×2 from 71 to 80, ×3 from 81."""
    if n <= 70:
        return 1
    return 2 if n <= 80 else 3


def score_contract(
    *,
    kind: ContractKind,
    points: int,
    in_mano: bool,
    caller_points: int,
    players: int,
    tie_goes_to_caller: bool,
    cappotto: Literal["double", "off"],
) -> ContractScore:
    """R68–R76 (and R97 for six players): the reference algorithm of RULES.md §10."""
    if not 0 <= caller_points <= TOTAL_POINTS:
        raise ValueError(f"caller points out of range: {caller_points}")
    n = contract_points(kind, points)
    target = 60 if tie_goes_to_caller and n == 61 else n
    won = caller_points >= target
    sign = 1 if won else -1
    multiplier = bid_multiplier(n)
    is_cappotto = cappotto == "double" and caller_points in (0, TOTAL_POINTS)
    if is_cappotto:
        multiplier *= 2
    unit = sign * multiplier
    solo = in_mano or kind == "carichi"
    if solo:
        return ContractScore(
            unit * (players - 1), None, -unit, won, target, multiplier, is_cappotto
        )
    return ContractScore(unit * (players - 3), unit, -unit, won, target, multiplier, is_cappotto)


def seat_deltas(
    score: ContractScore,
    players: int,
    chiamante: int,
    socio: int | None,
    morto: int | None = None,
) -> tuple[int, ...]:
    """Spread a :class:`ContractScore` over the seats. The result sums to zero (R76)
    unless a morto sits at the table: its share is discarded (R92), so it scores 0."""
    deltas = [score.each_opponent] * players
    deltas[chiamante] = score.chiamante
    if socio is not None and score.socio is not None:
        deltas[socio] = score.socio
    if morto is not None:
        deltas[morto] = 0
    return tuple(deltas)


def competition_positions(totals: Sequence[int], unranked: int | None = None) -> tuple[int, ...]:
    """R82: standard competition ranking (1, 2, 2, 4), position per seat. The
    ``unranked`` seat (il morto, R93) gets position 0 and does not count."""
    ranked = [t for s, t in enumerate(totals) if s != unranked]
    return tuple(
        0 if seat == unranked else 1 + sum(1 for other in ranked if other > mine)
        for seat, mine in enumerate(totals)
    )


def match_winners(
    totals: Sequence[int], rule: Literal["top", "seed000"], unranked: int | None = None
) -> tuple[int, ...]:
    """R83/R84 (read for any number of ranked players by R128): the winning seats, in
    seat order. The ``unranked`` seat (il morto, R93) never wins."""
    ranked = [(s, t) for s, t in enumerate(totals) if s != unranked]
    best = max(t for _, t in ranked)
    top = [s for s, t in ranked if t == best]
    if rule == "top" or len(top) >= 2:
        return tuple(top)
    rest = [t for _, t in ranked if t != best]
    if not rest:
        return tuple(top)
    second = max(rest)
    seconds = [s for s, t in ranked if t == second]
    # R84 says "fewer than 4" for 5 players; R128: fewer than P - 1 ranked players.
    if len(seconds) < len(ranked) - 1:
        return tuple(sorted(top + seconds))
    return tuple(top)


def briscola_smazzata_winner(
    points: Sequence[int], rule: Literal["majority", "highest"]
) -> int | None:
    """The index of the side that wins a smazzata of plain Briscola, None for a patta.

    ``majority`` (2 sides): 61 or more wins, 60-60 is a patta (R108). ``highest``
    (3 players): the strictly highest total wins, any tie for it is a patta (R109, R122).
    """
    best = max(points)
    leaders = [i for i, p in enumerate(points) if p == best]
    if len(leaders) > 1:
        return None
    if rule == "majority" and best < 61:
        return None
    return leaders[0]


def briscola_match_over(wins: Sequence[int], played: int, kind: str, n: int) -> bool:
    """R110/R123: ``wins:N`` ends when a side has N wins; ``rounds:N`` after N smazzate,
    then one smazzata at a time until a side has strictly more wins than every other."""
    best = max(wins)
    if kind == "wins":
        return best >= n
    if played < n:
        return False
    return sum(1 for w in wins if w == best) == 1
