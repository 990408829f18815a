"""Tests of the storage layer: database wrapper, migrations and repository functions.

Real files under tmp_path (so WAL is real); see test_storage_locking.py for the tests
with a second process and read-only / full databases.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import threading
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from storage import (
    LATEST_VERSION,
    ActiveGameExists,
    Database,
    Executor,
    GameNotFound,
    IntegrityViolation,
    SchemaTooNew,
    ScoreDelta,
    SeatRow,
    SeatTaken,
    StaleVersion,
    StatusConflict,
    StorageError,
    StorageUnavailable,
    migrations,
    open_database,
    parse_database_url,
    repo,
    urgent,
)
from storage.db import WAL_AUTOCHECKPOINT_PAGES
from tests.pg import PostgresCluster

BIG_USER = 2**40 + 7
BIG_CHAT = -1001234567890123
SNAP = '{"state": "initial"}'


class FakeClock:
    def __init__(self, t: float = 1_700_000_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def db(database_url: str, clock: FakeClock) -> AsyncIterator[Database]:
    """An empty database on each engine (SQLite, PostgreSQL: see tests/conftest.py)."""
    database = await open_database(database_url, clock=clock)
    yield database
    await database.close()


async def _playing_game(db: Database, chat_id: int = -100, thread_id: int = 0) -> int:
    gid = await repo.create_lobby(db, chat_id, thread_id, 1, '{"variant": "x"}')
    await repo.start_game(
        db,
        gid,
        seed=1234,
        snapshot_json=SNAP,
        seats=[
            SeatRow.human(0, 1, "Anna"),
            SeatRow.human(1, 2, "Bruno"),
            SeatRow.computer(2, "Cpu 1", "easy"),
            SeatRow.computer(3, "Cpu 2", "easy"),
            SeatRow.human(4, 3, "Carla"),
        ],
    )
    return gid


# --------------------------------------------------------------------------- opening


def test_parse_database_url(tmp_path: Path) -> None:
    mem = parse_database_url(":memory:")
    assert mem.is_memory and mem.path is None
    assert parse_database_url("sqlite://").is_memory
    assert parse_database_url("sqlite:///:memory:").is_memory
    rel = parse_database_url("sqlite:///data/bot.db")
    assert rel.path == Path.cwd() / "data" / "bot.db"
    ab = parse_database_url("sqlite:////srv/bot/x.db")
    assert ab.path == Path("/srv/bot/x.db")
    assert ab.database == "file:/srv/bot/x.db"
    ro = parse_database_url("sqlite:////srv/x.db?mode=ro")
    assert ro.read_only and ro.database == "file:/srv/x.db?mode=ro"
    plain = parse_database_url(str(tmp_path / "with space #1.db"))
    assert plain.path == tmp_path / "with space #1.db"
    assert "#" not in plain.database and " " not in plain.database
    assert parse_database_url("sqlite+aiosqlite:////a.db").path == Path("/a.db")
    with pytest.raises(ValueError):
        parse_database_url("sqlite://host/x.db")


async def test_open_url_forms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    db = await open_database("sqlite:///sub/relative.db")  # parent dir is created
    await db.close()
    assert (tmp_path / "sub" / "relative.db").exists()
    absolute = tmp_path / "abs.db"
    db = await open_database(f"sqlite:///{absolute}")  # -> sqlite:////tmp/.../abs.db
    await db.close()
    assert absolute.exists()
    db = await open_database(str(tmp_path / "plain.db"))
    await db.close()
    assert (tmp_path / "plain.db").exists()
    for url in (":memory:", "sqlite://"):
        async with await open_database(url) as mdb:
            assert mdb.target.is_memory
            assert await migrations.get_version(mdb) == LATEST_VERSION
            assert await mdb.pragma("journal_mode") == "memory"
            assert await mdb.pragma("foreign_keys") == 1


async def test_pragmas_are_set(tmp_path: Path) -> None:
    db = await open_database(tmp_path / "p.db", busy_timeout_ms=1234)
    try:
        assert await db.pragma("journal_mode") == "wal"
        assert await db.pragma("foreign_keys") == 1
        assert await db.pragma("busy_timeout") == 1234
        assert await db.pragma("synchronous") == 1  # NORMAL
    finally:
        await db.close()
    db = await open_database(tmp_path / "p.db")
    try:
        assert await db.pragma("busy_timeout") == 5000  # the default
    finally:
        await db.close()


async def test_closed_database_raises_typed_error(tmp_path: Path) -> None:
    db = await open_database(tmp_path / "c.db")
    await db.close()
    await db.close()  # idempotent
    with pytest.raises(StorageUnavailable) as ei:
        await repo.get_game(db, 1)
    assert ei.value.code == "closed"


# --------------------------------------------------------------------------- migrations


async def _tables_and_indexes(db: Database) -> set[str]:
    if db.dialect == "postgres":
        rows = await db.fetch(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() UNION "
            "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()"
        )
    else:
        rows = await db.fetch("SELECT name FROM sqlite_master WHERE type IN ('table', 'index')")
    return {r[0] for r in rows}


async def _columns(db: Database, table: str) -> set[str]:
    if db.dialect == "postgres":
        rows = await db.fetch(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND table_name = ?", (table,)
        )
        return {r[0] for r in rows}
    return {r["name"] for r in await db.fetch(f"PRAGMA table_info({table})")}


async def test_migrate_from_empty(database_url: str) -> None:
    assert LATEST_VERSION == len(migrations.MIGRATIONS) >= 2
    db = await open_database(database_url)
    try:
        assert await migrations.get_version(db) == LATEST_VERSION
        assert await db.fetchval("SELECT COUNT(*) FROM schema_version") == 1
        names = await _tables_and_indexes(db)
        for expected in (
            "chats",
            "users",
            "games",
            "seats",
            "actions",
            "scores",
            "smazzata_results",
            "games_one_active_per_thread",
            "seats_by_user",
            "scores_leaderboard",
        ):
            assert expected in names
        assert "_storage_write_probe" not in names  # the writability probe is rolled back
        # foreign keys really enforced
        with pytest.raises(IntegrityViolation):
            await db.execute(
                "INSERT INTO seats (game_id, seat, kind, display_name) "
                "VALUES (999, 0, 'computer', 'x')"
            )
    finally:
        await db.close()
    # reopening an up-to-date database is a no-op
    db = await open_database(database_url)
    assert await migrations.get_version(db) == LATEST_VERSION
    await db.close()


async def test_migrate_from_version_1(database_url: str) -> None:
    path = database_url
    db = await open_database(path, migrate=False)
    assert await migrations.get_version(db) == 0
    assert await migrations.upgrade(db, target=1) == 1
    cols = await _columns(db, "games")
    assert "version" in cols and "turn_deadline" not in cols
    await db.execute(
        "INSERT INTO games (chat_id, thread_id, status, creator_id, settings_json, version, "
        "snapshot_json, created_at, updated_at) "
        "VALUES (?, 0, 'playing', ?, '{}', 3, '{\"v\": 1}', 10, 10)",
        (BIG_CHAT, BIG_USER),
    )
    gid = await db.fetchval("SELECT game_id FROM games")
    await db.execute(
        "INSERT INTO seats (game_id, seat, kind, user_id, display_name) "
        "VALUES (?, 0, 'human', ?, 'Old')",
        (gid, BIG_USER),
    )
    await db.close()

    db = await open_database(path)  # upgraded on open
    try:
        assert await migrations.get_version(db) == LATEST_VERSION
        names = await _tables_and_indexes(db)
        assert {"seats_by_user", "games_unfinished", "scores_leaderboard"} <= names
        game = await repo.get_game(db, gid)
        assert game is not None
        assert game.version == 3 and game.turn_deadline is None
        assert game.chat_id == BIG_CHAT and game.creator_id == BIG_USER
        assert [s.user_id for s in game.seats] == [BIG_USER]
        assert [g.game_id for g in await repo.games_of_user(db, BIG_USER)] == [gid]
        await repo.set_turn_deadline(db, gid, 12345.5)
        game = await repo.get_game(db, gid)
        assert game is not None and game.turn_deadline == 12345.5
        await repo.set_turn_deadline(db, gid, 12346)  # an int is a deadline too
        game = await repo.get_game(db, gid)
        assert game is not None and game.turn_deadline == 12346.0
    finally:
        await db.close()


async def test_failed_migration_step_rolls_back(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = database_url
    db = await open_database(path)
    await db.close()

    async def broken(tx: object) -> None:
        await tx.execute("CREATE TABLE half_done (x INTEGER)")  # type: ignore[attr-defined]
        raise RuntimeError("boom")

    monkeypatch.setattr(migrations, "MIGRATIONS", [*migrations.MIGRATIONS, broken])
    monkeypatch.setattr(migrations, "LATEST_VERSION", LATEST_VERSION + 1)
    with pytest.raises(RuntimeError, match="boom"):
        await open_database(path)
    monkeypatch.undo()
    db = await open_database(path)
    try:
        assert await migrations.get_version(db) == LATEST_VERSION
        assert "half_done" not in await _tables_and_indexes(db)
    finally:
        await db.close()


async def test_refuses_too_new_schema(database_url: str) -> None:
    path = database_url
    db = await open_database(path)
    await db.execute("UPDATE schema_version SET version = ?", (LATEST_VERSION + 5,))
    await db.close()
    for kwargs in ({}, {"migrate": False}):
        with pytest.raises(SchemaTooNew) as ei:
            await open_database(path, **kwargs)  # type: ignore[arg-type]
        assert ei.value.db_version == LATEST_VERSION + 5
        assert ei.value.code_version == LATEST_VERSION
        assert ei.value.code == "schema_too_new"
        assert "newer" in str(ei.value)
    # nothing was changed
    if path.startswith("sqlite:///"):
        raw = sqlite3.connect(path.removeprefix("sqlite:///"))
        version = raw.execute("SELECT version FROM schema_version").fetchone()[0]
        assert version == LATEST_VERSION + 5
        raw.close()


async def test_refuses_foreign_database(tmp_path: Path) -> None:
    path = tmp_path / "foreign.db"
    raw = sqlite3.connect(path)
    raw.execute("CREATE TABLE something_else (x)")
    raw.commit()
    raw.close()
    with pytest.raises(StorageError) as ei:
        await open_database(path)
    assert ei.value.code == "unknown_schema"


async def test_concurrent_first_open(database_url: str) -> None:
    path = database_url
    dbs = await asyncio.gather(*(open_database(path) for _ in range(3)))
    try:
        for d in dbs:
            assert await migrations.get_version(d) == LATEST_VERSION
    finally:
        for d in dbs:
            await d.close()


# --------------------------------------------------------------------------- transactions


async def test_rollback_on_exception_leaves_nothing(db: Database) -> None:
    with pytest.raises(RuntimeError):
        async with db.transaction() as tx:
            gid = await repo.create_lobby(tx, -5, 0, 1, "{}")
            await repo.add_seat(tx, gid, SeatRow.human(0, 1, "Anna"))
            await repo.upsert_user(tx, 1, "Anna")
            await repo.apply_score_deltas(tx, -5, [ScoreDelta(1, "Anna", 10)])
            assert await repo.get_game(tx, gid) is not None
            raise RuntimeError("crash mid-transaction")
    assert await db.fetchval("SELECT COUNT(*) FROM games") == 0
    assert await db.fetchval("SELECT COUNT(*) FROM seats") == 0
    assert await db.fetchval("SELECT COUNT(*) FROM users") == 0
    assert await repo.leaderboard(db, -5) == []
    # the slot is free again and the connection is usable
    assert await repo.create_lobby(db, -5, 0, 1, "{}") > 0


async def test_stale_version_rolls_back_whole_transaction(db: Database) -> None:
    gid = await _playing_game(db)
    with pytest.raises(StaleVersion):
        async with db.transaction() as tx:
            await repo.apply_score_deltas(tx, -100, [ScoreDelta(1, "Anna", 10)])
            await repo.record_action(tx, gid, 7, 0, "P", "human", 1, SNAP)
    assert await repo.leaderboard(db, -100) == []


async def test_nested_transaction_is_a_savepoint(db: Database) -> None:
    async with db.transaction() as tx:
        await repo.upsert_user(tx, 1, "kept")
        with pytest.raises(ValueError):
            async with tx.transaction() as inner:
                await repo.upsert_user(inner, 2, "discarded")
                raise ValueError
        # the same task using `db` inside its transaction joins it (no deadlock)
        await repo.upsert_user(db, 3, "joined")
        async with db.transaction() as nested:
            assert nested is tx
    ids = [r[0] for r in await db.fetch("SELECT user_id FROM users ORDER BY user_id")]
    assert ids == [1, 3]


async def test_cancelled_transaction_rolls_back_and_releases_lock(db: Database) -> None:
    inside = asyncio.Event()

    async def slow_handler() -> None:
        async with db.transaction() as tx:
            await repo.upsert_user(tx, 1, "half")
            inside.set()
            await asyncio.sleep(30)

    task = asyncio.create_task(slow_handler())
    await inside.wait()
    waiter = asyncio.create_task(repo.upsert_user(db, 2, "waiting"))  # queued on the lock
    await asyncio.sleep(0.01)
    assert not waiter.done()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await waiter
    assert await repo.get_user(db, 1) is None
    assert await repo.get_user(db, 2) is not None


async def test_transaction_object_unusable_after_block(db: Database) -> None:
    async with db.transaction() as tx:
        pass
    with pytest.raises(StorageError) as ei:
        await tx.execute("SELECT 1")
    assert ei.value.code == "transaction_closed"


async def test_transactions_of_two_tasks_do_not_interleave(db: Database) -> None:
    await db.execute("INSERT INTO users (user_id, first_name, updated_at) VALUES (1, '0', 0)")

    async def increment() -> None:
        async with db.transaction() as tx:
            value = int(await tx.fetchval("SELECT first_name FROM users WHERE user_id = 1"))
            await asyncio.sleep(0.01)  # another task gets the event loop here
            await tx.execute("UPDATE users SET first_name = ? WHERE user_id = 1", (str(value + 1),))

    await asyncio.gather(*(increment() for _ in range(10)))
    assert await db.fetchval("SELECT first_name FROM users WHERE user_id = 1") == "10"


async def test_run_transaction_commits_or_rolls_back_as_a_whole(db: Database) -> None:
    async def body(tx: Executor) -> str:
        await repo.upsert_user(tx, 1, "Anna")
        async with tx.transaction() as savepoint:  # nested: a savepoint, as in record_action
            await repo.upsert_user(savepoint, 2, "Bruno")
        with contextlib.suppress(StorageError):
            async with tx.transaction() as savepoint:  # a failed savepoint alone is undone
                await repo.upsert_user(savepoint, 3, "Carla")
                await savepoint.execute("INSERT INTO no_such_table VALUES (1)")
        return str(await tx.fetchval("SELECT COUNT(*) FROM users"))

    assert await db.run_transaction(body) == "2"
    assert await repo.get_user(db, 2) is not None and await repo.get_user(db, 3) is None

    class Refusal(Exception):
        pass

    async def refused(tx: Executor) -> None:
        await repo.upsert_user(tx, 4, "Dario")
        raise Refusal  # e.g. a move found illegal after reading the game

    with pytest.raises(Refusal):
        await db.run_transaction(refused)
    assert await repo.get_user(db, 4) is None

    async def waits_for_something_else(tx: Executor) -> None:
        await repo.upsert_user(tx, 5, "Elena")
        await asyncio.sleep(0)  # not allowed: the body runs at once, as one transaction

    if db.dialect == "sqlite":  # (PostgreSQL's transactions suspend on every statement)
        with pytest.raises(RuntimeError):
            await db.run_transaction(waits_for_something_else)
        assert await repo.get_user(db, 5) is None
    with pytest.raises(GameNotFound):  # the repository's own errors come through as they are
        await db.run_transaction(
            lambda tx: repo.record_action(tx, 999, 0, 0, "P", "human", 1, SNAP)
        )
    with pytest.raises(ValueError):
        await db.run_transaction(lambda tx: repo.patch_ui(tx, 1, {"bad key": 1}))
    await repo.upsert_user(db, 6, "Fabio")  # the connection is fine afterwards
    await db.close()
    with pytest.raises(StorageUnavailable) as ei:
        await db.run_transaction(lambda tx: repo.upsert_user(tx, 7, "Gino"))
    assert ei.value.code == "closed"


async def test_run_transaction_runs_at_once_on_the_calling_thread(tmp_path: Path) -> None:
    """No trip to aiosqlite's thread per statement, nor one for the whole transaction;
    the connection's busy timeout and WAL checkpoints are as configured afterwards."""
    db = await open_database(tmp_path / "inline.db", busy_timeout_ms=1234)
    threads: list[int] = []

    async def body(tx: Executor) -> None:
        threads.append(threading.get_ident())
        await repo.upsert_user(tx, 1, "Anna")
        # no waiting for other processes, no checkpoint at COMMIT, while on the loop
        threads.append(int(await tx.fetchval("PRAGMA busy_timeout")))
        threads.append(int(await tx.fetchval("PRAGMA wal_autocheckpoint")))

    try:
        await db.run_transaction(body)
        assert threads == [threading.get_ident(), 0, 0]
        assert await db.pragma("busy_timeout") == 1234
        assert await db.pragma("wal_autocheckpoint") == WAL_AUTOCHECKPOINT_PAGES
        assert await repo.get_user(db, 1) is not None
    finally:
        await db.close()


