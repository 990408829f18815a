"""Live connections of the Mini App, by table, and the push of each change to them.

The service calls :meth:`Hub.changed` after every write to a game (a move, a seat, the
turn's clock). The hub then builds the new state once per kind of viewer at that table
(each seat, the group's view; per language) from the core's ``view(seat)``, and hands
the same bytes to every connection of that viewer (the builder of one push may share
work between its viewers: what they are all shown is built and serialised once). A
connection's queue is bounded and holds whole states: a client too slow to read drops
the states it has not read yet but the newest (it converges on the current state), and
never holds up the others, whose writes run in their own tasks. A reconnect starts with
the current state.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import defaultdict, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from game import Game
from storage import GameRow

log = logging.getLogger(__name__)

#: States a connection may have queued before the older ones are dropped.
QUEUE_STATES = 8
#: The bytes of one viewer's state in one push: (user id, language) -> SSE event.
Viewer = Callable[[int, str], bytes]
#: Makes the builder of one push from the table's current row and game.
Build = Callable[[GameRow, Game | None], Viewer]
#: Reads the current row (and its game, None if it never started) of a table.
Load = Callable[[int], Awaitable[tuple[GameRow, Game | None] | None]]


@dataclass(eq=False)
class Connection:
    user_id: int
    game_id: int
    lang: str
    queue: deque[bytes] = field(default_factory=lambda: deque(maxlen=QUEUE_STATES))
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    #: States dropped because the client did not read them in time.
    dropped: int = 0
    opened: float = field(default_factory=time.monotonic)
    closed: bool = False

    def push(self, data: bytes) -> None:
        if self.closed:
            return
        if len(self.queue) == self.queue.maxlen:
            self.dropped += len(self.queue)
            self.queue.clear()  # whole states: only the newest matters
        self.queue.append(data)
        self.ready.set()

    async def next(self, timeout: float) -> bytes | None:
        """The next state to write, or None after ``timeout`` seconds without one."""
        if not self.queue:
            self.ready.clear()
            try:
                async with asyncio.timeout(timeout):  # (no task a wait, as wait_for makes)
                    await self.ready.wait()
            except TimeoutError:
                return None
        return self.queue.popleft() if self.queue else None

    def close(self) -> None:
        self.closed = True
        self.ready.set()


class Hub:
    def __init__(self, load: Load, build: Build) -> None:
        self._load = load
        self._build = build
        self._tables: defaultdict[int, set[Connection]] = defaultdict(set)
        self._dirty: set[int] = set()
        self._tasks: dict[int, asyncio.Task[None]] = {}
        #: Pushes done, and the time spent building them (for the benchmark).
        self.pushes = 0
        self.build_seconds = 0.0

    def connections(self, game_id: int | None = None) -> int:
        if game_id is not None:
            return len(self._tables.get(game_id, ()))
        return sum(len(c) for c in self._tables.values())

    def dropped(self) -> int:
        """States dropped so far by the connections still open (clients too slow)."""
        return sum(c.dropped for conns in self._tables.values() for c in conns)

    def add(self, conn: Connection) -> None:
        self._tables[conn.game_id].add(conn)

    def remove(self, conn: Connection) -> None:
        conn.close()
        conns = self._tables.get(conn.game_id)
        if conns is not None:
            conns.discard(conn)
            if not conns:
                del self._tables[conn.game_id]

    def of_user(self, user_id: int) -> list[Connection]:
        """The user's open connections, oldest first."""
        return sorted((c for conns in self._tables.values() for c in conns
                       if c.user_id == user_id), key=lambda c: c.opened)

    def changed(self, game_id: int) -> None:
        """A write to ``game_id`` was stored: push it (coalesced, in the background)."""
        if game_id not in self._tables:
            return
        self._dirty.add(game_id)
        task = self._tasks.get(game_id)
        if task is None or task.done():
            self._tasks[game_id] = asyncio.get_running_loop().create_task(
                self._push(game_id), name=f"webapp-push:{game_id}")

    async def _push(self, game_id: int) -> None:
        try:
            while game_id in self._dirty:
                self._dirty.discard(game_id)
                loaded = await self._load(game_id)
                conns = list(self._tables.get(game_id, ()))
                if loaded is None or not conns:
                    continue
                row, game = loaded
                started = time.perf_counter()
                build = self._build(row, game)
                built: dict[tuple[int | None, str], bytes] = {}
                for conn in conns:
                    seat = row.seat_of(conn.user_id)
                    key = (None if seat is None else seat.seat, conn.lang)
                    data = built.get(key)
                    if data is None:
                        data = built[key] = build(conn.user_id, conn.lang)
                    conn.push(data)
                self.build_seconds += time.perf_counter() - started
                self.pushes += 1
        except Exception:
            log.exception("could not push table %s", game_id)
        finally:
            self._tasks.pop(game_id, None)

    async def close(self) -> None:
        for conns in list(self._tables.values()):
            for conn in list(conns):
                self.remove(conn)
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def sse(event: str, payload: object) -> bytes:
    """One Server-Sent Event (the JSON on one ``data:`` line)."""
    return f"event: {event}\ndata: {_JSON.encode(payload)}\n\n".encode()


def sse_head(event: str, shared: dict[str, Any]) -> bytes:
    """The start of an event whose JSON object holds ``shared``'s fields, written once
    for several viewers, each continuing it with :func:`sse_tail`."""
    return f"event: {event}\ndata: {_JSON.encode(shared)[:-1]}".encode()


def sse_tail(head: bytes, own: dict[str, Any], encoded: dict[str, str] | None = None) -> bytes:
    """``head`` continued with the fields of ``own`` and those of ``encoded`` (already
    JSON text), none of them shared ones: the same event as :func:`sse` of all together."""
    parts = [f"{_JSON.encode(key)}:{text}" for key, text in (encoded or {}).items()]
    text = _JSON.encode(own)
    if text != "{}":
        parts.append(text[1:-1])
    return head + "".join("," + part for part in parts).encode() + b"}\n\n"


def json_text(value: object) -> str:
    """``value`` as the JSON text the events write."""
    return _JSON.encode(value)
