"""Small helpers shared by the feature modules."""

from __future__ import annotations

import contextlib

from telegram import CallbackQuery, Update
from telegram.error import BadRequest
from telegram.ext import ContextTypes

from bot.i18n import tr
from bot.render import keyboards as kb
from bot.runtime import is_group, rt_of

ALERT_LIMIT = 200


async def alert(query: CallbackQuery, text: str) -> None:
    """Answer a callback query with a modal alert (≤ 200 characters)."""
    if len(text) > ALERT_LIMIT:
        text = text[: ALERT_LIMIT - 1] + "…"
    with contextlib.suppress(BadRequest):  # query too old: nothing else we can do
        await query.answer(text, show_alert=True)


async def refuse_in_private(update: Update, context: ContextTypes.DEFAULT_TYPE) -> bool:
    """Group commands used in a private chat get a helpful answer. True if refused."""
    if is_group(update):
        return False
    rt = rt_of(context)
    message = update.effective_message
    if message is not None:
        lang = await rt.user_language(update.effective_user)
        await message.reply_text(tr(lang, "wrong.private"))
    return True


async def private_only_reply(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Private commands used in a group: point to the private chat."""
    rt = rt_of(context)
    message, chat = update.effective_message, update.effective_chat
    if message is None or chat is None:
        return
    lang = await rt.chat_language(chat.id)
    url = f"https://t.me/{context.bot.username}"
    await message.reply_text(
        tr(lang, "wrong.group"), reply_markup=kb.url_keyboard(tr(lang, "btn.open_private"), url)
    )
