"""Game actions from buttons (``a:gid:v:code``): bids, suit, cards; "I'm back"; /mano and
/tavolo (a way out of any stale screen: the hand, or the group's table, posted again with
its current keyboard)."""

from __future__ import annotations

import functools
import logging

from telegram import Update
from telegram.ext import Application, CallbackQueryHandler, CommandHandler, ContextTypes

from bot import callbacks as cb
from bot.features.common import alert, answer, private_only_reply, reply
from bot.i18n import tr
from bot.outbox import Outbox
from bot.render import texts
from bot.runtime import is_group, rt_of, thread_of
from bot.service import Applied, Refused
from bot.tables import prefs_of
from storage import StorageUnavailable

log = logging.getLogger(__name__)


async def on_action(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Parse -> apply through the service -> answer -> render in the background.

    Nothing but the move comes before the answer (the language is looked up only for an
    alert): the answer is what the player waits for."""
    query, rt = update.callback_query, rt_of(context)
    assert query is not None
    try:
        data = cb.parse(query.data)
        applied = await rt.tables.human_action(
            data.game_id, data.version, query.from_user.id, data.parts[0]
        )
    except Refused as exc:
        await refuse(update, context, exc)
        return
    except cb.BadCallback:
        await refuse(update, context, Refused("alert.bad_button"))
        return
    except StorageUnavailable:  # nothing saved; the group is told by Tables
        await refuse(update, context, Refused("storage.not_saved"))
        return
    message = query.message
    pressed = None if message is None else (message.chat.id, message.message_id)
    try:
        await answer(query, shown_soon(rt.outbox, applied, pressed))
    finally:
        # the move is stored: render it whatever happens to the answer, but only once
        # the answer is on its way (the task would run first at the answer's first await);
        # the pressed message is redrawn first (it shows the presser their own move)
        context.application.create_task(rt.tables.after(applied, pressed), update=update)


def shown_soon(outbox: Outbox, applied: Applied, pressed: tuple[int, int] | None) -> str | None:
    """The answer's notice when the pressed message cannot show the move at once: a bid
    on a group's keyboard while the group's pace (~20 calls a minute) holds its redraw
    longer than a private chat's pacing interval (1.25 s); the move in words, so that the
    presser sees their own press right away. None otherwise (the redraw shows it)."""
    if pressed is None or pressed[0] > 0 or \
            outbox.wait_for(pressed[0]) <= outbox.private_interval():
        return None
    prefs = prefs_of(applied.row)
    move = texts.bid_text(prefs.language, prefs.options.deck_style.value, applied.code)
    return tr(prefs.language, "toast.move_shown_soon", move=move)


async def refuse(update: Update, context: ContextTypes.DEFAULT_TYPE, refusal: Refused) -> None:
    """Answer a press with an alert in the presser's language."""
    query = update.callback_query
    assert query is not None
    lang = await rt_of(context).user_language(query.from_user, update.effective_chat)
    await alert(query, refusal.text(lang))


async def on_back_from_afk(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    query, rt = update.callback_query, rt_of(context)
    assert query is not None
    lang = await rt.user_language(query.from_user, update.effective_chat)
    try:
        data = cb.parse(query.data)
        await rt.tables.im_back(data.game_id, query.from_user.id)
    except Refused as exc:
        await alert(query, exc.text(lang))
        return
    except cb.BadCallback:
        await alert(query, tr(lang, "alert.bad_button"))
        return
    await answer(query, tr(lang, "afk.welcome_back"))  # only once the seat is really back


async def cmd_hand(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    if is_group(update):
        await private_only_reply(update, context, "wrong.group_hand")
        return
    rt, user, message = rt_of(context), update.effective_user, update.effective_message
    assert user and message
    none = functools.partial(reply, context, message,
                             tr(await rt.user_language(user), "hand.none"))
    if not await rt.tables.resend_hand(user.id, ended=none):
        none()


async def cmd_table(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/tavolo: the group's table again, with its current keyboard (in private, where a
    match alone shows its table in the hand's message: the hand, as /mano)."""
    if not is_group(update):
        await cmd_hand(update, context)
        return
    rt, chat, message = rt_of(context), update.effective_chat, update.effective_message
    assert chat and message
    none = functools.partial(reply, context, message,
                             tr(await rt.chat_language(chat.id), "table.none"))
    if not await rt.tables.resend_table(chat.id, thread_of(message), ended=none):
        none()


async def on_unknown_button(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Anything no other handler took: answer politely, change nothing."""
    query, rt = update.callback_query, rt_of(context)
    assert query is not None
    lang = await rt.user_language(query.from_user, update.effective_chat)
    await alert(query, tr(lang, "alert.bad_button"))


def register(app: Application) -> None:  # type: ignore[type-arg]
    app.add_handler(CallbackQueryHandler(on_action, pattern=r"^a:"))
    app.add_handler(CallbackQueryHandler(on_back_from_afk, pattern=r"^b:"))
    app.add_handler(CommandHandler(["mano", "hand"], cmd_hand))
    app.add_handler(CommandHandler(["tavolo", "table"], cmd_table))


def register_fallback(app: Application) -> None:  # type: ignore[type-arg]
    app.add_handler(CallbackQueryHandler(on_unknown_button))
