"""The ``forte`` player: determinised search (Perfect-Information Monte Carlo).

A strong player at the table reasons "where can the missing cards be?", imagines a few
plausible layouts, and picks the card that works out best across them. PIMC does exactly
that:

1. *Determinise.* Deal the cards the seat cannot see at random, consistently with
   everything public and with its own hand (:mod:`game.players.sampling`: cards played,
   proven voids, the called card's possible holders, what obbligato bids prove, the
   secret suit under al buio). Each deal is a *world*.
2. *Evaluate.* In every world, play each legal card and finish the smazzata with the
   heuristic policy for every seat (each seat still acting on its own knowledge in that
   world). The outcome is the seat's real score change (R73–R76, with the contract's
   multiplier and cappotto), plus a tiny bonus per card point of its side so that,
   when the contract is already decided, the search still prefers more points.
3. *Choose* the card with the best average over the worlds. All cards are evaluated on
   the same worlds (common random numbers), so the comparison is far sharper than the
   noise of each average.

In the auction the search estimates, with the same rollouts, the chance that its hand
makes each of the most promising calls (from the heuristic's hand model), blended with
that model as a prior, and bids by the heuristic's expected-score rule; at the
declaration it rolls out each legal suit and names the best.

*Budget.* ``budget`` counts simulated card plays per decision (the cost of a rollout is
the number of cards still to be played); the number of worlds is ``budget`` divided by
the cost of one world, between ``min_worlds`` and ``max_worlds`` (and at most
``auction_worlds``, unless None, in the auction, where a hand with no call near paying
off passes at once). A simulated card play costs about 5 µs here, the rollout policy
included, so the default (10,000) decides in about 50 ms (p95 87 ms of CPU over 81,535
decisions of ``python -m game.arena --deals 400 --seed 24 --a expert --b search
--cpu-clock``); with the simulator, the sampler and the inference compiled too
(setup.py), 22 ms (p95 40 ms over the 2,488 decisions of the same command with
``--deals 12 --seed 27``). The budget is counted, not timed, so a decision is a pure function of
the seed and the view; ``max_seconds`` optionally adds a wall-clock cap (that gives up
exact reproducibility when it triggers).
"""

from __future__ import annotations

import random
import time

from game.actions import Action, parse_action
from game.cards import RANK_CODES, Rank, card_code, parse_card
from game.players import briscola
from game.players.bidding import SOLO_SD, TEAM_SD, contract_ev, p_reach, target_of
from game.players.common import decision_rng
from game.players.heuristic import (
    BidEvaluator,
    HeuristicPlayer,
    heuristic_card,
    obbligato_suits,
)
from game.players.knowledge import absent_mask, tricks_total
from game.players.policy import DEFAULT_WEIGHTS, Weights
from game.players.sampling import Deal, InconsistentView, Sampler
from game.players.sim import World
from game.view import View

_DUE = int(Rank.DUE)
#: Weight of one card point of one's side, next to score points (breaks ties only).
POINT_BONUS = 0.01
#: A hand whose best call is this far below the bidding margin passes without rollouts.
HOPELESS = 1.0
#: Pseudo-count of the hand model's prior when blending it with rollout frequencies.
PRIOR_WEIGHT = 8.0


def _code_of(card: int) -> str:
    return "c" + card_code(card)


