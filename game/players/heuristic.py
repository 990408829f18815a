"""The rule-based player (levels ``normale``, and ``facile`` with noise).

*Auction.* For every legal call the player computes the expected score it would earn as
chiamante (:mod:`game.players.bidding`): the best suit for that call, the card the
partner would hold, the chance of reaching the contract points, the multiplier. It makes
the call with the best expectation if that beats passing by a margin, otherwise it
passes. This yields the usual behaviour: a long, strong briscola calls the Asso (or the
3 when holding the Asso), a strong hand steps down the ranks and then to the 2-level,
where the multipliers make "2 a 71" or "2 a 81" worth it only with a near-certain hand;
holding the 2 of the chosen suit it uses the *chiamata obbligata*; a hand that can win
alone calls a card it holds (*in mano*); an all-masters hand calls *a carichi*; a hand
worth 0 points sends the deal *a monte*.

*Declaration.* The suit with the best expected score for the contract won.

*Play.* :func:`game.players.policy.choose_card`, fed with the seat's knowledge
(:mod:`game.players.knowledge`): the cards still out, the voids, the points on the table,
and who is (presumably) the partner.
"""

from __future__ import annotations

import random

from game.actions import Action, parse_action
from game.cards import RANK_CODES, Rank, card_code, parse_card
from game.players import briscola
from game.players.bidding import (
    CARICHI_SD,
    SOLO_SD,
    TEAM_SD,
    contract_ev,
    expected_carichi_points,
    expected_points,
    p_reach,
    target_of,
)
from game.players.common import OBBLIGATO_ORDER, decision_rng
from game.players.knowledge import (
    follow_in_force,
    holds_hidden_called,
    known_voids,
    partner_probabilities,
    tricks_total,
    trump_known,
    unseen_mask,
)
from game.players.policy import DEFAULT_WEIGHTS, Weights, choose_card
from game.view import View

_DUE = int(Rank.DUE)


def obbligato_suits(hand: tuple[int, ...], rank: int) -> list[int]:
    """Suits whose obbligato rank (R34) for this hand is ``rank``."""
    held = set(hand)
    result = []
    for suit in range(4):
        if suit * 10 + _DUE not in held:
            continue
        for r in OBBLIGATO_ORDER:
            if suit * 10 + r not in held:
                if r == rank:
                    result.append(suit)
                break
    return result


