"""The Mini App's server (bot/webapp/) with the real bot against the fake Bot API.

initData as the Bot API documents it (valid, forged, another bot's, expired, missing);
the hidden information (whole smazzate played through the API: every state pushed to a
user holds only cards that user's ``view(seat)`` shows; a group member who is not seated
sees the group's view and cannot act); bad input (malformed, stale, replayed, oversized,
a flood) changes nothing and leaves other tables alone; the chat's buttons.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import re
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bench.miniapp import sse_events
from bot.webapp.auth import AuthError, Tokens, sign_init_data, validate_init_data
from bot.webapp.decks import PICTURES, pictures_of
from bot.webapp.server import STATIC_DIR
from game import Game
from game.cards import CARD_CODES, card_code
from game.decks import DeckStyle
from sandbox.fakeapi import webapps
from storage import repo
from tests.conftest import free_port, make_bot
from tests.e2e.driver import small_table

CARD = re.compile(r"^[A32RCF7654][cdsb]$")


# --------------------------------------------------------------------------- initData


def _user_fields(user_id: int = 42, auth_date: int | None = None) -> dict[str, str]:
    return {"user": json.dumps({"id": user_id, "first_name": "Anna", "language_code": "en"}),
            "auth_date": str(int(time.time()) if auth_date is None else auth_date),
            "query_id": "AAHdF6IQAAAAAN0XohDhrOrc"}


def test_init_data_is_checked_as_the_bot_api_documents() -> None:
    token, other = "123456:AAAA-bbbb", "654321:CCCC-dddd"
    # signed by the fake Telegram (its own implementation) and by ours: both valid
    for data in (webapps.init_data(token, {"id": 42, "first_name": "A"}, start_param="7"),
                 sign_init_data(_user_fields(), token)):
        user = validate_init_data(data, token, max_age=60)
        assert user.id == 42
    assert validate_init_data(webapps.init_data(token, {"id": 1, "first_name": "B"},
                                                start_param="15"), token, 60).start_param == "15"
    good = sign_init_data(_user_fields(), token)
    forged = re.sub(r"hash=[0-9a-f]{4}", "hash=0000", good)
    tampered = good.replace("%22id%22%3A+42", "%22id%22%3A+43").replace("%22id%22%3A42",
                                                                      "%22id%22%3A43")
    assert tampered != good
    bad = {
        "forged hash": forged,
        "tampered user": tampered,
        "another bot": sign_init_data(_user_fields(), other),
        "expired": sign_init_data(_user_fields(auth_date=int(time.time()) - 3600), token),
        "from the future": sign_init_data(_user_fields(auth_date=int(time.time()) + 3600),
                                          token),
        "missing": "",
        "no hash": "user=%7B%22id%22%3A1%7D&auth_date=1",
        "garbage": "%%%&&&===",
        "huge": "a=" + "b" * 10_000,
    }
    for what, data in bad.items():
        with pytest.raises(AuthError):
            validate_init_data(data, token, max_age=60)
            pytest.fail(what)


def test_webapp_settings() -> None:
    from bot.config import ConfigError, load_settings

    base = {"bot_token": "123:abc", "_env_file": None}
    settings = load_settings(**base)
    assert settings.webapp_url is None and settings.webapp_short_name is None
    ok = load_settings(**base, webapp_url="https://bot.example.org/tavolo/",
                       webapp_short_name="tavolo", webapp_init_data_max_age=3600)
    assert ok.webapp_url == "https://bot.example.org/tavolo/"
    assert load_settings(**base, webapp_url="http://127.0.0.1:8301").webapp_url == \
        "http://127.0.0.1:8301/"
    assert load_settings(**base, webapp_url="https://tavolo.org/tavolo").webapp_url == \
        "https://tavolo.org/tavolo/"  # (the page's addresses are relative to it)
    assert load_settings(**base, webapp_url="").webapp_url is None
    for bad in ({"webapp_url": "http://bot.example.org/"}, {"webapp_url": "ftp://x"},
                {"webapp_short_name": "no spaces"}, {"webapp_init_data_max_age": 1}):
        with pytest.raises(ConfigError):
            load_settings(**base, **bad)


def test_tokens_are_signed_bound_and_short_lived() -> None:
    tokens = Tokens("123456:AAAA", ttl=60)
    token = tokens.issue(7, 99, now=1000.0)
    grant = tokens.check(token, now=1030.0)
    assert (grant.user_id, grant.game_id) == (7, 99)
    for bad in (None, "", token + "0", token.replace("7.99", "8.99", 1),
                Tokens("123456:BBBB").issue(7, 99, now=1000.0)):
        with pytest.raises(AuthError):
            tokens.check(bad, now=1030.0)
    with pytest.raises(AuthError):
        tokens.check(token, now=1061.0)


def test_every_deck_style_has_its_pictures() -> None:
    assert set(PICTURES) == set(DeckStyle)
    for style in DeckStyle:
        folder = STATIC_DIR / "cards" / pictures_of(style)
        assert sorted(p.stem for p in folder.glob("*.webp")) == sorted(CARD_CODES), style
    assert (STATIC_DIR / "cards" / "back.webp").exists()
    assert "public domain" in (STATIC_DIR / "cards" / "PROVENANCE.md").read_text().lower()


# --------------------------------------------------------------------------- the server


class Client:
    """One user's Mini App: a session from initData, the live stream, moves."""

    def __init__(self, http: aiohttp.ClientSession, base: str, tg: Any, user: Any) -> None:
        self.http, self.base, self.tg, self.user = http, base, tg, user
        self.token = ""
        self.states: list[dict[str, Any]] = []
        self._reader: asyncio.Task[None] | None = None
        self.updated = asyncio.Event()

    def init_data(self, **kwargs: Any) -> str:
        return webapps.init_data(self.tg.token, self.user.to_api(), **kwargs)

    async def session(self, table: object = None, **kwargs: Any) -> aiohttp.ClientResponse:
        body = {"init_data": self.init_data(**kwargs), "table": table}
        response = await self.http.post(self.base + "api/session", json=body)
        if response.status == 200:
            data = await response.json()
            self.token = data["token"]
            self.states.append(data["state"])
        return response

    async def listen(self) -> None:
        response = await self.http.get(self.base + "api/events",
                                       params={"token": self.token, "lang": "it"})
        assert response.status == 200

        async def read() -> None:
            async for event, data in sse_events(response):
                if event == "state":
                    self.states.append(json.loads(data))
                    self.updated.set()

        self._reader = asyncio.create_task(read())

    @property
    def state(self) -> dict[str, Any]:
        return self.states[-1]

    async def move(self, code: str, version: int | None = None,
                   raw: bytes | None = None) -> aiohttp.ClientResponse:
        body = raw if raw is not None else json.dumps(
            {"version": self.state["version"] if version is None else version, "code": code}
        ).encode()
        return await self.http.post(
            self.base + "api/move", data=body,
            headers={"Authorization": f"Bearer {self.token}",
                     "Content-Type": "application/json"})

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader


