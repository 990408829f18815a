"""🔁 Rivincita from the Mini App's final sheet (issue 48): the same as the chat's button,
through ``POST /api/rematch`` with the page's token; refused for a member who did not
play and the second time; alone, the page gets the new table to follow."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bot.features import rematch as rematch_feature
from storage import repo
from tests.e2e.driver import cheap_policy, small_table
from tests.e2e.test_e2e_solo import open_solo_table
from tests.test_webapp import Client, _webapp_bot


async def rematch(client: Client) -> aiohttp.ClientResponse:
    return await client.http.post(client.base + "api/rematch", data=b"{}", headers={
        "Authorization": f"Bearer {client.token}", "Content-Type": "application/json"})


async def test_rematch_from_the_final_sheet(
    tg: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rematch_feature, "CONFIRM_SECONDS", 2.0)
    bot, url = await _webapp_bot(tg, tmp_path)
    anna, bruno, carla = (tg.add_user(n, language_code="it") for n in ("Anna", "Bruno", "Carla"))
    for user in (anna, bruno, carla):
        await user.start_bot()
    group = tg.add_group("Tavolo", [anna, bruno, carla], admins=[anna])
    try:
        table = await small_table(tg, bot, group, [anna, bruno])
        sent = await anna.send(group, "/inizia")
        await tg.wait_for_message(group, "Smazzata 1", after=sent)
        await table.play(cheap_policy)
        gid = table.game_id
        sent = await carla.send(group, "/avvisami")
        await tg.wait_for_message(group, "ti scrivo in privato", after=sent)
        async with aiohttp.ClientSession() as http:
            clients = {u.id: Client(http, url, tg, u) for u in (anna, carla)}
            for client in clients.values():
                response = await client.session(table=gid)
                assert response.status == 200, await response.text()
            state = clients[anna.id].state
            assert state["final"] and state["ui"]["rematch"] == "🔁 Rivincita"
            assert state["me"] is not None and clients[carla.id].state["me"] is None

            response = await rematch(clients[carla.id])  # watched, did not play
            assert response.status == 409
            assert "chi ha giocato" in (await response.json())["message"]
            assert await repo.get_active_game(bot.rt.db, group.id) is None

            response = await rematch(clients[anna.id])
            assert response.status == 200, await response.text()
            body = await response.json()
            assert body["started"] is False  # Bruno confirms in the chat
            lobby = await repo.get_active_game(bot.rt.db, group.id)
            assert lobby is not None and lobby.game_id == body["table"]
            await tg.wait_for_message(group, "⏳ Bruno")

            response = await rematch(clients[anna.id])  # twice
            assert response.status == 409 and "già" in (await response.json())["message"]
            response = await http.post(url + "api/rematch", data=b"{}")  # no token
            assert response.status == 401
            # Bruno lets the time pass: his seat is free, and Carla (/avvisami) is told,
            # with the group's title (the page's update has no chat: asked of Telegram)
            told = await tg.wait_for_message(carla, "Si è aperto un tavolo", timeout=10)
            assert "un tavolo in Tavolo:" in told.content
    finally:
        await bot.stop()


async def test_rematch_alone_from_the_page_deals_at_once(tg: Any, tmp_path: Path) -> None:
    bot, url = await _webapp_bot(tg, tmp_path)
    ada = tg.add_user("Ada", language_code="it")
    await ada.start_bot()
    try:
        table = await open_solo_table(tg, bot, ada)
        await table.play(cheap_policy)
        async with aiohttp.ClientSession() as http:
            client = Client(http, url, tg, ada)
            assert (await client.session(table=table.game_id)).status == 200
            response = await rematch(client)
            assert response.status == 200, await response.text()
            body = await response.json()
            assert body["started"] is True and body["table"] != table.game_id
            response = await client.session(table=body["table"])  # the page follows it
            assert response.status == 200 and client.state["status"] == "playing"
    finally:
        await bot.stop()
