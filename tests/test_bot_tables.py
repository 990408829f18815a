"""The tables package: its typed UI state, its one-way imports, the rank of each message."""

from __future__ import annotations

import ast
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from bot.budget import Priority
from bot.tables.state import UiState, ui_patch

PACKAGE = Path(__file__).resolve().parent.parent / "bot" / "tables"
#: Who may import whom inside bot/tables (one way: driver -> seats -> outages/render/clock
#: -> layout/state; driver -> delivery -> state; driver -> pacing).
ALLOWED = {
    "driver": {"seats", "outages", "render", "clock", "delivery", "layout", "state", "pacing"},
    "seats": {"outages", "render", "clock", "state"},
    "outages": {"state"},
    "render": {"layout", "state"},
    "clock": {"layout", "state"},
    "delivery": {"state"},
    "layout": set(),
    "state": set(),
    "pacing": set(),
}


def test_tables_imports_follow_their_layers() -> None:
    """Inside bot/tables, the layers above (tests/test_imports.py: no circle anywhere)."""
    found: dict[str, set[str]] = {}
    for path in PACKAGE.glob("*.py"):
        if path.stem == "__init__":
            continue
        tree = ast.parse(path.read_text())
        names = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        names |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        found[path.stem] = {n.split(".")[2] for n in names if n.startswith("bot.tables.")}
        assert not {n for n in names if n == "bot.tables"}, f"{path.stem} imports the package"
    assert set(found) == set(ALLOWED)
    for module, imports in found.items():
        assert imports <= ALLOWED[module], (module, imports - ALLOWED[module])


def test_ui_state_reads_the_stored_keys() -> None:
    stored = json.dumps({"creator": "Ada", "lobby": 3, "table": 11, "table_chat": -5,
                         "table_smz": 2, "hands": {"1": 12, "4": 13}, "scored": 2,
                         "over": 1, "rv": 40})
    ui = UiState.parse(stored)
    assert ui == UiState(creator="Ada", lobby=3, table=11, table_chat=-5, table_smz=2,
                         hands={1: 12, 4: 13}, scored=2, over=True, drawn=40)


def test_ui_state_is_lenient_with_bad_values() -> None:
    assert UiState.parse("not json") == UiState()
    assert UiState.parse("[1, 2]") == UiState()
    ui = UiState.parse(json.dumps({"table": "x", "hands": [1], "rv": 7}))
    assert ui == UiState(drawn=7)


def test_patches_round_trip_and_merge() -> None:
    ui = UiState(table=11, hands={0: 5})
    changes = {"table": None, "hands": {0: 5, 2: 9}, "over": True, "drawn": 3}
    patch = ui_patch(changes)
    assert patch == {"table": None, "hands": {"0": 5, "2": 9}, "over": 1, "rv": 3}
    merged = ui.merged(changes)
    assert merged == UiState(hands={0: 5, 2: 9}, over=True, drawn=3)
    stored = {k: v for k, v in patch.items() if v is not None}
    assert UiState.parse(json.dumps(stored)) == merged


def test_unknown_fields_are_refused() -> None:
    with pytest.raises(TypeError):
        ui_patch({"rv": 3})  # the stored key is not a field name


async def test_a_move_is_read_once(tg: Any, running_bot: Any, monkeypatch: Any) -> None:
    """Each move reads the game once, in its own transaction: the redraw and the computer
    that moves next use the row that transaction stored."""
    from storage import repo
    from tests.e2e.driver import cheap_policy, small_table

    human = tg.add_user("Lettore", language_code="it")
    await human.start_bot()
    group = tg.add_group("Letture", [human])
    table = await small_table(tg, running_bot, group, [human])
    await human.send(group, "/inizia")
    await tg.wait_for_message(group, "Smazzata 1", timeout=10)
    row, _ = await table.state()
    reads = 0
    original = repo.get_game

    def counting(*args: Any, **kwargs: Any) -> Any:
        nonlocal reads
        caller = sys._getframe(1).f_code.co_filename
        reads += f"{os.sep}bot{os.sep}" in caller  # the bot's reads, not the harness's
        return original(*args, **kwargs)

    monkeypatch.setattr(repo, "get_game", counting)
    await table.play(cheap_policy)
    await running_bot.rt.outbox.drain(5)
    monkeypatch.setattr(repo, "get_game", original)
    moves = (await table.row()).version - row.version
    assert moves > 40
    # one read per move (its transaction), and a few for the end of the match
    assert moves <= reads <= moves + 5, (reads, moves)


