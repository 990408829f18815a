"""Computer players: legality, determinism, no access to hidden state, clear situations."""

from __future__ import annotations

import dataclasses
import inspect
import random

import pytest

from game.actions import parse_action
from game.cards import CARD_POINTS, parse_card
from game.engine import Game
from game.events import Dealt, MatchStarted
from game.options import TableOptions
from game.players import LEVELS, Player, create_player
from game.players.champion import ChampionPlayer
from game.players.expert import ExpertPlayer
from game.players.heuristic import HeuristicPlayer
from game.players.net import NetPlayer
from game.players.random_player import RandomPlayer
from game.players.search import SearchPlayer
from game.simulate import pick
from game.view import View
from tests.core.helpers import ALL_COMBINATIONS, random_moves

ALL_COMBOS = ALL_COMBINATIONS


def small_search(seed: int) -> SearchPlayer:
    """A search player with a tiny budget, to keep the tests fast."""
    return SearchPlayer(seed, budget=300, min_worlds=2, max_worlds=4, bid_candidates=2)


def play_smazzata(options: TableOptions, seed: int, players: list[Player]) -> Game:
    """One smazzata (hands:1); every action must be in view.legal and accepted."""
    game = Game.new(options.model_copy(update={"match_end": "hands:1"}), random.Random(seed))
    while not game.is_over():
        seat = game.current_seat()
        assert seat is not None
        view = game.view(seat)
        action = players[seat].choose(view)
        assert action.code in view.legal, (players[seat].name, action.code, view.legal)
        game.apply(seat, action)  # raises IllegalAction if the engine disagrees
    return game


# ---------------------------------------------------------------------- the interface


def test_levels_and_factory() -> None:
    assert LEVELS == ("facile", "normale", "rapido", "forte", "esperto", "campione")
    assert isinstance(create_player("random", 1), RandomPlayer)
    assert isinstance(create_player("facile", 1), HeuristicPlayer)
    assert isinstance(create_player("normale", 1), HeuristicPlayer)
    assert isinstance(create_player("heuristic", 1), HeuristicPlayer)
    assert isinstance(create_player("rapido", 1), NetPlayer)
    assert isinstance(create_player("network", 1), NetPlayer)
    assert isinstance(create_player("forte", 1), SearchPlayer)
    assert isinstance(create_player("search", 1), SearchPlayer)
    assert isinstance(create_player("esperto", 1), ExpertPlayer)
    assert isinstance(create_player("expert", 1), ExpertPlayer)
    assert isinstance(create_player("campione", 1), ChampionPlayer)
    assert isinstance(create_player("champion", 1), ChampionPlayer)
    assert create_player("facile", 1).name == "facile"
    with pytest.raises(ValueError):
        create_player("grandmaster", 1)


def test_players_receive_only_the_view() -> None:
    """choose() takes only a View, and a View is an immutable snapshot: it holds no
    reference to the Game (so no path to the other hands) and nothing mutable."""
    for kind in ("random", "facile", "normale", "rapido", "forte", "esperto"):
        player = create_player(kind, 0)
        params = list(inspect.signature(player.choose).parameters)
        assert params == ["view"], (kind, params)
    game = Game.new(TableOptions(follow_suit=True), random.Random(3))
    mover = random.Random(3)
    while game.phase.value != "play" or game.trick_no < 2:
        seat = game.current_seat()
        assert seat is not None
        game.apply(seat, pick(mover, game.legal_actions(seat)))
    visited = 0

    def walk(obj: object) -> None:
        nonlocal visited
        visited += 1
        assert not isinstance(obj, Game | list | dict | set), type(obj)
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            for f in dataclasses.fields(obj):
                walk(getattr(obj, f.name))
        elif isinstance(obj, tuple):
            for item in obj:
                walk(item)

    for seat in range(5):
        walk(game.view(seat))
    assert visited > 100


def test_choice_depends_only_on_the_view() -> None:
    """Two games whose hidden cards differ but whose views agree get the same choices."""
    from game.players.sampling import Sampler

    options = TableOptions(match_end="hands:1")
    checked = 0
    for seed in range(8):
        mover = random.Random(seed)
        game = random_moves(Game.new(options, random.Random(seed)), mover, mover.randrange(10, 40))
        if game.is_over() or game.phase.value != "play":
            continue
        seat = game.current_seat()
        assert seat is not None
        view = game.view(seat)
        other = rebuild(view, Sampler(view).deal(random.Random(seed + 100)).hands)
        twin = other.view(seat)
        assert comparable(twin) == comparable(view)
        for kind in ("random", "facile", "normale"):
            assert create_player(kind, 5).choose(view) == create_player(kind, 5).choose(twin)
        assert small_search(5).choose(view) == small_search(5).choose(twin)
        checked += 1
    assert checked >= 4


# ---------------------------------------------------------------------- legality


