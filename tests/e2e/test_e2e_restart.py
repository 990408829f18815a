"""Restart: stop the Application mid-auction and mid-trick, start a new one on the same
database, and finish the match; buttons drawn before the restart keep working."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.conftest import make_bot
from tests.e2e.driver import cheap_policy
from tests.e2e.test_e2e_match import check_clean, check_scores, make_users, open_table, set_options


async def test_restart_mid_auction_and_mid_trick(tg: Any, tmp_path: Path) -> None:
    db = tmp_path / "bot.db"
    bot = await make_bot(tg, db).start()
    users = make_users(tg)
    try:
        table = await open_table(tg, bot, users)
        await set_options(table, users[0], {"match_end": "hands:1"})
        await users[0].send(table.group, "/inizia")
        await tg.wait_for_message(table.group, "Smazzata 1")
        await table.play(cheap_policy, until=lambda g: g.phase.value == "auction" and g.bids)
    finally:
        await bot.stop()
    tg.clear_log()

    bot = await make_bot(tg, db).start()
    table.bot = bot
    try:
        await table.play(cheap_policy, until=lambda g: g.trick_no == 3 and len(g.trick) == 2)
        row, game = await table.state()
        assert game.phase.value == "play" and len(game.trick) == 2
    finally:
        await bot.stop()

    bot = await make_bot(tg, db).start()
    table.bot = bot
    try:
        await table.play(cheap_policy)
        row, game = await table.state()
        assert row.status == "finished"
        await tg.wait_for_message(table.group, "Partita finita")
        await bot.rt.outbox.drain()
        await check_clean(tg, table)
        await check_scores(table)
        # one table message per smazzata, edited in place across both restarts
        tables = [m for m in tg.chat_messages(table.group, from_bot=True)
                  if "Smazzata 1</b>" in (m.source or "") or m.content.startswith("🃏 Smazzata 1")]
        assert len(tables) == 1, tables
    finally:
        await bot.stop()