class _RecordingOutbox:
    """The outbox's queueing side only: which message was asked for, at which rank."""

    def __init__(self, group_wait: float = 0.0) -> None:
        self.edits: dict[tuple[int, int], int] = {}
        self.markups: dict[tuple[int, int], Any] = {}
        self.delays: dict[tuple[int, int], float] = {}
        #: Seconds before the group's next call could go (other calls reserved before).
        self.group_wait = group_wait
        self.budget = self  # (the bot's budget: room for a call)

    def has_room(self) -> bool:
        return True

    def resolve(self, chat_id: int) -> int:
        return chat_id

    def interval(self, chat_id: int) -> float:
        return 60 / 18 if chat_id < 0 else 1.25

    def wait_for(self, chat_id: int) -> float:
        return self.group_wait if chat_id < 0 else 0.0

    def edit(self, chat_id: int, message_id: int, text: str, kb: Any = None, *,
             delay: float = 0.0, priority: int = Priority.TABLE, shown: Any = None) -> None:
        self.edits[(chat_id, message_id)] = priority
        self.markups[(chat_id, message_id)] = kb
        self.delays[(chat_id, message_id)] = delay

    def withdraw(self, chat_id: int, message_id: int) -> None:
        self.edits.pop((chat_id, message_id), None)
        self.markups.pop((chat_id, message_id), None)
        self.delays.pop((chat_id, message_id), None)


async def test_each_message_is_drawn_at_the_rank_of_what_it_unblocks() -> None:
    """The auction: the group table carries the keyboard of the seat in turn (a turn); the
    declaration: the caller's hand does, the table is only a table; in play the hand in
    turn is a turn, the table a table, the others' hands wait."""
    import random

    from bot.prefs import Prefs
    from bot.tables.layout import ChatLayout
    from bot.tables.render import Drawn, Renderer
    from game import Game, TableOptions
    from storage import GameRow, SeatRow

    group = -100
    seats = tuple(SeatRow.human(i, 10 + i, f"P{i}") for i in range(5))
    ui = json.dumps({"table": 1, "table_chat": group, "hands": {str(i): 20 + i for i in range(5)}})
    game = Game.new(TableOptions(), rng=random.Random(4))
    rng = random.Random(4)
    seen: set[str] = set()
    while game.view(None).phase != "play" or "play" not in seen:
        phase = game.view(None).phase
        seat = game.current_seat()
        assert seat is not None
        row = GameRow(1, group, 0, "playing", 10, Prefs().to_json(), 4, game.version, None,
                      ui, None, 0, 0, None, seats)
        box = _RecordingOutbox()
        await Renderer(box, ChatLayout(), _no_results, lambda: "bot").draw(  # type: ignore[arg-type]
            row, game, Drawn(UiState.parse(ui)), [])
        in_turn_hand = box.edits[(10 + seat, 20 + seat)]
        others = {box.edits[(10 + s, 20 + s)] for s in range(5) if s != seat}
        if phase == "auction":  # the bids are in the bidder's hand, not in the group
            assert box.edits[(group, 1)] == Priority.TABLE
            assert in_turn_hand == Priority.TURN and others == {Priority.IDLE}
        elif phase == "declaration":
            assert box.edits[(group, 1)] == Priority.TABLE
            assert in_turn_hand == Priority.TURN
        else:
            assert box.edits[(group, 1)] == Priority.TABLE
            assert in_turn_hand == Priority.TURN and others == {Priority.IDLE}
        seen.add(phase)
        _quick_move(game, rng)
    assert seen == {"auction", "declaration", "play"}


