"""Lobby: /nuova, /entra, /esci, /inizia, /annulla, the lobby buttons and deep-link joins."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from telegram import Message, Update, User
from telegram.error import Forbidden, TelegramError
from telegram.ext import Application, CallbackQueryHandler, CommandHandler, ContextTypes

from bot import callbacks as cb
from bot.budget import Priority
from bot.features import notify, seasons
from bot.features.common import alert, answer, private_only_reply, reply
from bot.features.lobby_message import show_lobby, waiting_of
from bot.features.settings import open_menu
from bot.i18n import tr
from bot.prefs import Prefs, new_game_prefs, seat_count
from bot.render import keyboards as kb
from bot.render import texts
from bot.runtime import Runtime, display_name, is_group, may_manage, rt_of, thread_of
from bot.service import Refused
from bot.tables import ui_patch
from game.players import LEVELS
from storage import ActiveGameExists, GameRow, SeatRow, SeatTaken, StatusConflict, repo

log = logging.getLogger(__name__)


def deep_link(context: ContextTypes.DEFAULT_TYPE, game_id: int) -> str:
    return f"https://t.me/{context.bot.username}?start=j{game_id}"


async def _seats_of(rt: Runtime, row: GameRow) -> int:
    """Seats of the lobby: those of the game the chat has chosen."""
    return seat_count((await rt.chat_prefs(row.chat_id)).options)


# --------------------------------------------------------------------------- operations


async def can_write_privately(context: ContextTypes.DEFAULT_TYPE, user_id: int) -> bool:
    """Probe the private chat without sending a message (403 if Start was never pressed)."""
    try:
        await context.bot.send_chat_action(user_id, "typing")
    except Forbidden:
        return False
    except TelegramError:
        log.warning("private probe of %s failed", user_id, exc_info=True)
        return False
    return True


async def seat_user(rt: Runtime, game_id: int, user: User) -> int:
    """Seat a user at a lobby; return the seat number or raise Refused."""
    await repo.upsert_user(
        rt.db, user.id, user.first_name, user.last_name, user.username, user.language_code
    )
    await repo.set_private_ok(rt.db, user.id, True)
    seat = SeatRow.human(0, user.id, display_name(user), user.language_code)
    row = await rt.service.row(game_id)
    try:
        number = await rt.service.take_seat(game_id, seat, await _seats_of(rt, row))
    except SeatTaken:
        raise Refused("alert.already_seated") from None
    except StatusConflict:
        raise Refused("alert.lobby_closed") from None
    if number is None:
        raise Refused("alert.table_full")
    return number


async def join(context: ContextTypes.DEFAULT_TYPE, row: GameRow, user: User) -> bool:
    """Join from the group; False when the user must press Start in private first."""
    rt = rt_of(context)
    if row.status != "lobby":
        raise Refused("alert.lobby_closed")
    if row.seat_of(user.id) is not None:
        raise Refused("alert.already_seated")
    if not await can_write_privately(context, user.id):
        return False
    await seat_user(rt, row.game_id, user)
    show_lobby(rt, row.game_id)
    return True


async def leave(context: ContextTypes.DEFAULT_TYPE, row: GameRow, user_id: int) -> str:
    rt = rt_of(context)
    seat = row.seat_of(user_id)
    if seat is None:
        raise Refused("alert.not_seated")
    if row.status == "lobby":
        await rt.service.free_seat(row.game_id, seat.seat)
        show_lobby(rt, row.game_id)
        return "lobby.left"
    await rt.tables.hand_to_computer(row.game_id, seat.seat, "left")
    return "seat.left_done"


async def add_computer(
    context: ContextTypes.DEFAULT_TYPE, row: GameRow, user_id: int, level: str | None = None,
    *, fill: bool = False,
) -> None:
    """One computer (of ``level``, default the bot's setting), or with ``fill`` one in
    every free seat."""
    rt = rt_of(context)
    if row.status != "lobby":
        raise Refused("alert.lobby_closed")
    if not await may_manage(context, row, row.chat_id, user_id) and row.seat_of(user_id) is None:
        raise Refused("alert.only_players")
    level = level or rt.settings.computer_level
    size = await _seats_of(rt, row)
    for _ in range(size - len(row.seats) if fill else 1):
        count = sum(1 for s in row.seats if not s.is_human) + 1
        seat = SeatRow.computer(0, f"🤖 Computer {count} ({level})", level)
        try:
            number = await rt.service.take_seat(row.game_id, seat, size)
        except StatusConflict:
            raise Refused("alert.lobby_closed") from None
        if number is None:
            raise Refused("alert.table_full")
        row = await rt.service.row(row.game_id)
    show_lobby(rt, row.game_id)


async def start(context: ContextTypes.DEFAULT_TYPE, row: GameRow, user_id: int) -> None:
    rt = rt_of(context)
    if row.status != "lobby":
        raise Refused("alert.lobby_closed")
    if not await may_manage(context, row, row.chat_id, user_id):
        raise Refused("alert.only_manager")
    if waiting_of(row):  # a rivincita: the people of the last match confirm first
        raise Refused("rematch.wait_start")
    prefs = await rt.chat_prefs(row.chat_id)  # fixed for the whole match from here on
    size = seat_count(prefs.options)
    if len(row.seats) < size:
        raise Refused("alert.need_players", size - len(row.seats))
    if len(row.seats) > size:
        raise Refused("alert.too_many_players", len(row.seats) - size)
    try:
        new_row, _ = await rt.service.start(row.game_id, row.seats, prefs)
    except StatusConflict:
        raise Refused("alert.lobby_closed") from None
    show_lobby(rt, new_row.game_id, "started")
    rt.tables.background(rt.tables.after_start(row.game_id))


# --------------------------------------------------------------------------- commands


async def cmd_new(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A lobby in the group; in a private chat, a table for the person and computers.
    Arguments choose the game: ``/nuova briscola 2``, ``/nuova chiamata 4``…"""
    rt = rt_of(context)
    chat, user, message = update.effective_chat, update.effective_user, update.effective_message
    assert chat and user and message
    alone = not is_group(update)
    prefs, stored = await _table_prefs(rt, chat.id, user, alone)
    chosen = new_game_prefs(prefs, context.args or [])
    if chosen is None:  # nothing is written for arguments it does not understand
        reply(context, message, tr(prefs.language, "lobby.new_usage"))
        return
    ui = json.dumps(ui_patch({"creator": display_name(user)}))
    try:
        game_id = await rt.service.open_lobby(
            chat.id, thread_of(message), user.id, chosen.to_json(), ui
        )
    except ActiveGameExists:
        reply(context, message, tr(prefs.language, "lobby.exists"))
        return
    if chosen != prefs or not stored:
        await _choose_game(rt, chat.id, chosen)
    if alone:
        await seat_user(rt, game_id, user)
    else:  # the last season's podium first, if it ended since (issue 48)
        await seasons.open_with_podium(rt, game_id, chat.id)
    show_lobby(rt, game_id)
    if not alone:  # "/avvisami": the subscribers are told (in the background)
        notify.lobby_opened(rt, game_id, chat.title or "")


async def _table_prefs(rt: Runtime, chat_id: int, user: User, alone: bool) -> tuple[Prefs, bool]:
    """The chat's settings, and whether they are stored: a private chat's first table
    starts in the person's language (no turn timer), saved with the game chosen."""
    prefs = await rt.chat_prefs(chat_id)
    if alone and await repo.get_chat_settings(rt.db, chat_id) is None:
        return prefs.model_copy(update={"language": await rt.user_language(user)}), False
    return prefs, True


async def _choose_game(rt: Runtime, chat_id: int, prefs: Prefs) -> None:
    """``/nuova briscola 2``: the game chosen is the chat's from now on (as if set in
    /impostazioni), so the lobby, /inizia and the next /nuova agree."""
    await repo.save_chat_settings(rt.db, chat_id, prefs.language, prefs.to_json())


async def _active(update: Update, context: ContextTypes.DEFAULT_TYPE) -> GameRow | None:
    rt = rt_of(context)
    chat, message = update.effective_chat, update.effective_message
    assert chat and message
    row = await repo.get_active_game(rt.db, chat.id, thread_of(message))
    if row is None:
        reply(context, message, tr(await rt.chat_language(chat.id), "lobby.none"))
    return row


GameCommand = Callable[[ContextTypes.DEFAULT_TYPE, GameRow, User, Message, str], Awaitable[None]]


def game_command(
    body: GameCommand,
) -> Callable[[Update, ContextTypes.DEFAULT_TYPE], Coroutine[Any, Any, None]]:
    """A group command about the chat's (or topic's) active game: the shared prologue
    (group only, a game must exist) and a polite reply to a refusal."""

    async def handler(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        row = await _active(update, context)  # (in a private chat: the table alone)
        if row is None:
            return
        user, message = update.effective_user, update.effective_message
        assert user and message
        lang = await rt_of(context).chat_language(row.chat_id)
        try:
            await body(context, row, user, message, lang)
        except Refused as exc:
            reply(context, message, exc.text(lang))

    handler.__qualname__ = body.__qualname__  # readable in logs and tracebacks
    return handler


@game_command
async def cmd_join(
    context: ContextTypes.DEFAULT_TYPE, row: GameRow, user: User, message: Message, lang: str
) -> None:
    if not await join(context, row, user):
        markup = kb.url_keyboard(tr(lang, "btn.open_private"), deep_link(context, row.game_id))
        reply(context, message, tr(lang, "lobby.press_start"), reply_markup=markup)


@game_command
async def cmd_leave(
    context: ContextTypes.DEFAULT_TYPE, row: GameRow, user: User, message: Message, lang: str
) -> None:
    key = await leave(context, row, user.id)
    if key == "lobby.left":
        reply(context, message, tr(lang, key, name=texts.esc(display_name(user))))


@game_command
async def cmd_begin(
    context: ContextTypes.DEFAULT_TYPE, row: GameRow, user: User, message: Message, lang: str
) -> None:
    await start(context, row, user.id)


@game_command
async def cmd_cancel(
    context: ContextTypes.DEFAULT_TYPE, row: GameRow, user: User, message: Message, lang: str
) -> None:
    if not await may_manage(context, row, row.chat_id, user.id):
        reply(context, message, tr(lang, "alert.only_manager"))
        return
    reply(context, message,
        tr(lang, "cancel.confirm"), reply_markup=kb.cancel_keyboard(lang, row.game_id)
    )


# --------------------------------------------------------------------------- buttons


async def on_lobby_button(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    query, rt = update.callback_query, rt_of(context)
    assert query is not None
    user = query.from_user
    lang = await rt.user_language(user, update.effective_chat)
    try:
        data = cb.parse(query.data)
        row = await rt.service.row(data.game_id)
        op = data.parts[0]
        if op == "join":
            if not await join(context, row, user):
                await answer(query, url=deep_link(context, row.game_id))
                return
        elif op == "leave":
            await leave(context, row, user.id)
        elif op == "cpu":
            await add_computer(context, row, user.id)
        elif op.startswith("fill-") and op[5:] in LEVELS:
            await add_computer(context, row, user.id, op[5:], fill=True)
        elif op == "go":
            await start(context, row, user.id)
        elif op == "set":
            await open_menu(context, row.chat_id, row.thread_id, user.id, row)
        else:
            raise cb.BadCallback(query.data)
        await answer(query)
    except Refused as exc:
        await alert(query, exc.text(lang))
    except cb.BadCallback:
        await alert(query, tr(lang, "alert.bad_button"))


async def on_cancel_button(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    query, rt = update.callback_query, rt_of(context)
    assert query is not None and query.message is not None
    lang = await rt.user_language(query.from_user, update.effective_chat)
    try:
        data = cb.parse(query.data)
        row = await rt.service.row(data.game_id)
        if not await may_manage(context, row, row.chat_id, query.from_user.id):
            raise Refused("alert.only_manager")
        await answer(query)
        glang = await rt.chat_language(row.chat_id)
        chat_id, mid = query.message.chat.id, query.message.message_id
        if data.parts[0] != "y":
            rt.outbox.edit(chat_id, mid, tr(glang, "cancel.kept"), priority=Priority.TURN)
            return
        await cancel_game(rt, row)
        rt.outbox.edit(chat_id, mid, tr(glang, "cancel.done"), priority=Priority.TURN)
    except Refused as exc:
        await alert(query, exc.text(lang))
    except cb.BadCallback:
        await alert(query, tr(lang, "alert.bad_button"))


async def cancel_game(rt: Runtime, row: GameRow) -> None:
    if not row.is_active or await rt.service.cancel(row.game_id, row.status) is None:
        raise Refused("alert.not_playing")
    rt.tables.cancel_timers(row.game_id)
    if row.status == "lobby":
        show_lobby(rt, row.game_id, "cancelled")
    else:
        rt.tables.show_cancelled(row)


# --------------------------------------------------------------------------- private start


async def cmd_start(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    rt, user, message = rt_of(context), update.effective_user, update.effective_message
    assert user and message
    if is_group(update):
        await private_only_reply(update, context)
        return
    lang = await rt.user_language(user)
    await repo.upsert_user(
        rt.db, user.id, user.first_name, user.last_name, user.username, user.language_code
    )
    await repo.set_private_ok(rt.db, user.id, True)
    payload = context.args[0] if context.args else ""
    join_link = re.fullmatch(r"j([0-9]{1,18})", payload)  # deep link t.me/<bot>?start=j<gid>
    if join_link:
        row = await repo.get_game(rt.db, int(join_link.group(1)))
        if row is None or row.status != "lobby":
            reply(context, message, tr(lang, "alert.lobby_closed"))
            return
        try:
            await seat_user(rt, row.game_id, user)
        except Refused as exc:
            reply(context, message, exc.text(lang))
            return
        reply(context, message, tr(lang, "start.seated"))
        show_lobby(rt, row.game_id)
        return
    reply(context, message, tr(lang, "start.hello"))


def register(app: Application) -> None:  # type: ignore[type-arg]
    app.add_handler(CommandHandler(["nuova", "new"], cmd_new))
    app.add_handler(CommandHandler(["entra", "join"], cmd_join))
    app.add_handler(CommandHandler(["esci", "leave"], cmd_leave))
    app.add_handler(CommandHandler(["inizia", "begin"], cmd_begin))
    app.add_handler(CommandHandler(["annulla", "cancel"], cmd_cancel))
    app.add_handler(CommandHandler("start", cmd_start))
    app.add_handler(CallbackQueryHandler(on_lobby_button, pattern=r"^l:"))
    app.add_handler(CallbackQueryHandler(on_cancel_button, pattern=r"^k:"))
