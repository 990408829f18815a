"""The PostgreSQL backend of :class:`storage.db.Database`: one asyncpg connection.

The same repositories run on it unchanged: SQL is written with ``?`` placeholders, which
:func:`numbered` turns into asyncpg's ``$1, $2…`` (once per statement text, cached), and
:class:`asyncpg.Record` is indexable by position and by name like :class:`sqlite3.Row`.
One connection behind the interface's lock, as with SQLite: a move is one transaction
and two tasks' statements never interleave.  Transactions run at READ COMMITTED; the
optimistic version check (``UPDATE … WHERE version = ?``) keeps concurrent writers of one
game from both winning, since PostgreSQL re-checks the WHERE clause of a row another
transaction has just updated.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import re
import threading
from collections.abc import Callable, Coroutine, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlsplit, urlunsplit

import asyncpg

from .db import (
    DEFAULT_BUSY_TIMEOUT_MS,
    Database,
    Diagnosis,
    Executor,
    Params,
    Row,
    _Statements,
    check_count,
    short_sql,
)
from .errors import StorageError, StorageUnavailable, translate_postgres_error

__all__ = ["PostgresDatabase", "create_database", "drop_database", "numbered", "with_database"]

log = logging.getLogger("storage.db")

T = TypeVar("T")

#: A ``?`` placeholder, or a quoted string / identifier (left alone).
_TOKENS = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|\?")
_ROWCOUNT = re.compile(r"(\d+)$")
#: A statement that only reads (what a move may send before its BEGIN).
_READ = re.compile(r"\s*SELECT\b", re.I)


@functools.lru_cache(maxsize=512)
def numbered(sql: str) -> str:
    """``?`` placeholders (outside quotes) → ``$1, $2, …``."""
    count = 0

    def replace(match: re.Match[str]) -> str:
        nonlocal count
        if match.group() != "?":
            return match.group()
        count += 1
        return f"${count}"

    return _TOKENS.sub(replace, sql)


def _args(params: Params) -> tuple[Any, ...]:
    if isinstance(params, dict):
        raise TypeError("the PostgreSQL backend takes positional (?) parameters only")
    return tuple(params)


#: What asyncpg raises: server errors, a closed or broken connection, the network.
_DRIVER_ERRORS = (
    asyncpg.PostgresError, asyncpg.InterfaceError, asyncpg.InternalClientError, OSError
)


class _LoopThread:
    """An event loop on its own thread, where the connection lives: a move's statements
    (one round trip to the server each) run there, so the bot's busy event loop is woken
    twice per move instead of once per statement (as SQLite's move runs at once)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="postgres",
                                        daemon=True)
        self._thread.start()

    async def call(self, work: Coroutine[Any, Any, T]) -> T:
        """Run ``work`` on the thread's loop and wait for it.  If the caller is
        cancelled, ``work`` still finishes (the connection is never left mid-statement)
        before the cancellation goes on."""
        done = asyncio.wrap_future(asyncio.run_coroutine_threadsafe(work, self.loop))
        try:
            return await asyncio.shield(done)
        except asyncio.CancelledError:
            with contextlib.suppress(BaseException):
                await done
            raise

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        if not self._thread.is_alive():
            self.loop.close()


@dataclass(slots=True)
class _Held:
    """A write of a move not sent yet (see :class:`_Direct`)."""

    sql: str
    args: list[tuple[Any, ...]]  # one tuple (write) or one per execution (executemany)
    many: bool
    expect: int | None = None
    otherwise: Diagnosis | None = None


