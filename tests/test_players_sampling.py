"""The search player's sampled worlds are consistent with the view (property tests).

A sampled deal is *consistent* if a game dealt those cards, replaying the public actions
of the view (auction, declaration, card plays) with every action verified by the engine,
shows the viewing seat exactly the same view. That covers the own hand, hand sizes,
played cards, voids under following (an illegal discard would be refused), the obbligato
bids (refused without the 2 of the suit), the declaration (refused for a suit the
chiamante may not name) and who may hold the called card.
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from game.engine import Game
from game.options import TableOptions
from game.players.sampling import Sampler
from tests.core.helpers import random_moves
from tests.test_players import ALL_COMBOS, comparable, rebuild


def _random_state(combo: int | dict[str, bool], seed: int, moves: int) -> Game:
    flags = ALL_COMBOS[combo] if isinstance(combo, int) else combo
    options = TableOptions(**flags, match_end="hands:1")
    return random_moves(Game.new(options, random.Random(seed)), random.Random(seed ^ 0x5EED), moves)


@settings(max_examples=250, deadline=None)
@given(
    combo=st.integers(0, len(ALL_COMBOS) - 1),
    seed=st.integers(0, 2**32 - 1),
    moves=st.integers(0, 60),
    viewer=st.integers(0, 4),
)
def test_sampled_worlds_reproduce_the_view(combo: int, seed: int, moves: int, viewer: int) -> None:
    game = _random_state(combo, seed, moves)
    if game.is_over():
        return
    view = game.view(viewer)
    sampler = Sampler(view)
    rng = random.Random(seed)
    expected = comparable(view)
    for _ in range(4):
        deal = sampler.deal(rng)
        assert sorted(deal.hands[viewer]) == sorted(view.hand)
        assert [len(h) for h in deal.hands] == list(view.hand_sizes)
        everything = [c for h in deal.hands for c in h] + [c for p in view.played for c in p]
        assert sorted(everything) == list(range(40))
        twin = rebuild(view, deal.hands, deal.trump).view(viewer)
        assert comparable(twin) == expected
        if view.phase == "play":
            world = sampler.world_of(deal)
            assert world.trick_no == view.trick_no
            assert world.trump == (deal.trump if view.contract != "carichi" else None)
            if view.socio is not None and view.partner_revealed:
                assert world.socio == view.socio


def test_sampling_covers_hidden_information() -> None:
    """The samples really vary: unseen cards move between seats across worlds."""
    game = _random_state(0, 3, 0)
    view = game.view(0)
    sampler = Sampler(view)
    rng = random.Random(1)
    holders = {sampler.deal(rng).hands[1] for _ in range(20)}
    assert len(holders) > 10


def test_obbligato_contract_places_the_2_with_the_chiamante() -> None:
    """R34/R48: after "r obbligato" in suit S, the chiamante was dealt the 2 of S."""
    checked = 0
    for seed in range(400):
        game = _random_state({"in_mano": False}, seed, 12)
        if game.phase.value != "play" or game.contract != "obbligato":
            continue
        chiamante = game.chiamante
        assert chiamante is not None and game.trump is not None
        viewer = (chiamante + 1) % 5
        view = game.view(viewer)
        due = game.trump * 10 + 9
        if due in view.hand or any(due in p for p in view.played):
            continue
        sampler = Sampler(view)
        rng = random.Random(seed)
        for _ in range(5):
            assert due in sampler.deal(rng).hands[chiamante]
        checked += 1
    assert checked >= 3