async def test_urgent_work_goes_before_waiting_background_work(db: Database) -> None:
    inside, release = asyncio.Event(), asyncio.Event()
    order: list[str] = []

    async def running() -> None:
        async with db.transaction():
            inside.set()
            await release.wait()
        order.append("running")

    async def write(name: str, *, is_urgent: bool = False) -> None:
        if is_urgent:
            async with urgent():
                await repo.upsert_user(db, len(order) + 10, name)
        else:
            await repo.upsert_user(db, len(order) + 10, name)
        order.append(name)

    first = asyncio.create_task(running())
    await inside.wait()
    waiting = []
    for name, is_urgent in (("redraw 1", False), ("redraw 2", False), ("click 1", True),
                            ("redraw 3", False), ("click 2", True)):
        waiting.append(asyncio.create_task(write(name, is_urgent=is_urgent)))
        await asyncio.sleep(0.005)  # queued on the lock in this order
    release.set()
    await asyncio.gather(first, *waiting)
    # the running transaction finishes first; then the clicks (in their order), then the rest
    assert order == ["running", "click 1", "click 2", "redraw 1", "redraw 2", "redraw 3"]


async def test_cancelled_waiter_does_not_keep_the_lock(db: Database) -> None:
    inside, release = asyncio.Event(), asyncio.Event()

    async def running() -> None:
        async with db.transaction():
            inside.set()
            await release.wait()

    first = asyncio.create_task(running())
    await inside.wait()
    gone = asyncio.create_task(repo.upsert_user(db, 1, "gone"))
    await asyncio.sleep(0.01)
    gone.cancel()
    release.set()
    await first
    with pytest.raises(asyncio.CancelledError):
        await gone
    await asyncio.wait_for(repo.upsert_user(db, 2, "next"), 1.0)  # the lock is free
    assert await repo.get_user(db, 1) is None