async def _webapp_bot(tg: Any, tmp_path: Path, **overrides: Any) -> tuple[Any, str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    bot = await make_bot(tg, tmp_path / "bot.db", webapp_url=url, webapp_port=port,
                         webapp_short_name="tavolo", **overrides).start()
    return bot, url


def visible_cards(game: Game, seat: int | None) -> set[str]:
    """Every card ``view(seat)`` shows (hand, tricks, called card, face-up, partner's
    hand after R107, the cards the chiamante may name)."""
    view = game.view(seat)
    cards = set(view.hand) | {c for _, c in view.current_trick}
    cards |= {c for t in (*view.tricks, *view.scored_tricks) for _, c in t.plays}
    cards |= {c for played in view.played for c in played}
    cards |= {c for c in (view.called_card, view.face_up) if c is not None}
    cards |= set(view.partner_hand or ())
    if view.last_scored is not None and view.last_scored.called_card is not None:
        cards.add(view.last_scored.called_card)
    shown = {card_code(c) for c in cards}
    return shown | {code[1:] for code in view.legal if code.startswith("d")}


def cards_in(payload: dict[str, Any]) -> set[str]:
    found: set[str] = set()
    found |= {h["card"] for h in payload["hand"]}
    found |= {c for _, c in payload["trick"]}
    if payload["last_trick"]:
        found |= {c for _, c in payload["last_trick"]["plays"]}
    found |= {c for c in (payload["called"], payload["face_up"]) if c}
    found |= set(payload["partner_hand"] or ())
    found |= set(payload["actions"]["name_cards"])
    if payload["sheet"] and payload["sheet"].get("called"):
        found.add(payload["sheet"]["called"])
    assert set(payload["card_names"]) == found  # (the pictures' alt texts)
    _only_codes_in(payload, found)
    return found


def public_cards(game: Game) -> set[str]:
    """The cards every player saw (what the group's view shows of played tricks)."""
    view = game.view(None)
    return {card_code(c) for t in (*view.tricks, *view.scored_tricks) for _, c in t.plays}


def review_cards(review: dict[str, Any]) -> set[str]:
    """The cards a review shows (its tricks and the called card), checked against its
    alt texts and for codes hidden elsewhere in it."""
    found = {c for t in review["tricks"] for _, c in t["plays"]}
    if review["sheet"] and review["sheet"].get("called"):
        found.add(review["sheet"]["called"])
    assert set(review["card_names"]) == found
    _only_codes_in(review, found)
    return found


def _only_codes_in(payload: dict[str, Any], found: set[str]) -> None:
    # and no card code hidden anywhere else in the payload
    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)
        elif isinstance(value, str) and CARD.match(value):
            assert value in found, value
    walk(payload)


