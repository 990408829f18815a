"""Storage under adverse conditions: another process holding the write lock, read-only
database files, a full disk."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from storage import SeatRow, StorageUnavailable, open_database, repo

# Another process: takes the write lock (BEGIN IMMEDIATE + a write), says so, keeps the
# lock for argv[2] seconds, then commits.
LOCKER = r"""
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
conn.execute(
    "INSERT OR REPLACE INTO users (user_id, first_name, updated_at) VALUES (424242, 'locker', 0)"
)
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
conn.execute("COMMIT")
conn.close()
"""


@contextlib.contextmanager
def lock_held_by_other_process(path: Path, seconds: float) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(
        [sys.executable, "-c", LOCKER, str(path), str(seconds)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "locked"
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()


async def test_write_waits_for_other_process_lock(tmp_path: Path) -> None:
    path = tmp_path / "busy.db"
    db = await open_database(path)
    try:
        gid = await repo.create_lobby(db, -1, 0, 1, "{}")
        with lock_held_by_other_process(path, 0.6) as proc:
            t0 = time.monotonic()
            async with db.transaction() as tx:  # BEGIN IMMEDIATE waits (busy_timeout)
                await repo.add_seat(tx, gid, SeatRow.human(0, 1, "Anna"))
            waited = time.monotonic() - t0
            assert proc.wait(10) == 0
        assert waited >= 0.3
        with lock_held_by_other_process(path, 0.4):
            t0 = time.monotonic()
            await repo.upsert_user(db, 2, "Bruno")  # autocommit statement waits too
            assert time.monotonic() - t0 >= 0.2
        with lock_held_by_other_process(path, 0.4):
            t0 = time.monotonic()
            await db.run_transaction(lambda tx: repo.upsert_user(tx, 3, "Carla"))  # and this
            assert time.monotonic() - t0 >= 0.2
            assert (await repo.get_user(db, 3)) is not None
        # both processes' writes are there
        assert (await repo.get_user(db, 424242)) is not None
        assert (await repo.get_user(db, 2)) is not None
        game = await repo.get_game(db, gid)
        assert game is not None and len(game.seats) == 1
    finally:
        await db.close()


async def test_lock_held_too_long_gives_storage_unavailable(tmp_path: Path) -> None:
    path = tmp_path / "stuck.db"
    db = await open_database(path, busy_timeout_ms=100, lock_retries=2, retry_delay=0.01)
    try:
        with lock_held_by_other_process(path, 30):
            t0 = time.monotonic()
            with pytest.raises(StorageUnavailable) as ei:
                async with db.transaction() as tx:
                    await repo.upsert_user(tx, 1, "never")
            elapsed = time.monotonic() - t0
            assert ei.value.code == "locked"
            assert isinstance(ei.value.__cause__, sqlite3.OperationalError)
            assert 0.25 <= elapsed < 5  # 3 attempts of ~100 ms, bounded
            with pytest.raises(StorageUnavailable) as ei2:
                await repo.upsert_user(db, 1, "never")
            assert ei2.value.code == "locked"
        # the other process is gone (killed, its transaction rolled back): usable again
        await repo.upsert_user(db, 1, "now")
        assert (await repo.get_user(db, 1)) is not None
        assert (await repo.get_user(db, 424242)) is None
    finally:
        await db.close()


@pytest.mark.parametrize("kind", ["statement", "run_transaction"])
async def test_other_tasks_run_while_waiting_for_lock(tmp_path: Path, kind: str) -> None:
    """The busy wait happens in aiosqlite's thread, not on the event loop (also for
    run_transaction, which otherwise runs its statements on the loop's thread)."""
    path = tmp_path / "loop.db"
    db = await open_database(path)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.02)
            ticks += 1

    task = asyncio.create_task(ticker())
    try:
        with lock_held_by_other_process(path, 0.5):
            if kind == "statement":
                await repo.upsert_user(db, 1, "x")
            else:
                await db.run_transaction(lambda tx: repo.upsert_user(tx, 1, "x"))
        assert ticks >= 5
        assert (await repo.get_user(db, 1)) is not None
        # the connection still waits for other processes as configured
        assert await db.pragma("busy_timeout") == db.busy_timeout_ms
    finally:
        task.cancel()
        await db.close()


# --------------------------------------------------------------------------- read-only


