"""Ratings (issue 48): the rated units, who sat where in them, each player's rating.

Knows nothing of the model: it stores floats under player keys (``u:<user id>``,
``cpu:<level>``, ``morto``) per chat and family of games, and hands back what a rebuild
needs. A unit is rated in the move's transaction: :func:`lock_ratings` first (it creates
the missing players and, on PostgreSQL, locks their rows, so that two tables of one chat
sharing a computer level rate one after the other, in the order of their unit ids), then
:func:`record_unit`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from .db import Executor, Row

__all__ = [
    "RatingRow",
    "RatingSeat",
    "StoredUnit",
    "count_playing",
    "count_units",
    "game_changes",
    "last_changes",
    "lock_for_rebuild",
    "lock_ratings",
    "migrate_chat",
    "player_ratings",
    "ratings_board",
    "record_unit",
    "rewrite",
    "stored_ratings",
    "units",
]


@dataclass(frozen=True, slots=True)
class RatingRow:
    chat_id: int
    family: str
    player: str
    display_name: str
    mu: float
    sigma: float
    units: int


@dataclass(frozen=True, slots=True)
class RatingSeat:
    """A seat of a rated unit: its player, and the player's rating before and after."""

    seat: int
    player: str
    mu_before: float
    sigma_before: float
    mu: float
    sigma: float


@dataclass(frozen=True, slots=True)
class StoredUnit:
    """A rated unit with the smazzata result that decided it (a rebuild's input)."""

    unit_id: int
    game_id: int
    smazzata_index: int
    chat_id: int
    family: str
    result_json: str
    seats: tuple[RatingSeat, ...]


_RATING_COLUMNS = "chat_id, family, player, display_name, mu, sigma, units"


def _rating(r: Row) -> RatingRow:
    return RatingRow(int(r[0]), str(r[1]), str(r[2]), str(r[3]), float(r[4]), float(r[5]),
                     int(r[6]))


async def lock_ratings(
    tx: Executor, chat_id: int, family: str, players: Mapping[str, str],
    prior: tuple[float, float],
) -> dict[str, tuple[float, float]]:
    """The current (mu, sigma) of ``players`` (key -> display name) in the chat and
    family; a player without a rating gets one at ``prior``. One statement: the upsert
    locks each row until the transaction ends (PostgreSQL; SQLite's write transaction
    excludes the others already) and returns it."""
    keys = sorted(players)
    now = tx.now()
    values = ", ".join(["(?, ?, ?, ?, ?, ?, 0, ?)"] * len(keys))
    rows = await tx.fetch(
        "INSERT INTO ratings (chat_id, family, player, display_name, mu, sigma, units, "
        f"updated_at) VALUES {values} "
        "ON CONFLICT (chat_id, family, player) DO UPDATE SET units = ratings.units "
        "RETURNING player, mu, sigma",
        tuple(v for key in keys
              for v in (chat_id, family, key, players[key], prior[0], prior[1], now)),
    )
    return {r[0]: (float(r[1]), float(r[2])) for r in rows}


async def record_unit(
    tx: Executor, game_id: int, smazzata_index: int, chat_id: int, family: str,
    seats: Sequence[RatingSeat], names: Mapping[str, str],
) -> None:
    """Store a rated unit, its seats, and each player's new rating (``units`` + 1; a
    non-empty name refreshes the one shown). Writes only (sent with the move's others)."""
    now = tx.now()
    await tx.write(
        "INSERT INTO rating_units (game_id, smazzata_index, chat_id, family, created_at) "
        "VALUES (?, ?, ?, ?, ?)",
        (game_id, smazzata_index, chat_id, family, now),
    )
    await tx.executemany(
        "INSERT INTO rating_seats (unit_id, seat, player, mu_before, sigma_before, mu, sigma) "
        "VALUES ((SELECT unit_id FROM rating_units WHERE game_id = ? AND smazzata_index = ?), "
        "?, ?, ?, ?, ?, ?)",
        [(game_id, smazzata_index, s.seat, s.player, s.mu_before, s.sigma_before, s.mu,
          s.sigma) for s in seats],
    )
    after = {s.player: (s.mu, s.sigma) for s in seats}
    await tx.executemany(
        "UPDATE ratings SET mu = ?, sigma = ?, units = units + 1, updated_at = ?, "
        "display_name = CASE WHEN ? <> '' THEN ? ELSE display_name END "
        "WHERE chat_id = ? AND family = ? AND player = ?",
        [(mu, sigma, now, names.get(key, ""), names.get(key, ""), chat_id, family, key)
         for key, (mu, sigma) in sorted(after.items())],
    )