async def test_whole_smazzate_through_the_api_show_each_user_only_their_view(
    tg: Any, tmp_path: Path
) -> None:
    bot, url = await _webapp_bot(tg, tmp_path)
    anna, bruno, carla = (tg.add_user(n, language_code="it") for n in ("Anna", "Bruno", "Carla"))
    for user in (anna, bruno, carla):
        await user.start_bot()
    group = tg.add_group("Tavolo", [anna, bruno, carla], admins=[anna])
    stranger = tg.add_user("Dario")
    # what each version let each seat see, recorded as each write is stored
    seen: dict[tuple[int, int | None], set[str]] = {}
    views: dict[tuple[int, int | None], Any] = {}

    def record(game_id: int) -> None:
        game = bot.rt.service._cache.get(game_id)
        if game is not None:
            for seat in (*range(game.n), None):
                seen[(game.version, seat)] = visible_cards(game, seat)
                views[(game.version, seat)] = game.view(seat)

    bot.rt.service.listeners.insert(0, record)
    try:
        table = await small_table(tg, bot, group, [anna, bruno], match_end="hands:2")
        await anna.send(group, "/inizia")
        await tg.wait_for_message(group, "Smazzata 1")
        gid = table.game_id
        async with aiohttp.ClientSession() as http:
            clients = {u.id: Client(http, url, tg, u) for u in (anna, bruno, carla)}
            for client in clients.values():
                response = await client.session(start_param=str(gid), chat_type="group")
                assert response.status == 200, await response.text()
                await client.listen()
            # not in the group, not seated: refused
            response = await Client(http, url, tg, stranger).session(table=gid)
            assert response.status == 403
            watcher = clients[carla.id]
            assert watcher.state["me"] is None and watcher.state["hand"] == []
            rng = random.Random(3)
            moves = 0
            deadline = time.monotonic() + 120
            while True:
                row = await repo.get_game(bot.rt.db, gid)
                assert row is not None
                if row.status != "playing":
                    break
                assert time.monotonic() < deadline
                game = bot.rt.service.game_of(row)
                seat = row.seat(game.current_seat() or 0)
                client = clients.get(seat.user_id) if seat and seat.user_id else None
                state = client.state if client is not None else None
                if client is None or state is None or state["version"] != row.version:
                    await asyncio.sleep(0.01)
                    continue
                codes = [c["code"] for c in state["actions"]["calls"]]
                codes += [s["code"] for s in state["actions"]["suits"]]
                codes += ["d" + c for c in state["actions"]["name_cards"]]
                codes += ["c" + h["card"] for h in state["hand"] if h["playable"]]
                if state["phase"] == "auction" and "P" in codes and (
                        state["auction"]["current"] or rng.random() < 0.5):
                    code = "P"  # one call, then passes: the auction ends quickly
                else:
                    code = rng.choice([c for c in codes if c != "M"] or codes)
                assert code in game.view(seat.seat).legal, code
                response = await client.move(code)
                assert response.status == 200, await response.text()
                moves += 1
                if moves % 4 == 0:  # the watcher, not seated, cannot act
                    response = await watcher.move(code, row.version + 1)
                    assert response.status == 403
                await asyncio.sleep(0.12)  # (people do not tap faster)
            await asyncio.sleep(0.3)
            for client in clients.values():
                await client.close()
            # the review of each smazzata: the tricks the stored actions played, in
            # order, the same for a seat and for the group; nothing but played cards
            stored = [a for a in await repo.load_actions(bot.rt.db, gid)
                      if a.code.startswith("c")]
            final = bot.rt.service.game_of(row)
            per_smazzata = final.n * final.rules.tricks
            for smazzata in (0, 1):
                plays = [[a.seat, a.code[1:]] for a in
                         stored[smazzata * per_smazzata:(smazzata + 1) * per_smazzata]]
                reviews = []
                for client in (clients[anna.id], watcher):
                    response = await http.get(url + "api/review", params={
                        "token": client.token, "smazzata": str(smazzata), "lang": "it"})
                    assert response.status == 200, await response.text()
                    reviews.append(await response.json())
                assert reviews[0] == reviews[1]
                review = reviews[0]
                assert len(review["tricks"]) == final.rules.tricks
                assert [p for t in review["tricks"] for p in t["plays"]] == plays
                for t in review["tricks"]:
                    assert t["plays"][0][0] == t["leader"]
                review_cards(review)
                assert review["sheet"]["smazzata"] == smazzata
            response = await http.get(url + "api/review", params={
                "token": watcher.token, "smazzata": "2"})
            assert response.status == 404  # never played
            response = await http.get(url + "api/review", params={"smazzata": "0"})
            assert response.status == 401
        assert moves > 16
        assert row.status == "finished"
        # every state pushed to each user: only what their seat's view showed
        checked = 0
        for user_id, client in clients.items():
            assert len(client.states) > 20
            for payload in client.states:
                seat = payload["me"]
                if user_id == carla.id:
                    assert seat is None and payload["hand"] == []
                key = (payload["version"], seat)
                if key not in seen:
                    continue  # (the state a session opened with: before the recording)
                assert cards_in(payload) <= seen[key], (user_id, payload["version"])
                view = views[key]
                assert [h["card"] for h in payload["hand"]] == [
                    card_code(c) for c in sorted(view.hand)]
                socios = [s["seat"] for s in payload["seats"] if s["socio"]]
                assert socios == ([] if view.socio is None or view.solo else [view.socio])
                checked += 1
        assert checked > 60
        # the chat followed: the group got its table and both results
        await tg.wait_for_message(group, "Partita finita", timeout=10)
    finally:
        await bot.stop()