async def test_a_hand_nobody_looks_at_is_not_sent_and_comes_when_the_page_closes() -> None:
    """Issue 32: a new hand whose player opened the Mini App while it waited for the
    budget is not sent (the version still counts as shown); when their page closes, the
    next redraw sends it at once, as a turn's. A page closing also brings a hand that
    was not skipped up to date at once (whatever the outbox held for it: a waiting
    hand's edit in play is held up to a minute)."""
    import random

    from bot.prefs import Prefs
    from bot.presence import Presence
    from bot.tables.layout import ChatLayout
    from bot.tables.render import HELD_FACTOR, Drawn, Landing, Renderer
    from game import Game, TableOptions
    from storage import GameRow, SeatRow

    group = -100
    seats = tuple(SeatRow.human(i, 10 + i, f"P{i}") for i in range(5))
    game = Game.new(TableOptions(), rng=random.Random(4))
    state = {"ui": UiState()}

    def row_of(ui: UiState) -> GameRow:  # (the renderer draws from ``Drawn.ui``)
        return GameRow(1, group, 0, "playing", 10, Prefs().to_json(), 4, game.version, None,
                       "{}", None, 0, 0, None, seats)

    async def land(compute: Landing) -> bool:
        changes = compute(state["ui"], 0)
        if changes is None:
            return False
        state["ui"] = state["ui"].merged(changes)
        return True

    presence = Presence()
    box = _HeldOutbox()
    renderer = Renderer(box, ChatLayout(), _no_results, lambda: "bot",  # type: ignore[arg-type]
                        presence)
    first = Drawn(UiState(), land=land)
    await renderer.draw(row_of(UiState()), game, first, [])
    await asyncio.sleep(0.01)
    waiting = next(s for s in range(5) if s != game.current_seat())
    presence.opened(1, 10 + waiting)  # their page opens while the hands wait
    box.release.set()
    assert await asyncio.gather(*first.pending) == [True] * 6
    ui = state["ui"]
    assert waiting not in ui.hands and len(ui.hands) == 4
    assert (10 + waiting) not in {chat for chat, _ in box.texts}
    presence.closed(1, 10 + waiting)
    renderer.back(1, 10 + waiting)
    box.asked.clear()
    again = Drawn(ui, land=land)
    await renderer.draw(row_of(ui), game, again, [])
    assert box.asked == [10 + waiting] and box.ranks[10 + waiting] == Priority.TURN
    assert await asyncio.gather(*again.pending) == [True]
    assert waiting in state["ui"].hands

    # in play, a waiting hand's edit is held; the page's close brings it at once
    hands = json.dumps({"table": 1, "table_chat": group,
                        "hands": {str(i): 20 + i for i in range(5)}})
    rng = random.Random(4)
    while game.view(None).phase != "play":
        _quick_move(game, rng)
    seat = game.current_seat()
    assert seat is not None
    game.apply(seat, game.legal_actions(seat)[0])
    waiting = next(s for s in range(5) if s not in (seat, game.current_seat()))
    row = GameRow(1, group, 0, "playing", 10, Prefs().to_json(), 4, game.version, None,
                  hands, None, 0, 0, None, seats)
    held = _RecordingOutbox()
    renderer = Renderer(held, ChatLayout(), _no_results, lambda: "bot",  # type: ignore[arg-type]
                        Presence())
    hand = (10 + waiting, 20 + waiting)
    await renderer.draw(row, game, Drawn(UiState.parse(hands)), [])
    assert (held.edits[hand], held.delays[hand]) == (Priority.IDLE, 4.0 * HELD_FACTOR)
    renderer.back(1, 10 + waiting)
    await renderer.draw(row, game, Drawn(UiState.parse(hands)), [])
    assert (held.edits[hand], held.delays[hand]) == (Priority.TURN, 0.0)
    await renderer.draw(row, game, Drawn(UiState.parse(hands)), [])  # (once)
    assert (held.edits[hand], held.delays[hand]) == (Priority.IDLE, 4.0 * HELD_FACTOR)


