"""Who takes a trick (R59), on cards as small ints (``suit * 10 + rank``, a lower rank
the stronger card: see :mod:`game.cards`, which re-exports the winner).

Its own module so that mypyc compiles it with the computer players (setup.py): the
rollouts and the opponent models ask it millions of times a decision, and the engine
asks it once a trick; it imports nothing, and plays the same in pure Python.
"""

from __future__ import annotations

from collections.abc import Sequence


def beats(card: int, best: int, trump: int | None) -> bool:
    """R59: ``card`` takes the trick from ``best``: a stronger card of the same suit, or a
    briscola on a card of another suit. A lower rank value is a stronger card (R2)."""
    if card // 10 == best // 10:
        return card % 10 < best % 10
    return trump is not None and card // 10 == trump


def trick_winner_index(cards: Sequence[int], trump: int | None) -> int:
    """Index of the winning card of a trick (R59). ``trump`` is a suit or ``None``."""
    best = 0
    best_card = cards[0]
    for i in range(1, len(cards)):
        card = cards[i]
        if beats(card, best_card, trump):
            best, best_card = i, card
    return best
