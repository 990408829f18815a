"""Updates are handled concurrently across chats, in order within a chat.

PTB handles one update at a time by default: a handler waiting for a chat's message
budget (``Outbox.send`` / ``edit_now``) would block every other group. With this processor
updates of different chats run concurrently (up to ``max_concurrent_updates``; a
handler waiting for a chat's budget holds a slot, so there are many), while the updates of
one chat (or of one user, for updates without a chat) still run one at a time and in
order, so lobby / settings handlers, which read and write a chat's state, never race with
each other. The buttons of a running game are ordered per game instead: they are pressed
in the group and in each player's private chat, and the service serialises them anyway
(``GameService.lock``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Hashable
from typing import Any

from telegram import Update
from telegram.ext import BaseUpdateProcessor

#: Buttons of a running game (see :mod:`bot.callbacks`): ordered per game, not per chat.
GAME_BUTTONS = frozenset({"a", "q", "p", "x", "b"})


def update_key(update: object) -> Hashable:
    """What an update is ordered by: the game of a game button (its presses come from the
    group and from five private chats, and must not wait behind a lobby or settings
    update of the same chat that is waiting for the chat's message budget); otherwise the
    chat (the user for updates without a chat); 0 if none."""
    if not isinstance(update, Update):
        return 0
    query = update.callback_query
    if query is not None and query.data:
        kind, _, rest = query.data.partition(":")
        if kind in GAME_BUTTONS:
            return ("game", rest.partition(":")[0])
    if update.effective_chat is not None:
        return update.effective_chat.id
    if update.effective_user is not None:
        return update.effective_user.id
    return 0


def is_game_press(update: object) -> bool:
    """Whether ``update`` is the press of a running game's button (its move, or its
    refusal, is stored with the update's handled mark: :mod:`bot.inbox`)."""
    key = update_key(update)
    return isinstance(key, tuple) and key[0] == "game"


class PerChatUpdateProcessor(BaseUpdateProcessor):
    def __init__(self, max_concurrent_updates: int = 256) -> None:
        super().__init__(max_concurrent_updates)
        self._locks: dict[Hashable, asyncio.Lock] = {}
        self._users: dict[Hashable, int] = {}  # key -> updates holding or waiting for its lock

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
