"""The exact endgame solver of plain Briscola and the ``campione`` player built on it."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from game import Game, TableOptions
from game.actions import PlayCard
from game.arena import run
from game.events import BriscolaScored
from game.players import Player, create_player
from game.players.champion import ChampionPlayer, exact_worlds, outcome
from game.players.endgame import (
    DrawSolver,
    Endgame,
    brute_force,
    card_values,
    last_tricks_three,
    solve,
)
from tests.core.helpers import VARIANTS, side_minimax


def _options(players: int) -> TableOptions:
    return TableOptions.model_validate(
        {"game": "briscola", "players": players, "match_end": "hands:1", "briscola_match": "wins:1"}
    )


def _random_position(seed: int, players: int, stock_left: int) -> Game:
    """A game of random legal plays stopped at a random card once at most
    ``stock_left`` cards are left to draw."""
    rng = random.Random(seed)
    game = Game.new(_options(players), rng)
    while len(game.stock) > stock_left or rng.random() < 0.3:
        if game.is_over() or game.scored_count:
            break
        seat = game.current_seat()
        assert seat is not None
        game.apply(seat, rng.choice(game.legal_actions(seat)))
    return game


def _endgame_of(game: Game, side_index: int) -> tuple[Endgame, int]:
    sides = game.rules.sides
    side_of = [next(i for i, s in enumerate(sides) if seat in s) for seat in range(game.n)]
    taken = sum(game.captured[s] for s in sides[side_index])
    assert game.trump is not None
    endgame = Endgame(
        [list(h) for h in game.hands],
        list(game.stock),
        game.leader,
        list(game.trick),
        game.trump,
        side_of,
        side_index,
    )
    return endgame, taken


@pytest.mark.parametrize("stock_left", [0, 2])
def test_the_solver_equals_minimax_through_the_engine_on_random_two_player_endgames(
    stock_left: int,
) -> None:
    positions = 0
    for seed in range(150 if stock_left == 0 else 45):
        game = _random_position(seed, 2, stock_left)
        if game.scored_count or game.is_over():
            continue
        side = seed % 2
        endgame, taken = _endgame_of(game, side)
        assert endgame.remaining() + sum(game.captured) == 120
        expected = side_minimax(game, tuple(game.rules.sides[side]))
        assert taken + solve(endgame) == expected
        assert taken + brute_force(endgame) == expected
        positions += 1
    assert positions >= (100 if stock_left == 0 else 30)


def test_the_solver_equals_brute_force_with_four_players_and_a_longer_stock() -> None:
    rng = random.Random(5)
    for _ in range(120):
        deck = list(range(40))
        rng.shuffle(deck)
        players = rng.choice((2, 4))
        size = rng.randint(1, 3) if players == 4 else 3
        hands = [deck[i * size : (i + 1) * size] for i in range(players)]
        drawn = 2 * rng.randint(0, 2) if players == 2 else 0
        stock = deck[players * size : players * size + drawn]
        endgame = Endgame(
            hands,
            stock,
            rng.randrange(players),
            [],
            rng.randrange(4),
            [s % 2 for s in range(players)],
            rng.randrange(2),
        )
        value = solve(endgame)
        assert value == brute_force(endgame)
        values = card_values(endgame).values()
        to_move = endgame.side_of[endgame.leader] == endgame.side
        assert (max(values) if to_move else min(values)) == value


def _engine_max_n(game: Game) -> tuple[int, ...]:
    """Three players, through the real engine: the card points each seat ends with when
    every seat plays for its own points, a tie broken against the other seat with more,
    then for the card first in the deck's order."""
    if game.scored_count:
        scored = next(e for e in game.history if isinstance(e, BriscolaScored))
        return tuple(scored.points[scored.sides.index((seat,))] for seat in range(3))
    seat = game.current_seat()
    assert seat is not None
    best: tuple[int, ...] = ()
    best_key = (-1, 0)
    for action in sorted(game.legal_actions(seat), key=lambda a: a.card):
        child = game.clone()
        child.apply(seat, action)
        value = _engine_max_n(child)
        key = (value[seat], -max(value[(seat + 1) % 3], value[(seat + 2) % 3]))
        if key > best_key:
            best, best_key = value, key
    return best