async def _holding_the_lock(db: Database, after: list[object]) -> tuple[
        asyncio.Task[None], asyncio.Event, asyncio.Event]:
    """A task in a transaction until ``release`` is set; right after its lock is released
    (with no turn of the event loop in between) it appends how many users are stored."""
    inside, release = asyncio.Event(), asyncio.Event()

    async def running() -> None:
        async with db.transaction() as tx:
            await repo.upsert_user(tx, 1, "Anna")
            inside.set()
            await release.wait()
        after.append(await_free_count(db))

    task = asyncio.create_task(running())
    await inside.wait()
    return task, inside, release


def await_free_count(db: Database) -> int:
    """The users stored, read on a connection of its own, synchronously."""
    path = db.target.path  # type: ignore[attr-defined]
    with contextlib.closing(sqlite3.connect(path)) as other:
        return int(other.execute("SELECT COUNT(*) FROM users").fetchone()[0])


async def test_moves_waiting_for_the_lock_run_as_it_is_released(tmp_path: Path) -> None:
    """SQLite: the moves (run_transaction) waiting for the lock are run by the release
    itself, all of them, urgent first: not one per turn of the event loop."""
    db = await open_database(tmp_path / "handover.db")
    order: list[object] = []
    try:
        running, _, release = await _holding_the_lock(db, order)

        async def move(user_id: int, *, is_urgent: bool) -> None:
            async def body(tx: Executor) -> None:
                order.append(user_id)
                await repo.upsert_user(tx, user_id, f"u{user_id}")

            if is_urgent:
                async with urgent():
                    await db.run_transaction(body)
            else:
                await db.run_transaction(body)

        moves = [asyncio.create_task(move(10 + i, is_urgent=i in (2, 4))) for i in range(5)]
        gone = asyncio.create_task(move(99, is_urgent=True))
        await asyncio.sleep(0.02)  # all of them wait for the lock
        assert not any(m.done() for m in moves)
        gone.cancel()  # a move given up while it waits is never run
        await asyncio.sleep(0)
        release.set()
        await running
        await asyncio.gather(*moves)
        assert order == [12, 14, 10, 11, 13, 6]  # all run before the releaser went on
        assert await repo.get_user(db, 99) is None
        assert await db.run_transaction(lambda tx: tx.fetchval("SELECT 7")) == 7
    finally:
        await db.close()