@pytest.mark.parametrize("combo", range(len(ALL_COMBOS)))
def test_heuristic_and_random_play_legally_for_every_option_combination(combo: int) -> None:
    options = TableOptions(**ALL_COMBOS[combo])
    for deal in range(4):
        seed = combo * 100 + deal
        mixed: list[Player] = [
            HeuristicPlayer(seed),
            RandomPlayer(seed + 1),
            HeuristicPlayer(seed + 2, noise=0.25, name="facile"),
            HeuristicPlayer(seed + 3),
            RandomPlayer(seed + 4),
        ]
        play_smazzata(options, seed, mixed)


@pytest.mark.parametrize("combo", range(0, len(ALL_COMBOS), 3))
def test_search_plays_legally_for_many_option_combinations(combo: int) -> None:
    options = TableOptions(**ALL_COMBOS[combo])
    seed = 7 + combo
    players: list[Player] = [
        small_search(seed),
        HeuristicPlayer(seed),
        small_search(seed + 1),
        RandomPlayer(seed),
        HeuristicPlayer(seed + 2),
    ]
    play_smazzata(options, seed, players)


def test_monte_is_declared_with_a_pointless_hand() -> None:
    """R16: a hand of lisci only voids the deal rather than play a hopeless smazzata."""
    hands = (
        (5, 6, 7, 8, 9, 15, 16, 17),
        (0, 1, 2, 3, 4, 10, 11, 12),
        (13, 14, 18, 19, 20, 21, 22, 23),
        (24, 25, 26, 27, 28, 29, 30, 31),
        (32, 33, 34, 35, 36, 37, 38, 39),
    )
    options = TableOptions(monte=True)
    game = Game.from_history(
        options, [MatchStarted(options, 4), Dealt(0, 4, hands)], [], random.Random(0)
    )
    view = game.view(0)
    assert "M" in view.legal
    assert HeuristicPlayer(0).choose(view).code == "M"
    assert SearchPlayer(0).choose(view).code == "M"


# ---------------------------------------------------------------------- determinism


def test_players_are_deterministic_given_the_seed() -> None:
    options = TableOptions(match_end="hands:1", follow_suit=True)
    for kind in ("random", "facile", "normale"):
        a = play_smazzata(options, 42, [create_player(kind, s) for s in range(5)])
        b = play_smazzata(options, 42, [create_player(kind, s) for s in range(5)])
        assert a.actions == b.actions, kind
    a = play_smazzata(options, 43, [small_search(s) for s in range(5)])
    b = play_smazzata(options, 43, [small_search(s) for s in range(5)])
    assert a.actions == b.actions


def test_same_view_same_choice_even_after_other_decisions() -> None:
    """No long-lived RNG stream: the choice for a view does not depend on call history."""
    game = Game.new(TableOptions(), random.Random(9))
    view = game.view(game.current_seat())
    for kind in ("random", "facile"):
        fresh = create_player(kind, 11).choose(view)
        used = create_player(kind, 11)
        for _ in range(5):
            used.choose(view)
        assert used.choose(view) == fresh


def test_random_player_varies_with_the_seed() -> None:
    game = Game.new(TableOptions(), random.Random(9))
    view = game.view(game.current_seat())
    choices = {create_player("random", seed).choose(view).code for seed in range(40)}
    assert len(choices) > 3


# ---------------------------------------------------------------------- clear situations


def rebuild(
    view: View, hands: tuple[tuple[int, ...], ...], trump: int | None = None
) -> Game:
    """A game dealt ``hands`` (current hands; played cards are added back) that replays the
    public actions of ``view``, every action verified by the engine."""
    options = view.options
    dealt = tuple(tuple(hands[s]) + tuple(view.played[s]) for s in range(view.players))
    game = Game.from_history(
        options,
        [MatchStarted(options, view.dealer), Dealt(view.smazzata, view.dealer, dealt)],
        [],
        random.Random(0),
    )
    for seat, code in view.auction:
        game.apply(seat, parse_action(code))
    if view.chiamante is not None and view.contract != "carichi" and view.phase == "play":
        if trump is None:
            trump = view.trump
        if trump is None:  # al buio, seen by another seat: find the suit of the deal
            trump = next(
                s
                for s in range(4)
                if any(s * 10 + (view.contract_rank or 0) in h for h in dealt)
                and _suit_fits(game, view, s)
            )
        game.apply(view.chiamante, parse_action("s" + "cdsb"[trump]))
    plays = [p for t in view.tricks for p in t.plays] + list(view.current_trick)
    for seat, card in plays:
        game.apply(seat, parse_action("c" + _code(card)))
    return game


def _suit_fits(game: Game, view: View, suit: int) -> bool:
    assert view.chiamante is not None
    return "s" + "cdsb"[suit] in {a.code for a in game.legal_actions(view.chiamante)}


