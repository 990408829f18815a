"""The Mini App's live push (bot/webapp/hub.py): a slow or dead client never holds up the
others, its queue stays bounded, a reconnect starts from the current state; and the push
benchmark (bench/webapp.py) runs and prints its figures."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

from bot.webapp.hub import QUEUE_STATES, Connection, Hub, json_text, sse, sse_head, sse_tail


@dataclass
class FakeRow:
    version: int

    def seat_of(self, user_id: int) -> Any:
        return None


async def test_a_slow_client_drops_old_states_and_holds_up_nobody() -> None:
    stored = {"version": 0}
    builds: list[tuple[int, int]] = []

    async def load(game_id: int) -> Any:
        return FakeRow(stored["version"]), None

    def build(row: Any, game: Any) -> Any:
        def viewer(user_id: int, lang: str) -> bytes:
            builds.append((row.version, user_id))
            return sse("state", {"version": row.version})
        return viewer

    hub = Hub(load, build)
    reader, sleeper = Connection(1, 7, "it"), Connection(2, 7, "it")
    other_table = Connection(3, 8, "it")
    for conn in (reader, sleeper, other_table):
        hub.add(conn)
    got: list[bytes] = []

    async def read() -> None:
        while True:
            data = await reader.next(5)
            if data is not None:
                got.append(data)

    task = asyncio.create_task(read())
    for version in range(1, 101):
        stored["version"] = version
        hub.changed(7)
        await asyncio.sleep(0)  # the push task runs; nobody waits for the sleeper
        await asyncio.sleep(0)
    await asyncio.sleep(0.05)
    task.cancel()
    assert got[-1] == sse("state", {"version": 100})
    assert len(got) >= 90  # the reader kept up (pushes may coalesce)
    assert len(sleeper.queue) <= QUEUE_STATES and sleeper.dropped > 0
    assert sleeper.queue[-1] == got[-1]  # what it will read next: the newest state
    assert not other_table.queue  # another table is not pushed
    assert len({user for _, user in builds}) == 1  # one build per kind of viewer
    # a reconnect: a new connection, then the next change, gets the current state
    hub.remove(sleeper)
    fresh = Connection(2, 7, "it")
    hub.add(fresh)
    hub.changed(7)
    assert await asyncio.wait_for(fresh.next(1), 1) == sse("state", {"version": 100})
    await hub.close()
    assert hub.connections() == 0


def test_an_event_written_in_two_parts_is_the_event_of_both() -> None:
    """The fields every viewer shares are written once (sse_head), each viewer's own
    ones after them (sse_tail, some already JSON text): one event, one JSON object."""
    shared = {"type": "state", "table": 7, "version": 3, "text": "Tocca a te ⏳ \"x\""}
    own = {"me": 2, "hand": [{"card": "Ad"}], "seats": [{"you": True}]}
    head = sse_head("state", shared)
    assert sse_tail(head, own) == sse("state", {**shared, **own})
    assert sse_tail(head, {}) == sse("state", shared)
    encoded = {"seats": json_text(own["seats"])}
    both = sse_tail(head, {"me": 2, "hand": own["hand"]}, encoded)
    assert both.startswith(b"event: state\ndata: {") and both.endswith(b"}\n\n")
    assert json.loads(both.decode().split("data: ", 1)[1]) == {**shared, **own}
    assert json.loads(sse_tail(head, {}, encoded).decode().split("data: ", 1)[1]) == {
        **shared, "seats": own["seats"]}


def test_the_push_benchmark_prints_its_figures() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.webapp", "--tables", "3", "--seconds", "1.5",
         "--moves-per-second", "20"],
        capture_output=True, text=True, timeout=120, check=True,
    )
    lines = dict(line.split(None, 1) for line in done.stdout.splitlines()[1:])
    assert lines["connections"].strip() == "15"
    assert int(lines["moves"]) > 10
    assert int(lines["deliveries"]) == int(lines["expected"])  # every seat got every move
    assert float(lines["p95_ms"]) < 1000
