"""SIGTERM of the real bot process (``python -m bot``) after its Bot API server has gone
away — refusing connections, or accepting them and never answering: the bot exits within
the bound a container manager gives it (``docker stop``: 10 s, then SIGKILL) and the
database keeps every stored move (the action logs replay to the stored snapshots, every
acknowledged press is in them)."""

from __future__ import annotations

import asyncio
import contextlib
import random
import signal
from pathlib import Path
from typing import Any

import pytest

from bench.sim import BotProcess, World, open_reader
from bot.__main__ import STOP_SECONDS
from sandbox.fakeapi import FakeTelegram
from tests.chaos.checks import check_acknowledged, replay
from tests.conftest import WEBHOOK_SECRET, free_port

#: What a container manager allows (docker stop's default grace period).
BOUND = 10.0


async def _one_person_in_play(tg: FakeTelegram, reader: Any, *, seed: int,
                              presses: int) -> Any:
    """A one-smazzata match of one person and four computers, started, with ``presses``
    of the person's moves made (or 20 s of play)."""
    table = World(tg, reader).add_table(0, 1, rng=random.Random(seed))
    await table.preset_match_end("hands:1")
    await table.open_and_start(4)
    await table.play(deadline=asyncio.get_running_loop().time() + 20, presses=presses)
    return table


@pytest.mark.parametrize(
    ("network", "delivery"),
    [("refused", "polling"), ("silent", "polling"), ("silent", "webhook")],
)
async def test_sigterm_exits_in_time_and_keeps_every_move(
    tmp_path: Path, network: str, delivery: str
) -> None:
    env = {"GROUP_MESSAGES_PER_MINUTE": "1000"}
    if delivery == "webhook":
        port = free_port()
        env.update(WEBHOOK_URL=f"http://127.0.0.1:{port}/hook", WEBHOOK_SECRET=WEBHOOK_SECRET,
                   WEBHOOK_LISTEN="127.0.0.1", WEBHOOK_PORT=str(port))
    async with FakeTelegram(flood=False) as tg:
        bot = BotProcess(tg, tmp_path, env=env)
        await bot.start()
        reader = await open_reader(bot.db_path)
        try:
            table = await _one_person_in_play(tg, reader, seed=7, presses=4)
            loop = asyncio.get_running_loop()
            assert sum(p.acknowledged for p in table.presses) >= 1
            before, _ = await table.state()

            if network == "refused":
                await tg.stop()
            else:  # every call, getUpdates included, is held far longer than the bound
                # (in webhook mode the updates still arrive, their answers hang)
                tg.inject(None, "timeout", count=10_000, hold=120)
                tg.inject("getUpdates", "timeout", count=10_000, hold=120)
            await asyncio.sleep(0.5)  # the bot notices (its long poll and edits fail/hang)
            assert bot.proc is not None and bot.running
            started = loop.time()
            bot.proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(bot.proc.wait(), BOUND)
            except TimeoutError:
                pytest.fail(f"still running {BOUND} s after SIGTERM:\n{bot.log_tail()}")
            took = loop.time() - started
            log = bot.log_text()
            print(f"\n{network}/{delivery}: exit {bot.proc.returncode} after {took:.1f} s")
            assert took <= STOP_SECONDS + 1.0, log
            assert "SIGTERM: stopping" in log

            after, _ = await table.state()
            assert after.version >= before.version  # (computers may have moved meanwhile)
            await replay(reader, after)
            assert await check_acknowledged(reader, table.presses) >= 1
        finally:
            await reader.close()
            await bot.kill()


async def test_sigterm_during_start_up_with_a_silent_server(tmp_path: Path) -> None:
    """The command menus hang (held by the server) while the bot starts: SIGTERM cancels
    the start-up and the bot exits at once, cleanly (no start-up left running behind PTB's
    shutdown, using a closed HTTP client or database)."""
    async with FakeTelegram(flood=False) as tg:
        tg.inject("setMyCommands", "timeout", count=100, hold=120)
        bot = BotProcess(tg, tmp_path)
        starting = asyncio.create_task(bot.start(timeout=30))
        try:
            await tg.wait_until(lambda: tg.calls_to("setMyCommands"), 20, "the start-up")
            assert bot.proc is not None
            loop = asyncio.get_running_loop()
            started = loop.time()
            bot.proc.send_signal(signal.SIGTERM)
            code = await asyncio.wait_for(bot.proc.wait(), BOUND)
            assert loop.time() - started < 2.0
            assert code == 0
            assert not bot.running
            assert "SIGTERM: stopping" in bot.log_text()
            assert bot.problems() == [], bot.log_tail()
        finally:
            starting.cancel()
            with contextlib.suppress(BaseException):
                await starting
            await bot.kill()


def _descendants(pid: int) -> set[int]:
    """Every process below ``pid`` (Linux /proc)."""
    found: set[int] = set()
    todo = [pid]
    while todo:
        current = todo.pop()
        for task in Path(f"/proc/{current}/task").glob("*"):
            with contextlib.suppress(OSError):
                for child in (task / "children").read_text().split():
                    if int(child) not in found:
                        found.add(int(child))
                        todo.append(int(child))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


async def test_sigterm_with_search_computers_stops_the_pool(tmp_path: Path) -> None:
    """Computers of the search level decide in the bot's process pool: a SIGTERM while
    they play stops the bot in time, cleanly, and no worker process outlives it."""
    env = {"GROUP_MESSAGES_PER_MINUTE": "1000", "COMPUTER_LEVEL": "esperto"}
    async with FakeTelegram(flood=False) as tg:
        bot = BotProcess(tg, tmp_path, env=env)
        await bot.start()
        reader = await open_reader(bot.db_path)
        try:
            await _one_person_in_play(tg, reader, seed=3, presses=3)
            loop = asyncio.get_running_loop()
            assert bot.proc is not None and bot.running
            workers = _descendants(bot.proc.pid)
            assert workers, "the search pool never started"
            started = loop.time()
            bot.proc.send_signal(signal.SIGTERM)
            code = await asyncio.wait_for(bot.proc.wait(), BOUND)
            assert loop.time() - started <= STOP_SECONDS + 1.0, bot.log_tail()
            assert code == 0, bot.log_tail()
            assert "SIGTERM: stopping" in bot.log_text()
            for _ in range(50):
                if not any(_alive(pid) for pid in workers):
                    break
                await asyncio.sleep(0.1)
            assert not any(_alive(pid) for pid in workers), "a pool worker outlived the bot"
            # (PTB logs its long poll cut short by the stop as CRITICAL: not ours)
            problems = [p for p in bot.problems() if "Updater stopped unexpectedly" not in p]
            assert problems == [], bot.log_tail()
        finally:
            await reader.close()
            await bot.kill()
