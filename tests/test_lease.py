"""storage/lease.py and the fencing gate of storage/db.py (issue 20), in-process: the
advisory lock, its loss, the handover's NOTIFY, the SQLite file lock, the inbox
(storage/inbox.py); bot/health.py's role. The two-process scenarios are in
tests/chaos/test_failover.py."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot.health import role_of, write_beat
from storage import StorageUnavailable, inbox, open_database, repo
from storage.lease import (
    FileLock,
    InstanceLocked,
    PostgresLease,
    lock_path_for,
)
from tests import pg


@pytest.fixture
async def pg_url(pg_cluster: pg.PostgresCluster) -> AsyncIterator[str]:
    url = pg_cluster.new_database()
    yield url
    pg_cluster.drop_database(url)


async def test_one_holder_at_a_time_and_a_release_wakes_the_standby(pg_url: str) -> None:
    first = PostgresLease(pg_url, 42)
    second = PostgresLease(pg_url, 42, poll_seconds=30)
    other_bot = PostgresLease(pg_url, 43)
    try:
        assert await first.try_acquire() and first.held
        assert not await second.try_acquire() and not second.held
        assert await other_bot.try_acquire()  # another bot's key: not the same lock
        loop = asyncio.get_running_loop()
        start = loop.time()
        waiting = asyncio.create_task(second.wait_release())
        await asyncio.sleep(0.2)
        await first.release()
        await waiting
        assert loop.time() - start < 10, "the NOTIFY did not wake the standby"
        assert await second.try_acquire()
        assert not await first.try_acquire()
    finally:
        for lease in (first, second, other_bot):
            await lease.release()


async def test_a_terminated_lock_connection_is_noticed_at_once(pg_url: str) -> None:
    lost: list[str] = []
    holder = PostgresLease(pg_url, 7, on_lost=lost.append)
    standby = PostgresLease(pg_url, 7)
    admin = await open_database(pg_url)
    try:
        assert await holder.try_acquire()
        pid = await holder.backend_pid()
        await admin.fetchval("SELECT pg_terminate_backend(?)", (pid,))
        for _ in range(100):
            if lost:
                break
            await asyncio.sleep(0.02)
        assert lost and "closed" in lost[0], lost
        assert not holder.held and holder.lost_reason == lost[0]
        assert await standby.try_acquire()
        assert not await holder.try_acquire()  # reconnects; the lock is the other's now
        assert len(lost) == 1
    finally:
        await admin.close()
        await holder.release()
        await standby.release()


async def test_an_unreachable_server_is_standby_not_a_crash(tmp_path: Path) -> None:
    lease = PostgresLease(f"postgresql://nobody@/none?host={tmp_path}", 1)
    assert not await lease.try_acquire()
    assert not lease.held
    await lease.release()


async def test_the_fence_refuses_transactions_commits_and_statements(pg_url: str) -> None:
    db = await open_database(pg_url)
    fenced = False

    def fence() -> None:
        if fenced:
            raise StorageUnavailable("not active", code="fenced")

    db.fence = fence
    try:
        chat = await repo.create_lobby(db, -1, 0, 5, "{}")
        fenced = True
        with pytest.raises(StorageUnavailable) as caught:
            await repo.create_lobby(db, -2, 0, 5, "{}")
        assert caught.value.code == "fenced"
        with pytest.raises(StorageUnavailable):
            await db.execute("UPDATE games SET creator_id = 6")
        fenced = False
        # fenced between BEGIN and COMMIT: nothing is written
        with pytest.raises(StorageUnavailable):
            async with db.transaction() as tx:
                await tx.execute("UPDATE games SET creator_id = 7")
                fenced = True
        with pytest.raises(StorageUnavailable):
            await db.run_transaction(
                lambda tx: tx.execute("UPDATE games SET creator_id = 8")
            )
        fenced = False

        async def move(tx: object) -> int:
            nonlocal fenced
            count = await tx.execute("UPDATE games SET creator_id = 9")  # type: ignore[attr-defined]
            fenced = True  # the lock is lost while the move runs: no COMMIT
            return int(count)

        with pytest.raises(StorageUnavailable):
            await db.run_transaction(move)
        fenced = False
        assert await db.fetchval("SELECT count(*) FROM games") == 1
        assert await db.fetchval("SELECT creator_id FROM games WHERE game_id = ?", (chat,)) == 5
    finally:
        await db.close()


async def test_the_inbox_stores_each_update_once_and_marks_it_with_the_move(
    database_url: str,
) -> None:
    db = await open_database(database_url)
    try:
        assert await inbox.store_updates(db, [(1001, '{"a":1}'), (1002, '{"b":2}')]) == [
            1001, 1002]
        # delivered again (the instance before stored it, never confirmed it): not new
        assert await inbox.store_updates(db, [(1002, '{"b":2}'), (1003, "{}")]) == [1003]
        assert await inbox.pending_updates(db) == [
            (1001, '{"a":1}'), (1002, '{"b":2}'), (1003, "{}")]

        async def handle(update_id: int, fail: bool) -> bool:
            inbox.handling(update_id)
            state = inbox.current()  # (as the service reads it, before its transaction)
            assert state is not None

            async def body(tx: Any) -> None:
                await inbox.mark_handled(tx, state.update_id)
                if fail:
                    raise RuntimeError("killed before the commit")

            try:
                await db.run_transaction(body)
            except RuntimeError:
                pass
            else:
                inbox.committed(state)
            assert inbox.current() is (state if fail else None)
            return state.marked

        # the mark rolls back with the move's transaction: still pending
        assert not await asyncio.create_task(handle(1001, fail=True))
        assert [u for u, _ in await inbox.pending_updates(db)] == [1001, 1002, 1003]
        assert await asyncio.create_task(handle(1001, fail=False))
        assert inbox.current() is None  # (outside a handling task)
        await inbox.mark_handled(db, 1003)
        assert [u for u, _ in await inbox.pending_updates(db)] == [1002]
        assert await inbox.prune_inbox(db, db.now() - 60) == 0  # handled just now: kept
        assert await inbox.prune_inbox(db, db.now() + 1) == 2
        assert await inbox.store_updates(db, [(1001, "{}")]) == [1001]  # (gone, so new)
    finally:
        await db.close()


async def test_the_inbox_counts_claims_and_keeps_poisoned_updates_aside(
    database_url: str,
) -> None:
    """Issue 46: each start that takes an update in hand counts it (storing it counts
    once); a poisoned update is handled (never handed out again), keeps its error's class
    and the summary given instead of its payload, is listed, and outlives handled rows."""
    db = await open_database(database_url)
    try:
        assert await inbox.store_updates(db, [(2001, '{"secret":1}'), (2002, "{}")]) == [
            2001, 2002]
        assert [(p.update_id, p.claims) for p in await inbox.pending(db)] == [
            (2001, 1), (2002, 1)]
        await inbox.claim(db, 2001)
        assert [(p.update_id, p.claims) for p in await inbox.pending(db)] == [
            (2001, 2), (2002, 1)]
        assert await inbox.poison(db, 2001, "ProcessDied", '{"kind":"x","sha256":"ab"}')
        assert not await inbox.poison(db, 2001, "Again", "{}")  # (set aside once)
        assert [u for u, _ in await inbox.pending_updates(db)] == [2002]
        await inbox.claim(db, 2001)  # (a handled row is not counted again)
        (row,) = await inbox.poisoned_updates(db)
        assert (row.update_id, row.error, row.summary, row.claims) == (
            2001, "ProcessDied", '{"kind":"x","sha256":"ab"}', 2)
        assert "secret" not in str(await db.fetch("SELECT * FROM inbox"))
        await inbox.mark_handled(db, 2002)
        # handled rows go after a day; the poisoned one is kept until its own limit
        assert await inbox.prune_inbox(db, db.now() + 1, db.now() - 60) == 1
        assert [r.update_id for r in await inbox.poisoned_updates(db)] == [2001]
        assert await inbox.prune_inbox(db, db.now() + 1, db.now() + 1) == 1
        assert await inbox.poisoned_updates(db) == []
    finally:
        await db.close()


async def test_message_digests_are_kept_per_message(database_url: str) -> None:
    db = await open_database(database_url)
    try:
        await inbox.save_digest(db, -100, 7, "t1", "k1")
        await inbox.save_digest(db, -100, 7, "t2", "k2")
        await inbox.save_digest(db, 55, 7, "t3", "")
        assert await inbox.load_digests(db, db.now() - 5) == {
            (-100, 7): ("t2", "k2"), (55, 7): ("t3", "")}
        assert await inbox.load_digests(db, db.now() + 5) == {}
        assert await inbox.prune_digests(db, db.now() + 1) == 2
        assert await inbox.load_digests(db, 0) == {}
    finally:
        await db.close()


def test_a_second_file_lock_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    path = lock_path_for(f"sqlite:///{tmp_path / 'bot.db'}")
    assert path == tmp_path / "bot.db.lock"
    assert lock_path_for("sqlite://") is None
    first, second = FileLock(path), FileLock(path)
    first.acquire()
    try:
        with pytest.raises(InstanceLocked) as caught:
            second.acquire()
        message = str(caught.value)
        assert f"pid {os.getpid()}" in message and str(tmp_path / "bot.db") in message
        assert "PostgreSQL" in message
    finally:
        first.release()
    second.acquire()
    second.release()


def test_the_health_file_says_the_role(tmp_path: Path) -> None:
    path = tmp_path / "alive"
    assert role_of(path) == "unknown"
    write_beat(path, "standby")
    assert role_of(path) == "standby"
    write_beat(path, "active")
    assert role_of(path) == "active"
    path.write_text("1700000000\n")  # a file written before roles existed
    assert role_of(path) == "active"


def test_a_lock_file_that_cannot_be_created_does_not_stop_the_bot(tmp_path: Path) -> None:
    lock = FileLock(tmp_path / "missing-dir" / "bot.db.lock")
    lock.acquire()  # a warning, no exception (the database itself will say what is wrong)
    lock.release()
