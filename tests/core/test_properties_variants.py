"""Property tests over every game × table size × option combination (issue 12).

Each random smazzata checks: every card of the deck in play dealt and played exactly
once, 120 card points, the tricks of R55/R94/R106, the trick winner against an oracle,
scores zero-sum (R76, R97) or R92's sum with il morto, views that never leak (il
morto's hand included, R87, R125; R107 only to partners), and the JSON round trip and
replay at every step.
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from game import Game, TableOptions
from game.cards import CARD_POINTS
from game.events import (
    BriscolaScored,
    CardPlayed,
    CardsDrawn,
    Dealt,
    SmazzataScored,
    StockLaid,
    TrickWon,
)
from game.scoring import score_contract
from tests.core.helpers import BOOLEAN_OPTIONS, VARIANTS, check_legality, play_random
from tests.core.test_properties import oracle_winner

#: Chiamata option combinations worth crossing with the table sizes (a sample of the
#: 128 on/off combinations: each option on and off, the interacting pairs together).
CHIAMATA_COMBOS: list[dict[str, bool]] = [
    {},
    {name: True for name in BOOLEAN_OPTIONS},
    {name: False for name in BOOLEAN_OPTIONS},
    {"monte": True, "a_carichi": True},
    {"al_buio": True, "follow_suit": True},
    {"in_mano": False, "chiamata_obbligata": False},
    {"tie_goes_to_caller": True, "a_carichi": True, "in_mano": False},
    {"al_buio": True, "a_carichi": True, "monte": True},
]

ALL_TABLES: list[dict[str, Any]] = [
    {**variant, **combo}
    for variant in [{"players": 5}, *VARIANTS]
    for combo in (CHIAMATA_COMBOS if variant.get("game") != "briscola" else CHIAMATA_COMBOS[:3])
]


def expected_tricks(options: TableOptions) -> int:
    """R55, R94, R106."""
    if options.game == "briscola":
        return {2: 20, 3: 13, 4: 10}[options.players]
    return 6 if options.players == 6 else 8


def check_smazzata(events: list, game: Game) -> None:
    options = game.options
    deck = sorted(game.rules.deck)
    dealt = next(e for e in events if isinstance(e, Dealt))
    stock = next((e for e in events if isinstance(e, StockLaid)), None)
    dealt_cards = [c for hand in dealt.hands for c in hand] + list(stock.stock if stock else ())
    assert sorted(dealt_cards) == deck  # every card dealt once
    received = {s: list(h) for s, h in enumerate(dealt.hands)}
    for event in events:
        if isinstance(event, CardsDrawn):
            for seat, card in event.draws:
                received[seat].append(card)
    played = [e for e in events if isinstance(e, CardPlayed)]
    assert sorted(e.card for e in played) == deck  # every card played once
    assert all(e.card in received[e.seat] for e in played)
    tricks = [e for e in events if isinstance(e, TrickWon)]
    assert len(tricks) == expected_tricks(options)
    assert sum(t.points for t in tricks) == sum(CARD_POINTS[c] for c in deck) == 120
    taken = [0] * game.n
    for trick in tricks:
        taken[trick.seat] += trick.points
    if options.game == "briscola":
        scored = next(e for e in events if isinstance(e, BriscolaScored))
        for trick in tricks:
            trump = stock.face_up // 10 if stock else None
            assert trick.seat == (trick.leader + oracle_winner(list(trick.cards), trump)) % game.n
        assert scored.points == tuple(sum(taken[s] for s in side) for side in scored.sides)
        assert sum(scored.points) == 120
        return
    scored = next(e for e in events if isinstance(e, SmazzataScored))
    for trick in tricks:
        assert (
            trick.seat == (trick.leader + oracle_winner(list(trick.cards), scored.trump)) % game.n
        )
    caller = taken[scored.chiamante] + (taken[scored.socio] if scored.socio is not None else 0)
    assert caller == scored.caller_points
    morto = game.morto
    if morto is None:
        assert sum(scored.deltas) == 0  # R76, R97
    else:
        # R92: the humans' changes add up to minus the morto's share of the 5-seat score.
        assert scored.deltas[morto] == 0
        result = score_contract(
            kind=scored.contract,
            points=scored.points,
            in_mano=scored.in_mano,
            caller_points=scored.caller_points,
            players=5,
            tie_goes_to_caller=options.tie_goes_to_caller,
            cappotto=options.cappotto,
        )
        share = result.socio if morto == scored.socio else result.each_opponent
        assert share is not None
        assert sum(scored.deltas) == -share


def check_views(game: Game) -> None:
    """No view shows a card its seat may not know; il morto's hand is in none (R125)."""
    played = {c for hand in game.played_by for c in hand}
    for seat in [None, *range(game.n)]:
        view = game.view(seat)
        own = set(game.hands[seat]) if seat is not None and seat != game.morto else set()
        seen = set(view.hand) | {c for _, c in view.current_trick}
        seen |= {c for t in view.tricks for _, c in t.plays} | {c for p in view.played for c in p}
        allowed = own | played
        if view.partner_hand is not None:
            assert seat is not None and game.n == 4 and game.rules.sides
            assert game.stock == [] and view.stock_count == 0  # R124: after the last draw
            partner = (seat + 2) % 4
            assert set(view.partner_hand) == set(game.hands[partner])
            allowed |= set(game.hands[partner])
        if view.face_up is not None:
            allowed.add(view.face_up)  # R101: public for the whole smazzata
        assert seen <= allowed, (seat, seen - allowed)
        if game.morto is not None:
            assert not set(game.hands[game.morto]) & (seen - played)
            if seat == game.morto:
                assert view.hand == () and view.legal == ()
        assert view.stock_count == len(game.stock)


