"""Exact play of plain Briscola's last tricks, where every card is known.

With two players the game becomes one of perfect information once the stock is empty:
the unseen cards are the opponent's hand. With four (R107) each partner sees the other's
hand after the last draw, and the opponents hold the unseen cards between them. In a
*determinised* world (every hand and the stock's draw order fixed) the rest of a
smazzata is a two-sided zero-sum game, and :func:`solve` plays it out exactly:
alpha-beta over the card points the side still to take (R104's trick winner, R105's
draws, the trick in progress included).

The ``campione`` player (:mod:`game.players.champion`) solves the last tricks this way:
with the stock empty and two players, one world (both hands known); with the last draw
pending, the few ways the unseen cards can lie (expectimax over them); with four after
the last draw, each way the opponents can split their cards. Its rollouts end the same
way: with two players, :func:`last_tricks`; with three, every seat playing for its own
points (:func:`last_tricks_three`, max-n: not a two-sided game); in chiamata
(:class:`game.players.sim.World`) and, when asked, with four players, the two sides' best
play (:func:`split`).

:func:`brute_force` is the same value by plain minimax (no pruning, no move ordering):
the tests check that both agree.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from game.cards import CARD_POINTS
from game.tricks import beats, trick_winner_index


@dataclass
class Endgame:
    """A determinised plain-Briscola position.

    ``hands`` by seat, ``stock`` in draw order (the face-up card last), the ``leader`` of
    the trick in progress and its cards so far (``trick``), the ``trump`` suit and each
    seat's side (``side_of``: 0 or 1). Values are the card points ``side`` still takes
    from here (the trick on the table included)."""

    hands: list[list[int]]
    stock: list[int]
    leader: int
    trick: list[int]
    trump: int
    side_of: Sequence[int]
    side: int

    def remaining(self) -> int:
        """Card points not yet taken by anyone (the table, the hands, the stock)."""
        cards = [c for h in self.hands for c in h] + self.stock + self.trick
        return sum(CARD_POINTS[c] for c in cards)


def _order(cards: list[int]) -> list[int]:
    # strong and valuable cards first: cut-offs come earlier, the value is the same
    return sorted(cards, key=lambda c: (-CARD_POINTS[c], c % 10))


class _Solver:
    def __init__(self, game: Endgame, prune: bool) -> None:
        self.hands = [list(h) for h in game.hands]
        self.stock = list(game.stock)
        self.trump = game.trump
        self.side_of = list(game.side_of)
        self.side = game.side
        self.n = len(game.hands)
        self.prune = prune
        self.nodes = 0

    def value(self, leader: int, trick: list[int], alpha: float, beta: float) -> int:
        """Points ``side`` takes from here (alpha-beta window when pruning)."""
        self.nodes += 1
        n = self.n
        if len(trick) == n:
            winner = (leader + trick_winner_index(trick, self.trump)) % n
            points = sum(CARD_POINTS[c] for c in trick)
            gain = points if self.side_of[winner] == self.side else 0
            drawn: list[tuple[int, int]] = []
            if self.stock:
                for k in range(n):
                    seat = (winner + k) % n
                    card = self.stock.pop(0)
                    self.hands[seat].append(card)
                    drawn.append((seat, card))
            rest = self.value(winner, [], alpha - gain, beta - gain)
            for seat, card in reversed(drawn):
                self.hands[seat].remove(card)
                self.stock.insert(0, card)
            return gain + rest
        seat = (leader + len(trick)) % n
        hand = self.hands[seat]
        if not hand:
            return 0
        maximise = self.side_of[seat] == self.side
        best = -1 if maximise else 1 << 30
        for card in _order(hand) if self.prune else list(hand):
            hand.remove(card)
            trick.append(card)
            v = self.value(leader, trick, alpha, beta)
            trick.pop()
            hand.append(card)
            if maximise:
                if v > best:
                    best = v
                if self.prune:
                    alpha = max(alpha, v)
                    if alpha >= beta:
                        break
            else:
                if v < best:
                    best = v
                if self.prune:
                    beta = min(beta, v)
                    if alpha >= beta:
                        break
        return best


def solve(game: Endgame) -> int:
    """The card points ``game.side`` takes from here with best play by both sides."""
    return _Solver(game, prune=True).value(game.leader, list(game.trick), -1, 1 << 30)


def split(
    hands: list[list[int]], leader: int, trump: int, side_of: Sequence[int], side: int
) -> tuple[int, int]:
    """The stock empty, no card on the table: the card points ``side`` and the other side
    take from ``hands`` with best play by both (:func:`solve`); ``hands`` is left as
    given."""
    game = Endgame([list(h) for h in hands], [], leader, [], trump, side_of, side)
    taken = solve(game)
    return taken, game.remaining() - taken


def card_values(game: Endgame) -> dict[int, int]:
    """For each card the seat on turn may play, the points ``game.side`` takes from
    here when it is played and both sides play best afterwards (exact)."""
    n = len(game.hands)
    seat = (game.leader + len(game.trick)) % n
    values: dict[int, int] = {}
    for card in game.hands[seat]:
        hands = [list(h) for h in game.hands]
        hands[seat].remove(card)
        after = Endgame(
            hands,
            list(game.stock),
            game.leader,
            [*game.trick, card],
            game.trump,
            game.side_of,
            game.side,
        )
        values[card] = solve(after)
    return values


#: ``last_tricks``'s memo: (trump, leader's hand, follower's hand) -> the leader's points
LastMemo = dict[tuple[int, tuple[int, ...], tuple[int, ...]], int]


def last_tricks(lead: Sequence[int], follow: Sequence[int], trump: int, memo: LastMemo) -> int:
    """Two players, the stock empty, no card on the table: the card points the seat to
    lead takes from the hands ``lead`` and ``follow`` with best play by both (the same
    value as :func:`solve`, faster: plain minimax over at most 3 × 3 cards a trick,
    positions remembered in ``memo``)."""
    key = (trump, tuple(sorted(lead)), tuple(sorted(follow)))
    known = memo.get(key)
    if known is not None:
        return known
    if not lead:
        return 0
    total = sum(CARD_POINTS[c] for c in lead) + sum(CARD_POINTS[c] for c in follow)
    best = -1
    for card in lead:
        rest_lead = [c for c in lead if c != card]
        worst = 1 << 30
        for answer in follow:
            rest_follow = [c for c in follow if c != answer]
            points = CARD_POINTS[card] + CARD_POINTS[answer]
            if beats(answer, card, trump):
                # the follower takes the trick and leads the rest
                value = total - points - last_tricks(rest_follow, rest_lead, trump, memo)
            else:
                value = points + last_tricks(rest_lead, rest_follow, trump, memo)
            if value < worst:
                worst = value
                if worst <= best:
                    break  # this card cannot beat one already found
        if worst > best:
            best = worst
    memo[key] = best
    return best


#: ``last_tricks_three``'s memo: (trump, leader, the three hands, the points so far) ->
#: each seat's points at the end
ThreeMemo = dict[
    tuple[int, int, tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, int, int]],
    tuple[int, int, int],
]


def last_tricks_three(
    hands: list[list[int]],
    leader: int,
    trump: int,
    taken: tuple[int, int, int],
    memo: ThreeMemo,
) -> tuple[int, int, int]:
    """Three players, the stock empty, no card on the table, every hand known: the card
    points each seat ends the smazzata with, from ``taken`` so far, when every seat plays
    for its own points (max-n: each card chosen to end with the most for its seat, a tie
    broken against the other seat that ends with more, then for the card first in the
    deck's order). ``hands`` is left as given."""
    if not hands[leader]:
        return taken
    key = (
        trump,
        leader,
        tuple(sorted(hands[0])),
        tuple(sorted(hands[1])),
        tuple(sorted(hands[2])),
        taken,
    )
    known = memo.get(key)
    if known is not None:
        return known
    result = _three_trick(hands, leader, [], trump, taken, memo)
    memo[key] = result
    return result


def _three_trick(
    hands: list[list[int]],
    leader: int,
    trick: list[int],
    trump: int,
    taken: tuple[int, int, int],
    memo: ThreeMemo,
) -> tuple[int, int, int]:
    if len(trick) == 3:
        winner = (leader + trick_winner_index(trick, trump)) % 3
        points = CARD_POINTS[trick[0]] + CARD_POINTS[trick[1]] + CARD_POINTS[trick[2]]
        if winner == 0:
            after = (taken[0] + points, taken[1], taken[2])
        elif winner == 1:
            after = (taken[0], taken[1] + points, taken[2])
        else:
            after = (taken[0], taken[1], taken[2] + points)
        return last_tricks_three(hands, winner, trump, after, memo)
    seat = (leader + len(trick)) % 3
    hand = hands[seat]
    best = taken
    best_own = -1
    best_rival = 0
    for card in sorted(hand):
        index = hand.index(card)
        hand.pop(index)
        trick.append(card)
        value = _three_trick(hands, leader, trick, trump, taken, memo)
        trick.pop()
        hand.insert(index, card)
        own = value[seat]
        rival = max(value[(seat + 1) % 3], value[(seat + 2) % 3])
        if own > best_own or (own == best_own and rival < best_rival):
            best, best_own, best_rival = value, own, rival
    return best


#: ``DrawSolver``'s memo: (my hand, the opponent's, the hidden stock cards, whether I
#: lead, my points so far) -> the expected outcome
DrawMemo = dict[tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], bool, int], float]


