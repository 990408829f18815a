"""Two-player Briscola: how likely the opponent's plays of the smazzata are from a hand.

:class:`OpponentModel` is ``campione``'s inference (:mod:`game.players.champion`'s
module doc): the likelihood of the opponent's plays given the hand it holds in a
sampled world, under a mixture of two kinds of player (the fitted play model of
:mod:`game.players.playmodel` and the rule-based card). It is the hot part of a
two-player decision, so it lives apart from the player and setup.py compiles it with
mypyc (the same values as its source, tests/test_players_compiled.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from game.players import briscola, playmodel
from game.view import View

#: The opponent model (:class:`OpponentModel`): with chance ``SHARE`` the opponent plays
#: as the play model (:mod:`game.players.playmodel`) says, else it plays the rule-based
#: policy's card with probability ``MATCH`` (every other card of its hand shares the
#: rest). Chosen by how the resampled deals place the opponent's hidden cards on held-out
#: positions of ``esperto``, ``forte`` and ``normale`` games (campione's module doc).
MATCH = 0.97
SHARE = 0.5
#: Cards drawn by each of two players in a smazzata (R105: the stock holds 34).
DRAWS_2P = 17


#: One of the opponent's plays: its card, the trick before it (empty when it led),
#: the trick's leader, and whether a draw followed the trick.
_Play = tuple[int, list[int], int, bool]


def opponent_plays(view: View) -> list[_Play]:
    """Two players: the opponent's plays in order, the current trick's last."""
    me = view.seat
    assert me is not None
    opp = 1 - me
    plays: list[_Play] = []
    for index, trick in enumerate(view.tricks):
        cards = [c for _, c in trick.plays]
        for position, (seat, card) in enumerate(trick.plays):
            if seat == opp:
                plays.append((card, cards[:position], trick.leader, index < DRAWS_2P))
    for position, (seat, card) in enumerate(view.current_trick):
        if seat == opp:
            plays.append((card, [c for _, c in view.current_trick][:position], view.leader, False))
    return plays


class OpponentModel:
    """The likelihood of the opponent's last plays given its hand in a sampled world.

    Two kinds of player are weighed: with chance ``share`` one whose plays follow the
    play model (:func:`game.players.playmodel.probabilities`, from what the opponent
    knew then: its hand, the table, the cards it had not seen, the cards left to draw),
    else one who plays the rule-based policy's card with probability ``match`` (the
    others share the rest). ``theta`` None or ``share`` 0: the rule-based one only. The
    hand each play came from is rebuilt backwards from today's (the card drawn after
    each trick is any of the hand's, equally likely; the face-up card where the
    opponent drew it). ``depth``: the last plays read (``campione`` reads
    ``INFERENCE_DEPTH``, every play of the smazzata)."""

    def __init__(
        self,
        view: View,
        depth: int = 4,
        match: float = MATCH,
        theta: Sequence[float] | None = playmodel.THETA,
        share: float = SHARE,
    ) -> None:
        me = view.seat
        assert me is not None and view.trump is not None and view.face_up is not None
        self.opp = 1 - me
        self.trump = view.trump
        self.face_up = view.face_up
        self.face_up_drawn = view.face_up_holder == self.opp
        every = opponent_plays(view)
        self.plays = every[-depth:] if depth else []
        self.first_index = len(every) - len(self.plays)
        self.match = match
        self.theta = theta
        self.share = share if theta is not None else 0.0
        #: each play's cards seen by then (played before it, the face-up card) and the
        #: cards left to draw
        seen, stock = _play_context(view, self.opp)
        self.seen = seen[self.first_index :]
        self.stock = stock[self.first_index :]
        #: keys: (k, hand after play k) for the play model's likelihood of plays 0..k,
        #: (k + _RULE, …) for the rule-based one's; (-1 - k, hand before play k) and
        #: (-1 - k - _RULE, …) for play k's own chance under each
        self._memo: dict[tuple[int, tuple[int, ...]], float] = {}

    def likelihood(self, hand: list[int]) -> float:
        model, rule = self.kinds(hand)
        return model + rule

    def kinds(self, hand: list[int]) -> tuple[float, float]:
        """The likelihood of the plays from ``hand`` and each kind of player, times its
        prior chance: (the play model's, the rule-based card's)."""
        after = tuple(sorted(hand))
        last = len(self.plays) - 1
        model = rule = 0.0
        if self.share > 0.0:
            model = self.share * self._before(last, after, 0)
        if self.share < 1.0:
            rule = (1.0 - self.share) * self._before(last, after, _RULE)
        return model, rule

    def reply_chances(self, hand: list[int], led: int, stock: int) -> list[float]:
        """The chance of each card of ``hand`` (its order) as the opponent's answer to
        ``led``, ``stock`` cards left to draw: the two kinds' chances mixed by how
        likely each kind is given the opponent's plays so far from this hand."""
        if len(hand) == 1:
            return [1.0]
        model, rule = self.kinds(hand)
        total = model + rule
        own = model / total if total > 0.0 else self.share
        chances = [0.0] * len(hand)
        if own > 0.0 and self.theta is not None:
            # no unseen cards given: the play model reads them only for a lead
            probs = playmodel.probabilities(hand, [led], self.trump, 0, stock, self.theta)
            for i in range(len(hand)):
                chances[i] += own * probs[i]
        pick = briscola.choose_card(hand, [led], self.opp, 1 - self.opp, 2, self.trump, None)
        rest = (1.0 - self.match) / (len(hand) - 1)
        for i, card in enumerate(hand):
            chances[i] += (1.0 - own) * (self.match if card == pick else rest)
        return chances

    def _before(self, k: int, after: tuple[int, ...], kind: int) -> float:
        """The likelihood of plays 0..k under one kind of player (0: the play model,
        ``_RULE``: the rule-based card), the opponent holding ``after`` (sorted) once
        play k's trick was over (and its draw made); remembered, as the deals of a
        decision share most of these hands."""
        if k < 0:
            return 1.0
        key = (k + kind, after)
        known = self._memo.get(key)
        if known is not None:
            return known
        card, trick, leader, drew = self.plays[k]
        if not drew:
            before = tuple(sorted((*after, card)))
            result = self._p(k, card, before, trick, leader, kind)
            result *= self._before(k - 1, before, kind)
        else:
            last_draw = self.first_index + k == DRAWS_2P - 1
            options = (self.face_up,) if last_draw and self.face_up_drawn else after
            total = 0.0
            for drawn in options:
                before = tuple(sorted((*(c for c in after if c != drawn), card)))
                chance = self._p(k, card, before, trick, leader, kind)
                if chance:
                    total += chance * self._before(k - 1, before, kind)
            result = total / len(options)
        self._memo[key] = result
        return result

    def _p(
        self, k: int, card: int, hand: tuple[int, ...], trick: list[int], leader: int, kind: int
    ) -> float:
        if len(hand) <= 1:
            return 1.0
        key = (-1 - k - kind, hand)
        known = self._memo.get(key)
        if known is not None:
            return known
        if kind == _RULE or self.theta is None:
            pick = briscola.choose_card(hand, trick, self.opp, leader, 2, self.trump, None)
            result = self.match if pick == card else (1.0 - self.match) / (len(hand) - 1)
            self._memo[key] = result
            return result
        own = 0
        for c in hand:
            own |= 1 << c
        unseen = _ALL & ~(own | self.seen[k])
        probs = playmodel.probabilities(hand, trick, self.trump, unseen, self.stock[k], self.theta)
        result = probs[hand.index(card)]
        self._memo[key] = result
        return result


#: The rule-based kind's offset in the memo's keys (more than any play's index).
_RULE = 64
_ALL = (1 << 40) - 1


def _play_context(view: View, opp: int) -> tuple[list[int], list[int]]:
    """For each of ``opp``'s plays (``opponent_plays``' order): the cards it had seen
    played before it plus the face-up card (a bit mask), and the cards left to draw."""
    assert view.face_up is not None
    seen = 1 << view.face_up
    masks: list[int] = []
    stocks: list[int] = []
    tricks = [[c for _, c in t.plays] for t in view.tricks]
    seats = [[s for s, _ in t.plays] for t in view.tricks]
    tricks.append([c for _, c in view.current_trick])
    seats.append([s for s, _ in view.current_trick])
    for index, (cards, who) in enumerate(zip(tricks, seats, strict=True)):
        for card, seat in zip(cards, who, strict=True):
            if seat == opp:
                masks.append(seen)
                stocks.append(playmodel.stock_before(index))
            seen |= 1 << card
    return masks, stocks


__all__ = ["DRAWS_2P", "MATCH", "SHARE", "OpponentModel", "opponent_plays"]
