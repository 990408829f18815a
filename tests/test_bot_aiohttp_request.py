"""The bot's aiohttp backend for PTB, through a real ``telegram.Bot`` against a small local
HTTP server: what arrives, what comes back, and how transport failures are reported."""

from __future__ import annotations

import asyncio
import contextlib
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


@contextlib.asynccontextmanager
async def serving(state: Server) -> AsyncIterator[str]:
    """A local Bot API answering with ``state``; its base URL."""
    app = web.Application()
    app.router.add_post("/bot{token}/{method}", state.dispatch)
    test_server = TestServer(app, host="127.0.0.1")
    await test_server.start_server()
    try:
        yield str(test_server.make_url("/bot"))
    finally:
        await test_server.close()


@pytest.fixture
async def server() -> AsyncIterator[tuple[Server, str]]:
    state = Server()
    async with serving(state) as url:
        yield state, url


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


class QueryServer(Server):
    """Also records the query string and the body's length."""

    async def dispatch(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        self.seen.append({"method": request.match_info["method"], "query": dict(request.query),
                          "body": body})
        results = {"getMe": ME, "getUpdates": [], "sendMessage": MESSAGE}
        return web.json_response(
            {"ok": True, "result": results.get(request.match_info["method"], True)})


@pytest.fixture
async def query_server() -> AsyncIterator[tuple[QueryServer, str]]:
    state = QueryServer()
    async with serving(state) as url:
        yield state, url


async def test_a_press_answer_and_the_poll_go_in_the_url_with_no_body(
    query_server: tuple[QueryServer, str],
) -> None:
    """No body: aiohttp (Python < 3.12) writes a body from a task of its own, a turn of
    the event loop later; the press's answer leaves at once. Every character arrives."""
    state, url = query_server
    text = "Giocato: 3 di ♠ + 1 & 2 = 100% #ok é?/"
    async with Bot("123:abc", base_url=url, request=AiohttpRequest(),
                   get_updates_request=AiohttpRequest(connection_pool_size=1)) as bot:
        assert await bot.answer_callback_query("77", text, show_alert=True)
        assert await bot.get_updates(offset=12, timeout=0) == ()
        long_text = "é" * 200  # 1,200 bytes %-encoded: still in the URL
        assert await bot.answer_callback_query("78", long_text)
    answer, poll, long_answer = state.seen[-3:]
    assert answer["method"] == "answerCallbackQuery" and answer["body"] == b""
    assert answer["query"] == {"callback_query_id": "77", "text": text, "show_alert": "true"}
    assert poll["method"] == "getUpdates" and poll["body"] == b""
    assert poll["query"]["offset"] == "12"
    assert long_answer["query"]["text"] == long_text and long_answer["body"] == b""


async def test_a_long_query_string_goes_in_the_body(
    query_server: tuple[QueryServer, str],
) -> None:
    from bot.aiohttp_request import MAX_QUERY_STRING

    state, url = query_server
    text = "x" * (MAX_QUERY_STRING + 1)  # (longer than Telegram takes: the bound still holds)
    async with make_bot(url) as bot:
        await bot.answer_callback_query("79", text)
    seen = state.seen[-1]
    assert seen["query"] == {} and b"x" * 100 in seen["body"]


async def test_only_a_call_with_a_body_needs_a_task_to_write_it(
    query_server: tuple[QueryServer, str],
) -> None:
    """What the URL saves: aiohttp starts a task to write a body (on Python < 3.12 it
    runs at the loop's next turn); a press's answer starts none."""
    _, url = query_server
    loop = asyncio.get_running_loop()
    started: list[str] = []
    default = loop.get_task_factory()

    def factory(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> Any:
        started.append(getattr(coro, "__qualname__", "?"))
        if default is not None:
            return default(loop, coro, **kwargs)
        return asyncio.Task(coro, loop=loop, **kwargs)

    async with make_bot(url) as bot:
        await bot.answer_callback_query("80", "ok")  # (a connection in the pool first)
        loop.set_task_factory(factory)
        try:
            await bot.answer_callback_query("81", "preso")
            answered = list(started)
            await bot.send_message(-7, "ciao")
        finally:
            loop.set_task_factory(default)
    assert not any("write_bytes" in name for name in answered), answered
    assert any("write_bytes" in name for name in started), started  # (the check can fail)
