"""Who is looking at a table in the Mini App right now (issue 32).

A player is *live* at a table while a page of theirs on it holds its live stream open
(``GET /api/events``): the page closes the stream when Telegram says it is inactive
(``deactivated``, Bot API 8.0) or, where those events are missing, when it is hidden, and
opens it again when it is back. Nothing else marks presence.

One small module below both adapters: the Mini App's server (:mod:`bot.webapp.server`)
writes it, the chat's renderer (:mod:`bot.tables.render`) reads it; it imports neither.
For a live player the chat sends nothing per move (their hand, their turn's buttons):
the Mini App shows it. When their last page on a table closes, the listeners are told
(the driver brings the chat hand up to date at once, and the chat works as before).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable

log = logging.getLogger(__name__)

#: Told when a player's presence at a table changes: (game, user, live now).
Listener = Callable[[int, int, bool], None]


class Presence:
    def __init__(self) -> None:
        #: (game, user) -> live streams open.
        self._open: Counter[tuple[int, int]] = Counter()
        self.listeners: list[Listener] = []

    def opened(self, game_id: int, user_id: int) -> None:
        """A page of ``user_id`` on ``game_id`` opened its live stream."""
        key = (game_id, user_id)
        self._open[key] += 1
        if self._open[key] == 1:
            self._tell(game_id, user_id, True)

    def closed(self, game_id: int, user_id: int) -> None:
        """One of their live streams on that table ended (closed, dropped, inactive)."""
        key = (game_id, user_id)
        if self._open[key] <= 0:
            return
        self._open[key] -= 1
        if self._open[key] == 0:
            del self._open[key]
            self._tell(game_id, user_id, False)

    def live(self, game_id: int, user_id: int | None) -> bool:
        return user_id is not None and self._open.get((game_id, user_id), 0) > 0

    def all_live(self, game_id: int, user_ids: Iterable[int | None]) -> bool:
        """Whether every one of ``user_ids`` (at least one) is live at the table."""
        users = list(user_ids)
        return bool(users) and all(self.live(game_id, u) for u in users)

    def _tell(self, game_id: int, user_id: int, live: bool) -> None:
        for listener in list(self.listeners):
            try:
                listener(game_id, user_id, live)
            except Exception:  # one listener's bug never stops a stream
                log.exception("presence listener failed")
