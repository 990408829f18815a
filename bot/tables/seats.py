"""Seats changing hands while a table plays, and chats going away.

"Sono tornato", a player leaving or blocking the bot (a computer takes the seat), a
table cancelled, the bot removed from a group. Every write goes through
:class:`~bot.service.GameService`; the redraw and the computer turns that follow are the
driver's, called back (``refresh``, ``stop_driver``), so that the imports run one way
(driver -> seats).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from telegram.ext import Application

from bot.i18n import tr
from bot.outbox import Outbox
from bot.prefs import is_private_chat
from bot.render import texts
from bot.service import GameService
from bot.tables.clock import TurnClock
from bot.tables.outages import Background, announce
from bot.tables.render import Renderer
from bot.tables.state import prefs_of, ui_of
from storage import GameRow, repo

log = logging.getLogger(__name__)


class Seats:
    def __init__(
        self, app: Application[Any, Any, Any, Any, Any, Any], service: GameService,
        outbox: Outbox, clock: TurnClock, renderer: Renderer, *,
        computer_level: str, background: Background,
        refresh: Callable[[int], Awaitable[None]], stop_driver: Callable[[int], None],
    ) -> None:
        self.app = app
        self.service = service
        self.outbox = outbox
        self.clock = clock
        self.renderer = renderer
        self.computer_level = computer_level
        self.background = background
        #: Redraw a game and let computers move (the driver's).
        self.refresh = refresh
        #: Stop a game's driver (computer turns, pending redraws).
        self.stop_driver = stop_driver

    async def im_back(self, game_id: int, user_id: int) -> None:
        """"Sono tornato": the seat is the player's again (raises
        :class:`~bot.service.Refused`); the announcement and the redraw follow in the
        background."""
        row, seat = await self.service.seat_back(game_id, user_id)
        text = tr(prefs_of(row).language, "afk.back", name=texts.esc(seat.display_name))
        self.background(self._changed_seat(row, text))

    async def _changed_seat(self, row: GameRow, text: str) -> None:
        await announce(self.outbox, row, text)
        await self.refresh(row.game_id)

    async def hand_to_computer(self, game_id: int, seat_no: int, reason: str) -> None:
        """A player left (/esci) or blocked the bot: a computer plays the seat from now on."""
        done = await self.service.hand_over(game_id, seat_no, self.computer_level)
        if done is None:
            return
        row, seat = done
        lang = prefs_of(row).language
        text = tr(lang, f"seat.{reason}", name=texts.esc(seat.display_name))
        self.background(self._changed_seat(row, text))

    async def private_forbidden(self, user_id: int) -> None:
        """The user blocked the bot: remember it; computers take their running seats; their
        tables alone in that chat end (nobody could see them)."""
        await repo.set_private_ok(self.service.db, user_id, False)
        rows = await repo.games_of_user(self.service.db, user_id)
        if any(row.chat_id == user_id for row in rows):
            self.background(self.chat_gone(user_id))
        for row in rows:
            seat = row.seat_of(user_id)
            if row.status == "playing" and seat is not None and row.chat_id != user_id:
                self.app.create_task(self.hand_to_computer(row.game_id, seat.seat, "blocked"))

    def show_cancelled(self, row: GameRow) -> None:
        """/annulla: the table and every hand say so, without buttons."""
        self.clock.game_over(row.game_id)
        self.renderer.cancelled(row, ui_of(row))

    async def chat_gone(self, chat_id: int) -> None:
        """The bot was removed from a group: its lobby / running games end as cancelled
        (the data stays: finished smazzate keep their scores); timers, computers and
        pending edits of that chat stop."""
        self.outbox.drop_chat(chat_id)
        for row in await repo.list_unfinished_games(self.service.db):
            if row.chat_id != chat_id:
                continue
            fresh = await self.service.cancel(row.game_id)
            if fresh is None:
                continue
            log.warning("bot removed from chat %s: game %s cancelled", chat_id, row.game_id)
            self.clock.cancel(row.game_id)
            self.stop_driver(row.game_id)
            if fresh.status == "playing":
                self.renderer.cancelled(fresh, ui_of(fresh), table=False)
        self.outbox.drop_chat(chat_id)

    async def topic_closed(self, chat_id: int, thread_id: int) -> None:
        """A forum topic was closed (Telegram refuses messages there): its lobby or
        running game ends as cancelled, once, said in the log (the data stays; the
        players' private hands say so); timers and computers stop. Nothing is tried
        again in that topic."""
        for row in await repo.list_unfinished_games(self.service.db):
            if row.chat_id != chat_id or row.thread_id != thread_id:
                continue
            fresh = await self.service.cancel(row.game_id)
            if fresh is None:
                continue
            log.warning("topic %s of chat %s is closed: game %s cancelled", thread_id,
                        chat_id, row.game_id)
            self.clock.cancel(row.game_id)
            self.stop_driver(row.game_id)
            if fresh.status == "playing":
                self.renderer.cancelled(fresh, ui_of(fresh), table=False)

    async def forbidden(self, chat_id: int, reason: str) -> None:
        """A 403 from Telegram: a user blocked the bot, or the bot left a group."""
        if is_private_chat(chat_id):
            await self.private_forbidden(chat_id)
        elif "kicked" in reason.lower() or "not a member" in reason.lower():
            self.background(self.chat_gone(chat_id))
