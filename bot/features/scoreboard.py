"""/classifica: the chat's scoreboard."""

from __future__ import annotations

from telegram import Update
from telegram.ext import Application, CommandHandler, ContextTypes

from bot.features.common import refuse_in_private, reply
from bot.render import texts
from bot.runtime import rt_of
from storage import repo


async def cmd_leaderboard(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    if await refuse_in_private(update, context):
        return
    rt, chat, message = rt_of(context), update.effective_chat, update.effective_message
    assert chat and message
    rows = await repo.leaderboard(rt.db, chat.id)
    lines = [
        (r.display_name, r.total, r.matches, r.smazzate, r.chiamante_count, r.chiamante_wins)
        for r in rows
    ]
    reply(context, message, texts.leaderboard_text(await rt.chat_language(chat.id), lines))


def register(app: Application) -> None:  # type: ignore[type-arg]
    app.add_handler(CommandHandler(["classifica", "leaderboard"], cmd_leaderboard))
