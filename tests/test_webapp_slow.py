"""A slow client over real HTTP: the Mini App's server (bot/webapp/) with a real game
service, five seats of one table connected to ``GET /api/events``. One of them opens
its stream on a raw socket with a tiny receive buffer and never reads. Moves are stored
one after another: the four others read each state promptly; the stalled connection's
queue stays at most ``QUEUE_STATES`` whole states (older ones dropped), and the server
closes it once a write has waited ``WRITE_TIMEOUT``, freeing what it held."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import socket
import time
from pathlib import Path

import aiohttp
import pytest

import bot.webapp.server as webapp_server
from bench.webapp import _choice, _member, _refuse
from bot.prefs import Prefs
from bot.service import GameService
from bot.webapp.hub import QUEUE_STATES
from bot.webapp.server import WebAppServer
from storage import SeatRow, open_database

TOKEN = "123456:slow-client-token"
MOVES = 60
MAX_MOVES = 600


async def test_a_client_that_stops_reading_holds_up_nobody_and_is_let_go(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(webapp_server, "WRITE_TIMEOUT", 1.5)  # (10 s in production)
    db = await open_database(f"sqlite:///{tmp_path / 'slow.db'}")
    service = GameService(db)
    server = WebAppServer(service, bot_token=TOKEN, mover=_refuse, is_member=_member)
    server.limits.burst = 1e9
    port = await server.start("127.0.0.1", 0)
    prefs = Prefs.from_json('{"options": {"match_end": "hands:100"}}', timeout=0,
                            language="it")
    game_id = await service.open_lobby(-100, 0, 1, prefs.to_json(), "{}")
    seats = [SeatRow.human(s, 500 + s, f"P{s}") for s in range(5)]
    for seat in seats:
        await service.take_seat(game_id, seat, 5)
    await service.start(game_id, seats, prefs)
    tokens = [server.tokens.issue(500 + s, game_id) for s in range(5)]
    seen: dict[int, dict[int, float]] = {s: {} for s in range(4)}

    async def reader(session: aiohttp.ClientSession, seat: int) -> None:
        async with session.get(f"http://127.0.0.1:{port}/api/events",
                               params={"token": tokens[seat]}) as response:
            async for line in response.content:
                if line.startswith(b"data: "):
                    seen[seat][json.loads(line[6:])["version"]] = time.monotonic()

    # the slow one: a tiny receive buffer, the request sent, then nothing read
    slow = socket.socket()
    slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)
    slow.setblocking(False)
    loop = asyncio.get_running_loop()
    await loop.sock_connect(slow, ("127.0.0.1", port))
    await loop.sock_sendall(slow, (f"GET /api/events?token={tokens[4]} HTTP/1.1\r\n"
                                   f"Host: 127.0.0.1:{port}\r\n\r\n").encode())
    timeout = aiohttp.ClientTimeout(total=None, sock_read=None)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        readers = [asyncio.create_task(reader(session, s)) for s in range(4)]
        try:
            while server.hub.connections(game_id) < 5:
                await asyncio.sleep(0.02)
            stalled = server.hub.of_user(504)[0]
            # a slow path: the server's end of that socket gets a small send buffer (so
            # the kernel does not absorb megabytes first, on loopback)
            assert server._runner is not None and server._runner.server is not None
            for handler in server._runner.server.connections:
                sock = handler.transport.get_extra_info("socket")  # type: ignore[union-attr]
                if sock.getpeername() == slow.getsockname():
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
            rng = random.Random(3)
            lags: list[float] = []
            longest_queue = 0
            moves = 0
            # until the slow one falls behind (the buffers on the way take some first)
            while moves < MOVES or not (stalled.dropped or stalled.closed):
                assert moves < MAX_MOVES, "the stalled connection never fell behind"
                moves += 1
                async with service.lock(game_id):
                    row = await service.latest(game_id)
                    assert row is not None
                    game = service.game_of(row)
                    turn = game.current_seat()
                    assert turn is not None
                    applied = await service.apply(game_id, row.version, turn,
                                                  _choice(game.view(turn), rng), "human", None)
                stored, version = time.monotonic(), applied.row.version
                deadline = stored + 2.0
                while not all(version in seen[s] for s in range(4)):
                    assert time.monotonic() < deadline, f"version {version} not pushed"
                    await asyncio.sleep(0.002)
                lags.append(max(seen[s][version] for s in range(4)) - stored)
                longest_queue = max(longest_queue, len(stalled.queue))
                await asyncio.sleep(0.002)
            lags.sort()
            # the readers got every state, promptly (a shared machine: generous bounds)
            assert lags[len(lags) * 95 // 100] < 0.25 and lags[-1] < 1.0, lags[-5:]
            # the stalled connection: whole states only, at most QUEUE_STATES of them
            # (it fell behind: older states were dropped, not piled up)
            assert longest_queue <= QUEUE_STATES
            assert stalled.dropped > 0 or stalled.closed
            # then the server lets it go: its write waited too long
            deadline = time.monotonic() + 10
            while server.hub.of_user(504):
                assert time.monotonic() < deadline, "the stalled connection was kept"
                await asyncio.sleep(0.05)
            assert stalled.closed
            assert server.hub.connections(game_id) == 4  # the others are still live
        finally:
            for task in readers:
                task.cancel()
            await asyncio.gather(*readers, return_exceptions=True)
            slow.close()
            with contextlib.suppress(Exception):
                await server.stop()
            await db.close()