async def test_bad_requests_change_nothing_and_spare_other_tables(
    tg: Any, tmp_path: Path
) -> None:
    bot, url = await _webapp_bot(tg, tmp_path)
    anna, bruno = tg.add_user("Anna", language_code="it"), tg.add_user("Bruno",
                                                                        language_code="en")
    for user in (anna, bruno):
        await user.start_bot()
    first = tg.add_group("Uno", [anna], admins=[anna])
    second = tg.add_group("Due", [bruno], admins=[bruno])
    try:
        tables = []
        for user, group in ((anna, first), (bruno, second)):
            table = await small_table(tg, bot, group, [user])
            await user.send(group, "/inizia")
            await tg.wait_for_message(group, "Smazzata 1")
            tables.append(table)
        async with aiohttp.ClientSession() as http:
            a, b = Client(http, url, tg, anna), Client(http, url, tg, bruno)
            # the private hand message's web_app button: the user's own table
            assert (await a.session(table=tables[0].game_id)).status == 200
            assert (await b.session()).status == 200  # no table named: theirs
            assert b.state["table"] == tables[1].game_id
            # each in their own language, as the chat
            assert (a.state["lang"], a.state["ui"]["hand"]) == ("it", "Le tue carte")
            assert (b.state["lang"], b.state["ui"]["hand"]) == ("en", "Your cards")
            # initData problems: 401 and nothing else
            for init in ("", "user=1&hash=00", sign_init_data(_user_fields(anna.id), "1:x"),
                         webapps.init_data(tg.token, anna.to_api(), auth_date=1)):
                response = await http.post(url + "api/session", json={"init_data": init})
                assert response.status == 401
                assert set(await response.json()) == {"ok", "error", "message"}
            assert (await http.post(url + "api/session", data=b"{")).status == 400
            assert (await a.session(table="99999")).status == 404
            assert (await a.session(table="x; drop")).status == 404
            assert (await a.session(table=tables[1].game_id)).status == 403  # not her group
            no_token = await http.get(url + "api/state")
            assert no_token.status == 401
            bad_token = await http.get(url + "api/state", params={"token": a.token + "1"})
            assert bad_token.status == 401

            async def version(game_id: int) -> int:
                row = await repo.get_game(bot.rt.db, game_id)
                assert row is not None
                return row.version

            async def wait_turn(client: Client, game_id: int) -> dict[str, Any]:
                for _ in range(60):
                    response = await http.get(url + "api/state", params={"token": client.token})
                    state = await response.json()
                    if state["my_turn"]:
                        return dict(state)
                    await asyncio.sleep(0.3)
                raise AssertionError("never her turn")

            state = await wait_turn(a, tables[0].game_id)
            a.states.append(state)
            before = await version(tables[0].game_id)
            legal = [c["code"] for c in state["actions"]["calls"]]
            for raw, status in (
                (b"not json", 400), (b"[1, 2]", 400), (b'{"code": "P"}', 400),
                (b'{"version": true, "code": "P"}', 400),
                (json.dumps({"version": before, "code": "x" * 40}).encode(), 400),
                (json.dumps({"version": before, "code": "P", "pad": "x" * 20_000}).encode(),
                 413),
                (json.dumps({"version": before + 5, "code": "P"}).encode(), 409),
                (json.dumps({"version": before, "code": "cZz"}).encode(), 422),
                (json.dumps({"version": before, "code": "t200"}).encode(), 422),
            ):
                await asyncio.sleep(0.3)  # (within the rate a person may tap)
                response = await a.move("", raw=raw)
                assert response.status == status, (raw[:40], await response.text())
                body = await response.json()
                assert body["ok"] is False and body["message"]
            assert await version(tables[0].game_id) == before  # nothing changed
            # a legal move, then the same request replayed: stale, nothing changes
            response = await a.move(legal[0], version=before)
            assert response.status == 200
            after = await version(tables[0].game_id)
            assert after == before + 1
            replay = await a.move(legal[0], version=before)
            assert replay.status == 409
            assert "cambiato" in (await replay.json())["message"]
            # a flood from one client: 429s, while the other table plays on
            state = await wait_turn(b, tables[1].game_id)
            flood = await asyncio.gather(*(a.move("P", version=0) for _ in range(40)))
            statuses = [r.status for r in flood]
            assert 429 in statuses and set(statuses) <= {409, 422, 429}
            response = await b.move(state["actions"]["calls"][0]["code"],
                                    version=state["version"])
            assert response.status == 200
            assert await version(tables[1].game_id) == state["version"] + 1
            assert (await version(tables[0].game_id)) >= after
            # live connections: at most four per user, the oldest closed first
            hub = bot.app.bot_data["webapp"].hub
            streams = []
            for _ in range(6):
                await asyncio.sleep(0.3)
                streams.append(await http.get(url + "api/events", params={"token": b.token}))
            await asyncio.sleep(0.2)
            assert all(r.status == 200 for r in streams)
            assert len(hub.of_user(bruno.id)) == 4
            for stream in streams:
                stream.close()
    finally:
        await bot.stop()