class DrawSolver:
    """Two players, the opponent's hand known (one world of the hidden cards), the stock's
    order not: the expectimax value of the rest of the smazzata for "me".

    The stock is the ``hidden`` cards in an unknown order with the face-up card last
    (R105). After each trick its winner draws first: every way the two cards drawn can
    be chosen from the hidden ones is equally likely (a chance node), and the face-up
    card goes to the loser of the trick before the stock is empty. Neither player knows
    the order, so this is the game as it is played, unlike :func:`solve` on one fixed
    stock. Once the stock is empty the last tricks are exact
    (:func:`last_tricks`). ``utility(points)`` is the value of ending with ``points``
    (the ``campione`` player's: win, patta or loss plus a little a point); both players
    play best for it (zero-sum). Positions are remembered in ``memo`` (share it across
    the worlds of a decision: same trump and face-up card)."""

    def __init__(
        self,
        trump: int,
        face_up: int,
        utility: Callable[[int], float],
        memo: DrawMemo | None = None,
        last: LastMemo | None = None,
    ) -> None:
        self.trump = trump
        self.face_up = face_up
        self.utility = utility
        self.memo: DrawMemo = {} if memo is None else memo
        self.last: LastMemo = {} if last is None else last

    def card_values(
        self,
        mine: Sequence[int],
        theirs: Sequence[int],
        hidden: Sequence[int],
        trick: Sequence[int],
        points: int,
    ) -> dict[int, float]:
        """For each card of ``mine`` (my hand, my turn): its value, the opponent having
        led ``trick`` (one card) or nobody yet (empty); ``points`` are mine so far."""
        hid = tuple(sorted(hidden))
        if trick:
            # the opponent led trick[0] from a hand that held it
            held = (*theirs, trick[0])
            return {
                card: self._resolve(tuple(mine), held, hid, trick[0], card, False, points)
                for card in mine
            }
        return {
            card: min(
                self._resolve(tuple(mine), tuple(theirs), hid, card, answer, True, points)
                for answer in theirs
            )
            for card in mine
        }

    def _resolve(
        self,
        mine: tuple[int, ...],
        theirs: tuple[int, ...],
        hidden: tuple[int, ...],
        lead: int,
        follow: int,
        i_led: bool,
        points: int,
    ) -> float:
        """The leader plays ``lead`` and the other ``follow`` from the hands (which
        still hold them): score the trick, draw, play on."""
        my_card, their_card = (lead, follow) if i_led else (follow, lead)
        mine = tuple(c for c in mine if c != my_card)
        theirs = tuple(c for c in theirs if c != their_card)
        i_win = i_led != beats(follow, lead, self.trump)
        if i_win:
            points += CARD_POINTS[lead] + CARD_POINTS[follow]
        if not hidden:
            return self.value(mine, theirs, hidden, i_win, points)
        if len(hidden) == 1:
            # the last draw: the winner takes the hidden card, the loser the face-up one
            pairs = [(hidden[0], self.face_up)]
        else:
            pairs = [(x, y) for x in hidden for y in hidden if x != y]
        total = 0.0
        for x, y in pairs:
            rest = tuple(c for c in hidden if c != x and c != y)
            mine_draw, theirs_draw = (x, y) if i_win else (y, x)
            total += self.value(
                tuple(sorted((*mine, mine_draw))),
                tuple(sorted((*theirs, theirs_draw))),
                rest,
                i_win,
                points,
            )
        return total / len(pairs)

    def value(
        self,
        mine: tuple[int, ...],
        theirs: tuple[int, ...],
        hidden: tuple[int, ...],
        i_lead: bool,
        points: int,
    ) -> float:
        """Between tricks (hands sorted): the expected utility with best play."""
        if not mine:
            return self.utility(points)
        key = (mine, theirs, hidden, i_lead, points)
        known = self.memo.get(key)
        if known is not None:
            return known
        if not hidden:
            lead, follow = (mine, theirs) if i_lead else (theirs, mine)
            taken = last_tricks(lead, follow, self.trump, self.last)
            if not i_lead:
                taken = sum(CARD_POINTS[c] for c in mine + theirs) - taken
            result = self.utility(points + taken)
        else:
            leads, follows = (mine, theirs) if i_lead else (theirs, mine)
            best_lead, best_answer = (max, min) if i_lead else (min, max)
            result = best_lead(
                best_answer(
                    self._resolve(mine, theirs, hidden, card, answer, i_lead, points)
                    for answer in follows
                )
                for card in leads
            )
        self.memo[key] = result
        return result


def brute_force(game: Endgame) -> int:
    """:func:`solve` by plain minimax over every line (tests)."""
    return _Solver(game, prune=False).value(game.leader, list(game.trick), -1, 1 << 30)


def nodes_searched(game: Endgame) -> int:
    """Positions :func:`solve` visits (diagnostics)."""
    solver = _Solver(game, prune=True)
    solver.value(game.leader, list(game.trick), -1, 1 << 30)
    return solver.nodes


__all__ = [
    "DrawMemo",
    "DrawSolver",
    "Endgame",
    "LastMemo",
    "brute_force",
    "card_values",
    "last_tricks",
    "nodes_searched",
    "solve",
]
