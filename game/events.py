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


class MortoSeated(NamedTuple):
    """With ``players=4`` of chiamata: il morto's seat for the whole match (R86)."""

    seat: int
    kind: Literal["morto_seated"] = "morto_seated"

    def visible_to(self, seat: int | None) -> bool:
        return True


class StockLaid(NamedTuple):
    """Plain Briscola (R101, R119): the face-up briscola and the stock under it.

    ``stock`` is the draw order, the face-up card last. The event is secret as a whole
    (the stock order); the face-up card and the stock count reach everyone through views.
    """

    face_up: int
    stock: tuple[int, ...]
    kind: Literal["stock_laid"] = "stock_laid"

    def visible_to(self, seat: int | None) -> bool:
        return False


class CardsDrawn(NamedTuple):
    """Plain Briscola (R105, R120): after trick ``trick`` each seat draws, in this order.

    Each seat learns its own card from its view; who drew the face-up briscola is public
    (``View.face_up_holder``).
    """

    trick: int
    draws: tuple[tuple[int, int], ...]
    kind: Literal["cards_drawn"] = "cards_drawn"

    def visible_to(self, seat: int | None) -> bool:
        return False


class BriscolaScored(NamedTuple):
    """Plain Briscola: the end of a smazzata (R108, R109, R110).

    ``sides`` are the fixed sides (a seat each, or the pairs 0+2 and 1+3), ``points``
    each side's card points, ``winner`` the index of the side that won the smazzata (None
    for a patta), ``wins`` each side's smazzate won so far in the match.
    """

    smazzata: int
    sides: tuple[tuple[int, ...], ...]
    points: tuple[int, ...]
    winner: int | None
    wins: tuple[int, ...]
    kind: Literal["briscola_scored"] = "briscola_scored"

    def visible_to(self, seat: int | None) -> bool:
        return True


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
    """The auction is over (R31, R40). ``contract`` is one of rank/two/obbligato/carichi,
    or punti (R44: ``rank`` is None until the chiamante names the card, R45)."""

    seat: int
    contract: Literal["rank", "two", "obbligato", "carichi", "punti"]
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
    """A card played. ``automatic``: il morto played it by itself (R90, R113)."""

    seat: int
    card: int
    trick: int
    automatic: bool = False
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
    contract: Literal["rank", "two", "obbligato", "carichi", "punti"]
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
    """The match is over. Per seat: ``totals`` (score, or smazzate won by the seat's side
    in plain Briscola), ``positions`` (R82; 0 for il morto, who is not ranked, R93)."""

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
    | MortoSeated
    | StockLaid
    | CardsDrawn
    | BriscolaScored
)
