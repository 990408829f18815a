"""Updates are handled concurrently across chats, in order within a chat.

PTB handles one update at a time by default: a handler waiting for a chat's message
budget (``Outbox.send`` / ``edit_now``) would block every other group. With this processor
updates of different chats run concurrently (up to ``max_concurrent_updates``), while the
updates of one chat (or of one user, for updates without a chat) still run one at a time
and in order, so lobby / settings handlers, which read and write a chat's state, never
race with each other. Game actions are also serialised per game (``GameService.lock``):
a game's buttons are pressed in the group and in each player's private chat.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

from telegram import Update
from telegram.ext import BaseUpdateProcessor


def update_key(update: object) -> int:
    """The chat an update belongs to (its user for updates without a chat); 0 if none."""
    if not isinstance(update, Update):
        return 0
    if update.effective_chat is not None:
        return update.effective_chat.id
    if update.effective_user is not None:
        return update.effective_user.id
    return 0


class PerChatUpdateProcessor(BaseUpdateProcessor):
    def __init__(self, max_concurrent_updates: int = 64) -> None:
        super().__init__(max_concurrent_updates)
        self._locks: dict[int, asyncio.Lock] = {}
        self._users: dict[int, int] = {}  # key -> updates holding or waiting for its lock

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        key = update_key(update)
        lock = self._locks.setdefault(key, asyncio.Lock())
        self._users[key] = self._users.get(key, 0) + 1
        try:
            async with lock:
                await coroutine
        finally:
            self._users[key] -= 1
            if not self._users[key]:  # nobody else needs it: keep the dict small
                del self._users[key]
                del self._locks[key]

    async def initialize(self) -> None:
        pass

    async def shutdown(self) -> None:
        pass
