"""/statistiche: the player's own record (every chat, this group, alone)."""

from __future__ import annotations

from telegram import Update
from telegram.ext import Application, CommandHandler, ContextTypes

from bot.features.common import is_anonymous
from bot.i18n import tr
from bot.render import texts
from bot.runtime import display_name, is_group, rt_of
from bot.stats import player_stats
from storage import repo


async def cmd_stats(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    rt, chat, message = rt_of(context), update.effective_chat, update.effective_message
    user = update.effective_user
    assert chat and message
    group = is_group(update)
    lang = await (rt.chat_language(chat.id) if group else rt.user_language(user))
    if user is None or is_anonymous(update):
        await message.reply_text(tr(lang, "wrong.anonymous"))
        return
    rows = await repo.played_smazzate(rt.db, user.id)
    stats = player_stats(rows, chat.id if group else None)
    await message.reply_text(texts.stats_text(lang, display_name(user), stats))


def register(app: Application) -> None:  # type: ignore[type-arg]
    app.add_handler(CommandHandler(["statistiche", "stats"], cmd_stats))
