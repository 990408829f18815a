"""Helpers to build exact situations through the public game API."""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from game import ACTIONS, Game, IllegalAction, TableOptions, parse_action, parse_card
from game.actions import Action
from game.events import BriscolaScored, Dealt, Event, SmazzataScored
from game.scoring import ContractScore, score_contract
from game.simulate import pick
from game.view import View

#: The on/off table options; ALL_COMBINATIONS is every one of their 128 combinations.
BOOLEAN_OPTIONS = (
    "monte",
    "chiamata_obbligata",
    "a_carichi",
    "al_buio",
    "in_mano",
    "follow_suit",
    "tie_goes_to_caller",
)
ALL_COMBINATIONS = [
    dict(zip(BOOLEAN_OPTIONS, values, strict=True))
    for values in itertools.product((False, True), repeat=len(BOOLEAN_OPTIONS))
]


#: Every case of tests/data/scoring_vectors.json (5 and 6 seats).
SCORING_VECTORS: list[dict[str, Any]] = json.loads(
    (Path(__file__).parent.parent / "data" / "scoring_vectors.json").read_text()
)


def score_vector(case: dict[str, Any]) -> ContractScore:
    """Score one case of the scoring vectors through the core's formula."""
    options = case["options"]
    return score_contract(
        kind=case["bid"]["kind"],
        points=case["bid"]["points"],
        in_mano=case["in_mano"],
        caller_points=case["caller_team_points"],
        players=options["players"],
        tie_goes_to_caller=options["tie_goes_to_caller"],
        cappotto=options["cappotto"],
    )


def check_legality(game: Game, rng: random.Random, sample: int | None) -> None:
    """Every legal action verifies; every other action is refused with a code. ``sample``
    actions drawn at random per seat, or all of them (None)."""
    for seat in range(game.n):
        actions = game.legal_actions(seat)
        if game.phase != "play":  # documented order: ascending id outside the play
            assert [a.id for a in actions] == sorted(a.id for a in actions), actions
        assert len(set(actions)) == len(actions), actions
        legal = {a.code for a in actions}
        candidates = ACTIONS if sample is None else rng.sample(ACTIONS, sample)
        for action in candidates:
            try:
                game.verify(seat, action)
            except IllegalAction as error:
                assert action.code not in legal, (seat, action.code, error.code)
            else:
                assert action.code in legal, (seat, action.code)


def random_move(game: Game, rng: random.Random) -> tuple[int, Action]:
    """A uniformly random legal action of the seat to move or, one time in five, monte
    declared out of turn (R17) by another seat that may."""
    seat = game.current_seat()
    assert seat is not None and seat != game.morto
    legal = game.legal_actions(seat)
    assert legal, "the seat to move must always have a legal action"
    if rng.random() < 0.2:
        for other in range(game.n):
            monte = [a for a in game.legal_actions(other) if a.code == "M"]
            if other != seat and monte:
                return other, monte[0]
    return seat, legal[rng.randrange(len(legal))]


def random_moves(game: Game, rng: random.Random, moves: int) -> Game:
    """Apply up to ``moves`` actions chosen by :func:`game.simulate.pick` (a random kind
    of action, then one of that kind) for the seat to move; fewer if the match ends."""
    for _ in range(moves):
        if game.is_over():
            break
        seat = game.current_seat()
        assert seat is not None
        game.apply(seat, pick(rng, game.legal_actions(seat)))
    return game


def play_random(
    options: TableOptions,
    seed: int,
    *,
    before_move: Callable[[Game, random.Random], None],
    after_smazzata: Callable[[list[Event], Game], None],
    json: bool,
) -> Game:
    r"""Play a match of :func:`random_move`\ s: ``before_move(game, rng)`` before each move,
    ``after_smazzata(events, game)`` on the events of each scored smazzata (its Dealt to
    its score). With ``json`` each move is applied to a JSON round-trip of the game too,
    which must give the same events and the same JSON."""
    game = Game.new(options, random.Random(seed))
    rng = random.Random(seed + 1)
    start = 0
    while not game.is_over():
        before_move(game, rng)
        seat, action = random_move(game, rng)
        if json:
            restored = Game.from_json(game.to_json())
            assert restored.to_json() == game.to_json()
            assert restored.apply(seat, action) == game.apply(seat, action)
            assert restored.to_json() == game.to_json()
        else:
            game.apply(seat, action)
        for i in range(start, len(game.history)):
            if isinstance(game.history[i], SmazzataScored | BriscolaScored):
                begin = max(j for j in range(i) if isinstance(game.history[j], Dealt))
                after_smazzata(game.history[begin : i + 1], game)
                start = i + 1
    return game


def cards(text: str) -> list[int]:
    return [parse_card(code) for code in text.split()]


