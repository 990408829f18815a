"""The game service against a real database, on both engines: AFK strikes are written
with the move (one transaction), turn deadlines come from the match's stored settings,
and a move costs PostgreSQL two round trips."""

from __future__ import annotations

import random
import time
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest

from bench.sim import simple_policy
from bot.prefs import Prefs
from bot.service import GameService, Refused, match_prefs
from storage import Database, SeatRow, open_database, repo

CHAT = -1001234


@pytest.fixture
async def db(database_url: str) -> AsyncIterator[Database]:
    database = await open_database(database_url, clock=lambda: 1_800_000_000.0)
    yield database
    await database.close()


async def start(db: Database, timeout: int, thread: int = 0) -> tuple[GameService, int]:
    service = GameService(db)
    service.seed_source = lambda: 11
    gid = await repo.create_lobby(db, CHAT, thread, 100, "{}")
    seats = [SeatRow.human(i, 100 + i, f"P{i}") for i in range(5)]
    await service.start(gid, seats, Prefs(turn_timeout=timeout))
    return service, gid


async def in_turn(service: GameService, gid: int) -> tuple[int, int, str]:
    """(version, seat in turn, a legal action of that seat)."""
    row, game = await service.load(gid)
    seat = game.current_seat()
    assert seat is not None
    return row.version, seat, game.view(seat).legal[0]