async def test_chat_buttons_open_the_mini_app(tg: Any, tmp_path: Path) -> None:
    bot, url = await _webapp_bot(tg, tmp_path)
    anna = tg.add_user("Anna")
    await anna.start_bot()
    group = tg.add_group("Tavolo", [anna], admins=[anna])
    try:
        table = await small_table(tg, bot, group, [anna])
        await anna.send(group, "/inizia")
        await tg.wait_for_message(group, "Smazzata 1")
        gid = table.game_id

        def buttons(chat: Any) -> list[dict[str, Any]]:
            message = tg.last_bot_message(chat)
            return [b.raw for b in message.buttons] if message is not None else []

        link = f"https://t.me/{tg.bot.username}/tavolo?startapp={gid}"
        await tg.wait_until(lambda: any(b.get("url") == link for b in buttons(group)),
                            what="the group's direct link")
        await tg.wait_until(
            lambda: any((b.get("web_app") or {}).get("url") == f"{url}?table={gid}"
                        for b in buttons(anna.private_chat)), what="the hand's web_app button")
        assert not [e for e in tg.errors], tg.errors  # web_app only where Telegram allows
        # the fake refuses a web_app button in a group, like Telegram
        from telegram import InlineKeyboardButton, InlineKeyboardMarkup, WebAppInfo
        from telegram.error import BadRequest

        markup = InlineKeyboardMarkup([[InlineKeyboardButton("x", web_app=WebAppInfo(url))]])
        with pytest.raises(BadRequest, match=r"(?i)button_type_invalid"):
            await bot.app.bot.send_message(group.id, "x", reply_markup=markup)
        async with aiohttp.ClientSession() as http:
            page = await http.get(url)
            text = await page.text()
            assert page.status == 200 and "telegram-web-app.js" in text
            card = await http.get(url + "static/cards/napoletane/Ad.webp")
            assert card.status == 200 and card.headers["Content-Type"] == "image/webp"
    finally:
        await bot.stop()


