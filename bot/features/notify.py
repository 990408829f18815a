"""/avvisami (``/notify``): a private message when a lobby opens in the group (issue 48).

``/avvisami`` in a group subscribes the sender (who must have pressed Start in a private
chat with the bot: the message goes there); ``/avvisami off`` stops it; in a private chat
it is refused (which group?). When a lobby opens in the group with seats left, each
subscriber gets one private message with a button that seats them (the deep link of the
lobby), except who opened it or sits at it already: one round per lobby and at most one
round an hour per group (:data:`ROUND_GAP`, claimed in the database). The messages go
through the outbox like every other, at the lowest rank (:attr:`Priority.IDLE`): a
table's moves never wait for them. A subscriber who blocked the bot (403) is
unsubscribed from every group.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from telegram import Update
from telegram.error import TelegramError
from telegram.ext import Application, CommandHandler, ContextTypes

from bot.budget import Priority
from bot.features.common import reply
from bot.i18n import pick_language, tr, trn
from bot.prefs import seat_count
from bot.render import keyboards as kb
from bot.render import texts
from bot.runtime import Runtime, display_name, is_group, rt_of
from storage import repo, social

log = logging.getLogger(__name__)

#: Seconds between two rounds of messages about one group's lobbies.
ROUND_GAP = 3600
ON_WORDS = frozenset({"on", "si", "sì", "yes"})
OFF_WORDS = frozenset({"off", "no", "stop", "basta"})


async def cmd_notify(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    rt, chat, user, message = (
        rt_of(context), update.effective_chat, update.effective_user, update.effective_message
    )
    assert chat and user and message
    if not is_group(update):  # which group's tables?
        reply(context, message, tr(await rt.user_language(user), "notify.private"))
        return
    lang = await rt.chat_language(chat.id)
    name = texts.esc(display_name(user))
    words = [a.lower() for a in context.args or []]
    if len(words) > 1 or (words and words[0] not in ON_WORDS | OFF_WORDS):
        reply(context, message, tr(lang, "notify.usage"))
        return
    if words and words[0] in OFF_WORDS:
        removed = await social.unsubscribe(rt.db, chat.id, user.id)
        reply(context, message, tr(lang, "notify.off" if removed else "notify.was_off",
                                   name=name))
        return
    known = await repo.get_user(rt.db, user.id)
    if known is None or not known.private_ok:  # never pressed Start, or blocked the bot
        markup = kb.url_keyboard(tr(lang, "btn.open_private"),
                                 f"https://t.me/{context.bot.username}")
        reply(context, message, tr(lang, "notify.press_start"), reply_markup=markup)
        return
    added = await social.subscribe(rt.db, chat.id, user.id)
    log.info("chat %s: %s %s the lobby messages", chat.id, user.id,
             "subscribed to" if added else "was already subscribed to")
    reply(context, message, tr(lang, "notify.on" if added else "notify.already", name=name))


def lobby_opened(rt: Runtime, game_id: int, group_title: str,
                 skip: frozenset[int] = frozenset()) -> asyncio.Task[None]:
    """A lobby opened in a group (or a rivincita's freed seats: ``skip``, whose seats
    they were): tell its subscribers, in the background (the task). ``group_title``
    empty: asked of Telegram."""
    return rt.tables.background(_tell(rt, game_id, group_title, skip))


async def _tell(rt: Runtime, game_id: int, group_title: str, skip: frozenset[int]) -> None:
    row = await rt.service.row(game_id)
    subscribers = []
    for user_id, reachable in await social.notify_subscribers(rt.db, row.chat_id):
        if not reachable:  # blocked the bot (a 403, or Telegram said so): no more
            await _blocked(rt, user_id)
        elif user_id != row.creator_id and user_id not in skip:
            subscribers.append(user_id)
    if not subscribers or not await social.claim_notify_round(
            rt.db, row.chat_id, game_id, ROUND_GAP):
        return
    if not group_title:  # (a rivincita opened from the Mini App: no chat in its update)
        try:
            group_title = (await rt.tables.bot.get_chat(row.chat_id)).title or ""
        except TelegramError as exc:
            log.info("chat %s: no title for the lobby messages (%s)", row.chat_id, exc)
    group_lang = (await rt.chat_prefs(row.chat_id)).language
    link = f"https://t.me/{rt.tables.bot.username}?start=j{game_id}"
    sent = 0
    for user_id in subscribers:
        row = await rt.service.row(game_id)  # (as it is now: seats fill meanwhile)
        prefs = await rt.chat_prefs(row.chat_id)
        free = seat_count(prefs.options) - len(row.seats)
        if row.status != "lobby" or free <= 0:
            break
        if row.seat_of(user_id) is not None:
            continue
        user = await repo.get_user(rt.db, user_id)
        lang = pick_language(user.language_code if user else None, group_lang)
        text = "\n".join([
            tr(lang, "notify.lobby", group=texts.esc(group_title),
               game=texts.game_label(lang, prefs.options), free=trn(lang, "notify.free", free)),
            tr(lang, "notify.footer"),
        ])
        markup = kb.url_keyboard(tr(lang, "btn.notify_join"), link)
        msg = await rt.outbox.send(user_id, text, markup, priority=Priority.IDLE)
        if msg is not None:
            sent += 1
            continue
        user = await repo.get_user(rt.db, user_id)
        if user is not None and not user.private_ok:  # 403: the outbox marked it
            await _blocked(rt, user_id)
    log.info("lobby %s: %d subscriber(s) of chat %s told", game_id, sent, row.chat_id)


async def _blocked(rt: Runtime, user_id: int) -> None:
    gone = await social.unsubscribe_everywhere(rt.db, user_id)
    log.info("user %s blocked the bot: %d lobby subscription(s) removed", user_id, gone)


def register(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
    app.add_handler(CommandHandler(["avvisami", "notify"], cmd_notify))
