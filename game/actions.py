"""Typed player actions with stable short codes (fit for 64-byte callback data).

Every action is an interned frozen object: ``parse_action(a.code) is a`` and
``ACTIONS[a.id] is a``. The codes and ids never change meaning:

==============  ============  =============================================
action          code          meaning
==============  ============  =============================================
Pass            ``P``         passo / lascio (R20 a)
Monte           ``M``         mandare a monte (R16)
BidCarichi      ``K``         a carichi (R40)
BidRank         ``rA``        rank call, here the Asso (R20 b)
BidTwo          ``t61``       "2 a 61" … ``t120`` (R20 c)
BidObbligato    ``o5.65``     "5 obbligato a 65" (R20 d)
DeclareSuit     ``sd``        the chiamante names Denari (R47)
PlayCard        ``cAd``       play the Asso di Denari (R55)
BidPoints       ``n75``       a punti: the point call "75" (R44)
DeclareCard     ``dAd``       a punti: the chiamante names the Asso di Denari (R45)
==============  ============  =============================================

The a punti actions were added after the others, at the end of :data:`ACTIONS`, so every
older id keeps its meaning.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from game.cards import (
    CARD_CODES,
    RANK_CODES,
    SUIT_CODES,
    Card,
    Rank,
    Suit,
)
from game.errors import IllegalAction

MIN_POINTS: Final = 61
MAX_POINTS: Final = 120


@dataclass(frozen=True, slots=True)
class Action:
    """Base of all actions. ``code`` is the stable wire form, ``id`` a stable small int."""

    code: str = field(init=False, default="", compare=False)
    id: int = field(init=False, default=-1, compare=False)

    def __str__(self) -> str:
        return self.code


@dataclass(frozen=True, slots=True)
class Pass(Action):
    pass


@dataclass(frozen=True, slots=True)
class Monte(Action):
    pass


@dataclass(frozen=True, slots=True)
class BidCarichi(Action):
    pass


@dataclass(frozen=True, slots=True)
class BidRank(Action):
    rank: Rank = Rank.ASSO


@dataclass(frozen=True, slots=True)
class BidTwo(Action):
    points: int = MIN_POINTS


@dataclass(frozen=True, slots=True)
class BidObbligato(Action):
    rank: Rank = Rank.QUATTRO
    points: int = MIN_POINTS


@dataclass(frozen=True, slots=True)
class DeclareSuit(Action):
    suit: Suit = Suit.COPPE


@dataclass(frozen=True, slots=True)
class PlayCard(Action):
    card: Card = 0


@dataclass(frozen=True, slots=True)
class BidPoints(Action):
    points: int = MIN_POINTS


@dataclass(frozen=True, slots=True)
class DeclareCard(Action):
    card: Card = 0


def _code_of(action: Action) -> str:
    if isinstance(action, Pass):
        return "P"
    if isinstance(action, Monte):
        return "M"
    if isinstance(action, BidCarichi):
        return "K"
    if isinstance(action, BidRank):
        return "r" + RANK_CODES[action.rank]
    if isinstance(action, BidTwo):
        return f"t{action.points}"
    if isinstance(action, BidObbligato):
        return f"o{RANK_CODES[action.rank]}.{action.points}"
    if isinstance(action, DeclareSuit):
        return "s" + SUIT_CODES[action.suit]
    if isinstance(action, PlayCard):
        return "c" + CARD_CODES[action.card]
    if isinstance(action, BidPoints):
        return f"n{action.points}"
    if isinstance(action, DeclareCard):
        return "d" + CARD_CODES[action.card]
    raise TypeError(action)


def _intern(actions: list[Action]) -> tuple[Action, ...]:
    for index, action in enumerate(actions):
        object.__setattr__(action, "code", _code_of(action))
        object.__setattr__(action, "id", index)
    return tuple(actions)


_POINT_RANGE = range(MIN_POINTS, MAX_POINTS + 1)
_OBBLIGATO_RANKS = tuple(r for r in Rank if r not in (Rank.ASSO, Rank.DUE))

ACTIONS: Final[tuple[Action, ...]] = _intern(
    [Pass(), Monte(), BidCarichi()]
    + [BidRank(r) for r in Rank if r != Rank.DUE]
    + [BidTwo(n) for n in _POINT_RANGE]
    + [BidObbligato(r, n) for r in _OBBLIGATO_RANKS for n in _POINT_RANGE]
    + [DeclareSuit(s) for s in Suit]
    + [PlayCard(c) for c in range(40)]
    + [BidPoints(n) for n in _POINT_RANGE]
    + [DeclareCard(c) for c in range(40)]
)
_BY_CODE: Final = {a.code: a for a in ACTIONS}

PASS: Final = _BY_CODE["P"]
MONTE: Final = _BY_CODE["M"]
CARICHI: Final = _BY_CODE["K"]
#: RANK_BIDS[rank] (None for the 2, which is never a rank call).
RANK_BIDS: Final[tuple[Action | None, ...]] = tuple(_BY_CODE.get("r" + RANK_CODES[r]) for r in Rank)
#: TWO_BIDS[n] for 61 <= n <= 120; indexes below 61 hold nothing useful.
TWO_BIDS: Final[tuple[Action, ...]] = tuple(
    _BY_CODE[f"t{max(n, MIN_POINTS)}"] for n in range(MAX_POINTS + 1)
)
#: OBBLIGATO_BIDS[rank][n], same indexing as TWO_BIDS; empty for Asso and 2.
OBBLIGATO_BIDS: Final[tuple[tuple[Action, ...], ...]] = tuple(
    tuple(_BY_CODE[f"o{RANK_CODES[r]}.{max(n, MIN_POINTS)}"] for n in range(MAX_POINTS + 1))
    if r in _OBBLIGATO_RANKS
    else ()
    for r in Rank
)
DECLARE: Final[tuple[Action, ...]] = tuple(_BY_CODE["s" + SUIT_CODES[s]] for s in Suit)
PLAY: Final[tuple[Action, ...]] = tuple(_BY_CODE["c" + CARD_CODES[c]] for c in range(40))
#: POINT_BIDS[n] for 61 <= n <= 120 (a punti), same indexing as TWO_BIDS.
POINT_BIDS: Final[tuple[Action, ...]] = tuple(
    _BY_CODE[f"n{max(n, MIN_POINTS)}"] for n in range(MAX_POINTS + 1)
)
DECLARE_CARD: Final[tuple[Action, ...]] = tuple(_BY_CODE["d" + CARD_CODES[c]] for c in range(40))


def canonical(action: Action) -> Action:
    """The interned instance equal to ``action`` (for actions built by hand)."""
    if action.id >= 0:
        return action
    return _BY_CODE[_code_of(action)]


def parse_action(code: str) -> Action:
    """The action with this code; raises :class:`IllegalAction` (``unknown_action``)."""
    action = _BY_CODE.get(code)
    if action is None:
        raise IllegalAction("unknown_action", repr(code)[:40])
    return action


def action_from_id(action_id: int) -> Action:
    if 0 <= action_id < len(ACTIONS):
        return ACTIONS[action_id]
    raise IllegalAction("unknown_action", str(action_id))


def is_bid(action: Action) -> bool:
    """Calls (b)–(e) of R20 and R44's point calls: the auction but pass and monte."""
    return isinstance(action, BidRank | BidTwo | BidObbligato | BidCarichi | BidPoints)
