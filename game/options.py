"""Table options (RULES.md §1) and the rule data derived from them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from game.cards import Card, Rank
from game.decks import DeckStyle

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

    @model_validator(mode="before")
    @classmethod
    def _default_players(cls, data: object) -> object:
        """§1: ``players`` defaults to 5 for chiamata and to 2 for plain Briscola."""
        if isinstance(data, dict) and "players" not in data and data.get("game") == "briscola":
            return {**data, "players": 2}
        return data

    @model_validator(mode="after")
    def _check_players(self) -> TableOptions:
        allowed = {"chiamata": (4, 5, 6), "briscola": (2, 3, 4)}[self.game]
        if self.players not in allowed:
            # R127: a clear refusal of a table size the game does not have.
            raise ValueError(f"players must be one of {allowed} for game={self.game}")
        return self

    @property
    def match_end_kind(self) -> Literal["target", "hands"]:
        return "target" if self.match_end.startswith("target") else "hands"

    @property
    def match_end_n(self) -> int:
        return int(self.match_end.split(":", 1)[1])

    @property
    def briscola_match_kind(self) -> Literal["wins", "rounds"]:
        return "wins" if self.briscola_match.startswith("wins") else "rounds"

    @property
    def briscola_match_n(self) -> int:
        return int(self.briscola_match.split(":", 1)[1])


GameKind = Literal["chiamata", "briscola"]


@dataclass(frozen=True, slots=True)
class Ruleset:
    """Everything that varies between the games and table sizes, as data.

    One engine reads these fields; there is no copy of the engine per game. The rank
    ladder (R2) and the card points (R3) are the same in every game and live in the card
    encoding of :mod:`game.cards`.
    """

    game: GameKind
    #: Seats at the table, il morto included (5 with ``players=4``).
    seats: int
    #: The seats people (or computers) play: every seat but the morto's.
    humans: int
    #: True with ``players=4`` of chiamata: one seat is il morto (§12).
    has_morto: bool
    deck: tuple[Card, ...]
    #: Cards each seat receives in the deal: all at once (chiamata) or 3 (briscola, R101).
    hand_size: int
    #: ``"all"``: the whole deck one card at a time (R13, R94); ``"stock"``: 3 each, a
    #: face-up briscola and drawing after each trick (R101, R105).
    deal: Literal["all", "stock"]
    tricks: int
    #: Ranks that may be named in a rank call, strongest first (R20 b, R95).
    bid_ranks: tuple[Rank, ...]
    #: Ranks in obbligato order, weakest first (R34, R95).
    obbligato_order: tuple[Rank, ...]
    #: The fixed sides of plain Briscola (R98): a side is a tuple of seats. Empty for
    #: chiamata, whose sides come from the auction.
    sides: tuple[tuple[int, ...], ...]
    #: R58 as chosen at the table (never in plain Briscola, R103).
    follow_suit: bool
    #: How a smazzata is scored: ``"contract"`` (§10, R92, R97) or ``"card_points"`` (R108,
    #: R109: a side wins the smazzata).
    scoring: Literal["contract", "card_points"]
    #: How plain Briscola decides a smazzata: ``"majority"`` (61 wins, 60-60 patta, R108)
    #: or ``"highest"`` (the strictly highest total, R109).
    smazzata_winner: Literal["majority", "highest"]

    @staticmethod
    def for_options(options: TableOptions) -> Ruleset:
        """The rule data of the options (every value of §1 is supported)."""
        if options.game == "briscola":
            return _briscola_rules(options.players)
        return _chiamata_rules(options.players, options.follow_suit)


# Both builders are cached: a Ruleset is immutable and a simulator starts many matches.
@cache
def _chiamata_rules(players: int, follow_suit: bool) -> Ruleset:
    has_morto = players == 4
    seats = 5 if has_morto else players
    removed = (Rank.QUATTRO,) if players == 6 else ()
    ranks = tuple(r for r in Rank if r not in removed)
    deck = tuple(c for c in range(40) if Rank(c % 10) not in removed)
    hand = len(deck) // seats
    return Ruleset(
        game="chiamata",
        seats=seats,
        humans=seats - 1 if has_morto else seats,
        has_morto=has_morto,
        deck=deck,
        hand_size=hand,
        deal="all",
        tricks=hand,
        bid_ranks=tuple(r for r in ranks if r != Rank.DUE),
        obbligato_order=tuple(reversed(ranks)),
        sides=(),
        follow_suit=follow_suit,
        scoring="contract",
        smazzata_winner="majority",
    )


#: R99: with three players the 2 di Bastoni leaves the deck.
_TWO_OF_BASTONI = 3 * 10 + int(Rank.DUE)


@cache
def _briscola_rules(players: int) -> Ruleset:
    deck = tuple(c for c in range(40) if not (players == 3 and c == _TWO_OF_BASTONI))
    sides = ((0, 2), (1, 3)) if players == 4 else tuple((s,) for s in range(players))
    return Ruleset(
        game="briscola",
        seats=players,
        humans=players,
        has_morto=False,
        deck=deck,
        hand_size=3,
        deal="stock",
        tricks=len(deck) // players,
        bid_ranks=(),
        obbligato_order=(),
        sides=sides,
        follow_suit=False,
        scoring="card_points",
        smazzata_winner="highest" if players == 3 else "majority",
    )
