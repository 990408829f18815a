"""Deck styles (R5): display metadata only, never a rule."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from functools import cache

from game.cards import Card, Rank, Suit


class DeckStyle(StrEnum):
    NAPOLETANE = "napoletane"
    PIACENTINE = "piacentine"
    SICILIANE = "siciliane"
    TREVISANE = "trevisane"
    BERGAMASCHE = "bergamasche"
    ROMAGNOLE = "romagnole"
    SARDE = "sarde"
    FRANCESI = "francesi"
    TOSCANE = "toscane"
    GENOVESI = "genovesi"
    MILANESI = "milanesi"
    PIEMONTESI = "piemontesi"


FRENCH_STYLES = frozenset(
    {
        DeckStyle.FRANCESI,
        DeckStyle.TOSCANE,
        DeckStyle.GENOVESI,
        DeckStyle.MILANESI,
        DeckStyle.PIEMONTESI,
    }
)


@dataclass(frozen=True, slots=True)
class DeckFace:
    """How a deck style names and draws suits and ranks (Italian names, as on the cards)."""

    style: DeckStyle
    french: bool
    suit_names: tuple[str, str, str, str]
    suit_symbols: tuple[str, str, str, str]
    rank_names: tuple[str, ...]
    rank_short: tuple[str, ...]

    def card_label(self, card: Card) -> str:
        """Short label such as ``"A🪙"`` or ``"K♥"`` for buttons."""
        return self.rank_short[card % 10] + self.suit_symbols[card // 10]

    def card_name(self, card: Card) -> str:
        """Long Italian name such as ``"Asso di Denari"``."""
        return f"{self.rank_names[card % 10]} di {self.suit_names[card // 10]}"

    def suit_name(self, suit: Suit | int) -> str:
        return self.suit_names[int(suit)]

    def rank_name(self, rank: Rank | int) -> str:
        return self.rank_names[int(rank)]


_ITALIAN_RANKS = (
    "Asso",
    "Tre",
    "Re",
    "Cavallo",
    "Fante",
    "Sette",
    "Sei",
    "Cinque",
    "Quattro",
    "Due",
)
_ITALIAN_SHORT = ("A", "3", "R", "C", "F", "7", "6", "5", "4", "2")
_FRENCH_RANKS = ("Asso", "Tre", "Re", "Donna", "Fante", "Sette", "Sei", "Cinque", "Quattro", "Due")
_FRENCH_SHORT = ("A", "3", "K", "Q", "J", "7", "6", "5", "4", "2")

_ITALIAN_SUITS = ("Coppe", "Denari", "Spade", "Bastoni")
_ITALIAN_SYMBOLS = ("🏆", "🪙", "🗡", "🪵")
# R5: Coppe -> Cuori, Denari -> Quadri, Spade -> Picche, Bastoni -> Fiori.
_FRENCH_SUITS = ("Cuori", "Quadri", "Picche", "Fiori")
_FRENCH_SYMBOLS = ("♥", "♦", "♠", "♣")


@cache
def deck_face(style: DeckStyle | str) -> DeckFace:
    """The names and symbols of a deck style (one immutable face per style: cached, as
    every card text asks for it)."""
    style = DeckStyle(style)
    if style in FRENCH_STYLES:
        return DeckFace(style, True, _FRENCH_SUITS, _FRENCH_SYMBOLS, _FRENCH_RANKS, _FRENCH_SHORT)
    return DeckFace(style, False, _ITALIAN_SUITS, _ITALIAN_SYMBOLS, _ITALIAN_RANKS, _ITALIAN_SHORT)
