"""Plain Briscola's standings (migration v4) on each engine: lines add up, sort by table
size then matches and smazzate won, and follow a group that became a supergroup."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from storage import BriscolaLine, Database, open_database, repo


@pytest.fixture
async def db(database_url: str) -> AsyncIterator[Database]:
    database = await open_database(database_url)
    yield database
    await database.close()


async def test_briscola_lines_add_up_and_sort(db: Database) -> None:
    async with db.transaction() as tx:
        await repo.add_briscola_lines(tx, -5, [
            BriscolaLine(2, "1", "Anna", smazzate=1, smazzate_won=1),
            BriscolaLine(2, "2", "Beppe", smazzate=1),
            BriscolaLine(4, "1+3", "Anna + Carla", matches=1, matches_won=1),
        ])
    async with db.transaction() as tx:
        await repo.add_briscola_lines(tx, -5, [
            BriscolaLine(2, "1", "Anna B.", matches=1),
            BriscolaLine(2, "2", "", matches=1, matches_won=1),
        ])
    rows = await repo.briscola_leaderboard(db, -5)
    assert [(r.players, r.side_key, r.display_name, r.smazzate, r.smazzate_won, r.matches,
             r.matches_won) for r in rows] == [
        (2, "2", "Beppe", 1, 0, 1, 1),  # an empty name keeps the stored one
        (2, "1", "Anna B.", 1, 1, 1, 0),
        (4, "1+3", "Anna + Carla", 0, 0, 1, 1),
    ]
    assert await repo.briscola_leaderboard(db, -6) == []


async def test_briscola_standings_follow_a_chat_migration(db: Database) -> None:
    async with db.transaction() as tx:
        await repo.add_briscola_lines(tx, -7, [BriscolaLine(2, "1", "Anna", 2, 1, 1, 1)])
        await repo.add_briscola_lines(tx, -1007, [BriscolaLine(2, "1", "Anna", 1, 1, 0, 0)])
    await repo.migrate_chat(db, -7, -1007)
    assert await repo.briscola_leaderboard(db, -7) == []
    (row,) = await repo.briscola_leaderboard(db, -1007)
    assert (row.smazzate, row.smazzate_won, row.matches, row.matches_won) == (3, 2, 1, 1)
