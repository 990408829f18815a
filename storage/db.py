"""Async SQLite database wrapper (one aiosqlite connection), in the style of mautrix's
``async_db``.

Usage::

    db = await Database.open("sqlite:///briscola.db")   # creates/upgrades the schema
    row = await db.fetchrow("SELECT ...", (x,))          # autocommit statement
    async with db.transaction() as tx:                   # BEGIN IMMEDIATE ... COMMIT
        await tx.execute("UPDATE ...", (...))
        await repo.record_action(tx, ...)
    await db.close()

Concurrency model
-----------------
There is a single connection.  An :class:`asyncio.Lock` gives a transaction exclusive use
of it, so statements of two tasks never interleave inside one transaction; statements
run outside a transaction wait for the running transaction to finish.  Work done inside
``async with urgent():`` (a player's move, waited for by a person) is served before any
other waiting work, so background redraws never queue in front of a click, and
:meth:`Database.run_transaction` (a move) runs all its statements at once on the
connection instead of one trip to aiosqlite's thread each.  Inside
``async with db.transaction()``, calls made *by the same task* on ``db`` itself (instead
of ``tx``) join the running transaction rather than dead-locking, and a nested
``transaction()`` becomes a SAVEPOINT.  Other processes are kept out by SQLite's own
locking: ``busy_timeout`` makes a writer wait, and BEGIN/COMMIT (and autocommit
statements) are retried a bounded number of times with exponential backoff before
:class:`~storage.errors.StorageUnavailable` (``code="locked"``) is raised.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import os
import random
import sqlite3
import time
from collections import deque
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Coroutine,
    Iterable,
    Mapping,
    Sequence,
)
from contextlib import AbstractAsyncContextManager, asynccontextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, Self, TypeVar
from urllib.parse import quote

import aiosqlite

from .errors import StorageError, StorageUnavailable, translate_sqlite_error

__all__ = [
    "Database", "DatabaseTarget", "Executor", "Params", "Transaction", "parse_database_url",
    "urgent",
]

log = logging.getLogger("storage.db")

Params = Sequence[Any] | Mapping[str, Any]
T = TypeVar("T")

DEFAULT_BUSY_TIMEOUT_MS = 5000
DEFAULT_LOCK_RETRIES = 3
DEFAULT_RETRY_DELAY = 0.05
#: SQLite's default: a commit that finds this many pages in the WAL checkpoints it.
WAL_AUTOCHECKPOINT_PAGES = 1000


class Executor(Protocol):
    """Something SQL can be run on: a :class:`Database` or a :class:`Transaction`.

    All repository functions take an ``Executor`` as their first argument.
    """

    async def execute(self, sql: str, params: Params = ()) -> int:
        """Run one statement; return the number of rows changed."""
        ...

    async def executemany(self, sql: str, seq_of_params: Iterable[Params]) -> int:
        """Run one statement for each parameter set; return the rows changed."""
        ...

    async def fetch(self, sql: str, params: Params = ()) -> list[sqlite3.Row]:
        """Run a query and return all rows."""
        ...

    async def fetchrow(self, sql: str, params: Params = ()) -> sqlite3.Row | None:
        """Run a query and return the first row, or None."""
        ...

    async def fetchval(self, sql: str, params: Params = (), column: int = 0) -> Any:
        """Run a query and return one column of the first row, or None."""
        ...

    def transaction(self) -> AbstractAsyncContextManager[Transaction]:
        """Open a transaction (a SAVEPOINT if one is already running)."""
        ...

    def now(self) -> int:
        """Current time as integer unix seconds (injectable clock, for tests)."""
        ...


# The transaction owned by the current task, if any (see Database._joinable()).
_CURRENT_TX: contextvars.ContextVar[Transaction | None] = contextvars.ContextVar(
    "storage_current_tx", default=None
)


#: Set in a task whose database work a person is waiting for (see :func:`urgent`).
_URGENT: contextvars.ContextVar[bool] = contextvars.ContextVar("storage_urgent", default=False)


@asynccontextmanager
async def urgent() -> AsyncIterator[None]:
    """Inside this block the current task's statements and transactions go before any
    waiting background work (they still wait for the statement or transaction running)."""
    token = _URGENT.set(True)
    try:
        yield
    finally:
        _URGENT.reset(token)


class PriorityLock:
    """An :class:`asyncio.Lock` whose waiters from :func:`urgent` blocks are woken first
    (first come, first served within each class)."""

    def __init__(self) -> None:
        self._locked = False
        self._waiters: tuple[deque[asyncio.Future[None]], deque[asyncio.Future[None]]] = (
            deque(), deque()
        )

    def locked(self) -> bool:
        return self._locked

    async def acquire(self) -> None:
        if not self._locked and not any(self._waiters):
            self._locked = True
            return
        queue = self._waiters[0 if _URGENT.get() else 1]
        waiter = asyncio.get_running_loop().create_future()
        queue.append(waiter)
        try:
            await waiter  # release() hands the lock over: _locked stays True
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():  # handed over, then cancelled
                self.release()
            else:
                with suppress(ValueError):  # release() may have dropped it already
                    queue.remove(waiter)
            raise

    def release(self) -> None:
        for queue in self._waiters:
            while queue:
                waiter = queue.popleft()
                if not waiter.done():
                    waiter.set_result(None)
                    return
        self._locked = False

    async def __aenter__(self) -> None:
        await self.acquire()

    async def __aexit__(self, *exc: object) -> None:
        self.release()


# --------------------------------------------------------------------------- url parsing


@dataclass(frozen=True, slots=True)
class DatabaseTarget:
    """Result of :func:`parse_database_url`."""

    database: str  # what is passed to sqlite3.connect(..., uri=True)
    path: Path | None  # filesystem path, None for in-memory databases
    is_memory: bool
    read_only: bool


_SCHEMES = ("sqlite+aiosqlite://", "sqlite3://", "sqlite://")


def parse_database_url(url_or_path: str | os.PathLike[str]) -> DatabaseTarget:
    """Turn a database URL or path into something :func:`sqlite3.connect` accepts.

    Accepted forms: ``sqlite:///relative.db``, ``sqlite:////abs/path.db``, a plain path,
    ``:memory:``, ``sqlite://`` / ``sqlite:///:memory:`` (in-memory), and ``file:`` URIs.
    SQLite URI parameters may follow a ``?`` (e.g. ``sqlite:///x.db?mode=ro``).
    """
    s = os.fspath(url_or_path).strip()
    if s in ("", ":memory:"):
        return DatabaseTarget(":memory:", None, True, False)
    if s.startswith("file:"):
        query = s.partition("?")[2]
        memory = s.startswith("file::memory:") or "mode=memory" in query
        return DatabaseTarget(s, None, memory, "mode=ro" in query)
    query = ""
    for scheme in _SCHEMES:
        if s.lower().startswith(scheme):
            rest = s[len(scheme) :]
            rest, _, query = rest.partition("?")
            if rest in ("", "/", "/:memory:", ":memory:"):
                return DatabaseTarget(":memory:", None, True, False)
            if not rest.startswith("/"):
                raise ValueError(f"unsupported database url {s!r} (use sqlite:///path.db)")
            # sqlite:///rel.db -> "rel.db"; sqlite:////abs.db -> "/abs.db"
            s = rest[1:]
            break
    path = Path(s).expanduser().absolute()
    database = "file:" + quote(str(path), safe="/") + (f"?{query}" if query else "")
    return DatabaseTarget(database, path, False, "mode=ro" in query)


# --------------------------------------------------------------------------- transaction


class _Statements:
    """What both transaction kinds share: row helpers and SAVEPOINT nesting, on top of
    their own ``fetch`` and ``_statement``."""

    __slots__ = ("_depth",)

    def __init__(self) -> None:
        self._depth = 0

    def _check(self) -> None:
        """Raise if the transaction may no longer be used."""

    def _in_transaction(self) -> bool:
        raise NotImplementedError

    async def _statement(self, sql: str) -> None:
        raise NotImplementedError

    async def fetch(self, sql: str, params: Params = ()) -> list[sqlite3.Row]:
        raise NotImplementedError

    async def fetchrow(self, sql: str, params: Params = ()) -> sqlite3.Row | None:
        rows = await self.fetch(sql, params)
        return rows[0] if rows else None

    async def fetchval(self, sql: str, params: Params = (), column: int = 0) -> Any:
        row = await self.fetchrow(sql, params)
        return None if row is None else row[column]

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Self]:
        """Nested transaction: a SAVEPOINT, rolled back alone if the block raises."""
        self._check()
        self._depth += 1
        name = f"sp_{self._depth}"
        try:
            await self._statement(f"SAVEPOINT {name}")
            try:
                yield self
            except BaseException:
                # Some errors (e.g. SQLITE_FULL) make SQLite roll back the whole
                # transaction itself; then the savepoint is gone.  Never mask the
                # original exception with a failing ROLLBACK TO.
                if self._in_transaction():
                    try:
                        await self._statement(f"ROLLBACK TO {name}")
                        await self._statement(f"RELEASE {name}")
                    except StorageError as e:
                        log.error("ROLLBACK TO %s failed: %s", name, e)
                raise
            else:
                await self._statement(f"RELEASE {name}")
        finally:
            self._depth -= 1


class Transaction(_Statements):
    """An open transaction (or savepoint) on a :class:`Database`.

    Only valid inside its ``async with`` block; using it afterwards raises
    :class:`~storage.errors.StorageError`.
    """

    __slots__ = ("_active", "_db", "_owner")

    def __init__(self, db: Database, owner: asyncio.Task[Any] | None) -> None:
        super().__init__()
        self._db = db
        self._owner = owner
        self._active = True

    @property
    def db(self) -> Database:
        """The database this transaction runs on."""
        return self._db

    @property
    def active(self) -> bool:
        """True while the ``async with`` block is running."""
        return self._active

    def now(self) -> int:
        return self._db.now()

    def _check(self) -> None:
        if not self._active:
            raise StorageError("transaction already finished", code="transaction_closed")

    def _in_transaction(self) -> bool:
        return self._active and self._db._conn.in_transaction

    async def _statement(self, sql: str) -> None:
        await self._db._raw_execute(sql)

    async def execute(self, sql: str, params: Params = ()) -> int:
        self._check()
        return await self._db._raw_execute(sql, params)

    async def executemany(self, sql: str, seq_of_params: Iterable[Params]) -> int:
        self._check()
        return await self._db._raw_executemany(sql, seq_of_params)

    async def fetch(self, sql: str, params: Params = ()) -> list[sqlite3.Row]:
        self._check()
        return await self._db._raw_fetch(sql, params)


#: What aiosqlite raises (as ValueError) for a closed connection.
_AIOSQLITE_CLOSED = frozenset({"Connection closed", "no active connection"})


class _DirectTransaction(_Statements):
    """The executor of :meth:`Database.run_transaction`: every statement executes at once
    on the sqlite3 connection (on the event loop's thread, or inside the database thread
    when another process holds the database), so its coroutines finish without ever
    suspending."""

    __slots__ = ("_db", "_raw")

    def __init__(self, db: Database, raw: sqlite3.Connection) -> None:
        super().__init__()
        self._db = db
        self._raw = raw

    def now(self) -> int:
        return self._db.now()

    def _run(self, sql: str, params: Params = ()) -> sqlite3.Cursor:
        try:
            return self._raw.execute(sql, params)
        except sqlite3.Error as e:
            raise translate_sqlite_error(e, _short(sql)) from e

    def _in_transaction(self) -> bool:
        return self._raw.in_transaction

    async def _statement(self, sql: str) -> None:
        self._run(sql)

    async def execute(self, sql: str, params: Params = ()) -> int:
        return int(self._run(sql, params).rowcount)

    async def executemany(self, sql: str, seq_of_params: Iterable[Params]) -> int:
        try:
            return int(self._raw.executemany(sql, seq_of_params).rowcount)
        except sqlite3.Error as e:
            raise translate_sqlite_error(e, _short(sql)) from e

    async def fetch(self, sql: str, params: Params = ()) -> list[sqlite3.Row]:
        try:
            return list(self._run(sql, params).fetchall())
        except sqlite3.Error as e:
            raise translate_sqlite_error(e, _short(sql)) from e


def _run_body(
    db: Database, raw: sqlite3.Connection, body: Callable[[Any], Coroutine[Any, Any, T]]
) -> T:
    """On the calling thread: BEGIN IMMEDIATE, run ``body`` to completion, COMMIT (or
    ROLLBACK and re-raise)."""
    if raw.in_transaction:  # leftover of a failed rollback; never keep it
        raw.rollback()
    tx = _DirectTransaction(db, raw)
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


class Database:
    """One aiosqlite connection plus a lock; see the module docstring.

    Create with :meth:`open`; close with :meth:`close` (or ``async with``).
    """

    def __init__(
        self,
        conn: aiosqlite.Connection,
        target: DatabaseTarget,
        *,
        busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
        lock_retries: int = DEFAULT_LOCK_RETRIES,
        retry_delay: float = DEFAULT_RETRY_DELAY,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._conn = conn
        self.target = target
        self.busy_timeout_ms = busy_timeout_ms
        self.lock_retries = lock_retries
        self.retry_delay = retry_delay
        self.clock = clock
        self._lock = PriorityLock()
        self._closed = False

    # ---------------------------------------------------------------- lifecycle

    @classmethod
    async def open(
        cls,
        url_or_path: str | os.PathLike[str],
        *,
        busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
        lock_retries: int = DEFAULT_LOCK_RETRIES,
        retry_delay: float = DEFAULT_RETRY_DELAY,
        migrate: bool = True,
        check_writable: bool | None = None,
        clock: Callable[[], float] = time.time,
    ) -> Database:
        """Open (creating if needed) a database, configure it and bring the schema up to
        date.

        :param url_or_path: ``sqlite:///relative.db``, ``sqlite:////abs/path.db``, a plain
            path, or ``:memory:`` / ``sqlite://`` for an in-memory database.
        :param busy_timeout_ms: how long SQLite waits for another connection's lock.
        :param lock_retries: extra attempts of BEGIN/COMMIT/autocommit statements that
            still failed with "database is locked" after the busy timeout.
        :param retry_delay: first backoff delay in seconds (doubled on each retry).
        :param migrate: apply pending migrations (``False`` only checks the version is not
            too new; used by tests and tools).
        :param check_writable: fail fast with ``StorageUnavailable(code="readonly")`` if the
            database cannot be written.  Default: yes, unless the URL asks for a read-only
            connection (``?mode=ro``).
        :raises SchemaTooNew: the file was written by a newer version of the code.
        :raises StorageUnavailable: the file cannot be opened / written (``.code``).
        """
        from . import migrations  # local import: migrations imports this module

        target = parse_database_url(url_or_path)
        if target.path is not None and not target.read_only:
            try:
                target.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise StorageUnavailable(
                    f"cannot create the directory of {target.path}: {e}", code="cannot_open"
                ) from e
        try:
            conn = await aiosqlite.connect(
                target.database,
                uri=True,
                isolation_level=None,  # autocommit; we issue BEGIN/COMMIT ourselves
                timeout=busy_timeout_ms / 1000,
                # run_transaction uses it from the event loop's thread too, while holding
                # the lock (so aiosqlite's thread is idle); see _run_inline
                check_same_thread=False,
            )
        except sqlite3.Error as e:
            raise translate_sqlite_error(e, f"opening {target.path or target.database}") from e
        conn.row_factory = sqlite3.Row
        db = cls(
            conn,
            target,
            busy_timeout_ms=busy_timeout_ms,
            lock_retries=lock_retries,
            retry_delay=retry_delay,
            clock=clock,
        )
        try:
            await db._configure()
            if migrate:
                await migrations.upgrade(db)
            else:
                await migrations.check_version(db)
            if check_writable is None:
                check_writable = not target.read_only
            if check_writable and not target.is_memory:
                await db._probe_writable()
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

    async def close(self) -> None:
        """Wait for the running transaction, then close the connection.  Idempotent."""
        if self._closed:
            return
        if self._joinable() is not None:
            raise StorageError("cannot close the database inside a transaction", code="misuse")
        async with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                with suppress(sqlite3.Error, ValueError):
                    await self._conn.execute("PRAGMA optimize")
                await self._conn.close()
            except (sqlite3.Error, ValueError) as e:  # pragma: no cover - best effort
                log.warning("error while closing the database: %s", e)

    async def __aenter__(self) -> Database:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def closed(self) -> bool:
        return self._closed

    def now(self) -> int:
        """Current time as integer unix seconds, from the injectable ``clock``."""
        return int(self.clock())

    # ---------------------------------------------------------------- transactions

    def _joinable(self) -> Transaction | None:
        """The running transaction of *this task* on *this database*, if any."""
        tx = _CURRENT_TX.get()
        if tx is None or tx._db is not self or not tx._active:
            return None
        try:
            task = asyncio.current_task()
        except RuntimeError:  # pragma: no cover - no running loop
            return None
        return tx if tx._owner is task else None

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Transaction]:
        """``async with db.transaction() as tx:`` – BEGIN IMMEDIATE … COMMIT, or
        ROLLBACK if the block raises (the exception propagates).

        Nested use in the same task becomes a SAVEPOINT of the running transaction.
        BEGIN and COMMIT are retried with backoff while the database is locked by
        another process; after the retries :class:`StorageUnavailable` (``"locked"``).
        """
        current = self._joinable()
        if current is not None:
            async with current.transaction() as tx:
                yield tx
            return
        async with self._lock:
            self._check_open()
            await self._begin()
            tx = Transaction(self, asyncio.current_task())
            token = _CURRENT_TX.set(tx)
            try:
                try:
                    yield tx
                except BaseException:
                    tx._active = False
                    await self._rollback_quietly()
                    raise
                tx._active = False
                try:
                    await self._commit()
                except BaseException:
                    await self._rollback_quietly()
                    raise
            finally:
                tx._active = False
                try:
                    _CURRENT_TX.reset(token)
                except ValueError:  # pragma: no cover - finalised in another context
                    _CURRENT_TX.set(None)

    async def run_transaction(self, body: Callable[[Executor], Coroutine[Any, Any, T]]) -> T:
        """Run ``body(tx)`` as one transaction at once, without a trip per statement.

        Same effect as ``async with db.transaction() as tx: return await body(tx)``, but
        the statements run straight on the sqlite3 connection, on the event loop's thread
        (:meth:`_run_inline`), instead of one event-loop round trip each, which matters
        when the loop is busy: ``body`` may only await ``tx`` (the repository functions),
        nothing else.  While another process holds the database it runs on the database
        thread instead, retried like BEGIN (nothing of a failed attempt is kept)."""
        if self._joinable() is not None:
            raise StorageError("run_transaction inside a transaction", code="misuse")

        async def attempt() -> T:
            self._check_open()
            try:
                # aiosqlite runs the function in its thread with the sqlite3 connection
                result: T = await self._conn._execute(  # type: ignore[no-untyped-call]
                    _run_body, self, self._conn._conn, body
                )
                return result
            except ValueError as e:
                if str(e) not in _AIOSQLITE_CLOSED:  # the body's own error
                    raise
                raise self._translate(e, "transaction") from e

        async with self._lock:
            self._check_open()
            try:
                return self._run_inline(body)
            except StorageUnavailable as e:
                if e.code != "locked":
                    raise
            # another process holds the database: wait for it on the database thread
            return await self._with_retries(attempt, "transaction")

    def _run_inline(self, body: Callable[[Executor], Coroutine[Any, Any, T]]) -> T:
        """Run ``body`` as one transaction right here, on the event loop's thread.

        A move is a handful of statements (well under a millisecond): handing it to
        aiosqlite's thread cost two wake-ups of a busy event loop and, while the loop ran
        Python, a wait for the GIL after every statement (several milliseconds of a
        click's latency under load, see bench/README.md).  The caller holds the lock, so
        the connection is idle.  Nothing here may block the loop: the busy timeout is 0
        (another process holding the database raises ``"locked"`` at once and the caller
        waits on the database thread instead) and the commit does not checkpoint the WAL
        (the statements run on the database thread do; a checkpoint writes and syncs the
        database file)."""
        raw: sqlite3.Connection = self._conn._conn
        try:
            raw.execute("PRAGMA busy_timeout = 0")
            raw.execute("PRAGMA wal_autocheckpoint = 0")
        except sqlite3.Error as e:
            raise translate_sqlite_error(e, "PRAGMA") from e
        try:
            return _run_body(self, raw, body)
        finally:
            try:
                raw.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_ms)}")
                raw.execute(f"PRAGMA wal_autocheckpoint = {WAL_AUTOCHECKPOINT_PAGES}")
            except sqlite3.Error as e:  # pragma: no cover - setting a PRAGMA reads nothing
                log.error("could not restore the connection's PRAGMAs: %s", e)

    async def _begin(self) -> None:
        if self._conn.in_transaction:  # leftover of a failed rollback; never keep it
            log.warning("connection was left inside a transaction; rolling it back")
            await self._rollback_quietly()
        await self._with_retries(lambda: self._raw_execute("BEGIN IMMEDIATE"), "BEGIN")

    async def _commit(self) -> None:
        await self._with_retries(lambda: self._raw_execute("COMMIT"), "COMMIT")

    async def _rollback_quietly(self) -> None:
        try:
            if self._conn.in_transaction:
                await self._conn.execute("ROLLBACK")
        except (sqlite3.Error, ValueError) as e:
            log.error("ROLLBACK failed: %s", e)

    async def _with_retries(self, op: Callable[[], Awaitable[T]], what: str) -> T:
        """Run ``op``; if it fails with "database is locked", retry a bounded number of
        times with exponential backoff (plus jitter)."""
        attempt = 0
        while True:
            try:
                return await op()
            except StorageUnavailable as e:
                if e.code != "locked" or attempt >= self.lock_retries:
                    raise
                delay = self.retry_delay * (2**attempt) * (1 + random.random() / 2)
                attempt += 1
                log.warning(
                    "%s: database locked, retry %d/%d in %.2fs",
                    what,
                    attempt,
                    self.lock_retries,
                    delay,
                )
                await asyncio.sleep(delay)

    # ---------------------------------------------------------------- statements

    def _check_open(self) -> None:
        if self._closed:
            raise StorageUnavailable("the database is closed", code="closed")

    def _translate(self, e: Exception, sql: str) -> StorageError:
        if isinstance(e, sqlite3.Error):
            return translate_sqlite_error(e, _short(sql))
        # aiosqlite raises ValueError("Connection closed"/"no active connection")
        return StorageUnavailable(f"database connection is closed ({e})", code="closed")

    async def _raw_execute(self, sql: str, params: Params = ()) -> int:
        self._check_open()
        try:
            async with self._conn.execute(sql, params) as cur:
                return int(cur.rowcount)
        except (sqlite3.Error, ValueError) as e:
            raise self._translate(e, sql) from e

    async def _raw_executemany(self, sql: str, seq_of_params: Iterable[Params]) -> int:
        self._check_open()
        try:
            async with self._conn.executemany(sql, seq_of_params) as cur:
                return int(cur.rowcount)
        except (sqlite3.Error, ValueError) as e:
            raise self._translate(e, sql) from e

    async def _raw_fetch(self, sql: str, params: Params = ()) -> list[sqlite3.Row]:
        self._check_open()
        try:
            return list(await self._conn.execute_fetchall(sql, params))
        except (sqlite3.Error, ValueError) as e:
            raise self._translate(e, sql) from e

    async def _raw_fetchval(self, sql: str, params: Params = ()) -> Any:
        rows = await self._raw_fetch(sql, params)
        return rows[0][0] if rows else None

    async def _autocommit(self, op: Callable[[], Awaitable[T]], sql: str) -> T:
        """Run one statement outside any transaction (joining the task's own
        transaction is handled by the callers)."""
        async with self._lock:
            self._check_open()
            return await self._with_retries(op, _short(sql))

    async def execute(self, sql: str, params: Params = ()) -> int:
        """Run one statement (autocommit, or inside this task's transaction); return the
        number of changed rows."""
        tx = self._joinable()
        if tx is not None:
            return await tx.execute(sql, params)
        return await self._autocommit(lambda: self._raw_execute(sql, params), sql)

    async def executemany(self, sql: str, seq_of_params: Iterable[Params]) -> int:
        """Run a statement for each parameter set, atomically."""
        params = list(seq_of_params)
        async with self.transaction() as tx:
            return await tx.executemany(sql, params)

    async def fetch(self, sql: str, params: Params = ()) -> list[sqlite3.Row]:
        """Run a query and return all rows (:class:`sqlite3.Row`, indexable by name)."""
        tx = self._joinable()
        if tx is not None:
            return await tx.fetch(sql, params)
        return await self._autocommit(lambda: self._raw_fetch(sql, params), sql)

    async def fetchrow(self, sql: str, params: Params = ()) -> sqlite3.Row | None:
        """Run a query and return its first row, or None."""
        rows = await self.fetch(sql, params)
        return rows[0] if rows else None

    async def fetchval(self, sql: str, params: Params = (), column: int = 0) -> Any:
        """Run a query and return one column of its first row, or None."""
        row = await self.fetchrow(sql, params)
        return None if row is None else row[column]

    async def pragma(self, name: str) -> Any:
        """Read a PRAGMA value (e.g. ``await db.pragma("journal_mode")``)."""
        if not name.replace("_", "").isalnum():
            raise ValueError(f"bad pragma name {name!r}")
        return await self.fetchval(f"PRAGMA {name}")


def _short(sql: str) -> str:
    one_line = " ".join(sql.split())
    return one_line if len(one_line) <= 60 else one_line[:57] + "..."
