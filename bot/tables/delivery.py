"""Delivery confirmation: the version whose messages all reached Telegram is stored
(``UiState.drawn``), so that a restart redraws exactly the games it must."""

from __future__ import annotations

import asyncio
import logging

from bot.outbox import Outbox
from bot.service import GameService
from bot.tables.state import ui_patch
from storage import StorageUnavailable

log = logging.getLogger(__name__)


class Delivery:
    def __init__(self, service: GameService, outbox: Outbox) -> None:
        self.service = service
        self.outbox = outbox
        #: Versions drawn but not yet delivered -> (version, chats).
        self._unconfirmed: dict[int, tuple[int, set[int]]] = {}
        self._confirmers: dict[int, asyncio.Task[None]] = {}

    def queued(self, game_id: int, version: int, chats: set[int]) -> None:
        """The messages of ``version`` are queued: record it once the outbox sent them."""
        self._unconfirmed[game_id] = (version, chats)
        task = self._confirmers.get(game_id)
        if task is None or task.done():
            self._confirmers[game_id] = asyncio.create_task(self._confirm(game_id))

    async def _confirm(self, game_id: int) -> None:
        while (pending := self._unconfirmed.get(game_id)) is not None:
            version, chats = pending
            await self.outbox.settled(chats)
            if self._unconfirmed.get(game_id) != pending:
                continue  # redrawn meanwhile: wait for the newer content
            del self._unconfirmed[game_id]
            try:
                await self.service.save_ui(game_id, ui_patch({"drawn": version}))
            except StorageUnavailable as exc:  # a restart redraws it: harmless
                if exc.code != "fenced":  # (fenced: standing by, the active one redraws)
                    log.warning("could not record the drawn version of %s: %s", game_id, exc)

    def pending(self) -> int:
        """Games whose delivered version is still to be recorded."""
        return sum(not task.done() for task in self._confirmers.values())

    async def flush(self, timeout: float) -> None:
        """At a graceful stop, after the outbox drained: record what was delivered."""
        tasks = [t for t in self._confirmers.values() if not t.done()]
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
