"""SQLite under adverse conditions while a match is played: the database locked by
another process, the disk full, the database read-only, and an old schema on start."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.sim import SimTable
from storage import LATEST_VERSION, ScoreDelta, migrations, open_database, repo
from tests.chaos.checks import check_acknowledged, check_scoreboard, replay, turn_in_play
from tests.chaos.conftest import Chaos
from tests.conftest import make_bot
from tests.test_storage_locking import lock_held_by_other_process


class NotTold(AssertionError):
    """The storage failure was not explained to the player and the group."""


async def test_database_locked_by_another_process_loses_no_move(chaos: Chaos) -> None:
    table = await chaos.table(1)
    version, _ = await turn_in_play(table)
    path = chaos.db.target.path
    assert path is not None
    loop = asyncio.get_running_loop()
    # let the bot finish its own writes first (it records the drawn version just after the
    # edit): one queued behind the lock would hold up the table's reads too, and the press
    # would only come once the lock is gone
    await chaos.tg.idle(quiet=0.3)
    with lock_held_by_other_process(path, 1.5) as proc:
        t0 = loop.time()
        await table.play(deadline=t0 + 10, presses=1)
        press = table.presses[-1]
        await asyncio.get_running_loop().run_in_executor(None, proc.wait, 10)
        answer = await press.handle.wait(10)
    assert not answer.show_alert, answer.text
    assert answer.at - press.handle.created_at >= 1.0  # it waited for the lock
    actions = await repo.load_actions(chaos.db, press.game_id, after_seq=version)
    assert actions[0].code == press.code and actions[0].user_id == press.user_id
    assert await repo.get_user(chaos.db, 424242) is not None  # the other writer's row too
    assert await table.play(deadline=loop.time() + 30, stall_after=5)
    await check_acknowledged(chaos.db, table.presses)
    await check_scoreboard(chaos.db, table.group.id)
    assert not chaos.problems(), chaos.problems()


# ------------------------------------------------------------------------------ full, read-only


@contextlib.contextmanager
def small_disk(where: Path, megabytes: int = 16) -> Iterator[Path]:
    """A tmpfs of a few MB (root only: CI and the dev machines run as root)."""
    where.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={megabytes}m", "tmpfs", str(where)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs to fill (needs root): {done.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


#: The ballast's share of the small disk written before the bot starts: freeing the
#: ballast frees at least this much, however full the database's files left the rest.
RESERVE = 2 << 20


def reserve(disk: Path) -> Path:
    """The ballast file, made (with :data:`RESERVE` bytes) on the empty disk: filling it
    later needs no new file. Twice in fresh-clone CI runs, creating it once the bot had
    run failed with ENOSPC; what had used the disk was not seen (locally the database's
    files held 1.4 MB of the 16 MB then)."""
    ballast = disk / "ballast"
    ballast.write_bytes(b"\0" * RESERVE)
    return ballast


def fill(ballast: Path) -> str:
    """Grow the ballast until the disk is full; what the disk held before (for a
    failure's message)."""
    held = {p.name: p.stat().st_size for p in ballast.parent.iterdir()}
    with ballast.open("ab") as f:
        chunk = b"\0" * (1 << 16)
        with contextlib.suppress(OSError):
            while True:
                f.write(chunk)
                f.flush()
    return f"the disk held {held} before it was filled"


async def storage_outage(chaos: Chaos, table: SimTable, break_it: Any, fix_it: Any) -> list[str]:
    """A human presses while the database cannot be written, then again once fixed.
    Returns what the bot failed to explain (for `NotTold`)."""
    version, _ = await turn_in_play(table)
    gid = table.game_id
    assert gid is not None
    await chaos.tg.idle(quiet=0.3)
    group_before = max(table.group.messages)
    await break_it()
    loop = asyncio.get_running_loop()
    await table.play(deadline=loop.time() + 10, presses=1)
    failed = table.presses[-1]
    answer = await failed.handle.wait(15)
    assert answer.show_alert and answer.text, answer  # at least some alert
    row = await repo.get_game(chaos.db, gid)
    assert row is not None and row.version == version  # nothing half-written
    await asyncio.sleep(1.0)
    missing = []
    if "salv" not in answer.text.lower():
        missing.append(f"the alert does not say the move was not saved: {answer.text!r}")
    told = [m for m in table.group.messages.values() if m.from_bot and m.message_id > group_before]
    if not told:
        missing.append("nothing was said in the group")
    await fix_it()
    # the same button, pressed again once the database is writable: the game resumes
    assert await table.play(deadline=loop.time() + 30, stall_after=5)
    row = await repo.get_game(chaos.db, gid)
    assert row is not None
    await replay(chaos.db, row)
    await check_acknowledged(chaos.db, table.presses)
    await check_scoreboard(chaos.db, table.group.id)
    return missing


async def test_disk_full_then_freed(
    tg: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with small_disk(tmp_path / "disk") as disk:
        ballast = reserve(disk)
        bot = await make_bot(tg, disk / "bot.db").start()
        try:
            chaos = Chaos(tg, bot, caplog)
            table = await chaos.table(1)

            async def break_it() -> None:
                await chaos.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                print(fill(ballast))  # (shown if the test fails)

            async def fix_it() -> None:
                ballast.unlink()

            missing = await storage_outage(chaos, table, break_it, fix_it)
        finally:
            await bot.stop()
    if missing:
        raise NotTold("; ".join(missing))


async def test_read_only_database_then_writable(chaos: Chaos) -> None:
    """``PRAGMA query_only`` on the bot's connection: every write fails with SQLite's
    read-only error, as when the file or its directory becomes read-only."""
    table = await chaos.table(1)

    async def break_it() -> None:
        await chaos.db.execute("PRAGMA query_only = 1")

    async def fix_it() -> None:
        await chaos.db.execute("PRAGMA query_only = 0")

    missing = await storage_outage(chaos, table, break_it, fix_it)
    if missing:
        raise NotTold("; ".join(missing))


# ------------------------------------------------------------------------------ old schema


async def test_old_schema_is_migrated_on_start_and_keeps_its_data(
    tg: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "old.db"
    old = await open_database(path, migrate=False)
    await migrations.upgrade(old, target=1)
    assert await migrations.get_version(old) == 1 < LATEST_VERSION
    veteran = tg.add_user("Veterano", language_code="it")
    player = tg.add_user("Nuova <leva>", language_code="it")
    group = tg.add_group("Vecchio tavolo", [player, veteran], admins=[player])
    async with old.transaction() as tx:
        await repo.upsert_user(tx, veteran.id, "Veterano")
        await repo.apply_score_deltas(
            tx, group.id, [ScoreDelta(veteran.id, "Veterano", 7, True, True)]
        )
    await old.close()

    bot = await make_bot(tg, path).start()
    try:
        assert await migrations.get_version(bot.rt.db) == LATEST_VERSION
        chaos = Chaos(tg, bot, caplog)
        table = SimTable(tg, bot.rt.db, "unused", [player], rng=chaos.rng, group=group)
        await table.preset_match_end("hands:1")
        await table.open_and_start(4)
        loop = asyncio.get_running_loop()
        assert await table.play(deadline=loop.time() + 30, stall_after=5)
        board = {s.user_id: s for s in await repo.leaderboard(bot.rt.db, group.id)}
        assert board[veteran.id].total == 7 and board[veteran.id].matches == 0
        row = await repo.get_game(bot.rt.db, table.game_ids[-1])
        assert row is not None
        game = await replay(bot.rt.db, row)
        seat = row.seat_of(player.id)
        assert seat is not None and board[player.id].total == game.totals[seat.seat]
        # the veteran's points are of an earlier season: the all-time table shows them
        await player.send(group, "/classifica sempre")
        await table.until(
            lambda: any("Veterano" in m.content for m in group.messages.values() if m.from_bot),
            5,
            "the leaderboard",
        )
        assert not chaos.problems(), chaos.problems()
    finally:
        await bot.stop()
