"""Forum topics end to end (issue 48): two tables in two topics of one forum, and every
message of each (lobby, auction, table, results, a turn timer's notice, the final
scores and its rivincita, the next season's podium) in its own topic; a topic closed
under a running table (Telegram's ``TOPIC_CLOSED``) ends that table once, said in the
log, without a retry loop, while the other topic's table plays on."""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from bot.features.seasons import SEASON_ZONE
from bot.prefs import with_value
from storage import repo
from tests.conftest import make_bot
from tests.e2e.driver import cheap_policy, small_table
from tests.e2e.test_e2e_chats import game_ids
from tests.e2e.test_e2e_rematch import final_message


def humans(tg: Any, *names: str) -> list[Any]:
    return [tg.add_user(n, language_code="it") for n in names]


async def set_timeout(bot: Any, chat_id: int, seconds: int) -> None:
    prefs = with_value(await bot.rt.chat_prefs(chat_id), "turn_timeout", str(seconds))
    await repo.save_chat_settings(bot.rt.db, chat_id, prefs.language, prefs.to_json())


async def test_every_message_of_two_tables_lands_in_its_topic(tg: Any, tmp_path: Path) -> None:
    october = datetime(2026, 10, 15, 20, 0, tzinfo=SEASON_ZONE).timestamp()
    bot = await make_bot(tg, tmp_path / "bot.db").start()
    offset = october - bot.rt.db.clock()
    real = bot.rt.db.clock
    bot.rt.db.clock = lambda: real() + offset  # the stored times: in October
    try:
        ada, ben = humans(tg, "Ada", "Ben")
        for p in (ada, ben):
            await p.start_bot()
        forum = tg.add_forum("Circolo", [ada, ben], admins=[ada])
        t1, t2 = tg.add_topic(forum, "Tavolo 1"), tg.add_topic(forum, "Tavolo 2")
        one = await small_table(tg, bot, forum, [ada], thread=t1)
        two = await small_table(tg, bot, forum, [ben], thread=t2)
        await set_timeout(bot, forum.id, 2)  # table one's turns have a clock
        sent = await ada.send(forum, "/inizia", thread_id=t1)
        await tg.wait_for_message(forum, "Smazzata 1", after=sent, timeout=10)
        await set_timeout(bot, forum.id, 0)
        await ben.send(forum, "/inizia", thread_id=t2)
        # Ada lets her first turn run out: the notice is in her table's topic
        timed_out = await tg.wait_for_message(forum, "non ha giocato in tempo", timeout=20)
        assert timed_out.thread_id == t1
        await one.play(cheap_policy)
        await two.play(cheap_policy)
        for table in (one, two):
            assert (await table.row()).status == "finished"
        assert one.game_id is not None and two.game_id is not None
        gid1, gid2 = one.game_id, two.game_id
        f1 = await tg.wait_until(lambda: final_message(tg, forum, gid1), timeout=10)
        f2 = await tg.wait_until(lambda: final_message(tg, forum, gid2), timeout=10)
        assert (f1.thread_id, f2.thread_id) == (t1, t2)

        # the rivincita of table one: in its topic (Ada alone: it deals at once)
        answer = await (await ada.press(f1, f"r:{gid1}:go")).wait(10)
        assert not answer.show_alert, answer.text
        again = await repo.get_active_game(bot.rt.db, forum.id, t1)
        assert again is not None and again.thread_id == t1 and again.status == "playing"
        await tg.wait_until(lambda: any(again.game_id in game_ids(m)
                                        for m in tg.chat_messages(forum, from_bot=True)),
                            timeout=10, what="the rivincita's table")

        # November: the next game of the group starts with October's podium, in its topic
        november = datetime(2026, 11, 2, 20, 0, tzinfo=SEASON_ZONE).timestamp()
        bot.rt.db.clock = lambda: real() + november - october + offset
        sent = await ben.send(forum, "/nuova", thread_id=t2)
        podium = await tg.wait_for_message(forum, "Stagione finita: ottobre 2026", after=sent)
        assert podium.thread_id == t2 and "🥇" in podium.content
        assert podium.content.index("Stagione finita") < podium.content.index("nuova partita")
        await bot.handled()
        await bot.rt.outbox.drain()

        sent_all = tg.chat_messages(forum, from_bot=True, include_deleted=True)
        assert sent_all and all(m.thread_id in (t1, t2) for m in sent_all)
        for gid, thread in ((gid1, t1), (gid2, t2), (again.game_id, t1)):
            mine = [m for m in sent_all if gid in game_ids(m)]
            assert mine and all(m.thread_id == thread for m in mine), gid
        assert [m.thread_id for m in sent_all if "Stagione finita" in m.content] == [t2]
        assert not tg.errors and not tg.unanswered_callbacks() and not tg.flood_violations
    finally:
        await bot.stop()


