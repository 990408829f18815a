"""The sandbox opens the Mini App like a Telegram client: from the ``web_app`` button of a
hand message or a group's direct link, with ``initData`` signed by the fake Telegram that
the bot's own check accepts; anything a client could not open is refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import aiohttp
import pytest

import sandbox
from bot.webapp.auth import validate_init_data
from sandbox.__main__ import WEB_APP_SHORT_NAME, bot_environment, build_world
from sandbox.web import SandboxWeb
from tests.conftest import free_port, make_bot
from tests.e2e.driver import small_table


def _init_data(url: str) -> str:
    return parse_qs(urlsplit(url).fragment)["tgWebAppData"][0]


async def test_the_sandbox_opens_the_mini_app_with_signed_init_data(
    tg: Any, tmp_path: Path
) -> None:
    groups = build_world(tg)
    page = SandboxWeb(tg, groups)
    port = await page.start("127.0.0.1", 0)
    web_port = free_port()
    app_url = f"http://127.0.0.1:{web_port}/"
    page.web_apps[WEB_APP_SHORT_NAME] = app_url
    bot = await make_bot(tg, tmp_path / "bot.db", webapp_url=app_url, webapp_port=web_port,
                         webapp_short_name=WEB_APP_SHORT_NAME).start()
    base = f"http://127.0.0.1:{port}/api/webapp"
    try:
        anna = next(iter(tg.world.users.values()))
        await anna.start_bot()
        table = await small_table(tg, bot, groups[0], [anna])
        await anna.send(groups[0], "/inizia")

        def hand() -> Any:
            message = tg.last_bot_message(anna.private_chat)
            urls = [(b.raw.get("web_app") or {}).get("url") for b in message.buttons] \
                if message is not None else []
            return (message, urls[-1]) if urls and urls[-1] else None

        message, button_url = await tg.wait_until(hand, timeout=10, what="the hand")
        assert button_url == f"{app_url}?table={table.game_id}"
        async with aiohttp.ClientSession() as http:
            async with http.post(base, json={"user": anna.id, "chat": anna.id,
                                             "message": message.message_id,
                                             "url": button_url}) as response:
                opened = (await response.json())["url"]
            assert opened.startswith(button_url + "#")
            user = validate_init_data(_init_data(opened), tg.token, max_age=60)
            assert user.id == anna.id and user.start_param is None
            async with http.post(base, json={"user": anna.id, "chat": groups[0].id,
                                             "short_name": WEB_APP_SHORT_NAME,
                                             "start_param": str(table.game_id)}) as response:
                linked = (await response.json())["url"]
            user = validate_init_data(_init_data(linked), tg.token, max_age=60)
            assert user.start_param == str(table.game_id)
            assert parse_qs(_init_data(linked))["chat_type"] == ["group"]
            for body in (  # not on the message; no such app; a chat she is not in
                {"user": anna.id, "chat": anna.id, "message": message.message_id,
                 "url": "http://127.0.0.1:1/"},
                {"user": anna.id, "chat": groups[0].id, "short_name": "other"},
                {"user": anna.id, "chat": 12345, "short_name": WEB_APP_SHORT_NAME},
            ):
                async with http.post(base, json=body) as response:
                    assert response.status == 400, body
    finally:
        await bot.stop()
        await page.stop()


def test_the_sandbox_bot_serves_its_mini_app_on_loopback(
        tg: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WEBAPP_TELEGRAM_JS", raising=False)
    env = bot_environment(tg, "sqlite:///x.db", web_app_port=8399)
    assert env["WEBAPP_URL"] == "http://127.0.0.1:8399/" and env["WEBAPP_PORT"] == "8399"
    assert env["WEBAPP_LISTEN"] == "127.0.0.1"
    assert env["WEBAPP_TELEGRAM_JS"] == "static/stand-in.js"  # (the offline fallback)
    # Telegram's own script where the caller has one (scripts/telegram-js)
    monkeypatch.setenv("WEBAPP_TELEGRAM_JS", "/srv/telegram-web-app.js")
    env = bot_environment(tg, "sqlite:///x.db", web_app_port=8399)
    assert env["WEBAPP_TELEGRAM_JS"] == "/srv/telegram-web-app.js"


def test_the_sandbox_mini_app_follows_the_sandbox_host(tg: Any) -> None:
    """``python -m sandbox --host 0.0.0.0``: the Mini App listens on every address too
    (others on the network open it where they opened the page: the page swaps its host
    into the loopback address the bot announces); a named address is used as it is.
    (Nothing is bound here: tests use loopback only.)"""
    for host in ("0.0.0.0", "192.168.1.20", "::1"):
        env = bot_environment(tg, "sqlite:///x.db", web_app_port=8399, host=host)
        assert env["WEBAPP_LISTEN"] == host
        assert env["WEBAPP_URL"] == "http://127.0.0.1:8399/"
    script = (Path(sandbox.__file__).parent / "static" / "app.js").read_text()
    assert "url.hostname = location.hostname" in script
