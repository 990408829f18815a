"""``python -m bot`` (or the ``briscola-bot`` command): read the settings and run, with long
polling or, when ``WEBHOOK_URL`` is set, PTB's webhook server. SIGTERM/SIGINT stop it
within :data:`STOP_SECONDS` whatever the network does.

With PostgreSQL several instances may run: each waits as a standby until it holds the
database lock, runs while it holds it, and stands by again if it loses it
(:mod:`bot.failover`). On SQLite a second instance on the same file refuses to start."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import signal
import sys
import threading
from collections.abc import Coroutine
from typing import Any
from urllib.parse import urlsplit

from bot.config import ConfigError, Settings, load_settings

log = logging.getLogger("bot")

#: Longest graceful stop after SIGTERM/SIGINT. Container managers send SIGKILL after a
#: grace period (Docker: 10 s), so the bot must be gone before that.
STOP_SECONDS = 8.0
#: Exit status when the graceful stop was cut short by :class:`StopGuard`.
FORCED_EXIT = 3
#: Of STOP_SECONDS, what the last steps after the outbox's drain get (confirming what was
#: delivered, closing the HTTP client and the database).
CLOSE_SECONDS = 2.5
#: The cyclic collector's thresholds in the bot's process (CPython's: 700, 10, 10). A
#: collection stops the event loop (every press waits behind it); each move makes many
#: short-lived objects that reference counting frees, and with a young generation of 700
#: those living a few loop turns (a request, a pushed state) survive two young passes
#: and are promoted, so full passes over the whole heap (hundreds of ms at 200 tables)
#: came every ~25 s. A larger young generation lets them die young first.
GC_THRESHOLDS = (20_000, 20, 10)


def main() -> int:
    try:
        settings = load_settings()
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 2
    logging.basicConfig(
        level=settings.log_level_number,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.getLogger("tornado.access").setLevel(logging.WARNING)

    from bot.app import build_application
    from bot.failover import INSTANCE, Leader
    from storage.lease import InstanceLocked

    tune_collector()
    # Redraws read and write on the database thread while the event loop sends edits:
    # hand the GIL over after 1 ms instead of CPython's 5 ms, or each of their statements
    # can wait that long behind the loop, holding the connection a press may need.
    sys.setswitchinterval(0.001)
    leader = Leader(settings)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)  # PTB's run_* use the current loop
    guard = StopGuard(STOP_SECONDS, {})
    guard.install(loop)
    try:
        while True:
            try:
                _until_complete(loop, leader.become_active())
            except InstanceLocked as exc:  # SQLite: another instance runs on the file
                log.critical("%s", exc)
                return 2
            except SystemExit:  # stopped while standing by
                return 0
            app = build_application(settings, gate=lambda: leader.active, instance=INSTANCE)
            leader.attach(app)
            guard.bot_data = app.bot_data
            try:
                run(app, settings)
            except Exception as exc:  # e.g. a database that cannot be opened
                if not leader.fenced:
                    log.critical("cannot run the bot: %s", exc)
                    return 1
                log.warning("the start-up stopped: %s", exc)
            if not leader.fenced or guard.stopping:
                return 0
            _sweep(loop, "after the active period")
            log.warning("standby again (%s): %s", INSTANCE, leader.lost_reason)
    finally:
        with contextlib.suppress(BaseException):
            _until_complete(loop, leader.close())
        guard.cancel()
        _sweep(loop, "at exit")
        loop.close()


def tune_collector() -> None:
    """What start-up made (modules, PTB, the catalogs: never garbage) is moved out of the
    collector's passes (``gc.freeze``), and the thresholds become :data:`GC_THRESHOLDS`."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def _sweep(loop: asyncio.AbstractEventLoop, when: str) -> None:
    """Cancel the tasks still pending (none should be: each part of the bot cancels its
    own; a leftover is logged, and cancelled so that none is destroyed pending)."""
    pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
    if not pending:
        return
    log.warning("%d tasks still pending %s, cancelled: %s", len(pending), when,
                ", ".join(sorted(t.get_name() for t in pending))[:500])
    for task in pending:
        task.cancel()
    with contextlib.suppress(BaseException):
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))