async def test_a_local_telegram_script_is_served_to_the_page(tg: Any, tmp_path: Path) -> None:
    """WEBAPP_TELEGRAM_JS naming a file (the tests' copy of Telegram's script): the page
    loads it from the Mini App's own server; an address is used as it is."""
    script = tmp_path / "telegram-web-app.js"
    script.write_text("window.Telegram = {WebApp: {}};  // a copy of Telegram's script\n")
    for telegram_js, src in ((str(script), "telegram-web-app.js"),
                             ("https://telegram.org/js/telegram-web-app.js",
                              "https://telegram.org/js/telegram-web-app.js")):
        bot, url = await _webapp_bot(tg, tmp_path, webapp_telegram_js=telegram_js)
        try:
            async with aiohttp.ClientSession() as http:
                async with http.get(url) as response:
                    assert f'<script src="{src}"></script>' in await response.text()
                async with http.get(url + "telegram-web-app.js") as response:
                    if src == "telegram-web-app.js":
                        assert response.status == 200
                        assert await response.text() == script.read_text()
                    else:
                        assert response.status == 404
        finally:
            await bot.stop()


async def test_without_webapp_url_no_button_and_no_server(tg: Any, tmp_path: Path) -> None:
    bot = await make_bot(tg, tmp_path / "bot.db").start()
    anna = tg.add_user("Anna")
    await anna.start_bot()
    group = tg.add_group("Tavolo", [anna], admins=[anna])
    try:
        await small_table(tg, bot, group, [anna])
        await anna.send(group, "/inizia")
        await tg.wait_for_message(group, "Smazzata 1")
        await tg.wait_for_message(anna.private_chat, "Smazzata 1")
        await bot.rt.outbox.drain()
        for chat in (group, anna.private_chat):
            for message in tg.chat_messages(chat, from_bot=True):
                for button in message.buttons:
                    assert "web_app" not in button.raw
                    assert "startapp" not in (button.url or "")
        assert "webapp" not in bot.app.bot_data
    finally:
        await bot.stop()


# --------------------------------------------------------------------------- every variant


