"""The one service between handlers and the core: load, verify, apply, persist.

Every game action goes through :meth:`GameService.apply`: it loads the stored game,
checks the version the button was drawn for, lets the core verify and apply the action,
and writes action log + snapshot + score changes in ONE transaction
(:func:`storage.repo.record_action`). Callers hold :meth:`lock` for the game.

Every other write to a game (seats, start, cancel, hand-over, "Sono tornato", the turn
deadline) is a method here too, which takes the game's lock itself; the UI state (which
messages show the game) is written here too, under a lock of its own. The handlers and
the table driver never write a game through ``storage.repo`` directly.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import random
import time
from collections import defaultdict
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from bot.i18n import tr, trn
from bot.prefs import Prefs
from bot.ratings.live import rate_events
from game import Game, IllegalAction, parse_action
from game.events import BriscolaScored, Event, MatchOver, SmazzataScored
from storage import (
    BriscolaLine,
    Database,
    Executor,
    GameRow,
    ScoreDelta,
    SeatRow,
    StaleVersion,
    StatusConflict,
    inbox,
    repo,
)
from storage import ratings as rating_store
from storage.models import Actor, ChatMigrationResult

log = logging.getLogger(__name__)


class Refused(Exception):
    """A request that changes nothing; ``code`` names the alert to show, a message with
    plural forms when ``count`` is given (the form for that number is shown)."""

    def __init__(self, code: str, count: int | None = None, **values: object) -> None:
        super().__init__(code)
        self.code = code
        self.count = count
        self.values = values

    def text(self, lang: str) -> str:
        """The alert in ``lang``."""
        if self.count is None:
            return tr(lang, self.code, **self.values)
        return trn(lang, self.code, self.count, **self.values)


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
    return _prefs_of_json(row.settings_json)


@functools.lru_cache(maxsize=4096)
def _prefs_of_json(text: str | None) -> Prefs:
    """:meth:`Prefs.from_json`, once per distinct text (a match's settings never change,
    and every redraw and every Mini App state reads them: at 200 tables the parse was a
    tenth of the states' cost). ``Prefs`` is frozen, so one instance is shared safely."""
    return Prefs.from_json(text)


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


def game_seats(seats: Sequence[SeatRow], morto: int | None) -> list[SeatRow]:
    """The lobby's seats, in their order, on the game's seats: il morto's seat (drawn by
    the core, R86) is nobody's, so the players after it move up one."""
    numbers = [n for n in range(len(seats) + (morto is not None)) if n != morto]
    ordered = sorted(seats, key=lambda s: s.seat)
    return [replace(seat, seat=n) for seat, n in zip(ordered, numbers, strict=True)]


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
        #: The row stored by the last :meth:`apply` of each game, while no other write
        #: happened since (see :meth:`latest`), and the UI JSON of each game as last saved.
        self._rows: dict[int, GameRow] = {}
        self._ui: dict[int, str] = {}
        self._ui_locks: defaultdict[int, asyncio.Lock] = defaultdict(asyncio.Lock)
        #: Called with a game's id after each write to it is stored (the Mini App's push).
        self.listeners: list[Callable[[int], None]] = []
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

    async def latest(self, game_id: int) -> GameRow | None:
        """The stored game, without reading it again when this process wrote its last
        version (a move is read once: by its own transaction). UI JSON as last saved."""
        row = self._rows.get(game_id)
        if row is None:
            row = await self.fetch(game_id)
        if row is not None and game_id in self._ui:
            row = replace(row, ui_json=self._ui[game_id])
        return row

    def _changed(self, game_id: int) -> None:
        """A write other than a move: the next :meth:`latest` reads the database."""
        self._rows.pop(game_id, None)

    def _written(self, game_id: int) -> None:
        """A write to the game is stored: tell the listeners (whose failure is only
        logged: the write is done)."""
        for listener in self.listeners:
            try:
                listener(game_id)
            except Exception:
                log.exception("listener of game %s failed", game_id)

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
        written in the action's transaction: a refused action changes nothing. So is the
        handled mark of the update that carries the action (the inbox, issue 35)."""
        handled = inbox.current()

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
                handled_update=None if handled is None else handled.update_id,
            )
            if seat_row is not None and strikes != before:
                await repo.set_afk_strikes(tx, game_id, seat_no, strikes)
            if went_away:
                await repo.set_seat_away(tx, game_id, seat_no, True)
            await self._record_scores(tx, row, events)
            await rate_events(tx, row, match_prefs(row).options, work.morto, events)
            fresh = _row_after(row, work, snapshot, tx.now(), deadline, seat_no, strikes,
                               went_away)
            return Applied(fresh, work, seat_no, action.code, events, strikes, went_away)

        try:
            applied = await self.db.run_transaction(transaction)
        except (StaleVersion, StatusConflict):
            self._changed(game_id)
            raise Refused("alert.stale") from None
        except Refused:
            self._changed(game_id)  # what this process last wrote is not what is stored
            raise
        inbox.committed(handled)
        self._cache[game_id] = applied.game  # only once committed
        self._rows[game_id] = applied.row
        self._written(game_id)
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
            elif isinstance(ev, BriscolaScored):
                await repo.record_smazzata_result(tx, row.game_id, ev.smazzata, _result_json(ev))
                won: tuple[int, ...] = () if ev.winner is None else (ev.winner,)
                lines = briscola_lines(row, ev.sides, won, match=False)
                await repo.add_briscola_lines(tx, row.chat_id, lines)
            elif isinstance(ev, MatchOver) and match_prefs(row).options.game == "briscola":
                sides = _sides_of(ev)
                won = tuple(i for i, side in enumerate(sides) if side[0] in ev.winners)
                lines = briscola_lines(row, sides, won, match=True)
                await repo.add_briscola_lines(tx, row.chat_id, lines)
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
        seats = game_seats(seats, game.morto)
        deadline = turn_deadline(prefs.turn_timeout, seats, game)
        async with self.lock(game_id):
            await repo.start_game(
                self.db, game_id, seed, game.to_json(), seats=seats,
                settings_json=prefs.to_json(), turn_deadline=deadline,
            )
            self._changed(game_id)
            self._cache[game_id] = game
            row = await self.row(game_id)
        self._written(game_id)
        return row, game

    def forget(self, game_id: int) -> None:
        self._cache.pop(game_id, None)
        self._rows.pop(game_id, None)
        self._ui.pop(game_id, None)

    # ------------------------------------------------------------------ other writes
    # Each takes the game's lock: the caller must not hold it.

    async def open_lobby(
        self, chat_id: int, thread_id: int, creator_id: int, settings_json: str,
        ui_json: str,
    ) -> int:
        """A new lobby (raises :class:`storage.ActiveGameExists`); return its id."""
        game_id = await repo.create_lobby(self.db, chat_id, thread_id, creator_id, settings_json)
        async with self.lock(game_id):
            await repo.update_ui(self.db, game_id, ui_json)
            self._ui[game_id] = ui_json
        return game_id

    async def take_seat(self, game_id: int, seat: SeatRow, max_seats: int) -> int | None:
        """Seat a player at the lowest free seat of a lobby (see ``repo.take_free_seat``)."""
        async with self.lock(game_id):
            self._changed(game_id)
            return await repo.take_free_seat(self.db, game_id, seat, max_seats)

    async def free_seat(self, game_id: int, seat_no: int) -> bool:
        async with self.lock(game_id):
            self._changed(game_id)
            return await repo.remove_seat(self.db, game_id, seat_no)

    async def cancel(self, game_id: int, expected_status: str | None = None) -> GameRow | None:
        """Cancel a lobby or a running match; None if it is no longer active. The row
        returned is the one before (its messages are still to be told)."""
        async with self.lock(game_id):
            row = await self.fetch(game_id)
            if row is None or not row.is_active:
                return None
            if expected_status is not None and row.status != expected_status:
                return None
            try:
                await repo.set_status(self.db, game_id, "cancelled", expected_status=row.status)
            except StatusConflict:
                return None
            self._changed(game_id)
            self._written(game_id)
            return row

    async def seat_back(self, game_id: int, user_id: int) -> tuple[GameRow, SeatRow]:
        """"Sono tornato": the player takes their seat back from the computer."""
        async with self.lock(game_id):
            row, _ = await self.load(game_id)
            seat = row.seat_of(user_id)
            if seat is None:
                raise Refused("alert.not_seated")
            if not seat.away:
                raise Refused("alert.not_away")
            async with self.db.transaction() as tx:
                await repo.set_seat_away(tx, game_id, seat.seat, False)
                await repo.set_afk_strikes(tx, game_id, seat.seat, 0)
            self._changed(game_id)
            self._written(game_id)
            return await self.row(game_id), seat

    async def hand_over(
        self, game_id: int, seat_no: int, level: str
    ) -> tuple[GameRow, SeatRow] | None:
        """A player left or blocked the bot: a computer plays the seat from now on.
        The row after, and the seat before; None if there was nothing to hand over."""
        async with self.lock(game_id):
            row = await self.row(game_id)
            seat = row.seat(seat_no)
            if seat is None or not seat.is_human or row.status != "playing":
                return None
            name = "🤖 " + seat.display_name
            await repo.replace_seat_with_computer(self.db, game_id, seat_no, name[:64], level)
            self._changed(game_id)
            self._written(game_id)
            return await self.row(game_id), seat

    async def restart_clock(
        self, game_id: int, version: int, slack: float, *, always: bool
    ) -> GameRow | None:
        """Start the clock of ``version``'s turn again from now if it has run for more than
        ``slack`` seconds (``always``: its timer already fired); the row if restarted."""
        async with self.lock(game_id):  # no move in between: the timer is current
            row = await self.fetch(game_id)
            if (
                row is None or row.status != "playing" or row.version != version
                or row.turn_deadline is None
            ):
                return None
            fresh = time.time() + match_prefs(row).turn_timeout
            if fresh - row.turn_deadline < slack and not always:
                return None
            await repo.set_turn_deadline(self.db, game_id, fresh)
            self._changed(game_id)
            self._written(game_id)
            return replace(row, turn_deadline=fresh)

    async def migrate_chat(
        self, old: int, new: int, game_ids: Sequence[int]
    ) -> ChatMigrationResult:
        """A group became a supergroup: its rows follow (no action of these games in
        between: their locks are held, in id order)."""
        async with contextlib.AsyncExitStack() as stack:
            for game_id in sorted(game_ids):
                await stack.enter_async_context(self.lock(game_id))
            result = await repo.migrate_chat(self.db, old, new)
            await rating_store.migrate_chat(self.db, old, new)
            for game_id in game_ids:
                self._changed(game_id)
            return result

    async def save_ui(self, game_id: int, patch: Mapping[str, object]) -> str:
        """Merge a patch into the game's UI JSON (see ``bot.tables.state``), under the
        game's *UI* lock: the record of what was drawn never holds up a move (a press
        would wait behind a redraw's bookkeeping); the patch is one atomic statement."""
        async with self._ui_locks[game_id]:
            text = await self.db.batched(lambda tx: repo.patch_ui(tx, game_id, patch))
            self._ui[game_id] = text
            return text


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


def _sides_of(ev: MatchOver) -> tuple[tuple[int, ...], ...]:
    """Plain Briscola's fixed sides (R98): pairs 0+2 / 1+3 with four, else one seat each."""
    n = len(ev.totals)
    return ((0, 2), (1, 3)) if n == 4 else tuple((s,) for s in range(n))


def briscola_lines(
    row: GameRow, sides: Sequence[Sequence[int]], winners: Collection[int], *, match: bool
) -> list[BriscolaLine]:
    """Plain Briscola: one standings line per side with people in it (computers are not
    ranked: a person paired with a computer counts alone). ``winners``: the indexes of the
    sides that won (none for a patta)."""
    players = sum(len(side) for side in sides)
    lines = []
    for index, side in enumerate(sides):
        seats = [row.seat(s) for s in side]
        people = [s for s in seats if s is not None and s.is_human and s.user_id is not None]
        if not people:
            continue
        key = "+".join(str(s.user_id) for s in sorted(people, key=lambda s: s.user_id or 0))
        name = " + ".join(s.display_name for s in seats if s is not None)
        won = int(index in winners)
        lines.append(
            BriscolaLine(players, key, name[:128], smazzate=int(not match),
                         smazzate_won=won if not match else 0, matches=int(match),
                         matches_won=won if match else 0)
        )
    return lines


def _result_json(ev: SmazzataScored | BriscolaScored) -> str:
    return json.dumps(ev._asdict(), separators=(",", ":"))


def result_from_json(text: str) -> SmazzataScored | BriscolaScored:
    """A stored smazzata result back as the core's event (for re-rendering)."""
    data = json.loads(text)
    if data.get("kind") == "briscola_scored":
        data["sides"] = tuple(tuple(side) for side in data["sides"])
        data["points"], data["wins"] = tuple(data["points"]), tuple(data["wins"])
        return BriscolaScored(**data)
    data["deltas"], data["totals"] = tuple(data["deltas"]), tuple(data["totals"])
    return SmazzataScored(**data)
