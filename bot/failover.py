"""Active / standby: several instances on one PostgreSQL, exactly one of them acting
(issue 20); on SQLite one instance only.

* :class:`Leader` is this process's role. On PostgreSQL it waits, as a *standby* that
  serves nothing (no getUpdates, no webhook server, no Bot API call, no write), until it
  holds the database lock (:class:`storage.lease.PostgresLease`); then the bot starts as
  a restart does (every table resumed from the database: hands, timers from their stored
  deadlines, redraws of what was not delivered) and is *active*. On SQLite it takes a
  file lock at start-up, and a second instance on the same file refuses to start.
* **Fencing**: the moment the lock is lost (the lock's connection closed or silent), the
  gates close: the bot's HTTP requests raise :class:`~bot.aiohttp_request.Fenced`
  instead of calling the Bot API, the database refuses every transaction and commit
  (``StorageUnavailable``, code ``"fenced"``), and the application stops; the process then
  stands by again until it holds the lock once more (``bot/__main__.py``).
* **Handover** (SIGTERM): updates stop being fetched, those fetched are handled, the
  outbox gets :data:`HANDOVER_DRAIN_SECONDS` for its pending edits, then the lock is
  released with a ``NOTIFY`` and a standby takes it at once (what was not delivered is
  redrawn by the next active instance, as after a restart).
* **Updates once, none lost**: every update is stored in the inbox before Telegram is told
  it arrived, and marked handled with its move (:mod:`bot.inbox`); the instance taking
  over first handles what the one before stored and did not handle. An update Telegram
  delivers again (stored, never confirmed) is stored once and handled once.
* **Standing by runs nothing**: when the lock is lost, every task of the active period
  (the inbox's handlers, the outbox, the pacing saver, jobs, turn timers, redraws) is
  cancelled before the process stands by (``bot.app._post_stop``).
* **A schema newer than the code** (a rolling upgrade, issue 46): each time it takes the
  lock an instance reads the database's schema version first; one newer than its code
  knows (a newer instance migrated it) makes it give the lock back at once and stand
  by, saying why in the log (once) and in the health file, trying again every
  :data:`SCHEMA_RECHECK_SECONDS` (a newer instance, trying every 0.2 s, takes the lock
  meanwhile). A newer instance migrates once, under the lock, before it handles
  anything (``bot.app``: the database is opened and migrated before the inbox starts).
* The role is in the health file (``python -m bot.health``) and the log says when and
  why an instance becomes active.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from pathlib import Path

from telegram.ext import Application

from bot.aiohttp_request import Fenced
from bot.config import Settings
from bot.health import write_beat
from storage import Database, StorageUnavailable, is_postgres_url, migrations
from storage.lease import (
    FileLock,
    PostgresLease,
    lock_path_for,
)

log = logging.getLogger("bot.failover")

#: This process, as named in the log, the health file and its Bot API requests'
#: User-Agent.
INSTANCE = f"{socket.gethostname()}:{os.getpid()}"
#: ``bot_data`` key of the :class:`Leader`.
LEADER = "leader"
#: ``bot_data`` key of what cancels the active period's tasks (set by ``bot.app``).
STAND_DOWN = "stand_down"
#: On a graceful stop with PostgreSQL, what the outbox gets to deliver its pending edits
#: before the lock is released (the next active instance redraws the rest at once).
HANDOVER_DRAIN_SECONDS = 0.8
#: ... and then to record which versions were delivered.
HANDOVER_CONFIRM_SECONDS = 0.2
#: After losing the lock, the wait before trying to take it again: a standby instance,
#: which tries every second, takes over first.
REACQUIRE_DELAY_SECONDS = 3.0
#: An instance that found a schema newer than its code tries the lock again this often
#: (and gives it back at once while the schema is newer).
SCHEMA_RECHECK_SECONDS = 2.0


class Leader:
    """This process's role; see the module docstring."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.role = "standby"
        #: why the last activity ended (None while active, or before the first)
        self.lost_reason: str | None = None
        #: why this instance stands by though it could take the lock (a newer schema)
        self.standby_reason: str | None = None
        self.lease: PostgresLease | None = None
        self.file_lock: FileLock | None = None
        self._app: Application | None = None  # type: ignore[type-arg]
        if is_postgres_url(settings.database_url):
            self.lease = PostgresLease(
                settings.database_url, _bot_id(settings), on_lost=self._on_lost
            )
        else:
            path = lock_path_for(settings.database_url)
            if path is not None:
                self.file_lock = FileLock(path)

    # ---------------------------------------------------------------- the gates

    @property
    def active(self) -> bool:
        """The gate of the Bot API requests: True while this instance may act."""
        return self.role == "active"

    def fence(self) -> None:
        """The gate of the database writes (:attr:`storage.Database.fence`)."""
        if self.role != "active":
            raise StorageUnavailable(
                "this instance is not the active one: nothing is written", code="fenced"
            )

    # ---------------------------------------------------------------- becoming active

    async def become_active(self) -> None:
        """Wait as a standby (PostgreSQL) until this instance holds the lock; on SQLite
        take the file lock or raise :class:`storage.lease.InstanceLocked`."""
        if self.lease is None:
            if self.file_lock is not None and self.role != "active":
                self.file_lock.acquire()
                log.info("active: single instance on SQLite (lock file %s)", self.file_lock.path)
            self.role = "active"
            return
        self._app = None  # (the application of the activity before, if any, is gone)
        lease = self.lease
        if self.lost_reason is not None:
            # fenced: let a standby take over first (the lock may be free already)
            self._beat("standby")
            await asyncio.sleep(REACQUIRE_DELAY_SECONDS)
        while True:
            why = await self._take_lock(lease)
            refused = await self._newer_schema(lease)
            if refused is None:
                break
            await lease.release(notify=False)  # (a newer instance takes it)
            if refused != self.standby_reason:
                log.warning("standby (%s): %s", INSTANCE, refused)
            self.standby_reason = refused
            self._beat("standby")
            await asyncio.sleep(SCHEMA_RECHECK_SECONDS)
        log.info("active (%s): %s; resuming every table", INSTANCE, why)
        self.lost_reason = None
        self.standby_reason = None
        self.role = "active"

    async def _newer_schema(self, lease: PostgresLease) -> str | None:
        """Why this instance must not act on the database (it holds the lock): its schema
        is newer than this code (or cannot be read); None if it may."""
        try:
            version = await lease.schema_version()
        except StorageUnavailable as exc:
            return f"{exc}; trying again"
        latest = migrations.LATEST_VERSION
        if version <= latest:
            return None
        return (f"the database's schema is v{version}, newer than this code's v{latest} (a "
                "newer instance migrated it): not taking over, nothing is written; "
                "upgrade this instance")

    async def _take_lock(self, lease: PostgresLease) -> str:
        """Wait until this instance holds the lock; why it got it, for the log."""
        loop = asyncio.get_running_loop()
        start = loop.time()
        if not await lease.try_acquire():
            log.info(
                "standby (%s): another instance holds the database lock; trying every "
                "%.1f s, serving nothing meanwhile", INSTANCE, lease.poll_seconds,
            )
            self._beat("standby")
            handed_over = await lease.wait_release()
            while not await lease.try_acquire():
                self._beat("standby")
                handed_over = await lease.wait_release()
            waited = loop.time() - start
            if handed_over:
                why = (f"took over after {waited:.1f} s on standby: the active instance "
                       "stopped and handed over")
            else:
                why = (f"took over after {waited:.1f} s on standby: the active instance's "
                       "database connection ended (it died, or was cut off and fenced)")
        elif self.lost_reason is not None:
            why = f"took the lock again after losing it ({self.lost_reason})"
        else:
            why = "took the database lock: no other instance was active"
        return why

    def attach(self, app: Application) -> None:  # type: ignore[type-arg]
        """Wire the application built for this activity (its ``bot_data``)."""
        self._app = app
        app.bot_data[LEADER] = self
        updater_log = logging.getLogger("telegram.ext.Updater")
        if not any(isinstance(f, _QuietWhenFenced) for f in updater_log.filters):
            updater_log.addFilter(_QuietWhenFenced())

    async def started(self, db: Database) -> None:
        """In ``post_init``, the database open: fence its writes."""
        if self.lease is not None:
            db.fence = self.fence

    # ---------------------------------------------------------------- losing it

    def _on_lost(self, reason: str) -> None:
        """The lock's connection is gone: stop acting at once (the gates close now),
        then stop the application; ``bot/__main__.py`` stands by again."""
        if self.role != "active":
            return
        self.role = "standby"
        self.lost_reason = reason
        log.error("fenced (%s): stopping at once, no Bot API call and no write from now; "
                  "standby again after the stop", INSTANCE)
        self._beat("standby")
        if self._app is not None:
            stand_down = self._app.bot_data.get(STAND_DOWN)
            if stand_down is not None:  # every task of the active period, cancelled now
                stand_down()
            self._app.stop_running()

    @property
    def fenced(self) -> bool:
        """True if the last activity ended because the lock was lost."""
        return self.lost_reason is not None and self.role != "active"

    async def step_down(self) -> None:
        """A graceful stop: release the lock (a standby takes over at once). The gates
        close first: nothing is sent or written after this."""
        if self.lease is None:
            return
        was_active = self.role == "active"
        self.role = "standby"
        await self.lease.release()
        if was_active:
            log.info("released the database lock: a standby instance takes over")

    async def close(self) -> None:
        await self.step_down()
        if self.file_lock is not None:
            self.file_lock.release()

    def drain_budget(self, seconds: float) -> float:
        """How long a graceful stop lets the outbox drain: short with PostgreSQL, so that
        a standby is active within seconds (it redraws what was left)."""
        return min(seconds, HANDOVER_DRAIN_SECONDS) if self.lease is not None else seconds

    def confirm_budget(self, seconds: float) -> float:
        """How long a graceful stop waits to record what was delivered (idem)."""
        return min(seconds, HANDOVER_CONFIRM_SECONDS) if self.lease is not None else seconds

    def _beat(self, role: str) -> None:
        if self.settings.health_file:
            why = self.standby_reason if role == "standby" else None
            write_beat(Path(self.settings.health_file), role, why)


class _QuietWhenFenced(logging.Filter):
    """PTB's updater logs a traceback when its last getUpdates (confirming what it
    fetched) fails: once fenced, that call is refused on purpose; one line says so."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, Fenced):
            record.msg, record.args, record.exc_info = "%s", (str(error),), None
            record.levelno, record.levelname = logging.INFO, "INFO"
        return True


def _bot_id(settings: Settings) -> int:
    return int(settings.bot_token.get_secret_value().split(":", 1)[0])