async def test_batched_writes_share_one_transaction_and_fail_alone(tmp_path: Path) -> None:
    """SQLite: the writes that waited for the lock together are one commit; one that
    fails is rolled back alone and its caller gets its error; with the lock free a write
    runs at once."""
    db = await open_database(tmp_path / "batch.db")
    statements: list[str] = []
    db._raw.set_trace_callback(statements.append)  # type: ignore[attr-defined]
    after: list[object] = []

    class Refusal(Exception):
        pass

    async def fails(tx: Executor) -> None:
        await repo.upsert_user(tx, 50, "half")
        raise Refusal

    try:
        running, _, release = await _holding_the_lock(db, after)
        writes = [asyncio.create_task(db.batched(
            lambda tx, i=i: repo.upsert_user(tx, 10 + i, f"u{i}"))) for i in range(20)]
        failing = asyncio.create_task(db.batched(fails))
        async with urgent():
            last = asyncio.create_task(db.batched(lambda tx: repo.upsert_user(tx, 60, "u")))
        await asyncio.sleep(0.02)
        statements.clear()
        release.set()
        await running
        assert after == [22]  # written as the lock was released
        await asyncio.gather(*writes, last)
        with pytest.raises(Refusal):
            await failing
        assert await repo.get_user(db, 50) is None
        assert [s for s in statements if s.startswith(("BEGIN", "COMMIT"))] == [
            "COMMIT", "BEGIN IMMEDIATE", "COMMIT"]  # the running one's, then the batch
        statements.clear()
        assert await db.batched(lambda tx: tx.fetchval("SELECT 5")) == 5
        assert "BEGIN IMMEDIATE" in statements and "COMMIT" in statements
    finally:
        await db.close()


async def test_batched_write_on_each_engine(db: Database) -> None:
    await db.batched(lambda tx: repo.upsert_user(tx, 1, "Anna"))
    with pytest.raises(GameNotFound):
        await db.batched(lambda tx: repo.patch_ui(tx, 999, {"drawn": 1}))
    assert await repo.get_user(db, 1) is not None
    async with db.transaction():
        with pytest.raises(StorageError):  # (it would wait for its own transaction)
            await db.batched(lambda tx: repo.upsert_user(tx, 2, "Bruno"))


async def test_the_wal_is_checkpointed_although_the_writes_run_on_the_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import storage.sqlite

    monkeypatch.setattr(storage.sqlite, "CHECKPOINT_EVERY", 3)
    db = await open_database(tmp_path / "wal.db")
    statements: list[str] = []
    db._raw.set_trace_callback(statements.append)  # type: ignore[attr-defined]
    connect = sqlite3.connect

    def traced(*args: Any, **kwargs: Any) -> sqlite3.Connection:  # (the checkpointer's)
        connection = connect(*args, **kwargs)
        connection.set_trace_callback(checkpointer.append)
        return connection

    checkpointer: list[str] = []
    monkeypatch.setattr(storage.sqlite.sqlite3, "connect", traced)
    try:
        for i in range(2):
            await db.run_transaction(lambda tx, i=i: repo.upsert_user(tx, i, "u"))
        await asyncio.sleep(0.05)
        assert not [s for s in statements + checkpointer if "wal_checkpoint" in s]
        await db.batched(lambda tx: repo.upsert_user(tx, 9, "u"))
        for _ in range(100):
            if any("wal_checkpoint" in s for s in statements + checkpointer):
                break
            await asyncio.sleep(0.01)
        # on a connection of its own (the moves' connection, and its lock, stay free)
        assert [s for s in statements + checkpointer if "wal_checkpoint" in s] == [
            "PRAGMA wal_checkpoint(PASSIVE)"]
        assert not [s for s in statements if "wal_checkpoint" in s]
    finally:
        await db.close()


async def test_a_read_is_answered_in_the_same_turn_of_the_event_loop(tmp_path: Path) -> None:
    """SQLite: a query runs at once on the loop's thread, as a move does; the lock is
    never held across a turn of a busy loop, so no move waits behind a read (issue 32).
    A write, a PRAGMA, and a read inside a transaction go as before."""
    db = await open_database(tmp_path / "reads.db")
    try:
        await repo.upsert_user(db, 1, "Anna")
        turned: list[bool] = []
        asyncio.get_running_loop().call_soon(turned.append, True)
        row = await repo.get_user(db, 1)
        user = await db.fetchrow("SELECT user_id, first_name FROM users WHERE user_id = ?", (1,))
        assert not turned  # answered before the loop's next turn
        assert row is not None and user is not None and tuple(user) == (1, "Anna")
        assert user["first_name"] == "Anna"
        async with db.transaction():
            assert (await db.fetchval("SELECT first_name FROM users")) == "Anna"
        assert await db.pragma("journal_mode") == "wal"
        with pytest.raises(StorageError):  # an error is raised as before
            await db.fetch("SELECT nothing FROM nowhere")
        # a read waiting for the lock is served by whoever releases it, at once
        async with db.transaction() as tx:
            waiting = asyncio.ensure_future(repo.get_user(db, 1))
            await asyncio.sleep(0)
            assert not waiting.done()
            await tx.execute("UPDATE users SET first_name = ? WHERE user_id = ?", ("Bea", 1))
        got = await waiting
        assert got is not None and got.first_name == "Bea"  # (after the commit)
    finally:
        await db.close()


async def test_a_read_waiting_for_the_lock_is_refused_once_the_instance_is_fenced(
    tmp_path: Path,
) -> None:
    """SQLite: a read run on the loop's thread checks the fence when it gets the lock, as
    every other statement does: an instance fenced off while its read waited reads
    nothing more."""
    db = await open_database(tmp_path / "fenced-read.db")
    try:
        await repo.upsert_user(db, 1, "Anna")

        checks: list[str] = []

        def fenced_after_the_commit() -> None:  # (the transaction's own COMMIT checks first)
            checks.append("checked")
            if len(checks) > 1:
                raise StorageUnavailable("not active", code="fenced")

        async with db.transaction():
            waiting = asyncio.ensure_future(repo.get_user(db, 1))
            await asyncio.sleep(0)
            assert not waiting.done()
            db.fence = fenced_after_the_commit
        with pytest.raises(StorageUnavailable) as caught:
            await waiting
        assert caught.value.code == "fenced"
    finally:
        db.fence = None
        await db.close()


