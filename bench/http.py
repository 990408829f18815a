"""CPU per Bot API call of PTB's HTTP backends: its default (httpx) and the bot's (aiohttp).

    .venv/bin/python -m bench.http [--calls 2000] [--concurrency 8]

A script, not a test: it prints figures. A minimal Bot API server (answers only, no
checks) runs in a subprocess, so that only the client's CPU is measured; the client is a
real ``telegram.Bot`` making the bot's two commonest calls, an ``editMessageText`` with a
3×4 keyboard and an ``answerCallbackQuery``, ``--concurrency`` at a time. CPU is the
client process's user+system time per call, PTB's own work included.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import subprocess
import sys
import time

from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup
from telegram.request import BaseRequest, HTTPXRequest

from bot.aiohttp_request import AiohttpRequest

SERVER = r"""
import sys
from aiohttp import web

MESSAGE = {
    "message_id": 5, "date": 1700000000, "text": "x" * 300,
    "chat": {"id": -100123, "type": "supergroup", "title": "t"},
    "from": {"id": 1, "is_bot": True, "first_name": "b"},
    "reply_markup": {"inline_keyboard": [
        [{"text": str(i), "callback_data": f"a:1:2:{i}"} for i in range(4)] for _ in range(3)
    ]},
}
ME = {"id": 1, "is_bot": True, "first_name": "b", "username": "bench_bot"}

async def handle(request):
    await request.post()
    method = request.match_info["method"]
    result = True if method == "answerCallbackQuery" else ME if method == "getMe" else MESSAGE
    return web.json_response({"ok": True, "result": result})

app = web.Application()
app.router.add_post("/bot{token}/{method}", handle)
web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), print=None)
"""

KEYBOARD = InlineKeyboardMarkup(
    [[InlineKeyboardButton(str(i), callback_data=f"a:1:2:{i}") for i in range(4)]
     for _ in range(3)]
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def wait_for_server(port: int) -> None:
    for _ in range(100):
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.05)
            continue
        writer.close()
        await writer.wait_closed()
        return
    raise SystemExit("the bench server did not start")


async def cpu_per_call(bot: Bot, calls: int, concurrency: int, what: str) -> float:
    async def one(i: int) -> None:
        if what == "edit":
            await bot.edit_message_text("x" * 300, -100123, 5, reply_markup=KEYBOARD)
        else:
            await bot.answer_callback_query(str(i))

    async def worker(k: int) -> None:
        for i in range(k, calls, concurrency):
            await one(i)

    await asyncio.gather(*(worker(k) for k in range(concurrency)))  # warm-up: connections
    start = time.process_time()
    await asyncio.gather(*(worker(k) for k in range(concurrency)))
    return (time.process_time() - start) / calls


async def measure(port: int, args: argparse.Namespace) -> None:
    backends: dict[str, type[BaseRequest]] = {
        "httpx (PTB's default)": HTTPXRequest, "aiohttp (the bot's)": AiohttpRequest,
    }
    print("| backend | editMessageText ms CPU | answerCallbackQuery ms CPU |")
    print("|---|---|---|")
    for name, backend in backends.items():
        bot = Bot("1:bench", base_url=f"http://127.0.0.1:{port}/bot", request=backend())
        async with bot:
            edit = await cpu_per_call(bot, args.calls, args.concurrency, "edit")
            answer = await cpu_per_call(bot, args.calls, args.concurrency, "answer")
        print(f"| {name} | {edit * 1000:.2f} | {answer * 1000:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    port = free_port()
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(port)])
    try:
        asyncio.run(wait_for_server(port))
        asyncio.run(measure(port, args))
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()
