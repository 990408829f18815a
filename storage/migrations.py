"""Numbered schema migrations (mautrix ``UpgradeTable`` style).

``MIGRATIONS[i]`` upgrades a database from version ``i`` to ``i + 1``; version 0 is an
empty database.  The current version lives in the one-row table ``schema_version``.
Each step runs in its own ``BEGIN IMMEDIATE`` transaction together with the version
bump, so a crash leaves the database at a well-defined version and two processes
starting at once cannot both apply the same step.  A database whose version is higher
than :data:`LATEST_VERSION` is refused with :class:`~storage.errors.SchemaTooNew`.

Rules for adding a migration: append a new function to :data:`MIGRATIONS`, never edit a
released one; use only statements that are valid inside a transaction (no VACUUM, no
``PRAGMA journal_mode``); do not use ``executescript`` (it commits implicitly).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from .db import Database, Executor, Transaction
from .errors import SchemaTooNew, StorageError

__all__ = [
    "LATEST_VERSION",
    "MIGRATIONS",
    "check_version",
    "get_version",
    "upgrade",
]

log = logging.getLogger("storage.migrations")

Migration = Callable[[Transaction], Awaitable[None]]


async def _run_all(tx: Transaction, statements: tuple[str, ...]) -> None:
    for sql in statements:
        await tx.execute(sql)


# --------------------------------------------------------------------------- v0 -> v1

_V1 = (
    # Per-chat preferences for the *next* matches (table options, deck style, match end,
    # turn timeout, language...).  Opaque JSON owned by the bot.
    """
    CREATE TABLE chats (
        chat_id       INTEGER PRIMARY KEY,
        language      TEXT,
        settings_json TEXT    NOT NULL DEFAULT '{}',
        updated_at    INTEGER NOT NULL
    )
    """,
    """
    CREATE TABLE users (
        user_id       INTEGER PRIMARY KEY,
        first_name    TEXT    NOT NULL DEFAULT '',
        last_name     TEXT,
        username      TEXT,
        language_code TEXT,
        private_ok    INTEGER NOT NULL DEFAULT 0 CHECK (private_ok IN (0, 1)),
        updated_at    INTEGER NOT NULL
    )
    """,
    """
    CREATE TABLE games (
        game_id       INTEGER PRIMARY KEY AUTOINCREMENT,
        chat_id       INTEGER NOT NULL,
        thread_id     INTEGER NOT NULL DEFAULT 0,
        status        TEXT    NOT NULL DEFAULT 'lobby'
                      CHECK (status IN ('lobby', 'playing', 'finished', 'cancelled')),
        creator_id    INTEGER,
        settings_json TEXT    NOT NULL DEFAULT '{}',
        seed          INTEGER,
        version       INTEGER NOT NULL DEFAULT 0 CHECK (version >= 0),
        snapshot_json TEXT,
        ui_json       TEXT    NOT NULL DEFAULT '{}',
        created_at    INTEGER NOT NULL,
        updated_at    INTEGER NOT NULL,
        finished_at   INTEGER,
        CHECK (status <> 'playing' OR snapshot_json IS NOT NULL)
    )
    """,
    # At most one lobby/running game per chat + forum topic.
    """
    CREATE UNIQUE INDEX games_one_active_per_thread
        ON games (chat_id, thread_id) WHERE status IN ('lobby', 'playing')
    """,
    """
    CREATE TABLE seats (
        game_id        INTEGER NOT NULL REFERENCES games (game_id) ON DELETE CASCADE,
        seat           INTEGER NOT NULL CHECK (seat >= 0),
        kind           TEXT    NOT NULL CHECK (kind IN ('human', 'computer')),
        user_id        INTEGER,
        display_name   TEXT    NOT NULL DEFAULT '',
        language_code  TEXT,
        computer_level TEXT,
        afk_strikes    INTEGER NOT NULL DEFAULT 0 CHECK (afk_strikes >= 0),
        away           INTEGER NOT NULL DEFAULT 0 CHECK (away IN (0, 1)),
        PRIMARY KEY (game_id, seat),
        CHECK ((kind = 'human') = (user_id IS NOT NULL))
    )
    """,
    """
    CREATE UNIQUE INDEX seats_one_per_user ON seats (game_id, user_id)
        WHERE user_id IS NOT NULL
    """,
    # The action log: seq = game version after the action (1-based, no gaps).
    """
    CREATE TABLE actions (
        game_id    INTEGER NOT NULL REFERENCES games (game_id) ON DELETE CASCADE,
        seq        INTEGER NOT NULL CHECK (seq >= 1),
        seat       INTEGER,
        code       TEXT    NOT NULL,
        actor      TEXT    NOT NULL
                   CHECK (actor IN ('human', 'computer', 'timeout', 'system')),
        user_id    INTEGER,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (game_id, seq)
    )
    """,
    # Per-chat leaderboard, humans only.
    """
    CREATE TABLE scores (
        chat_id         INTEGER NOT NULL,
        user_id         INTEGER NOT NULL,
        display_name    TEXT    NOT NULL DEFAULT '',
        total           INTEGER NOT NULL DEFAULT 0,
        matches         INTEGER NOT NULL DEFAULT 0,
        matches_won     INTEGER NOT NULL DEFAULT 0,
        smazzate        INTEGER NOT NULL DEFAULT 0,
        smazzate_won    INTEGER NOT NULL DEFAULT 0,
        chiamante_count INTEGER NOT NULL DEFAULT 0,
        chiamante_wins  INTEGER NOT NULL DEFAULT 0,
        updated_at      INTEGER NOT NULL,
        PRIMARY KEY (chat_id, user_id)
    )
    """,
    """
    CREATE TABLE smazzata_results (
        game_id        INTEGER NOT NULL REFERENCES games (game_id) ON DELETE CASCADE,
        smazzata_index INTEGER NOT NULL CHECK (smazzata_index >= 0),
        result_json    TEXT    NOT NULL,
        created_at     INTEGER NOT NULL,
        PRIMARY KEY (game_id, smazzata_index)
    )
    """,
)


async def upgrade_v1(tx: Transaction) -> None:
    """Initial schema."""
    await _run_all(tx, _V1)


# --------------------------------------------------------------------------- v1 -> v2

_V2 = (
    # Unix time (float seconds) at which the current turn times out; NULL = no timer.
    # Lets the bot re-arm turn timers after a restart instead of forgetting them.
    "ALTER TABLE games ADD COLUMN turn_deadline REAL",
    # games_of_user(): seats of a user across all chats.
    "CREATE INDEX seats_by_user ON seats (user_id) WHERE user_id IS NOT NULL",
    # list_unfinished_games() at start-up, and history / chat migration by chat.
    "CREATE INDEX games_unfinished ON games (status) WHERE status IN ('lobby', 'playing')",
    "CREATE INDEX games_by_chat ON games (chat_id, game_id)",
    # leaderboard(): ORDER BY total DESC within a chat.
    "CREATE INDEX scores_leaderboard ON scores (chat_id, total DESC)",
)


async def upgrade_v2(tx: Transaction) -> None:
    """Turn deadlines (re-armed after restart) and indexes for the hot queries."""
    await _run_all(tx, _V2)


# --------------------------------------------------------------------------- v2 -> v3

_V3 = (
    # list_finished_games() at start-up: the recently finished games only.
    "CREATE INDEX games_finished ON games (finished_at) WHERE status = 'finished'",
)


async def upgrade_v3(tx: Transaction) -> None:
    """Index of finished games by time (their last redraw is checked after a restart)."""
    await _run_all(tx, _V3)


# --------------------------------------------------------------------------- v3 -> v4

_V4 = (
    # Plain Briscola's own standings (issue 12): per chat and table size, one line per
    # side of people (a player, or a pair: side_key = their user ids joined by "+").
    """
    CREATE TABLE briscola_scores (
        chat_id      INTEGER NOT NULL,
        players      INTEGER NOT NULL CHECK (players BETWEEN 2 AND 4),
        side_key     TEXT    NOT NULL,
        display_name TEXT    NOT NULL DEFAULT '',
        smazzate     INTEGER NOT NULL DEFAULT 0,
        smazzate_won INTEGER NOT NULL DEFAULT 0,
        matches      INTEGER NOT NULL DEFAULT 0,
        matches_won  INTEGER NOT NULL DEFAULT 0,
        updated_at   INTEGER NOT NULL,
        PRIMARY KEY (chat_id, players, side_key)
    )
    """,
)


async def upgrade_v4(tx: Transaction) -> None:
    """Plain Briscola's standings (smazzate and matches won per player or pair)."""
    await _run_all(tx, _V4)