class SearchPlayer:
    """Determinised search player (see the module docstring)."""

    def __init__(
        self,
        seed: int = 0,
        budget: int = 10_000,
        min_worlds: int = 12,
        max_worlds: int = 400,
        max_seconds: float | None = None,
        bid_candidates: int = 3,
        auction_worlds: int | None = 50,
        margin: float = 0.25,
        name: str = "search",
        briscola_worlds: int = 40,
        weights: Weights = DEFAULT_WEIGHTS,
        own_weights: Weights | None = None,
        exact_tricks: int = 0,
    ) -> None:
        self.seed = seed
        self.budget = budget
        self.min_worlds = min_worlds
        self.max_worlds = max_worlds
        self.max_seconds = max_seconds
        self.bid_candidates = bid_candidates
        self.auction_worlds = auction_worlds
        self.margin = margin
        self.name = name
        #: Plain Briscola: sampled deals per decision (:mod:`game.players.briscola`).
        self.briscola_worlds = briscola_worlds
        #: A call is made when its expected score beats passing by this much.
        self.call_margin = margin
        #: the rollout policy's weights (:class:`game.players.policy.Weights`)
        self.weights = weights
        #: the weights of this seat's own later moves in its rollouts (default: ``weights``)
        self.own_weights = own_weights or weights
        #: chiamata's play: the rollouts' last tricks played exactly (``World.exact``)
        self.exact_tricks = exact_tricks
        self._heuristic = HeuristicPlayer(seed, margin=margin, weights=weights)
        #: Worlds used by the last decision (for tests and diagnostics).
        self.last_worlds = 0
        #: The last auction decision's chance of making each call it weighed (diagnostics).
        self.last_bid_p: dict[str, float] = {}

    # ------------------------------------------------------------------ entry point

    def choose(self, view: View) -> Action:
        legal = view.legal
        if not legal:
            raise ValueError("no legal action for this view")
        if len(legal) == 1:
            self.last_worlds = 0
            return parse_action(legal[0])
        rng = decision_rng(self.seed, view.smazzata, view.version, view.seat or 0)
        try:
            if view.game == "briscola":
                worlds = max(self.min_worlds, min(self.max_worlds, self.briscola_worlds))
                self.last_worlds = worlds
                return parse_action(briscola.search_code(view, rng, worlds))
            if view.phase == "play":
                return parse_action(self._play(view, rng))
            if view.options.a_punti and view.phase != "play":
                # a punti: the heuristic's bid model in points names the call and the card
                return self._heuristic.choose(view)
            if view.phase == "declaration":
                return parse_action(self._declare(view, rng))
            return parse_action(self._bid(view, rng))
        except InconsistentView:
            # Never expected (the property tests sample thousands of views), but a move
            # must always be made: fall back to the rule-based choice.
            self.last_worlds = 0
            return self._heuristic.choose(view)

    #: Whether every call is valued through :meth:`_bid_p` (the ``esperto`` player);
    #: ``forte`` keeps the hand model's value for the calls it does not roll out.
    calibrate_bids = False

    def _bid_p(self, p: float, points: int) -> float:
        """The chance of making a call for ``points``, from the blend of rollouts and
        hand model (``esperto`` corrects it for the auction's optimism)."""
        return p

    def _worlds_for(self, cost: int) -> int:
        return max(self.min_worlds, min(self.max_worlds, self.budget // max(1, cost)))

    def _deadline(self) -> float | None:
        if self.max_seconds is None:
            return None
        return time.perf_counter() + self.max_seconds

    def _sample(
        self, view: View, sampler: Sampler, rng: random.Random, cost: int, cap: int | None = None
    ) -> list[tuple[Deal, int]]:
        """The deals to play out, each with its multiplicity, for a rollout ``cost``
        (simulated card plays per deal) within the budget; at most ``cap`` deals.
        Here uniform over the deals the view allows (the ``esperto`` player weights
        them by inference)."""
        worlds = self._worlds_for(cost)
        if cap is not None:
            worlds = min(cap, worlds)
        return [(sampler.deal(rng), 1) for _ in range(worlds)]

    # ------------------------------------------------------------------ play

    def card_values(self, view: View, rng: random.Random) -> tuple[list[int], list[float]]:
        """The legal cards of a play view and the search's value of each: the mean over
        the sampled deals of the seat's score (plus the point bonus) when it plays it."""
        me = view.seat
        assert me is not None
        cards = [parse_card(code[1:]) for code in view.legal]
        remaining = sum(view.hand_sizes)
        sampler = Sampler(view)
        totals = [0.0] * len(cards)
        deadline = self._deadline()
        done = 0
        weight = 0
        for deal, count in self._sample(view, sampler, rng, len(cards) * remaining):
            world = sampler.world_of(deal)
            world.weights = self.weights
            world.own, world.own_weights = me, self.own_weights
            world.exact = self.exact_tricks
            for i, card in enumerate(cards):
                trial = world.copy()
                trial.play(card)
                trial.rollout()
                totals[i] += count * (
                    trial.seat_score(me) + POINT_BONUS * trial.side_points(me)
                )
            done += 1
            weight += count
            if deadline is not None and done >= self.min_worlds and time.perf_counter() > deadline:
                break
        self.last_worlds = done
        return cards, [total / weight for total in totals]

    def _play(self, view: View, rng: random.Random) -> str:
        cards, values = self.card_values(view, rng)
        # ties (within float noise) go to the heuristic's own choice
        preferred = heuristic_card(view, self.weights)
        best_i = max(
            range(len(cards)),
            key=lambda i: (round(values[i], 9), _code_of(cards[i]) == preferred),
        )
        return _code_of(cards[best_i])

    # ------------------------------------------------------------------ declaration

    def _contract_world(
        self, view: View, deal: Deal, suit: int | None, called: int | None, points: int, kind: str
    ) -> World:
        """A fresh play-phase world where this seat is chiamante of the given contract."""
        me = view.seat
        assert me is not None
        socio: int | None = None
        if called is not None:
            holder = next(s for s in range(view.players) if called in deal.hands[s])
            socio = None if holder == me else holder
        world = World(
            hands=[list(h) for h in deal.hands],
            trump=suit,
            trump_public=not view.options.al_buio,
            al_buio=view.options.al_buio,
            chiamante=me,
            socio=socio,
            called=called,
            revealed=False,
            kind=kind,
            points=points,
            follow_suit=view.options.follow_suit,
            tie=view.options.tie_goes_to_caller,
            cappotto=view.options.cappotto == "double",
            leader=view.leader,
            trick=[],
            trick_no=0,
            captured=[0] * view.players,
            played=absent_mask(view),  # the 4s with six players: never in a hand
            tricks_total=tricks_total(view),
            voids=[0] * view.players,
            weights=self.weights,
            morto=view.morto,
        )
        world.own, world.own_weights = me, self.own_weights
        return world

    def _declare(self, view: View, rng: random.Random) -> str:
        me = view.seat
        assert me is not None and view.contract is not None
        rank = view.contract_rank if view.contract_rank is not None else _DUE
        points = view.contract_points or 61
        suits = ["cdsb".index(code[1]) for code in view.legal]
        sampler = Sampler(view)
        totals = [0.0] * len(suits)
        deals = self._sample(view, sampler, rng, len(suits) * sum(view.hand_sizes))
        for deal, count in deals:
            for i, suit in enumerate(suits):
                world = self._contract_world(
                    view, deal, suit, suit * 10 + rank, points, view.contract
                )
                world.rollout()
                totals[i] += count * (world.seat_score(me) + POINT_BONUS * world.side_points(me))
        self.last_worlds = len(deals)
        best_i = max(range(len(suits)), key=lambda i: totals[i])
        return view.legal[best_i]

    # ------------------------------------------------------------------ auction

    def _bid(self, view: View, rng: random.Random) -> str:
        """Bid by expected score: the call :meth:`bid_values` values most, if it beats
        passing (``call_margin``)."""
        legal = view.legal
        if "M" in legal:
            return "M"
        values = self.bid_values(view, rng)
        best_code, best_value = ("P" if "P" in legal else legal[0]), self.call_margin
        for code, value in values.items():
            if value > best_value:
                best_code, best_value = code, value
        return best_code

    def bid_values(self, view: View, rng: random.Random) -> dict[str, float]:
        """The expected score of each call of an auction view, best model value first,
        with the chance of making the most promising ones from rollouts.

        The hand model ranks the calls; the few best (call, suit) pairs are then played
        out in sampled worlds with this seat as chiamante, and the observed frequency of
        reaching each target is blended with the model's estimate. Empty when no call
        comes near paying off (the hand passes without rolling anything out).
        """
        legal = view.legal
        evaluator = BidEvaluator(view)
        hand = view.hand
        tie = view.options.tie_goes_to_caller
        scored: list[tuple[float, str, int, int | None, int, str]] = []
        for code in legal:
            if code in ("P", "M"):
                continue
            if code == "K":
                scored.append((evaluator.code_ev(code), code, -1, None, 61, "carichi"))
                continue
            if code[0] == "r":
                rank, points, suits, kind = RANK_CODES.index(code[1:]), 61, [0, 1, 2, 3], "rank"
            elif code[0] == "t":
                rank, points, suits, kind = _DUE, int(code[1:]), [0, 1, 2, 3], "two"
            else:
                rank_code, pts = code[1:].split(".")
                rank, points = RANK_CODES.index(rank_code), int(pts)
                suits, kind = obbligato_suits(hand, rank), "obbligato"
            value, suit = evaluator.best_suit_ev(rank, points, suits)
            if value > -1e8:
                scored.append((value, code, suit, suit * 10 + rank, points, kind))
        self.last_worlds = 0
        self.last_bid_p = {}
        if not scored:
            return {}
        scored.sort(key=lambda item: -item[0])
        if scored[0][0] < self.margin - HOPELESS and "P" in legal:
            return {}  # no call comes near paying off: no need to roll anything out
        # distinct contracts to roll out: (suit, called card, kind), best model value first
        configs: list[tuple[int, int | None, str]] = []
        for _value, _code, suit, called, _points, kind in scored:
            key = (suit, called, kind)
            if key not in configs:
                configs.append(key)
            if len(configs) >= self.bid_candidates:
                break
        sampler = Sampler(view)
        results: dict[tuple[int, int | None, str], list[int]] = {key: [] for key in configs}
        deals = self._sample(view, sampler, rng, len(configs) * 40, self.auction_worlds)
        for deal, count in deals:
            for suit, called, kind in configs:
                trump = None if kind == "carichi" else suit
                world = self._contract_world(view, deal, trump, called, 61, kind)
                world.rollout()
                results[(suit, called, kind)].extend([world.caller_points()] * count)
        self.last_worlds = len(deals)
        values: dict[str, float] = {}
        for value, code, suit, called, points, kind in scored:
            key = (suit, called, kind)
            if key in results or self.calibrate_bids:
                target = target_of(points, tie)
                solo = kind == "carichi" or (called is not None and called in hand)
                if kind == "carichi":
                    prior = p_reach(_carichi_mean(evaluator), 16.0, target)
                else:
                    mean, _sd, _ = evaluator.mean(suit, called)
                    prior = p_reach(mean, SOLO_SD if solo else TEAM_SD, target)
                samples = results.get(key, [])
                hits = sum(1 for p in samples if p >= target)
                p = self._bid_p(
                    (hits + PRIOR_WEIGHT * prior) / (len(samples) + PRIOR_WEIGHT), points
                )
                self.last_bid_p[code] = p
                value = contract_ev(p, points, solo, view.players)
            values[code] = value
        return values


def _carichi_mean(evaluator: BidEvaluator) -> float:
    from game.players.bidding import expected_carichi_points

    return expected_carichi_points(evaluator.hand)
