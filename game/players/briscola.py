"""Computer play for plain Briscola (R98–R110): a heuristic and a determinised search.

Both see only the seat's :class:`~game.view.View`: its hand, the face-up briscola and the
stock count, the cards played, who drew the face-up card (that seat holds it until it
plays it), and with 4 players the partner (and, after the last draw, the partner's hand,
R107).

*Heuristic.* Leading, it gives away as little as it can: a liscio of a plain suit, then
a figure, keeping trumps and carichi. Following, it takes the trick when the points on
the table are worth what the winning card costs (a plain card of the led suit costs
nothing, a trump costs its strength), loads a carico on a partner who is sure to win,
and otherwise throws its cheapest card.

*Search.* Perfect-information Monte Carlo: it deals the unseen cards at random among
the other hands and the stock (the face-up card last, or in its holder's hand), plays
each legal card, finishes the smazzata with the heuristic for every seat, and picks the
card with the best average result: +1 for a smazzata won, −1 lost, 0 patta, plus 0.01
per card point of its side (common random worlds for every card).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from game.cards import CARD_POINTS, card_code, parse_card
from game.players import draws, policy
from game.players.endgame import LastMemo, ThreeMemo, last_tricks, last_tricks_three, split
from game.players.policy import Weights
from game.tricks import trick_winner_index
from game.view import View

#: Cost of spending a trump, by rank index (Asso … 2): strong trumps are worth keeping.
TRUMP_COST = (14, 12, 8, 7, 6, 4, 3, 3, 2, 2)


def _lead_cost(card: int, trump: int) -> float:
    points = CARD_POINTS[card]
    if card // 10 == trump:
        return 20 + TRUMP_COST[card % 10] + points
    return points * 1.5 + (10 - card % 10) * 0.1


def choose_card(
    hand: Sequence[int],
    trick: Sequence[int],
    seat: int,
    leader: int,
    players: int,
    trump: int,
    partner: int | None,
) -> int:
    """The heuristic card for ``seat`` (see the module docstring)."""
    if not trick:
        return min(hand, key=lambda c: _lead_cost(c, trump))
    best = trick_winner_index(list(trick), trump)
    winner = (leader + best) % players
    on_table = sum(CARD_POINTS[c] for c in trick)
    last = len(trick) == players - 1
    if partner is not None and winner == partner:
        best_card = trick[best]
        safe = last or (best_card // 10 == trump and best_card % 10 <= 2) or best_card % 10 == 0
        plain = [c for c in hand if c // 10 != trump]
        if safe and plain:
            return max(plain, key=lambda c: (CARD_POINTS[c], -(c % 10)))
        return min(hand, key=lambda c: _lead_cost(c, trump))
    best_card = trick[best]
    options = []
    for card in hand:
        if trick_winner_index([*trick, card], trump) != len(trick):
            continue
        gain = on_table + CARD_POINTS[card]
        cost = TRUMP_COST[card % 10] if card // 10 == trump and best_card // 10 != trump else 0
        if card // 10 == trump and best_card // 10 == trump:
            cost = TRUMP_COST[card % 10]
        if gain > cost or (last and gain > 0) or (gain >= 10):
            options.append((cost - gain, card))
    if options:
        return min(options)[1]
    return min(hand, key=lambda c: (CARD_POINTS[c], c // 10 == trump, -(c % 10)))


def partner_of(view: View, seat: int) -> int | None:
    for side in view.sides:
        if seat in side and len(side) == 2:
            return side[0] if side[1] == seat else side[1]
    return None


def heuristic_code(view: View) -> str:
    me = view.seat
    assert me is not None and view.trump is not None
    legal = [_card(code) for code in view.legal]
    card = choose_card(
        legal,
        [c for _, c in view.current_trick],
        me,
        view.leader,
        view.players,
        view.trump,
        partner_of(view, me),
    )
    return "c" + _code(card)


def _card(code: str) -> int:
    return parse_card(code[1:])


def _code(card: int) -> str:
    return card_code(card)


# ---------------------------------------------------------------- search


def sample_world(view: View, rng: random.Random) -> tuple[list[list[int]], list[int]]:
    """Hands and stock (draw order) consistent with everything ``view`` shows."""
    me = view.seat
    assert me is not None and view.face_up is not None
    n = view.players
    played = {c for _, c in view.current_trick}
    played |= {c for t in view.tricks for _, c in t.plays}
    hands: list[list[int]] = [[] for _ in range(n)]
    hands[me] = list(view.hand)
    known = set(view.hand) | played
    partner = partner_of(view, me)
    if view.partner_hand is not None and partner is not None:
        hands[partner] = list(view.partner_hand)
        known |= set(view.partner_hand)
    face_up = view.face_up
    face_up_in_stock = view.face_up_holder is None
    holder = view.face_up_holder
    if holder is not None and face_up not in known:
        hands[holder].append(face_up)
    known.add(face_up)
    deck = [c for c in range(40) if not (n == 3 and c == 39)]  # R99: no 2 di Bastoni
    pool = [c for c in deck if c not in known]
    draws.shuffle(rng, pool)
    for seat in range(n):
        need = view.hand_sizes[seat] - len(hands[seat])
        hands[seat].extend(pool[:need])
        del pool[:need]
    stock = pool + ([face_up] if face_up_in_stock else [])
    return hands, stock


#: Every card of the deck as a mask (the unseen cards of a seat: this minus what it saw).
_ALL = (1 << 40) - 1
#: A seat's chance of being on each seat's side, by the table's size and the seat: itself
#: 1 and, with four players, its partner across the table (R98) 1, the others 0.
_SIDES = {
    n: tuple(
        tuple(
            1.0 if other == seat or (n == 4 and other == (seat + 2) % 4) else 0.0
            for other in range(n)
        )
        for seat in range(n)
    )
    for n in (2, 3, 4)
}
_NO_VOIDS = {n: (0,) * n for n in (2, 3, 4)}


def policy_card(
    hands: list[list[int]],
    seat: int,
    trick: list[int],
    leader: int,
    trump: int,
    seen: int,
    tricks_left: int,
    weights: Weights,
) -> int:
    """The card of :func:`game.players.policy.choose_card` (the chiamata players'
    policy, which counts the unseen cards to judge who takes a trick) for ``seat``, from
    what that seat knows: its hand, the cards ``seen`` (played, and the face-up card while
    it is under the stock), the hand sizes and, with four players, its partner."""
    hand = hands[seat]
    n = len(hands)
    own = 0
    for card in hand:
        own |= 1 << card
    return policy.choose_card(
        seat,
        hand,
        trick,
        leader,
        trump,
        _SIDES[n][seat],
        _ALL & ~(own | seen),
        _NO_VOIDS[n],
        [len(h) for h in hands],
        False,
        tricks_left,
        -1,
        n,
        None,
        weights,
    )


def rollout(
    view: View,
    hands: list[list[int]],
    stock: list[int],
    first: int,
    me: int,
    memo: LastMemo | None = None,
    weights: Weights | None = None,
    reply: int = -1,
    three: ThreeMemo | None = None,
    sides_exact: bool = False,
) -> tuple[int, int]:
    """Play ``first`` for ``me`` then finish the smazzata with the heuristic; return
    (my side's card points, the most points of any other side). With ``memo`` (two
    players only) the tricks after the last draw, where both hands are known, are
    played exactly (:func:`game.players.endgame.last_tricks`) instead, from the second
    of them (the first is the policy's); so are ``three``'s and ``sides_exact``'s. With
    ``weights`` every seat plays :func:`policy_card` instead of the
    heuristic. ``reply`` (two players, ``me`` leading; -1: none): the other seat's card
    in this trick, played instead of its policy's. With ``three`` (three players only)
    the tricks after the last draw are played as every seat taking the most for itself
    (:func:`game.players.endgame.last_tricks_three`). With ``sides_exact`` (four
    players) they are the two sides' best play for their card points
    (:func:`game.players.endgame.split`)."""
    n = view.players
    trump = view.trump
    assert trump is not None
    sides = view.sides
    side_of = {s: i for i, side in enumerate(sides) for s in side}
    partners = {s: partner_of(view, s) for s in range(n)}
    points = [0] * len(sides)
    for trick_view in view.tricks:
        points[side_of[trick_view.winner or 0]] += trick_view.points or 0
    leader = view.leader
    trick = [c for _, c in view.current_trick]
    seat = (leader + len(trick)) % n
    forced: int | None = first
    seen = 0
    tricks_left = 0
    if weights is not None:
        for card in [c for t in view.tricks for _, c in t.plays] + trick:
            seen |= 1 << card
        tricks_left = 40 // n - len(view.tricks)
    face_up = 1 << view.face_up if view.face_up is not None else 0
    while True:
        # the face-up card, last under the stock, is in sight of both
        sight = seen | face_up if stock else seen
        while len(trick) < n:
            hand = hands[seat]
            if forced is not None and seat == me:
                card, forced = forced, None
            elif reply >= 0 and seat != me:
                card, reply = reply, -1
            elif weights is not None:
                card = policy_card(hands, seat, trick, leader, trump, sight, tricks_left, weights)
            else:
                card = choose_card(hand, trick, seat, leader, n, trump, partners[seat])
            hand.remove(card)
            trick.append(card)
            seen |= 1 << card
            sight |= 1 << card
            seat = (seat + 1) % n
        tricks_left -= 1
        winner = (leader + trick_winner_index(trick, trump)) % n
        points[side_of[winner]] += sum(CARD_POINTS[c] for c in trick)
        trick = []
        leader = seat = winner
        if stock:
            for k in range(n):
                hands[(winner + k) % n].append(stock.pop(0))
        elif memo is not None and hands[leader]:
            taken = last_tricks(hands[leader], hands[1 - leader], trump, memo)
            rest = sum(CARD_POINTS[c] for h in hands for c in h)
            points[side_of[leader]] += taken
            points[side_of[1 - leader]] += rest - taken
            break
        elif three is not None and hands[leader]:
            so_far = (points[side_of[0]], points[side_of[1]], points[side_of[2]])
            final = last_tricks_three(hands, leader, trump, so_far, three)
            for k in range(3):
                points[side_of[k]] = final[k]
            break
        elif sides_exact and hands[leader]:
            mine_side = side_of[me]
            ours, theirs = split(hands, leader, trump, [side_of[s] for s in range(n)], mine_side)
            points[mine_side] += ours
            points[1 - mine_side] += theirs
            break
        if not hands[leader]:
            break
    mine = points[side_of[me]]
    others = max(p for i, p in enumerate(points) if i != side_of[me])
    return mine, others


#: A sampled world: every hand, and the stock in draw order.
Deal = tuple[list[list[int]], list[int]]
#: Two players, leading: the other seat's answers to a card in a deal's hands, each with
#: its chance (a search weighs them instead of the rollout policy's one answer).
Answers = Callable[[list[list[int]], int], list[tuple[int, float]]]


def search_code(
    view: View,
    rng: random.Random,
    worlds: int = 40,
    exact_end: bool = False,
    deals: Sequence[tuple[Deal, int]] | None = None,
    weights: Weights | None = None,
    answers: Answers | None = None,
    sides_exact: bool = False,
) -> str:
    """The legal card with the best average outcome over ``worlds`` sampled deals (or
    over ``deals``, each with its multiplicity). With ``exact_end`` and two or three
    players (four with ``sides_exact``), rollouts end with the exact last tricks; with
    ``weights`` they are played by :func:`policy_card`. With ``answers`` (two players,
    leading) a card's value in a deal is the average over the other seat's answers, by
    their chances."""
    me = view.seat
    assert me is not None
    legal = [_card(code) for code in view.legal]
    if len(legal) == 1:
        return view.legal[0]
    totals = [0.0] * len(legal)
    majority = view.players != 3
    memo: LastMemo | None = {} if exact_end and view.players == 2 else None
    three: ThreeMemo | None = {} if exact_end and view.players == 3 else None
    sides_exact = sides_exact and exact_end and view.players == 4
    if deals is None:
        deals = [(sample_world(view, rng), 1) for _ in range(worlds)]
    for (hands, stock), count in deals:
        for i, card in enumerate(legal):
            if answers is None:
                mine, others = rollout(
                    view,
                    [list(h) for h in hands],
                    list(stock),
                    card,
                    me,
                    memo,
                    weights,
                    -1,
                    three,
                    sides_exact,
                )
                totals[i] += count * rollout_value(mine, others, majority)
                continue
            value = mass = 0.0
            for reply, chance in answers(hands, card):
                mine, others = rollout(
                    view, [list(h) for h in hands], list(stock), card, me, memo, weights, reply
                )
                value += chance * rollout_value(mine, others, majority)
                mass += chance
            totals[i] += count * value / mass
    best = max(range(len(legal)), key=totals.__getitem__)
    return "c" + _code(legal[best])


def rollout_value(mine: int, others: int, majority: bool) -> float:
    """A rollout's value for ``me``: win +1, patta 0, loss −1 (against 60 points with a
    majority to reach, else against the best other side), plus 0.01 a card point."""
    if majority:
        result = 1 if mine > 60 else 0 if mine == 60 else -1
    else:
        result = 1 if mine > others else 0 if mine == others else -1
    return result + 0.01 * mine