class BidEvaluator:
    """Expected chiamante score of each call for one hand (cached per suit/card)."""

    def __init__(self, view: View, hand: tuple[int, ...] | None = None) -> None:
        """For the view's own hand, or for ``hand`` (a sampled hand of another seat)."""
        self.hand = view.hand if hand is None else hand
        self.options = view.options
        self.players = view.players
        self._mean: dict[tuple[int, int | None], float] = {}
        self._card_ev: dict[int, tuple[float, int]] = {}

    def mean(self, suit: int, called: int | None) -> tuple[float, float, bool]:
        """(expected points, spread, solo) with ``suit`` as trump and ``called`` called."""
        solo = called is None or called in self.hand
        key = (suit, None if solo else called)
        value = self._mean.get(key)
        if value is None:
            value = expected_points(self.hand, suit, None if solo else called)
            self._mean[key] = value
        return value, (SOLO_SD if solo else TEAM_SD), solo

    def ev(self, suit: int, rank: int, points: int) -> float | None:
        """Expected score of calling ``rank`` with ``suit`` for ``points``; None if illegal."""
        called = suit * 10 + rank
        mean, sd, solo = self.mean(suit, called)
        if solo and not self.options.in_mano:
            return None
        tie = self.options.tie_goes_to_caller
        p = p_reach(mean, sd, target_of(points, tie))
        return contract_ev(p, points, solo, self.players)

    def best_suit_ev(self, rank: int, points: int, suits: list[int]) -> tuple[float, int]:
        best = (-1e9, suits[0] if suits else 0)
        for suit in suits:
            value = self.ev(suit, rank, points)
            if value is not None and value > best[0]:
                best = (value, suit)
        return best

    def code_ev(self, code: str) -> float:
        """Expected score of an auction action code (pass = 0)."""
        if code in ("P", "M"):
            return 0.0
        if code == "K":
            mean = expected_carichi_points(self.hand)
            p = p_reach(mean, CARICHI_SD, target_of(61, self.options.tie_goes_to_caller))
            return contract_ev(p, 61, True, self.players)
        if code[0] == "r":
            return self.best_suit_ev(RANK_CODES.index(code[1:]), 61, [0, 1, 2, 3])[0]
        if code[0] == "t":
            return self.best_suit_ev(_DUE, int(code[1:]), [0, 1, 2, 3])[0]
        if code[0] == "o":
            rank_code, points = code[1:].split(".")
            rank = RANK_CODES.index(rank_code)
            return self.best_suit_ev(rank, int(points), obbligato_suits(self.hand, rank))[0]
        if code[0] == "n":
            return self.best_card_ev(int(code[1:]))[0]
        return -1e9

    def card_candidates(self) -> list[int]:
        """A punti (R45): the cards worth naming. For each suit, the strongest card this
        hand lacks (a strong socio) and, with in mano, the strongest one it holds (solo)."""
        held = set(self.hand)
        deck = self.options.players != 6
        result = []
        for suit in range(4):
            ranks = [r for r in range(10) if deck or r != int(Rank.QUATTRO)]
            missing = [suit * 10 + r for r in ranks if suit * 10 + r not in held]
            own = [suit * 10 + r for r in ranks if suit * 10 + r in held]
            if missing:
                result.append(missing[0])
            if own and self.options.in_mano:
                result.append(own[0])
        return result

    def best_card_ev(self, points: int) -> tuple[float, int]:
        """A punti: the best expected score of a point call "N", and the card to name."""
        cached = self._card_ev.get(points)
        if cached is None:
            cached = (-1e9, 0)
            for card in self.card_candidates():
                value = self.ev(card // 10, card % 10, points)
                if value is not None and value > cached[0]:
                    cached = (value, card)
            self._card_ev[points] = cached
        return cached


def heuristic_bid(view: View, margin: float = 0.25, jitter: random.Random | None = None) -> str:
    """The auction code a good player chooses (see the module docstring)."""
    legal = view.legal
    if "M" in legal:
        return "M"  # a hand without a single point: better a new deal
    evaluator = BidEvaluator(view)
    best_code = "P" if "P" in legal else legal[0]
    # a casual player misjudges its hand: one random error on the whole decision
    best_value = margin + (jitter.gauss(0.0, 0.5) if jitter is not None else 0.0)
    for code in legal:
        if code in ("P", "M"):
            continue
        value = evaluator.code_ev(code)
        if value > best_value:
            best_value, best_code = value, code
    return best_code


def heuristic_declare(view: View) -> str:
    """The suit with the best expected score for the contract that was won."""
    evaluator = BidEvaluator(view)
    rank = view.contract_rank if view.contract_rank is not None else _DUE
    points = view.contract_points or 61
    if view.legal[0][0] == "d":  # a punti: name the whole card (R45)
        card = evaluator.best_card_ev(points)[1]
        code = "d" + card_code(card)
        return code if code in view.legal else view.legal[0]
    best_code, best_value = view.legal[0], -1e9
    for code in view.legal:
        suit = "cdsb".index(code[1])
        value = evaluator.ev(suit, rank, points)
        if value is not None and value > best_value:
            best_code, best_value = code, value
    return best_code


def heuristic_card(view: View, weights: Weights = DEFAULT_WEIGHTS) -> str:
    """The card to play, from what this seat knows (see :mod:`game.players.policy`)."""
    me = view.seat
    assert me is not None
    legal = [parse_card(code[1:]) for code in view.legal]
    hidden = view.called_card if holds_hidden_called(view) else None
    card = choose_card(
        me,
        legal,
        [c for _, c in view.current_trick],
        view.leader,
        trump_known(view),
        partner_probabilities(view),
        unseen_mask(view),
        known_voids(view),
        view.hand_sizes,
        follow_in_force(view),
        tricks_total(view) - view.trick_no,
        hidden if hidden is not None else -1,
        view.players,
        weights=weights,
    )
    return "c" + _card_code(card)


def _card_code(card: int) -> str:
    return card_code(card)


class HeuristicPlayer:
    """Rule-based player; ``noise`` > 0 makes it err like a casual player (``facile``)."""

    def __init__(
        self,
        seed: int = 0,
        noise: float = 0.0,
        margin: float = 0.25,
        name: str = "heuristic",
        weights: Weights = DEFAULT_WEIGHTS,
    ) -> None:
        self.seed = seed
        self.noise = noise
        self.margin = margin
        self.name = name
        self.weights = weights

    def choose(self, view: View) -> Action:
        return parse_action(self.choose_code(view))

    def choose_code(self, view: View) -> str:
        legal = view.legal
        if not legal:
            raise ValueError("no legal action for this view")
        if len(legal) == 1:
            return legal[0]
        rng = None
        if self.noise > 0:
            rng = decision_rng(self.seed, view.smazzata, view.version, view.seat or 0)
        if view.phase == "auction":
            return heuristic_bid(view, self.margin, rng)
        if view.phase == "declaration":
            return heuristic_declare(view)
        if rng is not None and rng.random() < self.noise:
            return legal[rng.randrange(len(legal))]
        if view.game == "briscola":
            return briscola.heuristic_code(view)
        return heuristic_card(view, self.weights)
