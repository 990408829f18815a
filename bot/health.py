"""Liveness for container health checks: the running bot touches ``HEALTH_FILE`` from a
job-queue job (so only while its event loop runs and its updater polls or serves the
webhook); ``python -m bot.health`` exits 0 when that file is fresh, 1 otherwise."""

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


async def heartbeat(context: ContextTypes.DEFAULT_TYPE) -> None:
    """Job: touch the health file while the updater is running."""
    app: Any = context.application
    path: str = context.job.data  # type: ignore[union-attr, assignment]
    if app.running and app.updater is not None and app.updater.running:
        Path(path).write_text(f"{time.time():.0f}\n")


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
        return 0
    print(f"unhealthy: no heartbeat in {path} for more than {STALE_SECONDS:.0f} s", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
