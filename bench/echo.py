"""The floor of the load benchmark: a minimal PTB Application that answers every update
once (callback queries with answerCallbackQuery, messages with one reply), long polling
like the real bot. Reads ``BOT_TOKEN``, ``TELEGRAM_BASE_URL`` and
``TELEGRAM_BASE_FILE_URL`` from the environment, and ``ECHO_HTTP``: ``httpx`` (default:
PTB's own HTTP backend, a truly minimal Application) or ``aiohttp`` (the bot's backend,
:mod:`bot.aiohttp_request`, for a floor with the same HTTP cost per call).

    python -m bench.echo
"""

from __future__ import annotations

import logging
import os

from telegram import Update
from telegram.ext import Application, CallbackQueryHandler, ContextTypes, MessageHandler, filters


async def on_query(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    assert update.callback_query is not None
    await update.callback_query.answer()


async def on_message(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    assert update.effective_message is not None
    await update.effective_message.reply_text("echo")


def main() -> None:
    logging.basicConfig(level=logging.WARNING)
    builder = Application.builder().token(os.environ["BOT_TOKEN"])
    if os.environ.get("TELEGRAM_BASE_URL"):
        builder = builder.base_url(os.environ["TELEGRAM_BASE_URL"])
    if os.environ.get("TELEGRAM_BASE_FILE_URL"):
        builder = builder.base_file_url(os.environ["TELEGRAM_BASE_FILE_URL"])
    if os.environ.get("ECHO_HTTP", "httpx") == "aiohttp":
        from bot.aiohttp_request import AiohttpRequest

        builder = builder.request(AiohttpRequest()).get_updates_request(
            AiohttpRequest(connection_pool_size=1)
        )
    app = builder.build()
    app.add_handler(CallbackQueryHandler(on_query))
    app.add_handler(MessageHandler(filters.ALL, on_message))
    app.run_polling(allowed_updates=Update.ALL_TYPES)


if __name__ == "__main__":
    main()
