"""Which pictures draw each deck style of ``game/decks.py`` (display only, never a rule)."""

from __future__ import annotations

from game.decks import DeckStyle

#: The folders of ``static/cards/`` (see its PROVENANCE.md).
PICTURES: dict[DeckStyle, str] = {
    DeckStyle.NAPOLETANE: "napoletane",
    DeckStyle.PIACENTINE: "piacentine",
    DeckStyle.BERGAMASCHE: "bergamasche",
    DeckStyle.FRANCESI: "francesi",
    # no scan of their own: the nearest deck of the same suit family
    DeckStyle.SICILIANE: "napoletane",
    DeckStyle.SARDE: "napoletane",
    DeckStyle.TREVISANE: "piacentine",
    DeckStyle.ROMAGNOLE: "piacentine",
    DeckStyle.TOSCANE: "francesi",
    DeckStyle.GENOVESI: "francesi",
    DeckStyle.MILANESI: "francesi",
    DeckStyle.PIEMONTESI: "francesi",
}


def pictures_of(style: DeckStyle | str) -> str:
    """The folder of card pictures for a table's deck style."""
    return PICTURES[DeckStyle(style)]
