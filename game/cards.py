"""Cards of the 40-card Italian deck (R1–R6).

A card is a small ``int``: ``suit * 10 + rank_index`` where ``rank_index`` follows the
strength order of R2 (0 = Asso, the strongest, … 9 = 2, the weakest). Ints keep the hot
paths (legal actions, trick winner) cheap; every public surface uses the short codes of
R6 (``"Ad"``, ``"Cs"``, ``"2b"``) through :func:`card_code` and :func:`parse_card`.
Who takes a trick is :mod:`game.tricks` (compiled with the computer players;
:func:`trick_winner_index` is re-exported here).
"""

from __future__ import annotations

from enum import IntEnum
from typing import Final

from game.tricks import trick_winner_index as trick_winner_index  # (R59: game.tricks)


class Suit(IntEnum):
    """The four suits, internally always the Italian ones (R5)."""

    COPPE = 0
    DENARI = 1
    SPADE = 2
    BASTONI = 3

    @property
    def code(self) -> str:
        return SUIT_CODES[self]


class Rank(IntEnum):
    """Ranks in strength order (R2): a lower value is a stronger card."""

    ASSO = 0
    TRE = 1
    RE = 2
    CAVALLO = 3
    FANTE = 4
    SETTE = 5
    SEI = 6
    CINQUE = 7
    QUATTRO = 8
    DUE = 9

    @property
    def code(self) -> str:
        return RANK_CODES[self]

    @property
    def points(self) -> int:
        return RANK_POINTS[self]

    @property
    def strength(self) -> int:
        """10 for the Asso down to 1 for the 2 (R2 reference table)."""
        return 10 - int(self)


Card = int
"""A card: ``suit * 10 + rank``; see the module docstring."""

SUIT_CODES: Final = ("c", "d", "s", "b")
RANK_CODES: Final = ("A", "3", "R", "C", "F", "7", "6", "5", "4", "2")
RANK_POINTS: Final = (11, 10, 4, 3, 2, 0, 0, 0, 0, 0)
ALL_SUITS: Final = tuple(Suit)
ALL_RANKS: Final = tuple(Rank)

ALL_CARDS: Final[tuple[Card, ...]] = tuple(range(40))
CARD_SUIT: Final[tuple[int, ...]] = tuple(c // 10 for c in ALL_CARDS)
CARD_RANK: Final[tuple[int, ...]] = tuple(c % 10 for c in ALL_CARDS)
CARD_POINTS: Final[tuple[int, ...]] = tuple(RANK_POINTS[c % 10] for c in ALL_CARDS)
CARD_CODES: Final[tuple[str, ...]] = tuple(
    RANK_CODES[c % 10] + SUIT_CODES[c // 10] for c in ALL_CARDS
)
_CODE_TO_CARD: Final = {code: card for card, code in enumerate(CARD_CODES)}
_RANK_BY_CODE: Final = {code: Rank(i) for i, code in enumerate(RANK_CODES)}
_SUIT_BY_CODE: Final = {code: Suit(i) for i, code in enumerate(SUIT_CODES)}

TOTAL_POINTS: Final = 120


def make_card(rank: Rank | int, suit: Suit | int) -> Card:
    return int(suit) * 10 + int(rank)


def suit_of(card: Card) -> Suit:
    return Suit(card // 10)


def rank_of(card: Card) -> Rank:
    return Rank(card % 10)


def card_points(card: Card) -> int:
    return CARD_POINTS[card]


def category(card: Card) -> str:
    """R4: ``"carico"`` (Asso, 3), ``"figura"`` (Re, Cavallo, Fante) or ``"liscio"``."""
    rank = card % 10
    if rank <= 1:
        return "carico"
    return "figura" if rank <= 4 else "liscio"


def card_code(card: Card) -> str:
    return CARD_CODES[card]


def parse_card(code: str) -> Card:
    """``"Ad"`` -> the Asso di Denari. Raises ``ValueError`` on anything else."""
    try:
        return _CODE_TO_CARD[code]
    except KeyError:
        raise ValueError(f"not a card code: {code!r}") from None


def parse_rank(code: str) -> Rank:
    try:
        return _RANK_BY_CODE[code]
    except KeyError:
        raise ValueError(f"not a rank code: {code!r}") from None


def parse_suit(code: str) -> Suit:
    try:
        return _SUIT_BY_CODE[code]
    except KeyError:
        raise ValueError(f"not a suit code: {code!r}") from None


def hand_points(cards: list[Card] | tuple[Card, ...]) -> int:
    return sum(CARD_POINTS[c] for c in cards)


def sort_hand(cards: list[Card] | tuple[Card, ...]) -> list[Card]:
    """Display order: by suit, strongest first within a suit."""
    return sorted(cards)
