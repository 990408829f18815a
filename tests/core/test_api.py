"""The engine's API contracts: options, action codes, errors, serialisation, simulator."""

from __future__ import annotations

import json
import random

import pytest
from pydantic import ValidationError

from game import (
    ACTIONS,
    REASONS,
    Game,
    IllegalAction,
    Phase,
    TableOptions,
    action_from_id,
    parse_action,
)
from game.actions import BidTwo, PlayCard
from game.simulate import main as simulate_main
from game.simulate import simulate
from tests.core.helpers import act, deal


def test_options_defaults_follow_the_rules_table() -> None:
    options = TableOptions()
    assert options.model_dump(mode="json") == {
        "game": "chiamata",
        "players": 5,
        "deck_style": "napoletane",
        "direction": "antiorario",
        "monte": False,
        "chiamata_obbligata": True,
        "a_carichi": False,
        "al_buio": False,
        "in_mano": True,
        "follow_suit": False,
        "tie_goes_to_caller": False,
        "cappotto": "double",
        "match_end": "target:11",
        "winners": "top",
        "a_punti": False,
        "briscola_match": "wins:2",
    }
    assert TableOptions(monte="on", al_buio="off").monte is True


@pytest.mark.parametrize(
    "bad",
    [
        {"match_end": "target:0"},
        {"match_end": "points:5"},
        {"cappotto": "triple"},
        {"deck_style": "svizzere"},
        {"players": 7},
        {"monte": "maybe"},
        {"no_such_option": 1},
    ],
)
def test_bad_option_values_are_refused_clearly(bad: dict) -> None:
    with pytest.raises(ValidationError):
        TableOptions.model_validate(bad)


@pytest.mark.parametrize(
    "variant",
    [
        {"players": 4},
        {"players": 6},
        {"a_punti": True},
        {"game": "briscola"},
        {"game": "briscola", "players": 3},
        {"game": "briscola", "players": 4},
    ],
)
def test_every_variant_of_the_rules_is_accepted(variant: dict) -> None:
    game = Game.new(TableOptions.model_validate(variant))
    assert game.current_seat() is not None


def test_action_codes_are_short_unique_and_stable() -> None:
    assert len({a.code for a in ACTIONS}) == len(ACTIONS)
    assert max(len(a.code.encode()) for a in ACTIONS) <= 6
    for action in ACTIONS:
        assert parse_action(action.code) is action
        assert action_from_id(action.id) is action
    # Ids are part of the wire format: pin a few.
    assert [ACTIONS[i].code for i in (0, 1, 2, 3, 12, 71, 72, 551, 552, 556, 595)] == [
        "P",
        "M",
        "K",
        "rA",
        "t61",
        "t120",
        "o3.61",
        "o4.120",
        "sc",
        "cAc",
        "c2b",
    ]
    assert BidTwo(70) == parse_action("t70") and PlayCard(0) == parse_action("cAc")


@pytest.mark.parametrize("junk", ["", "x", "t60", "t121", "o2.61", "oA.61", "cZz", "P " * 40])
def test_unknown_codes_raise_a_typed_error(junk: str) -> None:
    with pytest.raises(IllegalAction) as info:
        parse_action(junk)
    assert info.value.code == "unknown_action"


def test_hand_built_actions_are_accepted() -> None:
    game = deal()
    game.apply(1, BidTwo(70))
    assert game.view(None).current_bid == "t70"


def test_every_reason_code_is_documented_and_refusals_keep_state() -> None:
    game = deal()
    before = game.to_json()
    for seat, code, reason in [
        (2, "P", "not_your_turn"),
        (1, "sd", "wrong_phase"),
        (1, "cAd", "wrong_phase"),
        (9, "P", "bad_seat"),
    ]:
        with pytest.raises(IllegalAction) as info:
            act(game, seat, code)
        assert info.value.code == reason and reason in REASONS
    assert game.to_json() == before


def test_game_over_refuses_everything() -> None:
    game = Game.new(TableOptions(match_end="hands:1"), random.Random(2))
    rng = random.Random(2)
    while not game.is_over():
        seat = game.current_seat()
        assert seat is not None
        legal = game.legal_actions(seat)
        game.apply(seat, legal[rng.randrange(len(legal))])
    assert game.phase is Phase.OVER and game.current_seat() is None
    assert all(game.legal_actions(s) == [] for s in range(5))
    with pytest.raises(IllegalAction) as info:
        act(game, 0, "P")
    assert info.value.code == "game_over"


