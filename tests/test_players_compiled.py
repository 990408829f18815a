"""The computer players' compiled modules (setup.py: mypyc) behave as their source.

``pip install -e .`` compiles the modules of setup.py's ``COMPILED`` list
(``game.players.policy``, ``sim``, ``sampling`` and the others, read by
:data:`tests.core.compiled.COMPILED`) into C extensions when a C compiler is there. Each
compiled module is checked here against its own source, loaded as a plain Python module
beside it (:mod:`tests.core.compiled`): the same cards, the same values to the last bit,
the same bids, the same deals and weights, on the decisions of real games in every
variant. In a pure Python install (no compiler, or BRISCOLA_PURE_PYTHON=1) there is
nothing to compare and these tests are skipped.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from functools import partial

import pytest

from game import tricks
from game.cards import parse_card
from game.engine import Game
from game.options import TableOptions
from game.players import (
    bidding,
    briscola,
    champion,
    endgame,
    heuristic,
    inference,
    opponent,
    playmodel,
    sampling,
    sim,
)
from game.players.champion import ChampionPlayer
from game.players.expert import ExpertPlayer
from game.players.heuristic import HeuristicPlayer
from game.players.policy import TUNED_WEIGHTS
from game.players.sampling import Sampler
from game.simulate import parse_options
from game.view import View
from tests.core.compiled import (
    COMPILED,
    extension_of,
    is_compiled,
    needs_compiled,
    pure,
    source_of,
    use_sources,
)

VARIANTS = (
    [],
    ["follow_suit=on"],
    ["players=4"],
    ["players=6"],
    ["a_punti=on"],
    ["al_buio=on"],
    ["a_carichi=on", "follow_suit=on"],
    ["in_mano=off", "tie_goes_to_caller=on"],
)


def views(args: list[str], deals: int) -> Iterator[View]:
    """Every decision of rule-based self-play (auction, declaration, play)."""
    options = TableOptions.model_validate(parse_options([*args, "match_end=hands:1"]))
    for deal in range(deals):
        game = Game.new(options, random.Random(7000 + deal))
        players = [HeuristicPlayer(deal * 10 + s) for s in range(game.n)]
        while not game.is_over():
            seat = game.current_seat()
            assert seat is not None
            view = game.view(seat)
            yield view
            game.apply(seat, players[seat].choose(view))


def _source_world(view: View, deal: sampling.Deal) -> sim.World:
    """The world of ``deal`` built by the sources of the sampler and the simulator."""
    source = pure(sampling)
    world: sim.World = source.Sampler(view).world_of(
        source.Deal(deal.hands, deal.trump, deal.called)
    )
    assert type(world).__module__ == pure(sim).__name__
    return world


@needs_compiled
@pytest.mark.parametrize("args", VARIANTS, ids=lambda a: ",".join(a) or "default")
def test_the_compiled_rollouts_play_and_value_every_card_as_their_source(args: list[str]) -> None:
    """The compiled simulator and policy against their sources, card by card: the same
    card and the same values (bit for bit) at every turn of a rollout, the same result
    of a whole rollout, on worlds sampled the same way by the compiled and the source
    sampler."""
    rng = random.Random(11)
    source_rng = random.Random(11)
    source_sampling = pure(sampling)
    turns = 0
    for view in views(args, 2):
        if view.phase != "play" or not view.legal or view.seat == view.morto:
            continue
        sampler, source_sampler = Sampler(view), source_sampling.Sampler(view)
        for _ in range(3):
            deal = sampler.deal(rng)
            source_deal = source_sampler.deal(source_rng)
            assert (deal.hands, deal.trump, deal.called) == (
                source_deal.hands,
                source_deal.trump,
                source_deal.called,
            )
            world, source_world = sampler.world_of(deal), _source_world(view, deal)
            world.own, world.own_weights = view.seat, TUNED_WEIGHTS
            source_world.own, source_world.own_weights = view.seat, TUNED_WEIGHTS
            whole, source_whole = world.copy(), source_world.copy()
            whole.rollout()  # the compiled rollout asks for no values (the fast path)
            source_whole.rollout()
            assert whole.captured == source_whole.captured
            while not world.is_over():
                mine: list[float] = []
                theirs: list[float] = []
                card = world.policy_card(mine)
                assert source_world.policy_card(theirs) == card
                assert mine == theirs  # bit for bit: == on floats
                world.play(card)
                source_world.play(card)
                turns += 1
            assert world.captured == whole.captured == source_world.captured
            for seat in range(view.players):
                assert world.seat_score(seat) == source_world.seat_score(seat)
    assert turns > 500


@needs_compiled
@pytest.mark.parametrize("args", VARIANTS, ids=lambda a: ",".join(a) or "default")
def test_the_compiled_hand_model_and_heuristic_decide_as_their_source(args: list[str]) -> None:
    source = pure(heuristic)
    checked = 0
    for view in views(args, 3):
        if not view.legal or view.seat is None:
            continue
        mine = HeuristicPlayer(5).choose(view)
        assert source.HeuristicPlayer(5).choose(view) == mine, view
        if view.phase == "play":
            assert source.heuristic_card(view) == heuristic.heuristic_card(view)
            continue
        compiled_model = heuristic.BidEvaluator(view)
        source_model = source.BidEvaluator(view)
        for code in view.legal:
            assert source_model.code_ev(code) == compiled_model.code_ev(code), code
        # another seat's hand, as the inference reads the auction
        rng = random.Random(view.version)
        hand = tuple(rng.sample(range(40), len(view.hand)))
        for code in view.legal:
            assert source.BidEvaluator(view, hand).code_ev(code) == heuristic.BidEvaluator(
                view, hand
            ).code_ev(code), (hand, code)
        checked += 1
    assert checked > 0


@needs_compiled
def test_the_compiled_bid_model_matches_its_source_on_random_hands() -> None:
    source = pure(bidding)
    rng = random.Random(3)
    for _ in range(2000):
        hand = tuple(rng.sample(range(40), rng.randint(1, 10)))
        suit = rng.randrange(4)
        called = rng.choice([None, rng.randrange(40)])
        assert source.features(hand, suit, called) == bidding.features(hand, suit, called)
        assert source.expected_points(hand, suit, called) == bidding.expected_points(
            hand, suit, called
        )
        assert source.expected_carichi_points(hand) == bidding.expected_carichi_points(hand)
        mean = rng.uniform(0, 120)
        target = rng.randint(40, 120)
        assert source.p_reach(mean, 19.5, target) == bidding.p_reach(mean, 19.5, target)


@needs_compiled
def test_an_esperto_decision_is_the_same_compiled_or_not(monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole search, on a few decisions: the sources swapped in for the compiled
    (the sampler, the inference's weights, the rollouts, the tie-break)."""
    play = [v for v in views([], 1) if v.phase == "play" and len(v.legal) > 1][:4]
    assert len(play) == 4
    compiled = [ExpertPlayer(seed=2, budget=4000).choose(v) for v in play]
    use_sources(monkeypatch)
    source_inference = pure(inference)
    weighed = 0
    real_weight = source_inference.Inference.weight

    def weight(self: inference.Inference, deal: sampling.Deal) -> float:
        nonlocal weighed
        weighed += 1
        return float(real_weight(self, deal))

    monkeypatch.setattr(source_inference.Inference, "weight", weight)
    assert [ExpertPlayer(seed=2, budget=4000).choose(v) for v in play] == compiled
    assert weighed > 0  # the sources were used


