"""Chats changing under a running match: a group upgraded to a supergroup, a player who
blocks the bot, and two matches at once in two topics of a forum."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from storage import repo
from tests.conftest import make_bot
from tests.e2e.driver import cheap_policy, small_table
from tests.e2e.test_e2e_match import check_scores


def humans(tg: Any, *names: str) -> list[Any]:
    return [tg.add_user(n, language_code="it") for n in names]


async def test_group_becomes_supergroup_mid_match(tg: Any, tmp_path: Path) -> None:
    bot = await make_bot(tg, tmp_path / "bot.db").start()
    try:
        people = humans(tg, "Ada <3", "Bruno & C")
        for p in people:
            await p.start_bot()
        group = tg.add_group("Briscola del giovedì", people, admins=[people[0]])
        table = await small_table(tg, bot, group, people, match_end="hands:2")
        await people[0].send(group, "/inizia")
        await tg.wait_for_message(group, "Smazzata 1")
        await table.play(cheap_policy, until=lambda g: g.smazzata_index == 1)
        assert await repo.leaderboard(bot.rt.db, group.id)  # smazzata 1 scored here

        new = tg.migrate_to_supergroup(group)
        table.group = new
        await tg.wait_for_message(new, "Smazzata 2", timeout=10)  # the table, re-created
        await table.play(cheap_policy)
        row, _game = await table.state()
        assert row.status == "finished" and row.chat_id == new.id
        await tg.wait_for_message(new, "Partita finita", timeout=10)
        await bot.rt.outbox.drain()

        await check_scores(table)  # both smazzate, all in the new chat
        assert await repo.leaderboard(bot.rt.db, group.id) == []
        prefs = await bot.rt.chat_prefs(new.id)
        assert prefs.options.match_end == "hands:2"  # the settings moved too
        await people[1].send(new, "/classifica")
        board = await tg.wait_for_message(new, "Classifica")
        assert "Ada <3" in board.content and "Bruno & C" in board.content
        # the old id is only tried until the bot learns of the upgrade
        old_errors = [e for e in tg.errors if e.chat_id == group.id]
        assert all("upgraded to a supergroup" in (e.description or "") for e in old_errors)
        assert len(old_errors) <= 3, old_errors
        assert not [e for e in tg.errors if e.chat_id != group.id], tg.errors
        assert not tg.unanswered_callbacks() and not tg.flood_violations
    finally:
        await bot.stop()


async def test_player_blocks_the_bot_mid_match(tg: Any, tmp_path: Path) -> None:
    bot = await make_bot(tg, tmp_path / "bot.db").start()
    try:
        people = humans(tg, "Carla", "Dario <b>")
        for p in people:
            await p.start_bot()
        group = tg.add_group("Tavolo", people, admins=[people[0]])
        table = await small_table(tg, bot, group, people)
        await people[0].send(group, "/inizia")
        await tg.wait_for_message(group, "Smazzata 1")
        victim = people[1]
        row = await table.row()
        seat = row.seat_of(victim.id)
        assert seat is not None

        def victims_turn(g: Any) -> bool:
            return bool(g.phase.value == "play" and g.trick_no >= 1
                        and g.current_seat() == seat.seat)

        await table.play(cheap_policy, until=victims_turn)
        victim.block_bot()
        del table.users[victim.id]
        note = await tg.wait_for_message(group, "Non riesco più a scrivere", timeout=10)
        assert "Dario <b>" in note.content
        row = await table.row()
        taken = row.seat(seat.seat)
        assert taken is not None and not taken.is_human and taken.user_id is None
        assert await repo.games_of_user(bot.rt.db, victim.id) == []

        await table.play(cheap_policy)  # the computer plays the seat to the end
        row, game = await table.state()
        assert row.status == "finished"
        await tg.wait_for_message(group, "Partita finita", timeout=10)
        await bot.rt.outbox.drain()
        board = {r.user_id: r.total for r in await repo.leaderboard(bot.rt.db, group.id)}
        stayed = row.seat_of(people[0].id)
        assert stayed is not None and board == {people[0].id: game.totals[stayed.seat]}
        user = await repo.get_user(bot.rt.db, victim.id)
        assert user is not None and not user.private_ok
        assert all(e.chat_id == victim.id and e.error_code == 403 for e in tg.errors), tg.errors
        assert not tg.unanswered_callbacks() and not tg.flood_violations
    finally:
        await bot.stop()


async def test_two_matches_in_two_topics(tg: Any, tmp_path: Path) -> None:
    bot = await make_bot(tg, tmp_path / "bot.db").start()
    try:
        ada, ben = humans(tg, "Ada", "Ben")
        for p in (ada, ben):
            await p.start_bot()
        forum = tg.add_forum("Circolo <Forum>", [ada, ben], admins=[ada])
        t1, t2 = tg.add_topic(forum, "Tavolo 1"), tg.add_topic(forum, "Tavolo 2")
        one = await small_table(tg, bot, forum, [ada], thread=t1)
        two = await small_table(tg, bot, forum, [ben], thread=t2)
        assert one.game_id != two.game_id
        again = await ada.send(forum, "/nuova", thread_id=t1)  # one game per topic
        busy = await tg.wait_for_message(forum, "C'è già una partita qui", after=again)
        assert busy.thread_id == t1

        await ada.send(forum, "/inizia", thread_id=t1)
        await ben.send(forum, "/inizia", thread_id=t2)
        await tg.wait_until(lambda: {m.thread_id for m in tg.chat_messages(forum, from_bot=True)
                                     if "Smazzata 1" in m.content} == {t1, t2}, timeout=10)
        await asyncio.gather(one.play(cheap_policy), two.play(cheap_policy))
        for table in (one, two):
            row, _ = await table.state()
            assert row.status == "finished"
        await tg.wait_until(lambda: len(finals(tg, forum)) == 2, timeout=10)
        await bot.rt.outbox.drain()

        assert sorted(m.thread_id for m in finals(tg, forum)) == sorted([t1, t2])
        sent = tg.chat_messages(forum, from_bot=True, include_deleted=True)
        assert sent and all(m.thread_id in (t1, t2) for m in sent)
        for table, thread in ((one, t1), (two, t2)):
            mine = [m for m in sent if table.game_id in game_ids(m)]
            assert mine and all(m.thread_id == thread for m in mine)
            results = [m for m in sent
                       if m.thread_id == thread and "Fine della smazzata" in m.content]
            assert len(results) == 1
        await ben.send(forum, "/classifica", thread_id=t2)
        board = await tg.wait_for_message(forum, "Classifica")
        assert board.thread_id == t2 and "Ada" in board.content and "Ben" in board.content
        assert not tg.errors and not tg.unanswered_callbacks() and not tg.flood_violations
    finally:
        await bot.stop()


def game_ids(message: Any) -> set[int]:
    """The game ids in the callback data of a message's keyboards, now or before an edit."""
    ids = set()
    for markup in (message.reply_markup, *(h.reply_markup for h in message.history)):
        for row in (markup or {}).get("inline_keyboard", []):
            for button in row:
                parts = button.get("callback_data", "").split(":")
                if len(parts) > 1 and parts[0] != "s" and parts[1].isdigit():
                    ids.add(int(parts[1]))
    return ids


def finals(tg: Any, chat: Any) -> list[Any]:
    return [m for m in tg.chat_messages(chat, from_bot=True) if "Partita finita" in m.content]