def _code(card: int) -> str:
    return "A3RCF76542"[card % 10] + "cdsb"[card // 10]


def comparable(view: View) -> dict[str, object]:
    """The fields of a view that the deal and the public log determine."""
    data = {f.name: getattr(view, f.name) for f in dataclasses.fields(view)}
    for name in ("version", "smazzata", "scored_smazzate", "totals", "last_scored", "final"):
        data.pop(name)
    data["hand"] = sorted(view.hand)
    data["legal"] = sorted(view.legal)
    return data


def situation(
    hands: dict[int, list[str]],
    auction: list[tuple[int, str]],
    suit: str,
    plays: list[tuple[int, str]],
    dealer: int = 0,
    **options: bool,
) -> View:
    """The view of the seat on turn after a hand-made deal, auction, declaration, plays.

    Played cards join their seat's hand; cards not listed fill the hands to 8, in order.
    """
    deal = {s: [parse_card(c) for c in cards] for s, cards in hands.items()}
    for seat, card in plays:  # a played card was in its player's hand
        if parse_card(card) not in deal.setdefault(seat, []):
            deal[seat].append(parse_card(card))
    used = {c for cards in deal.values() for c in cards}
    rest = [c for c in range(40) if c not in used]
    full = []
    for s in range(5):
        cards = deal.get(s, [])
        while len(cards) < 8:
            cards.append(rest.pop(0))
        full.append(tuple(cards))
    table = TableOptions(**options)
    game = Game.from_history(
        table, [MatchStarted(table, dealer), Dealt(0, dealer, tuple(full))], [], random.Random(0)
    )
    for seat, code in auction:
        game.apply(seat, parse_action(code))
    if suit:
        game.apply(game.chiamante or 0, parse_action("s" + suit))
    for seat, card in plays:
        game.apply(seat, parse_action("c" + card))
    seat = game.current_seat()
    assert seat is not None
    return game.view(seat)


SOLO_AUCTION = [(1, "P"), (2, "P"), (3, "P"), (4, "P"), (0, "rA")]


def deciders() -> list[Player]:
    return [HeuristicPlayer(1), SearchPlayer(1, budget=4000)]


def test_takes_a_loaded_trick_with_the_only_winning_trump() -> None:
    """Seat 0 called in mano (alone): all others are opponents. Four cards worth 27
    points lie on the table; the Asso di briscola is its only winning card."""
    view = situation(
        {
            0: ["Ad", "4s", "5s", "6s", "7s", "2b", "4b", "5b"],
            1: ["3c"],
            2: ["Ac"],
            3: ["Rc"],
            4: ["Fc"],
        },
        SOLO_AUCTION,
        "d",
        [(1, "3c"), (2, "Ac"), (3, "Rc"), (4, "Fc")],
    )
    assert view.seat == 0 and view.solo is True
    for player in deciders():
        assert player.choose(view).code == "cAd", player.name


def test_no_carico_to_an_opponents_trick_when_a_liscio_is_available() -> None:
    """Opponent's Asso di briscola wins for sure: throw a liscio, not the Asso di Bastoni."""
    view = situation(
        {0: ["3d", "Ab", "4s", "5s", "6s", "7s", "Rb", "Cb"], 2: ["Ad"]},
        [(1, "P"), (2, "P"), (3, "P"), (4, "P"), (0, "r3")],
        "d",
        [(1, "4c"), (2, "Ad"), (3, "2c"), (4, "5c")],
    )
    assert view.seat == 0 and view.solo is True
    for player in deciders():
        code = player.choose(view).code
        assert CARD_POINTS[parse_card(code[1:])] == 0, (player.name, code)


def test_loads_a_carico_on_the_partners_sure_trick() -> None:
    """The socio revealed itself with the Asso di briscola: the chiamante, last to play,
    loads the Asso di Bastoni on its partner's unbeatable trick (carica)."""
    view = situation(
        {0: ["3d", "Ab", "4s", "5s", "6s", "7s", "2b", "4b"], 2: ["Ad"]},
        SOLO_AUCTION,
        "d",
        [(1, "4c"), (2, "Ad"), (3, "5c"), (4, "6c")],
    )
    assert view.socio == 2 and view.seat == 0
    assert HeuristicPlayer(1).choose(view).code == "cAb"


def test_strozzo_takes_the_3_with_the_asso_of_the_suit() -> None:
    """An opponent leads the 3 di Coppe: the Asso di Coppe captures it (strozzo)
    rather than a trump being spent or the 3 being let through."""
    view = situation(
        {0: ["3d", "Ac", "4s", "5s", "6s", "7s", "2d", "4b"], 1: ["3c"]},
        [*SOLO_AUCTION[:-1], (0, "r3")],
        "d",
        [(1, "3c"), (2, "4c"), (3, "5c"), (4, "6c")],
    )
    assert view.seat == 0 and view.solo is True
    for player in deciders():
        assert player.choose(view).code == "cAc", player.name


def test_follow_suit_under_a_carichi() -> None:
    """A carichi: no trump, following compulsory (R42); the only legal cards are Coppe
    and the player takes the trick with its Asso over the 3."""
    view = situation(
        {0: ["Ac", "7c", "4s", "5s", "6s", "7s", "2d", "4b"], 1: ["3c"]},
        [(1, "P"), (2, "P"), (3, "P"), (4, "P"), (0, "K")],
        "",
        [(1, "3c"), (2, "4c"), (3, "5c"), (4, "6c")],
        a_carichi=True,
    )
    assert sorted(view.legal) == ["c7c", "cAc"]
    for player in deciders():
        assert player.choose(view).code == "cAc", player.name