async def test_with_a_player_in_the_mini_app_the_group_is_the_spectators_view() -> None:
    """Issue 32: at a table with a player live in the Mini App the group's edits take the
    lowest rank, held until a milestone (a trick won, the auction's result); where some
    play in the chat the auction is shown as it goes, a few bids in one edit (held
    ``AUCTION_HELD_FACTOR × private_lazy_seconds``), where all are live it waits for its
    result. The chat players' waiting hands are not redrawn for a trick's end there (the
    group's milestone shows it; their turn's edit brings their hand up to date). With
    nobody live, the group is a table's and the waiting hands show each trick's end."""
    import random

    from bot.prefs import Prefs
    from bot.presence import Presence
    from bot.tables.layout import ChatLayout
    from bot.tables.render import AUCTION_HELD_FACTOR, HELD_FACTOR, Drawn, Renderer
    from game import Game, TableOptions
    from game.events import Event, SuitDeclared, TrickWon
    from storage import GameRow, SeatRow

    group = -100
    seats = tuple(SeatRow.human(i, 10 + i, f"P{i}") for i in range(5))
    ui = json.dumps({"table": 1, "table_chat": group, "hands": {str(i): 20 + i for i in range(5)}})

    async def draw(game: Game, live: set[int], events: list[Event]) -> _RecordingOutbox:
        presence = Presence()
        for user in live:
            presence.opened(1, user)
        row = GameRow(1, group, 0, "playing", 10, Prefs().to_json(), 4, game.version, None,
                      ui, None, 0, 0, None, seats)
        box = _RecordingOutbox()
        renderer = Renderer(box, ChatLayout(), _no_results, lambda: "bot",  # type: ignore[arg-type]
                            presence)
        await renderer.draw(row, game, Drawn(UiState.parse(ui)), events)
        return box

    lazy = 4.0
    game = Game.new(TableOptions(), rng=random.Random(4))
    rng = random.Random(4)
    table = (group, 1)
    box = await draw(game, set(), [])
    assert (box.edits[table], box.delays[table]) == (Priority.TABLE, 0.0)
    box = await draw(game, {10}, [])  # one in the Mini App, four in the chat
    assert (box.edits[table], box.delays[table]) == (Priority.IDLE, lazy * AUCTION_HELD_FACTOR)
    assert (10, 20) not in box.edits  # (nothing in a live player's chat)
    box = await draw(game, set(range(10, 15)), [])  # all of them there
    assert (box.edits[table], box.delays[table]) == (Priority.IDLE, lazy * HELD_FACTOR)
    tricks = 0
    while tricks < 2:
        events = _quick_move(game, rng)
        if game.view(None).phase != "play":
            continue
        won = any(isinstance(e, TrickWon) for e in events)
        tricks += won
        leader = game.current_seat()
        waiting = [(10 + s, 20 + s) for s in range(1, 5) if s != leader]
        box = await draw(game, {10}, events)
        assert box.edits[table] == Priority.IDLE
        milestone = won or any(isinstance(e, SuitDeclared) for e in events)
        assert box.delays[table] == (0.0 if milestone else lazy * HELD_FACTOR)
        assert all((box.edits[w], box.delays[w]) == (Priority.IDLE, lazy * HELD_FACTOR)
                   for w in waiting if w in box.edits)
        if won:
            box = await draw(game, set(), events)
            assert (box.edits[table], box.delays[table]) == (Priority.TABLE, 0.0)
            assert waiting and all((box.edits[w], box.delays[w]) == (Priority.IDLE, 0.0)
                                   for w in waiting)


async def test_the_pressed_message_and_the_bidder_in_turn_are_drawn_first() -> None:
    """The message whose button made the move is redrawn before the turns (it shows the
    presser their own move); in a group's auction the bidder in turn always gets the bids
    in their hand, as a turn, whether the group's next slot is near or far; no other hand
    and no group message carries a bid."""
    import random

    from bot.prefs import Prefs
    from bot.render import keyboards as kb
    from bot.tables.layout import ChatLayout
    from bot.tables.render import Drawn, Renderer
    from game import Game, TableOptions
    from storage import GameRow, SeatRow

    group = -100
    seats = tuple(SeatRow.human(i, 10 + i, f"P{i}") for i in range(5))
    ui = json.dumps({"table": 1, "table_chat": group, "hands": {str(i): 20 + i for i in range(5)}})
    game = Game.new(TableOptions(), rng=random.Random(4))
    row = GameRow(1, group, 0, "playing", 10, Prefs().to_json(), 4, game.version, None,
                  ui, None, 0, 0, None, seats)
    seat = game.current_seat()
    assert seat is not None and game.view(None).phase == "auction"
    after = (seat + 1) % 5  # (a hand pressed, e.g. a private call from the picker)
    for late, pressed in ((False, None), (True, None), (False, (10 + after, 20 + after))):
        box = _RecordingOutbox(group_wait=10.0 if late else 0.0)
        renderer = Renderer(box, ChatLayout(), _no_results, lambda: "bot")  # type: ignore[arg-type]
        await renderer.draw(row, game, Drawn(UiState.parse(ui)), [], pressed)
        hand = (10 + seat, 20 + seat)
        bids = set(kb.all_callback_data(kb.calls_keyboard("it", 1, game.view(seat))))
        assert bids and bids <= set(kb.all_callback_data(box.markups[hand]))
        assert box.edits[hand] == Priority.TURN
        assert not any(d.startswith("a:") for d in kb.all_callback_data(box.markups[(group, 1)]))
        for s in range(5):
            key = (10 + s, 20 + s)
            if key != hand:
                assert box.edits[key] == (Priority.PRESSED if key == pressed
                                          else Priority.IDLE)
                assert not bids & set(kb.all_callback_data(box.markups[key]))


