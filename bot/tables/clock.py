"""The turn clock: the reminder and the timeout of the human in turn (named jobs).

A turn's clock starts when its move is stored, but under Telegram's limits the buttons
may reach the player seconds later: a timer (or reminder) that fires before they are
delivered is held, and a clock that has run for more than :data:`CLOCK_SLACK_SECONDS` by
then starts again. Players are timed from when they can play. When a turn really times
out, the driver is called back (``on_timeout``) to move for the player.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from telegram.ext import Application, ContextTypes, Job

from bot.budget import Priority
from bot.i18n import trn
from bot.outbox import Outbox
from bot.service import GameService
from bot.tables.layout import ChatLayout
from bot.tables.state import prefs_of, seat_language
from game import Game
from storage import GameRow, StorageUnavailable

log = logging.getLogger(__name__)

#: A turn's clock restarts when its buttons reach the screen more than this late (the
#: redraw waited for Telegram's limits): players are timed from when they can play.
CLOCK_SLACK_SECONDS = 2.0

TimeoutHandler = Callable[[int, int], Awaitable[None]]


class TurnClock:
    def __init__(self, app: Application[Any, Any, Any, Any, Any, Any], service: GameService,
                 outbox: Outbox, layout: ChatLayout, on_timeout: TimeoutHandler) -> None:
        self.app = app
        self.service = service
        self.outbox = outbox
        self.layout = layout
        self.on_timeout = on_timeout
        #: game -> (version, the chat with the buttons of the human in turn, when the
        #: turn's clock started) until delivered; game -> the last version whose buttons
        #: were delivered; (game, version) whose timer or reminder fired before that.
        self._pending: dict[int, tuple[int, int, float]] = {}
        self._watchers: dict[int, asyncio.Task[None]] = {}
        self._shown: dict[int, int] = {}
        self._held: set[tuple[int, int]] = set()

    # ------------------------------------------------------------------ timers

    def _jobs(self, name: str) -> tuple[Job[Any], ...]:
        jq = self.app.job_queue
        return jq.get_jobs_by_name(name) if jq is not None else ()

    def cancel(self, game_id: int) -> None:
        for name in (f"turn:{game_id}", f"remind:{game_id}"):
            for job in self._jobs(name):
                job.schedule_removal()

    def arm(self, row: GameRow, game: Game) -> None:
        """Schedule the AFK reminder and timeout of the human in turn (named jobs)."""
        self.cancel(row.game_id)
        jq = self.app.job_queue
        deadline = row.turn_deadline
        if jq is None or deadline is None or game.is_over():
            return
        timeout = prefs_of(row).turn_timeout  # the match's timeout, also after a restart
        left = max(0.5, deadline - time.time())
        data = {"game_id": row.game_id, "version": row.version}
        if left > timeout / 2:
            jq.run_once(
                self._remind_job, left - timeout / 2, data=data, name=f"remind:{row.game_id}"
            )
        jq.run_once(self._timeout_job, left, data=data, name=f"turn:{row.game_id}")

    def retry_timeout(self, game_id: int, version: int, delay: float) -> None:
        jq = self.app.job_queue
        if jq is not None:
            jq.run_once(self._timeout_job, delay, data={"game_id": game_id, "version": version},
                        name=f"turn:{game_id}")

    async def _remind_job(self, context: ContextTypes.DEFAULT_TYPE) -> None:
        data = _job_data(context)
        if self.hold_if_undelivered(data["game_id"], data["version"]):
            return  # nothing to remind of yet: the clock (and this reminder) restart then
        row = await self.service.fetch(data["game_id"])
        if row is None or row.status != "playing" or row.version != data["version"]:
            return
        game = self.service.game_of(row)
        seat_no = game.current_seat()
        seat = None if seat_no is None else row.seat(seat_no)
        chat = None if seat is None else self.layout.hand_chat(seat)
        if seat is None or chat is None:
            return
        lang = seat_language(seat, prefs_of(row).language)
        left = int(max(0, (row.turn_deadline or time.time()) - time.time()))
        await self.outbox.send(chat, trn(lang, "afk.reminder", left), priority=Priority.TURN)

    async def _timeout_job(self, context: ContextTypes.DEFAULT_TYPE) -> None:
        data = _job_data(context)
        await self.on_timeout(data["game_id"], data["version"])

    # ------------------------------------------------------------------ delivery of turns

    def hold_if_undelivered(self, game_id: int, version: int) -> bool:
        """True (and the timer is held until delivery) if ``version``'s buttons may not be
        on screen yet."""
        if self._shown.get(game_id, -1) < version:
            self._held.add((game_id, version))
            return True
        return False

    def watch(self, row: GameRow, game: Game) -> None:
        """Note when the buttons of the human in turn at ``row.version`` are delivered."""
        seat_no = game.current_seat()
        seat = None if seat_no is None else row.seat(seat_no)
        if row.turn_deadline is None or seat is None:
            return
        chat = self.layout.buttons_chat(row, seat)
        if chat is None:
            return
        chat = self.outbox.resolve(chat)
        started = row.turn_deadline - prefs_of(row).turn_timeout
        self._pending[row.game_id] = (row.version, chat, started)
        task = self._watchers.get(row.game_id)
        if task is None or task.done():
            self._watchers[row.game_id] = asyncio.create_task(self._shown_loop(row.game_id))

    async def _shown_loop(self, game_id: int) -> None:
        while (pending := self._pending.get(game_id)) is not None:
            version, chat, started = pending
            await self.outbox.settled({chat})
            if self._pending.get(game_id) != pending:
                continue  # a newer turn meanwhile
            del self._pending[game_id]
            self.note_shown(game_id, version)
            held = (game_id, version) in self._held
            self._held -= {h for h in self._held if h[0] == game_id and h[1] <= version}
            if held or time.time() - started > CLOCK_SLACK_SECONDS:
                try:
                    row = await self.service.restart_clock(
                        game_id, version, CLOCK_SLACK_SECONDS, always=held
                    )
                except StorageUnavailable as exc:  # the stored deadline stands
                    log.warning("game %s: turn clock not restarted (%s)", game_id, exc.code)
                    continue
                if row is not None:
                    self.arm(row, self.service.game_of(row))

    def note_shown(self, game_id: int, version: object) -> None:
        if isinstance(version, int) and version > self._shown.get(game_id, -1):
            self._shown[game_id] = version

    def game_over(self, game_id: int) -> None:
        self._shown.pop(game_id, None)

    async def close(self) -> None:
        tasks = [t for t in self._watchers.values() if not t.done()]
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)


def _job_data(context: ContextTypes.DEFAULT_TYPE) -> dict[str, int]:
    """The ``{"game_id", "version"}`` a timer job was scheduled with."""
    data = context.job.data if context.job is not None else None
    if not isinstance(data, dict):
        raise TypeError(f"unexpected job data {data!r}")
    return data
