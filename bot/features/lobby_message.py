"""The lobby message of a game, drawn from its stored seats: by the lobby's commands and
buttons, by the settings menu (a change shows in the open lobby at once) and after a
group's migration (the message is sent again in the new chat)."""

from __future__ import annotations

from bot.budget import Priority
from bot.prefs import is_private_chat, seat_count
from bot.render import keyboards as kb
from bot.render import texts
from bot.runtime import Runtime
from bot.tables import ui_of, ui_patch


def show_lobby(rt: Runtime, game_id: int, state: str = "open") -> None:
    """Redraw the lobby message in the background (a handler never waits for it)."""
    rt.tables.background(render_lobby(rt, game_id, state))


async def render_lobby(rt: Runtime, game_id: int, state: str = "open") -> None:
    """Draw the lobby from the stored seats (one redraw of a game at a time)."""
    async with rt.tables.render_lock(game_id):
        row = await rt.service.row(game_id)
        prefs = await rt.chat_prefs(row.chat_id)
        lang = prefs.language
        # the chat's game may change while the lobby is open: its seats follow (the
        # people beyond the new count stay listed, /inizia asks them to leave)
        size = max([seat_count(prefs.options), *(s.seat + 1 for s in row.seats)])
        seats: list[str | None] = [None] * size
        for s in row.seats:
            seats[s.seat] = s.display_name
        ui = ui_of(row)
        alone = is_private_chat(row.chat_id)
        text = texts.lobby_text(lang, prefs, seats, ui.creator, state, alone=alone)
        keyboard = kb.solo_lobby_keyboard if alone else kb.lobby_keyboard
        markup = keyboard(lang, row.game_id) if state == "open" else None
        mid = ui.lobby
        chat_id = rt.outbox.resolve(row.chat_id)
        if mid is not None and (ui.lobby_chat or row.chat_id) != chat_id:
            mid = None  # the group became a supergroup: the old message is read-only
        if mid is None:
            msg = await rt.outbox.send(chat_id, text, markup, thread_id=row.thread_id,
                                       priority=Priority.TURN)
            if msg is not None:
                changes = {"lobby": msg.message_id, "lobby_chat": msg.chat.id}
                await rt.service.save_ui(row.game_id, ui_patch(changes))
        else:
            rt.outbox.edit(row.chat_id, mid, text, markup, priority=Priority.TURN)
