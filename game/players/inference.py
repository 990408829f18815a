"""Inference: how likely is a sampled deal, given what every other seat did?

The sampler (:mod:`game.players.sampling`) deals the unseen cards uniformly among the
deals that the hard facts allow (voids, the called card, obbligato bids). A strong
player reads more than the hard facts: a seat that called the Asso for 61 has a long,
strong briscola; a seat that passed at the first call has a weak hand; a seat that
threw a liscio on its partner's trick when it could load a carico probably had no
carico. Following the inference of the Skat programs (Buro et al., IJCAI 2009; Solinas
et al., AAAI 2019), each sampled deal gets a weight, the likelihood of the observed
actions under a model of the players, and the search plays out deals drawn in
proportion to those weights (importance resampling).

*Auction.* The model is the heuristic's expected score of a call
(:class:`~game.players.heuristic.BidEvaluator`) for the seat's sampled hand: a seat
makes a call when it expects more than the margin from it, and passes when the call
standing in front of it is worth less than that to it. Each observed call or pass
contributes ``σ(±(ev − margin) / AUCTION_TEMP)``; for the chiamante, once the suit is
known, the expectation is the one of the contract actually declared.

*Play.* The deal is rewound to the start of the play (every seat's sampled hand plus
the cards it has played) and the tricks are replayed with the heuristic policy
(:mod:`game.players.policy`), each seat acting on its own knowledge in that world.
Every card an other seat chose among several contributes
``exp((value(card) − max value) / PLAY_TEMP)``, floored at ``PLAY_FLOOR``: a card far
from what the seat's hand suggests makes the deal less likely, never impossible.

Everything is a pure function of the view and the deal: no rule is re-implemented (the
replay uses the rollout simulator, :class:`~game.players.sim.World`).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Final, TypeVar

from game.cards import RANK_CODES
from game.players.heuristic import BidEvaluator
from game.players.knowledge import absent_mask, all_tricks
from game.players.sampling import Deal, Sampler
from game.players.sim import World
from game.view import View

#: What :func:`resample` draws (a chiamata :class:`Deal`, a plain-Briscola world…).
_Item = TypeVar("_Item")

#: Spread of the auction model, in expected score points (a bid is a noisy judgement).
AUCTION_TEMP: Final = 1.0
#: Spread of the play model, in the policy's card-point values.
PLAY_TEMP: Final = 8.0
#: Smallest likelihood of one observed card (the model is only a model).
PLAY_FLOOR: Final = 0.15
#: Smallest likelihood of one auction action.
AUCTION_FLOOR: Final = 0.02
#: The lowest call of the auction: a seat passing with no call standing refused it.
_FIRST_CALL: Final = "r" + RANK_CODES[0]


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


class Inference:
    """Weights sampled deals of one view (its facts read once)."""

    def __init__(
        self, view: View, sampler: Sampler, margin: float = 0.25, play: bool = True
    ) -> None:
        me = view.seat
        assert me is not None
        self.view = view
        self.sampler = sampler
        self.me = me
        self.margin = margin
        #: (seat, code, +1 call / -1 pass over ``code``) for every other seat's action
        self.auction: list[tuple[int, str, int]] = []
        last_call: dict[int, str] = {}
        standing: str | None = None
        for seat, code in view.auction:
            if code == "M":
                continue
            if code == "P":
                if seat != me and seat != view.morto:
                    self.auction.append((seat, standing or _FIRST_CALL, -1))
                continue
            standing = code
            last_call[seat] = code
        for seat, code in last_call.items():
            if seat != me:
                self.auction.append((seat, code, 1))
        #: the plays to replay (completed tricks and the current one), in order
        self.plays: list[tuple[int, int]] = []
        if play and view.phase == "play" and view.chiamante is not None:
            for trick in all_tricks(view):
                self.plays.extend(trick)
        self.replay = any(seat != me and seat != view.morto for seat, _ in self.plays)
        self.first_leader = self.plays[0][0] if self.plays else view.leader

    @property
    def replay_cost(self) -> int:
        """Simulated card plays of one deal's replay (for the search budget)."""
        return len(self.plays) if self.replay else 0

    # ------------------------------------------------------------------ auction

    def _auction_factor(self, deal: Deal) -> float:
        view = self.view
        weight = 1.0
        # one evaluator per seat: a seat's call and its pass share the hand's estimates
        evaluators: dict[int, BidEvaluator] = {}
        for seat, code, sign in self.auction:
            evaluator = evaluators.get(seat)
            if evaluator is None:
                evaluator = evaluators[seat] = BidEvaluator(
                    view, deal.hands[seat] + view.played[seat]
                )
            value = None
            if sign > 0 and seat == view.chiamante and deal.trump is not None:
                rank = view.contract_rank
                if rank is not None and deal.called is not None:
                    value = evaluator.ev(
                        deal.trump, deal.called % 10, view.contract_points or 61
                    )
            if value is None:
                value = evaluator.code_ev(code)
            if value < -1e8:
                continue  # the call does not apply to this hand (e.g. no obbligato suit)
            p = _sigmoid(sign * (value - self.margin) / AUCTION_TEMP)
            weight *= max(AUCTION_FLOOR, p)
        return weight

    # ------------------------------------------------------------------ play

    def _start_world(self, deal: Deal) -> World:
        """The deal rewound to the first card of the play."""
        view = self.view
        hands = tuple(deal.hands[s] + view.played[s] for s in range(view.players))
        world = self.sampler.world_of(Deal(hands, deal.trump, deal.called))
        world.trump_public = not view.options.al_buio or view.contract == "carichi"
        world.revealed = False
        world.leader = self.first_leader
        world.trick = []
        world.trick_no = 0
        world.captured = [0] * view.players
        world.played = absent_mask(view)
        world.voids = [0] * view.players
        return world

    def _play_factor(self, deal: Deal) -> float:
        world = self._start_world(deal)
        me, morto = self.me, self.view.morto
        log_weight = 0.0
        floor = math.log(PLAY_FLOOR)
        for seat, card in self.plays:
            if seat != me and seat != morto:
                legal = world.legal(seat)
                if card not in legal:
                    return PLAY_FLOOR ** 4  # not expected: the deal contradicts the play
                if len(legal) > 1:
                    values: list[float] = []
                    world.policy_card(values)
                    gap = (values[legal.index(card)] - max(values)) / PLAY_TEMP
                    log_weight += gap if gap > floor else floor
            world.play(card)
        return math.exp(log_weight)

    # ------------------------------------------------------------------ weights

    def weight(self, deal: Deal) -> float:
        """The (unnormalised) likelihood of the observed actions in this deal."""
        weight = self._auction_factor(deal) if self.auction else 1.0
        if self.replay:
            weight *= self._play_factor(deal)
        return weight


