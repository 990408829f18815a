"""Shared helpers of the computer players: card-set bitmasks, per-decision RNG, roles,
and the measuring tools' process pool.

Card sets are Python ints used as 40-bit masks (bit ``c`` set = card ``c`` in the set):
intersections, "is any stronger trump still out?" and counts are then one or two C-level
operations, which matters in the rollouts of the search player.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from multiprocessing import Pool
from typing import Final, TypeVar

from game.cards import CARD_POINTS

N_CARDS: Final = 40
ALL_MASK: Final = (1 << N_CARDS) - 1
#: SUIT_MASK[s]: the ten cards of suit s.
SUIT_MASK: Final[tuple[int, ...]] = tuple(((1 << 10) - 1) << (10 * s) for s in range(4))
#: STRONGER[c]: the cards of c's suit that beat c (lower rank index = stronger, R2).
STRONGER: Final[tuple[int, ...]] = tuple(
    sum(1 << (c - c % 10 + r) for r in range(c % 10)) for c in range(N_CARDS)
)
#: Mask of every card worth points (carichi and figure).
POINT_MASK: Final = sum(1 << c for c in range(N_CARDS) if CARD_POINTS[c])

#: Obbligato order (R34): weakest first. Rank indexes: 9 = 2, 8 = 4, ..., 0 = Asso.
OBBLIGATO_ORDER: Final[tuple[int, ...]] = (9, 8, 7, 6, 5, 4, 3, 2, 1, 0)


def mask_of(cards: Sequence[int]) -> int:
    mask = 0
    for card in cards:
        mask |= 1 << card
    return mask


def cards_of(mask: int) -> list[int]:
    """The cards of a mask, weakest-suit-first / strongest-rank-first (ascending ints)."""
    result = []
    while mask:
        low = mask & -mask
        result.append(low.bit_length() - 1)
        mask ^= low
    return result


def decision_rng(seed: int, *parts: int) -> random.Random:
    """A fresh RNG for one decision, derived from the player's seed and the situation.

    The bot may restart between two moves; deriving the randomness from
    ``(seed, smazzata, version, seat)`` instead of a long-lived stream makes a player's
    choice a pure function of its seed and the view it is shown.
    """
    key = seed & 0xFFFFFFFFFFFF
    for part in parts:
        key = (key * 1_000_003 + (part & 0xFFFFFFFF) + 1) & 0xFFFFFFFFFFFFFFFF
    return random.Random(key)


def beats(card: int, best: int, trump: int | None) -> bool:
    """True if ``card`` played after ``best`` (the current winner) takes the trick (R59)."""
    if card // 10 == best // 10:
        return card % 10 < best % 10
    return card // 10 == trump


_Task = TypeVar("_Task")
_Result = TypeVar("_Result")


def map_jobs(
    func: Callable[[_Task], _Result], tasks: Sequence[_Task], jobs: int, chunksize: int = 1
) -> list[_Result]:
    """``func`` over ``tasks`` in order: in a pool of ``jobs`` processes when more than
    one (the measuring tools' ``--jobs``), else in this process."""
    if jobs <= 1:
        return [func(task) for task in tasks]
    with Pool(jobs) as pool:
        return pool.map(func, tasks, chunksize=chunksize)
