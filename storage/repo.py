"""Repository functions: small, parameterised SQL with typed results.

Every function takes an :class:`~storage.db.Executor` first – the :class:`Database`
itself (each call is then atomic on its own) or a :class:`Transaction` to group several
calls into one transaction::

    async with db.transaction() as tx:
        game = await repo.get_game(tx, game_id)
        version = await repo.record_action(tx, game_id, game.version, seat, "P", "human",
                                           user_id, new_snapshot)
        await repo.apply_score_deltas(tx, game.chat_id, deltas)

Functions that write several statements open a (nested) transaction themselves, so they
are atomic in both cases (on PostgreSQL those a move uses are single statements instead:
a statement is atomic on its own, and a move's writes then cost no extra round trips).
JSON arguments are text; they are checked to be valid JSON
(``ValueError`` otherwise) but never interpreted, except by :func:`patch_ui`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from . import inbox
from .db import Executor
from .errors import (
    ActiveGameExists,
    GameNotFound,
    IntegrityViolation,
    SeatTaken,
    StaleVersion,
    StatusConflict,
)
from .models import (
    ACTORS,
    GAME_STATUSES,
    ActionRow,
    Actor,
    BriscolaLine,
    BriscolaScoreRow,
    ChatMigrationResult,
    ChatPaceRow,
    ChatRow,
    FinishedGameRow,
    GameRow,
    GameStatus,
    PlayedSmazzataRow,
    ScoreDelta,
    ScoreRow,
    SeatRow,
    SmazzataResultRow,
    UserRow,
)

__all__ = [
    "add_afk_strike",
    "add_briscola_lines",
    "add_seat",
    "apply_score_deltas",
    "briscola_leaderboard",
    "create_lobby",
    "database_size",
    "games_of_user",
    "get_active_game",
    "get_chat_settings",
    "get_game",
    "get_score",
    "get_user",
    "leaderboard",
    "list_finished_games",
    "list_unfinished_games",
    "load_actions",
    "load_chat_pace",
    "load_smazzata_results",
    "migrate_chat",
    "patch_ui",
    "played_smazzate",
    "record_action",
    "record_match_end",
    "record_smazzata_result",
    "remove_seat",
    "replace_seat_with_computer",
    "reset_scores",
    "save_chat_pace",
    "save_chat_settings",
    "set_afk_strikes",
    "set_private_ok",
    "set_seat_away",
    "set_seats",
    "set_status",
    "set_turn_deadline",
    "start_game",
    "take_free_seat",
    "update_ui",
    "upsert_user",
]

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_ACTIVE_SQL = "('lobby', 'playing')"
_ENDED = ("finished", "cancelled")


# --------------------------------------------------------------------------- helpers


def _json(value: str, what: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a JSON string, got {type(value).__name__}")
    try:
        json.loads(value)
    except ValueError as e:
        raise ValueError(f"{what} is not valid JSON: {e}") from None
    return value


def _int64(value: int, what: str) -> int:
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise ValueError(f"{what} does not fit a signed 64-bit integer: {value}")
    return value


def _status(value: str) -> GameStatus:
    if value not in GAME_STATUSES:
        raise ValueError(f"bad game status {value!r}")
    return value


_SEAT_FIELDS = (
    "s.seat, s.kind, s.user_id, s.display_name, s.language_code, s.computer_level, "
    "s.afk_strikes, s.away"
)

#: A game's columns with its seats as one JSON array (per dialect; an empty array for a
#: game without seats).
_GAME_COLUMNS = {
    dialect: f"""
    g.game_id, g.chat_id, g.thread_id, g.status, g.creator_id, g.settings_json, g.seed,
    g.version, g.ui_json, g.turn_deadline, g.created_at, g.updated_at, g.finished_at,
    (SELECT {seats} FROM seats AS s WHERE s.game_id = g.game_id) AS seats_json
