"""Mini App push benchmark: N tables, all their seats connected live, moves stored.

    python -m bench.webapp --tables 200 --seconds 20 --moves-per-second 100

This process runs the bot's game service (SQLite in a temporary directory, or
``--database``) and the Mini App server (bot/webapp/) on 127.0.0.1; N matches of five
people are started through the service, and a second process (``--clients`` mode of this
module) opens one Server-Sent Events connection per seat, 5 × N in all, as the Mini App
does (``GET /api/events``). Then moves are stored through ``GameService.apply`` at the
given rate (each table in turn: the seat in turn plays a random legal action, passes
after one call in the auction), exactly as a press or a Mini App move stores them.

Printed: push latency from each move's commit (``apply`` returned) to each client
having read that version, p50/p95/p99/max over every (move, connected seat) pair; moves
stored and states delivered (and dropped by a slow client's bounded queue); server CPU
per move (process CPU in the window / moves: the store, the five views built and
written, the HTTP writes); the time building states per move; memory per connection
(the server's RSS with every client connected minus before, / connections). The
clients run in their own process; both share the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

from bot.prefs import Prefs
from bot.service import GameService, Refused
from bot.webapp.server import WebAppServer
from storage import SeatRow, open_database

TOKEN = "123456:bench-webapp-token"
_VERSION = re.compile(rb'"table":(\d+),"status":"\w+","version":(\d+)')


def rss_kib() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def _refuse(*_: Any) -> None:
    raise Refused("alert.not_seated")


async def _member(*_: Any) -> bool:
    return False


def _choice(view: Any, rng: random.Random) -> str:
    legal: list[str] = [c for c in view.legal if c != "M"]
    if view.phase == "auction":
        return "P" if view.current_bid is not None and "P" in legal else rng.choice(
            [c for c in legal if c.startswith("r")] or legal)
    return rng.choice(legal)


async def serve(args: argparse.Namespace) -> dict[str, Any]:
    scratch = tempfile.TemporaryDirectory(prefix="bench-webapp-")
    url = args.database or f"sqlite:///{Path(scratch.name) / 'bench.db'}"
    db = await open_database(url)
    service = GameService(db)
    #: (table, version) -> when apply() returned: committed and handed to the hub, whose
    #: push task runs at this task's next await
    committed: dict[tuple[int, int], float] = {}
    server = WebAppServer(service, bot_token=TOKEN, mover=_refuse, is_member=_member,
                          token_ttl=3600)
    server.limits.burst = 1e9  # (one address opens every connection)
    port = await server.start("127.0.0.1", 0)
    prefs = Prefs.from_json(None, timeout=0, language="it")
    tokens: list[str] = []
    games: list[int] = []
    for t in range(args.tables):
        chat = -(1000 + t)
        game_id = await service.open_lobby(chat, 0, 1, prefs.to_json(), "{}")
        seats = [SeatRow.human(s, 10_000 * (t + 1) + s, f"P{t}.{s}") for s in range(5)]
        for seat in seats:
            await service.take_seat(game_id, seat, 5)
        await service.start(game_id, seats, prefs)
        games.append(game_id)
        tokens += [server.tokens.issue(seat.user_id or 0, game_id) for seat in seats]
    before = rss_kib()
    spec = Path(scratch.name) / "clients.json"
    spec.write_text(json.dumps({"base": f"http://127.0.0.1:{port}/", "tokens": tokens,
                                "seconds": args.seconds + 15}))
    clients = subprocess.Popen([sys.executable, "-m", "bench.webapp", "--clients", str(spec)],
                               stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while server.hub.connections() < len(tokens):
        if time.monotonic() > deadline:
            raise SystemExit(f"only {server.hub.connections()} clients connected")
        await asyncio.sleep(0.2)
    await asyncio.sleep(1.0)
    connected = rss_kib()
    rng = random.Random(args.seed)
    moves = 0
    pushes0, build0 = server.hub.pushes, server.hub.build_seconds
    cpu0, start = cpu_seconds(), time.monotonic()
    interval = 1.0 / args.moves_per_second
    next_at = start
    index = 0
    while time.monotonic() - start < args.seconds:
        game_id = games[index % len(games)]
        index += 1
        async with service.lock(game_id):
            row = await service.latest(game_id)
            if row is None or row.status != "playing":
                continue
            game = service.game_of(row)
            turn = game.current_seat()
            if turn is None:
                continue
            applied = await service.apply(game_id, row.version, turn,
                                          _choice(game.view(turn), rng), "human", None)
            committed[(game_id, applied.row.version)] = time.time()
        moves += 1
        next_at += interval
        await asyncio.sleep(max(0.0, next_at - time.monotonic()))
    window = time.monotonic() - start
    cpu = cpu_seconds() - cpu0
    pushes, build = server.hub.pushes - pushes0, server.hub.build_seconds - build0
    await asyncio.sleep(3.0)  # the last pushes arrive
    dropped = server.hub.dropped()
    clients.terminate()
    out, _ = clients.communicate(timeout=60)
    received = json.loads(out)
    await server.stop()
    await db.close()
    scratch.cleanup()
    latencies: list[float] = []
    for table, version, at in received["events"]:
        stored = committed.get((table, version))
        if stored is not None:
            latencies.append(float(at) - stored)
    latencies.sort()
    expected = moves * 5

    def pct(p: float) -> float:
        return latencies[min(len(latencies) - 1, int(p * len(latencies)))] * 1000

    return {
        "tables": args.tables, "connections": len(tokens), "seconds": round(window, 1),
        "moves": moves, "moves_per_second": round(moves / window, 1),
        "deliveries": len(latencies), "expected": expected,
        "p50_ms": round(pct(0.50), 1), "p95_ms": round(pct(0.95), 1),
        "p99_ms": round(pct(0.99), 1), "max_ms": round(latencies[-1] * 1000, 1),
        "mean_ms": round(statistics.fmean(latencies) * 1000, 1),
        "cpu_ms_per_move": round(cpu / max(moves, 1) * 1000, 2),
        "build_ms_per_move": round(build / max(pushes, 1) * 1000, 2),
        "kib_per_connection": round((connected - before) / len(tokens), 1),
        "rss_mib": round(connected / 1024, 1),
        "states_dropped": dropped,
    }


async def clients(spec_path: str) -> None:
    """The clients' process: one SSE connection per token; prints what each read, when."""
    spec = json.loads(Path(spec_path).read_text())
    events: list[tuple[int, int, float]] = []
    stop = asyncio.Event()
    connector = aiohttp.TCPConnector(limit=0)
    timeout = aiohttp.ClientTimeout(total=None, sock_read=None)

    async def one(session: aiohttp.ClientSession, token: str) -> None:
        async with session.get(spec["base"] + "api/events",
                               params={"token": token, "lang": "it"}) as response:
            async for line in response.content:
                if line.startswith(b"data: "):
                    found = _VERSION.search(line)
                    if found:
                        events.append((int(found[1]), int(found[2]), time.time()))

    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        tasks = [asyncio.create_task(one(session, token)) for token in spec["tokens"]]
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, stop.set)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), spec["seconds"])
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    print(json.dumps({"events": events}))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.webapp", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--moves-per-second", type=float, default=100.0,
                        help="moves stored per second over all tables (default 100: each "
                        "of 200 tables moves every 2 s)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--database", default=None, help="a database URL (default: SQLite)")
    parser.add_argument("--clients", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.clients:
        asyncio.run(clients(args.clients))
        return 0
    figures = asyncio.run(serve(args))
    print(f"python -m bench.webapp --tables {args.tables} --seconds {args.seconds:g} "
          f"--moves-per-second {args.moves_per_second:g}")
    for key, value in figures.items():
        print(f"  {key:22} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
