"""Presence (issue 32): a player whose Mini App page holds its live stream open gets
nothing in the chat per move; when the page closes, their chat hand is brought up to date
within 2 s and the chat works as before; a live player who lets a turn wait gets the
chat's turn after ``LIVE_TURN_NOTICE_SECONDS``.

The real bot and its Mini App server against the fake Bot API; the page is an HTTP client
doing what the page does (session from signed initData, ``GET /api/events`` kept open,
moves posted); closing the page closes its stream, nothing else.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import aiohttp

from bench.miniapp import sse_events
from bot.render import texts
from bot.tables.render import seat_names
from sandbox.fakeapi import webapps
from sandbox.fakeapi.html import parse_html
from tests.e2e.driver import Table, small_table
from tests.test_webapp import _webapp_bot

MESSAGE_METHODS = ("sendMessage", "editMessageText", "editMessageReplyMarkup")


class Page:
    """One Mini App page of a user on a table: its session, its open stream, its moves."""

    def __init__(self, http: aiohttp.ClientSession, base: str, tg: Any, user: Any) -> None:
        self.http, self.base, self.tg, self.user = http, base, tg, user
        self.token = ""
        self.state: dict[str, Any] = {}
        self.received: dict[int, float] = {}  # version -> when its state came
        self._response: aiohttp.ClientResponse | None = None
        self._reader: asyncio.Task[None] | None = None

    async def open(self, table: int) -> None:
        body = {"init_data": webapps.init_data(self.tg.token, self.user.to_api()),
                "table": table}
        async with self.http.post(self.base + "api/session", json=body) as response:
            assert response.status == 200, await response.text()
            self.token = (await response.json())["token"]
        self._response = await self.http.get(self.base + "api/events",
                                             params={"token": self.token, "lang": "it"})
        assert self._response.status == 200
        self._reader = asyncio.create_task(self._read(self._response))

    async def _read(self, response: aiohttp.ClientResponse) -> None:
        async for event, data in sse_events(response):
            if event == "state":
                self.state = json.loads(data)
                self.received.setdefault(self.state["version"], time.monotonic())

    async def move(self, code: str) -> None:
        async with self.http.post(
                self.base + "api/move", json={"version": self.state["version"], "code": code},
                headers={"Authorization": f"Bearer {self.token}"}) as response:
            assert response.status == 200, await response.text()

    async def close(self) -> None:
        """The page closes its stream (closed, or inactive/hidden)."""
        if self._reader is not None:
            self._reader.cancel()
        if self._response is not None:
            self._response.close()


def chat_calls(tg: Any, user: Any, since: int) -> list[Any]:
    return [c for c in tg.calls[since:] if c.chat_id == user.id and c.method in MESSAGE_METHODS]


async def hand_is_current(table: Table, user: Any) -> bool:
    """The user's newest hand message shows exactly what the bot draws for their seat now."""
    row, game = await table.state()
    seat = row.seat_of(user.id)
    assert seat is not None
    view = game.view(seat.seat)
    drawn, _ = parse_html(texts.hand_text("it", view, seat_names(row, game, "it")))
    hands = [m for m in table.tg.chat_messages(user, from_bot=True) if "Le tue carte" in
             m.content]
    return bool(hands) and hands[-1].content == drawn


def choose(state: dict[str, Any]) -> str:
    """The page's tap: one rank call then passes; the first suit; the first playable card."""
    actions = state["actions"]
    calls = [c["code"] for c in actions["calls"]]
    if state["phase"] == "auction":
        ranks = [c for c in calls if c.startswith("r")]
        return ranks[0] if ranks and not state["auction"]["current"] else "P"
    if actions["suits"]:
        return str(actions["suits"][0]["code"])
    if actions["name_cards"]:
        return "d" + actions["name_cards"][0]
    return "c" + next(h["card"] for h in state["hand"] if h["playable"])


async def _ada_plays(tg: Any, bot: Any, match_end: str) -> tuple[Any, Any, Table]:
    """Ada alone with the computers at a group's table, its first smazzata dealt:
    (Ada, the group, the table)."""
    ada = tg.add_user("Ada", language_code="it")
    await ada.start_bot()
    group = tg.add_group("Tavolo", [ada], admins=[ada])
    table = await small_table(tg, bot, group, [ada], match_end=match_end)
    await ada.send(group, "/inizia")
    await tg.wait_for_message(group, "Smazzata 1", timeout=10)
    return ada, group, table