def weighted_deals(
    sampler: Sampler,
    inference: Inference,
    rng: random.Random,
    worlds: int,
    candidates: int,
) -> list[tuple[Deal, int]]:
    """``worlds`` deals drawn in proportion to their likelihood among ``candidates``
    uniform ones (systematic resampling); each distinct deal once, with its count."""
    deals = [sampler.deal(rng) for _ in range(max(worlds, candidates))]
    weights = [inference.weight(deal) for deal in deals]
    return resample(deals, weights, worlds, rng)


def resample(
    deals: Sequence[_Item], weights: Sequence[float], worlds: int, rng: random.Random
) -> list[tuple[_Item, int]]:
    """Systematic resampling: ``worlds`` draws, counts per distinct index."""
    total = sum(weights)
    if total <= 0.0:
        return [(deal, 1) for deal in deals[:worlds]]
    step = total / worlds
    point = rng.random() * step
    counts: dict[int, int] = {}
    acc = 0.0
    index = 0
    for _ in range(worlds):
        while index < len(weights) - 1 and acc + weights[index] <= point:
            acc += weights[index]
            index += 1
        counts[index] = counts.get(index, 0) + 1
        point += step
    return [(deals[i], count) for i, count in counts.items()]


__all__ = ["Inference", "resample", "weighted_deals"]