async def game_changes(ex: Executor, game_id: int) -> dict[int, tuple[RatingSeat, ...]]:
    """The rated units of a game: smazzata index -> its seats with their ratings."""
    rows = await ex.fetch(
        "SELECT u.smazzata_index, s.seat, s.player, s.mu_before, s.sigma_before, s.mu, "
        "s.sigma FROM rating_units AS u JOIN rating_seats AS s ON s.unit_id = u.unit_id "
        "WHERE u.game_id = ? ORDER BY u.smazzata_index, s.seat",
        (game_id,),
    )
    changes: dict[int, list[RatingSeat]] = {}
    for r in rows:
        changes.setdefault(int(r[0]), []).append(
            RatingSeat(r[1], r[2], float(r[3]), float(r[4]), float(r[5]), float(r[6])))
    return {index: tuple(seats) for index, seats in changes.items()}


async def ratings_board(
    ex: Executor, chat_id: int, family: str, limit: int = 50
) -> list[RatingRow]:
    """The chat's ratings in a family, highest conservative rating (mu - 3 sigma) first."""
    rows = await ex.fetch(
        f"SELECT {_RATING_COLUMNS} FROM ratings WHERE chat_id = ? AND family = ? "
        "AND units > 0 ORDER BY mu - 3 * sigma DESC, player LIMIT ?",
        (chat_id, family, limit),
    )
    return [_rating(r) for r in rows]


async def player_ratings(ex: Executor, player: str) -> list[RatingRow]:
    """A player's ratings in every chat and family."""
    rows = await ex.fetch(
        f"SELECT {_RATING_COLUMNS} FROM ratings WHERE player = ? AND units > 0 "
        "ORDER BY chat_id, family",
        (player,),
    )
    return [_rating(r) for r in rows]


async def last_changes(ex: Executor, player: str) -> dict[tuple[int, str], RatingSeat]:
    """The player's last rated unit in each chat and family: (chat, family) -> its seat."""
    rows = await ex.fetch(
        "SELECT u.chat_id, u.family, s.seat, s.player, s.mu_before, s.sigma_before, s.mu, "
        "s.sigma FROM rating_seats AS s JOIN rating_units AS u ON u.unit_id = s.unit_id "
        "WHERE s.player = ? ORDER BY s.unit_id, s.seat",
        (player,),
    )
    return {(int(r[0]), str(r[1])): RatingSeat(int(r[2]), str(r[3]), float(r[4]),
                                               float(r[5]), float(r[6]), float(r[7]))
            for r in rows}


async def stored_ratings(ex: Executor) -> list[RatingRow]:
    """Every stored rating, by chat, family and player."""
    rows = await ex.fetch(
        f"SELECT {_RATING_COLUMNS} FROM ratings ORDER BY chat_id, family, player"
    )
    return [_rating(r) for r in rows]


