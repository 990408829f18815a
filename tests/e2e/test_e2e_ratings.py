"""Ratings, partner statistics and the inline mode end to end (issue 48), through the real
PTB Application and the fake Bot API: each smazzata's result sheet shows every player's
rating change, as recomputed by a rebuild; ``/classifica rating`` ranks the group;
``/statistiche`` shows the rating, the partners and (``@name``) a head-to-head line, and
refuses a name it does not know; ``@bot`` in any chat invites to a table (its links open a
lobby in a group, or a table alone) and tells the user's rating; garbage is refused."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from bot.ratings import model
from bot.ratings.rebuild import fold
from storage import ratings as rating_store
from storage import repo
from tests.conftest import make_bot
from tests.e2e.driver import cheap_policy, small_table


async def test_result_sheets_boards_and_statistics(tg: Any, tmp_path: Path) -> None:
    bot = await make_bot(tg, tmp_path / "bot.db").start()
    try:
        ada = tg.add_user("Ada", username="ada_plays", language_code="it")
        bea = tg.add_user("Bea", username="bea_b", language_code="en")
        cleo = tg.add_user("Cleo", language_code="it")
        for person in (ada, bea, cleo):
            await person.start_bot()
        group = tg.add_group("Bar", [ada, bea, cleo], admins=[ada])
        table = await small_table(tg, bot, group, [ada, bea, cleo], match_end="hands:6")
        sent = await ada.send(group, "/inizia")
        await tg.wait_for_message(group, "Smazzata 1", after=sent, timeout=10)
        await table.play(cheap_policy)
        # the final scores are sent after the last move (the group's pace): wait for them
        await tg.wait_for_message(group, "Partita finita", timeout=20)
        await bot.rt.outbox.drain()
        db = bot.rt.db
        assert (await table.row()).status == "finished"

        # every smazzata's sheet but the last carries the rating changes, equal to a
        # rebuild's; the match's last message carries the whole match's (after its last
        # unit, the sum of its changes) and 🔁 Rivincita together
        rebuilt = fold(await rating_store.units(db), {})
        by_unit: dict[int, dict[str, tuple[int, int]]] = {}
        for unit_id, seat in rebuilt.seats:
            after = model.shown(seat.mu, seat.sigma)
            by_unit.setdefault(unit_id, {})[seat.player] = (
                after, after - model.shown(seat.mu_before, seat.sigma_before))
        said = [m for m in tg.chat_messages(group, from_bot=True) if "📈" in m.content]
        units = await rating_store.units(db)
        results = await repo.load_smazzata_results(db, table.game_id)  # type: ignore[arg-type]
        assert len(units) == len(results) == len(said) >= 6
        sheets, final = said[:-1], said[-1]
        assert final == tg.chat_messages(group, from_bot=True)[-1]  # the last message
        assert "Partita finita" in final.content
        assert [b.callback_data for b in final.buttons] == [f"r:{table.game_id}:go"]
        names = {model.user_key(u.id): u.first_name for u in (ada, bea, cleo)}

        def shown(text: str, head: str) -> dict[str, str]:
            lines = text.split(head, 1)[1].split("\n\n", 1)[0].splitlines()
            return {line.split(":")[0].strip(): line.split(":")[1].strip() for line in lines
                    if ":" in line and "(" in line}

        def signed(change: int) -> str:
            return f"+{change}" if change > 0 else (f"−{-change}" if change < 0 else "±0")

        for sheet, unit in zip(sheets, units[:-1], strict=True):
            for key, (rating, change) in by_unit[unit.unit_id].items():
                name = names.get(key, "🤖 facile")
                assert shown(sheet.content, "📈 Rating\n")[name] == \
                    f"{rating} ({signed(change)})", (sheet.content, key)
        assert "📈" not in next(m for m in tg.chat_messages(group, from_bot=True)
                               if f"Fine della smazzata {len(units)}" in m.content).content
        total = shown(final.content, "📈 Rating dopo la partita\n")
        assert set(total) == {names.get(k, "🤖 facile") for k in by_unit[units[0].unit_id]}
        for key in by_unit[units[-1].unit_id]:
            rating = by_unit[units[-1].unit_id][key][0]
            change = sum(by_unit[u.unit_id][key][1] for u in units)
            assert total[names.get(key, "🤖 facile")] == f"{rating} ({signed(change)})"
            scored = json.loads(next(r.result_json for r in results
                                     if r.smazzata_index == unit.smazzata_index))
            calling = {scored["chiamante"], scored["socio"]}
            ada_seat = next(s for s in unit.seats if s.player == model.user_key(ada.id))
            won = (ada_seat.seat in calling) == scored["won"]
            assert (ada_seat.mu > ada_seat.mu_before) == won

        # /classifica rating: the group's ratings, highest first, computers by level
        sent = await bea.send(group, "/classifica rating")
        board = await tg.wait_for_message(group, "📈", after=sent)
        stored = {r.player: r for r in await rating_store.ratings_board(db, group.id,
                                                                        "chiamata")}
        order = sorted(stored.values(), key=lambda r: -model.shown(r.mu, r.sigma))
        lines = [line for line in board.content.splitlines() if line[:1].isdigit()]
        assert [line.split(". ", 1)[1].split(":")[0] for line in lines] == [
            {model.user_key(u.id): u.first_name for u in (ada, bea, cleo)}.get(
                r.player, "🤖 facile") for r in order]
        assert f": {model.shown(order[0].mu, order[0].sigma)} · " in board.content
        assert "1000" in board.content and "/classifica" in board.content

        # /statistiche: the rating here, with the last change; the partners
        sent = await ada.send(group, "/statistiche")
        stats = await tg.wait_for_message(group, "📊", after=sent)
        mine = stored[model.user_key(ada.id)]
        assert f"Briscola chiamata: {model.shown(mine.mu, mine.sigma)} (ultima: " \
            in stats.content
        seats = {s.user_id: s.seat for s in (await table.row()).seats if s.user_id}
        callers: dict[str, int] = {}
        for result in results:
            scored = json.loads(result.result_json)
            if scored["socio"] == seats[ada.id] and scored["chiamante"] != seats[ada.id]:
                caller = next((u.first_name for u in (bea, cleo)
                               if seats[u.id] == scored["chiamante"]), None)
                if caller is not None:
                    callers[caller] = callers.get(caller, 0) + 1
        if callers:  # most often first, then by name
            named = ", ".join(f"{name} ({n} volt{'a' if n == 1 else 'e'})" for name, n in
                              sorted(callers.items(), key=lambda item: (-item[1], item[0])))
            assert f"Ti hanno chiamato: {named}" in stats.content
        else:
            assert "Compagni" not in stats.content  # nothing to say yet

        # /statistiche @name: a head-to-head line; an unknown name: a refusal
        sent = await ada.send(group, "/statistiche @bea_b")
        versus = await tg.wait_for_message(group, "Contro Bea", after=sent)
        against = together = 0
        for result in results:
            scored = json.loads(result.result_json)
            calling = {scored["chiamante"], scored["socio"]}
            a, b = seats[ada.id], seats[bea.id]
            if (a in calling) != (b in calling):
                against += 1
            elif a in calling:
                together += 1
        assert f"Contro Bea: {against} smazzat" in versus.content
        assert f"insieme {together} smazzat" in versus.content
        sent = await ada.send(group, "/statistiche @nobody_here")
        refused = await tg.wait_for_message(group, "Non conosco", after=sent)
        assert "@nobody_here" in refused.content and "📊" not in refused.content

        assert not tg.errors, tg.errors
        assert not tg.unanswered_callbacks() and not tg.flood_violations
    finally:
        await bot.stop()


async def test_inline_invitation_and_rating(tg: Any, tmp_path: Path) -> None:
    tg.world.inline_mode = True
    bot = await make_bot(tg, tmp_path / "bot.db").start()
    try:
        ada = tg.add_user("Ada", language_code="it")
        bob = tg.add_user("Bob", language_code="en")
        await ada.start_bot()
        await bob.start_bot()
        elsewhere = tg.add_group("Amici", [ada, bob])  # the bot is not a member
        tg.world.set_bot_status(elsewhere, "left", None)

        query = await ada.inline("", elsewhere)
        answer = await query.wait(10)
        assert [r["id"] for r in answer.results] == ["invite", "rating"]
        assert answer.is_personal
        invite = await ada.choose(query, "invite")
        assert invite.via_bot and invite.chat is elsewhere and invite.sender is ada
        assert "Ada" in invite.content and "ti invita" in invite.content
        links = [b.url for b in invite.buttons]
        username = tg.world.bot.username
        assert links == [f"https://t.me/{username}?startgroup=nuova",
                         f"https://t.me/{username}?start=nuova"]

        # the group link: Telegram adds the bot and sends /start nuova in the chosen group
        tg.world.set_bot_status(elsewhere, "member", bob)
        sent = await bob.send(elsewhere, f"/start@{username} nuova")
        lobby = await tg.wait_for_message(elsewhere, "nuova partita", after=sent)
        row = await repo.get_active_game(bot.rt.db, elsewhere.id)
        assert row is not None and row.status == "lobby" and row.creator_id == bob.id
        assert any((b.callback_data or "").endswith(":join") for b in lobby.buttons)
        # the private link: a table alone (the person seated, computers to come)
        sent = await bob.start_bot("nuova")
        await tg.wait_for_message(bob, "new match", after=sent)
        solo = await repo.get_active_game(bot.rt.db, bob.id)
        assert solo is not None and [s.user_id for s in solo.seats] == [bob.id]

        # "my rating": none yet, then after a smazzata in a group, the rating there
        query = await bob.inline("rating")
        answer = await query.wait(10)
        assert answer.titles == ["📈 My rating"]
        mine = await bob.choose(query, "rating")
        assert mine.chat.type == "private" and "no rating yet" in mine.content
        await _rated(bot, elsewhere.id, bob.id, 30.0, 2.0)
        query = await bob.inline("rating", elsewhere)
        mine = await bob.choose(query, "rating") if (await query.wait(10)) else None
        assert mine is not None
        assert f"Briscola chiamata: {model.shown(30.0, 2.0)} in 1 group" in mine.content

        # 256 characters of garbage: no results, a short localized hint, a log line
        garbage = "".join(random.Random(4).choice("€x<&>\u200b🃏 ") for _ in range(256))
        query = await ada.inline(garbage, elsewhere)
        answer = await query.wait(10)
        assert answer.results == [] and answer.button is not None
        assert answer.button["text"].startswith("Non capisco")
        assert answer.button["start_parameter"] == "inline"

        assert not tg.errors, tg.errors
    finally:
        await bot.stop()


async def _rated(bot: Any, chat_id: int, user_id: int, mu: float, sigma: float) -> None:
    """A stored rating (as rating one unit would leave it)."""
    db = bot.rt.db
    async with db.transaction() as tx:
        await rating_store.lock_ratings(tx, chat_id, "chiamata",
                                        {model.user_key(user_id): "Bob"}, (mu, sigma))
        await tx.execute("UPDATE ratings SET units = 1 WHERE chat_id = ?", (chat_id,))
