"""Auction helpers: confirmation of costly calls, the points picker for 2-level calls, and
the private-only calls of a group's hands.

These buttons only redraw the keyboard of the message they are on, for the player in turn;
the call itself is made by the confirm button (``a:…``), validated by the core.

The bidder in turn bids from their private hand (the auction's public calls are drawn
there at their turn; no group message carries a bid button). A group's hands also show
their private-only calls (obbligato ranks, monte) for the whole auction as ``h:`` buttons
drawn for the smazzata, not the version, so a waiting hand is not redrawn for every bid.
Pressed at the player's turn (monte: whenever the core offers it, R17), such a button
opens the points picker or the confirmation, drawn for the current version, in that
message; out of turn it answers with a short notice and changes nothing; a call the
core no longer offers gets a clear answer.
"""

from __future__ import annotations

from collections.abc import Callable

from telegram import CallbackQuery, InlineKeyboardMarkup, Message, Update
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
from storage import GameRow, SeatRow


def offered(game: Game, seat: int, data: cb.Callback) -> bool:
    """A confirmation or a points picker only for a call the core offers this seat now."""
    legal = {action.code for action in game.legal_actions(seat)}
    prefix = data.parts[0]
    if data.kind == "q" or prefix == "M":
        return prefix in legal
    head = prefix if prefix in ("t", "n") else prefix + "."
    return any(code.startswith(head) for code in legal)


class Notice(Refused):
    """A press that changes nothing, answered with a short notice rather than an alert."""


#: Builds the next keyboard of a press: (data, row, game, seat, language, in a private
#: chat) -> markup; raises Refused / Notice / BadCallback.
Builder = Callable[[cb.Callback, GameRow, Game, SeatRow, str, bool],
                   InlineKeyboardMarkup | None]


async def on_keyboard_step(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    await _press(update, context, _step_keyboard)


async def on_hand_call(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    await _press(update, context, _hand_call_keyboard)


async def _press(update: Update, context: ContextTypes.DEFAULT_TYPE, build: Builder) -> None:
    """Parse, check the seat, build the next keyboard; answer, then queue it."""
    query, rt = update.callback_query, rt_of(context)
    assert query is not None and query.message is not None
    lang = await rt.user_language(query.from_user, update.effective_chat)
    try:
        data = cb.parse(query.data)
        row, game = await rt.service.load(data.game_id)
        seat = row.seat_of(query.from_user.id)
        if seat is None:
            raise Refused("alert.not_seated")
        markup = build(data, row, game, seat, lang, is_private_chat(query.message.chat.id))
    except Notice as exc:
        await answer(query, exc.text(lang))
        return
    except Refused as exc:
        await alert(query, exc.text(lang))
        return
    except (cb.BadCallback, ValueError, IndexError):
        await alert(query, tr(lang, "alert.bad_button"))
        return
    await answer(query)
    show(context, query, markup)


def _step_keyboard(data: cb.Callback, row: GameRow, game: Game, seat: SeatRow, lang: str,
                   private: bool) -> InlineKeyboardMarkup | None:
    """A picker step, a confirmation or back (``q:``, ``p:``, ``x:``), drawn for the
    version they were pressed at."""
    if data.version != row.version:
        raise Refused("alert.stale")
    if game.current_seat() != seat.seat and not (private and data.kind == "q"):
        raise Refused("alert.not_your_turn")
    if data.kind in ("q", "p") and not offered(game, seat.seat, data):
        raise cb.BadCallback(str(data))
    view = game.view(None if not private else seat.seat)
    mlang = lang if private else prefs_of(row).language
    if data.kind == "q":
        return kb.confirm_keyboard(mlang, row.game_id, view, data.parts[0])
    if data.kind == "p":
        prefix, points = data.parts[0], int(data.parts[1])
        return kb.picker_keyboard(mlang, row.game_id, view, prefix, points)
    if private:  # back to the hand: the auction's calls at the bidder's turn
        return kb.solo_keyboard(mlang, row.game_id, game.view(seat.seat),
                                stable=not is_private_chat(row.chat_id))
    return kb.calls_keyboard(mlang, row.game_id, view)


def _hand_call_keyboard(data: cb.Callback, row: GameRow, game: Game, seat: SeatRow,
                        lang: str, private: bool) -> InlineKeyboardMarkup | None:
    """A private-only call of a group's hand (``h:gid:smz:code``), see the docstring."""
    code = data.parts[0] if data.kind == "h" else ""
    if code != "M" and not code.startswith("o"):
        raise cb.BadCallback(str(data))
    if seat.away:
        raise Refused("alert.away")
    if data.smazzata != game.smazzata_index:
        raise Refused("alert.stale")
    if code != "M" and game.phase.value == "auction" and game.current_seat() != seat.seat:
        raise Notice("alert.at_your_turn")
    if not offered(game, seat.seat, data):
        raise Refused("alert.call_closed")
    view = game.view(seat.seat)
    if code == "M":
        return kb.confirm_keyboard(lang, row.game_id, view, code)
    return kb.picker_keyboard(lang, row.game_id, view, code, view.min_call_points or 0)


def show(context: ContextTypes.DEFAULT_TYPE, query: CallbackQuery,
         markup: InlineKeyboardMarkup | None) -> None:
    """The next keyboard on the pressed message, queued first in the budgets (a turn)."""
    message = query.message
    assert message is not None
    text = message.text_html if isinstance(message, Message) and message.text else ""
    rt_of(context).outbox.edit_markup(message.chat.id, message.message_id, markup, text)


def register(app: Application) -> None:  # type: ignore[type-arg]
    app.add_handler(CallbackQueryHandler(on_keyboard_step, pattern=r"^[qpx]:"))
    app.add_handler(CallbackQueryHandler(on_hand_call, pattern=r"^h:"))
