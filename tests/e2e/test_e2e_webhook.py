"""Webhook mode of the real bot process (``python -m bot`` with ``WEBHOOK_URL``): the fake
Bot API POSTs the updates to PTB's webhook server with the secret header; a request
without the right secret gets 403 and changes nothing; SIGTERM stops it like polling."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import aiohttp

from bench.sim import BotProcess, open_reader
from bot.__main__ import STOP_SECONDS
from sandbox.fakeapi import FakeTelegram
from sandbox.fakeapi.server import SECRET_HEADER
from storage import repo
from tests.conftest import WEBHOOK_SECRET, free_port


def forged_command(update_id: int, group: Any, user: Any, text: str) -> dict[str, Any]:
    """A message update as Telegram would POST it."""
    return {
        "update_id": update_id,
        "message": {
            "message_id": 10_000 + update_id,
            "date": int(time.time()),
            "chat": {"id": group.id, "type": "group", "title": group.title},
            "from": {"id": user.id, "is_bot": False, "first_name": user.first_name},
            "text": text,
            "entities": [{"type": "bot_command", "offset": 0, "length": len(text)}],
        },
    }


async def test_webhook_mode_checks_the_secret_on_every_request(tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/briscola/hook"
    async with FakeTelegram() as tg:
        bot = BotProcess(tg, tmp_path, env={
            "WEBHOOK_URL": url, "WEBHOOK_SECRET": WEBHOOK_SECRET,
            "WEBHOOK_LISTEN": "127.0.0.1", "WEBHOOK_PORT": str(port),
        })  # fmt: skip
        await bot.start()
        reader = await open_reader(bot.db_path)
        try:
            (set_webhook,) = tg.calls_to("setWebhook")
            assert set_webhook.params["url"] == url
            assert set_webhook.params["secret_token"] == WEBHOOK_SECRET
            anna = tg.add_user("Anna", language_code="it")
            await anna.start_bot()
            await tg.wait_for_message(anna, "Ciao! Sono il bot della")

            group = tg.add_group("Tavolo", [anna], admins=[anna])
            eve = tg.add_user("Eve")
            async with aiohttp.ClientSession() as session:
                for headers in ({}, {SECRET_HEADER: "wrong-secret"},
                                {SECRET_HEADER: WEBHOOK_SECRET.upper()}):
                    body = json.dumps(forged_command(900_001, group, eve, "/nuova"))
                    async with session.post(url, data=body, headers={
                        "Content-Type": "application/json", **headers,
                    }) as response:  # fmt: skip
                        assert response.status == 403, headers
            await asyncio.sleep(0.5)  # what an accepted update would have had time to do
            assert tg.chat_messages(group, from_bot=True) == []
            assert await repo.get_active_game(reader, group.id, 0) is None
            assert not [c for c in tg.calls if c.chat_id == group.id]

            # the same command, delivered by the fake with the secret, opens a table
            await anna.send(group, "/nuova")
            await tg.wait_for_message(group, "Briscola chiamata")
            assert await repo.get_active_game(reader, group.id, 0) is not None
            assert tg.calls_to("getUpdates") == []
            assert tg.webhook_deliveries and all(d.ok for d in tg.webhook_deliveries)

            loop = asyncio.get_running_loop()
            started = loop.time()
            assert await bot.stop(timeout=STOP_SECONDS + 2) == 0
            assert loop.time() - started < STOP_SECONDS
            assert bot.problems() == [], bot.log_tail()
        finally:
            await reader.close()
            await bot.kill()
