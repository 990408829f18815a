"""Inference by the learned policy (issue 49): how likely the network finds the
opponent's plays of the smazzata from the hand it holds in a sampled world.

Two-player Briscola. ``campione`` weights the deals it samples by how likely the
opponent's plays are from the hand the opponent holds in each deal
(:class:`game.players.opponent.OpponentModel`: a fitted play model and the rule-based
card). :class:`NetOpponent` adds a third kind of opponent: one that plays as the
network of :mod:`game.players.net` says (its policy head, masked to the hand's cards).
The network was trained on the search levels' play (``esperto`` in every seat of
two-player Briscola among them, ``NET-MANIFEST.md``), so it is a model of the players
``campione`` meets.

*What the network reads.* For each of the opponent's plays, the opponent's own view at
that moment is rebuilt from the public record (:func:`past_view`: the tricks before it,
the trick on the table, the stock, who drew the face-up card), with the hand that the
deal gives it then. Only the hand is hidden; it is the only thing that changes from one
deal to another. The hand each play came from is rebuilt backwards from today's exactly
as the opponent model does (the card drawn after a trick is any of the hand's, equally
likely; the face-up card where the opponent drew it).

*Cost.* The network's first layer is linear, and a view's features depend on the hand
only through a few inputs (the hand, its suits' counts and points, the unseen cards, the
cards that win the trick) and the canonical order of the suits (which the hand sets:
at most six orders once the briscola is known). So for each play and order the public
part of the first layer is computed once (:func:`game.players.net.features` on the
rebuilt view), and each hand adds its few rows of the first layer's weights; the rest of
the network runs on all the hands of a decision in one batch.

Everything is a pure function of the view and the hands (no random draw), and reads no
hidden card: the rebuilt views come from the view's public fields, the hands from the
caller's deals.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Final

import numpy as np
import numpy.typing as npt

from game.actions import PLAY
from game.cards import CARD_POINTS, card_code
from game.players.common import cards_of, mask_of
from game.players.net import LAYOUT, Network, default_network, features, suit_order
from game.players.opponent import DRAWS_2P
from game.tricks import beats, trick_winner_index
from game.view import View

#: Cards each of two players holds while there is a stock.
HAND_2P: Final = 3
#: The network's chance of a card is mixed with the uniform one by this much (the
#: network is only a model: a card it finds unlikely makes a deal less likely, never
#: impossible).
EPSILON: Final = 0.05

_HAND = LAYOUT["hand"][0]
_SUITS = LAYOUT["hand_suits"][0]
_UNSEEN = LAYOUT["unseen"][0]
_WINS = LAYOUT["wins_now"][0]
#: The policy head's column of each canonical card's play.
_PLAY_IDS: Final = np.array([PLAY[c].id for c in range(40)], dtype=np.intp)
_POINTS: Final = np.array(CARD_POINTS, dtype=np.intp)


@dataclasses.dataclass(frozen=True)
class _Play:
    """One of the opponent's plays: its card, the opponent's view then (hand empty),
    whether a draw followed the trick, and whether that draw was the face-up card's."""

    card: int
    view: View
    drew: bool
    face_up_draw: bool