@needs_compiled
@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_compiled_briscola_rollouts_and_endgames_match_their_sources(players: int) -> None:
    """Plain Briscola: the sampled worlds, every card's rollout (the rule-based and the
    policy's, with and without the exact last tricks of two and three players) and the
    exact endgames' values of the compiled ``briscola`` and ``endgame`` equal their
    sources', on every decision of two rule-based games."""
    source, source_endgame = pure(briscola), pure(endgame)
    policy_weights = champion.ROLLOUT_WEIGHTS
    rng, source_rng = random.Random(5), random.Random(5)
    rollouts = solved = 0
    for view in views(["game=briscola", f"players={players}"], 2):
        if len(view.legal) < 2 or view.seat is None or view.trump is None:
            continue
        me = view.seat
        hands, stock = briscola.sample_world(view, rng)
        assert source.sample_world(view, source_rng) == (hands, stock)
        for card in [parse_card(code[1:]) for code in view.legal]:
            for exact, rollout_weights in ((True, policy_weights), (True, None), (False, None)):
                compiled_result, source_result = (
                    module.rollout(
                        view,
                        [list(h) for h in hands],
                        list(stock),
                        card,
                        me,
                        {} if exact and players == 2 else None,
                        rollout_weights,
                        three={} if exact and players == 3 else None,
                    )
                    for module in (briscola, source)
                )
                assert compiled_result == source_result
                rollouts += 1
        if players == 2 and view.stock_count <= 4 and view.face_up is not None:
            # the exact endgame, the opponent holding the first cards it may hold
            pool = sorted(champion.unseen_cards(view))
            need = view.hand_sizes[1 - me]
            theirs, hidden = pool[:need], pool[need:]
            trick = [c for _, c in view.current_trick]
            mine = champion.side_points(view, me)
            utility = partial(champion.outcome, players=2)
            compiled_values = endgame.DrawSolver(view.trump, view.face_up, utility).card_values(
                view.hand, theirs, hidden, trick, mine
            )
            source_values = source_endgame.DrawSolver(
                view.trump, view.face_up, utility
            ).card_values(view.hand, theirs, hidden, trick, mine)
            assert compiled_values == source_values
            solved += 1
    assert rollouts > 50
    assert solved > 0 or players != 2


