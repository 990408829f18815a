"""Hand evaluation for the auction: how many card points will my side make?

A player deciding whether to call, and how high, asks two questions for each suit that
could be the briscola: how many points will my side take with this suit as trump and
the called card in my partner's hand (or alone, if I call a card I hold: *in mano*), and
how sure is that. The answer is a linear model of a few features a player looks at:

* the number of trumps held and their quality (the Asso and the 3 of briscola are the
  masters; Re, Cavallo and Fante take the lisci of trump);
* the points held outside the trump suit, and how many of them are carichi;
* the card the partner is known to hold: calling the Asso gives a partner with 11 points
  and the strongest trump, calling the 2 ("2 a N") gives a random partner;
* voids, which let the hand cut (taglio) early.

The coefficients were fitted by least squares on heuristic self-play rollouts (see
:mod:`game.players.calibrate`, which prints them). The spread of the result around the
estimate is close to normal, so P(points ≥ N) is a normal tail; the expected score of a
contract is then ``P·win − (1−P)·loss`` with the multipliers of R73–R74.
"""

from __future__ import annotations

import math
from typing import Final

from game.cards import CARD_POINTS
from game.scoring import bid_multiplier

# Fitted by ``python -m game.players.calibrate`` (team = chiamante + socio).
TEAM_COEF: Final[tuple[float, ...]] = (
    34.390,
    5.761,
    0.947,
    -0.730,
    -0.033,
    1.189,
    1.000,
    -1.652,
    0.056,
)
TEAM_SD: Final = 19.5
SOLO_COEF: Final[tuple[float, ...]] = (
    -15.400,
    6.695,
    1.443,
    -1.087,
    -0.135,
    2.063,
    0.0,
    0.0,
    -1.007,
)
SOLO_SD: Final = 11.9
CARICHI_COEF: Final[tuple[float, ...]] = (11.371, 2.647, 0.545, -15.931)
CARICHI_SD: Final = 16.0


def features(hand: tuple[int, ...] | list[int], suit: int, called: int | None) -> list[float]:
    """The model's features for ``hand`` with ``suit`` as briscola (see module doc)."""
    n_trumps = 0
    trump_points = 0
    high = 0
    side_points = 0
    side_carichi = 0
    suits_held = 0
    for card in hand:
        s = card // 10
        suits_held |= 1 << s
        if s == suit:
            n_trumps += 1
            trump_points += CARD_POINTS[card]
            if card % 10 <= 4:
                high += 1
        else:
            side_points += CARD_POINTS[card]
            if card % 10 <= 1:
                side_carichi += 1
    voids = sum(1 for s in range(4) if s != suit and not suits_held >> s & 1)
    called_points = CARD_POINTS[called] if called is not None else 0
    called_strength = (10 - called % 10) / 10 if called is not None else 0.0
    return [
        1.0,
        float(n_trumps),
        float(trump_points),
        float(high),
        float(side_points),
        float(side_carichi),
        float(called_points),
        called_strength,
        float(voids),
    ]


def carichi_features(hand: tuple[int, ...] | list[int]) -> list[float]:
    """For a carichi (no trump, following compulsory): master cards win their tricks.

    A card is *master* if every stronger card of its suit is in the same hand (the Asso,
    the 3 with the Asso, ...). Other carichi are likely lost to whoever holds the master.
    """
    held = set(hand)
    masters = 0
    master_points = 0
    loose_points = 0
    for card in hand:
        base = card - card % 10
        if all(base + r in held for r in range(card % 10)):
            masters += 1
            master_points += CARD_POINTS[card]
        else:
            loose_points += CARD_POINTS[card]
    return [1.0, float(master_points), float(loose_points), float(masters)]


def _dot(coef: tuple[float, ...], feats: list[float]) -> float:
    return sum(c * f for c, f in zip(coef, feats, strict=True))


def expected_points(hand: tuple[int, ...] | list[int], suit: int, called: int | None) -> float:
    """Expected card points of the calling side; ``called=None`` or in hand means solo."""
    if called is None or called in hand:
        return _dot(SOLO_COEF, features(hand, suit, None))
    return _dot(TEAM_COEF, features(hand, suit, called))


def expected_carichi_points(hand: tuple[int, ...] | list[int]) -> float:
    return _dot(CARICHI_COEF, carichi_features(hand))


def p_reach(mean: float, sd: float, target: int) -> float:
    """P(points ≥ target) under a normal spread (points are integers: continuity +0.5)."""
    z = (mean - target + 0.5) / (sd * math.sqrt(2.0))
    return 0.5 * (1.0 + math.erf(z))


def contract_ev(
    p_win: float, points: int, solo: bool, players: int = 5, tie: bool = False
) -> float:
    """Expected score of the chiamante (R73–R74), cappotto ignored."""
    mult = bid_multiplier(points)
    unit = (players - 1) if solo else (players - 3)
    return (2.0 * p_win - 1.0) * unit * mult


def target_of(points: int, tie: bool) -> int:
    return 60 if tie and points == 61 else points
