"""Poisoned updates are set aside (issue 46): an update whose handler raises is handled
again at most twice, then marked poisoned in the inbox (the error's class and a summary
with a digest, not its text), logged once at ERROR, its press answered with a short
apology, and the bot goes on; an update that kills the process, claimed and never
finished at two starts in a row, is set aside the same way at the third start. Other
tables keep playing meanwhile.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bench.sim import BotProcess, Press, World, open_reader
from bot import inbox as bot_inbox
from bot.i18n import tr
from bot.tables import Tables
from sandbox.fakeapi import FakeTelegram
from storage import inbox, repo
from tests.chaos.checks import card_in_play, check_acknowledged, replay, versions_of
from tests.chaos.conftest import Chaos

FAST_BOT = {"GROUP_MESSAGES_PER_MINUTE": "1000"}


async def _dies_after_starting(bot: BotProcess, answered: Callable[[], bool]) -> bool:
    """Start the process; whether it died within 3 s of its application running (the
    stored updates are handed out then) and before ``answered()`` (the press was set
    aside and answered: this start lives on; it is checked to the end of the test). Not
    ``bot.start()``, which waits for a getUpdates a process killed before it never makes
    (its full timeout)."""
    await bot.start(wait=False)
    assert bot.proc is not None
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 60
    while bot.running and "Application started" not in bot.log_text().rsplit(
            "===== start", 1)[-1]:
        assert loop.time() < deadline, bot.log_tail()
        await asyncio.sleep(0.05)
    deadline = loop.time() + 3
    while bot.running and not answered() and loop.time() < deadline:
        await asyncio.sleep(0.05)
    return not bot.running


async def test_a_handler_that_raises_on_one_update_sets_it_aside(
    chaos: Chaos, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = await chaos.table(1)
    others = [await chaos.table(1), await chaos.table(1)]
    row, version, user, data, message = await card_in_play(broken)
    code = data.rpartition(":")[2]

    # a bug hit by one game's state: every press of that game raises
    raised: list[int] = []
    human_action = Tables.human_action

    async def buggy(self: Tables, game_id: int, *args: Any, **kwargs: Any) -> Any:
        if game_id == row.game_id:
            raised.append(game_id)
            raise RuntimeError("a bug hit by this game's state")
        return await human_action(self, game_id, *args, **kwargs)

    monkeypatch.setattr(Tables, "human_action", buggy)
    loop = asyncio.get_running_loop()
    players = [asyncio.create_task(t.play(deadline=loop.time() + 60, rescue_after=8.0))
               for t in others]
    before = await versions_of(others)
    handle = await user.press(message, data)
    answer = await handle.wait(10)
    assert raised == [row.game_id] * bot_inbox.ATTEMPTS
    assert answer.show_alert and answer.text == tr("it", "error.poisoned")
    (poisoned,) = await inbox.poisoned_updates(chaos.db)
    assert poisoned.error == "RuntimeError"
    kept = json.loads(poisoned.summary)
    assert kept["kind"] == "callback_query" and kept["button"] == "a"
    assert kept["user"] == user.id and len(kept["sha256"]) == 16
    assert data not in poisoned.summary and code not in poisoned.summary.split('"')
    assert (await broken.state())[0].version == version  # nothing applied
    errors = [r for r in chaos.caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and "set aside (poisoned)" in errors[0].getMessage(), [
        r.getMessage() for r in errors]
    assert errors[0].exc_info is not None  # (its traceback, once)
    retries = [r for r in chaos.caplog.records if "handled again" in r.getMessage()]
    assert len(retries) == bot_inbox.ATTEMPTS - 1

    # the bug is gone (say, the game's state moved on): the same person presses again
    monkeypatch.setattr(Tables, "human_action", human_action)
    finished = await asyncio.gather(
        broken.play(deadline=loop.time() + 60, rescue_after=8.0), *players
    )
    after = await versions_of(others)
    assert all(finished)
    assert all(a > b for a, b in zip(after, before, strict=True))  # they played on
    for table in (broken, *others):
        last = await repo.get_game(chaos.db, table.game_ids[-1])
        assert last is not None
        await replay(chaos.db, last)
        await check_acknowledged(chaos.db, table.presses)
    (problem,) = chaos.problems()  # nothing else went wrong
    assert "set aside (poisoned)" in problem
    assert len(await inbox.poisoned_updates(chaos.db)) == 1


async def test_an_update_that_kills_the_process_twice_is_set_aside_at_the_third_start(
    tmp_path: Path,
) -> None:
    """A press whose handling kills the process (SIGKILL, as the kernel's OOM killer
    would): killed while the live process handles it, and again at the next start, which
    handles it first; the third start sets it aside, answers it with the apology, and
    every table plays on to its end; ``python -m bot.health --poisoned`` lists it."""
    crash_file = tmp_path / "crash-game"
    # (three starts may take longer than Telegram's ~15 s to answer a press, the fake's
    # default: the apology is then not shown, which is not what this test is about)
    async with FakeTelegram(flood=False, callback_timeout=60.0) as tg:
        bot = BotProcess(tg, tmp_path, module="tests.chaos.crashing_bot",
                         env={**FAST_BOT, "CRASH_GAME_FILE": str(crash_file)})
        await bot.start()
        reader = await open_reader(bot.database_url)
        try:
            world = World(tg, reader)
            rng = random.Random(46)
            tables = [world.add_table(i, 1, rng=rng) for i in range(3)]
            for table in tables:
                await table.preset_match_end("hands:1")
            await asyncio.gather(*(t.open_and_start(4) for t in tables))
            broken, others = tables[0], tables[1:]
            row, version, user, data, message = await card_in_play(broken)
            loop = asyncio.get_running_loop()
            players = [asyncio.create_task(t.play(deadline=loop.time() + 90, rescue_after=8.0))
                       for t in others]
            await asyncio.sleep(0.5)  # (the others are playing)

            crash_file.write_text(str(row.game_id))
            handle = await user.press(message, data)
            deaths = 0
            assert bot.proc is not None
            assert await asyncio.wait_for(bot.proc.wait(), 20) == -9  # killed by the press
            deaths += 1
            while True:  # the supervisor (Docker, systemd) starts it again
                if await _dies_after_starting(bot, lambda: handle.answer is not None):
                    deaths += 1
                    assert deaths < 5, bot.log_tail()
                    continue
                break  # it stays up
            assert deaths == 2, bot.log_tail()
            answer = await handle.wait(10)
            assert answer.show_alert and answer.text == tr("it", "error.poisoned")
            (poisoned,) = await inbox.poisoned_updates(reader)
            assert (poisoned.error, poisoned.claims) == (bot_inbox.PROCESS_DIED,
                                                         bot_inbox.CRASH_CLAIMS)
            assert json.loads(poisoned.summary)["button"] == "a"
            # (the other tables play on meanwhile: their presses are pending for a moment)
            pending = await inbox.pending_updates(reader)
            assert poisoned.update_id not in {update_id for update_id, _ in pending}
            errors = [line for line in bot.log_text().splitlines() if " ERROR " in line]
            assert len(errors) == 1 and "set aside (poisoned)" in errors[0], errors

            crash_file.unlink()
            before = await versions_of(others)
            finished = await asyncio.gather(
                broken.play(deadline=loop.time() + 90, rescue_after=8.0), *players
            )
            assert all(finished), bot.log_tail()
            after = await versions_of(others)
            assert all(a >= b for a, b in zip(after, before, strict=True))
            for table in tables:
                last = await repo.get_game(reader, table.game_ids[-1])
                assert last is not None and last.status == "finished"
                await replay(reader, last)
                await check_acknowledged(reader, table.presses)
            # the press set aside was never applied: its version got another move
            moves = await repo.load_actions(reader, row.game_id)
            assert [m.user_id for m in moves if m.seq == version + 1] == [user.id]
            assert not any(p.handle is handle for p in broken.presses if isinstance(p, Press))

            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bot.health", "--poisoned", env=bot.environment(),
                cwd=tmp_path, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
            )
            out, _ = await proc.communicate()
            listed = out.decode()
            assert proc.returncode == 0, listed
            assert f"update {poisoned.update_id}" in listed and "ProcessDied" in listed
            assert data not in listed
            assert await bot.stop() == 0
        finally:
            await reader.close()
            await bot.kill()
