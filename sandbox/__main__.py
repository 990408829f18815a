"""``python -m sandbox``: the real bot against a local fake Telegram, played in a browser.

Starts the fake Bot API server (`sandbox.fakeapi`) with a group and a few users, the web
page (`sandbox.web`), and the bot itself — ``python -m bot``, unchanged, in its own process,
with the usual settings (environment and ``.env``) except ``BOT_TOKEN`` and
``TELEGRAM_BASE_URL``, which point at the local server. The fake world lives in memory, so
by default the bot gets a fresh database per run (``--database-url`` to choose one).

``./scripts/run`` starts this when no ``BOT_TOKEN`` is configured (or with ``--sandbox``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import socket
import sys
import tempfile
from pathlib import Path

from sandbox.fakeapi import FakeChat, FakeTelegram, FloodLimits
from sandbox.web import SandboxWeb, add_player

#: The users ready when the sandbox starts: (name, Telegram language).
PLAYERS = (("Anna", "it"), ("Bruno", "it"), ("Carla", "it"), ("Dave", "en"))
GROUP_TITLE = "Briscola al bar"
#: A forum among the sandbox's chats: one table per topic (issue 48).
FORUM_TITLE = "Circolo (forum)"
FORUM_TOPICS = ("Tavolo 1", "Tavolo 2")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m sandbox",
        description="Run the bot against a local fake Telegram and play it in a browser.",
    )
    parser.add_argument("--sandbox", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--host", default=os.environ.get("SANDBOX_HOST", "127.0.0.1"),
        help="address of the web page (0.0.0.0: other machines of the network too); "
        "default SANDBOX_HOST or 127.0.0.1",
    )
    parser.add_argument(
        "--port", type=int, default=int(os.environ.get("SANDBOX_PORT", "8080")),
        help="port of the web page (0: any free port); default SANDBOX_PORT or 8080",
    )
    parser.add_argument(
        "--database-url", default=None,
        help="the bot's database (default: a fresh SQLite file for this run, because the "
        "fake world starts empty every time)",
    )
    parser.add_argument(
        "--webapp-port", type=int, default=int(os.environ.get("SANDBOX_WEBAPP_PORT", "0")),
        help="port of the bot's Mini App on 127.0.0.1 (0: any free port); default "
        "SANDBOX_WEBAPP_PORT or 0",
    )
    parser.add_argument(
        "--no-flood-limits", action="store_true",
        help="do not enforce Telegram's flood limits in the fake (for fast automated runs; "
        "then also raise GROUP_MESSAGES_PER_MINUTE and PRIVATE_MESSAGES_PER_SECOND)",
    )
    return parser.parse_args(argv)


def build_world(tg: FakeTelegram) -> list[FakeChat]:
    """The sandbox's group and a forum with two topics, with the pre-made players (the
    first one is their admin)."""
    users = [add_player(tg, [], name, language) for name, language in PLAYERS]
    group = tg.add_group(GROUP_TITLE, users, owner=users[0])
    forum = tg.add_forum(FORUM_TITLE, users, owner=users[0])
    for topic in FORUM_TOPICS:
        tg.add_topic(forum, topic)
    return [group, forum]


#: The Mini App's short name in the sandbox (what BotFather's /newapp would register).
WEB_APP_SHORT_NAME = "tavolo"


#: Addresses that listen on every interface.
WILDCARDS = ("0.0.0.0", "::", "")


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def bot_environment(tg: FakeTelegram, database_url: str, web_app_port: int | None = None,
                    host: str = "127.0.0.1") -> dict[str, str]:
    """The bot's environment: the caller's, pointed at the local server; with
    ``web_app_port`` the bot serves its Mini App there, plain HTTP on the sandbox's own
    ``host`` (whoever may open the sandbox may open its Mini App), with Telegram's
    telegram-web-app.js where ``WEBAPP_TELEGRAM_JS`` points at it, else the stand-in. Its
    address stays 127.0.0.1 (the bot takes plain HTTP
    for loopback only): the sandbox page swaps in the host it was opened at."""
    env = dict(os.environ)
    env.update(
        BOT_TOKEN=tg.token,
        TELEGRAM_BASE_URL=tg.base_url,
        TELEGRAM_BASE_FILE_URL=tg.base_file_url,
        DATABASE_URL=database_url,
        WEBHOOK_URL="",  # the local server only serves getUpdates (long polling)
    )
    if web_app_port is not None:
        env.update(
            WEBAPP_URL=f"http://127.0.0.1:{web_app_port}/",
            WEBAPP_LISTEN=host or "0.0.0.0",
            WEBAPP_PORT=str(web_app_port),
            WEBAPP_SHORT_NAME=WEB_APP_SHORT_NAME,
            # Telegram's own script where the caller has it (scripts/telegram-js fetches
            # it from npm); else the stand-in
            WEBAPP_TELEGRAM_JS=env.get("WEBAPP_TELEGRAM_JS") or "static/stand-in.js",
        )
    return env


async def run(args: argparse.Namespace) -> int:
    flood: FloodLimits | bool = not args.no_flood_limits
    # inline mode on, as @BotFather's /setinline would (README: the inline mode)
    tg = FakeTelegram(bot_username="BriscolaSandboxBot", bot_name="Briscola", flood=flood,
                      inline_mode=True)
    page = SandboxWeb(tg, build_world(tg))
    try:
        port = await page.start(args.host, args.port)
    except OSError as exc:
        print(f"cannot serve the page on {args.host}:{args.port}: {exc.strerror} "
              "(choose another with --port or SANDBOX_PORT)", file=sys.stderr)
        return 2
    await tg.start()
    try:
        with tempfile.TemporaryDirectory(prefix="briscola-sandbox-") as scratch:
            database_url = args.database_url or f"sqlite:///{Path(scratch) / 'sandbox.db'}"
            everyone = args.host in WILDCARDS
            web_app_port = args.webapp_port or free_port(
                "127.0.0.1" if everyone else args.host)
            page.web_apps[WEB_APP_SHORT_NAME] = f"http://127.0.0.1:{web_app_port}/"
            bot = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bot",
                env=bot_environment(tg, database_url, web_app_port, args.host),
            )
            try:
                shown = "127.0.0.1" if everyone else args.host
                print(f"Briscola sandbox: open http://{shown}:{port}/ "
                      f"(bot pid {bot.pid}, database {database_url})", flush=True)
                if everyone:
                    print("  others on this network: http://<this machine's address>:"
                          f"{port}/", flush=True)
                for user in tg.world.users.values():
                    await user.start_bot()
                return await _until_stopped(bot)
            finally:
                await _stop_bot(bot)
                _say_refusals(tg)
    finally:
        await page.stop()
        await tg.stop()


async def _until_stopped(bot: asyncio.subprocess.Process) -> int:
    """Wait for Ctrl+C / SIGTERM (0) or for the bot to exit (its code)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    waiter = asyncio.ensure_future(stop.wait())
    exited = asyncio.ensure_future(bot.wait())
    await asyncio.wait({waiter, exited}, return_when=asyncio.FIRST_COMPLETED)
    waiter.cancel()
    if exited.done():
        print(f"the bot exited with code {bot.returncode}", file=sys.stderr)
        return bot.returncode or 1
    exited.cancel()
    return 0


def _say_refusals(tg: FakeTelegram) -> None:
    """On the way out: the calls Telegram's flood control would have refused (a pacing
    bug: the bot keeps under Telegram's limits), one line each."""
    refused = [c for c in tg.errors if c.error_code == 429]
    print(f"{len(refused)} calls refused with 429", flush=True)
    for call in refused:
        print(f"  refused: {call!r}", flush=True)


async def _stop_bot(bot: asyncio.subprocess.Process) -> None:
    if bot.returncode is not None:
        return
    bot.terminate()
    try:
        await asyncio.wait_for(bot.wait(), 15)
    except TimeoutError:
        bot.kill()
        await bot.wait()


def main(argv: list[str] | None = None) -> int:
    return asyncio.run(run(parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
