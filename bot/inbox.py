"""The inbox: an update is stored before Telegram learns that it arrived (issue 35).

PTB's :class:`~telegram.ext.Updater` already awaits ``update_queue.put(update)`` for each
update of a batch before it sends the offset that confirms the batch (its next
``getUpdates``), and its webhook server awaits it before answering 200. So the
Application's update queue is an :class:`InboxQueue` whose ``put`` *stores* the update
(:func:`storage.inbox.store_updates`, urgent, batched with the other writes waiting for
the database: :meth:`storage.Database.batched`) before it returns: an update Telegram considers
delivered is in the database. PTB's handlers, its Updater, its webhook server and its
conventions stay as they are; only the queue is ours.

* **Handled in order**: a stored update is handed to PTB's
  ``Application.process_update`` through the update processor
  (:class:`bot.updates.PerChatUpdateProcessor`: in order per chat and per game,
  concurrently across them), in a task of its own that knows which update it handles
  (:func:`storage.inbox.handling`).
* **Marked handled with the move**: the service's move transaction marks the update it
  carries (``GameService.apply``); any other update is marked after its handlers ran
  (a refusal, a command, a lobby button). Never before: a process that dies in between
  leaves the update *pending*.
* **A new active process** (restart, takeover) first hands out what is stored and not
  handled (:meth:`Inbox.resume`), then what it polls; an update Telegram delivers again
  (stored by the process before, never confirmed) is stored once and handled once.
* **Bounded**: handled rows are deleted after :data:`KEEP_HANDLED_SECONDS`.
* **The database refuses writes** (disk full, read-only, down): the update is handled
  without being stored, as before the inbox: the person is told that nothing could be
  saved (the move cannot be stored either) rather than left without an answer. Fenced:
  nothing is stored, nothing confirmed, nothing handled: the process stops.
* **Poisoned updates are set aside** (issue 46): an update whose handler raised is handled
  again, at most :data:`ATTEMPTS` - 1 times (after :data:`RETRY_DELAYS`), only while
  nothing of it was stored or shown (its mark not written: :func:`storage.inbox.failed`);
  then it is *poisoned*: marked handled with the error's class, its payload replaced by a
  summary without its text (:func:`summary`), logged once at ERROR, and the person told
  (``on_poisoned``: a short apology). An update that killed the process is seen at the
  next starts: each start takes the stored updates in hand one at a time, counting it
  (:func:`storage.inbox.claim`; storing it counted once), so one still pending after
  :data:`CRASH_CLAIMS` claims was being handled at that many deaths in a row and is set
  aside the same way instead of being handled again; the updates around it are not
  counted with it. ``python -m bot.health --poisoned`` lists them.
* **Updates that carry no move** (commands, lobby and settings buttons, refusals) are
  marked once their handlers ran: a process killed in between handles them again after
  the restart (a reply may come twice); a move is never applied twice.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from telegram import Update
from telegram.ext import Application

from storage import Database, StorageUnavailable, inbox, urgent

from .eager import start_now
from .updates import is_game_press

log = logging.getLogger(__name__)

#: Handled updates are kept this long (Telegram keeps an update 24 hours at most: one
#: stored and handled but never confirmed is delivered again at the latest then).
KEEP_HANDLED_SECONDS = 26 * 3600
#: Handled rows are pruned at most this often.
PRUNE_EVERY_SECONDS = 600.0
#: Poisoned updates are kept this long (listed by ``python -m bot.health --poisoned``).
KEEP_POISONED_SECONDS = 7 * 24 * 3600
#: How many times an update's handler may raise before the update is set aside ...
ATTEMPTS = 3
#: ... and the pauses before its second and third attempts (a passing fault may clear).
RETRY_DELAYS = (0.1, 0.5)
#: An update still pending when a start finds it claimed this many times (stored by a
#: process, then taken in hand again by a start: each died before it was handled) is set
#: aside instead of being handled again: a process killed twice while handling it.
CRASH_CLAIMS = 2
#: The error class recorded for an update set aside for that.
PROCESS_DIED = "ProcessDied"
#: At a start, how long each stored update taken in hand may take before the next one is
#: (one at a time: an update that kills the process is then the only one counted).
RESUME_WAIT_SECONDS = 1.0

#: ``on_poisoned(update, error)``: tell the person (and the admin) about an update set
#: aside; ``update`` None if its payload cannot be read, ``error`` None if it killed the
#: process.
OnPoisoned = Callable[[Update | None, BaseException | None], Awaitable[None]]


def summary(payload: str) -> str:
    """What is kept of a poisoned update instead of its payload: its kind, chat and
    user, a button's kind (``a`` for a game's action…) or a command's name, and a
    SHA-256 digest of the payload; never its text, nor a button's data (a card)."""
    digest = hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    try:
        data = json.loads(payload)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        return json.dumps({"kind": "unreadable", "sha256": digest})
    kind = next((k for k in data if k != "update_id"), "none")

    def part(of: dict[str, Any], key: str) -> dict[str, Any]:
        value = of.get(key)
        return value if isinstance(value, dict) else {}

    body = part(data, kind)
    message = part(body, "message") or body
    chat, user = part(message, "chat"), part(body, "from")
    out: dict[str, Any] = {"kind": kind, "chat": chat.get("id"), "user": user.get("id")}
    if kind == "callback_query":
        out["button"] = str(body.get("data") or "").partition(":")[0][:8]
    text = body.get("text")
    if isinstance(text, str) and text.startswith("/"):
        out["command"] = text.split(maxsplit=1)[0][:40]
    out["sha256"] = digest
    return json.dumps(out, separators=(",", ":"))


