"""All sends and edits of game messages go through here.

* **Skip identical edits**: the last content sent for each message is remembered, so a
  "message is not modified" error never happens on our side (and is ignored if it does).
* **Coalescing**: an edit only records the *desired* content of a message; one flusher
  task per chat sends the latest desired content when the chat's budget allows. A burst
  of computer moves therefore becomes one edit per message.
* **Budget**: per chat a token bucket (``chat_burst`` then ``chat_rate``/s) and per group a
  sliding window of ``group_per_minute`` sends+edits per 60 s.

Counters of every call (for the closing report) are kept in :attr:`Outbox.stats`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from telegram import Bot, InlineKeyboardMarkup, Message
from telegram.error import BadRequest, ChatMigrated, Forbidden, RetryAfter, TelegramError

log = logging.getLogger(__name__)

Content = tuple[str, str]  # (text, keyboard json)


def _kb_key(kb: InlineKeyboardMarkup | None) -> str:
    return "" if kb is None else str(kb.to_dict())


@dataclass
class _Chat:
    is_group: bool
    tokens: float
    updated: float
    window: deque[float] = field(default_factory=deque)
    desired: dict[int, tuple[str, InlineKeyboardMarkup | None]] = field(default_factory=dict)
    flusher: asyncio.Task[None] | None = None


class Outbox:
    def __init__(
        self,
        bot: Bot,
        *,
        group_per_minute: float = 18,
        chat_rate: float = 0.8,
        chat_burst: float = 2.0,
        window_seconds: float = 60.0,
        on_forbidden: Callable[[int], Awaitable[None]] | None = None,
        on_migrated: Callable[[int, int], Awaitable[None]] | None = None,
    ) -> None:
        self.bot = bot
        self.group_per_minute = group_per_minute
        self.chat_rate = chat_rate
        self.chat_burst = chat_burst
        self.window_seconds = window_seconds
        self.on_forbidden = on_forbidden
        self.on_migrated = on_migrated
        self._chats: dict[int, _Chat] = {}
        self._sent: dict[tuple[int, int], Content] = {}
        self.stats: Counter[str] = Counter()
        self._closed = False

    # ------------------------------------------------------------------ budget

    def _chat(self, chat_id: int) -> _Chat:
        chat = self._chats.get(chat_id)
        if chat is None:
            chat = _Chat(chat_id < 0, self.chat_burst, time.monotonic())
            self._chats[chat_id] = chat
        return chat

    def _wait_needed(self, chat: _Chat) -> float:
        now = time.monotonic()
        chat.tokens = min(self.chat_burst, chat.tokens + (now - chat.updated) * self.chat_rate)
        chat.updated = now
        wait = 0.0 if chat.tokens >= 1 else (1 - chat.tokens) / self.chat_rate
        if chat.is_group:
            while chat.window and now - chat.window[0] >= self.window_seconds:
                chat.window.popleft()
            if len(chat.window) >= self.group_per_minute:
                wait = max(wait, chat.window[0] + self.window_seconds - now)
        return wait

    async def _take(self, chat_id: int) -> None:
        chat = self._chat(chat_id)
        while (wait := self._wait_needed(chat)) > 0:
            await asyncio.sleep(wait + 0.01)
        chat.tokens -= 1
        if chat.is_group:
            chat.window.append(time.monotonic())

    def _count(self, chat_id: int, kind: str) -> None:
        self.stats[("group_" if chat_id < 0 else "private_") + kind] += 1

    # ------------------------------------------------------------------ sending

    async def send(
        self,
        chat_id: int,
        text: str,
        kb: InlineKeyboardMarkup | None = None,
        *,
        thread_id: int | None = None,
    ) -> Message | None:
        """Send a new message now (waiting for the budget); None if the chat refused."""
        await self._take(chat_id)
        try:
            msg = await self.bot.send_message(
                chat_id, text, reply_markup=kb, message_thread_id=thread_id or None
            )
        except ChatMigrated as exc:
            await self._migrated(chat_id, exc.new_chat_id)
            return None
        except Forbidden:
            log.info("chat %s refused a message (403)", chat_id)
            if self.on_forbidden is not None:
                await self.on_forbidden(chat_id)
            return None
        self._count(chat_id, "sends")
        self._sent[(chat_id, msg.message_id)] = (text, _kb_key(kb))
        return msg

    def edit(
        self, chat_id: int, message_id: int, text: str, kb: InlineKeyboardMarkup | None = None
    ) -> None:
        """Ask for a message to show this content; sent later, coalesced, never twice."""
        if self._sent.get((chat_id, message_id)) == (text, _kb_key(kb)):
            self._chat(chat_id).desired.pop(message_id, None)
            return
        chat = self._chat(chat_id)
        chat.desired[message_id] = (text, kb)
        if chat.flusher is None or chat.flusher.done():
            chat.flusher = asyncio.create_task(self._flush(chat_id))

    async def edit_now(
        self, chat_id: int, message_id: int, text: str, kb: InlineKeyboardMarkup | None = None
    ) -> None:
        """Edit at once (e.g. a keyboard answering the presser), still skipping repeats."""
        self._chat(chat_id).desired.pop(message_id, None)
        await self._edit(chat_id, message_id, text, kb)

    async def edit_markup_now(
        self, chat_id: int, message_id: int, kb: InlineKeyboardMarkup | None, fallback_text: str
    ) -> None:
        """Redraw only the keyboard of a message at once (picker / confirmation steps)."""
        text = self._sent.get((chat_id, message_id), (fallback_text, ""))[0]
        self._sent.setdefault((chat_id, message_id), (text, "?"))
        await self.edit_now(chat_id, message_id, text, kb)

    async def _flush(self, chat_id: int) -> None:
        chat = self._chat(chat_id)
        while chat.desired and not self._closed:
            await self._take_soft(chat_id)
            if not chat.desired:
                break
            message_id = next(iter(chat.desired))
            text, kb = chat.desired.pop(message_id)
            try:
                await self._edit(chat_id, message_id, text, kb, take=False)
            except Exception:  # never let one failed edit stop the flusher
                log.exception("edit of %s/%s failed", chat_id, message_id)

    async def _take_soft(self, chat_id: int) -> None:
        chat = self._chat(chat_id)
        while (wait := self._wait_needed(chat)) > 0:
            await asyncio.sleep(wait + 0.01)

    async def _edit(
        self,
        chat_id: int,
        message_id: int,
        text: str,
        kb: InlineKeyboardMarkup | None,
        *,
        take: bool = True,
    ) -> None:
        key = (chat_id, message_id)
        content = (text, _kb_key(kb))
        if self._sent.get(key) == content:
            return
        if take:
            await self._take(chat_id)
        else:
            chat = self._chat(chat_id)
            chat.tokens -= 1
            if chat.is_group:
                chat.window.append(time.monotonic())
        try:
            if self._sent.get(key, ("",))[0] == text:
                await self.bot.edit_message_reply_markup(chat_id, message_id, reply_markup=kb)
                self._count(chat_id, "markup_edits")
            else:
                await self.bot.edit_message_text(text, chat_id, message_id, reply_markup=kb)
                self._count(chat_id, "edits")
            self._sent[key] = content
        except BadRequest as exc:
            if "not modified" in str(exc).lower():
                self._sent[key] = content
            elif "not found" in str(exc).lower() or "can't be edited" in str(exc).lower():
                log.warning("message %s/%s is gone: %s", chat_id, message_id, exc)
                self._sent[key] = content
            else:
                raise
        except ChatMigrated as exc:
            await self._migrated(chat_id, exc.new_chat_id)
        except Forbidden:
            if self.on_forbidden is not None:
                await self.on_forbidden(chat_id)
        except RetryAfter as exc:
            log.warning("flood control on %s: retry after %s", chat_id, exc.retry_after)
            self._chat(chat_id).desired.setdefault(message_id, (text, kb))
        except TelegramError:
            log.exception("edit of %s/%s failed", chat_id, message_id)

    async def _migrated(self, old: int, new: int) -> None:
        log.warning("chat %s migrated to %s", old, new)
        if self.on_migrated is not None:
            await self.on_migrated(old, new)

    def forget(self, chat_id: int, message_id: int) -> None:
        self._sent.pop((chat_id, message_id), None)
        self._chat(chat_id).desired.pop(message_id, None)

    async def drain(self, timeout: float = 10.0) -> None:
        """Wait until every pending edit is sent (shutdown, tests)."""
        tasks = [c.flusher for c in self._chats.values() if c.flusher and not c.flusher.done()]
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)

    async def close(self) -> None:
        self._closed = True
        tasks = [c.flusher for c in self._chats.values() if c.flusher and not c.flusher.done()]
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