def past_view(view: View, seat: int, trick_index: int, position: int, hand: Sequence[int]) -> View:
    """Two players: ``seat``'s view when it played the ``position``-th card of trick
    ``trick_index`` (0-based; ``len(view.tricks)``: the trick on the table), holding
    ``hand``, rebuilt from ``view``'s public fields. Only the fields the network reads
    are rebuilt (:func:`game.players.net.features`)."""
    assert view.face_up is not None
    if trick_index < len(view.tricks):
        trick = view.tricks[trick_index]
        leader, plays = trick.leader, trick.plays
    else:
        leader, plays = view.leader, view.current_trick
    done = view.tricks[:trick_index]
    on_table = plays[:position]
    played: list[list[int]] = [[] for _ in range(view.players)]
    for t in done:
        for s, c in t.plays:
            played[s].append(c)
    for s, c in on_table:
        played[s].append(c)
    stock = max(0, 40 - view.players * (HAND_2P + trick_index))
    holder = view.face_up_holder if trick_index >= DRAWS_2P else None
    in_hand = min(HAND_2P, 40 // view.players - trick_index)
    sizes = tuple(
        in_hand - (1 if any(s == p for p, _ in on_table) else 0) for s in range(view.players)
    )
    return dataclasses.replace(
        view,
        seat=seat,
        current_seat=seat,
        hand=tuple(hand),
        hand_sizes=sizes,
        legal=tuple("c" + card_code(c) for c in hand),
        trick_no=trick_index,
        leader=leader,
        current_trick=on_table,
        tricks=done,
        played=tuple(tuple(p) for p in played),
        stock_count=stock,
        face_up_holder=holder,
        partner_hand=None,
        side_points=None,
    )


def answer_view(view: View, led: int) -> View:
    """Two players, this seat leading now: the other seat's view once ``led`` is on the
    table (its hand left empty), rebuilt from ``view``'s public fields as
    :func:`past_view` does."""
    me = view.seat
    assert me is not None and not view.current_trick
    opp = 1 - me
    played = [list(p) for p in view.played]
    played[me].append(led)
    sizes = list(view.hand_sizes)
    sizes[me] -= 1
    return dataclasses.replace(
        view,
        seat=opp,
        current_seat=opp,
        hand=(),
        hand_sizes=tuple(sizes),
        legal=(),
        current_trick=((me, led),),
        played=tuple(tuple(p) for p in played),
        partner_hand=None,
        side_points=None,
    )


def _wins(card: int, best: int, trump: int) -> bool:
    """Whether ``card`` takes a trick whose best card is ``best`` (-1: none yet)."""
    return best < 0 or beats(card, best, trump)


class NetOpponent:
    """The likelihood, under the network's policy, of the opponent's last ``depth``
    plays (0: every play) given the hand it holds now in each of a decision's deals."""

    def __init__(self, view: View, depth: int = 0, network: Network | None = None) -> None:
        me = view.seat
        assert me is not None and view.players == 2 and view.face_up is not None
        self.network = network or default_network()
        self.opp = opp = 1 - me
        self.trump = view.face_up // 10
        self.face_up = view.face_up
        plays: list[_Play] = []
        tricks = [t.plays for t in view.tricks] + [view.current_trick]
        for index, trick in enumerate(tricks):
            for position, (seat, card) in enumerate(trick):
                if seat != opp:
                    continue
                drew = index < len(view.tricks) and index < DRAWS_2P
                face_up_draw = drew and index == DRAWS_2P - 1 and view.face_up_holder == opp
                plays.append(
                    _Play(card, past_view(view, opp, index, position, ()), drew, face_up_draw)
                )
        self.plays = plays[-depth:] if depth else plays
        self._view = view
        #: the views the network reads (hand empty): each play's first, then the
        #: answers' (:meth:`prepare_answers`); per view, the best card on the table
        #: (-1: none) and which cards would win the trick (1.0) or not
        self._views: list[View] = []
        self._best: list[int] = []
        self._wins_now: list[npt.NDArray[np.float32]] = []
        for play in self.plays:
            self._add_context(play.view)
        #: led card -> its answer's context; (hand mask, led card) -> the answer's chances
        self._answer_context: dict[int, int] = {}
        self._answers: dict[tuple[int, int], list[float]] = {}
        #: hand mask -> the likelihood of the plays (:meth:`likelihoods`' last hands)
        self.known: dict[int, float] = {}
        #: suit order -> :meth:`_card_rows`
        self._rows: dict[
            tuple[int, ...],
            tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.intp]],
        ] = {}
        #: (play, suit order) -> :meth:`_tables`
        self._public: dict[
            tuple[int, tuple[int, ...]],
            tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.intp]],
        ] = {}

    # ------------------------------------------------------------------ the network

    def _add_context(self, view: View) -> int:
        trick = [c for _, c in view.current_trick]
        best = trick[trick_winner_index(trick, self.trump)] if trick else -1
        self._views.append(view)
        self._best.append(best)
        wins = [_wins(c, best, self.trump) for c in range(40)]
        self._wins_now.append(np.array(wins, dtype=np.float32))
        return len(self._views) - 1

    def _orders(self, cards: npt.NDArray[np.intp]) -> npt.NDArray[np.intp]:
        """:func:`game.players.net.suit_order` of a view holding each row of ``cards``
        (the briscola first, then the other suits by the hand's count and card points
        in them, then by number), a row per hand."""
        suits = cards // 10
        one_hot = suits[:, :, None] == np.arange(4)
        count = one_hot.sum(axis=1)
        points = (one_hot * _POINTS[cards][:, :, None]).sum(axis=1)
        # a suit ranks before another with a larger key (the briscola before all)
        key = count * 1000 + points * 4 + (3 - np.arange(4))
        key[:, self.trump] = 1 << 20
        ranked = np.argsort(-key, axis=1, kind="stable")
        return np.argsort(ranked, axis=1, kind="stable")

    def _tables(
        self, k: int, order: tuple[int, ...], hand: tuple[int, ...]
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.intp]]:
        """For play ``k`` and a suit order (``hand``: one hand of that order): the first
        layer's public part, each card's part when held (a row per card), and each
        card's canonical number."""
        key = (k, order)
        known = self._public.get(key)
        if known is not None:
            return known
        net = self.network
        view = dataclasses.replace(
            self._views[k], hand=hand, legal=tuple("c" + card_code(c) for c in hand)
        )
        assert suit_order(view) == order
        x = features(view)
        for index, value in self._hand_inputs(k, order, hand):
            x[index] -= value
        plain, wins_rows, canon = self._card_rows(order)
        wins = self._wins_now[k]
        held = plain + wins[:, None] * wins_rows
        present = np.flatnonzero(x)
        w1 = net.w1
        tables = (x[present] @ w1[present] + net.b1, held, canon)
        self._public[key] = tables
        return tables

    def _card_rows(
        self, order: tuple[int, ...]
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.intp]]:
        """For a suit order: each card's first-layer part when held (its inputs of the
        hand, the unseen cards and the hand's suits), the part it adds when it would
        win the trick, and each card's canonical number."""
        known = self._rows.get(order)
        if known is not None:
            return known
        w1 = self.network.w1
        canon = np.array([order[c // 10] * 10 + c % 10 for c in range(40)], dtype=np.intp)
        suit = canon // 10
        points = np.array(CARD_POINTS, dtype=np.float32)
        plain = (
            w1[_HAND + canon]
            - w1[_UNSEEN + canon]
            + 0.25 * w1[_SUITS + suit]
            + (points / 30.0)[:, None] * w1[_SUITS + 4 + suit]
        ).astype(np.float32)
        rows = (plain, w1[_WINS + canon], canon)
        self._rows[order] = rows
        return rows

    def _hand_inputs(
        self, k: int, order: tuple[int, ...], hand: Sequence[int]
    ) -> list[tuple[int, float]]:
        """The inputs of :func:`features` that ``hand`` sets (index, value)."""
        best = self._best[k]
        count = [0, 0, 0, 0]
        points = [0, 0, 0, 0]
        inputs: list[tuple[int, float]] = []
        for card in hand:
            c = order[card // 10] * 10 + card % 10
            inputs.append((_HAND + c, 1.0))
            inputs.append((_UNSEEN + c, -1.0))
            if _wins(card, best, self.trump):
                inputs.append((_WINS + c, 1.0))
            count[c // 10] += 1
            points[c // 10] += CARD_POINTS[card]
        for suit in range(4):
            if count[suit]:
                inputs.append((_SUITS + suit, count[suit] / 4.0))
                inputs.append((_SUITS + 4 + suit, points[suit] / 30.0))
        return inputs

    def _distribution(self, k: int, hands: Sequence[tuple[int, ...]]) -> npt.NDArray[np.float64]:
        """The network's chance of each card of each of ``hands`` (a row each, all of
        one size, more than one card) in view ``k``, mixed with ``EPSILON`` of the
        uniform one."""
        net = self.network
        cards = np.array(hands, dtype=np.intp)
        rows = np.empty((len(hands), net.w1.shape[1]), dtype=np.float32)
        canon = np.empty_like(cards)
        orders = self._orders(cards)
        codes = orders @ np.array([64, 16, 4, 1], dtype=np.intp)
        unique, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
        for group in range(len(unique)):
            order = tuple(int(o) for o in orders[first[group]])
            public, held, canonical = self._tables(k, order, hands[int(first[group])])
            index = np.flatnonzero(inverse == group)
            chosen = cards[index]
            rows[index] = public + held[chosen].sum(axis=1)
            canon[index] = canonical[chosen]
        h = np.maximum(rows, 0.0)
        h = np.maximum(h @ net.w2 + net.b2, 0.0)
        logits = h @ net.wp[:, _PLAY_IDS] + net.bp[_PLAY_IDS]
        z = np.take_along_axis(logits, canon, axis=1).astype(np.float64)
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        result: npt.NDArray[np.float64] = (1.0 - EPSILON) * p + EPSILON / cards.shape[1]
        return result

    def chances(self, k: int, hands: Sequence[tuple[int, ...]]) -> list[float]:
        """The network's chance (mixed with ``EPSILON`` of the uniform one) that play
        ``k``'s card comes from each of ``hands`` (each holds it; all of one size)."""
        if not hands:
            return []
        if len(hands[0]) <= 1:
            return [1.0] * len(hands)
        p = self._distribution(k, hands)
        played = p[np.array(hands, dtype=np.intp) == self.plays[k].card]
        return [float(x) for x in played]

    # ------------------------------------------------------------------ the answers

    def prepare_answers(self, hands: Sequence[Sequence[int]], leds: Sequence[int]) -> None:
        """The network's answer to each of ``leds`` (this seat leading now) from each of
        the opponent's ``hands``, computed together (:meth:`answer` reads them)."""
        assert not self._view.current_trick
        masks = sorted({mask_of(h) for h in hands})
        if not masks or len(cards_of(masks[0])) <= 1:
            return
        hand_lists = [tuple(cards_of(m)) for m in masks]
        for led in leds:
            k = self._answer_context.get(led)
            if k is None:
                k = self._add_context(answer_view(self._view, led))
                self._answer_context[led] = k
            todo = [i for i, m in enumerate(masks) if (m, led) not in self._answers]
            if not todo:
                continue
            p = self._distribution(k, [hand_lists[i] for i in todo])
            for row, i in enumerate(todo):
                self._answers[(masks[i], led)] = [float(x) for x in p[row]]

    def answer(self, hand: Sequence[int], led: int) -> list[float]:
        """The network's chance of each card of ``hand`` (in its order) as the answer to
        ``led`` (after :meth:`prepare_answers` for this hand and card)."""
        if len(hand) <= 1:
            return [1.0] * len(hand)
        chances = self._answers[(mask_of(hand), led)]
        ordered = sorted(hand)
        return [chances[ordered.index(c)] for c in hand]

    # ------------------------------------------------------------------ the plays

    def likelihoods(self, hands: Sequence[Sequence[int]]) -> list[float]:
        """The likelihood of the plays read for each of the opponent's hands now."""
        afters = [mask_of(h) for h in hands]
        if not self.plays:
            self.known = dict.fromkeys(afters, 1.0)
            return [1.0] * len(afters)
        last = len(self.plays) - 1
        # backwards: for each play, the hands (bit masks) the opponent may have held
        # before it, and for each hand after it, the hands before it it may come from
        edges: list[dict[int, list[int]]] = []
        level = set(afters)
        for k in range(last, -1, -1):
            play = self.plays[k]
            bit = 1 << play.card
            step: dict[int, list[int]] = {}
            befores: set[int] = set()
            for after in level:
                if not play.drew:
                    options = [after | bit]
                elif play.face_up_draw:
                    face_up = 1 << self.face_up
                    options = [after & ~face_up | bit] if after & face_up else []
                else:
                    options = []
                    rest = after
                    while rest:
                        low = rest & -rest
                        options.append(after & ~low | bit)
                        rest ^= low
                step[after] = options
                befores.update(options)
            edges.append(step)
            level = befores
        edges.reverse()
        # forwards: the likelihood of plays 0..k from each hand after play k
        previous: dict[int, float] | None = None
        for k in range(last + 1):
            step = edges[k]
            masks = sorted({b for options in step.values() for b in options})
            held = [tuple(cards_of(m)) for m in masks]
            chance = dict(zip(masks, self.chances(k, held), strict=True))
            current: dict[int, float] = {}
            for after, options in step.items():
                total = 0.0
                for before in options:
                    earlier = 1.0 if previous is None else previous[before]
                    total += chance[before] * earlier
                current[after] = total / len(options) if options else 0.0
            previous = current
        assert previous is not None
        self.known = {a: previous[a] for a in afters}
        return [previous[a] for a in afters]

    def likelihood(self, hand: Sequence[int]) -> float:
        """The likelihood of the plays from ``hand`` (one of :meth:`likelihoods`' last
        hands, else computed alone)."""
        known = self.known.get(mask_of(hand))
        if known is not None:
            return known
        return self.likelihoods([hand])[0]


__all__ = ["EPSILON", "NetOpponent", "answer_view", "past_view"]
