"""The one service between handlers and the core: load, verify, apply, persist.

Every game action goes through :meth:`GameService.apply`: it loads the stored game,
checks the version the button was drawn for, lets the core verify and apply the action,
and writes action log + snapshot + score changes in ONE transaction
(:func:`storage.repo.record_action`). Callers hold :meth:`lock` for the game.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from collections import defaultdict
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from bot.prefs import Prefs
from game import Game, IllegalAction, parse_action
from game.events import Event, MatchOver, SmazzataScored
from storage import (
    Database,
    Executor,
    GameRow,
    ScoreDelta,
    SeatRow,
    StaleVersion,
    StatusConflict,
    repo,
)
from storage.models import Actor

log = logging.getLogger(__name__)


class Refused(Exception):
    """A request that changes nothing; ``code`` names the alert to show."""

    def __init__(self, code: str, **values: object) -> None:
        super().__init__(code)
        self.code = code
        self.values = values


#: Consecutive turns left to time out before a computer plays a seat ("away").
AWAY_AFTER = 2
AfkChange = Literal["reset", "strike"]
#: Finds (and checks) the seat acting in the stored game; raises :class:`Refused`.
SeatCheck = Callable[[GameRow, Game], int]


@dataclass(frozen=True, slots=True)
class Applied:
    row: GameRow
    game: Game
    seat: int
    code: str
    events: list[Event]
    #: The seat's consecutive timeouts after this action, and whether it just went away.
    strikes: int = 0
    went_away: bool = False


def match_prefs(row: GameRow) -> Prefs:
    """The settings a match was started with (stored with the game, not the chat's)."""
    return Prefs.from_json(row.settings_json)


def turn_deadline(
    timeout: int, seats: Sequence[SeatRow], game: Game, away: Collection[int] = (),
    now: float | None = None,
) -> float | None:
    """When the seat in turn times out; None without timeout or if no human is in turn."""
    seat_no = game.current_seat()
    if not timeout or seat_no is None or game.is_over() or seat_no in away:
        return None
    seat = next((s for s in seats if s.seat == seat_no), None)
    if seat is None or not seat.is_human or seat.away:
        return None
    return (time.time() if now is None else now) + timeout


def names_of(row: GameRow, n: int = 5) -> list[str]:
    names = ["?"] * n
    for s in row.seats:
        if 0 <= s.seat < n:
            names[s.seat] = s.display_name
    return names


class GameService:
    def __init__(self, db: Database) -> None:
        self.db = db
        self._locks: defaultdict[int, asyncio.Lock] = defaultdict(asyncio.Lock)
        self._cache: dict[int, Game] = {}
        #: Where match seeds come from (tests replace it to get known deals).
        self.seed_source: Callable[[], int] = lambda: random.SystemRandom().randrange(1, 2**62)

    def lock(self, game_id: int) -> asyncio.Lock:
        return self._locks[game_id]

    # ------------------------------------------------------------------ loading

    async def fetch(self, game_id: int) -> GameRow | None:
        """The stored game, or None.  Its snapshot is not read (None) when the cached game
        is at the stored version: :meth:`game_of` returns the cached one."""
        return await repo.get_game(
            self.db, game_id, snapshot_unless_version=self._cached_version(game_id)
        )

    def _cached_version(self, game_id: int) -> int:
        """The version of the cached game (-1 if none): its snapshot need not be read."""
        cached = self._cache.get(game_id)
        return -1 if cached is None else cached.version

    async def row(self, game_id: int) -> GameRow:
        row = await self.fetch(game_id)
        if row is None:
            raise Refused("alert.no_game")
        return row

    def game_of(self, row: GameRow) -> Game:
        """The core game of a stored row (cached per version; a copy is never shared)."""
        cached = self._cache.get(row.game_id)
        if cached is not None and cached.version == row.version:
            return cached
        if row.snapshot_json is None:  # not started (or read without it, then forgotten)
            raise Refused("alert.no_game")
        game = Game.from_json(row.snapshot_json)
        self._cache[row.game_id] = game
        return game

    async def load(self, game_id: int) -> tuple[GameRow, Game]:
        row = await self.row(game_id)
        if row.status != "playing":
            raise Refused("alert.not_playing")
        return row, self.game_of(row)

    # ------------------------------------------------------------------ actions

    async def apply(
        self,
        game_id: int,
        expected_version: int,
        seat: int | SeatCheck,
        code: str,
        actor: Actor,
        user_id: int | None = None,
        *,
        afk: AfkChange | None = None,
    ) -> Applied:
        """Verify and apply one action; persist it in one transaction. Caller holds lock.

        Read, checks and writes are one transaction run at once on the connection
        (:meth:`storage.Database.run_transaction`), so a click is stored quickly however
        busy the event loop is with redraws. ``seat``: the seat acting, or a
        :data:`SeatCheck` that finds it in the stored game (raising :class:`Refused`).
        ``afk="strike"`` (a timeout) adds a strike to the seat and, at :data:`AWAY_AFTER`,
        marks it away; ``afk="reset"`` (the human acted) clears the strikes. Both are
        written in the action's transaction: a refused action changes nothing."""

        async def transaction(tx: Executor) -> Applied:
            row = await repo.get_game(
                tx, game_id, snapshot_unless_version=self._cached_version(game_id)
            )
            if row is None:
                raise Refused("alert.no_game")
            if row.status != "playing":
                raise Refused("alert.not_playing")
            game = self.game_of(row)
            seat_no = seat(row, game) if callable(seat) else seat
            if row.version != expected_version:
                raise Refused("alert.stale")
            try:
                action = game.verify(seat_no, parse_action(code))
            except IllegalAction as exc:
                raise Refused("reason." + exc.code) from None
            work = game.clone()
            events = work.apply(seat_no, action)
            seat_row = row.seat(seat_no)
            before = seat_row.afk_strikes if seat_row is not None else 0
            strikes = before + 1 if afk == "strike" else 0 if afk == "reset" else before
            went_away = (
                afk == "strike" and seat_row is not None and not seat_row.away
                and strikes >= AWAY_AFTER
            )
            away = {seat_no} if went_away else set()
            deadline = turn_deadline(match_prefs(row).turn_timeout, row.seats, work, away)
            snapshot = work.to_json()
            await repo.record_action(
                tx, game_id, expected_version, seat_no, action.code, actor, user_id,
                snapshot, "finished" if work.is_over() else None, turn_deadline=deadline,
            )
            if seat_row is not None and strikes != before:
                await repo.set_afk_strikes(tx, game_id, seat_no, strikes)
            if went_away:
                await repo.set_seat_away(tx, game_id, seat_no, True)
            await self._record_scores(tx, row, events)
            fresh = _row_after(row, work, snapshot, tx.now(), deadline, seat_no, strikes,
                               went_away)
            return Applied(fresh, work, seat_no, action.code, events, strikes, went_away)

        try:
            applied = await self.db.run_transaction(transaction)
        except (StaleVersion, StatusConflict):
            raise Refused("alert.stale") from None
        self._cache[game_id] = applied.game  # only once committed
        return applied

    async def _record_scores(self, tx: Executor, row: GameRow, events: list[Event]) -> None:
        humans = {s.seat: s for s in row.seats if s.is_human and s.user_id is not None}
        for ev in events:
            if isinstance(ev, SmazzataScored):
                await repo.record_smazzata_result(
                    tx,
                    row.game_id,
                    ev.smazzata,
                    _result_json(ev),
                )
                team = {ev.chiamante} | ({ev.socio} if ev.socio is not None else set())
                deltas = [
                    ScoreDelta(
                        user_id=s.user_id,  # type: ignore[arg-type]
                        display_name=s.display_name,
                        points=ev.deltas[seat],
                        won=(seat in team) == ev.won,
                        chiamante=seat == ev.chiamante,
                    )
                    for seat, s in sorted(humans.items())
                ]
                if deltas:
                    await repo.apply_score_deltas(tx, row.chat_id, deltas)
            elif isinstance(ev, MatchOver):
                ids = [s.user_id for s in humans.values() if s.user_id is not None]
                winners = [humans[w].user_id for w in ev.winners if w in humans]
                await repo.record_match_end(
                    tx,
                    row.chat_id,
                    ids,
                    [w for w in winners if w is not None],
                )

    # ------------------------------------------------------------------ start

    async def start(
        self, game_id: int, seats: Sequence[SeatRow], prefs: Prefs
    ) -> tuple[GameRow, Game]:
        """Deal the first smazzata; the match keeps ``prefs`` (options, timeout, language)
        from now on: settings, seats, snapshot and first deadline in one transaction."""
        seed = self.seed_source()
        game = Game.new(prefs.options, rng=random.Random(seed))
        deadline = turn_deadline(prefs.turn_timeout, seats, game)
        await repo.start_game(
            self.db, game_id, seed, game.to_json(), seats=seats,
            settings_json=prefs.to_json(), turn_deadline=deadline,
        )
        self._cache[game_id] = game
        row = await self.row(game_id)
        return row, game

    def forget(self, game_id: int) -> None:
        self._cache.pop(game_id, None)


def _row_after(
    row: GameRow, work: Game, snapshot: str, now: int, deadline: float | None, seat_no: int,
    strikes: int, went_away: bool,
) -> GameRow:
    """The row as :meth:`GameService.apply` stored it, without reading it back."""
    over = work.is_over()
    seats = tuple(
        replace(s, afk_strikes=strikes, away=s.away or went_away)
        if s.seat == seat_no else s
        for s in row.seats
    )
    return replace(
        row, version=row.version + 1, snapshot_json=snapshot, updated_at=now,
        status="finished" if over else row.status,
        finished_at=now if over else row.finished_at,
        turn_deadline=None if over else deadline, seats=seats,
    )


def _result_json(ev: SmazzataScored) -> str:
    return json.dumps(ev._asdict(), separators=(",", ":"))


def result_from_json(text: str) -> SmazzataScored:
    """A stored smazzata result back as the core's event (for re-rendering)."""
    data = json.loads(text)
    data["deltas"], data["totals"] = tuple(data["deltas"]), tuple(data["totals"])
    return SmazzataScored(**data)