def test_three_player_last_tricks_equal_max_n_through_the_engine() -> None:
    """At the first of three-player Briscola's last three tricks (the stock empty, every
    hand known in a determinised world), each seat's points at the end equal a max-n
    search through the engine, and the hands are left as they were."""
    checked = 0
    for seed in range(40):
        rng = random.Random(seed)
        game = Game.new(_options(3), rng)
        while game.stock or game.trick:
            seat = game.current_seat()
            assert seat is not None
            game.apply(seat, rng.choice(game.legal_actions(seat)))
        assert game.trump is not None
        hands = [list(h) for h in game.hands]
        taken = (game.captured[0], game.captured[1], game.captured[2])
        final = last_tricks_three(hands, game.leader, game.trump, taken, {})
        assert hands == [list(h) for h in game.hands]
        assert final == _engine_max_n(game)
        checked += 1
    assert checked == 40


def test_exact_worlds_enumerate_the_last_draw() -> None:
    for seed in range(30):
        game = _random_position(seed, 2, 2)
        if len(game.stock) != 2 or game.scored_count:
            continue
        seat = game.current_seat()
        assert seat is not None
        view = game.view(seat)
        worlds = exact_worlds(view, random.Random(0), 100)
        # the opponent's 3 (or fewer) cards and the hidden stock card among the unseen
        assert len(worlds) == 4 or len(worlds) == len(set(map(str, worlds)))
        truth = ([list(h) for h in game.hands], list(game.stock))
        assert any(
            sorted(h[1 - seat]) == sorted(truth[0][1 - seat]) and s == truth[1] for h, s in worlds
        )
        for hands, stock in worlds:
            assert sorted(hands[seat]) == sorted(game.hands[seat])
            assert stock[-1] == game.face_up


def test_outcome_orders_wins_over_points() -> None:
    assert outcome(61, 2) > outcome(60, 2) > outcome(59, 2)
    assert outcome(61, 2) < outcome(62, 2)


def _small_champion(seed: int) -> ChampionPlayer:
    player = ChampionPlayer(seed, worlds=6)
    player.budget, player.min_worlds, player.max_worlds, player.auction_worlds = 400, 2, 4, 4
    return player


def _small(kind: str, seed: int) -> Player:
    if kind == "campione":
        return _small_champion(seed)
    return create_player(kind, seed)


@pytest.mark.parametrize("variant", [{}, *VARIANTS], ids=["5", *map(str, VARIANTS)])
def test_a_short_arena_run_of_campione_in_every_variant(variant: dict[str, object]) -> None:
    options = TableOptions.model_validate(variant)
    stats = run(1, 8, "campione", "normale", options=options, make=_small)
    entry = stats["campione"]
    assert len(entry.per_deal) == 1 and entry.times
    if options.game == "briscola":
        assert entry.wins + entry.draws + entry.losses >= 1


@pytest.mark.parametrize("variant", [{}, *VARIANTS], ids=["5", *map(str, VARIANTS)])
def test_campione_plays_every_variant_legally_and_deterministically(
    variant: dict[str, object],
) -> None:
    options = TableOptions.model_validate(
        {**variant, "match_end": "hands:1", "briscola_match": "wins:1"}
    )
    game = Game.new(options, random.Random(3))
    plays_legally_and_deterministically(game, _small_champion)


def plays_legally_and_deterministically(
    game: Game, make: Callable[[int], Player], smazzate: int | None = None
) -> None:
    """Play ``game`` (to its end, or ``smazzate`` smazzate) with a player of ``make`` in
    every seat: every move legal, the same as a twin's made with the same seed."""
    players = [make(s) for s in range(game.n)]
    twins = [make(s) for s in range(game.n)]
    while not game.is_over() and (smazzate is None or game.scored_count < smazzate):
        seat = game.current_seat()
        assert seat is not None
        view = game.view(seat)
        action = players[seat].choose(view)
        assert action.code in view.legal
        assert twins[seat].choose(view) == action
        game.apply(seat, action)