async def units(ex: Executor) -> list[StoredUnit]:
    """Every rated unit in the order its ratings changed, with its result and seats."""
    rows = await ex.fetch(
        "SELECT u.unit_id, u.game_id, u.smazzata_index, u.chat_id, u.family, r.result_json, "
        "s.seat, s.player, s.mu_before, s.sigma_before, s.mu, s.sigma "
        "FROM rating_units AS u "
        "JOIN smazzata_results AS r ON r.game_id = u.game_id "
        "AND r.smazzata_index = u.smazzata_index "
        "JOIN rating_seats AS s ON s.unit_id = u.unit_id ORDER BY u.unit_id, s.seat"
    )
    found: list[StoredUnit] = []
    seats: list[RatingSeat] = []
    for r in rows:
        if not found or found[-1].unit_id != r[0]:
            seats = []
            found.append(StoredUnit(int(r[0]), int(r[1]), int(r[2]), int(r[3]), str(r[4]),
                                    str(r[5]), ()))
        seats.append(RatingSeat(int(r[6]), str(r[7]), float(r[8]), float(r[9]),
                                float(r[10]), float(r[11])))
        unit = found[-1]
        found[-1] = StoredUnit(unit.unit_id, unit.game_id, unit.smazzata_index, unit.chat_id,
                               unit.family, unit.result_json, tuple(seats))
    return found


async def migrate_chat(ex: Executor, old_chat_id: int, new_chat_id: int) -> int:
    """A group became a supergroup: its rated units and ratings follow it (one
    transaction, idempotent). A player rated under both ids (Telegram creates the new
    id at the migration, so only a replayed migration could) keeps the new id's row;
    a rebuild then recomputes it from all the units. Returns the ratings moved."""
    async with ex.transaction() as tx:
        await tx.execute("UPDATE rating_units SET chat_id = ? WHERE chat_id = ?",
                         (new_chat_id, old_chat_id))
        moved = await tx.execute(
            "INSERT INTO ratings (chat_id, family, player, display_name, mu, sigma, units, "
            "updated_at) SELECT CAST(? AS BIGINT), family, player, display_name, mu, sigma, "
            "units, updated_at FROM ratings WHERE chat_id = ? AND true "
            "ON CONFLICT (chat_id, family, player) DO NOTHING",
            (new_chat_id, old_chat_id),
        )
        await tx.execute("DELETE FROM ratings WHERE chat_id = ?", (old_chat_id,))
    return moved


async def count_units(ex: Executor) -> int:
    """How many units were rated (a backfill runs only on none)."""
    return int(await ex.fetchval("SELECT COUNT(*) FROM rating_units"))


async def count_playing(ex: Executor) -> int:
    """How many matches are being played now (a rebuild waits for none)."""
    return int(await ex.fetchval("SELECT COUNT(*) FROM games WHERE status = 'playing'"))


async def lock_for_rebuild(tx: Executor) -> None:
    """Hold off every rating of a unit until the transaction ends (PostgreSQL: a move's
    :func:`lock_ratings` waits; SQLite's write transaction already excludes them)."""
    if tx.dialect == "postgres":
        await tx.execute("LOCK TABLE ratings IN EXCLUSIVE MODE")


async def rewrite(
    tx: Executor, seats: Iterable[tuple[int, RatingSeat]], ratings: Iterable[RatingRow]
) -> None:
    """Replace the ratings of the rated units' seats (unit id, seat) and every player's
    rating by the ones given (a rebuild)."""
    await tx.executemany(
        "UPDATE rating_seats SET player = ?, mu_before = ?, sigma_before = ?, mu = ?, "
        "sigma = ? WHERE unit_id = ? AND seat = ?",
        [(s.player, s.mu_before, s.sigma_before, s.mu, s.sigma, unit_id, s.seat)
         for unit_id, s in seats],
    )
    await tx.execute("DELETE FROM ratings")
    now = tx.now()
    await tx.executemany(
        "INSERT INTO ratings (chat_id, family, player, display_name, mu, sigma, units, "
        "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [(r.chat_id, r.family, r.player, r.display_name, r.mu, r.sigma, r.units, now)
         for r in ratings],
    )