async def test_a_live_player_gets_no_chat_call_and_the_chat_takes_over_when_the_page_closes(
    tg: Any, tmp_path: Any
) -> None:
    bot, url = await _webapp_bot(tg, tmp_path, live_turn_notice_seconds=3600)
    try:
        ada, group, table = await _ada_plays(tg, bot, "hands:2")
        await tg.wait_until(lambda: any("Le tue carte" in m.content
                                        for m in tg.chat_messages(ada, from_bot=True)))
        await bot.rt.outbox.drain()
        presence = bot.rt.tables.presence
        async with aiohttp.ClientSession() as http:
            page = Page(http, url, tg, ada)
            await page.open(table.game_id)
            await tg.wait_until(lambda: presence.live(table.game_id, ada.id))
            since = len(tg.calls)
            moves = 0
            deadline = time.monotonic() + 90
            # the whole first smazzata from the Mini App, into the second one's auction
            while True:
                row, game = await table.state()
                if game.smazzata_index == 1 and game.current_seat() == row.seat_of(ada.id).seat:
                    break
                assert time.monotonic() < deadline, "the smazzata did not end"
                state = page.state
                if state.get("my_turn") and state["version"] == row.version:
                    await page.move(choose(state))
                    moves += 1
                    await table._wait_version(row.version, 10)
                    await asyncio.sleep(0.3)  # (a person: the Mini App allows 4 a second)
                await asyncio.sleep(0.02)
            assert moves >= 8  # her eight cards (and her bids)
            await asyncio.sleep(0.5)
            assert not chat_calls(tg, ada, since), chat_calls(tg, ada, since)[:3]
            assert [c for c in tg.calls[since:] if c.chat_id == group.id]  # the group follows

            # the page closes: within 2 s her chat hand shows the table as it is now, with
            # her turn's buttons (a new message: the second smazzata's hand)
            closed = time.monotonic()
            await page.close()
            await tg.wait_until(lambda: not presence.live(table.game_id, ada.id), timeout=2)
            row, game = await table.state()
            for _ in range(200):
                if await hand_is_current(table, ada):
                    break
                await asyncio.sleep(0.01)
            assert await hand_is_current(table, ada)
            assert time.monotonic() - closed <= 2.0
            newest = tg.chat_messages(ada, from_bot=True)[-1]
            assert any(b.callback_data == f"a:{table.game_id}:{row.version}:P"
                       for b in newest.buttons)
            # the first smazzata's hand is closed (no buttons left behind)
            old = [m for m in tg.chat_messages(ada, from_bot=True) if m.buttons
                   and m.message_id != newest.message_id]
            await tg.wait_until(lambda: not [m for m in tg.chat_messages(ada, from_bot=True)
                                             if m.buttons and m.message_id != newest.message_id
                                             and "Le tue carte" in m.content], timeout=10,
                                what=f"the old hand closed: {old}")
            # and the chat works as before: she bids from her hand
            await table.perform(ada, game.view(row.seat_of(ada.id).seat), "P")
            await table._wait_version(row.version, 10)
    finally:
        await bot.stop()


async def test_a_live_player_who_lets_a_turn_wait_gets_the_chat_turn_after_the_delay(
    tg: Any, tmp_path: Any
) -> None:
    delay = 1.5
    bot, url = await _webapp_bot(tg, tmp_path, live_turn_notice_seconds=delay)
    try:
        ada, _group, table = await _ada_plays(tg, bot, "hands:1")
        async with aiohttp.ClientSession() as http:
            page = Page(http, url, tg, ada)
            await page.open(table.game_id)
            presence = bot.rt.tables.presence
            await tg.wait_until(lambda: presence.live(table.game_id, ada.id))
            opened = (await table.row()).version
            # play from the Mini App until a new turn of hers comes while she is live
            while True:
                await tg.wait_until(lambda: page.state.get("my_turn"), timeout=20,
                                    what="her turn in the Mini App")
                state = page.state  # (one state: the next may come while the row is read)
                row, _ = await table.state()
                if not state.get("my_turn") or state["version"] != row.version:
                    await asyncio.sleep(0.01)
                    continue
                if row.version > opened:
                    break
                await page.move(choose(page.state))
                await table._wait_version(row.version, 10)
            version, seen = row.version, page.received[row.version]
            turn = f"a:{table.game_id}:{version}:"

            def notice() -> Any:
                return next((c for c in tg.calls if c.chat_id == ada.id
                             and c.method in MESSAGE_METHODS and c.ok
                             and turn in str(c.params.get("reply_markup", ""))), None)

            call = await tg.wait_until(notice, timeout=delay + 3, what="the chat's turn")
            waited = call.at - seen  # (both monotonic)
            assert delay - 0.1 <= waited <= delay + 1.0, (waited, call, [
                (c.at - seen, c.method, str(c.params.get("reply_markup", ""))[:80])
                for c in tg.calls if c.chat_id == ada.id])  # not before, soon after
            assert presence.live(table.game_id, ada.id)  # (still live: the delay did it)
            assert (await table.row()).version == version  # (she did not move)
            await page.close()
    finally:
        await bot.stop()
