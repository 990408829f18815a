"""Restart: stop the Application mid-auction and mid-trick, start a new one on the same
database, and finish the match; buttons drawn before the restart keep working."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from bot.tables import ui_of
from tests.conftest import make_bot
from tests.e2e.driver import cheap_policy
from tests.e2e.test_e2e_match import (
    check_clean,
    check_scores,
    make_users,
    open_table,
    set_options,
)


async def test_restart_mid_auction_and_mid_trick(tg: Any, database_url: str) -> None:
    db = database_url
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


async def test_every_result_is_posted_after_falling_behind(tg: Any, database_url: str) -> None:
    """Two smazzate end while the bot is down (moves written, nothing drawn): after the
    restart both results are posted, in order, then the match goes on to its end."""
    from storage import repo

    db_path = database_url
    table, group, _ = await started_then_stopped(tg, db_path, "hands:3")
    assert table.game_id is not None
    await play_while_down(db_path, table.game_id, lambda game: game.scored_count == 2)

    bot = await make_bot(tg, db_path).start()
    table.bot = bot
    try:
        await tg.wait_until(lambda: len(results(tg, group)) == 2, timeout=10)
        await table.play(cheap_policy)
        await tg.wait_for_message(group, "Partita finita", timeout=10)
        await bot.rt.outbox.drain()
        posted = results(tg, group)
        numbers = [int(m.content.split("smazzata ")[1].split()[0]) for m in posted]
        assert len(posted) == 3 and numbers == sorted(numbers), numbers
        stored = await repo.load_smazzata_results(bot.rt.db, table.game_id)
        assert [r.smazzata_index + 1 for r in stored] == numbers
        await check_scores(table)
        assert not tg.errors and not tg.flood_violations
    finally:
        await bot.stop()


def results(tg: Any, group: Any) -> list[Any]:
    return [m for m in tg.chat_messages(group, from_bot=True) if "Fine della smazzata" in m.content]


async def test_match_that_ended_while_the_bot_was_down_is_announced(
    tg: Any, database_url: str
) -> None:
    """The last moves of a match are stored but the bot stops before drawing them: after
    the restart the group gets the last result and the final scores, once, and the table
    and hands lose their buttons."""
    from storage import repo

    db_path = database_url
    table, group, ugo = await started_then_stopped(tg, db_path, "hands:1")
    assert table.game_id is not None
    row = await play_while_down(db_path, table.game_id, lambda game: game.is_over())
    assert row.status == "finished"
    assert not finals(tg, group)

    bot = await make_bot(tg, db_path).start()
    try:
        await tg.wait_for_message(group, "Partita finita", timeout=10)
        await bot.rt.outbox.drain()
        assert len(results(tg, group)) == 1
        row = await repo.get_game(bot.rt.db, table.game_id)
        assert row is not None and ui_of(row).drawn == row.version
        # no button of the match is left; the final scores carry the rivincita's only
        rematch = f"r:{table.game_id}:go"
        for message in tg.chat_messages(group, from_bot=True) + tg.chat_messages(ugo):
            data = [b.callback_data for b in message.buttons if b.callback_data]
            expected = [rematch] if "Partita finita" in message.content else []
            assert data == expected, (message.content, data)
    finally:
        await bot.stop()

    bot = await make_bot(tg, db_path).start()  # drawn: a further restart posts nothing
    try:
        await asyncio.sleep(0.5)
        await bot.rt.outbox.drain()
        assert len(finals(tg, group)) == 1 and len(results(tg, group)) == 1
        assert not tg.errors and not tg.flood_violations
    finally:
        await bot.stop()


def finals(tg: Any, group: Any) -> list[Any]:
    return [m for m in tg.chat_messages(group, from_bot=True) if "Partita finita" in m.content]


async def started_then_stopped(tg: Any, db_path: str, match_end: str) -> tuple[Any, Any, Any]:
    """Ugo and four computers start a match (the computers wait 30 s to move); the bot
    stops once the first table is drawn. Returns the table, the group and Ugo."""
    from tests.e2e.driver import small_table

    bot = await make_bot(tg, db_path, computer_delay_seconds=30).start()
    ugo = tg.add_user("Ugo", language_code="it")
    await ugo.start_bot()
    group = tg.add_group("Tavolo", [ugo], admins=[ugo])
    try:
        table = await small_table(tg, bot, group, [ugo], match_end=match_end)
        await ugo.send(group, "/inizia")
        await tg.wait_for_message(group, "Smazzata 1")
        await bot.rt.outbox.drain()
    finally:
        await bot.stop()
    return table, group, ugo


async def play_while_down(db_path: str, game_id: int, done: Callable[[Any], bool]) -> Any:
    """With the bot stopped, make its computer moves through the service (stored, never
    drawn) until ``done(game)``; return the stored row."""
    from bot import players
    from bot.service import GameService
    from storage import open_database

    db = await open_database(db_path)
    try:
        service = GameService(db)
        while True:
            row = await service.row(game_id)
            game = service.game_of(row)
            if done(game):
                return row
            seat = game.current_seat()
            assert seat is not None
            action = players.choose("facile", row.version, game.view(seat))
            await service.apply(row.game_id, row.version, seat, action.code, "computer")
    finally:
        await db.close()


async def test_a_graceful_stop_stores_the_hand_on_its_way(tg: Any, tmp_path: Any) -> None:
    """A stop that comes while a new hand is being sent waits for it (within the drain's
    budget): the hand is delivered and its id stored, so that the next process edits it
    (closes it at the match's end) instead of leaving its buttons behind and sending
    another copy."""
    from storage import open_database, repo
    from tests.e2e.driver import small_table

    db_path = tmp_path / "bot.db"
    bot = await make_bot(tg, db_path, computer_delay_seconds=30).start()
    ugo = tg.add_user("Ugo", language_code="it")
    await ugo.start_bot()
    group = tg.add_group("Tavolo", [ugo], admins=[ugo])
    try:
        table = await small_table(tg, bot, group, [ugo], match_end="hands:1")
        held = tg.inject("sendMessage", "slow", chat=ugo.private_chat, delay=1.0)
        await ugo.send(group, "/inizia")
        await tg.wait_until(lambda: held.hits, 10, what="the hand's send held")
    finally:
        await bot.stop()
    hands = [m for m in tg.chat_messages(ugo, from_bot=True) if "Le tue carte" in m.content]
    assert len(hands) == 1
    db = await open_database(db_path)
    try:
        assert table.game_id is not None
        row = await repo.get_game(db, table.game_id)
        assert row is not None
        assert list(ui_of(row).hands.values()) == [hands[0].message_id]
    finally:
        await db.close()