class InboxQueue(asyncio.Queue):  # type: ignore[type-arg]
    """The Application's ``update_queue``: ``put(update)`` stores the update and hands it
    to the :class:`Inbox` (see the module docstring); PTB's own objects (its stop signal)
    go into the queue as usual."""

    def __init__(self) -> None:
        super().__init__()
        self.inbox: Inbox | None = None

    async def put(self, item: Any) -> None:
        if isinstance(item, Update) and self.inbox is not None:
            await self.inbox.receive(item)
        else:
            await super().put(item)


class Inbox:
    def __init__(self, app: Application, db: Database, *,  # type: ignore[type-arg]
                 webhook: bool = False) -> None:
        self.app = app
        self.db = db
        self.webhook = webhook
        self._tasks: set[asyncio.Task[None]] = set()
        #: Set once the updates stored before this process started are handed out: the
        #: new ones wait for it (order).
        self._resumed = asyncio.Event()
        self._resumer: asyncio.Task[None] | None = None
        self._last_prune = 0.0
        self._closed = False
        #: Tells the person about an update set aside (``bot.app``).
        self.on_poisoned: OnPoisoned | None = None
        #: Counters (the chaos tests read the log; these are for the report).
        self.stats = {"stored": 0, "again": 0, "resumed": 0, "retried": 0, "poisoned": 0}

    # ------------------------------------------------------------------ in

    async def receive(self, update: Update) -> None:
        """Store the update (before Telegram is told it arrived), then hand it out."""
        # (ASCII: forged callback data may carry lone surrogates, which JSON escapes)
        payload = json.dumps(update.to_dict(), separators=(",", ":"))
        try:
            async with urgent():  # (with the other writes waiting: one commit, storage.db)
                new = await self.db.batched(
                    lambda tx: inbox.store_updates(tx, [(update.update_id, payload)])
                )
        except StorageUnavailable as exc:
            if exc.code == "fenced" or self._closed:
                # never confirmed: the next active instance gets it (polling: the Updater
                # is stopping and cancels this wait; webhook: a 500, Telegram retries)
                if self.webhook:
                    raise
                await asyncio.Event().wait()
            # the database refuses writes (disk full, read-only, down): handled anyway,
            # so that the person is told nothing could be saved (the move cannot be
            # stored either), rather than being left with no answer
            log.warning("update %s not stored (%s): handled without the inbox",
                        update.update_id, exc)
            new = [update.update_id]
        except Exception:  # never blocks the updates after it
            log.exception("update %s not stored: handled without the inbox", update.update_id)
            new = [update.update_id]
        if not new:
            self.stats["again"] += 1
            log.info("update %s delivered again: stored already, handled once",
                     update.update_id)
            return
        self.stats["stored"] += 1
        await self._resumed.wait()
        self._dispatch(update)

    def start(self) -> None:
        """Hand out the updates stored and not handled, once the application runs (the
        new ones wait for them)."""
        self._resumer = asyncio.get_running_loop().create_task(self.resume(),
                                                               name="inbox-resume")

    async def resume(self) -> None:
        """Hand out the updates stored and not handled, one at a time, each counted
        first (:func:`storage.inbox.claim`): one claimed :data:`CRASH_CLAIMS` times
        already is set aside (see the module docstring)."""
        try:
            async with urgent():
                rows = await inbox.pending(self.db)
        except StorageUnavailable as exc:
            log.error("the inbox could not be read (%s): its pending updates wait for the "
                      "next start", exc)
            rows = []
        while not self.app.running and not self._closed:  # (post_init runs before start)
            await asyncio.sleep(0.005)
        handed = 0
        for row in rows:
            if self._closed:
                return
            try:
                update = Update.de_json(json.loads(row.payload), self.app.bot)
            except Exception:  # never blocks the others
                log.exception("stored update %s cannot be read: dropped", row.update_id)
                await self._mark(row.update_id)
                continue
            if row.claims >= CRASH_CLAIMS:
                await self._set_aside(update, row.payload, None, row.claims)
                continue
            try:
                async with urgent():
                    await self.db.batched(functools.partial(inbox.claim,
                                                            update_id=row.update_id))
            except StorageUnavailable as exc:
                log.warning("update %s not counted as taken in hand (%s)", row.update_id, exc)
            handed += 1
            self.stats["resumed"] += 1
            task = self._dispatch(update)
            if task is not None:  # (the next one is counted once this one is done)
                await asyncio.wait([task], timeout=RESUME_WAIT_SECONDS)
        if handed:
            log.info("%d updates stored and not handled before: handled first", handed)
        self._resumed.set()

    # ------------------------------------------------------------------ handling

    def _dispatch(self, update: Update) -> asyncio.Task[None] | None:
        """Handle ``update`` in a task of its own, started at once (:func:`start_now`): a
        press's move is applied and its answer sent before the poller goes on, with no
        turn of the event loop in between (issue 32: behind everything ready, that turn
        was 2-7 ms of the slowest answers at 200 tables)."""
        if self._closed:
            return None  # stored, not handled: the next active instance handles it
        task = start_now(self._handle(update), name=f"update-{update.update_id}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _handle(self, update: Update) -> None:
        state = inbox.handling(update.update_id)
        if not is_game_press(update):
            # no move transaction marks it: marked before its first visible effect (the
            # reply), so a kill after the reply never answers it twice
            state.mark_first = lambda: self._mark(update.update_id, state)
        processor = self.app.update_processor
        await processor.process_update(update, self._attempts(update, state))
        if state.error is not None:  # raised at every attempt: set aside
            await self._set_aside(update, json.dumps(update.to_dict(), separators=(",", ":")),
                                  state.error, ATTEMPTS)
        elif not state.marked:
            # (other handler errors went to the error handler: the update was handled)
            await self._mark(update.update_id, state)
        self._prune_now_and_then()

    async def _attempts(self, update: Update, state: inbox.Handling) -> None:
        """PTB's handling of ``update``, again while its handler raises and nothing of
        it was stored or shown (the error handler records the error in ``state``:
        :func:`storage.inbox.failed`), at most :data:`ATTEMPTS` times in all (in the
        chat's turn: no update of its chat or game goes in between)."""
        for attempt in range(1, ATTEMPTS + 1):
            state.error = None
            await self.app.process_update(update)
            error = state.error
            if error is None or attempt == ATTEMPTS:
                return
            self.stats["retried"] += 1
            log.warning("update %s: its handler raised %s: %s (attempt %d of %d): handled "
                        "again", update.update_id, type(error).__name__, error, attempt,
                        ATTEMPTS)
            await asyncio.sleep(RETRY_DELAYS[min(attempt, len(RETRY_DELAYS)) - 1])

    async def _set_aside(self, update: Update, payload: str, error: BaseException | None,
                         tries: int) -> None:
        """Poison ``update``: marked handled with the error's class and a summary instead
        of its payload, logged once at ERROR, the person told (``on_poisoned``)."""
        kept = summary(payload)
        name = PROCESS_DIED if error is None else type(error).__name__
        why = (f"its handler raised {name} at {tries} attempts" if error is not None
               else f"it was being handled when the process died, {tries} times in a row")
        try:
            async with urgent():
                await self.db.batched(
                    lambda tx: inbox.poison(tx, update.update_id, name, kept)
                )
        except StorageUnavailable as exc:
            if exc.code == "fenced":
                return
            log.warning("update %s not marked as set aside (%s)", update.update_id, exc)
        self.stats["poisoned"] += 1
        log.error("update %s set aside (poisoned): %s; the bot goes on (%s)",
                  update.update_id, why, kept, exc_info=error)
        if self.on_poisoned is not None:
            try:
                await self.on_poisoned(update, error)
            except Exception:  # (the person may be unreachable)
                log.info("could not tell about update %s set aside", update.update_id,
                         exc_info=True)

    async def _mark(self, update_id: int, state: inbox.Handling | None = None) -> None:
        try:
            async with urgent():  # (the sooner, the smaller the window for handling twice)
                await self.db.batched(lambda tx: inbox.mark_handled(tx, update_id))
            inbox.committed(state)
        except StorageUnavailable as exc:
            if exc.code != "fenced":
                log.warning("update %s handled, not marked (%s): the next start handles "
                            "it again", update_id, exc)

    def _prune_now_and_then(self) -> None:
        loop = asyncio.get_running_loop()
        if loop.time() - self._last_prune < PRUNE_EVERY_SECONDS or self._closed:
            return
        self._last_prune = loop.time()
        task = loop.create_task(self.prune(), name="inbox-prune")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def prune(self) -> None:
        """Delete the updates handled more than :data:`KEEP_HANDLED_SECONDS` ago."""
        try:
            now = self.db.now()
            gone = await inbox.prune_inbox(self.db, now - int(KEEP_HANDLED_SECONDS),
                                           now - int(KEEP_POISONED_SECONDS))
        except StorageUnavailable as exc:
            log.info("old updates not pruned: %s", exc)
            return
        if gone:
            log.info("%d handled updates pruned from the inbox", gone)

    # ------------------------------------------------------------------ stopping

    async def stop(self, timeout: float) -> None:
        """Hand out nothing more; wait up to ``timeout`` for the updates being handled
        (a graceful stop), then cancel what is left (stored, not handled: the next active
        instance handles it)."""
        self._closed = True
        self._resumed.set()
        tasks = [t for t in (self._resumer, *self._tasks) if t is not None and not t.done()]
        if tasks and timeout > 0:
            await asyncio.wait(tasks, timeout=timeout)
        await self.cancel()

    async def cancel(self) -> None:
        """Stop at once: every task of the inbox is cancelled and awaited."""
        self._closed = True
        self._resumed.set()  # (a new update waiting for it is stored, not handled)
        tasks = [t for t in (self._resumer, *self._tasks) if t is not None and not t.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    def busy(self) -> int:
        """Updates being handled."""
        return sum(not t.done() for t in self._tasks)
