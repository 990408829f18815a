"""The database interface, in the style of mautrix's ``async_db``: one small class
(:class:`Database`) with one backend per engine, chosen by the URL.

* ``sqlite:///briscola.db`` (the embedded default): :class:`storage.sqlite.SQLiteDatabase`,
  one aiosqlite connection;
* ``postgresql://user@host/db``: :class:`storage.postgres.PostgresDatabase`, one asyncpg
  connection.

Usage::

    db = await open_database("sqlite:///briscola.db")   # creates/upgrades the schema
    row = await db.fetchrow("SELECT ...", (x,))          # autocommit statement
    async with db.transaction() as tx:                   # BEGIN ... COMMIT
        await tx.execute("UPDATE ...", (...))
        await repo.record_action(tx, ...)
    await db.close()

SQL is written once, with ``?`` placeholders (the PostgreSQL backend numbers them); the
few dialect differences are chosen on :attr:`Executor.dialect` in :mod:`storage.repo` and
:mod:`storage.migrations`.  Rows are indexable by position and by column name
(:class:`sqlite3.Row`, :class:`asyncpg.Record`).

Concurrency model
-----------------
There is a single connection.  A lock gives a transaction exclusive use of it, so
statements of two tasks never interleave inside one transaction; statements run outside
a transaction wait for the running transaction to finish.  Work done inside
``async with urgent():`` (a player's move, waited for by a person) is served before any
other waiting work, so background redraws never queue in front of a click, and
:meth:`Database.run_transaction` (a move) runs the whole transaction at once where the
engine allows it (SQLite: on the event loop's thread, see :mod:`storage.sqlite`), and
:meth:`Database.batched` (small frequent writes) may share one transaction with the
other such writes waiting at the same time.
Inside ``async with db.transaction()``, calls made *by the same task* on ``db`` itself
(instead of ``tx``) join the running transaction rather than dead-locking, and a nested
``transaction()`` becomes a SAVEPOINT.  Other processes are kept out by the engine's own
locking; BEGIN/COMMIT (and autocommit statements) that fail with a lock error are retried
a bounded number of times with exponential backoff before
:class:`~storage.errors.StorageUnavailable` (``code="locked"``) is raised.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import os
import random
import time
from collections import deque
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Coroutine,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from contextlib import AbstractAsyncContextManager, asynccontextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, Self, TypeVar
from urllib.parse import quote

from .errors import StorageError, StorageUnavailable

__all__ = [
    "Database", "DatabaseTarget", "Diagnosis", "Executor", "Params", "PriorityLock", "Row",
    "Transaction", "check_count", "is_postgres_url", "is_urgent", "parse_database_url",
    "short_sql", "urgent",
]

log = logging.getLogger("storage.db")

Params = Sequence[Any] | Mapping[str, Any]
T = TypeVar("T")

DEFAULT_BUSY_TIMEOUT_MS = 5000
DEFAULT_LOCK_RETRIES = 3
DEFAULT_RETRY_DELAY = 0.05
#: SQLite's default: a commit that finds this many pages in the WAL checkpoints it.
WAL_AUTOCHECKPOINT_PAGES = 1000


class Row(Protocol):
    """A result row: indexable by position and by column name (:class:`sqlite3.Row`,
    :class:`asyncpg.Record`)."""

    def __getitem__(self, key: Any, /) -> Any: ...

    def __iter__(self) -> Iterator[Any]: ...

    def keys(self) -> Any: ...


class Executor(Protocol):
    """Something SQL can be run on: a :class:`Database` or a :class:`Transaction`.

    All repository functions take an ``Executor`` as their first argument.
    """

    async def execute(self, sql: str, params: Params = ()) -> int:
        """Run one statement; return the number of rows changed."""
        ...

    async def executemany(self, sql: str, seq_of_params: Iterable[Params]) -> None:
        """Run one statement for each parameter set (a write whose result is not read: in
        a move on PostgreSQL it may be sent later in the transaction, see :meth:`write`)."""
        ...

    async def write(
        self, sql: str, params: Params = (), *, expect: int | None = None,
        otherwise: Diagnosis | None = None,
    ) -> None:
        """Run one write whose result is not read, only checked: if ``expect`` is given
        and the statement changed another number of rows, ``await otherwise(executor)``
        (which reads what went wrong and raises) or raise :class:`StorageError`.

        In a move on PostgreSQL (:meth:`Database.run_transaction`) the statement may be
        sent later, with the transaction's next read or at its end, so that a move's
        writes cost as few round trips as possible; its error, or the mismatch, is then
        raised there, and the whole transaction is rolled back as usual.  ``expect`` is
        for statements that pick their rows by key: on a mismatch they changed nothing.
        """
        ...

    async def fetch(self, sql: str, params: Params = ()) -> list[Row]:
        """Run a query and return all rows."""
        ...

    async def fetchrow(self, sql: str, params: Params = ()) -> Row | None:
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

    @property
    def dialect(self) -> str:
        """``"sqlite"`` or ``"postgres"``: for the few statements written per engine."""
        ...


#: What :meth:`Executor.write` calls on a mismatch: it reads why, and raises.
Diagnosis = Callable[["Executor"], Awaitable[None]]


async def check_count(
    ex: Executor, changed: int, expect: int | None, otherwise: Diagnosis | None, sql: str
) -> None:
    """The check of :meth:`Executor.write`: ``changed`` rows against ``expect``."""
    if expect is None or changed == expect:
        return
    if otherwise is not None:
        await otherwise(ex)
    raise StorageError(
        f"{short_sql(sql)}: changed {changed} rows, expected {expect}", code="row_count"
    )


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


def is_urgent() -> bool:
    """Whether the current task is inside an :func:`urgent` block."""
    return _URGENT.get()


class PriorityLock:
    """An :class:`asyncio.Lock` whose waiters from :func:`urgent` blocks are woken first
    (first come, first served within each class).

    A waiter may also be *work* (:meth:`run_when_free`): a function that runs to the end
    without awaiting anything (SQLite's moves and batched writes, :mod:`storage.sqlite`).
    :meth:`release` runs it right there, holding the lock, and goes on to the next waiter:
    handing the lock to a task costs a turn of the event loop (the task runs at the
    loop's next turn, tens of milliseconds on a busy loop), and a queue of moves served
    one a turn is ~50 a second whatever each costs."""

    def __init__(self) -> None:
        self._locked = False
        self._waiters: tuple[deque[asyncio.Future[None] | Callable[[], None]],
                             deque[asyncio.Future[None] | Callable[[], None]]] = (
            deque(), deque()
        )

    def locked(self) -> bool:
        return self._locked

    def try_acquire(self) -> bool:
        """Take the lock if it is free and nobody waits for it (without waiting)."""
        if not self._locked and not any(self._waiters):
            self._locked = True
            return True
        return False

    async def acquire(self) -> None:
        if self.try_acquire():
            return
        queue = self._waiters[0 if is_urgent() else 1]
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

    def run_when_free(self, work: Callable[[], None], *, urgent: bool) -> None:
        """Queue ``work`` among the waiters (urgent or not): when its turn comes, it is
        called with the lock held, by :meth:`release` (never here: the caller checked
        that the lock is not free with :meth:`try_acquire`). ``work`` must not await,
        raise or release the lock; it reports to its owner itself (a future)."""
        self._waiters[0 if urgent else 1].append(work)

    def release(self) -> None:
        while True:
            queue = next((q for q in self._waiters if q), None)
            if queue is None:
                self._locked = False
                return
            waiter = queue.popleft()
            if isinstance(waiter, asyncio.Future):
                if not waiter.done():
                    waiter.set_result(None)  # handed over: _locked stays True
                    return
                continue
            try:
                waiter()  # the lock held: it runs now, then the next waiter
            except Exception:  # pragma: no cover - work reports its own errors
                log.exception("work run by the database lock failed")

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
_POSTGRES_SCHEMES = ("postgresql://", "postgres://", "postgresql+asyncpg://")


def is_postgres_url(url_or_path: str | os.PathLike[str]) -> bool:
    """True for a PostgreSQL URL (``postgresql://…``, ``postgres://…``)."""
    return os.fspath(url_or_path).strip().lower().startswith(_POSTGRES_SCHEMES)


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

    async def fetch(self, sql: str, params: Params = ()) -> list[Row]:
        raise NotImplementedError

    async def fetchrow(self, sql: str, params: Params = ()) -> Row | None:
        rows = await self.fetch(sql, params)
        return rows[0] if rows else None

    async def fetchval(self, sql: str, params: Params = (), column: int = 0) -> Any:
        row = await self.fetchrow(sql, params)
        return None if row is None else row[column]

    async def execute(self, sql: str, params: Params = ()) -> int:
        raise NotImplementedError

    async def write(
        self, sql: str, params: Params = (), *, expect: int | None = None,
        otherwise: Diagnosis | None = None,
    ) -> None:
        """:meth:`Executor.write`, at once."""
        changed = await self.execute(sql, params)
        await check_count(self, changed, expect, otherwise, sql)  # type: ignore[arg-type]

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

    @property
    def dialect(self) -> str:
        return self._db.dialect

    def _check(self) -> None:
        if not self._active:
            raise StorageError("transaction already finished", code="transaction_closed")

    def _in_transaction(self) -> bool:
        return self._active and self._db._in_transaction()

    async def _statement(self, sql: str) -> None:
        await self._db._raw_execute(sql)

    async def execute(self, sql: str, params: Params = ()) -> int:
        self._check()
        return await self._db._raw_execute(sql, params)

    async def executemany(self, sql: str, seq_of_params: Iterable[Params]) -> None:
        self._check()
        await self._db._raw_executemany(sql, seq_of_params)

    async def fetch(self, sql: str, params: Params = ()) -> list[Row]:
        self._check()
        return await self._db._raw_fetch(sql, params)


# --------------------------------------------------------------------------- database


class Database:
    """The interface: one connection plus a lock; see the module docstring.

    Create with :func:`storage.open_database` (which picks the backend from the URL);
    close with :meth:`close` (or ``async with``).  A backend implements the ``_raw_*`` statement
    methods, ``_in_transaction`` and ``_close_connection``, and may override
    :meth:`run_transaction`, :meth:`_ready` and :meth:`_after_migrations`.
    """

    #: ``"sqlite"`` or ``"postgres"``: the SQL dialect (see :attr:`Executor.dialect`).
    dialect: str = ""
    #: The statement that opens a transaction.
    _begin_sql = "BEGIN"

    def __init__(
        self,
        *,
        busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
        lock_retries: int = DEFAULT_LOCK_RETRIES,
        retry_delay: float = DEFAULT_RETRY_DELAY,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.busy_timeout_ms = busy_timeout_ms
        self.lock_retries = lock_retries
        self.retry_delay = retry_delay
        self.clock = clock
        self._lock = PriorityLock()
        self._closed = False
        #: Fencing (storage/lease.py): when set, called before each transaction, each
        #: COMMIT and each autocommit statement; it raises (``StorageUnavailable``, code
        #: ``"fenced"``) once this instance is no longer the active one, so that it writes
        #: nothing more.
        self.fence: Callable[[], None] | None = None

    # ---------------------------------------------------------------- lifecycle

    async def _after_migrations(self, check_writable: bool | None) -> None:
        """Last step of :func:`storage.connect.open_database` (SQLite: probe that the file
        can be written)."""

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
            await self._close_connection()

    async def _close_connection(self) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> Self:
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
        """``async with db.transaction() as tx:`` – BEGIN … COMMIT, or ROLLBACK if the
        block raises (the exception propagates).

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
            self._check_active()
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
        """Run ``body(tx)`` as one transaction (a move): ``body`` may only await ``tx``
        (the repository functions), nothing else, and must not touch the caller's asyncio
        objects (locks, tasks).  Same effect as ``async with db.transaction() as tx:
        return await body(tx)``; a backend may run it faster (SQLite: at once on the event
        loop's thread; PostgreSQL: on the connection's own thread and event loop)."""
        if self._joinable() is not None:
            raise StorageError("run_transaction inside a transaction", code="misuse")
        async with self.transaction() as tx:
            return await body(tx)

    async def batched(self, body: Callable[[Executor], Coroutine[Any, Any, T]]) -> T:
        """Run ``body(tx)``, a small write (an update stored, a message's digest, a UI
        patch), in a transaction that a backend may share with the other batched writes
        waiting for the database at that moment (a group commit: one turn of the lock and
        one commit for all of them; SQLite, :mod:`storage.sqlite`). ``body`` as for
        :meth:`run_transaction`; its writes are a savepoint of their own (its error rolls
        back its writes only, and is raised here); if the commit fails, every write of
        the batch fails. Here: one :meth:`run_transaction`."""
        return await self.run_transaction(body)

    def _in_transaction(self) -> bool:
        """True while the connection is inside a transaction."""
        raise NotImplementedError

    async def _ready(self) -> None:
        """Called with the lock held, outside any transaction, before BEGIN or an
        autocommit statement (PostgreSQL: connect again after a lost connection)."""

    async def _begin(self) -> None:
        await self._ready()
        if self._in_transaction():  # leftover of a failed rollback; never keep it
            log.warning("connection was left inside a transaction; rolling it back")
            await self._rollback_quietly()
        await self._with_retries(lambda: self._raw_execute(self._begin_sql), "BEGIN")

    async def _commit(self) -> None:
        self._check_active()
        await self._with_retries(lambda: self._raw_execute("COMMIT"), "COMMIT")

    async def _rollback_quietly(self) -> None:
        try:
            if not self._closed and self._in_transaction():
                await self._raw_execute("ROLLBACK")
        except StorageError as e:
            log.error("ROLLBACK failed: %s", e)

    async def _with_retries(self, op: Callable[[], Awaitable[T]], what: str) -> T:
        """Run ``op``; if it fails with a lock error ("database is locked", a deadlock),
        retry a bounded number of times with exponential backoff (plus jitter)."""
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

    def _check_active(self) -> None:
        """Raise if this instance was fenced off (see :attr:`fence`)."""
        if self.fence is not None:
            self.fence()

    async def _raw_execute(self, sql: str, params: Params = ()) -> int:
        raise NotImplementedError

    async def _raw_executemany(self, sql: str, seq_of_params: Iterable[Params]) -> None:
        raise NotImplementedError

    async def _raw_fetch(self, sql: str, params: Params = ()) -> list[Row]:
        raise NotImplementedError

    async def _raw_fetchval(self, sql: str, params: Params = ()) -> Any:
        rows = await self._raw_fetch(sql, params)
        return rows[0][0] if rows else None

    async def _autocommit(self, op: Callable[[], Awaitable[T]], sql: str) -> T:
        """Run one statement outside any transaction (joining the task's own
        transaction is handled by the callers)."""
        async with self._lock:
            self._check_open()
            self._check_active()
            await self._ready()
            return await self._with_retries(op, short_sql(sql))

    async def execute(self, sql: str, params: Params = ()) -> int:
        """Run one statement (autocommit, or inside this task's transaction); return the
        number of changed rows."""
        tx = self._joinable()
        if tx is not None:
            return await tx.execute(sql, params)
        return await self._autocommit(lambda: self._raw_execute(sql, params), sql)

    async def executemany(self, sql: str, seq_of_params: Iterable[Params]) -> None:
        """Run a statement for each parameter set, atomically."""
        params = list(seq_of_params)
        async with self.transaction() as tx:
            await tx.executemany(sql, params)

    async def write(
        self, sql: str, params: Params = (), *, expect: int | None = None,
        otherwise: Diagnosis | None = None,
    ) -> None:
        """:meth:`Executor.write`: one statement (autocommit, or inside this task's
        transaction), checked at once."""
        changed = await self.execute(sql, params)
        await check_count(self, changed, expect, otherwise, sql)

    async def fetch(self, sql: str, params: Params = ()) -> list[Row]:
        """Run a query and return all rows (indexable by position and by name)."""
        tx = self._joinable()
        if tx is not None:
            return await tx.fetch(sql, params)
        return await self._autocommit(lambda: self._raw_fetch(sql, params), sql)

    async def fetchrow(self, sql: str, params: Params = ()) -> Row | None:
        """Run a query and return its first row, or None."""
        rows = await self.fetch(sql, params)
        return rows[0] if rows else None

    async def fetchval(self, sql: str, params: Params = (), column: int = 0) -> Any:
        """Run a query and return one column of its first row, or None."""
        row = await self.fetchrow(sql, params)
        return None if row is None else row[column]


def short_sql(sql: str) -> str:
    """One line of at most 60 characters of ``sql``, for messages."""
    one_line = " ".join(sql.split())
    return one_line if len(one_line) <= 60 else one_line[:57] + "..."