async def test_timeout_strike_is_written_with_the_move(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    service, gid = await start(db, timeout=30)
    version, seat, code = await in_turn(service, gid)
    applied = await service.apply(gid, version, seat, code, "timeout", afk="strike")
    assert (applied.strikes, applied.went_away) == (1, False)
    assert applied.row.seat(seat).afk_strikes == 1  # type: ignore[union-attr]
    with pytest.raises(Refused):  # a stale timeout: no move, no strike
        await service.apply(gid, version, seat, code, "timeout", afk="strike")
    row = await repo.get_game(db, gid)
    assert row is not None and row.seat(seat).afk_strikes == 1  # type: ignore[union-attr]

    version, other, code = await in_turn(service, gid)
    await repo.set_afk_strikes(db, gid, other, 1)

    async def disk_full(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr(repo, "set_seat_away", disk_full)  # fails after move + strike
    with pytest.raises(RuntimeError):
        await service.apply(gid, version, other, code, "timeout", afk="strike")
    row = await repo.get_game(db, gid)
    assert row is not None and row.version == version  # the move was rolled back...
    assert row.seat(other).afk_strikes == 1 and not row.seat(other).away  # type: ignore[union-attr]
    assert len(await repo.load_actions(db, gid)) == 1  # ...with its strike
    monkeypatch.undo()

    applied = await service.apply(gid, version, other, code, "timeout", afk="strike")
    assert (applied.strikes, applied.went_away) == (2, True)
    assert applied.row == await repo.get_game(db, gid)  # the row is what was stored
    assert applied.row.seat(other).away and applied.row.version == version + 1  # type: ignore[union-attr]

    version, third, code = await in_turn(service, gid)
    await repo.set_afk_strikes(db, gid, third, 1)
    applied = await service.apply(gid, version, third, code, "human", 100 + third, afk="reset")
    assert applied.row == await repo.get_game(db, gid)
    assert applied.strikes == 0 and applied.row.seat(third).afk_strikes == 0  # type: ignore[union-attr]


async def test_deadline_comes_from_the_match_not_the_chat(db: Database) -> None:
    _, gid = await start(db, timeout=30)
    await repo.save_chat_settings(db, CHAT, "it", Prefs(turn_timeout=0).to_json())
    row = await repo.get_game(db, gid)
    assert row is not None and match_prefs(row).turn_timeout == 30
    assert row.turn_deadline is not None and 28 < row.turn_deadline - time.time() <= 30

    restarted = GameService(db)  # a new process: nothing cached
    version, seat, code = await in_turn(restarted, gid)
    applied = await restarted.apply(gid, version, seat, code, "human", 100 + seat)
    deadline = applied.row.turn_deadline
    assert deadline is not None and 28 < deadline - time.time() <= 30

    _, gid = await start(db, timeout=0, thread=9)  # no timeout: no deadline at all
    row = await repo.get_game(db, gid)
    assert row is not None and row.turn_deadline is None


class Trips:
    """The statements the asyncpg connection sends, by kind: each ``execute``, ``fetch``
    or ``executemany`` call is one round trip to the server (a Sync; ``executemany``
    pipelines its executions), the prepared statements being cached."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.sent: list[str] = []
        for name in ("execute", "fetch", "executemany"):
            monkeypatch.setattr(asyncpg.Connection, name, self._counted(name))

    def _counted(self, name: str) -> Any:
        original = getattr(asyncpg.Connection, name)

        async def counted(conn: asyncpg.Connection, query: str, *args: Any, **kw: Any) -> Any:
            self.sent.append(query.split(None, 1)[0].upper())
            return await original(conn, query, *args, **kw)

        return counted

    async def turn(self, service: GameService, gid: int) -> tuple[int, int, str]:
        """(version, seat in turn, the action of bench.sim's policy), reads not counted."""
        row, game = await service.load(gid)
        seat = game.current_seat()
        assert seat is not None
        self.sent.clear()
        return row.version, seat, simple_policy(game.view(seat), random.Random(row.version))

    def take(self) -> list[str]:
        sent, self.sent = self.sent, []
        return sent


async def test_a_move_is_two_round_trips_on_postgresql(
    pg_cluster: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read the game, write action + snapshot (one statement, a transaction of its own):
    two round trips; a move with more to write (a strike, the smazzata's scores) sends
    them in one BEGIN ... COMMIT. The figure of a whole smazzata is pinned so that it
    cannot grow back unnoticed (it was 7 per move: BEGIN, read, SAVEPOINT, UPDATE,
    INSERT, RELEASE, COMMIT)."""
    url = pg_cluster.new_database()
    db = await open_database(url)
    try:
        service, gid = await start(db, timeout=30)
        trips = Trips(monkeypatch)
        version, seat, code = await trips.turn(service, gid)
        await service.apply(gid, version, seat, code, "human", 100 + seat)
        assert trips.take() == ["SELECT", "WITH"]  # the game; game + action
        version, seat, code = await trips.turn(service, gid)
        with pytest.raises(Refused):  # a stale press: one read, nothing written
            await service.apply(gid, version - 1, seat, code, "human", 100 + seat)
        assert trips.take() == ["SELECT"]
        applied = await service.apply(gid, version, seat, code, "timeout", afk="strike")
        assert applied.strikes == 1
        assert trips.take() == ["SELECT", "BEGIN", "WITH", "WITH", "COMMIT"]  # + the strike

        per_move: list[int] = []
        smazzata = applied.game.to_json()
        for _ in range(200):
            version, seat, code = await trips.turn(service, gid)
            applied = await service.apply(gid, version, seat, code, "human", 100 + seat)
            per_move.append(len(trips.take()))
            if any(type(e).__name__ == "SmazzataScored" for e in applied.events):
                break
        # the last move also writes the result and the five players' scores, and rates
        # the smazzata (issue 48): one read of the players' ratings (an upsert that locks
        # and returns them), then the unit, its seats and the new ratings (pipelined)
        assert per_move[-1] == 10  # SELECT, BEGIN, WITH, INSERT, INSERT, INSERT … RETURNING,
        #                            INSERT, INSERT, UPDATE, COMMIT
        assert per_move[:-1] == [2] * (len(per_move) - 1), per_move
        assert smazzata != applied.game.to_json()
        row = await repo.get_game(db, gid)
        assert row is not None and row.version == applied.row.version
        assert [a.seq for a in await repo.load_actions(db, gid)] == list(
            range(1, row.version + 1)
        )
    finally:
        await db.close()
        pg_cluster.drop_database(url)