def _until_complete(loop: asyncio.AbstractEventLoop, work: Coroutine[Any, Any, Any]) -> None:
    """``loop.run_until_complete(work)``; if a stop signal interrupts it (``SystemExit``),
    ``work`` is cancelled before the exception goes on."""
    task = loop.create_task(work)
    try:
        loop.run_until_complete(task)
    except BaseException:
        task.cancel()
        with contextlib.suppress(BaseException):
            loop.run_until_complete(task)
        raise


def run(app: Any, settings: Settings) -> None:
    """Long polling, or the webhook server when ``WEBHOOK_URL`` is set. The stop signals
    are :class:`StopGuard`'s, not PTB's."""
    from telegram import Update

    if settings.webhook_url is None:
        app.run_polling(allowed_updates=Update.ALL_TYPES, stop_signals=None, close_loop=False)
        return
    assert settings.webhook_secret is not None  # (the settings require it)
    log.info("webhook mode: listening on %s:%d", settings.webhook_listen, settings.webhook_port)
    app.run_webhook(
        listen=settings.webhook_listen,
        port=settings.webhook_port,
        url_path=urlsplit(settings.webhook_url).path.lstrip("/"),
        webhook_url=settings.webhook_url,
        # PTB's server answers 403 to a request without this X-Telegram-Bot-Api-Secret-Token
        secret_token=settings.webhook_secret.get_secret_value(),
        allowed_updates=Update.ALL_TYPES,
        stop_signals=None,
        close_loop=False,
    )


class StopGuard:
    """SIGTERM and SIGINT start PTB's graceful stop, bounded in time.

    The first signal raises ``SystemExit`` in the event loop, as PTB's own handler does, and
    arms a timer; later signals are only logged (another ``SystemExit`` would cut the stop
    short before the database is closed) and leaves the outbox's drain what is left of
    ``seconds`` but :data:`CLOSE_SECONDS`; during start-up it cancels the start-up (opening
    the database, command menus, resuming the games). If the stop still runs after ``seconds`` — the
    Bot API unreachable, requests hanging — the process exits at once. That loses no move:
    each is committed in its own transaction before it is acknowledged, as the SIGKILL
    chaos test checks; only edits not yet delivered are left, and a restart redraws them.
    """

    def __init__(self, seconds: float, bot_data: dict[str, Any]) -> None:
        self.seconds = seconds
        self.bot_data = bot_data
        self._timer: threading.Timer | None = None

    @property
    def stopping(self) -> bool:
        """True once a stop signal came."""
        return self._timer is not None

    def install(self, loop: asyncio.AbstractEventLoop) -> None:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self._on_signal, sig, loop)

    def _on_signal(self, sig: int, loop: asyncio.AbstractEventLoop) -> None:
        from bot.app import STARTING, STOP_BY

        name = signal.Signals(sig).name
        if self._timer is not None:
            log.info("%s: already stopping", name)
            return
        log.info("%s: stopping (at most %.0f s)", name, self.seconds)
        self._timer = threading.Timer(self.seconds, self._expired)
        self._timer.daemon = True
        self._timer.start()
        self.bot_data[STOP_BY] = loop.time() + self.seconds - CLOSE_SECONDS
        starting: asyncio.Task[None] | None = self.bot_data.get(STARTING)
        if starting is not None:  # PTB goes on to its shutdown: no start-up behind it
            starting.cancel()
        raise SystemExit

    def _expired(self) -> None:
        log.critical(
            "the graceful stop took more than %.0f s: exiting now (stored moves are "
            "committed; a restart redraws what was not delivered)", self.seconds,
        )
        for handler in logging.getLogger().handlers:
            handler.flush()
        os._exit(FORCED_EXIT)

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()


if __name__ == "__main__":
    sys.exit(main())
