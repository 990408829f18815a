"""The computer players' compiled modules (setup.py: mypyc) behave as their source.

``pip install -e .`` compiles ``game.players.policy``, ``bidding`` and ``heuristic`` into
C extensions when a C compiler is there. Each compiled module is checked here against its
own source, loaded as a plain Python module beside it: the same cards, the same values to
the last bit, the same bids, on the decisions of real games in every variant. In a pure
Python install (no compiler, or BRISCOLA_PURE_PYTHON=1) there is nothing to compare and
these tests are skipped.
"""

from __future__ import annotations

import importlib.util
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from game.engine import Game
from game.options import TableOptions
from game.players import bidding, heuristic, inference, policy, search, sim
from game.players.expert import ExpertPlayer
from game.players.heuristic import HeuristicPlayer
from game.players.sampling import Sampler
from game.simulate import parse_options
from game.view import View

COMPILED = (policy, bidding, heuristic)
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


#: The players' package in this source tree (absolute: a test may change directory).
PACKAGE = Path(__file__).resolve().parent.parent / "game" / "players"


def is_compiled(module: ModuleType) -> bool:
    return not (module.__file__ or "").endswith(".py")


def source_of(module: ModuleType) -> Path:
    return PACKAGE / (module.__name__.rsplit(".", 1)[1] + ".py")


def extension_of(module: ModuleType) -> Path:
    return PACKAGE / Path(module.__file__ or "").name


def pure(module: ModuleType) -> ModuleType:
    """The module's source, imported as plain Python under another name; what it imports
    from the other compiled modules is their source too."""
    name = "pure_" + module.__name__.replace(".", "_")
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, source_of(module))
    assert spec is not None and spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[name] = loaded
    spec.loader.exec_module(loaded)
    assert loaded.__file__ and loaded.__file__.endswith(".py")
    for other in COMPILED:
        if other is module:
            continue
        for attribute, value in list(vars(loaded).items()):
            if callable(value) and getattr(value, "__module__", None) == other.__name__:
                setattr(loaded, attribute, getattr(pure(other), attribute))
    return loaded


needs_compiled = pytest.mark.skipif(
    not all(map(is_compiled, COMPILED)), reason="a pure-Python install: nothing compiled"
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


@needs_compiled
@pytest.mark.parametrize("args", VARIANTS, ids=lambda a: ",".join(a) or "default")
def test_the_compiled_rollout_policy_plays_and_values_every_card_as_its_source(
    args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    reference = pure(policy).choose_card
    compiled = policy.choose_card
    calls = 0

    def both(*call: Any) -> int:
        nonlocal calls
        values: list[float] | None = call[13] if len(call) > 13 else None
        mine: list[float] | None = None if values is None else []
        theirs: list[float] | None = None if values is None else []
        head = call[:13]
        tail = call[14:]
        card = compiled(*head, mine, *tail)
        assert reference(*head, theirs, *tail) == card, call
        assert mine == theirs, call  # bit for bit: == on floats
        if values is not None and mine is not None:
            values.extend(mine)
        calls += 1
        return card

    monkeypatch.setattr(sim, "choose_card", both)
    rng = random.Random(11)
    for view in views(args, 2):
        if view.phase != "play" or not view.legal or view.seat == view.morto:
            continue
        sampler = Sampler(view)
        for _ in range(3):
            world = sampler.world_of(sampler.deal(rng))
            values: list[float] = []
            world.policy_card(values)  # with values, as the inference reads them
            world.rollout()
    assert calls > 500


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
            assert (
                source.BidEvaluator(view, hand).code_ev(code)
                == heuristic.BidEvaluator(view, hand).code_ev(code)
            ), (hand, code)
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
    """The whole search, on a few decisions: the sources swapped in for the compiled."""
    play = [v for v in views([], 1) if v.phase == "play" and len(v.legal) > 1][:4]
    assert len(play) == 4
    compiled = [ExpertPlayer(seed=2, budget=4000).choose(v) for v in play]
    # where a play decision calls into the compiled modules: the rollouts, the
    # tie-break and the inference's reading of the auction (the source heuristic runs
    # on the source bid model and policy)
    source_policy, source_heuristic = pure(policy), pure(heuristic)
    monkeypatch.setattr(sim, "choose_card", source_policy.choose_card)
    monkeypatch.setattr(search, "heuristic_card", source_heuristic.heuristic_card)
    monkeypatch.setattr(inference, "BidEvaluator", source_heuristic.BidEvaluator)
    assert [ExpertPlayer(seed=2, budget=4000).choose(v) for v in play] == compiled


def test_a_compiled_module_is_not_older_than_its_source() -> None:
    """A C extension built from an older source would shadow the edits: rebuild it."""
    for module in COMPILED:
        if is_compiled(module):
            built = extension_of(module).stat().st_mtime
            assert built >= source_of(module).stat().st_mtime, (
                f"{module.__name__} was compiled before its source last changed: "
                "run `pip install -e .` again (or delete the .so to run the source)"
            )