MIGRATIONS: list[Migration] = [upgrade_v1, upgrade_v2, upgrade_v3, upgrade_v4]
LATEST_VERSION = len(MIGRATIONS)


# --------------------------------------------------------------------------- machinery


async def get_version(ex: Executor) -> int:
    """The schema version stored in the database (0 for an empty database)."""
    has_table = await ex.fetchval(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
    )
    if not has_table:
        return 0
    version = await ex.fetchval("SELECT version FROM schema_version")
    return int(version or 0)


async def _check_not_foreign(tx: Transaction) -> None:
    other = await tx.fetchval(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' LIMIT 1"
    )
    if other is not None:
        raise StorageError(
            f"the database has tables (e.g. {other!r}) but no schema_version: "
            "it was not created by this bot; refusing to touch it",
            code="unknown_schema",
        )


async def check_version(db: Database) -> int:
    """Return the database version; raise :class:`SchemaTooNew` if it is newer than the
    code."""
    version = await get_version(db)
    if version > LATEST_VERSION:
        raise SchemaTooNew(version, LATEST_VERSION)
    return version


async def upgrade(db: Database, target: int | None = None) -> int:
    """Apply the pending migrations up to ``target`` (default: the latest), each in its
    own transaction.  Return the resulting version.

    :raises SchemaTooNew: the database is newer than this code.
    """
    target = LATEST_VERSION if target is None else target
    if not 0 <= target <= LATEST_VERSION:
        raise ValueError(f"target version must be in 0..{LATEST_VERSION}, got {target}")
    while True:
        async with db.transaction() as tx:
            # Read inside the write transaction: a concurrent process that migrated in the
            # meantime is seen here, and the step is not applied twice.
            version = await get_version(tx)
            if version > LATEST_VERSION:
                raise SchemaTooNew(version, LATEST_VERSION)
            if version >= target:
                return version
            if version == 0:
                await _check_not_foreign(tx)
                await tx.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
                await tx.execute("INSERT INTO schema_version (version) VALUES (0)")
            step = MIGRATIONS[version]
            log.info(
                "upgrading database schema v%d -> v%d (%s)",
                version,
                version + 1,
                (step.__doc__ or step.__name__).strip().splitlines()[0],
            )
            await step(tx)
            await tx.execute("UPDATE schema_version SET version = ?", (version + 1,))
