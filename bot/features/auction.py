"""Auction helpers: confirmation of costly calls and the points picker for 2-level calls.

These buttons only redraw the keyboard of the message they are on, for the player in turn;
the call itself is made by the confirm button (``a:…``), validated by the core.
"""

from __future__ import annotations

from telegram import InlineKeyboardMarkup, Message, Update
from telegram.ext import Application, CallbackQueryHandler, ContextTypes

from bot import callbacks as cb
from bot.features.common import alert, answer
from bot.i18n import tr
from bot.prefs import is_private_chat
from bot.render import keyboards as kb
from bot.runtime import rt_of
from bot.service import Refused
from bot.tables import prefs_of
from game import Game


def offered(game: Game, seat: int, data: cb.Callback) -> bool:
    """A confirmation or a points picker only for a call the core offers this seat now."""
    legal = {action.code for action in game.legal_actions(seat)}
    if data.kind == "q":
        return data.parts[0] in legal
    prefix = data.parts[0]
    head = prefix if prefix in ("t", "n") else prefix + "."
    return any(code.startswith(head) for code in legal)


async def on_keyboard_step(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    query, rt = update.callback_query, rt_of(context)
    assert query is not None and query.message is not None
    lang = await rt.user_language(query.from_user, update.effective_chat)
    try:
        data = cb.parse(query.data)
        row, game = await rt.service.load(data.game_id)
        seat = row.seat_of(query.from_user.id)
        if seat is None:
            raise Refused("alert.not_seated")
        if data.version != row.version:
            raise Refused("alert.stale")
        private = is_private_chat(query.message.chat.id)
        if game.current_seat() != seat.seat and not (private and data.kind == "q"):
            raise Refused("alert.not_your_turn")
        if data.kind in ("q", "p") and not offered(game, seat.seat, data):
            raise cb.BadCallback(query.data)
        view = game.view(None if not private else seat.seat)
        mlang = lang if private else prefs_of(row).language
        markup: InlineKeyboardMarkup | None
        if data.kind == "q":
            markup = kb.confirm_keyboard(mlang, row.game_id, view, data.parts[0])
        elif data.kind == "p":
            prefix, points = data.parts[0], int(data.parts[1])
            markup = kb.picker_keyboard(mlang, row.game_id, view, prefix, points)
        elif private:
            own = kb.solo_keyboard if is_private_chat(row.chat_id) else kb.private_keyboard
            markup = own(mlang, row.game_id, game.view(seat.seat))
        else:
            markup = kb.auction_group_keyboard(mlang, row.game_id, view)
    except Refused as exc:
        await alert(query, tr(lang, exc.code, **exc.values))
        return
    except (cb.BadCallback, ValueError, IndexError):
        await alert(query, tr(lang, "alert.bad_button"))
        return
    await answer(query)
    message = query.message  # the keyboard follows, queued first in the budgets
    text = message.text_html if isinstance(message, Message) and message.text else ""
    rt.outbox.edit_markup(message.chat.id, message.message_id, markup, text)


def register(app: Application) -> None:  # type: ignore[type-arg]
    app.add_handler(CallbackQueryHandler(on_keyboard_step, pattern=r"^[qpx]:"))