def test_campione_is_offered_and_takes_every_point_at_the_end() -> None:
    assert create_player("campione", 1).name == "campione"
    assert create_player("champion", 1).name == "campione"
    # stock empty, both hands known: it plays the exact best card, worth its points
    for seed in range(20):
        game = _random_position(seed, 2, 0)
        if game.scored_count or game.is_over() or len(game.stock):
            continue
        seat = game.current_seat()
        assert seat is not None
        side = game.rules.sides.index(next(s for s in game.rules.sides if seat in s))
        endgame, _ = _endgame_of(game, side)
        values = card_values(endgame)
        choice = ChampionPlayer(seed).choose(game.view(seat))
        assert isinstance(choice, PlayCard)
        assert values[choice.card] == max(values.values())


def test_campione_plays_chiamata_as_esperto() -> None:
    from game.players.expert import ExpertPlayer
    from tests.core.helpers import heuristic_play_views

    for view in heuristic_play_views(range(3), limit=6):
        champion = ChampionPlayer(9, budget=2_000).choose(view)
        assert champion == ExpertPlayer(9, budget=2_000).choose(view)


def test_campione_searches_three_player_briscola_itself() -> None:
    """Three players: campione's own search (``THREE_SEARCH``) plays legally and the
    same on a second ask, and not always esperto's card; without it, esperto's card."""
    from game.players.expert import ExpertPlayer

    differ = 0
    for seed in range(12):
        game = _random_position(seed, 3, 12)
        seat = game.current_seat()
        if seat is None or game.scored_count:
            continue
        view = game.view(seat)
        if len(view.legal) < 2:
            continue
        action = ChampionPlayer(seed, worlds=60).choose(view)
        assert action.code in view.legal
        assert ChampionPlayer(seed, worlds=60).choose(view) == action
        esperto = ExpertPlayer(seed).choose(view)
        assert ChampionPlayer(seed, three=False).choose(view) == esperto
        differ += action != esperto
    assert differ >= 1


def test_the_opponent_model_places_the_hidden_cards_better_than_chance() -> None:
    """Against a rule-based opponent (the model's own assumption), the deals the
    inference keeps give the opponent more of its real cards than uniform deals."""
    from game.players import briscola
    from game.players.champion import inferred_deals
    from game.players.heuristic import HeuristicPlayer

    uniform = inferred = 0.0
    for seed in range(5):
        game = Game.new(_options(2), random.Random(seed))
        players = [HeuristicPlayer(s) for s in range(2)]
        while not game.scored_count:
            seat = game.current_seat()
            assert seat is not None
            view = game.view(seat)
            if view.stock_count > 2 and len(view.legal) > 1 and view.tricks:
                truth = set(game.hands[1 - seat])
                rng = random.Random(seed)
                for _ in range(40):
                    uniform += len(truth & set(briscola.sample_world(view, rng)[0][1 - seat]))
                for (hands, _stock), count in inferred_deals(view, random.Random(seed), 40):
                    inferred += count * len(truth & set(hands[1 - seat]))
            game.apply(seat, players[seat].choose(view))
    assert inferred > 1.08 * uniform


def _engine_expectimax(game: Game, seat: int) -> float:
    """The card points ``seat`` ends with, both players playing best and neither knowing
    the stock's order: before each trick is completed, every ordered pair of hidden
    stock cards is put on top of the stock in turn (the face-up card stays last), and
    the real engine plays on."""
    if game.scored_count:
        scored = next(e for e in game.history if isinstance(e, BriscolaScored))
        return scored.points[next(i for i, s in enumerate(scored.sides) if seat in s)]
    to_move = game.current_seat()
    assert to_move is not None
    values = []
    for action in game.legal_actions(to_move):
        completes = len(game.trick) == game.n - 1
        hidden = game.stock[:-1]
        if completes and len(hidden) >= 2:
            outcomes = []
            for x in hidden:
                for y in hidden:
                    if x == y:
                        continue
                    child = game.clone()
                    rest = [c for c in hidden if c not in (x, y)]
                    child.stock = [x, y, *rest, game.stock[-1]]
                    child.apply(to_move, action)
                    outcomes.append(_engine_expectimax(child, seat))
            values.append(sum(outcomes) / len(outcomes))
        else:
            child = game.clone()
            child.apply(to_move, action)
            values.append(_engine_expectimax(child, seat))
    return max(values) if to_move == seat else min(values)


