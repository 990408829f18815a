"""Liveness and role for container health checks.

The running bot writes its role to ``HEALTH_FILE``: ``active`` from a job-queue job (so
only while its event loop runs and its updater polls or serves the webhook), ``standby``
while it waits for the database lock (several instances on one PostgreSQL, see
:mod:`bot.failover`), with why on a second line when it will not take over (a database
schema newer than its code). ``python -m bot.health`` prints the role (and that reason)
and exits 0 when the file is fresh, 1 otherwise (a standby is healthy: it is ready to
take over, or waits for a newer instance).

``python -m bot.health --poisoned`` lists the updates set aside (:mod:`bot.inbox`): when,
the update's id, the error's class, the summary kept of it (no text), from the database.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

from telegram.ext import ContextTypes

#: Seconds between two heartbeats.
HEARTBEAT_SECONDS = 10.0
#: A heartbeat older than this means the bot is stuck (a few missed beats).
STALE_SECONDS = 45.0


def write_beat(path: Path, role: str, why: str | None = None) -> None:
    """Record that the bot is alive in ``role`` (``active`` or ``standby``), and why it
    stands by if it will not take over."""
    path.write_text(f"{role} {time.time():.0f}\n" + (f"{why}\n" if why else ""))


def role_of(path: Path) -> str:
    """The role written last (``active`` for a file of a version before roles), and
    why after a colon when the file says."""
    try:
        first, _, rest = path.read_text().partition("\n")
    except OSError:
        return "unknown"
    words = first.split()
    role = words[0] if words and not words[0][0].isdigit() else "active"
    why = rest.strip()
    return f"{role}: {why}" if why else role


async def heartbeat(context: ContextTypes.DEFAULT_TYPE) -> None:
    """Job: write the health file while the updater is running."""
    app: Any = context.application
    path: str = context.job.data  # type: ignore[union-attr, assignment]
    if app.running and app.updater is not None and app.updater.running:
        write_beat(Path(path), "active")


def is_fresh(path: Path, now: float | None = None) -> bool:
    """Whether the heartbeat at ``path`` is at most :data:`STALE_SECONDS` old."""
    try:
        age = (time.time() if now is None else now) - path.stat().st_mtime
    except OSError:
        return False
    return age <= STALE_SECONDS


def main(argv: list[str] | None = None) -> int:
    from bot.config import ConfigError, load_settings

    args = sys.argv[1:] if argv is None else argv
    try:
        settings = load_settings()
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 1
    if args == ["--poisoned"]:
        return asyncio.run(list_poisoned(settings.database_url))
    if args:
        print("usage: python -m bot.health [--poisoned]", file=sys.stderr)
        return 2
    if settings.health_file is None:
        print("HEALTH_FILE is not set: no heartbeat to check", file=sys.stderr)
        return 1
    path = Path(settings.health_file)
    if is_fresh(path):
        print(role_of(path))
        return 0
    print(f"unhealthy: no heartbeat in {path} for more than {STALE_SECONDS:.0f} s", file=sys.stderr)
    return 1


async def list_poisoned(database_url: str) -> int:
    """Print the updates set aside, newest first; 0, or 1 if the database cannot be
    read (it is not migrated from here)."""
    from storage import StorageError, inbox, open_database

    try:
        db = await open_database(database_url, migrate=False, check_writable=False)
    except StorageError as exc:
        print(f"cannot read the database: {exc}", file=sys.stderr)
        return 1
    try:
        rows = await inbox.poisoned_updates(db)
    except StorageError as exc:  # (e.g. a schema from before poisoned updates)
        print(f"cannot read the poisoned updates: {exc}", file=sys.stderr)
        return 1
    finally:
        await db.close()
    if not rows:
        print("no poisoned updates")
    for row in rows:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(row.poisoned_at))
        print(f"{when} UTC  update {row.update_id}  {row.error}  claims {row.claims}  "
              f"{row.summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