class _HeldOutbox(_RecordingOutbox):
    """Also sends new messages, each held until ``release`` is set (Telegram's budget)."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[int] = []
        self.release = asyncio.Event()
        self.texts: dict[tuple[int, int], str] = {}
        self.ranks: dict[int, int] = {}

    async def send(self, chat_id: int, text: str, kb: Any = None, *, thread_id: Any = None,
                   priority: int = Priority.TABLE, wanted: Any = None) -> Any:
        from types import SimpleNamespace

        self.asked.append(chat_id)
        self.ranks[chat_id] = priority
        await self.release.wait()
        if wanted is not None and not wanted():  # (as the outbox: not sent, not counted)
            return None
        mid = 100 + len(self.texts)
        self.texts[(chat_id, mid)] = text
        return SimpleNamespace(message_id=mid, chat=SimpleNamespace(id=chat_id))

    def edit(self, chat_id: int, message_id: int, text: str, kb: Any = None, *,
             delay: float = 0.0, priority: int = Priority.TABLE, shown: Any = None) -> None:
        super().edit(chat_id, message_id, text, kb, delay=delay, priority=priority)
        self.texts[(chat_id, message_id)] = text

    def promote(self, chat_id: int, priority: int) -> None:
        """(The sends waiting for this chat now carry something more urgent.)"""
        self.ranks[chat_id] = min(self.ranks[chat_id], priority)


async def _draw_live(game: Any, ui: str, live: set[int], events: Any,
                     asked: bool = False) -> tuple[_HeldOutbox, Any]:
    """One redraw of game 1 in group -100 (five humans, users 10..14; ``live``: those in
    the Mini App), its new messages sent at once: the outbox and the Drawn record."""
    from bot.prefs import Prefs
    from bot.presence import Presence
    from bot.tables.layout import ChatLayout
    from bot.tables.render import Drawn, Renderer
    from bot.tables.state import UiState
    from storage import GameRow, SeatRow

    presence = Presence()
    for user in live:
        presence.opened(1, user)
    seats = tuple(SeatRow.human(i, 10 + i, f"P{i}") for i in range(5))
    row = GameRow(1, -100, 0, "playing", 10, Prefs().to_json(), 4, game.version, None,
                  ui, None, 0, 0, None, seats)
    box = _HeldOutbox()
    box.release.set()
    renderer = Renderer(box, ChatLayout(), _no_results, lambda: "bot",  # type: ignore[arg-type]
                        presence)
    if asked:
        renderer.table_asked(1)
    drawn = Drawn(UiState.parse(ui))
    await renderer.draw(row, game, drawn, events)
    await asyncio.gather(*drawn.pending)
    return box, drawn


async def test_where_all_play_in_the_mini_app_a_new_table_waits_for_the_auctions_result(
) -> None:
    """Issue 32: at a table whose players are all live in the Mini App (the group serves
    spectators only) a new smazzata's table is not sent during the auction: it is sent
    with the auction's result (one call instead of a send and the milestone's edit), or at
    once if someone asks for it (/tavolo) or a player is in the chat; a deal voided before
    its table was sent is told to the group."""
    import random

    from game import Game, TableOptions
    from game.events import DealVoided, Event

    group = -100
    ui = json.dumps({"hands": {str(i): 20 + i for i in range(5)}, "table_smz": 0})

    async def group_sends(game: Game, live: set[int], events: list[Event],
                          asked: bool = False) -> list[str]:
        box, _ = await _draw_live(game, ui, live, events, asked)
        return [text for (chat, _), text in box.texts.items() if chat == group]

    everyone = set(range(10, 15))
    game = Game.new(TableOptions(), rng=random.Random(4))
    assert await group_sends(game, everyone, []) == []  # the auction: nothing yet
    assert len(await group_sends(game, everyone, [], asked=True)) == 1  # /tavolo
    assert len(await group_sends(game, everyone - {12}, [])) == 1  # one in the chat
    assert len(await group_sends(game, set(), [])) == 1
    rng = random.Random(4)
    while game.view(None).phase != "play":
        events = _quick_move(game, rng)
        if game.view(None).phase != "play":
            assert await group_sends(game, everyone, events) == []
    assert len(await group_sends(game, everyone, events)) == 1  # the auction's result
    for seed in range(50):  # a deal voided (all passed) before its table was sent
        game = Game.new(TableOptions(), rng=random.Random(seed))
        events = []
        while game.smazzata_index == 0 and game.view(None).phase == "auction":
            seat = game.current_seat()
            assert seat is not None
            legal = game.legal_actions(seat)
            passes = [a for a in legal if a.code == "P"]
            events = game.apply(seat, passes[0] if passes else legal[0])
        if any(isinstance(e, DealVoided) for e in events):
            break
    else:
        raise AssertionError("no deal voided in 50 seeds")
    sent = await group_sends(game, everyone, events)
    assert len(sent) == 1 and "1" in sent[0]  # the voided smazzata, told; no table yet


async def test_where_all_play_in_the_mini_app_the_closed_table_shows_the_result() -> None:
    """Issue 32: at the end of a smazzata at a table whose players are all live in the
    Mini App, the group's table is closed with its last trick *and* the smazzata's result
    in one edit, not an edit and a new message; where a player is in the chat, the result
    is a new message as before."""
    import random

    from bot.prefs import Prefs
    from bot.render import texts
    from game import Game, TableOptions
    from game.events import Event, SmazzataScored

    group = -100
    ui = json.dumps({"table": 1, "table_chat": group, "table_smz": 0,
                     "hands": {str(i): 20 + i for i in range(5)}})
    game = Game.new(TableOptions(), rng=random.Random(4))
    rng = random.Random(4)
    events: list[Event] = []
    while not any(isinstance(e, SmazzataScored) for e in events):
        seat = game.current_seat()
        assert seat is not None
        events = game.apply(seat, rng.choice(game.legal_actions(seat)))
    scored = next(e for e in events if isinstance(e, SmazzataScored))

    names = [f"P{i}" for i in range(5)]
    result = texts.any_result_text("it", Prefs().options.deck_style.value, scored, names,
                                   False, game.morto)
    box, drawn = await _draw_live(game, ui, set(range(10, 15)), events)
    assert box.texts[(group, 1)].endswith(result)  # the closed table shows the result
    assert [key for key in box.texts if key[0] == group] == [(group, 1)]  # and nothing else
    assert drawn.changes["scored"] == 1
    box, drawn = await _draw_live(game, ui, {10, 11, 12, 13}, events)  # one in the chat
    assert not box.texts[(group, 1)].endswith(result)
    sent = [text for (chat, mid), text in box.texts.items() if chat == group and mid != 1]
    assert sent[0] == result  # a new message, then the new table (a player in the chat)
    assert "scored" not in drawn.changes  # (stored when its message lands)


async def test_a_new_smazzatas_messages_are_sent_outside_the_redraw() -> None:
    """A new smazzata's table and hands wait for Telegram's budget after the redraw that
    asked for them returned (the driver awaits them outside the game's redraw lock, so
    the next move's redraw does not wait behind them): a redraw meanwhile sends none of
    them again; each is stored when sent, into the latest UI state; one sent too late
    for its smazzata is closed (no buttons), not stored. The first bidder's hand goes as a
    turn (the bids are there), the table and the hands of those who cannot act yet after
    the turns."""
    import random

    from bot.prefs import Prefs
    from bot.tables.layout import ChatLayout
    from bot.tables.render import Drawn, Landing, Renderer
    from bot.tables.state import UiState
    from game import Game, TableOptions
    from storage import GameRow, SeatRow

    group = -100
    seats = tuple(SeatRow.human(i, 10 + i, f"P{i}") for i in range(5))
    game = Game.new(TableOptions(), rng=random.Random(4))
    row = GameRow(1, group, 0, "playing", 10, Prefs().to_json(), 4, game.version, None,
                  "{}", None, 0, 0, None, seats)
    state = {"ui": UiState(), "smazzata": 0}

    async def land(compute: Landing) -> bool:
        changes = compute(state["ui"], state["smazzata"])  # type: ignore[arg-type]
        if changes is None:
            return False
        state["ui"] = state["ui"].merged(changes)  # type: ignore[union-attr]
        return True

    box = _HeldOutbox()
    renderer = Renderer(box, ChatLayout(), _no_results, lambda: "bot")  # type: ignore[arg-type]
    first = Drawn(UiState(), land=land)
    await renderer.draw(row, game, first, [])
    await asyncio.sleep(0.01)
    assert sorted(box.asked) == [group, 10, 11, 12, 13, 14]  # all asked, none sent yet
    assert len(first.pending) == 6 and renderer.sending(1) and first.chats is None
    bidder = game.current_seat()
    assert bidder is not None
    assert box.ranks == {group: Priority.TABLE, **{
        10 + s: Priority.TURN if s == bidder else Priority.TABLE for s in range(5)}}
    again = Drawn(UiState(), land=land)
    await renderer.draw(row, game, again, [])  # the next move's redraw, meanwhile
    await asyncio.sleep(0.01)
    assert len(box.asked) == 6 and not again.pending
    # the first bidder bids (in the Mini App, say) while the hands are on their way: the
    # next bidder's hand, in flight at a table's rank, is sent as a turn's now
    moved = game.clone()
    moved.apply(bidder, moved.legal_actions(bidder)[-1])
    following = moved.current_seat()
    assert following is not None and following != bidder
    assert box.ranks[10 + following] == Priority.TABLE
    await renderer.draw(row, moved, Drawn(UiState(), land=land), [])
    assert len(box.asked) == 6
    assert box.ranks == {group: Priority.TABLE, **{
        10 + s: Priority.TURN if s in (bidder, following) else Priority.TABLE
        for s in range(5)}}
    box.release.set()
    assert await asyncio.gather(*first.pending) == [True] * 6
    ui = state["ui"]
    assert isinstance(ui, UiState) and not renderer.sending(1)
    assert ui.table is not None and ui.table_chat == group and ui.table_smz == 0
    assert {(10 + s, m) for s, m in ui.hands.items()} <= set(box.texts)
    assert len(set(ui.hands.values())) == 5 and ui.table not in ui.hands.values()

    # the smazzata moved on before a new message was sent: closed, not stored
    box, state["ui"] = _HeldOutbox(), UiState()
    renderer = Renderer(box, ChatLayout(), _no_results, lambda: "bot")  # type: ignore[arg-type]
    late = Drawn(UiState(), land=land)
    await renderer.draw(row, game, late, [])
    state["smazzata"] = 1
    box.release.set()
    assert await asyncio.gather(*late.pending) == [False] * 6
    assert state["ui"] == UiState()
    assert len(box.markups) == 6 and all(kb is None for kb in box.markups.values())


async def _no_results(game_id: int) -> list[Any]:
    return []


def _quick_move(game: Any, rng: Any) -> Any:
    """The seat in turn moves: a pass once someone has bid (a short auction), else a
    random legal action; returns the move's events."""
    seat = game.current_seat()
    assert seat is not None
    legal = game.legal_actions(seat)
    passes = [a for a in legal if a.code == "P"]
    return game.apply(seat, passes[0] if passes and game.bids else rng.choice(legal))


class _SpectatorOutbox(_HeldOutbox):
    """Sends an edit asked for at once (delay 0) there and then; an edit that may wait is
    kept, replaced by the next one asked for the same message (as the outbox coalesces),
    and sent with it: ``sent`` holds each message's texts as Telegram showed them."""

    def __init__(self) -> None:
        super().__init__()
        self.release.set()
        self.sent: dict[tuple[int, int], list[str]] = {}
        self.waiting: dict[tuple[int, int], tuple[str, Any]] = {}

    def edit(self, chat_id: int, message_id: int, text: str, kb: Any = None, *,
             delay: float = 0.0, priority: int = Priority.TABLE, shown: Any = None) -> None:
        super().edit(chat_id, message_id, text, kb, delay=delay, priority=priority)
        key = (chat_id, message_id)
        if delay > 0:
            self.waiting[key] = (text, shown)
            return
        self.waiting.pop(key, None)
        self.sent.setdefault(key, []).append(text)
        if shown is not None:
            shown()


def _tricks_shown(text: str) -> list[int]:
    """The tricks won that a group table's text shows (listed, or the last in full)."""
    import re

    found = [int(n) for n in re.findall(r"Mano (\d+)(?:: <b>| presa da)", text)]
    return sorted(set(found))


async def _spectated_smazzata(close_after: int | None) -> tuple[list[str], list[int]]:
    """A smazzata played at a table whose five players are live in the Mini App, one
    redraw a move (the renderer of the bot, its outbox stood in by
    :class:`_SpectatorOutbox`); ``close_after``: the page of user 12 closes once that
    many tricks are won. The texts the group's table showed in play and, per text, the
    tricks won so far."""
    import random

    from bot.prefs import Prefs
    from bot.presence import Presence
    from bot.tables.layout import ChatLayout
    from bot.tables.render import Drawn, Renderer
    from bot.tables.state import UiState
    from game import Game, TableOptions
    from game.events import TrickWon
    from storage import GameRow, SeatRow

    group = -100
    presence = Presence()
    for user in range(10, 15):
        presence.opened(1, user)
    seats = tuple(SeatRow.human(i, 10 + i, f"P{i}") for i in range(5))
    ui = json.dumps({"table": 1, "table_chat": group, "table_smz": 0,
                     "hands": {str(i): 20 + i for i in range(5)}})
    box = _SpectatorOutbox()
    renderer = Renderer(box, ChatLayout(), _no_results, lambda: "bot",  # type: ignore[arg-type]
                        presence)
    game = Game.new(TableOptions(), rng=random.Random(4))
    rng = random.Random(4)
    won: list[int] = []
    while game.smazzata_index == 0:
        events = _quick_move(game, rng)
        row = GameRow(1, group, 0, "playing", 10, Prefs().to_json(), 4, game.version, None,
                      ui, None, 0, 0, None, seats)
        before = len(box.sent.get((group, 1), []))
        won += [e.trick + 1 for e in events if isinstance(e, TrickWon)]
        if close_after is not None and len(won) == close_after:
            presence.closed(1, 12)
        await renderer.draw(row, game, Drawn(UiState.parse(ui)), events)
        after = len(box.sent.get((group, 1), []))
        assert after - before <= 1
    texts_sent = box.sent[(group, 1)]
    return texts_sent, won


async def test_where_all_play_in_the_mini_app_the_table_shows_every_trick_every_other_one(
) -> None:
    """Issue 32 (d): at a table whose players are all live in the Mini App, the group's
    table (spectators only) is redrawn at every other trick won, not each: a smazzata's
    edits in play are half its tricks, and each lists every trick won since the previous
    one, so across them the spectators see every trick, in order, with who took it and
    its points; the last trick closes the table at once, with the tricks before it not
    shown yet."""
    sent, won = await _spectated_smazzata(None)
    assert won == list(range(1, 9))
    in_play = [t for t in sent if _tricks_shown(t)]
    assert len(in_play) == len(won) // 2  # tricks 2, 4, 6 and the closing one (8)
    shown = [n for t in in_play for n in _tricks_shown(t)]
    assert shown == won  # every trick, once, in order
    assert "Ultime prese</b>: 2 mani" in in_play[0] and "punt" in in_play[0]
    from bot.i18n import tr

    assert in_play[-1].startswith(tr("it", "table.finished", n=1))  # (with the result)
    assert all(len(t) <= 4096 for t in sent)


async def test_when_a_page_closes_the_next_trick_gets_its_own_edit() -> None:
    """Issue 32 (d): once a player at such a table is no longer live, the group's table
    goes back to an edit per trick won, its next edit showing the tricks since the
    previous one (the trick held while all were live too)."""
    sent, _ = await _spectated_smazzata(close_after=3)
    in_play = [_tricks_shown(t) for t in sent if _tricks_shown(t)]
    # tricks 1-2 while all were live; trick 3 (the page closed) with nothing held back
    # between; then one edit a trick
    assert in_play == [[1, 2], [3], [4], [5], [6], [7], [8]]
    sent, _ = await _spectated_smazzata(close_after=4)
    in_play = [_tricks_shown(t) for t in sent if _tricks_shown(t)]
    assert in_play[:2] == [[1, 2], [3, 4]] and in_play[2:] == [[n] for n in range(5, 9)]
