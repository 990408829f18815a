"""Inline mode (issue 48): ``@bot`` typed in any chat offers an invitation to a table and
the user's rating; ``/start nuova`` (the invitation's links) opens the table.

The invitation is a message the user sends (via the bot) with two links: ``startgroup``
(Telegram asks which group, adds the bot if needed and sends ``/start nuova`` there: a
lobby opens in that group) and ``start`` (the private chat: a table alone against the
computers). Telegram tells a bot nothing about the chat an inline query is typed in, so a
link, not a button the bot answers, is what can open a table where it is pressed.

A query's text picks the results: empty, or a word of :data:`INVITE_WORDS` /
:data:`RATING_WORDS`; anything else (up to Telegram's 256 characters of whatever) gets
no results and a short localized hint, and a log line.
"""

from __future__ import annotations

import logging

from telegram import (
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    InlineQueryResultArticle,
    InlineQueryResultsButton,
    InputTextMessageContent,
    Update,
)
from telegram.error import TelegramError
from telegram.ext import (
    Application,
    ApplicationHandlerStop,
    CommandHandler,
    ContextTypes,
    InlineQueryHandler,
    filters,
)

from bot.features.common import is_anonymous, reply
from bot.features.lobby import cmd_new
from bot.i18n import tr
from bot.ratings import texts as rating_texts
from bot.ratings.model import user_key
from bot.render.texts import esc
from bot.runtime import display_name, rt_of
from storage import ratings as rating_store

log = logging.getLogger(__name__)

#: The ``/start`` payload of the invitation's links.
NEW_TABLE = "nuova"
INVITE_WORDS = frozenset({"invita", "invito", "tavolo", "invite", "table", "nuova", "new"})
RATING_WORDS = frozenset({"rating", "classifica", "elo", "punteggio", "score"})
#: Seconds Telegram may keep an answer (personal: each user gets their own).
CACHE_SECONDS = 30


def wanted(text: str) -> frozenset[str] | None:
    """The results a query's text asks for (None: not understood)."""
    words = text.strip().lower().split()
    if not words:
        return frozenset({"invite", "rating"})
    if len(words) == 1 and words[0] in INVITE_WORDS:
        return frozenset({"invite"})
    if len(words) == 1 and words[0] in RATING_WORDS:
        return frozenset({"rating"})
    return None


def invite_keyboard(lang: str, bot_username: str) -> InlineKeyboardMarkup:
    """The links that open a table: in a group the user picks, or alone."""
    base = f"https://t.me/{bot_username}"
    return InlineKeyboardMarkup([
        [InlineKeyboardButton(tr(lang, "inline.open_group"), url=f"{base}?startgroup={NEW_TABLE}")],
        [InlineKeyboardButton(tr(lang, "inline.open_alone"), url=f"{base}?start={NEW_TABLE}")],
    ])


def invitation(lang: str, bot_username: str, name: str) -> InlineQueryResultArticle:
    """The invitation: a message with the links that open a table."""
    keyboard = invite_keyboard(lang, bot_username)
    return InlineQueryResultArticle(
        id="invite", title=tr(lang, "inline.invite_title"),
        description=tr(lang, "inline.invite_description"),
        input_message_content=InputTextMessageContent(
            tr(lang, "inline.invite_text", name=esc(name))),
        reply_markup=keyboard,
    )


async def on_inline_query(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    query = update.inline_query
    if query is None:
        return
    rt, user = rt_of(context), query.from_user
    lang = await rt.user_language(user)
    asked = wanted(query.query)
    try:
        if asked is None:
            log.info("inline query not understood, from %s: %r", user.id, query.query[:64])
            await query.answer([], cache_time=CACHE_SECONDS, is_personal=False,
                               button=InlineQueryResultsButton(
                                   tr(lang, "inline.unknown"), start_parameter="inline"))
            return
        results = []
        if "invite" in asked:
            results.append(invitation(lang, context.bot.username, display_name(user)))
        if "rating" in asked:
            rows = await rating_store.player_ratings(rt.db, user_key(user.id))
            text = rating_texts.inline_rating_text(lang, display_name(user), rows, user.id)
            results.append(InlineQueryResultArticle(
                id="rating", title=tr(lang, "inline.rating_title"),
                description=rating_texts.inline_rating_summary(lang, rows, user.id),
                input_message_content=InputTextMessageContent(text),
            ))
        await query.answer(results, cache_time=CACHE_SECONDS, is_personal=True)
    except TelegramError as exc:  # e.g. answered too late: the user typed on
        log.warning("could not answer the inline query of %s: %s", user.id, exc)


async def on_start_new(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """``/start nuova``, from the invitation's links: a lobby in the group, or a table
    alone in the private chat (what ``/nuova`` does there), with the chat's game."""
    message = update.effective_message
    if message is None:
        return
    if is_anonymous(update):
        lang = await rt_of(context).chat_language(message.chat_id)
        reply(context, message, tr(lang, "wrong.anonymous"))
    else:
        context.args = []  # the chat's own game, as a bare /nuova
        await cmd_new(update, context)
    raise ApplicationHandlerStop  # (not /start's other handlers)


def register(app: Application) -> None:  # type: ignore[type-arg]
    app.add_handler(InlineQueryHandler(on_inline_query))
    # before /start's own handler and the group's anonymous check (group -1)
    app.add_handler(CommandHandler(
        "start", on_start_new, filters=filters.Regex(rf"^/start(@\w+)?\s+{NEW_TABLE}\s*$")),
        group=-2)

