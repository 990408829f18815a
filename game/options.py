"""Table options (RULES.md §1) and the rule data derived from them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from game.cards import Card, Rank
from game.decks import DeckStyle
from game.errors import UnsupportedOption

_MATCH_END_RE = re.compile(r"^(target|hands):([1-9][0-9]{0,3})$")
_BRISCOLA_MATCH_RE = re.compile(r"^(wins|rounds):([1-9][0-9]{0,2})$")


class TableOptions(BaseModel):
    """Every option of RULES.md §1 with its default. Immutable; fixed for a match.

    Booleans accept ``on``/``off`` as well as ``true``/``false``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    game: Literal["chiamata", "briscola"] = "chiamata"
    players: int = 5
    deck_style: DeckStyle = DeckStyle.NAPOLETANE
    direction: Literal["antiorario", "orario"] = "antiorario"
    monte: bool = False
    chiamata_obbligata: bool = True
    a_carichi: bool = False
    al_buio: bool = False
    in_mano: bool = True
    follow_suit: bool = False
    tie_goes_to_caller: bool = False
    cappotto: Literal["double", "off"] = "double"
    match_end: str = "target:11"
    winners: Literal["top", "seed000"] = "top"
    a_punti: bool = False
    briscola_match: str = "wins:2"

    @field_validator("match_end")
    @classmethod
    def _check_match_end(cls, value: str) -> str:
        if not _MATCH_END_RE.match(value):
            raise ValueError("match_end must be 'target:N' or 'hands:N' with 1 <= N <= 9999")
        return value

    @field_validator("briscola_match")
    @classmethod
    def _check_briscola_match(cls, value: str) -> str:
        if not _BRISCOLA_MATCH_RE.match(value):
            raise ValueError("briscola_match must be 'wins:N' or 'rounds:N' with 1 <= N <= 999")
        return value

    @model_validator(mode="after")
    def _check_players(self) -> TableOptions:
        allowed = {"chiamata": (4, 5, 6), "briscola": (2, 3, 4)}[self.game]
        if self.players not in allowed:
            raise ValueError(f"players must be one of {allowed} for game={self.game}")
        return self

    @property
    def match_end_kind(self) -> Literal["target", "hands"]:
        return "target" if self.match_end.startswith("target") else "hands"

    @property
    def match_end_n(self) -> int:
        return int(self.match_end.split(":", 1)[1])


@dataclass(frozen=True, slots=True)
class Ruleset:
    """The numbers that vary with the variant, as data (not scattered constants)."""

    seats: int
    deck: tuple[Card, ...]
    hand_size: int
    tricks: int
    #: Ranks that may be named in a rank call, strongest first (R20 b, R95).
    bid_ranks: tuple[Rank, ...]
    #: Ranks in obbligato order, weakest first (R34, R95).
    obbligato_order: tuple[Rank, ...]

    @staticmethod
    def for_options(options: TableOptions) -> Ruleset:
        """The ruleset of the options; raises :class:`UnsupportedOption` for later variants."""
        if options.game != "chiamata":
            raise UnsupportedOption("game=briscola is not supported yet")
        if options.players != 5:
            raise UnsupportedOption(f"players={options.players} is not supported yet")
        if options.a_punti:
            raise UnsupportedOption("a_punti=on is not supported yet")
        removed = (Rank.QUATTRO,) if options.players == 6 else ()
        ranks = tuple(r for r in Rank if r not in removed)
        deck = tuple(c for c in range(40) if Rank(c % 10) not in removed)
        hand = len(deck) // options.players
        return Ruleset(
            seats=options.players,
            deck=deck,
            hand_size=hand,
            tricks=hand,
            bid_ranks=tuple(r for r in ranks if r != Rank.DUE),
            obbligato_order=tuple(reversed(ranks)),
        )
