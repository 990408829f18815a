"""All sends and edits of game messages go through here.

The package: this module is the outbox (new messages, migrated groups, and the public
API); :mod:`bot.outbox.edits` the edit queue (coalescing, one flusher per chat, the edit
calls and Telegram's refusals of them); :mod:`bot.outbox.pace` the budgets (each chat's
pace, the bot's rate, kept across restarts; the rate limiter of the calls made
elsewhere); :mod:`bot.outbox.digests` the record of what each message shows.

* **Skip identical edits**: what each message shows, as Telegram last accepted it, is
  recorded right after each call, in memory and in the database
  (:mod:`bot.outbox.digests`): an edit that would show the same is never made, also after
  a restart or a takeover. "Message is not modified" can only come once after a SIGKILL
  (the call answered, its record not yet written), and counts as accepted.
* **Coalescing** (:mod:`bot.outbox.edits`): an edit only records the *desired* content
  of a message (with a :class:`~bot.budget.Priority` and by when it is due: at once, or
  after a ``delay`` for content nobody needs right now); one flusher task per chat sends
  the latest desired content when it is due and the budgets allow. A burst of moves
  becomes one edit.
* **Even pacing** (:mod:`bot.outbox.pace`, :mod:`bot.budget`): each chat at most one
  call per interval, and the whole bot ``messages_per_second``, granted by priority: the
  message a person just pressed first (showing their own move is part of answering the
  press), then the buttons of the seat in turn and replies to a person, then group
  tables, then hands nobody can press.
* **Nobody waits on it**: :meth:`edit` and :meth:`edit_markup` return at once; only
  :meth:`send` (a new message, whose id the caller needs) waits, and never in a handler.
* **Re-sent messages** (:meth:`retarget`): edits queued for a message that was replaced
  (``/mano``) are dropped, and its deletion waits for the edit in flight, if any.
* **Restarts**: the pacing of every chat is kept across restarts (:mod:`bot.outbox.pace`).
* **Migrated groups**: a group that became a supergroup is remembered: sends to the old
  id go to the new one, edits of its old messages are dropped (they are read-only now),
  and ``on_migrated`` is told (in the background) so that the database follows.

Counters of every call (for the closing report) are kept in :attr:`Outbox.stats`.
"""
from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from telegram import Bot, InlineKeyboardMarkup, Message
from telegram.error import BadRequest, ChatMigrated, Forbidden, NetworkError

from bot.aiohttp_request import Fenced
from bot.budget import Priority
from bot.outbox.digests import Digests
from bot.outbox.edits import EditQueue, backoff, count_call, keyboard_key
from bot.outbox.pace import COUNTED, PACED, PacedRateLimiter, Pacer

__all__ = ["COUNTED", "Outbox", "PacedRateLimiter", "Priority", "backoff"]

log = logging.getLogger(__name__)

#: Attempts of a send that fails with a network error (5xx, timeout, reset).
SEND_ATTEMPTS = 3
#: Telegram's refusal of a message to a forum topic that was closed.
TOPIC_CLOSED = "TOPIC_CLOSED"


