"""Copy the bot's database to another one, on either engine::

    python -m storage.copy sqlite:///briscola.db postgresql://bot@db.example/briscola

The target is created or brought up to the latest schema and must hold no data; every
row of every table is copied in one transaction (all or nothing), keeping the ids, so
games in progress resume on the target exactly where they were.  The source is only
read, and must be at the latest schema version (start the bot on it once to upgrade
it).  Stop the bot before copying: moves made during the copy would not be copied.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence

from .connect import open_database
from .db import Database, Executor
from .errors import StorageError
from .migrations import LATEST_VERSION, get_version

__all__ = ["TABLES", "copy_database", "main"]

#: The tables, parents first (foreign keys), each with its key (the copy's order).
TABLES: tuple[tuple[str, str], ...] = (
    ("chats", "chat_id"),
    ("users", "user_id"),
    ("games", "game_id"),
    ("seats", "game_id, seat"),
    ("actions", "game_id, seq"),
    ("scores", "chat_id, user_id"),
    ("smazzata_results", "game_id, smazzata_index"),
    ("briscola_scores", "chat_id, players, side_key"),
    ("chat_pace", "chat_id"),
    ("rating_units", "unit_id"),
    ("rating_seats", "unit_id, seat"),
    ("ratings", "chat_id, family, player"),
    ("notify_subscriptions", "chat_id, user_id"),
    ("notify_rounds", "chat_id"),
    ("season_podiums", "chat_id"),
)

#: Rows read and written at a time.
BATCH = 500


async def _count(ex: Executor, table: str) -> int:
    return int(await ex.fetchval(f"SELECT COUNT(*) FROM {table}"))


async def copy_database(source_url: str, target_url: str) -> dict[str, int]:
    """Copy every row of ``source_url`` into the empty ``target_url``; return the number
    of rows copied per table.

    :raises StorageError: the source is not at the latest schema, or the target has data
        (``code="not_empty"``); nothing is written then.
    """
    source = await open_database(source_url, migrate=False, check_writable=False)
    try:
        version = await get_version(source)
        if version != LATEST_VERSION:
            raise StorageError(
                f"the source is at schema version {version}, not {LATEST_VERSION}: start "
                "the bot on it once to upgrade it, then copy",
                code="schema_mismatch",
            )
        target = await open_database(target_url)
        try:
            return await _copy_rows(source, target)
        finally:
            await target.close()
    finally:
        await source.close()


async def _copy_rows(source: Database, target: Database) -> dict[str, int]:
    copied: dict[str, int] = {}
    async with target.transaction() as tx:
        for table, _ in TABLES:
            if await _count(tx, table):
                raise StorageError(
                    f"the target already has rows in {table}: copy into an empty database",
                    code="not_empty",
                )
        for table, key in TABLES:
            copied[table] = 0
            while True:
                rows = await source.fetch(
                    f"SELECT * FROM {table} ORDER BY {key} LIMIT ? OFFSET ?",
                    (BATCH, copied[table]),
                )
                if not rows:
                    break
                columns = list(rows[0].keys())
                await tx.executemany(
                    f"INSERT INTO {table} ({', '.join(columns)}) "
                    f"VALUES ({', '.join('?' * len(columns))})",
                    [tuple(row) for row in rows],
                )
                copied[table] += len(rows)
        if tx.dialect == "postgres":  # the next new game gets the next id, as in SQLite
            for table, key in (("games", "game_id"), ("rating_units", "unit_id")):
                await tx.fetchval(
                    f"SELECT setval(pg_get_serial_sequence('{table}', '{key}'), "
                    f"COALESCE(MAX({key}), 0) + 1, false) FROM {table}"
                )
    return copied


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m storage.copy",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("source", help="database URL to read (e.g. sqlite:///briscola.db)")
    parser.add_argument("target", help="empty database URL to fill (e.g. postgresql://…)")
    args = parser.parse_args(argv)
    try:
        copied = asyncio.run(copy_database(args.source, args.target))
    except StorageError as e:
        print(f"storage.copy: {e}", file=sys.stderr)
        return 1
    for table, count in copied.items():
        print(f"{table}: {count} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
