"""Storage outages as the groups see them: one "cannot save" notice per group and outage.

A move that cannot be stored is refused (the press is answered so, nothing changed);
the group is told once, again only after :data:`STORAGE_NOTICE_SECONDS`, and the next
saved move of the chat ends the outage.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any

from bot.i18n import tr
from bot.outbox import Outbox
from bot.service import GameService
from bot.tables.state import prefs_of
from storage import GameRow, StorageUnavailable

log = logging.getLogger(__name__)

#: Seconds between two "cannot save" notices in the same group (one per outage).
STORAGE_NOTICE_SECONDS = 300.0

#: Runs a coroutine on its own (``Tables.background``).
Background = Callable[[Coroutine[Any, Any, None]], "asyncio.Task[None]"]


async def announce(outbox: Outbox, row: GameRow, text: str) -> None:
    """A message to the game's chat (in its thread), at the tables' rank."""
    await outbox.send(row.chat_id, text, thread_id=row.thread_id)


class StorageNotices:
    def __init__(self, service: GameService, outbox: Outbox, background: Background) -> None:
        self.service = service
        self.outbox = outbox
        self.background = background
        #: Groups told that moves cannot be saved -> when (cleared by the next saved move).
        self._told: dict[int, float] = {}

    def down(self, row: GameRow, exc: StorageUnavailable) -> None:
        """Moves of this game cannot be saved: tell its group once per outage."""
        now = time.monotonic()
        told = self._told.get(row.chat_id)
        if told is not None and now - told < STORAGE_NOTICE_SECONDS:
            return
        self._told[row.chat_id] = now
        log.warning("chat %s: moves cannot be saved (%s)", row.chat_id, exc.code)
        text = tr(prefs_of(row).language, "storage.group_paused")
        self.background(announce(self.outbox, row, text))

    async def down_in_game(self, game_id: int, exc: StorageUnavailable) -> None:
        """As :meth:`down`, for a game known by id (if it can be read at all)."""
        try:
            row = await self.service.fetch(game_id)
        except StorageUnavailable:
            return
        if row is not None:
            self.down(row, exc)

    def up(self, chat_id: int) -> None:
        """A move of this chat was saved: the outage (if any) is over."""
        self._told.pop(chat_id, None)
