"""/statistiche: the player's own record (every chat, this group, alone), their ratings,
their partners; ``/statistiche @name``: the same with a head-to-head line against them."""

from __future__ import annotations

import logging
import re

from telegram import Message, MessageEntity, Update
from telegram.ext import Application, CommandHandler, ContextTypes

from bot.features.common import is_anonymous
from bot.i18n import tr
from bot.partners import partner_lines, partners
from bot.ratings import texts as rating_texts
from bot.ratings.model import user_key
from bot.render import texts
from bot.runtime import display_name, is_group, rt_of
from bot.stats import player_stats
from storage import partners as mates_store
from storage import ratings as rating_store
from storage import repo

log = logging.getLogger(__name__)

#: A Telegram username (5-32 characters: letters, digits, underscores).
USERNAME = re.compile(r"@?([A-Za-z][A-Za-z0-9_]{3,31})")


async def cmd_stats(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    rt, chat, message = rt_of(context), update.effective_chat, update.effective_message
    user = update.effective_user
    assert chat and message
    group = is_group(update)
    lang = await (rt.chat_language(chat.id) if group else rt.user_language(user))
    if user is None or is_anonymous(update):
        await message.reply_text(tr(lang, "wrong.anonymous"))
        return
    rival: tuple[int, str] | None = None
    if context.args:
        rival = await _named(context, message, " ".join(context.args))
        if rival is None:
            asked = texts.esc(" ".join(context.args)[:64])
            log.info("/statistiche: unknown player %r asked by %s", asked, user.id)
            await message.reply_text(tr(lang, "partners.unknown", name=asked))
            return
    rows = await repo.played_smazzate(rt.db, user.id)
    stats = player_stats(rows, chat.id if group else None)
    ratings = await rating_store.player_ratings(rt.db, user_key(user.id))
    last = await rating_store.last_changes(rt.db, user_key(user.id))
    found = partners(rows, await mates_store.table_mates(rt.db, user.id))
    await message.reply_text(stats_message(
        lang, texts.stats_text(lang, display_name(user), stats),
        rating_texts.stats_lines(lang, ratings, last, chat.id),
        partner_lines(lang, found, rival)))


def stats_message(lang: str, record: str, ratings: list[str], partners: list[str]) -> str:
    """/statistiche's message: the record, the ratings (if any), the partners (if any)."""
    parts = [record]
    if ratings:
        parts.append("\n".join([tr(lang, "rating.stats_head"), *ratings]))
    if partners:
        parts.append("\n".join(partners))
    return texts.clip("\n\n".join(parts))


async def _named(
    context: ContextTypes.DEFAULT_TYPE, message: Message, asked: str
) -> tuple[int, str] | None:
    """The person ``/statistiche`` names: a mention of someone without a username
    (Telegram gives their id), or a username the bot has seen; None if unknown."""
    for entity in message.entities:
        if entity.type == MessageEntity.TEXT_MENTION and entity.user is not None:
            return entity.user.id, display_name(entity.user)
    match = USERNAME.fullmatch(asked.strip())
    if match is None:
        return None
    return await mates_store.user_by_username(rt_of(context).db, match.group(1))


def register(app: Application) -> None:  # type: ignore[type-arg]
    app.add_handler(CommandHandler(["statistiche", "stats"], cmd_stats))
