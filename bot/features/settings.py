"""/impostazioni: an inline menu of every table option, deck, match end, timeout, language.

Only the creator of the open lobby or a chat admin may change them; changes are saved per
chat and apply from the next match.
"""

from __future__ import annotations

from telegram import Update
from telegram.ext import Application, CallbackQueryHandler, CommandHandler, ContextTypes

from bot import callbacks as cb
from bot.budget import Priority
from bot.features.common import alert, answer, reply
from bot.features.lobby_message import show_lobby
from bot.i18n import tr
from bot.prefs import MENU, Prefs, cycle
from bot.render import keyboards as kb
from bot.render import texts
from bot.runtime import may_manage, rt_of, thread_of
from bot.service import Refused
from storage import GameRow, repo


def menu_text(lang: str, prefs: Prefs) -> str:
    return "\n".join(
        [tr(lang, "settings.head"), "", texts.options_summary(lang, prefs), "",
         tr(lang, "settings.hint")]
    )


async def open_menu(
    context: ContextTypes.DEFAULT_TYPE, chat_id: int, thread_id: int, user_id: int,
    row: GameRow | None,
) -> None:
    rt = rt_of(context)
    if not await may_manage(context, row, chat_id, user_id):
        raise Refused("alert.only_manager")
    prefs = await rt.chat_prefs(chat_id)
    rt.tables.background(rt.outbox.send(
        chat_id, menu_text(prefs.language, prefs), kb.settings_keyboard(prefs.language, prefs),
        thread_id=thread_id, priority=Priority.TURN,
    ))


async def cmd_settings(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """The chat's settings for the next matches (in private: the tables alone)."""
    rt, chat, user, message = (
        rt_of(context), update.effective_chat, update.effective_user, update.effective_message
    )
    assert chat and user and message
    row = await repo.get_active_game(rt.db, chat.id, thread_of(message))
    try:
        await open_menu(context, chat.id, thread_of(message), user.id, row)
    except Refused as exc:
        reply(context, message, exc.text(await rt.chat_language(chat.id)))


async def on_settings_button(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    query, rt = update.callback_query, rt_of(context)
    assert query is not None and query.message is not None
    chat_id = query.message.chat.id
    lang = await rt.user_language(query.from_user, update.effective_chat)
    try:
        data = cb.parse(query.data)
        row = await repo.get_active_game(rt.db, chat_id, thread_of(query.message))
        if not await may_manage(context, row, chat_id, query.from_user.id):
            raise Refused("alert.only_manager")
        prefs = await rt.chat_prefs(chat_id)
        if data.parts[0] == "c" and len(data.parts) == 2 and data.parts[1].isdigit():
            index = int(data.parts[1])
            if index >= len(MENU):
                raise cb.BadCallback(query.data)
            prefs = cycle(prefs, index)
            await repo.save_chat_settings(rt.db, chat_id, prefs.language, prefs.to_json())
            markup = kb.settings_keyboard(prefs.language, prefs)
        elif data.parts[0] == "x":
            markup = None
        else:
            raise cb.BadCallback(query.data)
    except Refused as exc:
        await alert(query, exc.text(lang))
        return
    except cb.BadCallback:
        await alert(query, tr(lang, "alert.bad_button"))
        return
    await answer(query)
    text = menu_text(prefs.language, prefs)
    rt.outbox.edit(chat_id, query.message.message_id, text, markup, priority=Priority.TURN)
    if row is not None and row.status == "lobby":
        show_lobby(rt, row.game_id)


def register(app: Application) -> None:  # type: ignore[type-arg]
    app.add_handler(CommandHandler(["impostazioni", "settings"], cmd_settings))
    app.add_handler(CallbackQueryHandler(on_settings_button, pattern=r"^s:"))
