"""The SQLite backend of :class:`storage.db.Database`: one aiosqlite connection.

Statements normally run on aiosqlite's thread.  A move (:meth:`run_transaction`), the
small frequent writes (:meth:`SQLiteDatabase.batched`: updates stored, digests, UI
patches, together in one transaction) and the queries outside a transaction
(:meth:`SQLiteDatabase.fetch`) run at once on the event loop's thread instead, on
the same sqlite3 connection, while the lock keeps aiosqlite's thread idle (see
:meth:`SQLiteDatabase._run_inline`); when they wait for the lock, the task that releases
it runs them, with no turn of the event loop in between (issue 32: handed over one a
turn, a busy loop served ~50 a second and the updates' stores waited seconds).  That sqlite3
connection is reached through public APIs only: sqlite3's ``factory`` argument (which
aiosqlite passes on to :func:`sqlite3.connect`) hands us the connection object as it is
created; nothing of aiosqlite's private internals is used.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
import re
import sqlite3
from collections.abc import Callable, Coroutine, Iterable
from contextlib import suppress
from typing import Any, TypeVar, cast

import aiosqlite

from .db import (
    DEFAULT_BUSY_TIMEOUT_MS,
    WAL_AUTOCHECKPOINT_PAGES,
    Database,
    DatabaseTarget,
    Executor,
    Params,
    Row,
    _Statements,
    is_urgent,
    short_sql,
)
from .errors import StorageError, StorageUnavailable, translate_sqlite_error

__all__ = ["SQLiteDatabase"]

log = logging.getLogger("storage.db")

T = TypeVar("T")

#: What a transaction attempted on the event loop's thread gives when another process
#: holds the database: it is run on a worker thread instead.
_BUSY = object()
#: Commits run on the event loop's thread between two checkpoints of the WAL.
CHECKPOINT_EVERY = 300
#: A query that :meth:`SQLiteDatabase.fetch` runs on the event loop's thread.
_SELECT = re.compile(r"\s*SELECT\b", re.IGNORECASE)


async def _outcome(done: asyncio.Future[Any]) -> Any:
    """What the lock's work for this task gave. If the task is cancelled after the work
    ran (committed) and before it resumed, the outcome stands and the cancellation is
    raised at the task's next wait (a move stored is never reported as not stored)."""
    try:
        return await done
    except asyncio.CancelledError:
        if not done.done() or done.cancelled():
            raise  # never run, and it never will be
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()
            task.cancel()
        return done.result()


def _capturing_factory(into: list[sqlite3.Connection]) -> type[sqlite3.Connection]:
    """A :class:`sqlite3.Connection` class that appends each instance to ``into``."""

    class CapturedConnection(sqlite3.Connection):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            into.append(self)

    return CapturedConnection


class _DirectTransaction(_Statements):
    """The executor of :meth:`SQLiteDatabase.run_transaction`: every statement executes
    at once on the sqlite3 connection (on the event loop's thread, or on a worker thread
    when another process holds the database), so its coroutines finish without ever
    suspending."""

    __slots__ = ("_db", "_raw")

    def __init__(self, db: SQLiteDatabase, raw: sqlite3.Connection) -> None:
        super().__init__()
        self._db = db
        self._raw = raw

    def now(self) -> int:
        return self._db.now()

    @property
    def dialect(self) -> str:
        return "sqlite"

    def _run(self, sql: str, params: Params = ()) -> sqlite3.Cursor:
        try:
            return self._raw.execute(sql, params)
        except sqlite3.Error as e:
            raise translate_sqlite_error(e, short_sql(sql)) from e

    def _in_transaction(self) -> bool:
        return self._raw.in_transaction

    async def _statement(self, sql: str) -> None:
        self._run(sql)

    async def execute(self, sql: str, params: Params = ()) -> int:
        return int(self._run(sql, params).rowcount)

    async def executemany(self, sql: str, seq_of_params: Iterable[Params]) -> None:
        try:
            self._raw.executemany(sql, seq_of_params)
        except sqlite3.Error as e:
            raise translate_sqlite_error(e, short_sql(sql)) from e

    async def fetch(self, sql: str, params: Params = ()) -> list[Row]:
        try:
            return list(self._run(sql, params).fetchall())
        except sqlite3.Error as e:
            raise translate_sqlite_error(e, short_sql(sql)) from e