class _Direct(_Statements):
    """The executor of :meth:`PostgresDatabase.run_transaction`, used on the connection's
    own loop, in as few round trips to the server as the move allows:

    * ``BEGIN`` is sent only before the move's first write: reads before it (the game)
      run on their own.  At READ COMMITTED every statement reads its own snapshot and a
      ``SELECT`` locks no row, so such a read sees what it would see as the transaction's
      first statement; the writes' own checks (the version in ``UPDATE … WHERE version
      = ?``) are what keeps a move from applying over another;
    * writes whose result is not read (:meth:`write`, :meth:`executemany`) are held and
      sent with the next read or statement, or at the end;
    * at the end, a move whose writes are one held statement sends it alone, without
      ``BEGIN``/``COMMIT``: one statement is one transaction.  Otherwise ``BEGIN``, the
      writes, ``COMMIT``.

    A move that reads its game and writes action + snapshot (:func:`storage.repo.
    record_action`, one statement on PostgreSQL) is two round trips."""

    __slots__ = ("_begun", "_db", "_held")

    def __init__(self, db: PostgresDatabase) -> None:
        super().__init__()
        self._db = db
        self._begun = False
        self._held: list[_Held] = []

    def now(self) -> int:
        return self._db.now()

    @property
    def dialect(self) -> str:
        return "postgres"

    def _in_transaction(self) -> bool:
        return self._db._in_transaction()

    async def _begin(self) -> None:
        if not self._begun:
            await self._db._execute_here("BEGIN", ())
            self._begun = True

    async def _flush(self) -> None:
        """Send the held writes, inside the transaction."""
        if self._held:
            await self._begin()
            held, self._held = self._held, []
            for write in held:
                await self._send(write)

    async def _send(self, write: _Held) -> None:
        if write.many:
            await self._db._executemany_here(write.sql, write.args)
            return
        changed = _rowcount(await self._db._execute_here(write.sql, write.args[0]))
        await check_count(self, changed, write.expect, write.otherwise, write.sql)  # type: ignore[arg-type]

    async def finish(self) -> None:
        """The end of the move: its writes sent and committed."""
        if not self._begun and len(self._held) == 1:
            await self._send(self._held.pop())  # one statement: atomic on its own
            return
        if self._begun or self._held:
            await self._flush()
            await self._db._execute_here("COMMIT", ())

    async def _statement(self, sql: str) -> None:  # SAVEPOINT, RELEASE, ROLLBACK TO
        await self._flush()
        await self._begin()
        await self._db._execute_here(sql, ())

    async def execute(self, sql: str, params: Params = ()) -> int:
        await self._flush()
        await self._begin()
        return _rowcount(await self._db._execute_here(sql, _args(params)))

    async def executemany(self, sql: str, seq_of_params: Iterable[Params]) -> None:
        args = [_args(params) for params in seq_of_params]
        if args:
            self._held.append(_Held(sql, args, many=True))

    async def write(
        self, sql: str, params: Params = (), *, expect: int | None = None,
        otherwise: Diagnosis | None = None,
    ) -> None:
        self._held.append(_Held(sql, [_args(params)], False, expect, otherwise))

    async def fetch(self, sql: str, params: Params = ()) -> list[Row]:
        await self._flush()  # a read sees the move's writes
        if not _READ.match(sql):  # INSERT … RETURNING and the like are writes
            await self._begin()
        return await self._db._fetch_here(sql, _args(params))


class PostgresDatabase(Database):
    """One asyncpg connection, living on its own thread's event loop (:class:`_LoopThread`)."""

    dialect = "postgres"

    def __init__(
        self,
        conn: asyncpg.Connection,
        url: str,
        thread: _LoopThread,
        **options: Any,
    ) -> None:
        super().__init__(**options)  # busy_timeout_ms, lock_retries, retry_delay, clock
        self._conn = conn
        self._thread = thread
        self.url = url

    @classmethod
    async def connect(cls, url: str, **options: Any) -> PostgresDatabase:
        """Connect and configure (no migrations: see :func:`storage.open_database`)."""
        busy_timeout_ms = int(options.get("busy_timeout_ms", DEFAULT_BUSY_TIMEOUT_MS))
        thread = _LoopThread()
        try:
            conn = await thread.call(_connect(url, busy_timeout_ms))
        except BaseException:
            thread.stop()
            raise
        return cls(conn, url, thread, **options)

    async def _ready(self) -> None:
        """Connect again if the connection was lost (server restart, network): only
        between transactions, so a transaction never continues on another connection."""
        if not self._conn.is_closed():
            return
        log.warning("the connection to PostgreSQL was lost: connecting again")
        self._conn = await self._thread.call(_connect(self.url, self.busy_timeout_ms))

    async def _close_connection(self) -> None:
        try:
            await self._thread.call(self._conn.close(timeout=5))
        except Exception as e:  # pragma: no cover - best effort
            log.warning("error while closing the database: %s", e)
            self._thread.loop.call_soon_threadsafe(self._conn.terminate)
        finally:
            self._thread.stop()

    def _in_transaction(self) -> bool:
        return bool(self._conn.is_in_transaction())

    # ---------------------------------------------------------------- a move at once

    async def run_transaction(self, body: Callable[[Executor], Coroutine[Any, Any, T]]) -> T:
        """Run ``body(tx)`` as one transaction on the connection's own loop: one hop
        there and back for the whole move, however many statements it has."""
        if self._joinable() is not None:
            raise StorageError("run_transaction inside a transaction", code="misuse")
        async with self._lock:
            self._check_open()
            self._check_active()
            await self._ready()
            return await self._with_retries(
                lambda: self._thread.call(self._run_body(body)), "transaction"
            )

    async def _run_body(self, body: Callable[[Executor], Coroutine[Any, Any, T]]) -> T:
        """On the connection's loop: ``body`` and its writes as one transaction (see
        :class:`_Direct`), or ROLLBACK and re-raise."""
        if self._conn.is_in_transaction():  # leftover of a failed rollback; never keep it
            log.warning("connection was left inside a transaction; rolling it back")
            await self._execute_here("ROLLBACK", ())
        try:
            tx = _Direct(self)
            result = await body(tx)  # type: ignore[arg-type]  # an Executor on this loop
            self._check_active()  # fenced meanwhile: send nothing more, roll back
            await tx.finish()
        except BaseException:
            if not self._conn.is_closed() and self._conn.is_in_transaction():
                try:
                    await self._conn.execute("ROLLBACK")
                except _DRIVER_ERRORS as e:
                    log.error("ROLLBACK failed: %s", e)
            raise
        return result

    # ---------------------------------------------------------------- statements

    async def _execute_here(self, sql: str, args: tuple[Any, ...]) -> str:
        """On the connection's loop: one statement; its status (``"UPDATE 1"``)."""
        try:
            return str(await self._conn.execute(numbered(sql), *args))
        except _DRIVER_ERRORS as e:
            raise self._translate(e, sql) from e

    async def _executemany_here(self, sql: str, args: list[tuple[Any, ...]]) -> None:
        """On the connection's loop: one statement for each argument tuple, sent at once
        (asyncpg pipelines them: one round trip)."""
        try:
            await self._conn.executemany(numbered(sql), args)
        except _DRIVER_ERRORS as e:
            raise self._translate(e, sql) from e

    async def _fetch_here(self, sql: str, args: tuple[Any, ...]) -> list[Row]:
        """On the connection's loop: the rows of one query."""
        try:
            return list(await self._conn.fetch(numbered(sql), *args))
        except _DRIVER_ERRORS as e:
            raise self._translate(e, sql) from e

    def _translate(self, e: BaseException, sql: str) -> StorageError:
        error = translate_postgres_error(e, short_sql(sql))
        if isinstance(error, StorageUnavailable) and error.code == "disconnected":
            self._conn.terminate()  # unusable: _ready() connects again
        return error

    async def _raw_execute(self, sql: str, params: Params = ()) -> int:
        self._check_open()
        return _rowcount(await self._thread.call(self._execute_here(sql, _args(params))))

    async def _raw_executemany(self, sql: str, seq_of_params: Iterable[Params]) -> None:
        self._check_open()
        args = [_args(params) for params in seq_of_params]
        if args:
            await self._thread.call(self._executemany_here(sql, args))

    async def _raw_fetch(self, sql: str, params: Params = ()) -> list[Row]:
        self._check_open()
        return await self._thread.call(self._fetch_here(sql, _args(params)))


