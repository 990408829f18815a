"""The ``campione`` player: ``esperto`` with exact endgames and a deeper plain-Briscola
search.

In chiamata (every variant) and in three-player Briscola it plays as ``esperto``
(:mod:`game.players.expert`). In plain Briscola with two or four players it adds:

* *Exact endgames* (:mod:`game.players.endgame`). Two players with the stock empty: the
  unseen cards are the opponent's hand, and the last tricks are solved by alpha-beta.
  The last draws pending (at most ``EXACT_STOCK`` cards left to draw): every way the
  unseen cards can lie between the opponent's hand and the stock is enumerated, each
  world solved exactly, and the card with the best mean outcome played (expectimax over
  the hidden cards). Four players after the last draw (R107): the partner's hand is
  known, and each way the two opponents can split the unseen cards is solved.
* *More sampled deals* in the middle game: ``worlds`` (``esperto``: 60) deals played
  out by the rule-based policy for every seat, as ``esperto`` does.

The outcome of a line is ``esperto``'s: +1 for a smazzata won, −1 lost, 0 patta, plus
0.01 per card point of its side.

Every decision is a pure function of the seed and the view (the deals are drawn from
:func:`game.players.common.decision_rng`, the enumeration is in a fixed order).
"""

from __future__ import annotations

import itertools
import math
import random
from typing import Any

from game.actions import Action, parse_action
from game.cards import card_code, parse_card
from game.players import briscola
from game.players.common import decision_rng
from game.players.endgame import Endgame, card_values
from game.players.expert import ExpertPlayer
from game.view import View

#: Two players: solve exactly when at most this many cards are left to draw.
EXACT_STOCK = 2
#: Enumerate the worlds of an exact decision when there are at most this many, else
#: sample this many.
EXACT_WORLDS = 24
#: Middle game: sampled deals played out by the rule-based policy (``esperto``: 60).
WORLDS = 200


def outcome(points: int, players: int, others: int = 0) -> float:
    """A smazzata's value for a side with ``points`` (``others``: the best other side's
    points, used with three players): win +1, patta 0, loss −1, plus 0.01 a point."""
    if players == 3:
        result = 1 if points > others else 0 if points == others else -1
    else:
        result = 1 if points > 60 else 0 if points == 60 else -1
    return result + 0.01 * points


def side_points(view: View, seat: int) -> int:
    """Card points the side of ``seat`` has taken so far (public: the tricks)."""
    side = next(s for s in view.sides if seat in s)
    return sum(t.points or 0 for t in view.tricks if t.winner in side)


def unseen_cards(view: View) -> list[int]:
    """The cards this seat cannot place: not in its hand (or its partner's, R107), not
    played, not the face-up card while it is still under the stock."""
    known = set(view.hand)
    known |= {c for _, c in view.current_trick}
    known |= {c for t in view.tricks for _, c in t.plays}
    if view.partner_hand is not None:
        known |= set(view.partner_hand)
    if view.face_up is not None:
        known.add(view.face_up)
    deck = [c for c in range(40) if not (view.players == 3 and c == 39)]
    unseen = [c for c in deck if c not in known]
    return unseen