def deal(fixed: dict[int, str] | None = None, dealer: int = 0, **options: object) -> Game:
    """A game whose first hands are ``fixed`` (seat -> "Ad 3d …"); other seats get the
    remaining cards in a fixed order, so every test situation is reproducible."""
    opts = TableOptions.model_validate(options)
    hands: list[list[int]] = [[] for _ in range(opts.players)]
    used: set[int] = set()
    for seat, text in (fixed or {}).items():
        hands[seat] = cards(text)
        used.update(hands[seat])
    assert len(used) == sum(len(h) for h in hands), "a card was given twice"
    rest = [c for c in range(40) if c not in used]
    for seat in range(opts.players):
        while len(hands[seat]) < 8:
            hands[seat].append(rest.pop(0))
    return Game.with_deal(opts, dealer, hands, random.Random(99))


def act(game: Game, seat: int, code: str) -> list[Event]:
    return game.apply(seat, parse_action(code))


def run(game: Game, moves: Iterable[tuple[int, str]]) -> list[Event]:
    events: list[Event] = []
    for seat, code in moves:
        events.extend(act(game, seat, code))
    return events


def codes(game: Game, seat: int) -> list[str]:
    return [a.code for a in game.legal_actions(seat)]


def kinds(events: Iterable[Event]) -> list[str]:
    return [e.kind for e in events]


def play_out(game: Game, rng: random.Random | None = None) -> list[Event]:
    """Finish the current smazzata with first-legal or random moves."""
    rng = rng or random.Random(0)
    events: list[Event] = []
    start = game.smazzata_index
    while not game.is_over() and game.smazzata_index == start:
        seat = game.current_seat()
        assert seat is not None
        legal = game.legal_actions(seat)
        events.extend(game.apply(seat, legal[rng.randrange(len(legal))]))
    return events


#: Every game × table size of §1 (chiamata with 5 is the suite's default everywhere else).
VARIANTS: list[dict[str, object]] = [
    {"players": 4},
    {"players": 6},
    {"a_punti": True},
    {"players": 4, "a_punti": True},
    {"players": 6, "a_punti": True},
    {"game": "briscola", "players": 2},
    {"game": "briscola", "players": 3},
    {"game": "briscola", "players": 4},
]


def deal_variant(
    fixed: dict[int, str] | None = None,
    dealer: int = 0,
    morto: int | None = None,
    **options: object,
) -> Game:
    """Like :func:`deal` for any chiamata table size: ``fixed`` hands, the rest of the
    deck in play in a fixed order; ``morto`` is il morto's seat with ``players=4``."""
    opts = TableOptions.model_validate(options)
    probe = Game(opts, random.Random(0))
    hands: list[list[int]] = [[] for _ in range(probe.n)]
    for seat, text in (fixed or {}).items():
        hands[seat] = cards(text)
    used = {c for hand in hands for c in hand}
    rest = [c for c in probe.rules.deck if c not in used]
    for seat in range(probe.n):
        while len(hands[seat]) < probe.rules.hand_size:
            hands[seat].append(rest.pop(0))
    return Game.with_deal(opts, dealer, hands, random.Random(99), morto=morto)


def briscola(deck: str | list[int] | None = None, dealer: int = 0, **options: object) -> Game:
    """Plain Briscola dealt from ``deck`` (codes or cards, R119); the cards not named
    follow in a fixed order."""
    opts = TableOptions.model_validate({"game": "briscola", **options})
    probe = Game(opts, random.Random(0))
    head = cards(deck) if isinstance(deck, str) else list(deck or [])
    order = head + [c for c in probe.rules.deck if c not in head]
    return Game.with_deck(opts, dealer, order, random.Random(99))


def heuristic_play_views(seeds: Iterable[int], limit: int | None = None) -> list[View]:
    """The play-phase views with a real choice (more than one legal card) met in
    rule-based self-play of one smazzata dealt from each of ``seeds``; at most
    ``limit`` of them."""
    from game.players.heuristic import HeuristicPlayer

    views: list[View] = []
    player = HeuristicPlayer(0)  # deterministic: no noise
    for seed in seeds:
        game = Game.new(TableOptions(match_end="hands:1"), random.Random(seed))
        while not game.is_over() and game.scored_count == 0:
            if limit is not None and len(views) >= limit:
                return views
            seat = game.current_seat()
            assert seat is not None
            view = game.view(seat)
            if view.phase == "play" and len(view.legal) > 1:
                views.append(view)
            game.apply(seat, player.choose(view))
    return views


def minimax(game: Game, outcome: Callable[[Game], int], maximises: Callable[[int], bool]) -> int:
    """Minimax through the real engine from ``game`` to the end of its smazzata: every
    legal action of the seat in turn, the most ``outcome`` of the scored game where
    ``maximises(seat)``, else the least."""
    if game.scored_count:
        return outcome(game)
    seat = game.current_seat()
    assert seat is not None
    values = []
    for action in game.legal_actions(seat):
        child = game.clone()
        child.apply(seat, action)
        values.append(minimax(child, outcome, maximises))
    return max(values) if maximises(seat) else min(values)


def side_minimax(game: Game, side: tuple[int, ...]) -> int:
    """Plain Briscola, :func:`minimax`: the card points ``side`` ends the smazzata with,
    its seats taking the most, the others the least."""

    def points(end: Game) -> int:
        scored = next(e for e in end.history if isinstance(e, BriscolaScored))
        return scored.points[scored.sides.index(side)]

    return minimax(game, points, lambda seat: seat in side)
