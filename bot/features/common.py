"""Small helpers shared by the feature modules."""

from __future__ import annotations

import logging
from typing import Any

from telegram import CallbackQuery, Message, Update
from telegram.error import TelegramError
from telegram.ext import (
    Application,
    ApplicationHandlerStop,
    ContextTypes,
    MessageHandler,
    filters,
)

from bot.i18n import tr
from bot.render import keyboards as kb
from bot.runtime import is_group, rt_of

log = logging.getLogger(__name__)

ALERT_LIMIT = 200
#: Telegram's user id of "GroupAnonymousBot", the sender of anonymous admins' messages.
ANONYMOUS_ADMIN_ID = 1087968824
#: Commands that need to know who is writing (seat, creator, admin rights).
PERSONAL_COMMANDS = frozenset(
    {"nuova", "new", "entra", "join", "esci", "leave", "inizia", "begin", "annulla", "cancel",
     "impostazioni", "settings", "avvisami", "notify"}
)


async def alert(query: CallbackQuery, text: str) -> None:
    """Answer a callback query with a modal alert (≤ 200 characters)."""
    if len(text) > ALERT_LIMIT:
        text = text[: ALERT_LIMIT - 1] + "…"
    await answer(query, text, show_alert=True)


async def answer(query: CallbackQuery, text: str | None = None, *,
                 show_alert: bool = False, url: str | None = None) -> bool:
    """Answer a press; an expected refusal ("query is too old", a network failure) is
    logged here, not raised. True if answered."""
    try:
        await query.answer(text, show_alert=show_alert, url=url)
    except TelegramError as exc:
        log.warning("could not answer the press of %s: %s", query.from_user.id, exc)
        return False
    return True


def reply(context: ContextTypes.DEFAULT_TYPE, message: Message, text: str,
          **kwargs: Any) -> None:
    """Reply to a command without waiting: the reply is queued first in Telegram's budgets
    (:class:`bot.outbox.PacedRateLimiter`), the handler returns at once."""
    context.application.create_task(_reply(message, text, kwargs))


async def _reply(message: Message, text: str, kwargs: dict[str, Any]) -> None:
    try:
        await message.reply_text(text, **kwargs)
    except TelegramError as exc:  # e.g. the bot was removed meanwhile
        log.warning("could not reply in chat %s: %s", message.chat_id, exc)


async def refuse_in_private(update: Update, context: ContextTypes.DEFAULT_TYPE) -> bool:
    """Group commands used in a private chat get a helpful answer. True if refused."""
    if is_group(update):
        return False
    rt = rt_of(context)
    message = update.effective_message
    if message is not None:
        lang = await rt.user_language(update.effective_user)
        reply(context, message, tr(lang, "wrong.private"))
    return True


async def private_only_reply(
    update: Update, context: ContextTypes.DEFAULT_TYPE, key: str = "wrong.group"
) -> None:
    """Private commands used in a group: point to the private chat (text ``key``)."""
    rt = rt_of(context)
    message, chat = update.effective_message, update.effective_chat
    if message is None or chat is None:
        return
    lang = await rt.chat_language(chat.id)
    url = f"https://t.me/{context.bot.username}"
    markup = kb.url_keyboard(tr(lang, "btn.open_private"), url)
    reply(context, message, tr(lang, key), reply_markup=markup)


def is_anonymous(update: Update) -> bool:
    """Written on behalf of a chat (anonymous admin, linked channel): nobody to recognise."""
    message, user = update.effective_message, update.effective_user
    return (message is not None and message.sender_chat is not None) or (
        user is not None and user.id == ANONYMOUS_ADMIN_ID
    )


async def on_anonymous_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A personal command from an anonymous admin: explain, and stop other handlers."""
    message, chat = update.effective_message, update.effective_chat
    if message is None or chat is None or not message.text or not is_anonymous(update):
        return
    command = message.text.split()[0][1:].split("@")[0].lower()
    if command not in PERSONAL_COMMANDS:
        return  # /classifica, /regole, /aiuto work for anyone
    lang = await rt_of(context).chat_language(chat.id)
    reply(context, message, tr(lang, "wrong.anonymous"))
    raise ApplicationHandlerStop


def register(app: Application) -> None:  # type: ignore[type-arg]
    """Runs before the features (group -1)."""
    app.add_handler(
        MessageHandler(filters.COMMAND & filters.ChatType.GROUPS, on_anonymous_command), group=-1
    )
