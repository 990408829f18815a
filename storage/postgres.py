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

import functools
import logging
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import asyncpg

from .db import (
    DEFAULT_BUSY_TIMEOUT_MS,
    Database,
    Params,
    Row,
    short_sql,
)
from .errors import StorageError, StorageUnavailable, translate_postgres_error

__all__ = ["PostgresDatabase", "create_database", "drop_database", "numbered", "with_database"]

log = logging.getLogger("storage.db")

#: A ``?`` placeholder, or a quoted string / identifier (left alone).
_TOKENS = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|\?")
_ROWCOUNT = re.compile(r"(\d+)$")


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


class PostgresDatabase(Database):
    """One asyncpg connection."""

    dialect = "postgres"

    def __init__(
        self,
        conn: asyncpg.Connection,
        url: str,
        **options: Any,
    ) -> None:
        super().__init__(**options)  # busy_timeout_ms, lock_retries, retry_delay, clock
        self._conn = conn
        self.url = url

    @classmethod
    async def connect(cls, url: str, **options: Any) -> PostgresDatabase:
        """Connect and configure (no migrations: see :meth:`Database.open`)."""
        busy_timeout_ms = int(options.get("busy_timeout_ms", DEFAULT_BUSY_TIMEOUT_MS))
        return cls(await _connect(url, busy_timeout_ms), url, **options)

    async def _ready(self) -> None:
        """Connect again if the connection was lost (server restart, network): only
        between transactions, so a transaction never continues on another connection."""
        if not self._conn.is_closed():
            return
        log.warning("the connection to PostgreSQL was lost: connecting again")
        self._conn = await _connect(self.url, self.busy_timeout_ms)

    async def _close_connection(self) -> None:
        try:
            await self._conn.close(timeout=5)
        except Exception as e:  # pragma: no cover - best effort
            log.warning("error while closing the database: %s", e)
            self._conn.terminate()

    def _in_transaction(self) -> bool:
        return bool(self._conn.is_in_transaction())

    def _translate(self, e: BaseException, sql: str) -> StorageError:
        error = translate_postgres_error(e, short_sql(sql))
        if isinstance(error, StorageUnavailable) and error.code == "disconnected":
            self._conn.terminate()  # unusable: _ready() connects again
        return error

    async def _raw_execute(self, sql: str, params: Params = ()) -> int:
        self._check_open()
        try:
            status = await self._conn.execute(numbered(sql), *_args(params))
        except _DRIVER_ERRORS as e:
            raise self._translate(e, sql) from e
        found = _ROWCOUNT.search(status or "")
        return int(found.group(1)) if found else 0

    async def _raw_executemany(self, sql: str, seq_of_params: Iterable[Params]) -> int:
        return sum([await self._raw_execute(sql, params) for params in seq_of_params])

    async def _raw_fetch(self, sql: str, params: Params = ()) -> list[Row]:
        self._check_open()
        try:
            return list(await self._conn.fetch(numbered(sql), *_args(params)))
        except _DRIVER_ERRORS as e:
            raise self._translate(e, sql) from e


async def _connect(url: str, busy_timeout_ms: int) -> asyncpg.Connection:
    dsn = re.sub(r"^postgresql\+asyncpg://", "postgresql://", url.strip(), flags=re.I)
    try:
        return await asyncpg.connect(
            dsn,
            timeout=10,
            # a lock held by another process is waited for this long, as SQLite's busy
            # timeout, then reported as "locked" (and retried by the interface)
            server_settings={
                "lock_timeout": str(busy_timeout_ms),
                "application_name": "briscola-bot",
            },
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
