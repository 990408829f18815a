"""Scoring of a smazzata (§10) and of a match (§11), as pure functions."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from game.cards import TOTAL_POINTS

ContractKind = Literal["rank", "two", "obbligato", "carichi"]


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
    """N of R70: 61 for rank and a carichi contracts, else the bid points."""
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
    score: ContractScore, players: int, chiamante: int, socio: int | None
) -> tuple[int, ...]:
    """Spread a :class:`ContractScore` over the seats; the result sums to zero (R76)."""
    deltas = [score.each_opponent] * players
    deltas[chiamante] = score.chiamante
    if socio is not None and score.socio is not None:
        deltas[socio] = score.socio
    return tuple(deltas)


def competition_positions(totals: Sequence[int]) -> tuple[int, ...]:
    """R82: standard competition ranking (1, 2, 2, 4), position per seat."""
    return tuple(1 + sum(1 for other in totals if other > mine) for mine in totals)


def match_winners(totals: Sequence[int], rule: Literal["top", "seed000"]) -> tuple[int, ...]:
    """R83/R84: the winning seats, in seat order."""
    best = max(totals)
    top = [s for s, t in enumerate(totals) if t == best]
    if rule == "top" or len(top) >= 2:
        return tuple(top)
    rest = [t for t in totals if t != best]
    if not rest:
        return tuple(top)
    second = max(rest)
    seconds = [s for s, t in enumerate(totals) if t == second]
    if len(seconds) < 4:
        return tuple(sorted(top + seconds))
    return tuple(top)
