"""The lobby message of a game, drawn from its stored seats: by the lobby's commands and
buttons, by the settings menu (a change shows in the open lobby at once) and after a
group's migration (the message is sent again in the new chat)."""

from __future__ import annotations

import json
from typing import Any

from bot import callbacks as cb
from bot.budget import Priority
from bot.i18n import tr
from bot.prefs import is_private_chat, seat_count
from bot.render import keyboards as kb
from bot.render import texts
from bot.runtime import Runtime
from bot.tables import ui_of, ui_patch
from storage import GameRow

#: Keys of a lobby's UI JSON kept by the features of issue 48: the people of the last
#: match still to confirm their seat in a rivincita (:mod:`bot.features.rematch`), and
#: the last season's podium the lobby starts with (:mod:`bot.features.seasons`).
WAIT, PODIUM = "wait", "podium"


def _extra(row: GameRow, key: str) -> Any:
    try:
        data = json.loads(row.ui_json or "{}")
    except ValueError:
        return None
    return data.get(key) if isinstance(data, dict) else None


def waiting_of(row: GameRow) -> list[int]:
    """The people seated in a rivincita's lobby who have not confirmed yet."""
    value = _extra(row, WAIT)
    if not isinstance(value, list):
        return []
    return [u for u in value if isinstance(u, int) and row.seat_of(u) is not None]


def podium_of(row: GameRow) -> str | None:
    """The last season's podium shown at the top of this lobby, if any (HTML)."""
    value = _extra(row, PODIUM)
    return value if isinstance(value, str) and value else None


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
        waiting = waiting_of(row) if state == "open" else []
        for s in row.seats:
            seats[s.seat] = ("⏳ " if s.user_id in waiting else "") + s.display_name
        ui = ui_of(row)
        alone = is_private_chat(row.chat_id)
        text = texts.lobby_text(lang, prefs, seats, ui.creator, state, alone=alone)
        podium = podium_of(row)
        if podium is not None:
            text = texts.clip(f"{podium}\n\n{text}")
        if waiting:
            text = texts.clip(f"{text}\n{tr(lang, 'rematch.waiting_note')}")
        keyboard = kb.solo_lobby_keyboard if alone else kb.lobby_keyboard
        markup = keyboard(lang, row.game_id) if state == "open" else None
        if waiting and markup is not None:
            confirm = kb.button(tr(lang, "btn.rematch_confirm"), cb.rematch(row.game_id, "ok"))
            markup = kb.markup([[confirm], *markup.inline_keyboard])
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
