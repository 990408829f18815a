"""Frozen events: the history of a match. ``apply`` returns them; the UI renders them.

Events are immutable ``NamedTuple``s (cheap to build: the simulator makes ~100,000 a
second). Each carries a ``kind`` field, its stable JSON discriminator, so two events of
different kinds never compare equal. Cards are ints (:mod:`game.cards`), seats 0…P−1.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from game.options import TableOptions


class MatchStarted(NamedTuple):
    options: TableOptions
    first_dealer: int
    kind: Literal["match_started"] = "match_started"

    def visible_to(self, seat: int | None) -> bool:
        return True


class Dealt(NamedTuple):
    """A new smazzata: ``hands[s]`` is seat s's hand in deal order (R13). Secret."""

    smazzata: int
    dealer: int
    hands: tuple[tuple[int, ...], ...]
    kind: Literal["dealt"] = "dealt"

    def visible_to(self, seat: int | None) -> bool:
        # Each seat learns its own hand from view(); the event as a whole is for nobody.
        return False


class MonteDeclared(NamedTuple):
    seat: int
    kind: Literal["monte"] = "monte"

    def visible_to(self, seat: int | None) -> bool:
        return True


class Passed(NamedTuple):
    seat: int
    kind: Literal["passed"] = "passed"

    def visible_to(self, seat: int | None) -> bool:
        return True


class BidMade(NamedTuple):
    """A bid (R20 b–e). ``code`` is the action code; an obbligato bid hides its suit (R36)."""

    seat: int
    code: str
    kind: Literal["bid"] = "bid"

    def visible_to(self, seat: int | None) -> bool:
        return True


class AuctionWon(NamedTuple):
    """The auction is over (R31, R40). ``contract`` is one of rank/two/obbligato/carichi."""

    seat: int
    contract: Literal["rank", "two", "obbligato", "carichi"]
    rank: int | None
    points: int
    kind: Literal["auction_won"] = "auction_won"

    def visible_to(self, seat: int | None) -> bool:
        return True


class DealVoided(NamedTuple):
    reason: Literal["monte", "all_passed"]
    kind: Literal["voided"] = "voided"

    def visible_to(self, seat: int | None) -> bool:
        return True


class SuitDeclared(NamedTuple):
    """The chiamante names the suit (R47). Under al buio only the chiamante sees it (R52)."""

    seat: int
    suit: int
    called_card: int
    secret: bool
    kind: Literal["suit_declared"] = "suit_declared"

    def visible_to(self, seat: int | None) -> bool:
        return not self.secret or seat == self.seat


class TrumpRevealed(NamedTuple):
    """The briscola and the called card become public (at once, or after trick 1 al buio)."""

    suit: int
    called_card: int
    kind: Literal["trump_revealed"] = "trump_revealed"

    def visible_to(self, seat: int | None) -> bool:
        return True


class CardPlayed(NamedTuple):
    seat: int
    card: int
    trick: int
    kind: Literal["card_played"] = "card_played"

    def visible_to(self, seat: int | None) -> bool:
        return True


class PartnerRevealed(NamedTuple):
    """The called card was played (R61): ``seat`` is the socio, or the chiamante in mano."""

    seat: int
    in_mano: bool
    kind: Literal["partner_revealed"] = "partner_revealed"

    def visible_to(self, seat: int | None) -> bool:
        return True


class TrickWon(NamedTuple):
    trick: int
    seat: int
    leader: int
    cards: tuple[int, ...]
    points: int
    kind: Literal["trick_won"] = "trick_won"

    def visible_to(self, seat: int | None) -> bool:
        return True


class SmazzataScored(NamedTuple):
    """Everything R67 reveals at the end of a smazzata, and the score changes."""

    smazzata: int
    chiamante: int
    socio: int | None
    contract: Literal["rank", "two", "obbligato", "carichi"]
    rank: int | None
    points: int
    called_card: int | None
    trump: int | None
    in_mano: bool
    caller_points: int
    target: int
    won: bool
    multiplier: int
    cappotto: bool
    deltas: tuple[int, ...]
    totals: tuple[int, ...]
    kind: Literal["scored"] = "scored"

    def visible_to(self, seat: int | None) -> bool:
        return True


class MatchOver(NamedTuple):
    totals: tuple[int, ...]
    positions: tuple[int, ...]
    winners: tuple[int, ...]
    kind: Literal["match_over"] = "match_over"

    def visible_to(self, seat: int | None) -> bool:
        return True


Event = (
    MatchStarted
    | Dealt
    | MonteDeclared
    | Passed
    | BidMade
    | AuctionWon
    | DealVoided
    | SuitDeclared
    | TrumpRevealed
    | CardPlayed
    | PartnerRevealed
    | TrickWon
    | SmazzataScored
    | MatchOver
)
