"""Which instance of the bot may act on a database (issue 20).

* **PostgreSQL**: :class:`PostgresLease`. Whoever holds a session-level advisory lock
  (``pg_try_advisory_lock``) on a connection of its own is the *active* instance; the
  others are *standby* and try again every :data:`POLL_SECONDS` (at once when the active
  one releases the lock on a graceful stop: it sends a ``NOTIFY``). The lock goes with its
  connection: a killed process, a host gone, ``pg_terminate_backend``, a server restart.
  The holder learns it at once from the driver when the connection closes, or, for a
  silent network cut, from a liveness query every :data:`CHECK_SECONDS` that must answer
  within :data:`CHECK_TIMEOUT`; then it calls ``on_lost`` (the bot stops acting at once).
  The server drops a silent peer only after its TCP keepalives (:data:`KEEPALIVES`,
  about 8 s), later than the holder notices (at most ~3 s), so the old holder has stopped
  before another instance can take the lock.
* **SQLite**: :class:`FileLock`, ``fcntl.flock`` on a file beside the database: a second
  instance on the same file refuses to start (:class:`InstanceLocked`) instead of racing.
* Updates are stored in the inbox (:mod:`storage.inbox`) before they are confirmed:
  an update Telegram delivers again to the instance that took over is handled once.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import asyncpg

from .db import parse_database_url
from .errors import StorageError, StorageUnavailable

__all__ = [
    "CHECK_SECONDS", "CHECK_TIMEOUT", "POLL_SECONDS", "FileLock", "InstanceLocked",
    "PostgresLease", "lock_path_for",
]

log = logging.getLogger("storage.lease")

#: Standby: seconds between two attempts to take the lock (one cheap query each: a
#: standby takes over within this after the active instance's connection closed).
POLL_SECONDS = 0.2
#: Active: seconds between two liveness queries on the lock's connection ...
CHECK_SECONDS = 1.0
#: ... and how long one may take before the lock counts as lost.
CHECK_TIMEOUT = 2.0
#: The lock's key is (LOCK_CLASS, the bot's id): several bots may share one database.
LOCK_CLASS = 0x42726973  # "Bris"
#: Channel on which a graceful release is announced to the standby instances.
CHANNEL = "briscola_lease"
#: Server-side TCP keepalives of the lock's connection: a peer cut off by the network is
#: dropped (and its lock released) after about idle + interval × count seconds.
KEEPALIVES = {
    "tcp_keepalives_idle": "5",
    "tcp_keepalives_interval": "1",
    "tcp_keepalives_count": "3",
    "application_name": "briscola-bot lease",
}


class InstanceLocked(StorageError):
    """Another instance of the bot already uses this SQLite database."""

    code = "instance_locked"


class PostgresLease:
    """The advisory lock that makes one instance active; see the module docstring.

    ``on_lost(reason)`` is called (on the event loop, once per loss) when a held lock is
    lost; :attr:`held` is False from that moment on."""

    def __init__(
        self,
        url: str,
        key: int,
        *,
        on_lost: Callable[[str], None] | None = None,
        poll_seconds: float = POLL_SECONDS,
        check_seconds: float = CHECK_SECONDS,
        check_timeout: float = CHECK_TIMEOUT,
    ) -> None:
        self.url = re.sub(r"^postgresql\+asyncpg://", "postgresql://", url.strip(), flags=re.I)
        self.key = key % 2**31
        self.on_lost = on_lost
        self.poll_seconds = poll_seconds
        self.check_seconds = check_seconds
        self.check_timeout = check_timeout
        self._conn: asyncpg.Connection | None = None
        self._held = False
        self._watch: asyncio.Task[None] | None = None
        self._released = asyncio.Event()
        self._unreachable = False
        #: why the last held lock was lost (None while held or never lost)
        self.lost_reason: str | None = None

    @property
    def held(self) -> bool:
        return self._held

    async def _connection(self) -> asyncpg.Connection:
        if self._conn is None or self._conn.is_closed():
            self._conn = await asyncpg.connect(
                self.url, timeout=5, server_settings=KEEPALIVES
            )
            await self._conn.add_listener(CHANNEL, self._on_notify)
        return self._conn

    def _on_notify(self, *_: Any) -> None:
        self._released.set()

    async def try_acquire(self) -> bool:
        """Take the lock if it is free; True if this instance holds it now."""
        if self._held:
            return True
        try:
            conn = await self._connection()
            got = bool(await conn.fetchval(
                "SELECT pg_try_advisory_lock($1, $2)", LOCK_CLASS, self.key,
                timeout=self.check_timeout,
            ))
        except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError, TimeoutError) as e:
            if not self._unreachable:  # once per outage, not every second
                log.warning("cannot reach PostgreSQL for the lock: %s", e)
            self._unreachable = True
            await self._drop_connection()
            return False
        self._unreachable = False
        if got:
            self._held = True
            self.lost_reason = None
            conn.add_termination_listener(self._on_terminated)
            self._watch = asyncio.create_task(self._watch_connection(conn), name="lease-watch")
        return got

    async def wait_release(self) -> bool:
        """Standby: wait :attr:`poll_seconds`, or less if the active instance announces
        that it released the lock (then True)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._released.wait(), self.poll_seconds)
        notified = self._released.is_set()
        self._released.clear()
        return notified

    async def _watch_connection(self, conn: asyncpg.Connection) -> None:
        while self._held:
            await asyncio.sleep(self.check_seconds)
            if not self._held:
                return
            try:
                await conn.fetchval("SELECT 1", timeout=self.check_timeout)
            except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError, TimeoutError) as e:
                self._lose(f"the lock's connection did not answer ({e.__class__.__name__}: {e})")
                return

    def _on_terminated(self, _conn: object) -> None:
        self._lose("the lock's connection was closed")

    def _lose(self, reason: str) -> None:
        if not self._held:
            return
        self._held = False
        self.lost_reason = reason
        log.error("lost the database lock: %s", reason)
        if self._conn is not None and not self._conn.is_closed():
            self._conn.terminate()
        if self.on_lost is not None:
            self.on_lost(reason)

    async def schema_version(self) -> int:
        """The database's schema version (:mod:`storage.migrations`), read on the lock's
        connection: an instance checks it each time it takes the lock (a newer instance
        may have migrated the database since this one started)."""
        try:
            conn = await self._connection()
            if await conn.fetchval("SELECT to_regclass('schema_version')",
                                   timeout=self.check_timeout) is None:
                return 0
            version = await conn.fetchval("SELECT version FROM schema_version",
                                          timeout=self.check_timeout)
        except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError, TimeoutError) as e:
            raise StorageUnavailable(f"cannot read the schema version: {e}") from e
        return int(version or 0)

    async def release(self, *, notify: bool = True) -> None:
        """Give the lock up (a graceful stop), tell the standby instances (unless not
        ``notify``), close."""
        was_held, self._held = self._held, False
        if self._watch is not None:
            self._watch.cancel()
            with contextlib.suppress(BaseException):
                await self._watch
            self._watch = None
        conn = self._conn
        if conn is not None and not conn.is_closed():
            conn.remove_termination_listener(self._on_terminated)
            try:
                if was_held:
                    await conn.fetchval(
                        "SELECT pg_advisory_unlock($1, $2)", LOCK_CLASS, self.key, timeout=2
                    )
                    if notify:
                        await conn.execute(f"NOTIFY {CHANNEL}", timeout=2)
            except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError, TimeoutError) as e:
                log.warning("could not release the database lock cleanly: %s", e)
        await self._drop_connection()

    async def _drop_connection(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None and not conn.is_closed():
            try:
                await conn.close(timeout=2)
            except Exception:  # pragma: no cover - best effort
                conn.terminate()

    async def backend_pid(self) -> int | None:
        """The server process of the lock's connection (for tests and /health)."""
        return None if self._conn is None else self._conn.get_server_pid()


def lock_path_for(database_url: str) -> Path | None:
    """The lock file of an SQLite database (None for an in-memory one)."""
    target = parse_database_url(database_url)
    if target.is_memory or target.path is None:
        return None
    return target.path.with_name(target.path.name + ".lock")


class FileLock:
    """An exclusive ``flock`` on ``path`` for the life of the process (the kernel
    releases it when the process ends, however it ends)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: IO[str] | None = None

    def acquire(self) -> None:
        """Take the lock or raise :class:`InstanceLocked` with a clear message."""
        try:
            handle = self.path.open("a+")
        except OSError as e:  # e.g. a read-only directory: the database may still open
            log.warning("cannot create the lock file %s (%s): a second instance on this "
                        "database would not be refused", self.path, e)
            return
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            owner = handle.read().strip() or "unknown"
            handle.close()
            database = self.path.with_name(self.path.name.removesuffix(".lock"))
            raise InstanceLocked(
                f"another instance of the bot (pid {owner}) is already running on the SQLite "
                f"database {database} (lock file {self.path}): SQLite allows one instance. "
                "Stop the other one first; to run several instances, use PostgreSQL "
                "(DATABASE_URL=postgresql://…), where one is active and the others stand by."
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        self._file = handle

    def release(self) -> None:
        if self._file is not None:
            fcntl.flock(self._file, fcntl.LOCK_UN)
            self._file.close()
            self._file = None