def exact_worlds(
    view: View, rng: random.Random, cap: int
) -> list[tuple[list[list[int]], list[int]]]:
    """Hands and stock of every world the view allows (the face-up card last in the
    stock or in its holder's hand), in a fixed order; ``cap`` sampled ones when there
    are more."""
    me = view.seat
    assert me is not None and view.face_up is not None
    n = view.players
    hands: list[list[int]] = [[] for _ in range(n)]
    hands[me] = list(view.hand)
    partner = briscola.partner_of(view, me)
    if view.partner_hand is not None and partner is not None:
        hands[partner] = list(view.partner_hand)
    played = {c for _, c in view.current_trick} | {c for t in view.tricks for _, c in t.plays}
    face_up = view.face_up
    face_up_in_stock = view.face_up_holder is None
    holder = view.face_up_holder
    if holder is not None and face_up not in played and face_up not in hands[holder]:
        hands[holder].append(face_up)
    pool = unseen_cards(view)
    hidden_stock = view.stock_count - (1 if face_up_in_stock else 0)
    open_seats = [s for s in range(n) if view.hand_sizes[s] > len(hands[s])]
    needs = [view.hand_sizes[s] - len(hands[s]) for s in open_seats]
    total = 1
    remaining = len(pool)
    for need in needs:
        total *= _comb(remaining, need)
        remaining -= need
    total *= _perm(hidden_stock)
    if total > cap:
        result = []
        for _ in range(cap):
            h, s = briscola.sample_world(view, rng)
            result.append((h, s))
        return result
    worlds: list[tuple[list[list[int]], list[int]]] = []

    def assign(i: int, rest: list[int], current: list[list[int]]) -> None:
        if i == len(open_seats):
            for order in itertools.permutations(rest):
                stock = list(order) + ([face_up] if face_up_in_stock else [])
                worlds.append(([list(h) for h in current], stock))
            return
        seat = open_seats[i]
        for combo in itertools.combinations(rest, needs[i]):
            left = [c for c in rest if c not in combo]
            current[seat].extend(combo)
            assign(i + 1, left, current)
            del current[seat][len(current[seat]) - len(combo) :]

    assign(0, sorted(pool), [list(h) for h in hands])
    return worlds


def _comb(n: int, k: int) -> int:
    return math.comb(n, k) if 0 <= k <= n else 0


def _perm(n: int) -> int:
    return math.factorial(max(0, n))


class ChampionPlayer(ExpertPlayer):
    """``esperto`` with exact endgames and more deals in plain Briscola (module doc)."""

    def __init__(
        self,
        seed: int = 0,
        max_seconds: float | None = None,
        name: str = "campione",
        worlds: int = WORLDS,
        exact_stock: int = EXACT_STOCK,
        **expert: Any,
    ) -> None:
        super().__init__(seed, max_seconds=max_seconds, name=name, **expert)
        #: plain Briscola's middle game: sampled deals a decision
        self.worlds = worlds
        #: two players: cards left to draw from which the endgame is solved exactly
        self.exact_stock = exact_stock

    def choose(self, view: View) -> Action:
        if view.game != "briscola" or view.players == 3 or len(view.legal) <= 1:
            return super().choose(view)
        rng = decision_rng(self.seed, view.smazzata, view.version, view.seat or 0)
        if self._exact_applies(view):
            return parse_action(self._exact(view, rng))
        self.last_worlds = self.worlds
        return parse_action(briscola.search_code(view, rng, self.worlds, exact_end=True))

    def _exact_applies(self, view: View) -> bool:
        if view.players == 2:
            return view.stock_count <= self.exact_stock
        return view.partner_hand is not None and view.stock_count == 0

    def _exact(self, view: View, rng: random.Random) -> str:
        """The card with the best mean exact outcome over the worlds (module doc)."""
        me = view.seat
        assert me is not None and view.trump is not None
        side_of = [
            next(i for i, side in enumerate(view.sides) if s in side) for s in range(view.players)
        ]
        mine = side_points(view, me)
        legal = [parse_card(code[1:]) for code in view.legal]
        totals = dict.fromkeys(legal, 0.0)
        worlds = exact_worlds(view, rng, EXACT_WORLDS)
        for hands, stock in worlds:
            game = Endgame(
                hands,
                stock,
                view.leader,
                [c for _, c in view.current_trick],
                view.trump,
                side_of,
                side_of[me],
            )
            for card, value in card_values(game).items():
                totals[card] += outcome(mine + value, view.players)
        self.last_worlds = len(worlds)
        best = max(legal, key=lambda c: (round(totals[c], 9), -c))
        return "c" + card_code(best)


__all__ = ["ChampionPlayer", "exact_worlds", "outcome"]