async def test_read_only_uri_open_fails_clearly(tmp_path: Path) -> None:
    path = tmp_path / "ro.db"
    db = await open_database(path)
    gid = await repo.create_lobby(db, -1, 0, 1, "{}")
    await db.close()

    with pytest.raises(StorageUnavailable) as ei:
        await open_database(f"sqlite:///{path}?mode=ro", check_writable=True)
    assert ei.value.code == "readonly"
    assert "not writable" in str(ei.value)

    # explicitly asking for a read-only database: reads work, writes fail clearly
    db = await open_database(f"sqlite:///{path}?mode=ro")
    try:
        assert (await repo.get_game(db, gid)) is not None
        with pytest.raises(StorageUnavailable) as ei:
            await repo.update_ui(db, gid, '{"x": 1}')
        assert ei.value.code == "readonly"
        assert isinstance(ei.value.__cause__, sqlite3.OperationalError)
        with pytest.raises(StorageUnavailable) as ei:
            async with db.transaction() as tx:
                await repo.create_lobby(tx, -2, 0, 1, "{}")
        assert ei.value.code == "readonly"
    finally:
        await db.close()


def _make_read_only(path: Path) -> Callable[[], None] | None:
    """Make a file really read-only; return the undo function, or None if impossible
    (root ignores permission bits, so use the immutable attribute there)."""
    if os.geteuid() != 0:
        path.chmod(0o444)
        return lambda: path.chmod(0o644)
    chattr = shutil.which("chattr")
    if chattr is None:
        return None
    done = subprocess.run([chattr, "+i", str(path)], capture_output=True)
    if done.returncode != 0:
        return None

    def undo() -> None:
        subprocess.run([chattr, "-i", str(path)], check=True)

    return undo


async def test_read_only_file_gives_storage_unavailable(tmp_path: Path) -> None:
    path = tmp_path / "locked-down.db"
    db = await open_database(path)
    gid = await repo.create_lobby(db, -1, 0, 1, "{}")
    await db.close()
    undo = _make_read_only(path)
    if undo is None:
        pytest.skip("cannot make a file read-only here (root without chattr)")
    try:
        with pytest.raises(StorageUnavailable) as ei:
            await open_database(path)
        assert ei.value.code == "readonly"
        db = await open_database(path, check_writable=False)
        try:
            assert (await repo.get_game(db, gid)) is not None
            with pytest.raises(StorageUnavailable) as ei:
                await repo.set_status(db, gid, "cancelled")
            assert ei.value.code == "readonly"
        finally:
            await db.close()
    finally:
        undo()


async def test_disk_full_gives_storage_unavailable(tmp_path: Path) -> None:
    db = await open_database(tmp_path / "full.db")
    try:
        gid = await repo.create_lobby(db, -1, 0, 1, "{}")
        pages = await db.fetchval("PRAGMA page_count")
        await db.execute(f"PRAGMA max_page_count = {int(pages) + 1}")
        huge = '"' + "x" * 200_000 + '"'
        with pytest.raises(StorageUnavailable) as ei:
            async with db.transaction() as tx:
                await repo.save_chat_settings(tx, -1, "it", "{}")
                await repo.update_ui(tx, gid, huge)
        assert ei.value.code == "disk_full"
        # same inside a savepoint: the original error surfaces
        with pytest.raises(StorageUnavailable) as ei:
            async with db.transaction() as tx:
                await repo.save_chat_settings(tx, -1, "it", "{}")
                async with tx.transaction() as savepoint:
                    await repo.patch_ui(savepoint, gid, {"big": "y" * 200_000})
        assert ei.value.code == "disk_full"
        # nothing of the failed transactions is left, and the database still works
        assert await repo.get_chat_settings(db, -1) is None
        await db.execute("PRAGMA max_page_count = 1073741823")
        await repo.update_ui(db, gid, huge)
        game = await repo.get_game(db, gid)
        assert game is not None and len(game.ui_json) == len(huge)
    finally:
        await db.close()


async def test_directory_cannot_be_created(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(StorageUnavailable) as ei:
        await open_database(blocker / "sub" / "x.db")
    assert ei.value.code == "cannot_open"


async def test_not_a_database_file(tmp_path: Path) -> None:
    path = tmp_path / "garbage.db"
    path.write_bytes(b"this is definitely not an sqlite database file" * 100)
    with pytest.raises(StorageUnavailable) as ei:
        await open_database(path)
    assert ei.value.code == "corrupt"