async def test_a_closed_topic_ends_its_table_once(
    tg: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    bot = await make_bot(tg, tmp_path / "bot.db").start()
    try:
        ada, ben = humans(tg, "Ada", "Ben")
        for p in (ada, ben):
            await p.start_bot()
        forum = tg.add_forum("Circolo", [ada, ben], admins=[ada])
        t1, t2 = tg.add_topic(forum, "Tavolo 1"), tg.add_topic(forum, "Tavolo 2")
        # (the match's length is the chat's: both tables play two smazzate)
        one = await small_table(tg, bot, forum, [ada], thread=t1, match_end="hands:2")
        two = await small_table(tg, bot, forum, [ben], thread=t2, match_end="hands:2")
        for person, thread in ((ada, t1), (ben, t2)):
            sent = await person.send(forum, "/inizia", thread_id=thread)
            await tg.wait_for_message(forum, "Smazzata 1", after=sent, timeout=10)
        await one.play(cheap_policy, until=lambda g: g.phase.value == "play" and g.trick_no >= 2)
        tg.close_topic(forum, t1)
        # the first smazzata ends: its result must be posted in the closed topic
        await one.play(cheap_policy, until=lambda g: g.smazzata_index == 1)
        await tg.wait_until(lambda: any("TOPIC_CLOSED" in (e.description or "")
                                        for e in tg.errors), timeout=10, what="the refusal")
        for _ in range(500):
            row = await one.row()
            if row.status != "playing":
                break
            await asyncio.sleep(0.01)
        assert row.status == "cancelled"
        await one.play(cheap_policy)  # (nothing left to play)
        await two.play(cheap_policy)
        assert (await two.row()).status == "finished"
        await tg.wait_until(lambda: two.game_id is not None
                            and final_message(tg, forum, two.game_id), timeout=10)
        await bot.handled()
        await bot.rt.outbox.drain()

        refused = [e for e in tg.errors if "TOPIC_CLOSED" in (e.description or "")]
        assert len(refused) == 1, refused  # tried once, not again
        assert all("TOPIC_CLOSED" in (e.description or "") for e in tg.errors), tg.errors
        logged = [r.getMessage() for r in caplog.records if "closed" in r.getMessage()]
        assert any(f"game {one.game_id} cancelled" in line for line in logged), logged
        # Ada's private hand says the table ended (no keyboard left)
        hands = [m for m in tg.chat_messages(ada, from_bot=True) if one.game_id in game_ids(m)]
        assert hands and not any(b.callback_data for b in hands[-1].buttons)

        # the group reopens the topic: a new table there is shown there again
        tg.reopen_topic(forum, t1)
        await tg.wait_until(lambda: not bot.rt.outbox.closed_topics, timeout=10,
                            what="the reopening seen")
        sent = await ada.send(forum, "/nuova", thread_id=t1)
        lobby = await tg.wait_for_message(forum, "nuova partita", after=sent, timeout=10)
        assert lobby.thread_id == t1
        assert len([e for e in tg.errors if "TOPIC_CLOSED" in (e.description or "")]) == 1
        assert not tg.unanswered_callbacks() and not tg.flood_violations
    finally:
        await bot.stop()
