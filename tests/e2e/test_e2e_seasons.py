"""Seasons end to end (issue 48): /classifica shows the current month's table, read from
the stored results; /classifica sempre the table of all time; when the month is over, the
next lobby of the group starts with its podium, once; a group admin switches seasons off
(or to a quarter, a year) in /impostazioni."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from bot.features.seasons import SEASON_ZONE
from bot.prefs import MENU
from bot.render.texts import signed
from storage import repo
from tests.conftest import make_bot
from tests.e2e.driver import cheap_policy, small_table


async def test_season_table_podium_and_setting(tg: Any, tmp_path: Path) -> None:
    bot = await make_bot(tg, tmp_path / "bot.db").start()
    real = bot.rt.db.clock
    october = datetime(2026, 10, 31, 23, 0, tzinfo=SEASON_ZONE).timestamp()
    start = real()
    bot.rt.db.clock = lambda: october + real() - start
    try:
        ada = tg.add_user("Ada <3", language_code="it")
        ben = tg.add_user("Ben", language_code="it")
        for p in (ada, ben):
            await p.start_bot()
        group = tg.add_group("Bar", [ada, ben], admins=[ada])
        table = await small_table(tg, bot, group, [ada, ben])
        sent = await ada.send(group, "/inizia")
        await tg.wait_for_message(group, "Smazzata 1", after=sent, timeout=10)
        await table.play(cheap_policy)
        await tg.wait_for_message(group, "Partita finita", timeout=10)
        alltime = {r.user_id: r.total for r in await repo.leaderboard(bot.rt.db, group.id)}
        assert set(alltime) == {ada.id, ben.id}

        sent = await ben.send(group, "/classifica")
        board = await tg.wait_for_message(group, "Classifica — ottobre 2026", after=sent)
        assert "Ada <3" in board.content and "/classifica sempre" in board.content
        assert "I rating: /classifica rating" in board.content
        for name, user in (("Ada <3", ada), ("Ben", ben)):
            line = next(x for x in board.content.splitlines() if name in x)
            assert signed(alltime[user.id]) in line

        # an hour later it is November in Rome: a new season, empty
        bot.rt.db.clock = lambda: october + 3600 + real() - start
        sent = await ben.send(group, "/classifica")
        await tg.wait_for_message(group, "nessun punteggio in questa stagione (novembre 2026)",
                                  after=sent)
        sent = await ben.send(group, "/classifica sempre")
        board = await tg.wait_for_message(group, "Classifica", after=sent)
        assert "Ada <3" in board.content and "Questa stagione: /classifica" in board.content
        assert "I rating: /classifica rating" in board.content

        # the first message of the next game starts with October's podium; only once
        sent = await ben.send(group, "/nuova")
        lobby = await tg.wait_for_message(group, "nuova partita", after=sent)
        assert lobby.content.startswith("🏁 Stagione finita: ottobre 2026\n🥇")
        winner = max(alltime, key=lambda u: alltime[u])
        first = next(x for x in lobby.content.splitlines() if x.startswith("🥇"))
        assert ("Ada" in first) == (winner == ada.id) or alltime[ada.id] == alltime[ben.id]
        gid = (await repo.get_active_game(bot.rt.db, group.id)).game_id  # type: ignore[union-attr]
        await bot.rt.service.cancel(gid)
        sent = await ada.send(group, "/nuova")
        lobby = await tg.wait_for_message(group, "nuova partita", after=sent)
        assert "Stagione finita" not in lobby.content

        # seasons off (a group admin, in /impostazioni): /classifica is of all time
        index = next(i for i, option in enumerate(MENU) if option.key == "season")
        sent = await ada.send(group, "/impostazioni")
        menu = await tg.wait_for_message(group, "Impostazioni", after=sent)
        assert "Stagione della classifica: mese" in [b.text for b in menu.buttons]
        for _ in range(3):  # mese -> trimestre -> anno -> nessuna
            answer = await (await ada.press(menu, f"s:c:{index}")).wait(10)
            assert not answer.show_alert, answer.text
        await tg.wait_until(lambda: "Stagione della classifica: nessuna"
                            in [b.text for b in tg.message(group, menu.message_id).buttons])
        assert (await bot.rt.chat_prefs(group.id)).season == "none"
        answer = await (await ben.press(menu, f"s:c:{index}")).wait(10)  # not an admin
        assert answer.show_alert
        sent = await ben.send(group, "/classifica")
        board = await tg.wait_for_message(group, "Classifica", after=sent)
        assert "stagione" not in board.content.lower() and "Ada <3" in board.content
        assert not tg.errors and not tg.unanswered_callbacks() and not tg.flood_violations
    finally:
        await bot.stop()
