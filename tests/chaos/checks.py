"""Invariants checked after chaos: the action log, acknowledged moves, the scoreboard.

Everything is read through the storage API; the reference is a replay of the action log
through the pure game core from the stored seed.
"""

from __future__ import annotations

import asyncio
import random
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from bench.sim import Press, SimTable, find_button_message
from game import Game, parse_action
from storage import Database, Executor, GameRow, repo


async def rows_of(tables: Iterable[SimTable]) -> list[GameRow]:
    """The tables' current games, as stored."""
    return [(await t.state())[0] for t in tables]


async def versions_of(tables: Iterable[SimTable]) -> list[int]:
    """The tables' current versions (how many moves each made), as stored."""
    return [row.version for row in await rows_of(tables)]


async def replay(db: Executor, row: GameRow) -> Game:
    """Replay a game's action log from its seed; assert the log has no gap and no
    duplicate and that the replay reproduces the stored snapshot exactly."""
    assert row.snapshot_json is not None and row.seed is not None, row
    actions = await repo.load_actions(db, row.game_id)
    seqs = [a.seq for a in actions]
    assert seqs == list(range(1, row.version + 1)), f"game {row.game_id}: log {seqs}"
    stored = Game.from_json(row.snapshot_json)
    game = Game.new(stored.options, rng=random.Random(row.seed))
    for action in actions:
        assert action.seat is not None
        game.apply(action.seat, parse_action(action.code))
    assert game.version == row.version
    assert game.to_json() == row.snapshot_json, f"game {row.game_id}: replay differs"
    return game


async def check_acknowledged(db: Executor, presses: Iterable[Press]) -> int:
    """Every press the bot acknowledged (answer without alert) is in the log, once, as
    the move right after the version the button was drawn for; every human move in the
    log was pressed by that user. Returns the number of acknowledged presses."""
    presses = list(presses)
    by_game: defaultdict[int, list[Press]] = defaultdict(list)
    for press in presses:
        by_game[press.game_id].append(press)
    acknowledged = 0
    for game_id, game_presses in by_game.items():
        log = {a.seq: a for a in await repo.load_actions(db, game_id)}
        pressed = {(p.user_id, p.version, p.code) for p in game_presses}
        for press in game_presses:
            if not press.acknowledged:
                continue
            acknowledged += 1
            entry = log.get(press.version + 1)
            assert entry is not None, f"acknowledged {press} lost"
            assert (entry.actor, entry.user_id, entry.code) == (
                "human",
                press.user_id,
                press.code,
            ), f"acknowledged {press} but the log has {entry}"
        for entry in log.values():
            if entry.actor == "human":
                key = (entry.user_id, entry.seq - 1, entry.code)
                assert key in pressed, f"game {game_id}: {entry} was never pressed"
    return acknowledged


async def check_scoreboard(db: Database, chat_id: int) -> None:
    """The chat's leaderboard equals the replay of its finished games' logs."""
    rows = await db.fetch(
        "SELECT game_id FROM games WHERE chat_id = ? AND status = 'finished' ORDER BY game_id",
        (chat_id,),
    )
    totals: defaultdict[int, int] = defaultdict(int)
    matches: defaultdict[int, int] = defaultdict(int)
    smazzate: defaultdict[int, int] = defaultdict(int)
    for r in rows:
        row = await repo.get_game(db, int(r["game_id"]))
        assert row is not None
        game = await replay(db, row)
        results = await repo.load_smazzata_results(db, row.game_id)
        assert len(results) == game.scored_count
        for seat in row.seats:
            if seat.is_human and seat.user_id is not None:
                totals[seat.user_id] += game.totals[seat.seat]
                matches[seat.user_id] += 1
                smazzate[seat.user_id] += game.scored_count
    board = await repo.leaderboard(db, chat_id)
    assert {s.user_id: s.total for s in board} == dict(totals)
    assert {s.user_id: s.matches for s in board} == dict(matches)
    assert {s.user_id: s.smazzate for s in board} == dict(smazzate)


async def turn_in_play(table: SimTable) -> tuple[int, Any]:
    """Play until a human is in turn in the play phase; (version, that user)."""
    loop = asyncio.get_running_loop()
    version, user = await table.human_turn()
    while (await table.state())[1].phase.value != "play":  # type: ignore[union-attr]
        await table.play(deadline=loop.time() + 10, presses=1)
        version, user = await table.human_turn(after=version)
    return version, user


async def card_in_play(table: SimTable) -> tuple[GameRow, int, Any, str, Any]:
    """A human in turn in the play phase (see :func:`turn_in_play`): (the row, its
    version, that user, the callback data of one of their legal cards, the message
    carrying it)."""
    version, user = await turn_in_play(table)
    row, game = await table.state()
    seat = row.seat_of(user.id)
    assert seat is not None and game is not None
    data = f"a:{row.game_id}:{version}:{game.view(seat.seat).legal[0]}"
    message = find_button_message(user.private_chat, data)
    assert message is not None
    return row, version, user, data, message