async def test_moves_commit_while_the_wal_is_checkpointed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checkpoint writes and syncs the database file (tens of milliseconds): the moves
    and the updates stored meanwhile do not wait for it (issue 32)."""
    import storage.sqlite

    monkeypatch.setattr(storage.sqlite, "CHECKPOINT_EVERY", 2)
    db = await open_database(tmp_path / "wal.db")
    assert isinstance(db, storage.sqlite.SQLiteDatabase)
    running, go_on = threading.Event(), threading.Event()
    real = db._checkpoint_in_thread

    def slow() -> None:
        running.set()
        go_on.wait(5)
        real()

    monkeypatch.setattr(db, "_checkpoint_in_thread", slow)
    try:
        for i in range(2):
            await db.run_transaction(lambda tx, i=i: repo.upsert_user(tx, i, "u"))
        assert await asyncio.to_thread(running.wait, 5)  # the checkpoint is running
        await asyncio.wait_for(db.run_transaction(lambda tx: repo.upsert_user(tx, 7, "u")), 1)
        await asyncio.wait_for(db.batched(lambda tx: repo.upsert_user(tx, 8, "u")), 1)
        assert await repo.get_user(db, 8) is not None
        assert db._checkpointing is not None  # (still checkpointing)
        go_on.set()
        for _ in range(200):
            if db._checkpointing is None:
                break
            await asyncio.sleep(0.01)
        assert db._checkpointing is None
    finally:
        go_on.set()
        await db.close()


async def test_get_game_skips_the_snapshot_the_caller_has(db: Database) -> None:
    gid = await _playing_game(db)
    async with db.transaction() as tx:
        await repo.record_action(tx, gid, 0, 0, "P", "human", 1, '{"n": 1}')
    full = await repo.get_game(db, gid)
    assert full is not None and full.snapshot_json == '{"n": 1}' and full.version == 1
    same = await repo.get_game(db, gid, snapshot_unless_version=1)
    assert same is not None and same.snapshot_json is None
    assert same == replace(full, snapshot_json=None)  # everything else is read
    older = await repo.get_game(db, gid, snapshot_unless_version=0)
    assert older == full  # the caller's copy is old: the snapshot comes


# --------------------------------------------------------------------------- games


async def test_one_active_game_per_chat_and_thread(db: Database) -> None:
    g1 = await repo.create_lobby(db, BIG_CHAT, 0, BIG_USER, "{}")
    with pytest.raises(ActiveGameExists) as ei:
        await repo.create_lobby(db, BIG_CHAT, 0, 2, "{}")
    assert ei.value.game_id == g1 and ei.value.chat_id == BIG_CHAT
    # other forum topics and other chats are independent
    g2 = await repo.create_lobby(db, BIG_CHAT, 77, 2, "{}")
    g3 = await repo.create_lobby(db, -42, 0, 2, "{}")
    assert len({g1, g2, g3}) == 3
    active = await repo.get_active_game(db, BIG_CHAT, 0)
    assert active is not None and active.game_id == g1 and active.status == "lobby"
    assert (await repo.get_active_game(db, BIG_CHAT, 77)).game_id == g2  # type: ignore[union-attr]
    assert await repo.get_active_game(db, BIG_CHAT, 5) is None
    # a running game still blocks; a finished/cancelled one frees the slot
    await repo.start_game(db, g1, 1, SNAP, seats=[SeatRow.human(0, BIG_USER, "Big")])
    with pytest.raises(ActiveGameExists):
        await repo.create_lobby(db, BIG_CHAT, 0, 2, "{}")
    await repo.set_status(db, g1, "cancelled")
    g4 = await repo.create_lobby(db, BIG_CHAT, 0, 2, "{}")
    assert (await repo.get_active_game(db, BIG_CHAT)).game_id == g4  # type: ignore[union-attr]
    # reviving the cancelled one would make two active games
    with pytest.raises(ActiveGameExists):
        await repo.set_status(db, g1, "playing")
    unfinished = await repo.list_unfinished_games(db)
    assert [g.game_id for g in unfinished] == [g2, g3, g4]


async def test_lobby_seats(db: Database) -> None:
    gid = await repo.create_lobby(db, -1, 0, 10, '{"seats": 5}')
    await repo.add_seat(db, gid, SeatRow.human(0, 10, "Ann", "it"))
    with pytest.raises(SeatTaken):
        await repo.add_seat(db, gid, SeatRow.human(0, 11, "Ben"))  # seat occupied
    with pytest.raises(SeatTaken):
        await repo.add_seat(db, gid, SeatRow.human(3, 10, "Ann"))  # user already seated
    with pytest.raises(SeatTaken):
        await repo.take_free_seat(db, gid, SeatRow.human(0, 10, "Ann"), 5)
    assert await repo.take_free_seat(db, gid, SeatRow.human(0, 11, "Ben"), 5) == 1
    assert await repo.take_free_seat(db, gid, SeatRow.computer(0, "Cpu", "hard"), 5) == 2
    assert await repo.remove_seat(db, gid, 1) is True
    assert await repo.remove_seat(db, gid, 1) is False
    assert await repo.take_free_seat(db, gid, SeatRow.human(0, 12, "Cid"), 5) == 1
    for uid in (13, 14):
        assert await repo.take_free_seat(db, gid, SeatRow.human(0, uid, "x"), 5) is not None
    assert await repo.take_free_seat(db, gid, SeatRow.human(0, 15, "late"), 5) is None
    game = await repo.get_game(db, gid)
    assert game is not None
    assert [s.seat for s in game.seats] == [0, 1, 2, 3, 4]
    assert game.seat_of(10) == SeatRow.human(0, 10, "Ann", "it")
    assert game.seat(2) == SeatRow.computer(2, "Cpu", "hard")
    with pytest.raises(ValueError):
        SeatRow(0, "human", None, "nobody")
    with pytest.raises(SeatTaken):
        await repo.set_seats(db, gid, [SeatRow.human(0, 1, "a"), SeatRow.human(0, 2, "b")])

    await repo.start_game(db, gid, 99, SNAP)
    with pytest.raises(StatusConflict) as ei:
        await repo.start_game(db, gid, 99, SNAP)  # double click on "start"
    assert ei.value.actual == "playing"
    with pytest.raises(StatusConflict):
        await repo.add_seat(db, gid, SeatRow.human(4, 99, "late"))
    with pytest.raises(StatusConflict):
        await repo.remove_seat(db, gid, 0)
    with pytest.raises(GameNotFound):
        await repo.add_seat(db, 12345, SeatRow.human(0, 1, "x"))


async def test_start_game_and_seat_updates(db: Database) -> None:
    gid = await _playing_game(db)
    game = await repo.get_game(db, gid)
    assert game is not None
    assert game.status == "playing" and game.version == 0 and game.seed == 1234
    assert game.snapshot_json == SNAP and game.settings_json == '{"variant": "x"}'
    assert len(game.seats) == 5

    await repo.set_seat_away(db, gid, 1, True)
    assert await repo.add_afk_strike(db, gid, 1) == 1
    assert await repo.add_afk_strike(db, gid, 1) == 2
    await repo.set_afk_strikes(db, gid, 0, 3)
    game = await repo.get_game(db, gid)
    assert game is not None and game.seats[1].away and game.seats[1].afk_strikes == 2
    assert game.seats[0].afk_strikes == 3
    with pytest.raises(LookupError):
        await repo.set_seat_away(db, gid, 9, True)
    with pytest.raises(GameNotFound):
        await repo.set_seat_away(db, 999, 0, True)

    assert [g.game_id for g in await repo.games_of_user(db, 2)] == [gid]
    await repo.replace_seat_with_computer(db, gid, 1, "Cpu 3", "medium")
    assert await repo.games_of_user(db, 2) == []
    game = await repo.get_game(db, gid)
    assert game is not None
    assert game.seats[1] == SeatRow.computer(1, "Cpu 3", "medium")


async def test_match_settings_are_stored_with_the_start(db: Database) -> None:
    gid = await repo.create_lobby(db, -5, 0, 1, '{"turn_timeout": 90}')
    await repo.add_seat(db, gid, SeatRow.human(0, 1, "Ann"))
    with pytest.raises(ValueError):  # bad JSON: nothing is written, still a lobby
        await repo.start_game(db, gid, 7, SNAP, settings_json="{not json")
    game = await repo.get_game(db, gid)
    assert game is not None and game.status == "lobby"
    assert game.settings_json == '{"turn_timeout": 90}'

    await repo.start_game(db, gid, 7, SNAP, settings_json='{"turn_timeout": 30}')
    game = await repo.get_game(db, gid)
    assert game is not None and game.status == "playing"
    assert json.loads(game.settings_json) == {"turn_timeout": 30}
    # the chat's settings may change later; the match keeps its own
    await repo.save_chat_settings(db, -5, "it", '{"turn_timeout": 0}')
    game = await repo.get_game(db, gid)
    assert game is not None and json.loads(game.settings_json) == {"turn_timeout": 30}

    await repo.set_game_settings(db, gid, '{"turn_timeout": 60}')
    game = await repo.get_game(db, gid)
    assert game is not None and json.loads(game.settings_json) == {"turn_timeout": 60}
    with pytest.raises(GameNotFound):
        await repo.set_game_settings(db, 4242, "{}")
    with pytest.raises(ValueError):
        await repo.set_game_settings(db, gid, "nope")


async def test_ui_json(db: Database) -> None:
    gid = await repo.create_lobby(db, -1, 0, 1, "{}")
    await repo.update_ui(db, gid, '{"lobby_msg": 10}')
    new = await repo.patch_ui(db, gid, {"table_msg": 11, "hands": {"1": 12}})
    assert json.loads(new) == {"lobby_msg": 10, "table_msg": 11, "hands": {"1": 12}}
    await repo.patch_ui(db, gid, {"lobby_msg": None})
    game = await repo.get_game(db, gid)
    assert game is not None
    assert json.loads(game.ui_json) == {"table_msg": 11, "hands": {"1": 12}}
    # a value replaces the key's old value (objects are not merged); deleting a key that
    # is not there and setting several keys at once work in one call
    new = await repo.patch_ui(db, gid, {"hands": {"2": 13}, "rv": 7, "gone": None, "s": "x"})
    assert json.loads(new) == {"table_msg": 11, "hands": {"2": 13}, "rv": 7, "s": "x"}
    with pytest.raises(ValueError):  # keys are plain names, never JSON paths
        await repo.patch_ui(db, gid, {'a"].b': 1})
    with pytest.raises(GameNotFound):
        await repo.patch_ui(db, 999, {"rv": 1})
    with pytest.raises(ValueError):
        await repo.update_ui(db, gid, "{not json")
    with pytest.raises(GameNotFound):
        await repo.update_ui(db, 999, "{}")


async def test_games_of_user_across_chats(db: Database) -> None:
    a = await repo.create_lobby(db, -1, 0, BIG_USER, "{}")
    b = await repo.create_lobby(db, -2, 5, 1, "{}")
    c = await repo.create_lobby(db, -3, 0, 1, "{}")
    await repo.add_seat(db, a, SeatRow.human(0, BIG_USER, "Big"))
    await repo.add_seat(db, b, SeatRow.human(3, BIG_USER, "Big"))
    await repo.add_seat(db, c, SeatRow.human(0, 1, "Other"))
    assert [g.game_id for g in await repo.games_of_user(db, BIG_USER)] == [a, b]
    await repo.set_status(db, a, "cancelled")
    assert [g.game_id for g in await repo.games_of_user(db, BIG_USER)] == [b]
    everything = await repo.games_of_user(db, BIG_USER, active_only=False)
    assert [g.game_id for g in everything] == [a, b]
    ended = everything[0]
    assert ended.status == "cancelled" and ended.finished_at is not None


# --------------------------------------------------------------------------- actions


async def test_record_action_marks_its_update_handled_only_with_the_move(db: Database) -> None:
    """Issue 35: the inbox's update that carried a move is marked handled in the move's
    own write; a refused (stale) move leaves it pending."""
    from storage import inbox

    gid = await _playing_game(db)
    assert await inbox.store_updates(db, [(501, "{}"), (502, "{}")]) == [501, 502]
    await db.run_transaction(lambda tx: repo.record_action(
        tx, gid, 0, 0, "P", "human", 1, '{"n": 1}', handled_update=501))
    with pytest.raises(StaleVersion):  # a double click: the same version again
        await db.run_transaction(lambda tx: repo.record_action(
            tx, gid, 0, 0, "P", "human", 1, '{"n": 1}', handled_update=502))
    assert [u for u, _ in await inbox.pending_updates(db)] == [502]
    assert [a.seq for a in await repo.load_actions(db, gid)] == [1]


async def test_record_action_optimistic_concurrency(db: Database, clock: FakeClock) -> None:
    gid = await _playing_game(db)
    codes = ["P", "rA", "t75", "o5.65", "K"]
    for i, code in enumerate(codes):
        async with db.transaction() as tx:
            v = await repo.record_action(
                tx, gid, i, i % 5, code, "human", 1, f'{{"n": {i + 1}}}', turn_deadline=100.0 + i
            )
        assert v == i + 1

    # a second writer with the same expected_version loses and writes nothing
    with pytest.raises(StaleVersion) as ei:
        await repo.record_action(db, gid, 4, 0, "sd", "human", 2, '{"bad": true}')
    assert ei.value.expected_version == 4 and ei.value.actual_version == 5
    game = await repo.get_game(db, gid)
    assert game is not None
    assert game.version == 5 and game.snapshot_json == '{"n": 5}' and game.turn_deadline == 104.0
    actions = await repo.load_actions(db, gid)
    assert [a.seq for a in actions] == [1, 2, 3, 4, 5]  # no gaps
    assert [a.code for a in actions] == codes
    assert actions[0].actor == "human" and actions[0].user_id == 1
    assert actions[0].created_at == int(clock.t)
    assert [a.seq for a in await repo.load_actions(db, gid, after_seq=3)] == [4, 5]

    # the last action ends the game
    clock.t += 60
    v = await repo.record_action(db, gid, 5, None, "cAd", "system", None, '{"n": 6}', "finished")
    assert v == 6
    game = await repo.get_game(db, gid)
    assert game is not None
    assert game.status == "finished" and game.finished_at == int(clock.t)
    assert game.turn_deadline is None
    with pytest.raises(StatusConflict):
        await repo.record_action(db, gid, 6, 0, "P", "timeout", None, "{}")
    with pytest.raises(GameNotFound):
        await repo.record_action(db, 999, 0, 0, "P", "human", 1, "{}")
    with pytest.raises(ValueError):
        await repo.record_action(db, gid, 6, 0, "P", "robot", 1, "{}")  # type: ignore[arg-type]


async def test_list_finished_games_since(db: Database, clock: FakeClock) -> None:
    """Only finished games, from ``since`` on, oldest first, with their UI and version."""
    first, second, running = [await _playing_game(db, chat) for chat in (-1, -2, -3)]
    cancelled = await _playing_game(db, -4)
    await repo.set_status(db, cancelled, "cancelled")
    await repo.record_action(db, first, 0, 0, "P", "human", 1, "{}", "finished")
    start = int(clock.t)
    clock.t += 100
    await repo.patch_ui(db, second, {"rv": 1})
    await repo.record_action(db, second, 0, 0, "P", "human", 1, "{}", "finished")
    assert running and await repo.get_game(db, running) is not None
    found = await repo.list_finished_games(db, start)
    assert [(g.game_id, g.chat_id, g.version, g.finished_at) for g in found] == [
        (first, -1, 1, start), (second, -2, 1, start + 100)
    ]
    assert json.loads(found[1].ui_json) == {"rv": 1}
    assert [g.game_id for g in await repo.list_finished_games(db, start + 1)] == [second]
    if db.dialect != "sqlite":  # (PostgreSQL plans by its statistics: a tiny table is scanned)
        return
    plan = " ".join(
        str(tuple(r)) for r in await db.fetch(
            "EXPLAIN QUERY PLAN SELECT game_id FROM games "
            "WHERE status = 'finished' AND finished_at >= ?", (start,),
        )
    )
    assert "games_finished" in plan, plan


async def test_concurrent_clicks_exactly_one_wins(db: Database) -> None:
    gid = await _playing_game(db)

    async def click(user: int) -> int | None:
        game = await repo.get_game(db, gid)
        assert game is not None
        await asyncio.sleep(0)  # both read version 0 before either writes
        try:
            async with db.transaction() as tx:
                return await repo.record_action(
                    tx, gid, game.version, 0, f"c{user}", "human", user, f'{{"by": {user}}}'
                )
        except StaleVersion:
            return None

    results = await asyncio.gather(*(click(u) for u in range(1, 6)))
    assert sorted(results, key=lambda r: r or 0) == [None, None, None, None, 1]
    actions = await repo.load_actions(db, gid)
    assert len(actions) == 1
    game = await repo.get_game(db, gid)
    assert game is not None and game.version == 1
    assert game.snapshot_json == f'{{"by": {actions[0].user_id}}}'


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(min_value=-1, max_value=3), min_size=1, max_size=30))
def test_version_and_seq_stay_gapless(offsets: list[int]) -> None:
    """Random writers guessing versions near the current one: the log stays 1..n."""

    async def run() -> None:
        async with await open_database(":memory:") as mdb:
            gid = await _playing_game(mdb)
            version = 0
            for off in offsets:
                guess = max(0, version + off)
                try:
                    version = await repo.record_action(mdb, gid, guess, 0, "P", "human", 1, "{}")
                    assert guess == version - 1
                except StaleVersion:
                    assert guess != version
            seqs = [a.seq for a in await repo.load_actions(mdb, gid)]
            assert seqs == list(range(1, version + 1))

    asyncio.run(run())


async def test_smazzata_results(db: Database) -> None:
    gid = await _playing_game(db)
    await repo.record_smazzata_result(db, gid, 0, '{"points": [61, 59]}')
    await repo.record_smazzata_result(db, gid, 1, '{"points": [120, 0]}')
    with pytest.raises(IntegrityViolation):
        await repo.record_smazzata_result(db, gid, 1, "{}")
    rows = await repo.load_smazzata_results(db, gid)
    assert [(r.smazzata_index, json.loads(r.result_json)["points"][0]) for r in rows] == [
        (0, 61),
        (1, 120),
    ]


# --------------------------------------------------------------------------- users, chats


async def test_users_and_chats_64bit(db: Database, clock: FakeClock) -> None:
    await repo.upsert_user(db, BIG_USER, "Zoë", "Rossi", "zoe", "it")
    await repo.set_private_ok(db, BIG_USER, True)
    clock.t += 5
    await repo.upsert_user(db, BIG_USER, "Zoe", None, "zoe2", "en")  # keeps private_ok
    user = await repo.get_user(db, BIG_USER)
    assert user is not None
    assert (user.user_id, user.first_name, user.username, user.private_ok) == (
        BIG_USER,
        "Zoe",
        "zoe2",
        True,
    )
    assert user.updated_at == int(clock.t)
    await repo.set_private_ok(db, BIG_USER, False)
    assert (await repo.get_user(db, BIG_USER)).private_ok is False  # type: ignore[union-attr]
    await repo.set_private_ok(db, 2**62, True)  # unknown user -> bare row
    assert (await repo.get_user(db, 2**62)).private_ok is True  # type: ignore[union-attr]
    assert await repo.get_user(db, 5) is None

    assert await repo.get_chat_settings(db, BIG_CHAT) is None
    await repo.save_chat_settings(db, BIG_CHAT, "it", '{"timeout": 60}')
    await repo.save_chat_settings(db, BIG_CHAT, "en", '{"timeout": 90}')
    chat = await repo.get_chat_settings(db, BIG_CHAT)
    assert chat is not None
    assert (chat.chat_id, chat.language, chat.settings_json) == (BIG_CHAT, "en", '{"timeout": 90}')

    gid = await repo.create_lobby(db, BIG_CHAT, 2**31 + 5, BIG_USER, "{}")
    await repo.start_game(db, gid, 2**63 - 1, SNAP, seats=[SeatRow.human(0, BIG_USER, "Zoe")])
    game = await repo.get_game(db, gid)
    assert game is not None
    assert (game.chat_id, game.thread_id, game.creator_id, game.seed) == (
        BIG_CHAT,
        2**31 + 5,
        BIG_USER,
        2**63 - 1,
    )
    with pytest.raises(ValueError):
        await repo.upsert_user(db, 2**64, "too big")


# --------------------------------------------------------------------------- scores


async def test_scores_accumulate_and_leaderboard_order(db: Database) -> None:
    chat = BIG_CHAT
    async with db.transaction() as tx:
        await repo.apply_score_deltas(
            tx,
            chat,
            [
                ScoreDelta(1, "anna", 4, won=True, chiamante=True),
                ScoreDelta(2, "Bruno", 2, won=True),
                ScoreDelta(BIG_USER, "Carla", -1),
                ScoreDelta(4, "dario", -1),
                ScoreDelta(5, "Elena", -1),
            ],
        )
    async with db.transaction() as tx:
        await repo.apply_score_deltas(
            tx,
            chat,
            [
                ScoreDelta(1, "Anna R.", -2, chiamante=True),
                ScoreDelta(2, "", -1),  # empty name keeps the old one
                ScoreDelta(BIG_USER, "Carla", 1, won=True),
                ScoreDelta(4, "dario", 1, won=True),
                ScoreDelta(5, "Elena", 1, won=True),
            ],
        )
        await repo.record_match_end(tx, chat, [1, 2, BIG_USER, 4, 5], [BIG_USER, 4, 5])
    board = await repo.leaderboard(db, chat)
    assert [(r.display_name, r.total) for r in board] == [
        ("Anna R.", 2),
        ("Bruno", 1),
        ("Carla", 0),  # ties ordered by name, case-insensitively
        ("dario", 0),
        ("Elena", 0),
    ]
    anna = board[0]
    assert (anna.smazzate, anna.smazzate_won, anna.chiamante_count, anna.chiamante_wins) == (
        2,
        1,
        2,
        1,
    )
    assert (anna.matches, anna.matches_won) == (1, 0)
    carla = await repo.get_score(db, chat, BIG_USER)
    assert carla is not None and (carla.matches, carla.matches_won) == (1, 1)
    assert [r.user_id for r in await repo.leaderboard(db, chat, limit=2)] == [1, 2]
    assert await repo.leaderboard(db, -999) == []
    with pytest.raises(ValueError):
        await repo.apply_score_deltas(db, chat, [ScoreDelta(1, "a", 1), ScoreDelta(1, "a", 1)])
    with pytest.raises(ValueError):
        await repo.record_match_end(db, chat, [1], [2])
    assert await repo.reset_scores(db, chat) == 5
    assert await repo.leaderboard(db, chat) == []


async def test_record_match_end_creates_rows_with_known_name(db: Database) -> None:
    await repo.upsert_user(db, 7, "Gino")
    await repo.record_match_end(db, -1, [7, 8], [7])
    rows = {r.user_id: r for r in await repo.leaderboard(db, -1)}
    assert rows[7].display_name == "Gino" and rows[7].matches_won == 1
    assert rows[8].display_name == "" and rows[8].matches == 1 and rows[8].total == 0


# --------------------------------------------------------------------------- chat migration


async def test_migrate_chat_moves_and_merges(db: Database, clock: FakeClock) -> None:
    old, new = -4_000_000_001, -1_004_000_000_001
    await repo.save_chat_settings(db, old, "it", '{"deck": "napoletane"}')
    finished = await _playing_game(db, old)
    await repo.set_status(db, finished, "finished")
    active_old = await repo.create_lobby(db, old, 0, 1, "{}")
    await repo.apply_score_deltas(
        db, old, [ScoreDelta(1, "Anna", 5, won=True), ScoreDelta(2, "Bruno", -5)]
    )
    await repo.record_match_end(db, old, [1, 2], [1])
    clock.t += 10
    # messages already arrived from the new supergroup: a lobby and a score row
    active_new = await repo.create_lobby(db, new, 0, 3, "{}")
    await repo.apply_score_deltas(db, new, [ScoreDelta(1, "Anna B.", 3, chiamante=True)])

    result = await repo.migrate_chat(db, old, new)
    assert result.settings_moved
    assert result.games_moved == 2
    assert result.games_cancelled == (active_old,)
    assert (result.scores_moved, result.scores_merged) == (2, 1)

    assert await repo.get_chat_settings(db, old) is None
    chat = await repo.get_chat_settings(db, new)
    assert chat is not None and chat.settings_json == '{"deck": "napoletane"}'
    assert await db.fetchval("SELECT COUNT(*) FROM games WHERE chat_id = ?", (old,)) == 0
    active = await repo.get_active_game(db, new)
    assert active is not None and active.game_id == active_new
    cancelled = await repo.get_game(db, active_old)
    assert cancelled is not None and cancelled.status == "cancelled"
    assert cancelled.chat_id == new
    assert await repo.leaderboard(db, old) == []
    board = {r.user_id: r for r in await repo.leaderboard(db, new)}
    assert board[1].total == 8 and board[1].smazzate == 2 and board[1].matches == 1
    assert board[1].display_name == "Anna B."  # the newer name wins
    assert board[1].chiamante_count == 1
    assert board[2].total == -5 and board[2].display_name == "Bruno"
    # history (actions) stays attached to the moved games
    assert (await repo.get_game(db, finished)).chat_id == new  # type: ignore[union-attr]

    again = await repo.migrate_chat(db, old, new)  # idempotent
    assert again.games_moved == 0 and again.scores_moved == 0 and not again.settings_moved
    assert {r.user_id: r.total for r in await repo.leaderboard(db, new)} == {1: 8, 2: -5}


async def test_migrate_chat_keeps_newer_settings_and_is_atomic(
    db: Database, clock: FakeClock
) -> None:
    await repo.save_chat_settings(db, -1, "it", '{"v": "old"}')
    clock.t += 1
    await repo.save_chat_settings(db, -2, "en", '{"v": "new"}')
    await repo.apply_score_deltas(db, -1, [ScoreDelta(1, "A", 1)])
    # a failure in the caller's transaction undoes the whole migration
    with pytest.raises(RuntimeError):
        async with db.transaction() as tx:
            await repo.migrate_chat(tx, -1, -2)
            raise RuntimeError
    assert (await repo.get_chat_settings(db, -1)) is not None
    assert [r.user_id for r in await repo.leaderboard(db, -1)] == [1]
    result = await repo.migrate_chat(db, -1, -2)
    assert not result.settings_moved
    chat = await repo.get_chat_settings(db, -2)
    assert chat is not None and chat.settings_json == '{"v": "new"}'
    assert await repo.get_chat_settings(db, -1) is None
    assert await repo.migrate_chat(db, -2, -2) == type(result)()


async def test_database_size_grows_with_the_data(db: Database) -> None:
    before = await repo.database_size(db)
    assert before > 0
    gid = await _playing_game(db)
    for version in range(200):
        await repo.record_action(db, gid, version, 0, "P", "human", 1, '{"x": "%s"}' % ("y" * 500))
    assert await repo.database_size(db) > before


async def test_a_scratch_postgres_database_is_created_and_dropped(
    pg_cluster: PostgresCluster,
) -> None:
    """What ``bench.load --database postgresql://…`` does for each run."""
    from storage.postgres import create_database, drop_database

    server = pg_cluster.url("postgres")
    url = await create_database(server, "scratch_db")
    db = await open_database(url)
    assert await migrations.get_version(db) == LATEST_VERSION
    await db.close()
    await drop_database(url)
    with pytest.raises(StorageUnavailable):
        await open_database(url)
    with pytest.raises(ValueError):
        await create_database(server, "bad; name")