def play(options: TableOptions, seed: int, *, views: bool, json: bool, legality: bool) -> Game:
    def before_move(game: Game, rng: random.Random) -> None:
        if views:
            check_views(game)
        if legality:
            check_legality(game, rng, sample=30)

    return play_random(
        options, seed, before_move=before_move, after_smazzata=check_smazzata, json=json
    )


def options_for(table: dict[str, Any], length: int) -> TableOptions:
    if table.get("game") == "briscola":
        return TableOptions.model_validate({**table, "briscola_match": f"rounds:{length}"})
    return TableOptions.model_validate({**table, "match_end": f"hands:{length}"})


def test_random_smazzate_of_every_variant_keep_the_invariants() -> None:
    played = 0
    for index, table in enumerate(ALL_TABLES):
        game = play(options_for(table, 3), index, views=False, json=False, legality=False)
        played += game.scored_count
    assert played >= 3 * len(ALL_TABLES)


def test_views_never_leak_in_any_variant() -> None:
    for index, table in enumerate(ALL_TABLES):
        play(options_for(table, 1), 500 + index, views=True, json=False, legality=True)


@settings(max_examples=40, deadline=None)
@given(table=st.sampled_from(ALL_TABLES), seed=st.integers(0, 2**32))
def test_json_round_trip_at_every_step_in_every_variant(table: dict, seed: int) -> None:
    play(options_for(table, 1), seed, views=False, json=True, legality=False)


@settings(max_examples=40, deadline=None)
@given(table=st.sampled_from(ALL_TABLES), seed=st.integers(0, 2**32))
def test_seed_and_action_log_replay_every_variant(table: dict, seed: int) -> None:
    options = options_for(table, 2)
    game = play(options, seed, views=False, json=False, legality=False)
    replayed = Game.replay(options, seed, game.actions)
    assert replayed.history == game.history and replayed.totals == game.totals
    # and every prefix of the log replays to the same history prefix
    cut = len(game.actions) // 2
    half = Game.replay(options, seed, game.actions[:cut])
    assert game.history[: len(half.history)] == half.history