@needs_compiled
@pytest.mark.parametrize("players", [2, 4])
def test_a_campione_briscola_decision_is_the_same_compiled_or_not(
    players: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Plain Briscola's search (the rollouts, the exact last tricks, the exact endgames)
    on the sources of ``briscola`` and ``endgame`` decides as the compiled modules do."""
    decisions = [v for v in views(["game=briscola", f"players={players}"], 1) if len(v.legal) > 1]
    # three of the middle game, three of the exact endgames (stock 4 or less; four
    # players: once the stock is empty)
    middle = [v for v in decisions if v.stock_count > 10][::4][:3]
    exact = [v for v in decisions if v.stock_count <= (4 if players == 2 else 0)][::2][:3]
    assert len(middle) == len(exact) == 3
    chosen = middle + exact
    compiled = [ChampionPlayer(seed=2, worlds=60).choose(v) for v in chosen]
    source_briscola, source_endgame = pure(briscola), pure(endgame)
    monkeypatch.setattr(champion, "briscola", source_briscola)
    monkeypatch.setattr(champion, "resample", pure(inference).resample)
    monkeypatch.setattr(champion, "OpponentModel", pure(opponent).OpponentModel)
    for name in ("DrawSolver", "Endgame", "card_values"):
        monkeypatch.setattr(champion, name, getattr(source_endgame, name))
    rollouts = 0
    real_rollout = source_briscola.rollout

    def rollout(*args: object, **kwargs: object) -> tuple[int, int]:
        nonlocal rollouts
        rollouts += 1
        return real_rollout(*args, **kwargs)  # type: ignore[no-any-return]

    monkeypatch.setattr(source_briscola, "rollout", rollout)
    assert [ChampionPlayer(seed=2, worlds=60).choose(v) for v in chosen] == compiled
    assert rollouts > 0  # the sources were used


@needs_compiled
def test_the_compiled_opponent_and_play_models_weigh_every_hand_as_their_source() -> None:
    """Two-player Briscola: the compiled opponent model's likelihood of the opponent's
    plays (both kinds of player, and each alone) and its chances of each answer to a
    lead, the compiled rollout given that answer, and the compiled play model's chances
    and features equal their sources' to the last bit, on sampled hands at every
    decision of a rule-based game."""
    source, source_model = pure(opponent), pure(playmodel)
    rng = random.Random(13)
    weighed = rows = 0
    for view in views(["game=briscola", "players=2"], 1):
        if view.seat is None or view.trump is None or view.face_up is None or not view.legal:
            continue
        opp = 1 - view.seat
        hands = [briscola.sample_world(view, rng)[0][opp] for _ in range(8)]
        for kwargs in (
            {"depth": 20},
            {"depth": 4, "share": 1.0},
            {"depth": 20, "share": 0.0},
            {"depth": 20, "theta": None},
        ):
            compiled_model = opponent.OpponentModel(view, **kwargs)
            source_opponent = source.OpponentModel(view, **kwargs)
            for hand in hands:
                value = compiled_model.likelihood(hand)
                assert source_opponent.likelihood(hand) == value  # bit for bit
                weighed += 1 if value else 0
                if hand and view.hand:
                    led, stock = view.hand[0], view.stock_count
                    assert source_opponent.reply_chances(
                        hand, led, stock
                    ) == compiled_model.reply_chances(hand, led, stock)
        if not view.current_trick and view.stock_count > 0 and len(hands[0]) > 1:
            # the rollout given the opponent's answer to the lead
            world, stock_order = briscola.sample_world(view, rng)
            first, reply = view.hand[-1], world[opp][-1]
            for weights in (champion.ROLLOUT_WEIGHTS, None):
                assert pure(briscola).rollout(
                    view, [list(h) for h in world], list(stock_order), first, view.seat,
                    {}, weights, reply,
                ) == briscola.rollout(
                    view, [list(h) for h in world], list(stock_order), first, view.seat,
                    {}, weights, reply,
                )  # fmt: skip
        unseen = ((1 << 40) - 1) & ~(sum(1 << c for c in view.hand) | (1 << view.face_up))
        trick = [c for _, c in view.current_trick]
        for hand in [tuple(view.hand), *(tuple(h) for h in hands if h)]:
            stock = view.stock_count
            assert source_model.probabilities(
                hand, trick, view.trump, unseen, stock
            ) == playmodel.probabilities(hand, trick, view.trump, unseen, stock)
            for card in hand:
                assert source_model.features(
                    card, hand, trick, view.trump, unseen, stock, hand[0]
                ) == playmodel.features(card, hand, trick, view.trump, unseen, stock, hand[0])
                rows += 1
    assert weighed > 500 and rows > 500


@needs_compiled
def test_the_compiled_trick_winner_is_its_source() -> None:
    """Who takes a trick (R59): the compiled ``beats`` of every pair of cards under every
    trump (and none), and the compiled winner of random tricks of two to six cards, as
    lists and tuples, equal their source's; ``game.cards`` re-exports the compiled one."""
    from game import cards

    source = pure(tricks)
    assert is_compiled(tricks) and cards.trick_winner_index is tricks.trick_winner_index
    for trump in (0, 1, 2, 3, None):
        for best in range(40):
            for card in range(40):
                assert tricks.beats(card, best, trump) == source.beats(card, best, trump)
    rng = random.Random(5)
    for _ in range(5000):
        trick = rng.sample(range(40), rng.randint(2, 6))
        trump = rng.choice((0, 1, 2, 3, None))
        winner = source.trick_winner_index(trick, trump)
        assert tricks.trick_winner_index(trick, trump) == winner
        assert tricks.trick_winner_index(tuple(trick), trump) == winner


def test_a_compiled_module_is_not_older_than_its_source() -> None:
    """A C extension built from an older source would shadow the edits: rebuild it."""
    for module in COMPILED:
        if is_compiled(module):
            built = extension_of(module).stat().st_mtime
            assert built >= source_of(module).stat().st_mtime, (
                f"{module.__name__} was compiled before its source last changed: "
                "run `pip install -e .` again (or delete the .so to run the source)"
            )
