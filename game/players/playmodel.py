"""Two-player Briscola: how likely a player is to play each card of its hand.

A conditional-logit (softmax) model over the hand: P(card | hand, context) =
exp(θ·f(card)) / Σ over the hand's cards of exp(θ·f(card')). The features ``f`` read
only what the player knows when it plays: its hand, the card led (when it follows),
the briscola, the cards it has not seen and how many cards are left to draw. Leading
and following have separate features (``LEAD`` and ``FOLLOW``), listed in
:data:`FEATURES`; one of them is whether the card is the rule-based player's
(:func:`game.players.briscola.choose_card`), so the model is at least as good as the
old "rule-based card with probability 0.9" one wherever that one fits.

``THETA`` was fitted by maximum likelihood on the plays of games between a mix of
players (``esperto``, ``forte``, ``normale`` and ``campione``), each player's plays
weighted alike: ``python -m game.players.playfit`` (its docstring has the seed and the
command). :class:`game.players.champion.OpponentModel` reads the opponent's plays with
it.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

from game.cards import CARD_POINTS
from game.players import briscola
from game.tricks import trick_winner_index

#: The features' names, in θ's order: leading first, then following.
LEAD = (
    "lead trump",
    "lead trump power",
    "lead plain points",
    "lead trump points",
    "lead plain carico",
    "lead points at risk",
    "lead plain master",
    "lead plain liscio",
    "lead stage x points",
    "lead stage x trump",
    "lead rule-based card",
)
FOLLOW = (
    "follow wins",
    "follow wins x points led",
    "follow wins with a trump",
    "follow wins x trump power",
    "follow cheapest winner",
    "follow plain points thrown",
    "follow trump not winning",
    "follow same suit",
    "follow points",
    "follow wins x own points",
    "follow stage x wins with a trump",
    "follow points led x trump",
    "follow trump points",
    "follow plain liscio",
    "follow rule-based card",
)
FEATURES = LEAD + FOLLOW
_F = len(LEAD)

#: θ, fitted by ``python -m game.players.playfit`` (see its docstring).
THETA: tuple[float, ...] = (
    -1.241917,
    -0.653366,
    -0.336600,
    1.416346,
    -0.083423,
    -0.839568,
    0.143787,
    -0.592768,
    -1.603622,
    0.957841,
    0.685502,
    -0.440789,
    3.538503,
    -1.614378,
    0.406688,
    -0.158417,
    -2.282157,
    -1.045002,
    -0.081230,
    -1.540558,
    3.020002,
    0.908589,
    -0.174708,
    -1.571336,
    -0.383993,
    0.623574,
)
#: :func:`digest` of ``THETA``, as the fitting tool printed it.
THETA_DIGEST = "bbf79900251c042aedde7785933e0df85335f5b86ea5b88371c4d67f4dfe8597"

#: The ten cards of suit 0 as a bit mask.
_SUIT = (1 << 10) - 1
#: Cards in the stock before the first trick of two-player Briscola (R105).
STOCK_2P = 34


def digest(theta: Sequence[float]) -> str:
    """sha256 of θ as printed with 6 decimals: a fitted θ's fingerprint."""
    text = ",".join(f"{t:.6f}" for t in theta)
    return hashlib.sha256(text.encode()).hexdigest()


def stock_before(trick_index: int) -> int:
    """Two players: cards left to draw when trick ``trick_index`` (0-based) is played."""
    return max(0, STOCK_2P - 2 * trick_index)


def _power(card: int) -> float:
    # Asso 1.0 … 2 0.0
    return (9 - card % 10) / 9.0


