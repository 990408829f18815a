"""Simulated players in the Mini App, as a browser plays it (``bench.load --miniapp-share``).

Each such seat opens a session with ``initData`` signed as Telegram signs it
(``POST /api/session``), keeps the live stream open (``GET /api/events``, Server-Sent
Events), and when a state with its turn arrives waits its think time, decides from its
seat's view (read through the storage API, like the chat's simulated players: the same
policy) and posts the move (``POST /api/move``). While its stream is open the bot counts
it live (the chat sends it nothing per move); a seat may close its page mid-run
(:meth:`MiniAppSeat.close`): from then on it plays from the chat, as the bot's fallback
gives it back its hand there (:class:`bench.sim.SimTable` plays it again).

Figures kept: when each state with its turn reached it (``turns``: version -> seconds
since the loop's epoch), each move posted and when its own new state came back
(``posts``), Mini App refusals (``refused``); when each state reached it (``states``) and
which of them had a computer in turn (``computer_turns``: ``bench.load --solo`` measures
the computers' moves from them).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from bench.sim import SimTable
from sandbox.fakeapi import FakeUser
from sandbox.fakeapi.webapps import init_data

log = logging.getLogger(__name__)


async def sse_events(response: aiohttp.ClientResponse) -> AsyncIterator[tuple[str, str]]:
    """The (event, data) pairs of a Server-Sent Events stream (the Mini App's
    ``api/events``), as they come."""
    event = ""
    async for raw in response.content:
        line = raw.decode().rstrip("\n")
        if line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            yield event, line[5:].strip()


@dataclass
class Post:
    """One move posted by a Mini App seat."""

    game_id: int
    version: int
    code: str
    sent: float
    #: When the server answered 200 (the move stored), and when the seat's stream brought
    #: a state of a later version (its own move shown).
    stored: float | None = None
    shown: float | None = None


@dataclass
class MiniAppSeat:
    table: SimTable
    user: FakeUser
    http: aiohttp.ClientSession
    base: str
    bot_token: str
    rng: random.Random
    #: (game, version) -> when a state of that version with this seat's turn arrived.
    turns: dict[tuple[int, int], float] = field(default_factory=dict)
    #: (game, version) -> when the first state of that version arrived; the versions
    #: whose state had a computer's seat in turn (not counting a stream's first state,
    #: which shows the table as it is when the page opens: stored some time before).
    states: dict[tuple[int, int], float] = field(default_factory=dict)
    computer_turns: set[tuple[int, int]] = field(default_factory=set)
    posts: list[Post] = field(default_factory=list)
    refused: int = 0
    #: When the page was closed mid-run (None: open to the end).
    closed_at: float | None = None
    _token: str | None = None
    _game: int | None = None
    _stream: asyncio.Task[None] | None = None
    _player: asyncio.Task[None] | None = None
    _state: dict[str, Any] | None = None
    _response: aiohttp.ClientResponse | None = None
    _wake: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def live(self) -> bool:
        return self._stream is not None and not self._stream.done()

    async def open(self, game_id: int) -> None:
        """Open the page on ``game_id`` (a new match: a new session): session, stream,
        and the loop that plays its turns."""
        await self.stop()
        self._game = game_id
        user = {"id": self.user.id, "first_name": self.user.first_name,
                "language_code": "it"}
        for _attempt in range(30):
            async with self.http.post(self.base + "api/session", json={
                    "init_data": init_data(self.bot_token, user), "table": str(game_id)},
                    ) as resp:
                body = await resp.json()
                if resp.status == 429:  # many pages opened at once from one address
                    await asyncio.sleep(0.5 + self.rng.random())
                    continue
                if resp.status != 200:
                    raise RuntimeError(f"session refused: {resp.status} {body}")
                self._token = body["token"]
                break
        else:
            raise RuntimeError("session refused: too many requests, 30 times")
        self.table.live.add(self.user.id)
        self._stream = asyncio.create_task(self._listen(), name=f"miniapp:{self.user.id}")
        self._player = asyncio.create_task(self._play(), name=f"miniapp-play:{self.user.id}")

    async def close(self) -> None:
        """The page closes (or goes inactive): its stream ends, it plays from the chat."""
        loop = asyncio.get_running_loop()
        self.closed_at = loop.time()
        await self.stop()

    async def stop(self) -> None:
        self.table.live.discard(self.user.id)
        if self._response is not None:  # the page's EventSource closes: its connection too
            self._response.close()
            self._response = None
        for task in (self._stream, self._player):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        self._stream = self._player = None

    async def _listen(self) -> None:
        url = f"{self.base}api/events?token={self._token}&lang=it"
        loop = asyncio.get_running_loop()
        first = True  # the stream's first state shows where the table is, not a move
        try:
            async with self.http.get(url, timeout=aiohttp.ClientTimeout(total=None)) as resp:
                self._response = resp
                async for event, data in sse_events(resp):
                    if event == "state":
                        state = json.loads(data)
                        at = loop.time()
                        version = int(state["version"])
                        key = (state["table"], version)
                        self.states.setdefault(key, at)
                        if state.get("my_turn"):
                            self.turns.setdefault(key, at)
                        if not first and any(s.get("turn") and s.get("computer")
                                             for s in state.get("seats", ())):
                            self.computer_turns.add(key)
                        first = False
                        for post in self.posts:
                            if post.shown is None and post.version < version:
                                post.shown = at
                        self._state = state
                        self._wake.set()
                    elif event in ("closed", "expired"):
                        return
        finally:
            self.table.live.discard(self.user.id)

    async def _play(self) -> None:
        """At each state with its turn: think, decide from the seat's view, post."""
        done: set[int] = set()
        while True:
            await self._wake.wait()
            self._wake.clear()
            state = self._state
            if state is None or not state.get("my_turn") or state.get("status") != "playing":
                continue
            version = int(state["version"])
            if version in done:
                continue
            done.add(version)
            if not await self._turn(version):
                done.discard(version)  # refused for a passing reason: again in a second
                await asyncio.sleep(1.0)
                self._wake.set()

    async def _turn(self, version: int) -> bool:
        """Think, then play the turn of ``version`` (False: to try again)."""
        await asyncio.sleep(self.table.think.pause(self.rng))
        if self._state is not None and int(self._state["version"]) != version:
            return True  # (moved meanwhile: a timeout, or the chat)
        row, game = await self.table.state()
        if game is None or row.version != version or row.game_id != self._game:
            return True
        seat = row.seat_of(self.user.id)
        if seat is None or game.current_seat() != seat.seat:
            return True
        code = self.table.policy(game.view(seat.seat), self.table.rng)
        return await self._post(row.game_id, version, code)

    async def _post(self, game_id: int, version: int, code: str) -> bool:
        loop = asyncio.get_running_loop()
        post = Post(game_id, version, code, loop.time())
        self.posts.append(post)
        async with self.http.post(self.base + "api/move", json={
                "version": version, "code": code},
                headers={"Authorization": f"Bearer {self._token}"}) as resp:
            await resp.read()
            if resp.status == 200:
                post.stored = loop.time()
                return True
            self.refused += 1
            log.info("Mini App move refused: %s", resp.status)
            self.posts.remove(post)
            return resp.status not in (429, 503)
