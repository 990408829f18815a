"""Computer players in every variant: they play through the same View, legally, to the end."""

from __future__ import annotations

import random

import pytest

from game import Game, TableOptions
from game.events import BriscolaScored, SmazzataScored
from game.players import create_player
from game.players.briscola import choose_card, sample_world
from game.players.heuristic import HeuristicPlayer
from game.players.search import SearchPlayer
from tests.core.helpers import VARIANTS, briscola, cards


def small_search(seed: int) -> SearchPlayer:
    return SearchPlayer(
        seed, budget=400, min_worlds=2, max_worlds=4, auction_worlds=4, briscola_worlds=4
    )


@pytest.mark.parametrize("variant", VARIANTS, ids=[str(v) for v in VARIANTS])
def test_every_player_kind_plays_every_variant_to_the_end(variant: dict) -> None:
    options = TableOptions.model_validate(
        {**variant, "match_end": "hands:1", "briscola_match": "wins:1"}
    )
    game = Game.new(options, random.Random(11))
    kinds = ["random", "heuristic", "search"]
    players = [
        small_search(s) if kinds[s % 3] == "search" else create_player(kinds[s % 3], s)
        for s in range(game.n)
    ]
    steps = 0
    while not game.is_over() and steps < 2000:
        seat = game.current_seat()
        assert seat is not None and seat != game.morto
        view = game.view(seat)
        action = players[seat].choose(view)
        assert action.code in view.legal
        game.apply(seat, action)
        steps += 1
    assert game.is_over()
    assert any(isinstance(e, SmazzataScored | BriscolaScored) for e in game.history)


def test_heuristic_bids_points_under_a_punti_instead_of_always_passing() -> None:
    bids = 0
    for seed in range(10):
        game = Game.new(TableOptions(a_punti=True, match_end="hands:1"), random.Random(seed))
        players = [HeuristicPlayer(s) for s in range(5)]
        while not game.is_over():
            seat = game.current_seat()
            game.apply(seat, players[seat].choose(game.view(seat)))
        bids += sum(1 for e in game.history if e.kind == "auction_won")
    assert bids >= 10  # every match ends: some hand always calls (R44)


def test_briscola_heuristic_takes_a_carico_cheaply_and_loads_the_partner() -> None:
    ac, tc, _, two_d, five_s = cards("Ac 3c 7c 2d 5s")
    # an opponent led the 3 of Coppe; holding Ac, the heuristic takes it with the Asso
    assert choose_card([ac, two_d, five_s], [tc], 1, 0, 2, 1, None) == ac
    # with 4 players the partner (seat 0) leads an unbeatable trump: load the Asso
    ad = cards("Ad")[0]
    assert choose_card([ac, five_s], [ad, cards("4c")[0]], 2, 0, 4, 1, 0) == ac


def test_briscola_search_worlds_respect_the_view() -> None:
    game = briscola(players=4)
    rng = random.Random(1)
    while game.stock:
        seat = game.current_seat()
        game.apply(seat, game.legal_actions(seat)[0])
    view = game.view(0)
    hands, stock = sample_world(view, rng)
    assert stock == []
    assert hands[0] == list(view.hand) and hands[2] == list(view.partner_hand or ())
    assert [len(h) for h in hands] == list(view.hand_sizes)
    unseen = {c for seat in (1, 3) for c in game.hands[seat]}
    assert {c for seat in (1, 3) for c in hands[seat]} == unseen
    if view.face_up_holder not in (None, 0, 2) and view.face_up in unseen:
        assert view.face_up in hands[view.face_up_holder]