class Outbox:
    def __init__(
        self,
        bot: Bot,
        *,
        group_per_minute: float = 18,
        chat_rate: float = 0.8,
        chat_burst: float = 1.0,
        private_burst: float = 2.0,
        window_seconds: float = 60.0,
        messages_per_second: float = 27.0,
        on_forbidden: Callable[[int, str], Awaitable[None]] | None = None,
        on_migrated: Callable[[int, int], Coroutine[Any, Any, None]] | None = None,
        on_topic_closed: Callable[[int, int], Awaitable[None]] | None = None,
    ) -> None:
        self.bot = bot
        self.on_forbidden = on_forbidden
        self.on_migrated = on_migrated
        #: A send was refused because its forum topic is closed: (chat, thread). The
        #: send is not tried again (None is returned): its table ends there.
        self.on_topic_closed = on_topic_closed
        #: Topics Telegram said are closed, (chat, thread): nothing more is sent there
        #: until they are reopened (:meth:`topic_reopened`; a restart forgets them).
        self.closed_topics: set[tuple[int, int]] = set()
        self.pacer = Pacer(
            group_per_minute=group_per_minute, chat_rate=chat_rate, chat_burst=chat_burst,
            private_burst=private_burst, window_seconds=window_seconds,
            messages_per_second=messages_per_second,
        )
        self.budget = self.pacer.budget
        self.window_seconds = window_seconds
        #: What each message shows (see :mod:`bot.outbox.digests`).
        self.digests = Digests()
        self._moved: dict[int, int] = {}
        self._background: set[asyncio.Task[None]] = set()
        self.stats: Counter[str] = Counter()
        #: The edits wanted and their flushers (see :mod:`bot.outbox.edits`).
        self.edits = EditQueue(
            bot, self.pacer, self.digests, self.stats, moved=self._moved,
            on_migrated=self._migrated, on_forbidden=self._forbidden,
        )
        self._closed = False

    # ------------------------------------------------------------------ budget

    def interval(self, chat_id: int) -> float:
        """Seconds between two calls of this chat (the pacing interval)."""
        return self.pacer.interval(chat_id)

    def private_interval(self) -> float:
        """Seconds between two calls of a private chat (1.25 s by default)."""
        return self.pacer.private_interval()

    def wait_for(self, chat_id: int) -> float:
        """Seconds until a new call of this chat could go."""
        return self.pacer.wait_for(self.resolve(chat_id))

    def restore_pacing(self, states: dict[int, tuple[float, list[float]]],
                       unrecorded: tuple[float, float] | None) -> None:
        """See :meth:`bot.outbox.pace.Pacer.restore_pacing`."""
        self.pacer.restore_pacing(states, unrecorded)

    def pace_changes(self) -> dict[int, tuple[float, list[float]]]:
        """See :meth:`bot.outbox.pace.Pacer.pace_changes`."""
        return self.pacer.pace_changes()

    async def take(self, chat_id: int, priority: int = Priority.TURN) -> None:
        """Wait for and spend one call of the chat's and the bot's budget (for calls made
        elsewhere: a reply to a command goes before the queued edits)."""
        chat_id = self.resolve(chat_id)
        self.edits.chat(chat_id)
        await self.pacer.take(chat_id, priority)

    # ------------------------------------------------------------------ migrated groups

    def resolve(self, chat_id: int) -> int:
        """The id a chat has now (a migrated group's supergroup id)."""
        return self.edits.resolve(chat_id)

    def note_migration(self, old: int, new: int) -> bool:
        """Remember that ``old`` is now ``new``; drop edits of old messages. True if new."""
        if self._moved.get(old) == new or old == new:
            return False
        self._moved[old] = new
        self.edits.drop_edits(old)
        return True

    def _migrated(self, old: int, new: int) -> None:
        log.warning("chat %s migrated to %s", old, new)
        if self.note_migration(old, new) and self.on_migrated is not None:
            task = asyncio.get_running_loop().create_task(self.on_migrated(old, new))
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    # ------------------------------------------------------------------ sending

    async def send(
        self,
        chat_id: int,
        text: str,
        kb: InlineKeyboardMarkup | None = None,
        *,
        thread_id: int | None = None,
        priority: int = Priority.TABLE,
        wanted: Callable[[], bool] | None = None,
    ) -> Message | None:
        """Send a new message (waiting for the budgets); None if the chat refused, or if
        ``wanted()`` says no once the budgets granted it (nobody needs it any more: its
        call goes to the next one waiting).

        A network error (5xx, timeout, reset) is retried a few times with a backoff, then
        raised (the caller schedules a redraw)."""
        chat_id = self.resolve(chat_id)
        if thread_id and (chat_id, thread_id) in self.closed_topics:
            log.info("topic %s of chat %s is closed: a message not sent", thread_id, chat_id)
            await self._topic_closed(chat_id, thread_id)
            return None
        drops = self.edits.chat(chat_id).drops
        for attempt in range(1, SEND_ATTEMPTS + 1):
            await self.edits.slot(chat_id, priority)  # (in line with the chat's edits)
            if self.edits.chat(chat_id).drops != drops:
                self.budget.refund()
                log.info("send to %s dropped: the bot was removed from the chat", chat_id)
                return None
            if wanted is not None and not wanted():
                self.budget.refund()
                self.stats["sends_not_wanted"] += 1
                return None
            paced = PACED.set(True)
            try:
                msg = await self.bot.send_message(
                    chat_id, text, reply_markup=kb, message_thread_id=thread_id or None
                )
            except ChatMigrated as exc:
                self._migrated(chat_id, exc.new_chat_id)
                return await self.send(exc.new_chat_id, text, kb, thread_id=thread_id,
                                       priority=priority)
            except Forbidden as exc:
                log.info("chat %s refused a message (403): %s", chat_id, exc)
                await self._forbidden(chat_id, exc)
                return None
            except BadRequest as exc:
                if TOPIC_CLOSED not in str(exc).upper():
                    raise
                log.warning("topic %s of chat %s is closed (%s): not sent, and nothing "
                            "more is sent there until it is reopened", thread_id, chat_id,
                            exc)
                self.closed_topics.add((chat_id, thread_id or 0))
                await self._topic_closed(chat_id, thread_id or 0)
                return None
            except Fenced:  # standing by: the next active instance redraws (no log)
                self.budget.refund()
                return None
            except NetworkError as exc:
                if attempt == SEND_ATTEMPTS or self._closed:
                    raise
                log.warning("send to %s failed (%s): retrying", chat_id, exc)
                await asyncio.sleep(backoff(attempt, first=0.5))
                continue
            finally:
                PACED.reset(paced)
            count_call(self.stats, chat_id, "sends")
            key = (chat_id, msg.message_id)
            self.edits.texts[key] = text
            await self.digests.accepted(key, text, keyboard_key(kb))
            return msg
        raise AssertionError("unreachable")

    async def _topic_closed(self, chat_id: int, thread_id: int) -> None:
        if self.on_topic_closed is not None:
            await self.on_topic_closed(chat_id, thread_id)

    def topic_reopened(self, chat_id: int, thread_id: int) -> None:
        """Telegram said the topic is open again: messages go there again."""
        self.closed_topics.discard((self.resolve(chat_id), thread_id))

    async def _forbidden(self, chat_id: int, exc: Forbidden) -> None:
        if self.on_forbidden is not None:
            await self.on_forbidden(chat_id, str(exc))

    def promote(self, chat_id: int, priority: int) -> None:
        """See :meth:`bot.outbox.edits.EditQueue.promote` (a new hand, a turn's now)."""
        self.edits.promote(self.resolve(chat_id), priority)

    def drop_chat(self, chat_id: int) -> None:
        """The chat is gone (the bot was removed): forget its pending edits, and the
        sends waiting for its budget do not go out (later sends do: it may add the bot
        again)."""
        self.edits.drop_chat(chat_id)

    # ------------------------------------------------------------------ edits

    def edit(
        self, chat_id: int, message_id: int, text: str, kb: InlineKeyboardMarkup | None = None,
        *, delay: float = 0.0, priority: int = Priority.TABLE,
        shown: Callable[[], None] | None = None,
    ) -> None:
        """Ask for a message to show this content, at the latest ``delay`` seconds from now;
        sent later, coalesced with later requests for the same message, never twice. The
        most urgent priority and the earliest due time of the coalesced requests count.
        ``shown``: called once the message shows this content (not if a later request
        replaced it first)."""
        self.edits.want(chat_id, message_id, text, kb, delay, priority, markup_only=False,
                        shown=shown)

    def edit_markup(
        self, chat_id: int, message_id: int, kb: InlineKeyboardMarkup | None,
        fallback_text: str, *, priority: int = Priority.PRESSED,
    ) -> None:
        """Redraw the keyboard of a message (picker / confirmation steps), queued like any
        edit; ``fallback_text``: the message's text if never sent by us (e.g. before a
        restart). A newer text still waiting for that message (a held hand) goes with it,
        in the same call, rather than being replaced by the old one."""
        self.edits.edit_markup(chat_id, message_id, kb, fallback_text, priority)

    async def edit_now(
        self, chat_id: int, message_id: int, text: str, kb: InlineKeyboardMarkup | None = None
    ) -> None:
        """Edit at once, waiting for the budgets (not for handlers: use :meth:`edit`)."""
        await self.edits.edit_now(chat_id, message_id, text, kb)

    def forget(self, chat_id: int, message_id: int) -> None:
        """Forget what this message shows and what was queued for it."""
        self.edits.forget(chat_id, message_id)

    def withdraw(self, chat_id: int, message_id: int) -> None:
        """Drop the edit queued for this message, if any (what it shows is still known:
        a later request for that content sends nothing)."""
        self.edits.withdraw(chat_id, message_id)

    def retire(self, chat_id: int, message_id: int) -> None:
        """See :meth:`bot.outbox.edits.EditQueue.retire` (``/mano``)."""
        self.edits.retire(chat_id, message_id)

    async def released(self, chat_id: int, message_id: int, timeout: float = 10.0) -> None:
        """Wait until no edit of this message is being sent (before deleting it)."""
        await self.edits.released(chat_id, message_id, timeout)

    def busy(self, chat_id: int) -> bool:
        """Whether an edit of this chat is wanted or being sent."""
        return self.edits.busy(chat_id)

    async def settled(self, chat_ids: set[int], poll: float = 1.0) -> None:
        """See :meth:`bot.outbox.edits.EditQueue.settled`."""
        await self.edits.settled(chat_ids, poll)

    def pending(self) -> int:
        """Edits waiting to be sent (all chats)."""
        return self.edits.pending()

    async def drain(self, timeout: float = 10.0) -> None:
        """Wait until every pending edit is sent (shutdown, tests)."""
        tasks = self.edits.flushers() + list(self._background)
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)

    async def close(self) -> None:
        self._closed = True
        self.edits.stop()
        tasks = self.edits.flushers() + list(self._background)
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        await self.budget.close()