def _run_body(
    db: SQLiteDatabase, raw: sqlite3.Connection, body: Callable[[Any], Coroutine[Any, Any, T]],
    transaction: bool = True,
) -> T:
    """On the calling thread: BEGIN IMMEDIATE, run ``body`` to completion, COMMIT (or
    ROLLBACK and re-raise). ``transaction=False``: one query, autocommit (its own read)."""
    if raw.in_transaction:  # leftover of a failed rollback; never keep it
        raw.rollback()
    tx = _DirectTransaction(db, raw)
    if transaction:
        tx._run("BEGIN IMMEDIATE")
    try:
        coro = body(tx)
        try:
            coro.send(None)
        except StopIteration as stop:
            result: T = stop.value
        else:
            coro.close()
            raise RuntimeError("run_transaction: the body awaited something other than tx")
        if transaction:
            tx._run("COMMIT")
    except BaseException:
        try:
            if raw.in_transaction:
                raw.rollback()
        except sqlite3.Error as e:
            log.error("ROLLBACK failed: %s", e)
        raise
    return result


# --------------------------------------------------------------------------- database


class SQLiteDatabase(Database):
    """One aiosqlite connection (and its sqlite3 connection, for :meth:`_run_inline`)."""

    dialect = "sqlite"
    _begin_sql = "BEGIN IMMEDIATE"

    def __init__(
        self,
        conn: aiosqlite.Connection,
        raw: sqlite3.Connection,
        target: DatabaseTarget,
        **options: Any,
    ) -> None:
        super().__init__(**options)  # busy_timeout_ms, lock_retries, retry_delay, clock
        self._conn = conn
        self._raw = raw
        self.target = target
        #: The writes of :meth:`batched` waiting for the lock, and whether a piece of the
        #: lock's work that runs them is queued, urgent [0] and not [1].
        self._batch: list[tuple[Callable[[Executor], Coroutine[Any, Any, Any]],
                                asyncio.Future[Any]]] = []
        self._flush_queued = [False, False]
        self._inline_commits = 0
        self._checkpointing: asyncio.Task[None] | None = None
        #: The connection that checkpoints the WAL (:meth:`_checkpoint`), opened with the
        #: first checkpoint; only ever used by one worker thread at a time.
        self._checkpointer: sqlite3.Connection | None = None

    @classmethod
    async def connect(cls, target: DatabaseTarget, **options: Any) -> SQLiteDatabase:
        """Open and configure the connection (no migrations: see :func:`storage.open_database`)."""
        busy_timeout_ms = int(options.get("busy_timeout_ms", DEFAULT_BUSY_TIMEOUT_MS))
        if target.path is not None and not target.read_only:
            try:
                target.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise StorageUnavailable(
                    f"cannot create the directory of {target.path}: {e}", code="cannot_open"
                ) from e
        created: list[sqlite3.Connection] = []
        try:
            conn = await aiosqlite.connect(
                target.database,
                uri=True,
                isolation_level=None,  # autocommit; we issue BEGIN/COMMIT ourselves
                timeout=busy_timeout_ms / 1000,
                # run_transaction uses it from the event loop's thread too, while holding
                # the lock (so aiosqlite's thread is idle); see _run_inline
                check_same_thread=False,
                factory=_capturing_factory(created),
            )
        except sqlite3.Error as e:
            raise translate_sqlite_error(e, f"opening {target.path or target.database}") from e
        conn.row_factory = sqlite3.Row
        db = cls(conn, created[0], target, **options)
        try:
            await db._configure()
        except BaseException:
            await db.close()
            raise
        return db

    async def _configure(self) -> None:
        """PRAGMAs for this connection (they are per connection, not stored in the file)."""
        await self._raw_execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_ms)}")
        await self._raw_execute("PRAGMA foreign_keys = ON")
        if not self.target.is_memory:
            mode = await self._with_retries(
                lambda: self._raw_fetchval("PRAGMA journal_mode = WAL"), "journal_mode"
            )
            if str(mode).lower() != "wal":
                log.warning("could not switch %s to WAL (journal_mode=%s)", self.target.path, mode)
        await self._raw_execute("PRAGMA synchronous = NORMAL")
        await self._raw_execute(f"PRAGMA wal_autocheckpoint = {WAL_AUTOCHECKPOINT_PAGES}")

    async def _after_migrations(self, check_writable: bool | None) -> None:
        if check_writable is None:
            check_writable = not self.target.read_only
        if check_writable and not self.target.is_memory:
            await self._probe_writable()

    async def _probe_writable(self) -> None:
        """Try a write (rolled back) so a read-only database fails at start-up, clearly."""
        async with self._lock:
            try:
                await self._begin()
                await self._raw_execute("CREATE TABLE _storage_write_probe (x INTEGER)")
            except StorageUnavailable as e:
                if e.code == "locked":
                    raise
                raise StorageUnavailable(
                    f"database {self.target.path} is not writable ({e.code}): {e}", code=e.code
                ) from e
            finally:
                await self._rollback_quietly()

    async def _close_connection(self) -> None:
        if self._checkpointing is not None and self._checkpointing is not asyncio.current_task():
            # (its thread cannot be interrupted: the connection is closed once it is done)
            await asyncio.gather(asyncio.shield(self._checkpointing), return_exceptions=True)
        if self._checkpointer is not None:
            with suppress(sqlite3.Error):
                self._checkpointer.close()
            self._checkpointer = None
        try:
            with suppress(sqlite3.Error, ValueError):
                await self._conn.execute("PRAGMA optimize")
            await self._conn.close()
        except (sqlite3.Error, ValueError) as e:  # pragma: no cover - best effort
            log.warning("error while closing the database: %s", e)

    def _in_transaction(self) -> bool:
        return self._raw.in_transaction

    async def _rollback_quietly(self) -> None:
        try:
            if self._raw.in_transaction:
                await self._conn.execute("ROLLBACK")
        except (sqlite3.Error, ValueError) as e:
            log.error("ROLLBACK failed: %s", e)

    # ---------------------------------------------------------------- a move at once

    async def run_transaction(self, body: Callable[[Executor], Coroutine[Any, Any, T]]) -> T:
        """Run ``body(tx)`` as one transaction at once, without a trip per statement.

        Same effect as ``async with db.transaction() as tx: return await body(tx)``, but
        the statements run straight on the sqlite3 connection, on the event loop's thread
        (:meth:`_run_inline`), instead of one event-loop round trip each, which matters
        when the loop is busy: ``body`` may only await ``tx`` (the repository functions),
        nothing else.  If the lock is taken, the transaction waits as *work* among the
        lock's waiters (:meth:`PriorityLock.run_when_free`): the task that releases the
        lock runs it, with no turn of the event loop in between.  While another process
        holds the database it runs on a worker thread instead (:meth:`_run_in_thread`),
        retried like BEGIN (nothing of a failed attempt is kept)."""
        if self._joinable() is not None:
            raise StorageError("run_transaction inside a transaction", code="misuse")
        outcome = await self._when_free(functools.partial(self._attempt, body))
        return await self._in_thread_if_busy(outcome, body)

    async def fetch(self, sql: str, params: Params = ()) -> list[Row]:
        """A query outside any transaction (``SELECT``) runs at once on the event loop's
        thread, like a move (:meth:`_run_inline`: a read of a few rows, well under a
        millisecond); on aiosqlite's thread it held the lock for two turns of the event
        loop, and every move waited behind it (issue 32: the Mini App's reads, the
        slowest presses' answers). While another process holds the database, and for
        any other statement, as before (:meth:`Database.fetch`)."""
        if self._joinable() is not None or not _SELECT.match(sql):
            return await super().fetch(sql, params)

        async def read(tx: Executor) -> list[Row]:
            return await tx.fetch(sql, params)

        def read_now() -> Any:
            self._check_active()  # (fenced: under the lock, as an autocommit statement)
            return self._attempt(read, transaction=False)

        outcome = await self._when_free(read_now)
        if outcome is _BUSY:
            return await super().fetch(sql, params)
        return cast(list[Row], outcome)

    async def _when_free(self, work: Callable[[], Any]) -> Any:
        """What ``work()`` gives, run with the lock held: at once if the lock is free,
        otherwise queued as the lock's work (:meth:`PriorityLock.run_when_free`) at
        this task's urgency, run by the task that releases the lock, with no turn of the
        event loop in between."""
        if self._lock.try_acquire():
            try:
                return work()
            finally:
                self._lock.release()
        done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        context = contextvars.copy_context()  # (the work runs in another task)
        self._lock.run_when_free(
            lambda: context.run(self._serve, work, done), urgent=is_urgent()
        )
        return await _outcome(done)

    async def batched(self, body: Callable[[Executor], Coroutine[Any, Any, T]]) -> T:
        """:meth:`Database.batched`: the writes that wait for the lock together are run
        by one piece of work, as one transaction (each a savepoint), at once on the event
        loop's thread like a move. The first write of a batch queues that work (at its
        urgency; an urgent write queues an urgent one if only a background one waits);
        the work takes every write queued when it runs. With the lock free, a write runs
        at once, alone."""
        if self._joinable() is not None:
            raise StorageError("batched inside a transaction", code="misuse")
        done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._batch.append((body, done))
        rank = 0 if is_urgent() else 1
        if self._lock.try_acquire():
            try:
                self._flush(None)
            finally:
                self._lock.release()
        elif not any(self._flush_queued[: rank + 1]):
            self._flush_queued[rank] = True
            self._lock.run_when_free(functools.partial(self._flush, rank), urgent=rank == 0)
        return await self._in_thread_if_busy(await _outcome(done), body)

    def _flush(self, rank: int | None) -> None:
        """With the lock held: every batched write queued, as one transaction."""
        if rank is not None:
            self._flush_queued[rank] = False
        items, self._batch = self._batch, []
        items = [(body, done) for body, done in items if not done.done()]  # (cancelled)
        if not items:
            return

        async def all_of_them(tx: Executor) -> list[tuple[bool, Any]]:
            results: list[tuple[bool, Any]] = []
            for body, _ in items:
                try:
                    async with tx.transaction() as savepoint:
                        results.append((True, await body(savepoint)))
                except Exception as e:  # (its own savepoint rolled back)
                    results.append((False, e))
            return results

        try:
            self._check_active()
            outcome = self._attempt(all_of_them)
        except Exception as e:
            for _, done in items:
                if not done.done():
                    done.set_exception(e)
            return
        for index, (_, done) in enumerate(items):
            if done.done():
                continue
            if outcome is _BUSY:
                done.set_result(_BUSY)  # (each runs on a worker thread, alone)
                continue
            ok, value = cast(list[tuple[bool, Any]], outcome)[index]
            if ok:
                done.set_result(value)
            else:
                done.set_exception(value)

    def _attempt(self, body: Callable[[Executor], Coroutine[Any, Any, T]],
                 transaction: bool = True) -> T | object:
        """With the lock held: ``body`` as one transaction right here, or :data:`_BUSY`
        if another process holds the database."""
        self._check_open()
        try:
            return self._run_inline(body, transaction)
        except StorageUnavailable as e:
            if e.code != "locked":
                raise
            return _BUSY

    @staticmethod
    def _serve(work: Callable[[], Any], done: asyncio.Future[Any]) -> None:
        """The lock's work for a task waiting in :meth:`_when_free`."""
        if done.done():
            return  # its caller gave up waiting (cancelled): nothing is run
        try:
            done.set_result(work())
        except Exception as e:
            done.set_exception(e)

    async def _in_thread_if_busy(
        self, outcome: Any, body: Callable[[Executor], Coroutine[Any, Any, T]]
    ) -> T:
        if outcome is not _BUSY:
            return cast(T, outcome)
        # another process holds the database: wait for it on a worker thread
        async with self._lock:
            self._check_open()
            return await self._with_retries(lambda: self._run_in_thread(body), "transaction")

    async def _run_in_thread(self, body: Callable[[Executor], Coroutine[Any, Any, T]]) -> T:
        """:func:`_run_body` on a worker thread (it may wait up to the busy timeout for
        another process).  The caller holds the lock, so aiosqlite's thread is idle; if
        the caller is cancelled, the lock is kept until the thread is done with the
        connection."""
        self._check_open()
        work = asyncio.ensure_future(asyncio.to_thread(_run_body, self, self._raw, body))
        try:
            return await asyncio.shield(work)
        except asyncio.CancelledError:
            with suppress(BaseException):
                await work
            raise

    def _run_inline(self, body: Callable[[Executor], Coroutine[Any, Any, T]],
                    transaction: bool = True) -> T:
        """Run ``body`` as one transaction right here, on the event loop's thread.

        A move is a handful of statements (well under a millisecond): handing it to
        aiosqlite's thread cost two wake-ups of a busy event loop and, while the loop ran
        Python, a wait for the GIL after every statement (several milliseconds of a
        click's latency under load, see bench/README.md).  The caller holds the lock, so
        the connection is idle.  Nothing here may block the loop: the busy timeout is 0
        (another process holding the database raises ``"locked"`` at once and the caller
        waits on a worker thread instead) and the commit does not checkpoint the WAL
        (the statements run on the database thread do; a checkpoint writes and syncs the
        database file)."""
        raw = self._raw
        try:
            raw.execute("PRAGMA busy_timeout = 0")
            raw.execute("PRAGMA wal_autocheckpoint = 0")
        except sqlite3.Error as e:
            raise translate_sqlite_error(e, "PRAGMA") from e
        try:
            result = _run_body(self, raw, body, transaction)
            if transaction:  # (a read commits nothing)
                self._checkpoint_now_and_then()
            return result
        finally:
            try:
                raw.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_ms)}")
                raw.execute(f"PRAGMA wal_autocheckpoint = {WAL_AUTOCHECKPOINT_PAGES}")
            except sqlite3.Error as e:  # pragma: no cover - setting a PRAGMA reads nothing
                log.error("could not restore the connection's PRAGMAs: %s", e)

    def _checkpoint_now_and_then(self) -> None:
        """The commits run on the event loop's thread do not checkpoint the WAL (see
        :meth:`_run_inline`): every :data:`CHECKPOINT_EVERY` of them, a passive
        checkpoint on a worker thread (:meth:`_checkpoint`), so that the WAL stays small
        although nearly every write is run here."""
        if self.target.is_memory:
            return
        self._inline_commits += 1
        if self._inline_commits < CHECKPOINT_EVERY or self._checkpointing is not None:
            return
        self._inline_commits = 0
        self._checkpointing = asyncio.get_running_loop().create_task(
            self._checkpoint(), name="sqlite-checkpoint"
        )

    async def _checkpoint(self) -> None:
        """A passive checkpoint on a connection of its own, without the lock: it writes
        the WAL's pages into the database file and syncs it (tens of milliseconds),
        and in WAL mode writers go on meanwhile; on the connection of the moves it held
        the lock, so every move and every update stored waited for it (issue 32: the
        slowest presses' answers)."""
        try:
            self._check_open()
            await asyncio.to_thread(self._checkpoint_in_thread)
        except (StorageError, sqlite3.Error) as e:
            log.info("WAL not checkpointed: %s", e)
        finally:
            self._checkpointing = None

    def _checkpoint_in_thread(self) -> None:
        if self._checkpointer is None:
            self._checkpointer = sqlite3.connect(
                self.target.database, uri=True, isolation_level=None,
                timeout=self.busy_timeout_ms / 1000, check_same_thread=False,
            )
        self._checkpointer.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()

    # ---------------------------------------------------------------- statements

    def _translate(self, e: Exception, sql: str) -> StorageError:
        if isinstance(e, sqlite3.Error):
            return translate_sqlite_error(e, short_sql(sql))
        # aiosqlite raises ValueError("Connection closed"/"no active connection")
        return StorageUnavailable(f"database connection is closed ({e})", code="closed")

    async def _raw_execute(self, sql: str, params: Params = ()) -> int:
        self._check_open()
        try:
            async with self._conn.execute(sql, params) as cur:
                return int(cur.rowcount)
        except (sqlite3.Error, ValueError) as e:
            raise self._translate(e, sql) from e

    async def _raw_executemany(self, sql: str, seq_of_params: Iterable[Params]) -> None:
        self._check_open()
        try:
            async with self._conn.executemany(sql, seq_of_params):
                pass
        except (sqlite3.Error, ValueError) as e:
            raise self._translate(e, sql) from e

    async def _raw_fetch(self, sql: str, params: Params = ()) -> list[Row]:
        self._check_open()
        try:
            return list(await self._conn.execute_fetchall(sql, params))
        except (sqlite3.Error, ValueError) as e:
            raise self._translate(e, sql) from e

    async def pragma(self, name: str) -> Any:
        """Read a PRAGMA value (e.g. ``await db.pragma("journal_mode")``)."""
        if not name.replace("_", "").isalnum():
            raise ValueError(f"bad pragma name {name!r}")
        return await self.fetchval(f"PRAGMA {name}")
