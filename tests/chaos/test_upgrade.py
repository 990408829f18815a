"""Upgrades with a newer schema (issue 46), on PostgreSQL with two instances: an old
one (``python -m bot``) and a new one (``python -m tests.chaos.newer_bot``: the same
code with one more migration, as the next release would append it).

* old active + new standby; the old one is killed: the new one takes over and migrates,
  once, under the lock, before it handles anything; the old one, restarted, stands by
  and does not take over even with the lock free (the schema is newer than its code): it
  says why in its log and in ``python -m bot.health``; the new one, restarted, takes over;
* a migration killed halfway leaves the database at the version before it (transactional
  DDL), and the next start migrates it again.
"""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path

from bench.sim import World
from sandbox.fakeapi import FakeTelegram
from storage import LATEST_VERSION, migrations, repo
from tests import pg
from tests.chaos.checks import replay
from tests.chaos.test_failover import FAST_BOT, TAKEOVER_BOUND, Instance, Pair, conflicts

NEWER = "tests.chaos.newer_bot"
UPGRADING = f"upgrading database schema v{LATEST_VERSION} -> v{LATEST_VERSION + 1}"
REFUSED = (f"the database's schema is v{LATEST_VERSION + 1}, newer than this code's "
           f"v{LATEST_VERSION}")


async def schema_version(pair: Pair) -> int:
    return await migrations.get_version(pair.reader)


async def test_a_rolling_upgrade_old_active_new_standby(
    tmp_path: Path, pg_cluster: pg.PostgresCluster
) -> None:
    from bench.sim import open_reader

    url = pg_cluster.new_database()
    async with FakeTelegram(flood=False) as tg:
        old = Instance(tg, tmp_path, database_url=url, name="old",
                       env={**FAST_BOT, "HEALTH_FILE": str(tmp_path / "old.alive")})
        new = Instance(tg, tmp_path, database_url=url, name="new", module=NEWER,
                       env={**FAST_BOT, "HEALTH_FILE": str(tmp_path / "new.alive")})
        reader = None
        try:
            await old.start()
            await new.start_standby()
            reader = await open_reader(url)
            pair = Pair(tg, old, new, reader, url)
            assert await schema_version(pair) == LATEST_VERSION  # a standby migrates nothing
            assert UPGRADING not in new.log_text()
            (table,) = [World(tg, reader).add_table(0, 1, rng=random.Random(46), think=0.05)]
            await table.preset_match_end("hands:1")
            await table.open_and_start(4)
            loop = asyncio.get_running_loop()
            player = asyncio.create_task(table.play(deadline=loop.time() + 120,
                                                    rescue_after=8.0))
            await asyncio.sleep(1.0)

            killed_at = time.monotonic()
            await old.kill()
            await pair.polled_by(new, killed_at, TAKEOVER_BOUND)
            assert await schema_version(pair) == LATEST_VERSION + 1
            assert await reader.fetchval("SELECT note FROM upgrade_probe") == "migrated"
            run = new.log_text().rsplit("===== start", 1)[-1]
            assert run.count(UPGRADING) == 1, run
            # under the lock (after it took over), before it handled anything (updates are
            # handled once the application runs: PTB's "Application started")
            took = run.index("active (")
            assert took < run.index(UPGRADING) < run.index("Application started")

            # the old code, started again, stands by; the lock free, it still does not
            # take over: the schema is newer than it knows
            await old.start_standby()
            killed_at = time.monotonic()
            await new.kill()
            await old.until_log(REFUSED, timeout=15)
            health = await old.health()
            assert health.startswith(f"0 standby: {REFUSED}"), health
            await asyncio.sleep(3.0)  # (it tries the lock again meanwhile)
            assert old.running
            assert not [c for c in tg.calls if old.made(c) and c.at > killed_at], (
                "the old instance called the Bot API")
            assert old.log_text().count(REFUSED) == 1  # said once, not at every try
            assert await schema_version(pair) == LATEST_VERSION + 1

            # the new one comes back and takes over (the old one keeps standing by)
            restarted_at = time.monotonic()
            await new.start(wait=False)
            await pair.polled_by(new, restarted_at, TAKEOVER_BOUND)
            assert new.log_text().count(UPGRADING) == 1  # migrated once in all
            assert await player, "the table did not finish"
            row = await repo.get_game(reader, table.game_ids[-1])
            assert row is not None and row.status == "finished"
            await replay(reader, row)
            assert old.running and "0 standby: " in await old.health()
            assert not conflicts(tg.calls)
        finally:
            if reader is not None:
                await reader.close()
            await old.kill()
            await new.kill()
    pg_cluster.drop_database(url)


async def test_a_migration_killed_halfway_is_run_again_at_the_next_start(
    tmp_path: Path, database_url: str
) -> None:
    from bench.sim import open_reader

    mark = tmp_path / "killed-in-migration"
    async with FakeTelegram(flood=False) as tg:
        bot = Instance(tg, tmp_path, database_url=database_url, name="new", module=NEWER,
                       env={**FAST_BOT, "KILL_MIGRATION_MARK": str(mark)})
        try:
            await bot.start(wait=False)
            assert bot.proc is not None
            assert await asyncio.wait_for(bot.proc.wait(), 30) == -9, bot.log_tail()
            assert mark.exists()
            reader = await open_reader(database_url)
            try:
                # every migration before it committed; its own rolled back, DDL included
                assert await migrations.get_version(reader) == LATEST_VERSION
                catalogue = (
                    "SELECT count(*) FROM information_schema.tables WHERE table_name = ?"
                    if reader.dialect == "postgres"
                    else "SELECT count(*) FROM sqlite_master WHERE name = ?"
                )
                assert await reader.fetchval(catalogue, ("upgrade_probe",)) == 0
                await bot.start()  # (the mark is there: it does not kill itself again)
                assert await migrations.get_version(reader) == LATEST_VERSION + 1
                assert await reader.fetchval("SELECT note FROM upgrade_probe") == "migrated"
                assert bot.log_text().count(UPGRADING) == 2  # begun twice, committed once
                assert await bot.stop() == 0
            finally:
                await reader.close()
        finally:
            await bot.kill()
