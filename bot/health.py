"""Liveness and role for container health checks.

The running bot writes its role to ``HEALTH_FILE``: ``active`` from a job-queue job (so
only while its event loop runs and its updater polls or serves the webhook), ``standby``
while it waits for the database lock (several instances on one PostgreSQL, see
:mod:`bot.failover`). ``python -m bot.health`` prints the role and exits 0 when the file
is fresh, 1 otherwise (a standby is healthy: it is ready to take over).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from telegram.ext import ContextTypes

#: Seconds between two heartbeats.
HEARTBEAT_SECONDS = 10.0
#: A heartbeat older than this means the bot is stuck (a few missed beats).
STALE_SECONDS = 45.0


def write_beat(path: Path, role: str) -> None:
    """Record that the bot is alive in ``role`` (``active`` or ``standby``)."""
    path.write_text(f"{role} {time.time():.0f}\n")


def role_of(path: Path) -> str:
    """The role written last (``active`` for a file of a version before roles)."""
    try:
        words = path.read_text().split()
    except OSError:
        return "unknown"
    return words[0] if words and not words[0][0].isdigit() else "active"


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


def main() -> int:
    from bot.config import ConfigError, load_settings

    try:
        settings = load_settings()
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 1
    if settings.health_file is None:
        print("HEALTH_FILE is not set: no heartbeat to check", file=sys.stderr)
        return 1
    path = Path(settings.health_file)
    if is_fresh(path):
        print(role_of(path))
        return 0
    print(f"unhealthy: no heartbeat in {path} for more than {STALE_SECONDS:.0f} s", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