@pytest.mark.parametrize(("stock_left", "positions"), [(2, 25), (4, 3)])
def test_the_draw_solver_equals_expectimax_through_the_engine(
    stock_left: int, positions: int
) -> None:
    """The stock's order a chance node (``DrawSolver``), against the engine (with 4 cards
    to draw, only positions with a card led, to keep the engine's search short)."""
    found = 0
    for seed in range(400):
        game = _random_position(seed, 2, stock_left)
        if game.scored_count or game.is_over() or len(game.stock) != stock_left:
            continue
        if stock_left == 4 and not game.trick:
            continue
        seat = game.current_seat()
        assert seat is not None and game.trump is not None and game.face_up is not None
        solver = DrawSolver(game.trump, game.face_up, lambda points: float(points))
        values = solver.card_values(
            game.hands[seat],
            game.hands[1 - seat],
            game.stock[:-1],
            game.trick,
            game.captured[seat],
        )
        assert max(values.values()) == pytest.approx(_engine_expectimax(game, seat))
        found += 1
        if found == positions:
            break
    assert found == positions


@pytest.mark.parametrize("infer", [False, True])
def test_campione_solves_two_player_endgames_over_every_hand_of_the_opponent(
    infer: bool,
) -> None:
    """With at most ``EXACT_STOCK`` cards to draw it enumerates every hand the opponent
    can hold, the stock's order a chance node; without the opponent model every hand
    counts the same, and its card is the best for the sum of the :class:`DrawSolver`'s
    values over them."""
    from itertools import combinations
    from math import comb

    from game.players.champion import EXACT_STOCK, unseen_cards

    found = checked = 0
    for seed in range(60):
        game = _random_position(seed, 2, EXACT_STOCK)
        if game.scored_count or game.is_over() or len(game.stock) != EXACT_STOCK:
            continue
        seat = game.current_seat()
        assert seat is not None and game.trump is not None and game.face_up is not None
        view = game.view(seat)
        player = ChampionPlayer(seed, infer=infer)
        action = player.choose(view)
        assert isinstance(action, PlayCard) and action.code in view.legal
        unseen = unseen_cards(view)
        size = view.hand_sizes[1 - seat]
        assert player.last_worlds == comb(len(unseen), size)
        found += 1
        if infer:
            continue
        solver = DrawSolver(game.trump, game.face_up, lambda points: outcome(points, 2))
        totals = dict.fromkeys(game.hands[seat], 0.0)
        for theirs in combinations(unseen, size):
            hidden = [c for c in unseen if c not in theirs]
            values = solver.card_values(
                game.hands[seat], theirs, hidden, game.trick, game.captured[seat]
            )
            for card, value in values.items():
                totals[card] += value
        assert totals[action.card] == pytest.approx(max(totals.values()))
        checked += len(set(totals.values())) > 1
    assert found >= 10 and (infer or checked >= 5)


class _Forgetful(dict[tuple[int, tuple[int, ...]], float]):
    """A memo that keeps nothing."""

    def __setitem__(self, key: tuple[int, tuple[int, ...]], value: float) -> None:
        return None


def test_the_opponent_model_remembers_without_changing_a_likelihood() -> None:
    """The likelihoods a model remembers across the deals of a decision are the ones it
    computes with nothing remembered, hand by hand."""
    from game.players import briscola
    from game.players.champion import OpponentModel
    from game.players.heuristic import HeuristicPlayer

    checked = 0
    game = Game.new(_options(2), random.Random(11))
    players = [HeuristicPlayer(s) for s in range(2)]
    while not game.scored_count:
        seat = game.current_seat()
        assert seat is not None
        view = game.view(seat)
        if view.stock_count > 4 and len(view.tricks) >= 4:
            rng = random.Random(len(view.tricks))
            hands = [briscola.sample_world(view, rng)[0][1 - seat] for _ in range(30)]
            hands.append(list(game.hands[1 - seat]))
            shared = OpponentModel(view)
            together = [shared.likelihood(h) for h in hands]
            forgetful = OpponentModel(view)
            forgetful._memo = _Forgetful()
            alone = [forgetful.likelihood(h) for h in hands]
            assert together == alone
            assert len(set(together)) > 1
            checked += 1
        game.apply(seat, players[seat].choose(view))
    assert checked >= 5