async def test_postgres_connects_again_after_losing_the_connection(
    pg_cluster: PostgresCluster,
) -> None:
    url = pg_cluster.new_database()
    db = await open_database(url)
    other = await open_database(url)
    try:
        await repo.upsert_user(db, 1, "Anna")
        pid = await db.fetchval("SELECT pg_backend_pid()")
        await other.fetchval("SELECT pg_terminate_backend(?, 5000)", (pid,))  # waits
        # the next statement fails ("disconnected") if it is sent before the client has
        # seen the connection close, else it runs on a new connection
        lost: StorageUnavailable | None = None
        try:
            await repo.upsert_user(db, 2, "Bruno")
        except StorageUnavailable as e:
            lost = e
        assert lost is None or lost.code == "disconnected"
        await repo.upsert_user(db, 3, "Carla")  # the one after works in any case
        assert await db.fetchval("SELECT pg_backend_pid()") != pid
        stored = [await repo.get_user(db, u) is not None for u in (1, 2, 3)]
        assert stored == [True, lost is None, True]
    finally:
        await other.close()
        await db.close()
        pg_cluster.drop_database(url)


async def test_postgres_session_settings_from_the_url_win(
    pg_cluster: PostgresCluster,
) -> None:
    """The URL's own settings (query parameters) win over the bot's (lock_timeout) and the
    server's (synchronous_commit: the test cluster runs with it off). What is committed is
    visible to another connection at once."""
    url = pg_cluster.new_database()
    db = await open_database(url)
    durable = await open_database(url + "&synchronous_commit=on&lock_timeout=1234")
    try:
        setting = "SELECT current_setting(?)"
        assert await db.fetchval(setting, ("synchronous_commit",)) == "off"  # the server's
        assert await db.fetchval(setting, ("lock_timeout",)) == "5s"
        assert await durable.fetchval(setting, ("synchronous_commit",)) == "on"
        assert await durable.fetchval(setting, ("lock_timeout",)) == "1234ms"
        gid = await _playing_game(durable)
        await repo.record_action(durable, gid, 0, 0, "P", "human", 1, SNAP)
        row = await repo.get_game(db, gid)
        assert row is not None and row.version == 1
    finally:
        await durable.close()
        await db.close()
        pg_cluster.drop_database(url)


async def test_postgres_row_lock_held_too_long_is_locked(pg_cluster: PostgresCluster) -> None:
    url = pg_cluster.new_database()
    db = await open_database(url, busy_timeout_ms=200, lock_retries=1, retry_delay=0.01)
    other = await open_database(url)
    try:
        gid = await _playing_game(db)
        async with other.transaction() as tx:  # another process holds the game's row
            await tx.execute("UPDATE games SET updated_at = 1 WHERE game_id = ?", (gid,))
            with pytest.raises(StorageUnavailable) as locked:
                await repo.record_action(db, gid, 0, 0, "P", "human", 1, SNAP)
            assert locked.value.code == "locked"
        assert await repo.record_action(db, gid, 0, 0, "P", "human", 1, SNAP) == 1
    finally:
        await other.close()
        await db.close()
        pg_cluster.drop_database(url)