def test_snapshot_is_plain_json_and_rejects_garbage() -> None:
    game = deal()
    act(game, 1, "rA")
    data = json.loads(game.to_json())
    assert data["actions"] == [[1, "rA"]] and data["events"][-1] == ["bid", 1, "rA"]
    for bad in ["{}", "not json", json.dumps({**data, "format": 99})]:
        with pytest.raises(ValueError):
            Game.from_json(bad)
    for broken in (["nonsense", 1], ["bid", 1], [], [3]):
        data["events"][-1] = broken
        with pytest.raises(ValueError):
            Game.from_json(json.dumps(data))


def test_with_deal_refuses_a_deal_that_is_not_the_deck() -> None:
    with pytest.raises(ValueError):
        Game.with_deal(TableOptions(), 0, [[0] * 8] * 5)


def test_simulator_counts_and_prints(capsys: pytest.CaptureFixture[str]) -> None:
    stats = simulate(60, seed=3, overrides={"a_carichi": "on"})
    assert stats.smazzate == 60 and stats.actions > 60 * 40
    assert sum(stats.contracts.values()) == 60
    simulate_main(["--games", "20", "--seed", "1", "--option", "monte=on"])
    out = capsys.readouterr().out
    assert "smazzate scored     20" in out and "smazzate per second" in out


def test_game_core_imports_no_io_framework() -> None:
    """game/ stays pure: no Telegram, asyncio, storage, bot or I/O modules anywhere in it."""
    import ast
    from pathlib import Path

    forbidden = {"telegram", "asyncio", "aiosqlite", "sqlite3", "storage", "bot", "socket"}
    root = Path(__file__).resolve().parents[2] / "game"
    offenders = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] in forbidden]
    assert offenders == []


@pytest.mark.parametrize("options", [
    {"match_end": "hands:2"},
    {"players": 4, "match_end": "hands:2"},
    {"game": "briscola", "players": 2, "briscola_match": "rounds:2"},
], ids=["five", "morto", "briscola"])
def test_the_view_keeps_the_tricks_of_the_last_smazzata_scored(options: dict) -> None:
    """``view.scored_tricks``: the tricks of the smazzata just scored, as every seat saw
    them (who led, who played what, who took it), the same in every view, kept through
    the next smazzata and after the match's end, and rebuilt from a snapshot."""
    rng = random.Random(4)
    game = Game.new(TableOptions(**options), rng=random.Random(9))
    assert all(game.view(s).scored_tricks == () for s in (None, *range(game.n)))
    plays: list[tuple[int, int]] = []  # every card played in this smazzata, in order
    scored = 0
    while not game.is_over():
        seat = game.current_seat()
        assert seat is not None
        before = game.scored_count
        events = game.apply(seat, rng.choice(game.legal_actions(seat)))
        plays += [(e.seat, e.card) for e in events if type(e).__name__ == "CardPlayed"]
        if game.scored_count == before:
            continue
        scored += 1
        views = [game.view(s) for s in (None, *range(game.n))]
        tricks = views[0].scored_tricks
        assert all(v.scored_tricks == tricks for v in views)
        assert len(tricks) == game.rules.tricks
        assert [p for t in tricks for p in t.plays] == plays
        for t in tricks:
            assert t.plays[0][0] == t.leader
            assert t.winner in [s for s, _ in t.plays]
        # the next trick is led by whoever took the one before
        assert [t.leader for t in tricks[1:]] == [t.winner for t in tricks[:-1]]
        plays = []
        # a snapshot folds back to the same tricks
        assert Game.from_json(game.to_json()).view(None).scored_tricks == tricks
        if not game.is_over():
            first = game.current_seat()
            assert first is not None
            game.apply(first, game.legal_actions(first)[0])
            assert game.view(None).scored_tricks == tricks  # kept in the next smazzata
            plays += [(s, c) for t in game.view(None).tricks for s, c in t.plays]
            plays += list(game.view(None).current_trick)
    assert scored == 2