"""
    for dialect, seats in (
        ("sqlite", f"json_group_array(json_array({_SEAT_FIELDS}))"),
        ("postgres", f"COALESCE(json_agg(json_build_array({_SEAT_FIELDS})), '[]')"),
    )
}


async def _select_games(
    ex: Executor, where: str, params: Sequence[Any], *, snapshot_unless_version: int = -1
) -> list[GameRow]:
    """Games matching ``where`` (on alias ``g``) with their seats, one row per game in one
    query, so the result is a consistent snapshot.  The snapshot JSON (the largest column)
    is left out (None) when the game is at ``snapshot_unless_version``."""
    rows = await ex.fetch(
        f"SELECT {_GAME_COLUMNS[ex.dialect]}, "
        f"CASE WHEN g.version = ? THEN NULL ELSE g.snapshot_json END AS snapshot_json "
        f"FROM games AS g WHERE {where} ORDER BY g.game_id",
        (snapshot_unless_version, *params),
    )
    return [
        GameRow(
            game_id=r["game_id"],
            chat_id=r["chat_id"],
            thread_id=r["thread_id"],
            status=r["status"],
            creator_id=r["creator_id"],
            settings_json=r["settings_json"],
            seed=r["seed"],
            version=r["version"],
            snapshot_json=r["snapshot_json"],
            ui_json=r["ui_json"],
            turn_deadline=r["turn_deadline"],
            created_at=r["created_at"],
            updated_at=r["updated_at"],
            finished_at=r["finished_at"],
            seats=_seats_of(r["seats_json"]),
        )
        for r in rows
    ]


def _seats_of(seats_json: str) -> tuple[SeatRow, ...]:
    seats = [
        SeatRow(
            seat=seat,
            kind=kind,
            user_id=user_id,
            display_name=display_name,
            language_code=language_code,
            computer_level=computer_level,
            afk_strikes=afk_strikes,
            away=bool(away),
        )
        for seat, kind, user_id, display_name, language_code, computer_level, afk_strikes, away
        in json.loads(seats_json)
    ]
    return tuple(sorted(seats, key=lambda s: s.seat))


async def _require_status(ex: Executor, game_id: int, expected: str | tuple[str, ...]) -> None:
    status = await ex.fetchval("SELECT status FROM games WHERE game_id = ?", (game_id,))
    if status is None:
        raise GameNotFound(game_id)
    allowed = (expected,) if isinstance(expected, str) else expected
    if status not in allowed:
        raise StatusConflict(game_id, expected, status)


async def _touch(ex: Executor, game_id: int) -> None:
    await ex.execute("UPDATE games SET updated_at = ? WHERE game_id = ?", (ex.now(), game_id))


# --------------------------------------------------------------------------- chats


async def get_chat_settings(ex: Executor, chat_id: int) -> ChatRow | None:
    """The stored preferences of a chat, or None if it never saved any."""
    r = await ex.fetchrow(
        "SELECT chat_id, language, settings_json, updated_at FROM chats WHERE chat_id = ?",
        (chat_id,),
    )
    return None if r is None else ChatRow.from_row(r)


async def save_chat_settings(
    ex: Executor, chat_id: int, language: str | None, settings_json: str
) -> None:
    """Create or replace the preferences of a chat."""
    await ex.execute(
        "INSERT INTO chats (chat_id, language, settings_json, updated_at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (chat_id) DO UPDATE SET language = excluded.language, "
        "settings_json = excluded.settings_json, updated_at = excluded.updated_at",
        (_int64(chat_id, "chat_id"), language, _json(settings_json, "settings_json"), ex.now()),
    )


# --------------------------------------------------------------------------- pacing


async def load_chat_pace(ex: Executor, since: float) -> list[ChatPaceRow]:
    """The pacing state of the chats saved at or after ``since`` (unix seconds: older
    rows no longer constrain anything)."""
    rows = await ex.fetch(
        "SELECT chat_id, next_at, sent_json, saved_at FROM chat_pace WHERE saved_at >= ? "
        "ORDER BY chat_id", (float(since),),
    )
    return [ChatPaceRow.from_row(r) for r in rows]


async def save_chat_pace(ex: Executor, rows: Sequence[ChatPaceRow], before: float) -> None:
    """Create or replace the pacing state of these chats (one transaction), and delete the
    rows saved before ``before`` (unix seconds: older than a rolling window)."""
    async with ex.transaction() as tx:
        if rows:
            await tx.executemany(
                "INSERT INTO chat_pace (chat_id, next_at, sent_json, saved_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (chat_id) DO UPDATE SET "
                "next_at = excluded.next_at, sent_json = excluded.sent_json, "
                "saved_at = excluded.saved_at",
                [(_int64(r.chat_id, "chat_id"), float(r.next_at), _json(r.sent_json, "sent_json"),
                  float(r.saved_at)) for r in rows],
            )
        await tx.execute("DELETE FROM chat_pace WHERE saved_at < ?", (float(before),))


# --------------------------------------------------------------------------- users


async def upsert_user(
    ex: Executor,
    user_id: int,
    first_name: str,
    last_name: str | None = None,
    username: str | None = None,
    language_code: str | None = None,
) -> None:
    """Insert or refresh a user's profile (``private_ok`` is left unchanged)."""
    await ex.execute(
        "INSERT INTO users (user_id, first_name, last_name, username, language_code, "
        "updated_at) VALUES (?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (user_id) DO UPDATE SET first_name = excluded.first_name, "
        "last_name = excluded.last_name, username = excluded.username, "
        "language_code = excluded.language_code, updated_at = excluded.updated_at",
        (_int64(user_id, "user_id"), first_name, last_name, username, language_code, ex.now()),
    )


async def set_private_ok(ex: Executor, user_id: int, ok: bool) -> None:
    """Record whether the bot may write to the user privately (Start pressed and not
    blocked).  Creates a bare user row if needed."""
    await ex.execute(
        "INSERT INTO users (user_id, private_ok, updated_at) VALUES (?, ?, ?) "
        "ON CONFLICT (user_id) DO UPDATE SET private_ok = excluded.private_ok, "
        "updated_at = excluded.updated_at",
        (_int64(user_id, "user_id"), int(bool(ok)), ex.now()),
    )


async def get_user(ex: Executor, user_id: int) -> UserRow | None:
    """A user, or None if unknown."""
    r = await ex.fetchrow(
        "SELECT user_id, first_name, last_name, username, language_code, private_ok, "
        "updated_at FROM users WHERE user_id = ?",
        (user_id,),
    )
    return None if r is None else UserRow.from_row(r)


# --------------------------------------------------------------------------- games


async def create_lobby(
    ex: Executor, chat_id: int, thread_id: int, creator_id: int | None, settings_json: str
) -> int:
    """Create a game in ``lobby`` status and return its id.

    :raises ActiveGameExists: the chat + thread already has a lobby or running game
        (``.game_id`` is that game).
    """
    _int64(chat_id, "chat_id")
    _int64(thread_id, "thread_id")
    _json(settings_json, "settings_json")
    now = ex.now()
    async with ex.transaction() as tx:
        existing = await tx.fetchval(
            f"SELECT game_id FROM games WHERE chat_id = ? AND thread_id = ? "
            f"AND status IN {_ACTIVE_SQL}",
            (chat_id, thread_id),
        )
        if existing is not None:
            raise ActiveGameExists(chat_id, thread_id, existing)
        try:
            game_id = await tx.fetchval(
                "INSERT INTO games (chat_id, thread_id, status, creator_id, settings_json, "
                "created_at, updated_at) VALUES (?, ?, 'lobby', ?, ?, ?, ?) RETURNING game_id",
                (chat_id, thread_id, creator_id, settings_json, now, now),
            )
        except IntegrityViolation as e:  # belt and braces: the unique index fired
            raise ActiveGameExists(chat_id, thread_id, None) from e
    return int(game_id)


