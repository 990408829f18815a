"""Forum topics (issue 48): a topic reopened by its group takes messages again.

Each topic holds its own table (``games.thread_id``). When Telegram refuses a message to
a closed topic (``TOPIC_CLOSED``) the outbox stops writing there and that topic's table
ends (:meth:`bot.tables.Tables.topic_closed`); Telegram's service message
``forum_topic_reopened`` lifts the stop.
"""

from __future__ import annotations

import logging
from typing import Any

from telegram import Update
from telegram.ext import Application, ContextTypes, MessageHandler, filters

from bot.runtime import rt_of, thread_of

log = logging.getLogger(__name__)


async def on_reopened(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    message = update.effective_message
    if message is None:
        return
    thread = thread_of(message)
    log.info("topic %s of chat %s reopened", thread, message.chat.id)
    rt_of(context).outbox.topic_reopened(message.chat.id, thread)


def register(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
    app.add_handler(MessageHandler(filters.StatusUpdate.FORUM_TOPIC_REOPENED, on_reopened))
