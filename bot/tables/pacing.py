"""The outbox's pacing, kept across restarts (table ``chat_pace``).

Without it a restarted process cannot know when each chat last got a call, and must
assume the worst (every chat's budget just used): after a SIGKILL the group tables then
waited for a whole pacing window while the game went on (issue 18). So every
:data:`SAVE_SECONDS` the chats that made calls are written (their next slot and, for a
group, the calls of its rolling window: a few numbers each, as unix seconds), and at
start-up read back into the :class:`~bot.outbox.Outbox`, which then paces each chat as
if the process had not stopped: a group whose game moved is redrawn as soon as its limit
allows.

What a SIGKILL can still hide: the calls made after the last save (at most
:data:`SAVE_SECONDS` before the death of a busy process). Each chat takes them as made,
at the earliest slots its pace allowed in that span
(:meth:`~bot.budget.ChatPace.assume_calls_between`). An otherwise idle process killed
within half a second of its first call in a minute may leave that call unknown: one
call, which the margins absorb (a group is paced at 18 of Telegram's ~20 a minute).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time

from bot.outbox import Outbox
from storage import ChatPaceRow, Database, StorageError, repo

log = logging.getLogger(__name__)

#: Seconds between two saves of the pacing (only the chats that made calls meanwhile).
SAVE_SECONDS = 0.5


class PaceKeeper:
    def __init__(self, db: Database, outbox: Outbox) -> None:
        self.db = db
        self.outbox = outbox
        self._task: asyncio.Task[None] | None = None
        #: Changes not written yet (a save failed): written with the next ones.
        self._pending: dict[int, tuple[float, list[float]]] = {}

    def _offset(self) -> float:
        """Unix time minus monotonic time, now."""
        return time.time() - time.monotonic()

    async def restore(self) -> None:
        """Give the outbox the pacing the process before left (before any call)."""
        window = self.outbox.window_seconds
        try:
            rows = await repo.load_chat_pace(self.db, time.time() - window)
        except StorageError as exc:  # the outbox assumes every budget just used
            log.warning("pacing of the last run not read (%s): chats paced as if busy", exc)
            return
        offset = self._offset()
        states: dict[int, tuple[float, list[float]]] = {}
        for row in rows:
            try:
                sent = [float(t) - offset for t in json.loads(row.sent_json)]
            except (TypeError, ValueError):
                sent = []
            states[row.chat_id] = (row.next_at - offset, sent)
        unrecorded = None
        if rows:
            last_save = max(row.saved_at for row in rows) - offset
            unrecorded = (last_save, last_save + SAVE_SECONDS)
        self.outbox.restore_pacing(states, unrecorded)
        log.info("pacing of %d chats kept from the last run", len(states))

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(),
                                                                 name="pace-keeper")

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(SAVE_SECONDS)
            await self.save()

    async def save(self) -> None:
        """Write the pacing of the chats that made calls since the last save."""
        self._pending.update(self.outbox.pace_changes())
        if not self._pending:
            return
        now = time.time()
        offset = self._offset()
        rows = [
            ChatPaceRow(chat_id, next_at + offset,
                        json.dumps([round(t + offset, 3) for t in sent]), now)
            for chat_id, (next_at, sent) in self._pending.items()
        ]
        before = now - self.outbox.window_seconds
        try:  # (at once, like a move: no trip to the database thread per statement)
            await self.db.run_transaction(lambda tx: repo.save_chat_pace(tx, rows, before))
        except StorageError as exc:  # kept for the next save
            if exc.code != "fenced":  # (fenced: this instance's tasks are being cancelled)
                log.warning("pacing not saved (%s): again in %.1f s", exc, SAVE_SECONDS)
            return
        self._pending.clear()

    async def close(self, *, save: bool = True) -> None:
        """Stop saving, after a last save (a graceful stop; not when fenced: ``save``
        False)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if save:
            with contextlib.suppress(Exception):
                await self.save()
