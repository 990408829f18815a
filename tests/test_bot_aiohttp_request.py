"""The bot's aiohttp backend for PTB, through a real ``telegram.Bot`` against a small local
HTTP server: what arrives, what comes back, and how transport failures are reported."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup
from telegram.error import BadRequest, NetworkError, TimedOut

from bot.aiohttp_request import AiohttpRequest

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
MESSAGE = {"message_id": 5, "date": 0, "chat": {"id": -7, "type": "group", "title": "t"},
           "text": "ciao"}
ME = {"id": 123, "is_bot": True, "first_name": "Briscola", "username": "briscola_bot"}


class Server:
    """Answers every Bot API method with ``self.handler``, recording the requests."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []
        self.handler: Handler = self.ok

    async def ok(self, request: web.Request) -> web.StreamResponse:
        result = ME if request.match_info["method"] == "getMe" else MESSAGE
        return web.json_response({"ok": True, "result": result})

    async def dispatch(self, request: web.Request) -> web.StreamResponse:
        form = await request.post()
        self.seen.append({
            "method": request.match_info["method"],
            "content_type": request.content_type,
            "user_agent": request.headers.get("User-Agent", ""),
            "fields": {k: v for k, v in form.items() if isinstance(v, str)},
            "files": {k: (v.filename, v.file.read()) for k, v in form.items()
                      if not isinstance(v, str)},
        })
        return await self.handler(request)


@pytest.fixture
async def server() -> AsyncIterator[tuple[Server, str]]:
    state = Server()
    app = web.Application()
    app.router.add_post("/bot{token}/{method}", state.dispatch)
    test_server = TestServer(app, host="127.0.0.1")
    await test_server.start_server()
    try:
        yield state, str(test_server.make_url("/bot"))
    finally:
        await test_server.close()


def make_bot(base_url: str, **timeouts: float) -> Bot:
    return Bot("123:abc", base_url=base_url, request=AiohttpRequest(**timeouts))


async def test_parameters_arrive_url_encoded_and_the_answer_is_parsed(
    server: tuple[Server, str],
) -> None:
    state, url = server
    keyboard = InlineKeyboardMarkup([[InlineKeyboardButton("Gioca", callback_data="a:1:2:x")]])
    async with make_bot(url) as bot:
        message = await bot.send_message(-7, "ciao <b>a tutti</b>", reply_markup=keyboard,
                                          parse_mode="HTML")
    assert message.message_id == 5 and message.chat.id == -7
    seen = state.seen[-1]
    assert seen["method"] == "sendMessage"
    assert seen["content_type"] == "application/x-www-form-urlencoded"
    assert seen["fields"]["chat_id"] == "-7"
    assert seen["fields"]["text"] == "ciao <b>a tutti</b>"
    assert json.loads(seen["fields"]["reply_markup"]) == keyboard.to_dict()
    assert "python-telegram-bot" in seen["user_agent"]


async def test_files_are_sent_as_multipart(server: tuple[Server, str]) -> None:
    state, url = server
    async with make_bot(url) as bot:
        await bot.send_document(-7, b"punti: 61", filename="punti.txt", caption="fine")
    seen = state.seen[-1]
    assert seen["content_type"] == "multipart/form-data"
    assert seen["fields"]["caption"] == "fine"
    assert [(name, body) for name, body in seen["files"].values()] == [("punti.txt", b"punti: 61")]


async def test_error_answers_reach_ptb_as_its_errors(server: tuple[Server, str]) -> None:
    state, url = server

    async def not_modified(request: web.Request) -> web.StreamResponse:
        return web.json_response(
            {"ok": False, "error_code": 400,
             "description": "Bad Request: message is not modified"}, status=400)

    async with make_bot(url) as bot:
        state.handler = not_modified
        with pytest.raises(BadRequest, match="not modified"):
            await bot.edit_message_text("same", -7, 5)


async def test_a_slow_answer_is_a_timeout(server: tuple[Server, str]) -> None:
    state, url = server

    async def slow(request: web.Request) -> web.StreamResponse:
        await asyncio.sleep(1)
        return await state.ok(request)

    async with make_bot(url, read_timeout=0.2) as bot:
        state.handler = slow
        with pytest.raises(TimedOut):
            await bot.send_message(-7, "ciao")
        state.handler = state.ok
        assert (await bot.send_message(-7, "ciao")).message_id == 5  # and it recovers


async def test_a_reset_connection_is_a_network_error(server: tuple[Server, str]) -> None:
    state, url = server

    async def reset(request: web.Request) -> web.StreamResponse:
        assert request.transport is not None
        request.transport.abort()
        return web.Response()

    async with make_bot(url) as bot:
        state.handler = reset
        with pytest.raises(NetworkError) as caught:
            await bot.send_message(-7, "ciao")
        assert not isinstance(caught.value, TimedOut)


async def test_requests_need_initialize_and_work_again_after_shutdown(
    server: tuple[Server, str],
) -> None:
    _, url = server
    request = AiohttpRequest()
    with pytest.raises(NetworkError, match="not initialized"):  # PTB wraps the error
        await request.post(url + "123:abc/getMe")
    for _ in range(2):  # Application.initialize after a shutdown (e.g. restart in tests)
        await request.initialize()
        assert await request.post(url + "123:abc/getMe") == ME
        await request.shutdown()
    with pytest.raises(NetworkError, match="not initialized"):  # PTB wraps the error
        await request.post(url + "123:abc/getMe")
    assert request.read_timeout == 5.0


def test_each_method_is_sent_only_its_own_parameters() -> None:
    from bot.aiohttp_request import own_parameters

    params = {"chat_id": "5", "message_id": "7", "reply_markup": "{}", "parse_mode": "HTML"}
    url = "https://api.telegram.org/bot1:x/editMessageReplyMarkup"
    assert own_parameters(url, params) == {"chat_id": "5", "message_id": "7", "reply_markup": "{}"}
    text_url = "https://api.telegram.org/bot1:x/editMessageText"
    assert own_parameters(text_url, params) == params
