"""The Mini App's ratings and "share" (issue 48), through the real bot and its server
against the fake Bot API: a result sheet's rating block is what the chat's shows; "share"
saves the result card for the user (savePreparedInlineMessage, Bot API 8.0), which the
user can then send to a chat (shareMessage); bad requests are refused, nothing saved."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp

from bot.ratings import model
from storage import ratings as rating_store
from tests.e2e.driver import cheap_policy, small_table
from tests.test_webapp import Client, _webapp_bot


async def test_rating_block_and_share(tg: Any, tmp_path: Path) -> None:
    bot, url = await _webapp_bot(tg, tmp_path)
    try:
        anna, bruno = (tg.add_user(n, language_code="it") for n in ("Anna", "Bruno"))
        for user in (anna, bruno):
            await user.start_bot()
        group = tg.add_group("Tavolo", [anna, bruno], admins=[anna])
        table = await small_table(tg, bot, group, [anna, bruno], match_end="hands:1")
        sent = await anna.send(group, "/inizia")
        await tg.wait_for_message(group, "Smazzata 1", after=sent, timeout=10)
        await table.play(cheap_policy)
        # the final scores are sent after the last move (the group's pace): wait for them
        await tg.wait_for_message(group, "Partita finita", after=sent, timeout=20)
        await bot.rt.outbox.drain()
        gid = table.game_id
        assert gid is not None
        changes = (await rating_store.game_changes(bot.rt.db, gid))[0]
        async with aiohttp.ClientSession() as http:
            client = Client(http, url, tg, anna)
            response = await client.session(start_param=str(gid), chat_type="group")
            assert response.status == 200, await response.text()
            auth = {"Authorization": f"Bearer {client.token}"}

            got = await http.get(url + "api/ratings", params={
                "token": client.token, "lang": "it", "smazzata": "0"})
            assert got.status == 200
            block = await got.json()
            by_name = {line["name"]: (line["rating"], line["change"]) for line in block["lines"]}
            for seat in changes:
                name = {model.user_key(anna.id): "Anna", model.user_key(bruno.id): "Bruno"}.get(
                    seat.player, "🤖 facile")
                after = model.shown(seat.mu, seat.sigma)
                assert by_name[name] == (after, after - model.shown(seat.mu_before,
                                                                    seat.sigma_before))
            assert block["title"] == "📈 Rating" and len(block["lines"]) == 3

            shared = await http.post(url + "api/share", json={"smazzata": 0}, headers=auth)
            assert shared.status == 200, await shared.text()
            prepared_id = (await shared.json())["id"]
            prepared = tg.world.prepared[prepared_id]
            assert prepared.user_id == anna.id
            assert prepared.allowed == frozenset({"users", "groups"})
            text = prepared.result["input_message_content"]["text"]
            assert text.startswith("📊 Fine della smazzata 1")
            assert "📈 Rating" in text and "\n  Anna: " in text
            # the group's sheet of that smazzata (the match's last: no "next smazzata"),
            # whose rating block went to the final scores below it (the match's changes:
            # here its one smazzata's)
            sheet = next(m for m in tg.chat_messages(group, from_bot=True)
                         if m.content.startswith("📊 Fine della smazzata 1"))
            card_sheet, _, card_block = text.partition("\n\n📈 Rating\n")
            assert card_sheet == sheet.content and card_block
            final = tg.chat_messages(group, from_bot=True)[-1]
            assert "\n📈 Rating dopo la partita\n" + card_block + "\n\n" in final.content
            card = tg.world.share_prepared(anna, prepared_id, group)  # shareMessage
            assert card.via_bot and card.sender is anna and card.content == text
            assert [b.url for b in card.buttons] == [
                f"https://t.me/{tg.world.bot.username}?startgroup=nuova",
                f"https://t.me/{tg.world.bot.username}?start=nuova"]

            # bad input: refused, nothing saved
            before = len(tg.world.prepared)
            for body, status in (({"smazzata": "x"}, 400), ({"smazzata": True}, 400),
                                 ({}, 400), ({"smazzata": 7}, 404)):
                refused = await http.post(url + "api/share", json=body, headers=auth)
                assert refused.status == status, (body, await refused.text())
            assert (await http.post(url + "api/share", json={"smazzata": 0})).status == 401
            none = await (await http.get(url + "api/ratings", params={
                "token": client.token, "smazzata": "7"})).json()
            assert none["lines"] == []
            assert len(tg.world.prepared) == before
        assert not tg.errors, tg.errors
    finally:
        await bot.stop()
