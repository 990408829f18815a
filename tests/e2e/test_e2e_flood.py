"""Real Telegram flood limits: computer players move in bursts, the bot coalesces edits and
stays within 20 group calls per rolling minute without a single 429."""

from __future__ import annotations

from pathlib import Path

from storage import repo
from tests.conftest import make_bot


async def test_computer_burst_respects_real_limits(tmp_path: Path) -> None:
    from sandbox.fakeapi import FakeTelegram

    async with FakeTelegram() as tg:  # default = Telegram's limits
        bot = await make_bot(tg, tmp_path / "bot.db", speed=1).start()
        try:
            human = tg.add_user("Zoë <3", language_code="it")
            await human.start_bot()
            group = tg.add_group("Solo & computer", [human])
            await human.send(group, "/impostazioni")
            menu = await tg.wait_for_message(group, "Impostazioni")
            await (await human.press(menu, "s:c:9")).wait(10)  # match_end -> target:7
            for _ in range(3):  # target:7 -> target:5 -> target:21 -> hands:1
                await (await human.press(menu, "s:c:9")).wait(10)
            prefs = await bot.rt.chat_prefs(group.id)
            assert prefs.options.match_end == "hands:1"
            await human.send(group, "/nuova")
            # (at the group's pace, after the menu and its edit asked for before it: a
            # group's new messages wait in line with its edits, issue 46)
            lobby = await tg.wait_for_message(group, "Briscola chiamata", timeout=10)
            gid = (await repo.get_active_game(bot.rt.db, group.id, 0)).game_id
            await (await human.press(lobby, f"l:{gid}:join")).wait(10)
            for _ in range(4):
                answer = await (await human.press(lobby, f"l:{gid}:cpu")).wait(10)
                assert not answer.show_alert
            await human.send(group, "/inizia")
            await tg.wait_for_message(group, "Smazzata 1", timeout=15)
            await human.send(group, "/esci")  # the computer takes the seat, announced
            await tg.wait_for_message(group, "un computer prende il suo posto", timeout=15)
            await tg.wait_for_message(group, "Partita finita", timeout=60)
            await bot.rt.outbox.drain(30)
            assert not tg.flood_violations
            assert not [e for e in tg.errors if e.method != "sendChatAction"], tg.errors
            assert not tg.unanswered_callbacks()
            times = sorted(
                c.at for c in tg.calls
                if c.chat_id == group.id and c.ok
                and c.method in ("sendMessage", "editMessageText", "editMessageReplyMarkup")
            )
            assert all(
                sum(1 for t in times if start <= t < start + 60) <= 20 for start in times
            )
            row = await repo.get_game(bot.rt.db, gid)
            assert row is not None and row.status == "finished"
            assert row.version > 40  # a whole smazzata of computer moves...
            assert len(times) < 20  # ...rendered with a handful of coalesced group calls
        finally:
            await bot.stop()