def features(
    card: int,
    hand: Sequence[int],
    trick: Sequence[int],
    trump: int,
    unseen: int,
    stock: int,
    pick: int,
    takers: int = -1,
) -> list[tuple[int, float]]:
    """The non-zero features of playing ``card`` from ``hand`` (index into
    :data:`FEATURES`, value). ``trick``: the cards already on the table (empty when
    leading); ``unseen``: the cards the player has not seen, as a bit mask; ``stock``:
    cards left to draw; ``pick``: the rule-based player's card for this hand;
    ``takers``: the hand's cards that would take the trick (:func:`takers`; computed
    when not given)."""
    points = CARD_POINTS[card] / 11.0
    is_trump = card // 10 == trump
    stage = stock / STOCK_2P
    out: list[tuple[int, float]] = []
    if not trick:
        if is_trump:
            out.append((0, 1.0))
            out.append((1, _power(card)))
            out.append((3, points))
            out.append((9, stage))
        else:
            out.append((2, points))
            if card % 10 <= 1:
                out.append((4, 1.0))
            if points == 0.0:
                out.append((7, 1.0))
        # the unseen cards that would take it as a lead
        suit = card // 10
        beaten = (unseen & (((1 << card % 10) - 1) << 10 * suit)).bit_count()
        if not is_trump:
            beaten += (unseen & (_SUIT << 10 * trump)).bit_count()
        total = unseen.bit_count()
        risk = beaten / total if total else 0.0
        if points:
            out.append((5, risk * points))
            out.append((8, stage * points))
        if not is_trump and beaten == 0:
            out.append((6, 1.0))
        if card == pick:
            out.append((10, 1.0))
        return out
    if takers < 0:
        takers = _takers(hand, trick, trump)
    wins = takers >> card & 1 == 1
    led = sum(CARD_POINTS[c] for c in trick) / 11.0
    if wins:
        out.append((_F + 0, 1.0))
        if led:
            out.append((_F + 1, led))
        if is_trump:
            out.append((_F + 2, 1.0))
            out.append((_F + 3, _power(card)))
            if stage:
                out.append((_F + 10, stage))
        cheaper = any(
            o != card and takers >> o & 1 == 1 and _cost(o, trump) < _cost(card, trump)
            for o in hand
        )
        if not cheaper:
            out.append((_F + 4, 1.0))
        if points:
            out.append((_F + 9, points))
    else:
        if not is_trump and points:
            out.append((_F + 5, points))
        if is_trump:
            out.append((_F + 6, 1.0))
    if card // 10 == trick[0] // 10 and trick[0] // 10 != trump:
        out.append((_F + 7, 1.0))
    if points:
        out.append((_F + 8, points))
    if is_trump:
        if led:
            out.append((_F + 11, led))
        if points:
            out.append((_F + 12, points))
    elif not points:
        out.append((_F + 13, 1.0))
    if card == pick:
        out.append((_F + 14, 1.0))
    return out


def _takers(hand: Sequence[int], trick: Sequence[int], trump: int) -> int:
    """The cards of ``hand`` that would take ``trick`` (a bit mask)."""
    mask = 0
    for card in hand:
        if trick_winner_index([*trick, card], trump) == len(trick):
            mask |= 1 << card
    return mask


def _cost(card: int, trump: int) -> tuple[bool, int, int]:
    """What taking with ``card`` gives up: a trump, then points, then strength."""
    return (card // 10 == trump, CARD_POINTS[card], -(card % 10))


def probabilities(
    hand: Sequence[int],
    trick: Sequence[int],
    trump: int,
    unseen: int,
    stock: int,
    theta: Sequence[float] = THETA,
) -> list[float]:
    """The model's chance of each card of ``hand`` (in its order) for a player of two-
    player Briscola who holds ``hand``, has not seen the cards of ``unseen`` (a bit
    mask) and plays after ``trick`` with ``stock`` cards left to draw."""
    pick = briscola.choose_card(hand, trick, 0, 0 if not trick else 1, 2, trump, None)
    takers = _takers(hand, trick, trump) if trick else 0
    rows = [features(card, hand, trick, trump, unseen, stock, pick, takers) for card in hand]
    return softmax(rows, theta)


def softmax(rows: Sequence[Sequence[tuple[int, float]]], theta: Sequence[float]) -> list[float]:
    """Each card's chance from its sparse features ``rows`` (:func:`features`)."""
    scores = [sum(theta[i] * v for i, v in row) for row in rows]
    top = max(scores)
    weights = [math.exp(s - top) for s in scores]
    total = sum(weights)
    return [w / total for w in weights]


__all__ = [
    "FEATURES",
    "THETA",
    "THETA_DIGEST",
    "digest",
    "features",
    "probabilities",
    "softmax",
    "stock_before",
]
