"""Bot API calls per smazzata at a human-like pace, against Telegram's real flood limits.

Opt-in (takes about two minutes per table): ``BRISCOLA_PACE=1 pytest -n 0 -s
tests/e2e/test_e2e_pace.py``. Computers wait 1 s before each move, humans act about 2 s
after their turn comes. Prints group new/edit and private new/edit per smazzata and checks
that no private chat is written to more often than once a second.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from storage import repo
from tests.conftest import make_bot
from tests.e2e.driver import Table, cheap_policy
from tests.e2e.test_e2e_match import (
    call_counts,
    make_users,
    open_table,
    private_gaps,
    set_options,
)

pytestmark = pytest.mark.skipif(
    not os.environ.get("BRISCOLA_PACE"), reason="slow measurement: set BRISCOLA_PACE=1"
)
HUMAN_THINK = 2.0


async def play_at_pace(table: Table) -> None:
    for _ in range(400):
        row, game = await table.state()
        if row.status != "playing" or game.is_over():
            return
        seat = row.seat(game.current_seat())
        if seat is not None and seat.is_human:
            await asyncio.sleep(HUMAN_THINK)
        if not await table.step(cheap_policy, timeout=30):
            return
    raise AssertionError("too many steps")


@pytest.mark.parametrize("humans", [5, 3])
async def test_calls_per_smazzata_at_human_pace(tmp_path: Path, humans: int) -> None:
    from sandbox.fakeapi import FakeTelegram

    async with FakeTelegram() as tg:  # Telegram's limits, real time
        bot = make_bot(tg, tmp_path / "bot.db", speed=1, computer_delay_seconds=1.0)
        await bot.start()
        try:
            users = make_users(tg)
            table = await open_table(tg, bot, users)
            await set_options(table, users[0], {"match_end": "hands:1"})
            gid = table.game_id
            lobby = next(m for m in tg.chat_messages(table.group, from_bot=True)
                         if any(b.callback_data == f"l:{gid}:cpu" for b in m.buttons))
            for user in users[humans:]:
                await (await user.press(lobby, f"l:{gid}:leave")).wait(10)
                await (await users[0].press(lobby, f"l:{gid}:cpu")).wait(10)
            row = await repo.get_game(bot.rt.db, gid)
            assert row is not None and sum(s.is_human for s in row.seats) == humans
            await users[0].send(table.group, "/inizia")
            await tg.wait_for_message(table.group, "Smazzata 1", timeout=30)
            tg.clear_log()
            loop = asyncio.get_running_loop()
            began = loop.time()
            await play_at_pace(table)
            await tg.wait_for_message(table.group, "Partita finita", timeout=60)
            await bot.rt.outbox.drain(30)
            took = loop.time() - began
            row, game = await table.state()
            counts = call_counts(tg)
            deals = game.smazzata_index + 1
            ids = {u.id for u in users[:humans]}
            gap = private_gaps(tg, ids)
            print(f"\n{humans} humans + {5 - humans} computers, {deals} smazzata(e), "
                  f"{row.version} actions in {took:.0f} s: {counts}; "
                  f"smallest gap between two calls to one private chat {gap:.2f} s")
            assert not tg.flood_violations
            assert gap >= 1.0
        finally:
            await bot.stop()
