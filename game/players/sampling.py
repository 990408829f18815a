"""Determinisation: deal the cards a seat cannot see, consistently with its view.

A sampled world must agree with everything public and with the seat's own hand:

* the seat's hand is its own; every other seat gets exactly ``hand_sizes[s]`` unseen
  cards; cards already played stay played;
* a seat that failed to follow the led suit while following was compulsory holds no
  card of that suit (voids are proven only then, R58/R42);
* the called card, while unplayed and not in the seat's own hand, goes to a seat that
  may hold it: never the chiamante of an obbligato contract (R38) or when in mano is
  off (R50), never a seat void in trumps;
* an obbligato contract tells everyone, once the suit is known, that the chiamante was
  dealt the 2 of trumps and every rank below the called one (R34, R48); an obbligato
  *bid* tells the same about some suit of the bidder (which one stays secret, R36), and
  that the bidder lacks the card of the bid rank in that suit;
* under al buio, before trick 1 is complete, a seat other than the chiamante does not
  know the suit (R52): it is sampled among the suits compatible with the above.

The socio is whoever holds the called card in the sampled world. Sampling is
most-constrained-card-first with seats chosen in proportion to their free room, with
random restarts and an exhaustive backtracking fallback, so it never fails on a
consistent view.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from game.cards import RANK_CODES
from game.players import draws
from game.players.common import OBBLIGATO_ORDER, cards_of
from game.players.knowledge import (
    absent_mask,
    captured_points,
    follow_in_force,
    known_voids,
    played_mask,
    tricks_total,
    unseen_mask,
)
from game.players.sim import World
from game.view import View


class InconsistentView(Exception):
    """No deal fits the view (a bug in the caller or in the constraints)."""


@dataclass(frozen=True, slots=True)
class Deal:
    """A sampled deal: the current hands and, when a suit is involved, the trump."""

    hands: tuple[tuple[int, ...], ...]
    trump: int | None
    called: int | None


def obbligato_cards(suit: int, rank: int) -> list[int]:
    """Cards the maker of "rank obbligato" in ``suit`` was dealt: the 2 and every rank
    below ``rank`` in the obbligato order (R34)."""
    result = []
    for r in OBBLIGATO_ORDER:
        if r == rank:
            break
        result.append(suit * 10 + r)
    return result


def _obbligato_bids(view: View) -> list[tuple[int, int]]:
    """(seat, rank) of every obbligato bid in the auction log."""
    result = []
    for seat, code in view.auction:
        if code.startswith("o"):
            rank = RANK_CODES.index(code[1 : code.index(".")])
            if (seat, rank) not in result:
                result.append((seat, rank))
    return result


def _rank_calls(view: View, me: int) -> list[tuple[int, int]]:
    """(seat, rank) of every rank call and 2-call by another seat (R30 applies to them)."""
    result = []
    for seat, code in view.auction:
        if seat == me:
            continue
        if code.startswith("r"):
            rank = RANK_CODES.index(code[1:])
        elif code.startswith("t"):
            rank = 9
        else:
            continue
        if (seat, rank) not in result:
            result.append((seat, rank))
    return result


def _apply_rank_calls(
    calls: list[tuple[int, int]],
    allowed: dict[int, int],
    played_by: dict[int, int],
    rng: random.Random,
) -> bool:
    """R30 (in mano off): who called rank r was not dealt all four cards of rank r."""
    for seat, rank in calls:
        four = [suit * 10 + rank for suit in range(4)]
        if any(c not in allowed and played_by.get(c, -1) != seat for c in four):
            continue  # one of them is elsewhere (the viewer's hand, or played by another)
        if any(c in allowed and not allowed[c] >> seat & 1 for c in four):
            continue  # one of them cannot be with this seat anyway
        # keep out a card that some other seat may hold (a forced card cannot move)
        free = [c for c in four if c in allowed and allowed[c] & ~(1 << seat)]
        if not free:
            return False
        card = free[draws.below(rng, len(free))]
        allowed[card] &= ~(1 << seat)
    return True


def _assign(
    cards: list[int],
    allowed: dict[int, int],
    need: list[int],
    rng: random.Random,
    tries: int = 40,
) -> list[list[int]] | None:
    """Give every card to a seat in ``allowed[card]`` (seat bitmask) filling ``need``."""
    n = len(need)
    order = list(cards)
    for _ in range(tries):
        draws.shuffle(rng, order)
        order.sort(key=lambda c: allowed[c].bit_count())
        cap = list(need)
        hands: list[list[int]] = [[] for _ in range(n)]
        ok = True
        for card in order:
            mask = allowed[card]
            total = 0
            for s in range(n):
                if mask >> s & 1:
                    total += cap[s]
            if total == 0:
                ok = False
                break
            pick = draws.below(rng, total)
            for s in range(n):
                if mask >> s & 1 and cap[s]:
                    if pick < cap[s]:
                        hands[s].append(card)
                        cap[s] -= 1
                        break
                    pick -= cap[s]
        if ok:
            return hands
    return _backtrack(order, allowed, need, rng)


def _backtrack(
    cards: list[int], allowed: dict[int, int], need: list[int], rng: random.Random
) -> list[list[int]] | None:
    n = len(need)
    order = sorted(cards, key=lambda c: allowed[c].bit_count())
    cap = list(need)
    hands: list[list[int]] = [[] for _ in range(n)]

    def go(i: int) -> bool:
        if i == len(order):
            return True
        card = order[i]
        seats = [s for s in range(n) if allowed[card] >> s & 1 and cap[s]]
        draws.shuffle(rng, seats)
        for s in seats:
            cap[s] -= 1
            hands[s].append(card)
            if go(i + 1):
                return True
            hands[s].pop()
            cap[s] += 1
        return False

    return hands if go(0) else None


def _called_candidates(view: View, me: int, suit: int | None) -> set[int]:
    """Seats other than ``me`` that may hold the unplayed called card of ``suit``."""
    n = view.players
    chiamante = view.chiamante
    options = view.options
    seats = {s for s in range(n) if s != me and view.hand_sizes[s] > 0}
    if chiamante is not None and (
        view.contract == "obbligato" or not options.in_mano or chiamante == me
    ):
        seats.discard(chiamante)
    if me == chiamante and view.solo:
        return set()
    return seats


class Sampler:
    """Deals the unseen cards of one view, many times (the view's facts computed once)."""

    def __init__(self, view: View) -> None:
        me = view.seat
        if me is None:
            raise ValueError("a spectator view has no hand to complete")
        self.view = view
        self.me = me
        n = view.players
        self.unseen = cards_of(unseen_mask(view))
        self.played = played_mask(view)
        self.need = [0 if s == me else view.hand_sizes[s] for s in range(n)]
        self.voids = known_voids(view)
        others = 0
        for s in range(n):
            if s != me:
                others |= 1 << s
        base: dict[int, int] = {}
        for card in self.unseen:
            mask = others
            for s in range(n):
                if self.voids[s] >> (card // 10) & 1:
                    mask &= ~(1 << s)
            base[card] = mask
        self.base_allowed = base
        self.played_by = {c: s for s, cards in enumerate(view.played) for c in cards}
        self.hand = set(view.hand)
        contract = view.contract
        rank = view.contract_rank
        card_contract = contract is not None and contract != "carichi" and rank is not None
        self.suits: list[int | None]
        if not card_contract or view.phase == "declaration":
            self.suits = [None]
        elif view.trump is not None:
            self.suits = [view.trump]
        else:
            self.suits = [0, 1, 2, 3]
        self.bids = [(s, r) for s, r in _obbligato_bids(view) if s != me]
        self.rank_calls = [] if view.options.in_mano else _rank_calls(view, me)
        # the play-phase facts shared by every world
        self.captured = captured_points(view) if view.phase == "play" else [0] * n
        self.world_voids = self.voids if follow_in_force(view) else [0] * n

    def deal(self, rng: random.Random) -> Deal:
        """One random deal consistent with the view (see the module docstring)."""
        view, me = self.view, self.me
        suits = list(self.suits)
        if len(suits) > 1:
            draws.shuffle(rng, suits)
        rank = view.contract_rank
        for _attempt in range(30):
            for suit in suits:
                allowed = dict(self.base_allowed)
                if not _apply_contract(
                    view, me, suit, allowed, self.played_by, self.hand, self.played
                ):
                    continue
                if not _apply_bids(view, self.bids, suit, allowed, self.played_by, self.hand, rng):
                    continue
                if not _apply_rank_calls(self.rank_calls, allowed, self.played_by, rng):
                    continue
                if any(mask == 0 for mask in allowed.values()):
                    continue
                hands = _assign(self.unseen, allowed, self.need, rng)
                if hands is None:
                    continue
                hands[me] = list(view.hand)
                if view.morto is not None:
                    # il morto's cards are turned over in deal order (R90), which nobody
                    # has seen: any order of its unseen cards is as likely
                    draws.shuffle(rng, hands[view.morto])
                called = None
                if suit is not None and rank is not None:
                    called = suit * 10 + rank
                return Deal(tuple(tuple(h) for h in hands), suit, called)
            if not self.bids and not self.rank_calls and len(suits) == 1:
                break
        raise InconsistentView(f"no deal fits the view of seat {me}")

    def world(self, rng: random.Random) -> World:
        """A random play-phase world consistent with the view."""
        return self.world_of(self.deal(rng))

    def world_of(self, deal: Deal) -> World:
        """The play-phase :class:`World` of a sampled deal (the view must be in play)."""
        view = self.view
        n = view.players
        chiamante = view.chiamante
        assert chiamante is not None and view.contract is not None
        called = deal.called
        socio: int | None = None
        if called is not None:
            holder = None
            for s in range(n):
                if called in deal.hands[s] or called in view.played[s]:
                    holder = s
                    break
            assert holder is not None
            socio = None if holder == chiamante else holder
        return World(
            hands=[list(h) for h in deal.hands],
            trump=deal.trump,
            trump_public=view.trump_public or view.contract == "carichi",
            al_buio=view.options.al_buio,
            chiamante=chiamante,
            socio=socio,
            called=called,
            revealed=view.partner_revealed,
            kind=view.contract,
            points=view.contract_points or 61,
            follow_suit=view.options.follow_suit,
            tie=view.options.tie_goes_to_caller,
            cappotto=view.options.cappotto == "double",
            leader=view.leader,
            trick=[c for _, c in view.current_trick],
            trick_no=view.trick_no,
            captured=list(self.captured),
            played=self.played | absent_mask(view),  # the 4s with six players (R94)
            tricks_total=tricks_total(view),
            voids=list(self.world_voids),
            morto=view.morto,
        )


def sample_deal(view: View, rng: random.Random) -> Deal:
    """Deal the unseen cards of ``view`` at random, consistently with it (module doc)."""
    return Sampler(view).deal(rng)


def _apply_contract(
    view: View,
    me: int,
    suit: int | None,
    allowed: dict[int, int],
    played_by: dict[int, int],
    hand: set[int],
    played: int,
) -> bool:
    """Restrict ``allowed`` by the contract in ``suit``; False if the suit is impossible."""
    chiamante = view.chiamante
    rank = view.contract_rank
    if suit is None or chiamante is None or rank is None:
        return True
    called = suit * 10 + rank
    holder_must_not_be_chiamante = view.contract == "obbligato" or not view.options.in_mano
    if called in allowed:
        candidates = _called_candidates(view, me, suit)
        mask = 0
        for s in candidates:
            mask |= 1 << s
        allowed[called] &= mask
    elif played >> called & 1:
        if holder_must_not_be_chiamante and played_by.get(called) == chiamante:
            return False
    elif called in hand and me == chiamante and not view.solo:
        return False
    if view.contract == "obbligato":
        if chiamante == me:
            return True
        for card in obbligato_cards(suit, rank):
            if card in allowed:
                allowed[card] &= 1 << chiamante
            elif card in hand or played_by.get(card, chiamante) != chiamante:
                return False
    return True


def _apply_bids(
    view: View,
    bids: list[tuple[int, int]],
    contract_suit: int | None,
    allowed: dict[int, int],
    played_by: dict[int, int],
    hand: set[int],
    rng: random.Random,
) -> bool:
    """Each other seat's obbligato bid: it held the 2 and the lower ranks of some suit."""
    for seat, rank in bids:
        if (
            seat == view.chiamante
            and view.contract == "obbligato"
            and view.contract_rank == rank
            and contract_suit is not None
        ):
            continue  # the contract itself already fixed the suit
        options = []
        for suit in range(4):
            needed = obbligato_cards(suit, rank)
            ok = all(
                (card in allowed and allowed[card] >> seat & 1) or played_by.get(card, -1) == seat
                for card in needed
            )
            lacking = suit * 10 + rank
            if ok and played_by.get(lacking, -1) != seat:
                options.append(suit)
        if not options:
            return False
        suit = options[draws.below(rng, len(options))]
        for card in obbligato_cards(suit, rank):
            if card in allowed:
                allowed[card] &= 1 << seat
        lacking = suit * 10 + rank
        if lacking in allowed:
            allowed[lacking] &= ~(1 << seat)
    return True


def world_from_deal(view: View, deal: Deal) -> World:
    """The play-phase :class:`World` of a sampled deal (the view must be in play)."""
    return Sampler(view).world_of(deal)


def sample_world(view: View, rng: random.Random) -> World:
    """A random complete play-phase world consistent with ``view``."""
    return Sampler(view).world(rng)


__all__ = [
    "Deal",
    "InconsistentView",
    "Sampler",
    "obbligato_cards",
    "sample_deal",
    "sample_world",
    "world_from_deal",
]
