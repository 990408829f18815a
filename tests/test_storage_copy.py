"""``python -m storage.copy``: an SQLite database of the bot, with a finished match and
one in progress, copied to each engine; the copy holds the same rows and the match in
progress goes on there exactly as on the original."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from storage import StorageError, open_database, repo
from storage.copy import TABLES, copy_database
from tests.conftest import make_bot
from tests.e2e.test_e2e_restart import play_while_down, started_then_stopped

REPO_ROOT = Path(__file__).resolve().parent.parent


async def _rows(url: str) -> dict[str, list[tuple[Any, ...]]]:
    db = await open_database(url, migrate=False, check_writable=False)
    try:
        return {
            table: [tuple(r) for r in await db.fetch(f"SELECT * FROM {table} ORDER BY {key}")]
            for table, key in TABLES
        }
    finally:
        await db.close()


async def _played_out(url: str, game_id: int) -> tuple[Any, ...]:
    """Play the game to its end with the computers' moves (deterministic); return its
    action log, final snapshot and the chat's leaderboard."""
    row = await play_while_down(url, game_id, lambda game: game.is_over())
    db = await open_database(url)
    try:
        actions = [(a.seq, a.seat, a.code, a.actor) for a in await repo.load_actions(db, game_id)]
        final = await repo.get_game(db, game_id)
        assert final is not None and final.status == "finished"
        board = [(s.user_id, s.total, s.matches) for s in await repo.leaderboard(db, row.chat_id)]
        return actions, final.snapshot_json, board
    finally:
        await db.close()


async def test_copy_resumes_identically(tg: Any, tmp_path: Path, database_url: str) -> None:
    source = f"sqlite:///{tmp_path / 'source.db'}"
    finished, _, _ = await started_then_stopped(tg, source, "hands:1")
    await play_while_down(source, finished.game_id, lambda game: game.is_over())
    table, _, _ = await started_then_stopped(tg, source, "hands:1")
    await play_while_down(source, table.game_id, lambda game: game.trick_no == 3)

    # the command line, as documented
    done = subprocess.run(
        [sys.executable, "-m", "storage.copy", source, database_url],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "games: 2 rows" in done.stdout
    original = await _rows(source)
    assert original == await _rows(database_url)
    assert {row[3] for row in original["games"]} == {"finished", "playing"}  # status

    # a second copy into the filled target is refused, and changes nothing
    with pytest.raises(StorageError) as refused:
        await copy_database(source, database_url)
    assert refused.value.code == "not_empty"

    # the bot starts on the copy (its computers wait 30 s to move): it resumes the table
    # where it was, and new games get new ids there as in the original
    bot = await make_bot(tg, database_url, computer_delay_seconds=30).start()
    try:
        await bot.rt.outbox.drain()
        row = await repo.get_game(bot.rt.db, table.game_id)
        assert row is not None and row.status == "playing"
        assert (row.game_id, row.version) in {(r[0], r[7]) for r in original["games"]}
        new_game = await repo.create_lobby(bot.rt.db, -4242, 0, None, "{}")
        assert new_game > max(r[0] for r in original["games"])
        await repo.set_status(bot.rt.db, new_game, "cancelled")
    finally:
        await bot.stop()
    # and the match in progress ends the same way on both
    assert await _played_out(database_url, table.game_id) == await _played_out(
        source, table.game_id
    )
