"""AFK: reminder at half time, a computer move at expiry, the seat handed over after two
timeouts in a row, and "Sono tornato" giving it back."""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path
from typing import Any

import pytest

from game import Game, TableOptions
from storage import repo
from tests.conftest import make_bot


async def one_human_lobby(tg: Any, bot: Any, name: str, title: str) -> tuple[Any, Any, int]:
    """A group where ``name`` opens a lobby, joins it and adds four computers."""
    human = tg.add_user(name, language_code="it")
    await human.start_bot()
    group = tg.add_group(title, [human])
    await human.send(group, "/nuova")
    lobby = await tg.wait_for_message(group, "Briscola chiamata")
    gid = (await repo.get_active_game(bot.rt.db, group.id, 0)).game_id
    await (await human.press(lobby, f"l:{gid}:join")).wait(10)
    for _ in range(4):
        await (await human.press(lobby, f"l:{gid}:cpu")).wait(10)
    return human, group, gid


async def test_turn_timeout_and_back(tg: Any, tmp_path: Path) -> None:
    bot = await make_bot(tg, tmp_path / "bot.db", turn_timeout_seconds=1).start()
    try:
        human, group, gid = await one_human_lobby(tg, bot, "Lenta & <slow>", "AFK")
        await human.send(group, "/inizia")
        await tg.wait_for_message(human, "Tocca a te! Hai ancora", timeout=10)
        await tg.wait_for_message(group, "non ha giocato in tempo", timeout=10)
        away = await tg.wait_for_message(group, "ha saltato due turni", timeout=20)
        assert "Lenta &amp; &lt;slow&gt;" not in away.content and "Lenta & <slow>" in away.content
        row = await repo.get_game(bot.rt.db, gid)
        assert row is not None and row.seats[0].away
        hand = await tg.wait_until(
            lambda: next((m for m in tg.chat_messages(human, from_bot=True)
                          if any(b.callback_data == f"b:{gid}" for b in m.buttons)), None),
            timeout=10,
        )
        answer = await (await human.press(hand, f"b:{gid}")).wait(10)
        assert not answer.show_alert
        await tg.wait_for_message(group, "è tornato al tavolo", timeout=10)
        row = await repo.get_game(bot.rt.db, gid)
        assert row is not None and not row.seats[0].away and row.seats[0].afk_strikes == 0
        await repo.set_status(bot.rt.db, gid, "cancelled")
        await bot.rt.outbox.drain()
        assert not [e for e in tg.errors if e.method != "sendChatAction"], tg.errors
        assert not tg.unanswered_callbacks()
    finally:
        await bot.stop()


async def test_match_keeps_its_timeout_across_a_restart(tg: Any, tmp_path: Path) -> None:
    """The turn timeout is the one the match started with: changing the chat's setting
    (to "no timeout") and restarting the bot (whose default is no timeout) changes nothing."""
    from bot.prefs import Prefs
    from tests.e2e.driver import small_table

    db_path = tmp_path / "bot.db"
    bot = await make_bot(tg, db_path).start()  # TURN_TIMEOUT_SECONDS=0
    human = tg.add_user("Lento", language_code="it")
    await human.start_bot()
    group = tg.add_group("AFK", [human], admins=[human])
    try:
        await repo.save_chat_settings(bot.rt.db, group.id, "it", Prefs(turn_timeout=1).to_json())
        table = await small_table(tg, bot, group, [human])
        await human.send(group, "/inizia")
        await tg.wait_for_message(group, "Smazzata 1")
        await repo.save_chat_settings(bot.rt.db, group.id, "it", Prefs(turn_timeout=0).to_json())
    finally:
        await bot.stop()
    bot = await make_bot(tg, db_path).start()
    try:
        await tg.wait_for_message(group, "ha saltato due turni", timeout=15)
        row = await repo.get_game(bot.rt.db, table.game_id)  # type: ignore[arg-type]
        assert row is not None and row.seat_of(human.id).away  # type: ignore[union-attr]
        actions = await repo.load_actions(bot.rt.db, row.game_id)
        assert [a.actor for a in actions].count("timeout") == 2
        await repo.set_status(bot.rt.db, row.game_id, "cancelled")
    finally:
        await bot.stop()


async def test_turn_clock_starts_when_the_buttons_arrive(tg: Any, tmp_path: Path) -> None:
    """Under Telegram's limits a player's buttons can arrive long after their turn began:
    their time counts from the delivery (the clock is restarted then), so they are not
    timed out for the bot's own delay."""
    timeout = 2
    bot = await make_bot(tg, tmp_path / "bot.db", turn_timeout_seconds=timeout).start()
    try:
        human, group, gid = await one_human_lobby(tg, bot, "Paziente", "Lento")
        # a deal where the human (seat 0) calls first: their turn begins with the match
        seed = next(n for n in range(200) if Game.new(
            TableOptions(), rng=random.Random(n)).current_seat() == 0)
        bot.rt.service.seed_source = lambda: seed
        # the group's next message (and so everything after it there) takes 3.5 s to arrive
        tg.inject("sendMessage", "slow", chat=group, delay=3.5)
        await human.send(group, "/inizia")
        for _ in range(100):  # the human's turn is stored (and its clock runs) at once
            row = await repo.get_game(bot.rt.db, gid)
            if row is not None and row.turn_deadline is not None:
                break
            await asyncio.sleep(0.02)
        assert row is not None and row.turn_deadline is not None
        first_deadline = row.turn_deadline
        await tg.wait_for_message(group, "Smazzata 1", timeout=15)
        shown = time.time()
        assert first_deadline < shown, "the first clock ran out before anything was shown"
        for _ in range(40):  # the clock restarts once the buttons are delivered
            row = await repo.get_game(bot.rt.db, gid)
            assert row is not None and row.turn_deadline is not None
            if row.turn_deadline >= shown + timeout - 0.5:
                break
            await asyncio.sleep(0.05)
        else:
            pytest.fail(f"turn deadline not restarted: {row.turn_deadline - shown:.2f}s")
        await tg.wait_for_message(group, "non ha giocato in tempo", timeout=15)
        assert time.time() >= shown + timeout - 0.5, "timed out before having the time"
        await repo.set_status(bot.rt.db, gid, "cancelled")
        await bot.rt.outbox.drain()
    finally:
        await bot.stop()