def _rowcount(status: str) -> int:
    found = _ROWCOUNT.search(status)
    return int(found.group(1)) if found else 0


def session_settings(dsn: str, busy_timeout_ms: int) -> dict[str, str]:
    """The connection's settings, but for those the URL sets itself (a query parameter of
    the same name, which asyncpg passes on to the server; e.g. ``?synchronous_commit=off``
    for the durability of the SQLite default, see README):

    * ``lock_timeout``: a lock held by another process is waited for this long, as
      SQLite's busy timeout, then reported as "locked" (and retried by the interface)."""
    given = parse_qs(urlsplit(dsn).query)
    settings = {"lock_timeout": str(busy_timeout_ms), "application_name": "briscola-bot"}
    return {name: value for name, value in settings.items() if name not in given}


async def _connect(url: str, busy_timeout_ms: int) -> asyncpg.Connection:
    dsn = re.sub(r"^postgresql\+asyncpg://", "postgresql://", url.strip(), flags=re.I)
    try:
        return await asyncpg.connect(
            dsn, timeout=10, server_settings=session_settings(dsn, busy_timeout_ms)
        )
    except _DRIVER_ERRORS as e:
        raise StorageUnavailable(
            f"cannot connect to PostgreSQL ({_redacted(url)}): {e}", code="cannot_open"
        ) from e


def _redacted(url: str) -> str:
    """The URL without its password."""
    return re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", url)


def with_database(url: str, name: str) -> str:
    """``url`` naming the database ``name`` instead (same server, user, options)."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


async def create_database(url: str, name: str) -> str:
    """Create an empty database ``name`` on the server of ``url`` (connecting to the
    database ``url`` names, which needs the CREATEDB privilege); return its URL.  For
    tools such as the load benchmark, which start each run on a new database."""
    if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", name):
        raise ValueError(f"bad database name {name!r}")
    db = await PostgresDatabase.connect(url)
    try:
        await db.execute(f"CREATE DATABASE {name}")
    finally:
        await db.close()
    return with_database(url, name)


async def drop_database(url: str, maintenance: str = "postgres") -> None:
    """Drop the database ``url`` names (connecting to ``maintenance`` on its server)."""
    name = urlsplit(url).path.lstrip("/")
    if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", name):
        raise ValueError(f"bad database name {name!r}")
    db = await PostgresDatabase.connect(with_database(url, maintenance))
    try:
        await db.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    finally:
        await db.close()