async def get_game(
    ex: Executor, game_id: int, *, snapshot_unless_version: int = -1
) -> GameRow | None:
    """A game with its seats, or None.  ``snapshot_unless_version``: a version of the game
    the caller already has in memory; at that version ``snapshot_json`` is not read (None).
    """
    games = await _select_games(
        ex, "g.game_id = ?", (game_id,), snapshot_unless_version=snapshot_unless_version
    )
    return games[0] if games else None


async def get_active_game(ex: Executor, chat_id: int, thread_id: int = 0) -> GameRow | None:
    """The lobby or running game of a chat + forum topic (0 = no topic), or None."""
    games = await _select_games(
        ex,
        f"g.chat_id = ? AND g.thread_id = ? AND g.status IN {_ACTIVE_SQL}",
        (chat_id, thread_id),
    )
    return games[0] if games else None


async def list_unfinished_games(ex: Executor) -> list[GameRow]:
    """All games in ``lobby`` or ``playing`` status (to resume after a restart)."""
    return await _select_games(ex, f"g.status IN {_ACTIVE_SQL}", ())


async def list_finished_games(ex: Executor, since: int) -> list[FinishedGameRow]:
    """Games that finished at or after ``since`` (unix seconds), oldest first, without
    their snapshots (after a restart: which of them still need their last redraw)."""
    rows = await ex.fetch(
        "SELECT game_id, chat_id, version, ui_json, finished_at FROM games "
        "WHERE status = 'finished' AND finished_at >= ? ORDER BY finished_at, game_id",
        (since,),
    )
    return [
        FinishedGameRow(r["game_id"], r["chat_id"], r["version"], r["ui_json"], r["finished_at"])
        for r in rows
    ]


async def games_of_user(ex: Executor, user_id: int, *, active_only: bool = True) -> list[GameRow]:
    """Games in which the user holds a seat (by default only lobby/playing ones), in any
    chat.  A seat taken over by a computer no longer counts."""
    where = "g.game_id IN (SELECT game_id FROM seats WHERE user_id = ?)"
    if active_only:
        where += f" AND g.status IN {_ACTIVE_SQL}"
    return await _select_games(ex, where, (user_id,))


def _seat_params(game_id: int, s: SeatRow) -> tuple[Any, ...]:
    if s.user_id is not None:
        _int64(s.user_id, "user_id")
    return (
        game_id,
        s.seat,
        s.kind,
        s.user_id,
        s.display_name,
        s.language_code,
        s.computer_level,
        s.afk_strikes,
        int(s.away),
    )


