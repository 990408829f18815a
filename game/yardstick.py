"""The speed yardstick: a deliberately bare simulator of random five-player smazzate.

A copy, kept in the project, of the team's shared yardstick (``refsim.py``): ints for
cards, no options, no views, no history, most rules skipped. It is what plain Python does
with no engine around it, so the engine's speed is quoted as a ratio to it measured in
the same run (``python -m game.simulate`` does that). Do not optimise it: its value is
that it stays the same.
"""

from __future__ import annotations

import random
import time
from typing import Any

_POINTS = [11, 10, 4, 3, 2, 0, 0, 0, 0, 0]


def _smazzata(rng: random.Random) -> bool | None:
    # refsim.py's smazzata() statement for statement (formatted, and typed with Any where
    # refsim mixes kinds in one list), so the ratio is to the very same work.
    deck = list(range(40))
    rng.shuffle(deck)
    hands = [deck[i * 8 : (i + 1) * 8] for i in range(5)]
    dealer = rng.randrange(5)
    # auction: random bidder behaviour
    active = [True] * 5
    cur: Any = None
    best: Any = None
    seat = (dealer + 1) % 5
    npass = 0
    while True:
        if active[seat]:
            legal: list[Any] = (
                ["pass"]
                + (
                    [r for r in range(10) if cur is None or r > cur[0]]
                    if (cur is None or cur[0] < 9)
                    else []
                )
                + ([("2", p) for p in range((cur[1] + 1) if cur and cur[0] == 9 else 61, 121)][:5])
            )
            a = rng.choice(legal)
            if a == "pass":
                active[seat] = False
                npass += 1
            elif isinstance(a, tuple):
                cur = (9, a[1])
                best = seat
            else:
                cur = (a, 61)
                best = seat
            if best is not None and sum(active) == 1 and active[best]:
                break
            if sum(active) == 0:
                return None
        seat = (seat + 1) % 5
    rank = cur[0]
    suit = rng.randrange(4)
    called = suit * 10 + rank
    partner = next(i for i in range(5) if called in hands[i])
    trump = suit
    leader = (dealer + 1) % 5
    taken = [0] * 5
    for _ in range(8):
        table = []
        for k in range(5):
            s = (leader + k) % 5
            c = rng.choice(hands[s])
            hands[s].remove(c)
            table.append((s, c))
        win_s, win_c = table[0]
        for s, c in table[1:]:
            if (c // 10 == win_c // 10 and c % 10 < win_c % 10) or (
                c // 10 == trump and win_c // 10 != trump
            ):
                win_s, win_c = s, c
        taken[win_s] += sum(_POINTS[c % 10] for _, c in table)
        leader = win_s
    team = taken[best] + (taken[partner] if partner != best else 0)
    made: bool = team >= cur[1]
    return made


def yardstick_rate(deals: int, seed: int = 1) -> float:
    """Deals per CPU second of the bare simulator (voided deals included, as the
    original). CPU time, not wall time: on a shared machine the wait for a core is not
    the simulator's cost."""
    rng = random.Random(seed)
    start = time.process_time()
    for _ in range(deals):
        _smazzata(rng)
    return deals / max(time.process_time() - start, 1e-9)