@pytest.mark.parametrize("options", [
    {"players": 5},
    {"players": 5, "a_punti": True, "deck_style": "francesi"},
    {"players": 4},  # il morto
    {"players": 6, "deck_style": "siciliane"},
    {"players": 5, "al_buio": True, "monte": True, "a_carichi": True},
    {"game": "briscola", "players": 2},
    {"game": "briscola", "players": 4, "deck_style": "piacentine"},
], ids=lambda o: "-".join(f"{v}" for v in o.values()))
def test_states_of_every_variant_show_only_the_seats_view(options: dict[str, Any]) -> None:
    """Whole matches of each variant, random legal moves: every state built for each seat
    (and for the group) holds only what that seat's view shows."""
    from bot.prefs import Prefs
    from bot.webapp.payload import (
        TableState,
        replay_to_smazzata,
        review_payload,
        state_payload,
    )
    from game import TableOptions
    from storage import GameRow, SeatRow

    table = TableOptions(**{"match_end": "hands:2", "briscola_match": "rounds:2", **options})
    rng = random.Random(5)
    game = Game.new(table, rng=random.Random(1))  # (seed 1: the row's)
    humans = [n for n in range(game.n) if n != game.morto]
    row = GameRow(
        game_id=1, chat_id=-5, thread_id=0, status="playing", creator_id=1,
        settings_json=Prefs(options=table).to_json(), seed=1, version=0,
        snapshot_json=None, ui_json="{}", turn_deadline=None, created_at=0, updated_at=0,
        finished_at=None,
        seats=tuple(SeatRow.human(n, 100 + n, f"P{n}") for n in humans),
    )
    states = reviews = 0
    actions: list[tuple[int, str]] = []
    while not game.is_over() or not reviews:
        pushed = TableState(row, game, "en")  # (what a push builds once for every viewer)
        for seat in (*humans, None):
            payload = json.loads(json.dumps(state_payload(row, game, seat, "en")))
            # the bytes a push sends this viewer are this state: the shared part written
            # once holds only what every seat's view shows alike
            event = pushed.event(seat, 12.5).decode()
            assert event.startswith("event: state\ndata: ") and event.count("\n") == 3
            assert json.loads(event.split("data: ", 1)[1]) == {**payload, "now": 12.5}
            if seat is not None:
                own_view = game.view(seat)
                assert pushed.public_part(own_view) == pushed.public
                assert pushed.public_seats(own_view) == pushed.public_seats(pushed.group)
                assert payload["info"] == pushed.info_lines(
                    own_view if game.morto != seat else pushed.group)
            assert not set(pushed.public) & set(pushed.own_part(seat))
            assert cards_in(payload) <= visible_cards(game, seat), (seat, game.version)
            assert payload["deck"] == pictures_of(table.deck_style)
            # each seat's tricks taken (a count, no points), the caller's contract
            view = game.view(seat)
            assert sum(s["tricks"] for s in payload["seats"]) == len(view.tricks)
            assert all(set(s) >= {"tricks", "level", "contract"} and "points" not in s
                       for s in payload["seats"])
            assert [s["seat"] for s in payload["seats"] if s["contract"]] == (
                [] if view.contract is None else [view.chiamante])
            # the last trick taken: what everyone saw
            if payload["last_trick"]:
                assert {c for _, c in payload["last_trick"]["plays"]} <= public_cards(game)
            states += 1
        if game.is_over():
            break
        turn = game.current_seat()
        assert turn is not None
        action = rng.choice(game.legal_actions(turn))
        scored = game.scored_count
        game.apply(turn, action)
        actions.append((turn, action.code))
        if game.scored_count == scored:
            continue
        # the review of the smazzata just scored, replayed from the actions: its tricks
        # are the ones everyone saw played, for every seat alike
        last = game.last_briscola if table.game == "briscola" else game.last_score
        assert last is not None
        replayed = replay_to_smazzata(table, 1, actions, last.smazzata)
        assert replayed is not None and replayed.to_json() == game.to_json()
        shown = [json.loads(json.dumps(review_payload(row, replayed, seat, "en")))
                 for seat in (*humans, None)]
        assert all(r == shown[-1] for r in shown)
        review = shown[-1]
        called = getattr(last, "called_card", None)
        assert review_cards(review) <= public_cards(game) | (
            {card_code(called)} if called is not None else set())
        assert [len(t["plays"]) for t in review["tricks"]] == [game.n] * game.rules.tricks
        reviews += 1
    assert states > 100 and reviews == game.scored_count >= 2
