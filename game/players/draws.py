"""``random.Random``'s ``shuffle`` and ``randrange(n)``, compiled: the same numbers.

The computer players' sampling shuffles and draws hundreds of thousands of times a
decision; ``random.Random.shuffle`` and ``randrange`` are written in Python (only
``getrandbits`` is C). Compiled, the first decisions of a five-player game take 7.5%
fewer instructions (callgrind; 3.3% in two-player Briscola). These are CPython's own
algorithms (``_randbelow_with_getrandbits``: draw ``n.bit_length()`` bits until the
number is below ``n``), compiled with the rest of the hot loop (``setup.py``), so a seed
gives the same deals, the same decisions, as with the library's methods: a test compares
the two streams.

Only for ``random.Random`` itself, whose ``_randbelow`` is the one above (a subclass
that overrides ``random()`` but not ``getrandbits`` draws differently).
"""

from __future__ import annotations

import random
from typing import TypeVar

T = TypeVar("T")


def below(rng: random.Random, n: int) -> int:
    """``rng.randrange(n)`` for ``n > 0``: a number in ``[0, n)``."""
    if n <= 0:
        raise ValueError("empty range for below()")
    bits = n.bit_length()
    number: int = rng.getrandbits(bits)
    while number >= n:
        number = rng.getrandbits(bits)
    return number


def shuffle(rng: random.Random, items: list[T]) -> None:
    """``rng.shuffle(items)``: the same permutation, in place."""
    for i in range(len(items) - 1, 0, -1):
        j = below(rng, i + 1)
        items[i], items[j] = items[j], items[i]