_INSERT_SEAT = (
    "INSERT INTO seats (game_id, seat, kind, user_id, display_name, language_code, "
    "computer_level, afk_strikes, away) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


async def set_seats(
    ex: Executor,
    game_id: int,
    seats: Iterable[SeatRow],
    *,
    expected_status: GameStatus | tuple[GameStatus, ...] = "lobby",
) -> None:
    """Replace all seats of a game (by default only while it is in the lobby).

    :raises StatusConflict: the game is not in ``expected_status``.
    :raises SeatTaken: two seats with the same number or the same user.
    """
    seat_list = list(seats)
    numbers = [s.seat for s in seat_list]
    users = [s.user_id for s in seat_list if s.user_id is not None]
    if len(set(numbers)) != len(numbers) or len(set(users)) != len(users):
        raise SeatTaken(game_id, None, None)
    async with ex.transaction() as tx:
        await _require_status(tx, game_id, expected_status)
        await tx.execute("DELETE FROM seats WHERE game_id = ?", (game_id,))
        await tx.executemany(_INSERT_SEAT, [_seat_params(game_id, s) for s in seat_list])
        await _touch(tx, game_id)


async def add_seat(ex: Executor, game_id: int, seat: SeatRow) -> None:
    """Seat a player (human or computer) at ``seat.seat`` of a lobby.

    :raises StatusConflict: the game is no longer in the lobby.
    :raises SeatTaken: the seat is occupied or the user already sits at this table.
    """
    async with ex.transaction() as tx:
        await _require_status(tx, game_id, "lobby")
        try:
            await tx.execute(_INSERT_SEAT, _seat_params(game_id, seat))
        except IntegrityViolation as e:
            raise SeatTaken(game_id, seat.seat, seat.user_id) from e
        await _touch(tx, game_id)


async def take_free_seat(ex: Executor, game_id: int, seat: SeatRow, max_seats: int) -> int | None:
    """Seat a player at the lowest free seat number below ``max_seats`` (``seat.seat`` is
    ignored).  Return the seat number, or None if the table is full.

    :raises StatusConflict: the game is no longer in the lobby.
    :raises SeatTaken: the user already sits at this table.
    """
    async with ex.transaction() as tx:
        await _require_status(tx, game_id, "lobby")
        if seat.user_id is not None and await tx.fetchval(
            "SELECT 1 FROM seats WHERE game_id = ? AND user_id = ?", (game_id, seat.user_id)
        ):
            raise SeatTaken(game_id, None, seat.user_id)
        taken = {
            r[0] for r in await tx.fetch("SELECT seat FROM seats WHERE game_id = ?", (game_id,))
        }
        free = next((n for n in range(max_seats) if n not in taken), None)
        if free is None:
            return None
        params = _seat_params(game_id, seat)
        await tx.execute(_INSERT_SEAT, (params[0], free, *params[2:]))
        await _touch(tx, game_id)
        return free


async def remove_seat(ex: Executor, game_id: int, seat: int) -> bool:
    """Free a seat of a lobby.  Return False if it was already empty.

    :raises StatusConflict: the game is no longer in the lobby.
    """
    async with ex.transaction() as tx:
        await _require_status(tx, game_id, "lobby")
        n = await tx.execute("DELETE FROM seats WHERE game_id = ? AND seat = ?", (game_id, seat))
        if n:
            await _touch(tx, game_id)
        return n > 0


async def start_game(
    ex: Executor,
    game_id: int,
    seed: int,
    snapshot_json: str,
    *,
    seats: Iterable[SeatRow] | None = None,
    expected_status: GameStatus = "lobby",
    turn_deadline: float | None = None,
    settings_json: str | None = None,
) -> None:
    """Move a game from ``expected_status`` to ``playing`` with its initial snapshot
    (version stays 0: no action applied yet).  ``seats``, if given, replaces the seats
    in the same transaction (e.g. computers filling the empty chairs); so does
    ``settings_json`` (the match's settings, fixed from now on).

    :raises StatusConflict: the game is not in ``expected_status`` (e.g. double click on
        "start"); nothing is written.
    """
    _int64(seed, "seed")
    _json(snapshot_json, "snapshot_json")
    async with ex.transaction() as tx:
        await _require_status(tx, game_id, expected_status)
        if seats is not None:
            await set_seats(tx, game_id, seats, expected_status=expected_status)
        if settings_json is not None:
            await set_game_settings(tx, game_id, settings_json)
        await tx.execute(
            "UPDATE games SET status = 'playing', seed = ?, snapshot_json = ?, version = 0, "
            "turn_deadline = ?, updated_at = ?, finished_at = NULL WHERE game_id = ?",
            (seed, snapshot_json, turn_deadline, tx.now(), game_id),
        )


async def set_game_settings(ex: Executor, game_id: int, settings_json: str) -> None:
    """Replace the settings JSON of a game (the chat's settings copied when it starts).

    :raises GameNotFound: no such game.
    """
    n = await ex.execute(
        "UPDATE games SET settings_json = ?, updated_at = ? WHERE game_id = ?",
        (_json(settings_json, "settings_json"), ex.now(), game_id),
    )
    if n == 0:
        raise GameNotFound(game_id)


async def update_ui(ex: Executor, game_id: int, ui_json: str) -> None:
    """Replace the UI bookkeeping JSON (message ids etc.) of a game."""
    n = await ex.execute(
        "UPDATE games SET ui_json = ?, updated_at = ? WHERE game_id = ?",
        (_json(ui_json, "ui_json"), ex.now(), game_id),
    )
    if n == 0:
        raise GameNotFound(game_id)


async def patch_ui(ex: Executor, game_id: int, changes: Mapping[str, Any]) -> str:
    """Atomically merge top-level keys into the UI JSON object (a value of None deletes
    the key).  Return the new JSON text.  One statement (it is written after every
    redraw, so it must not hold the connection for a read-modify-write round trip)."""
    removed = [_ui_key(k) for k, v in changes.items() if v is None]
    kept = {_ui_key(k): v for k, v in changes.items() if v is not None}
    params: list[Any] = []
    if ex.dialect == "postgres":
        expr = "CASE WHEN json_typeof(ui_json::json) = 'object' THEN ui_json::jsonb ELSE '{}' END"
        if removed:
            expr, params = f"({expr}) - CAST(? AS text[])", [*params, removed]
        if kept:
            expr, params = f"({expr}) || CAST(? AS jsonb)", [*params, _compact(kept)]
        expr = f"({expr})::text"
    else:
        expr = "CASE WHEN json_type(ui_json) = 'object' THEN ui_json ELSE '{}' END"
        if removed:
            expr = f"json_remove({expr}{', ?' * len(removed)})"
            params += [f'$."{key}"' for key in removed]
        if kept:
            expr = f"json_set({expr}{', ?, json(?)' * len(kept)})"
            for key, value in kept.items():
                params += [f'$."{key}"', _compact(value)]
    rows = await ex.fetch(
        f"UPDATE games SET ui_json = {expr}, updated_at = ? WHERE game_id = ? "
        "RETURNING ui_json",
        (*params, ex.now(), game_id),
    )
    if not rows:
        raise GameNotFound(game_id)
    return str(rows[0][0])


def _ui_key(key: str) -> str:
    if not key or not all(c.isalnum() or c == "_" for c in key):
        raise ValueError(f"bad UI key {key!r}")
    return key


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


async def set_status(
    ex: Executor,
    game_id: int,
    status: GameStatus,
    *,
    expected_status: GameStatus | tuple[GameStatus, ...] | None = None,
) -> None:
    """Set a game's status (``finished``/``cancelled`` also set ``finished_at`` and clear
    the turn deadline).  Moving a game back to an active status may raise
    :class:`ActiveGameExists`.

    :raises StatusConflict: ``expected_status`` is given and does not match.
    """
    _status(status)
    now = ex.now()
    ended = status in _ENDED
    async with ex.transaction() as tx:
        if expected_status is not None:
            await _require_status(tx, game_id, expected_status)
        try:
            # in a savepoint: PostgreSQL refuses any statement in a failed transaction
            async with tx.transaction() as update:
                n = await update.execute(
                    "UPDATE games SET status = ?, updated_at = ?, "
                    "finished_at = CASE WHEN ? THEN CAST(? AS BIGINT) ELSE NULL END, "
                    "turn_deadline = CASE WHEN ? THEN NULL ELSE turn_deadline END "
                    "WHERE game_id = ?",
                    (status, now, ended, now, ended, game_id),
                )
        except IntegrityViolation as e:
            # SQLite names the columns, PostgreSQL the index
            if "games.chat_id" in str(e) or "games_one_active_per_thread" in str(e):
                row = await tx.fetchrow(
                    "SELECT chat_id, thread_id FROM games WHERE game_id = ?", (game_id,)
                )
                assert row is not None
                raise ActiveGameExists(row["chat_id"], row["thread_id"], None) from e
            raise
        if n == 0:
            raise GameNotFound(game_id)


async def set_turn_deadline(ex: Executor, game_id: int, deadline: float | None) -> None:
    """Set (unix seconds) or clear the current turn's deadline."""
    n = await ex.execute(
        "UPDATE games SET turn_deadline = ? WHERE game_id = ?", (deadline, game_id)
    )
    if n == 0:
        raise GameNotFound(game_id)


async def _update_seat(
    ex: Executor, game_id: int, seat: int, sql_set: str, params: Sequence[Any]
) -> None:
    """``UPDATE seats SET {sql_set}`` of one seat, and the game's ``updated_at``."""

    async def diagnose(tx: Executor) -> None:
        if not await tx.fetchval("SELECT 1 FROM games WHERE game_id = ?", (game_id,)):
            raise GameNotFound(game_id)
        raise LookupError(f"game {game_id} has no seat {seat}")

    seat_sql = f"UPDATE seats SET {sql_set} WHERE game_id = ? AND seat = ?"
    if ex.dialect == "postgres":  # one statement (held in a move: no round trip of its own)
        await ex.write(
            f"WITH changed AS ({seat_sql} RETURNING game_id) UPDATE games SET updated_at = ? "
            "WHERE game_id IN (SELECT game_id FROM changed)",
            (*params, game_id, seat, ex.now()), expect=1, otherwise=diagnose,
        )  # fmt: skip
        return
    async with ex.transaction() as tx:
        await tx.write(seat_sql, (*params, game_id, seat), expect=1, otherwise=diagnose)
        await _touch(tx, game_id)


async def set_seat_away(ex: Executor, game_id: int, seat: int, away: bool) -> None:
    """Mark a human seat as away (a computer plays for them) or back."""
    await _update_seat(ex, game_id, seat, "away = ?", (int(bool(away)),))


async def set_afk_strikes(ex: Executor, game_id: int, seat: int, strikes: int) -> None:
    """Set the number of consecutive turns a seat let time out."""
    if strikes < 0:
        raise ValueError("strikes must be >= 0")
    await _update_seat(ex, game_id, seat, "afk_strikes = ?", (strikes,))


async def add_afk_strike(ex: Executor, game_id: int, seat: int) -> int:
    """Increment a seat's AFK strikes atomically; return the new count."""
    async with ex.transaction() as tx:
        await _update_seat(tx, game_id, seat, "afk_strikes = afk_strikes + 1", ())
        return int(
            await tx.fetchval(
                "SELECT afk_strikes FROM seats WHERE game_id = ? AND seat = ?", (game_id, seat)
            )
        )


async def replace_seat_with_computer(
    ex: Executor, game_id: int, seat: int, display_name: str, computer_level: str | None = None
) -> None:
    """A human left for good: the seat becomes a computer player (user_id cleared, so the
    game no longer appears in that user's ``games_of_user``)."""
    await _update_seat(
        ex,
        game_id,
        seat,
        "kind = 'computer', user_id = NULL, display_name = ?, computer_level = ?, "
        "away = 0, afk_strikes = 0",
        (display_name, computer_level),
    )


# --------------------------------------------------------------------------- actions


#: The game's new version and snapshot, if it is still being played at the expected one.
_MOVE_GAME = (
    "UPDATE games SET version = version + 1, snapshot_json = ?, "
    "status = COALESCE(?, status), updated_at = ?, "
    "finished_at = CASE WHEN ? THEN CAST(? AS BIGINT) ELSE finished_at END, "
    "turn_deadline = ? "
    "WHERE game_id = ? AND version = ? AND status = 'playing'"
)
#: PostgreSQL: the same and the action, in one statement (no row is written unless the
#: game moved).
_RECORD_ACTION = (
    f"WITH moved AS ({_MOVE_GAME} RETURNING game_id, version) "
    "INSERT INTO actions (game_id, seq, seat, code, actor, user_id, created_at) "
    "SELECT game_id, version, CAST(? AS BIGINT), ?, ?, CAST(? AS BIGINT), CAST(? AS BIGINT) "
    "FROM moved"
)
#: The same, also marking the inbox's update that carried the move handled (issue 35):
#: still one statement, and the mark only if the move was made.
_RECORD_ACTION_HANDLED = (
    f"WITH moved AS ({_MOVE_GAME} RETURNING game_id, version), "
    "handled AS (UPDATE inbox SET handled_at = CAST(? AS BIGINT) "
    "WHERE update_id = CAST(? AS BIGINT) AND handled_at IS NULL "
    "AND EXISTS (SELECT 1 FROM moved)) "
    "INSERT INTO actions (game_id, seq, seat, code, actor, user_id, created_at) "
    "SELECT game_id, version, CAST(? AS BIGINT), ?, ?, CAST(? AS BIGINT), CAST(? AS BIGINT) "
    "FROM moved"
)


async def record_action(
    tx: Executor,
    game_id: int,
    expected_version: int,
    seat: int | None,
    code: str,
    actor: Actor,
    user_id: int | None,
    new_snapshot_json: str,
    new_status: GameStatus | None = None,
    *,
    turn_deadline: float | None = None,
    handled_update: int | None = None,
) -> int:
    """Append an action and store the resulting snapshot, with optimistic concurrency.

    The game must be ``playing`` at ``expected_version``; its version becomes
    ``expected_version + 1``, which is also the action's ``seq`` and the return value.
    ``new_status`` (``finished``/``cancelled``) ends the game in the same write.
    ``turn_deadline`` is the deadline of the *next* turn (None clears it).
    ``handled_update``: the inbox's update that carried the action, marked handled in the
    same write (:mod:`storage.inbox`).

    Meant to run inside the caller's transaction together with the score updates; when
    given the Database it runs in its own transaction.  On PostgreSQL it is one statement
    (:meth:`~storage.db.Executor.write`): in a move it is sent with the move's other
    writes, and the errors below are raised when it is, at the latest by
    ``run_transaction``.

    :raises StaleVersion: the version moved on (double or concurrent click); nothing is
        written.
    :raises StatusConflict: the game is not being played (finished, cancelled, lobby).
    :raises GameNotFound: no such game.
    """
    if actor not in ACTORS:
        raise ValueError(f"bad actor {actor!r}")
    if not code or not code.isascii():
        raise ValueError(f"action code must be non-empty ASCII, got {code!r}")
    if new_status is not None:
        _status(new_status)
    _json(new_snapshot_json, "new_snapshot_json")
    now = tx.now()
    ended = new_status in _ENDED
    new_version = expected_version + 1
    moved = (
        new_snapshot_json, new_status, now, ended, now, None if ended else turn_deadline,
        game_id, expected_version,
    )  # fmt: skip
    logged = (seat, code, actor, user_id, now)

    async def diagnose(ex: Executor) -> None:
        row = await ex.fetchrow("SELECT version, status FROM games WHERE game_id = ?", (game_id,))
        if row is None:
            raise GameNotFound(game_id)
        if row["version"] != expected_version:
            raise StaleVersion(game_id, expected_version, row["version"])
        raise StatusConflict(game_id, "playing", row["status"])

    if tx.dialect == "postgres":  # one statement: one round trip, atomic on its own
        if handled_update is None:
            await tx.write(_RECORD_ACTION, (*moved, *logged), expect=1, otherwise=diagnose)
        else:
            await tx.write(_RECORD_ACTION_HANDLED, (*moved, now, int(handled_update), *logged),
                           expect=1, otherwise=diagnose)
        return new_version
    async with tx.transaction() as t:
        await t.write(_MOVE_GAME, moved, expect=1, otherwise=diagnose)
        await t.execute(
            "INSERT INTO actions (game_id, seq, seat, code, actor, user_id, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (game_id, new_version, *logged),
        )
        if handled_update is not None:
            await inbox.mark_handled(t, handled_update)
    return new_version


async def load_actions(ex: Executor, game_id: int, after_seq: int = 0) -> list[ActionRow]:
    """The action log of a game in order (optionally only ``seq > after_seq``)."""
    rows = await ex.fetch(
        "SELECT game_id, seq, seat, code, actor, user_id, created_at FROM actions "
        "WHERE game_id = ? AND seq > ? ORDER BY seq",
        (game_id, after_seq),
    )
    return [ActionRow.from_row(r) for r in rows]


async def record_smazzata_result(
    tx: Executor, game_id: int, smazzata_index: int, result_json: str
) -> None:
    """Store the result of one smazzata.

    :raises IntegrityViolation: this smazzata was already recorded.
    """
    await tx.write(
        "INSERT INTO smazzata_results (game_id, smazzata_index, result_json, created_at) "
        "VALUES (?, ?, ?, ?)",
        (game_id, smazzata_index, _json(result_json, "result_json"), tx.now()),
    )


async def load_smazzata_results(ex: Executor, game_id: int) -> list[SmazzataResultRow]:
    """All stored smazzata results of a game, in order."""
    rows = await ex.fetch(
        "SELECT game_id, smazzata_index, result_json, created_at FROM smazzata_results "
        "WHERE game_id = ? ORDER BY smazzata_index",
        (game_id,),
    )
    return [SmazzataResultRow(r[0], r[1], r[2], r[3]) for r in rows]


async def played_smazzate(ex: Executor, user_id: int) -> list[PlayedSmazzataRow]:
    """Every stored smazzata result of the games where ``user_id`` sits as a human, with
    the game's chat, status and settings and the user's seat; by game, then smazzata.

    Read-only and served by existing indexes (``seats_by_user``, the primary key of
    ``smazzata_results``): statistics cost nothing per move."""
    rows = await ex.fetch(
        "SELECT g.game_id, g.chat_id, g.status, g.settings_json, s.seat, "
        "r.smazzata_index, r.result_json "
        "FROM seats AS s "
        "JOIN games AS g ON g.game_id = s.game_id "
        "JOIN smazzata_results AS r ON r.game_id = s.game_id "
        "WHERE s.user_id = ? AND s.kind = 'human' "
        "ORDER BY g.game_id, r.smazzata_index",
        (_int64(user_id, "user_id"),),
    )
    return [
        PlayedSmazzataRow(r[0], r[1], _status(r[2]), r[3], r[4], r[5], r[6]) for r in rows
    ]


# --------------------------------------------------------------------------- scores


async def apply_score_deltas(tx: Executor, chat_id: int, deltas: Sequence[ScoreDelta]) -> None:
    """Add one smazzata's points to the chat leaderboard: ``total += points``,
    ``smazzate += 1``, ``smazzate_won``/``chiamante_count``/``chiamante_wins`` as flagged,
    display name refreshed (if not empty).  Humans only – pass no computer seats.
    """
    ids = [d.user_id for d in deltas]
    if len(set(ids)) != len(ids):
        raise ValueError("duplicate user_id in score deltas")
    now = tx.now()
    await tx.executemany(
        "INSERT INTO scores (chat_id, user_id, display_name, total, smazzate, smazzate_won, "
        "chiamante_count, chiamante_wins, updated_at) VALUES (?, ?, ?, ?, 1, ?, ?, ?, ?) "
        "ON CONFLICT (chat_id, user_id) DO UPDATE SET "
        "display_name = CASE WHEN excluded.display_name <> '' THEN excluded.display_name "
        "ELSE scores.display_name END, "
        "total = scores.total + excluded.total, smazzate = scores.smazzate + 1, "
        "smazzate_won = scores.smazzate_won + excluded.smazzate_won, "
        "chiamante_count = scores.chiamante_count + excluded.chiamante_count, "
        "chiamante_wins = scores.chiamante_wins + excluded.chiamante_wins, "
        "updated_at = excluded.updated_at",
        [
            (
                _int64(chat_id, "chat_id"),
                _int64(d.user_id, "user_id"),
                d.display_name,
                d.points,
                int(d.won),
                int(d.chiamante),
                int(d.chiamante and d.won),
                now,
            )
            for d in deltas
        ],
    )


async def record_match_end(
    tx: Executor, chat_id: int, user_ids: Iterable[int], winner_ids: Iterable[int]
) -> None:
    """Count a finished match for each human (``matches += 1``) and a win for each of
    ``winner_ids`` (which must be a subset of ``user_ids``)."""
    users = list(dict.fromkeys(user_ids))
    winners = set(winner_ids)
    if not winners <= set(users):
        raise ValueError("winner_ids must be a subset of user_ids")
    now = tx.now()
    await tx.executemany(
        "INSERT INTO scores (chat_id, user_id, display_name, matches, matches_won, updated_at) "
        "VALUES (?, ?, COALESCE((SELECT first_name FROM users WHERE user_id = ?), ''), 1, ?, ?) "
        "ON CONFLICT (chat_id, user_id) DO UPDATE SET matches = scores.matches + 1, "
        "matches_won = scores.matches_won + excluded.matches_won, "
        "updated_at = excluded.updated_at",
        [(chat_id, uid, uid, int(uid in winners), now) for uid in users],
    )


_SCORE_COLUMNS = (
    "chat_id, user_id, display_name, total, matches, matches_won, smazzate, smazzate_won, "
    "chiamante_count, chiamante_wins, updated_at"
)


async def leaderboard(ex: Executor, chat_id: int, limit: int = 50) -> list[ScoreRow]:
    """The chat's leaderboard: total points descending, then name."""
    rows = await ex.fetch(
        f"SELECT {_SCORE_COLUMNS} FROM scores WHERE chat_id = ? "
        "ORDER BY total DESC, lower(display_name), user_id LIMIT ?",
        (chat_id, limit),
    )
    return [ScoreRow.from_row(r) for r in rows]


async def add_briscola_lines(tx: Executor, chat_id: int, lines: Sequence[BriscolaLine]) -> None:
    """Add plain Briscola results (one smazzata or one match) to the chat's standings."""
    now = tx.now()
    await tx.executemany(
        "INSERT INTO briscola_scores (chat_id, players, side_key, display_name, smazzate, "
        "smazzate_won, matches, matches_won, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (chat_id, players, side_key) DO UPDATE SET "
        "display_name = CASE WHEN excluded.display_name <> '' THEN excluded.display_name "
        "ELSE briscola_scores.display_name END, "
        "smazzate = briscola_scores.smazzate + excluded.smazzate, "
        "smazzate_won = briscola_scores.smazzate_won + excluded.smazzate_won, "
        "matches = briscola_scores.matches + excluded.matches, "
        "matches_won = briscola_scores.matches_won + excluded.matches_won, "
        "updated_at = excluded.updated_at",
        [
            (_int64(chat_id, "chat_id"), line.players, line.side_key, line.display_name,
             line.smazzate, line.smazzate_won, line.matches, line.matches_won, now)
            for line in lines
        ],
    )


async def briscola_leaderboard(
    ex: Executor, chat_id: int, limit: int = 50
) -> list[BriscolaScoreRow]:
    """Plain Briscola's standings of a chat: by table size, matches won, smazzate won."""
    rows = await ex.fetch(
        "SELECT chat_id, players, side_key, display_name, smazzate, smazzate_won, matches, "
        "matches_won FROM briscola_scores WHERE chat_id = ? "
        "ORDER BY players, matches_won DESC, smazzate_won DESC, side_key LIMIT ?",
        (chat_id, limit),
    )
    return [BriscolaScoreRow(*(r[i] for i in range(8))) for r in rows]


async def get_score(ex: Executor, chat_id: int, user_id: int) -> ScoreRow | None:
    """One user's leaderboard line in a chat, or None."""
    r = await ex.fetchrow(
        f"SELECT {_SCORE_COLUMNS} FROM scores WHERE chat_id = ? AND user_id = ?",
        (chat_id, user_id),
    )
    return None if r is None else ScoreRow.from_row(r)


async def reset_scores(ex: Executor, chat_id: int) -> int:
    """Delete a chat's leaderboard; return the number of rows removed."""
    return await ex.execute("DELETE FROM scores WHERE chat_id = ?", (chat_id,))


# --------------------------------------------------------------------------- chat migration


async def migrate_chat(ex: Executor, old_chat_id: int, new_chat_id: int) -> ChatMigrationResult:
    """Telegram migrated a group to a supergroup (new chat id): move settings, games and
    scores in one transaction.  Idempotent.

    * settings: moved unless the new id has more recent ones;
    * games: all moved; if both ids have an active game in the same thread, the new
      chat's game wins and the old one is cancelled (it cannot be shown any more);
    * scores: moved, and summed with the new id's rows for the same user.
    """
    _int64(new_chat_id, "new_chat_id")
    if old_chat_id == new_chat_id:
        return ChatMigrationResult()
    now = ex.now()
    async with ex.transaction() as tx:
        settings_moved = False
        old_chat = await get_chat_settings(tx, old_chat_id)
        if old_chat is not None:
            new_chat = await get_chat_settings(tx, new_chat_id)
            if new_chat is None or old_chat.updated_at > new_chat.updated_at:
                await tx.execute("DELETE FROM chats WHERE chat_id = ?", (new_chat_id,))
                await tx.execute(
                    "UPDATE chats SET chat_id = ? WHERE chat_id = ?", (new_chat_id, old_chat_id)
                )
                settings_moved = True
            else:
                await tx.execute("DELETE FROM chats WHERE chat_id = ?", (old_chat_id,))

        clashes = tuple(
            r[0]
            for r in await tx.fetch(
                f"SELECT o.game_id FROM games AS o WHERE o.chat_id = ? "
                f"AND o.status IN {_ACTIVE_SQL} AND EXISTS (SELECT 1 FROM games AS n "
                f"WHERE n.chat_id = ? AND n.thread_id = o.thread_id "
                f"AND n.status IN {_ACTIVE_SQL}) ORDER BY o.game_id",
                (old_chat_id, new_chat_id),
            )
        )
        for gid in clashes:
            await tx.execute(
                "UPDATE games SET status = 'cancelled', finished_at = ?, updated_at = ?, "
                "turn_deadline = NULL WHERE game_id = ?",
                (now, now, gid),
            )
        games_moved = await tx.execute(
            "UPDATE games SET chat_id = ?, updated_at = ? WHERE chat_id = ?",
            (new_chat_id, now, old_chat_id),
        )

        scores_moved = int(
            await tx.fetchval("SELECT COUNT(*) FROM scores WHERE chat_id = ?", (old_chat_id,))
        )
        scores_merged = int(
            await tx.fetchval(
                "SELECT COUNT(*) FROM scores AS o JOIN scores AS n "
                "ON n.user_id = o.user_id AND n.chat_id = ? WHERE o.chat_id = ?",
                (new_chat_id, old_chat_id),
            )
        )
        # "WHERE true" avoids the INSERT ... SELECT ... ON CONFLICT parsing ambiguity.
        await tx.execute(
            f"INSERT INTO scores ({_SCORE_COLUMNS}) "
            "SELECT CAST(? AS BIGINT), user_id, display_name, total, matches, matches_won, "
            "smazzate, "
            "smazzate_won, chiamante_count, chiamante_wins, updated_at "
            "FROM scores WHERE chat_id = ? AND true "
            "ON CONFLICT (chat_id, user_id) DO UPDATE SET "
            "display_name = CASE WHEN excluded.updated_at > scores.updated_at "
            "AND excluded.display_name <> '' THEN excluded.display_name "
            "ELSE scores.display_name END, "
            "total = scores.total + excluded.total, "
            "matches = scores.matches + excluded.matches, "
            "matches_won = scores.matches_won + excluded.matches_won, "
            "smazzate = scores.smazzate + excluded.smazzate, "
            "smazzate_won = scores.smazzate_won + excluded.smazzate_won, "
            "chiamante_count = scores.chiamante_count + excluded.chiamante_count, "
            "chiamante_wins = scores.chiamante_wins + excluded.chiamante_wins, "
            "updated_at = CASE WHEN excluded.updated_at > scores.updated_at "
            "THEN excluded.updated_at ELSE scores.updated_at END",
            (new_chat_id, old_chat_id),
        )
        await tx.execute("DELETE FROM scores WHERE chat_id = ?", (old_chat_id,))
        await tx.execute(
            "INSERT INTO briscola_scores (chat_id, players, side_key, display_name, smazzate, "
            "smazzate_won, matches, matches_won, updated_at) "
            "SELECT ?, players, side_key, display_name, smazzate, smazzate_won, matches, "
            "matches_won, updated_at FROM briscola_scores WHERE chat_id = ? AND true "
            "ON CONFLICT (chat_id, players, side_key) DO UPDATE SET "
            "smazzate = briscola_scores.smazzate + excluded.smazzate, "
            "smazzate_won = briscola_scores.smazzate_won + excluded.smazzate_won, "
            "matches = briscola_scores.matches + excluded.matches, "
            "matches_won = briscola_scores.matches_won + excluded.matches_won",
            (new_chat_id, old_chat_id),
        )
        await tx.execute("DELETE FROM briscola_scores WHERE chat_id = ?", (old_chat_id,))
    return ChatMigrationResult(
        settings_moved=settings_moved,
        games_moved=games_moved,
        games_cancelled=clashes,
        scores_moved=scores_moved,
        scores_merged=scores_merged,
    )


# --------------------------------------------------------------------------- figures


async def database_size(ex: Executor) -> int:
    """The database's size in bytes (for the benchmarks)."""
    if ex.dialect == "postgres":
        return int(await ex.fetchval("SELECT pg_database_size(current_database())"))
    return int(
        await ex.fetchval(
            "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()"
        )
    )
