"""The inbox of updates and the digests of messages (schema v7, issue 35).

* **Inbox**: every update is stored (:func:`store_updates`) before Telegram learns that it
  arrived; it is marked handled (:func:`mark_handled`) in the transaction of the move it
  carries, or after its handler ran, never before. :func:`pending_updates` gives a new
  active instance what the one before stored and did not handle; handled rows are deleted
  after a while (:func:`prune_inbox`).
* **Which update a task is handling** (:func:`handling`, :func:`current`): the bot sets
  it for the task handling an update; the service's move marks that update in the move's
  own write (``repo.record_action(handled_update=…)``, then :func:`committed`), so that
  the mark commits with the move, or not at all.
* **Poisoned updates** (schema v8, issue 46): each row counts the starts that took it in
  hand (``claims``: 1 when stored, + 1 at each start that hands it out again,
  :func:`claim`); :func:`poison` sets one aside: marked handled, with when and the
  error's class, its payload replaced by a summary without its text
  (:func:`poisoned_updates` lists them). Kept longer than handled rows.
* **Message digests**: what each message of the bot shows as Telegram last accepted it
  (:func:`save_digest`, :func:`load_digests`).
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

from .db import Executor

__all__ = [
    "Handling", "PendingUpdate", "PoisonedUpdate", "claim", "committed", "current",
    "delete_digests", "failed", "handling", "load_digests", "mark_handled", "pending",
    "pending_updates", "poison", "poisoned_updates", "prune_digests", "prune_inbox",
    "save_digest", "store_updates",
]


# --------------------------------------------------------------------------- the inbox


async def store_updates(ex: Executor, updates: Iterable[tuple[int, str]]) -> list[int]:
    """Store updates (id, JSON payload) in one transaction; the ids that were new (an
    update delivered again, stored before by this instance or the one before it, is
    not stored twice and not returned)."""
    new: list[int] = []
    async with ex.transaction() as tx:
        now = tx.now()
        for update_id, payload in updates:
            changed = await tx.execute(
                "INSERT INTO inbox (update_id, payload, received_at) VALUES (?, ?, ?) "
                "ON CONFLICT (update_id) DO NOTHING",
                (int(update_id), payload, now),
            )
            if changed == 1:
                new.append(int(update_id))
    return new


@dataclass(frozen=True)
class PendingUpdate:
    """An update stored and not handled; ``claims``: how many starts took it in hand."""

    update_id: int
    payload: str
    claims: int


async def pending(ex: Executor, limit: int = 10_000) -> list[PendingUpdate]:
    """The updates stored and not handled, oldest first."""
    rows = await ex.fetch(
        "SELECT update_id, payload, claims FROM inbox WHERE handled_at IS NULL "
        "ORDER BY update_id LIMIT ?", (int(limit),),
    )
    return [PendingUpdate(int(r["update_id"]), str(r["payload"]), int(r["claims"]))
            for r in rows]


async def pending_updates(ex: Executor, limit: int = 10_000) -> list[tuple[int, str]]:
    """The updates stored and not handled, oldest first: (id, JSON payload)."""
    return [(row.update_id, row.payload) for row in await pending(ex, limit)]


async def claim(ex: Executor, update_id: int) -> None:
    """A start takes the stored update in hand (before it is handled)."""
    await ex.write(
        "UPDATE inbox SET claims = claims + 1 WHERE update_id = ? AND handled_at IS NULL",
        (int(update_id),),
    )


async def poison(ex: Executor, update_id: int, error: str, summary: str) -> bool:
    """Set the update aside: handled (never handed out again), poisoned now by ``error``
    (an error's class), its payload replaced by ``summary`` (no private text). False if
    it was handled meanwhile."""
    now = ex.now()
    changed = await ex.execute(
        "UPDATE inbox SET handled_at = ?, poisoned_at = ?, poison_error = ?, payload = ? "
        "WHERE update_id = ? AND handled_at IS NULL",
        (now, now, error, summary, int(update_id)),
    )
    return changed == 1


@dataclass(frozen=True)
class PoisonedUpdate:
    update_id: int
    poisoned_at: int
    error: str
    summary: str
    claims: int


async def poisoned_updates(ex: Executor, limit: int = 100) -> list[PoisonedUpdate]:
    """The updates set aside, newest first."""
    rows = await ex.fetch(
        "SELECT update_id, poisoned_at, poison_error, payload, claims FROM inbox "
        "WHERE poisoned_at IS NOT NULL ORDER BY poisoned_at DESC, update_id DESC LIMIT ?",
        (int(limit),),
    )
    return [PoisonedUpdate(int(r["update_id"]), int(r["poisoned_at"]),
                           str(r["poison_error"] or ""), str(r["payload"]), int(r["claims"]))
            for r in rows]


async def mark_handled(ex: Executor, update_id: int) -> None:
    """The update was handled (refused, or its handlers ran; a move marks its update in
    its own statement: ``repo.record_action(handled_update=…)``)."""
    await ex.write(
        "UPDATE inbox SET handled_at = ? WHERE update_id = ? AND handled_at IS NULL",
        (ex.now(), int(update_id)),
    )


async def prune_inbox(ex: Executor, before: int, poisoned_before: int | None = None) -> int:
    """Delete the updates handled before the unix time ``before`` (those set aside:
    before ``poisoned_before``, default ``before``); how many."""
    return await ex.execute(
        "DELETE FROM inbox WHERE handled_at IS NOT NULL AND handled_at < ? "
        "AND (poisoned_at IS NULL OR poisoned_at < ?)",
        (int(before), int(before if poisoned_before is None else poisoned_before)),
    )


# ----------------------------------------------------------- the update being handled


@dataclass
class Handling:
    """The update a task is handling; ``marked``: its handled mark is committed."""

    update_id: int
    task: asyncio.Task[object] | None
    marked: bool = False
    #: Writes the mark before the handler's first visible effect (a Bot API call that is
    #: not a read), for updates that no move transaction marks; None for a game's press.
    mark_first: Callable[[], Awaitable[None]] | None = None
    #: What the handler raised, recorded by the error handler (:func:`failed`): the task
    #: handling the update handles it again or sets it aside (``bot.inbox``).
    error: BaseException | None = None


_CURRENT: contextvars.ContextVar[Handling | None] = contextvars.ContextVar(
    "inbox_update", default=None
)


def handling(update_id: int) -> Handling:
    """The current task handles ``update_id`` (call it first in that task)."""
    state = Handling(update_id, asyncio.current_task())
    _CURRENT.set(state)
    return state


def current() -> Handling | None:
    """The update the current task handles, if its mark is still to be written (tasks
    this one started see it too, but are not the handler: None for them)."""
    state = _CURRENT.get()
    if state is None or state.marked or state.task is not asyncio.current_task():
        return None
    return state


async def before_effect() -> None:
    """Called before a Bot API call that Telegram's user may see (a reply, an edit, an
    answer): the update the current task handles is marked handled first, if it is one
    that no move transaction marks. So a process that dies after the reply never handles
    the update again (answered twice); one that dies before the mark handles it again,
    and nobody saw the first try."""
    state = _CURRENT.get()  # (also in the tasks the handler started: its reply is one)
    if state is not None and not state.marked and state.mark_first is not None:
        mark, state.mark_first = state.mark_first, None
        await mark()


def failed(update_id: int, error: BaseException) -> bool:
    """The error handler's call: the handler of ``update_id`` raised ``error``. True if
    the task handling the update takes charge of it (handles it again, or sets it aside):
    the error handler runs in that task, and nothing of the update was stored or shown
    (its mark is not written). False otherwise (a move stored, a reply sent: handling it
    again would do that twice)."""
    state = _CURRENT.get()
    if (state is None or state.update_id != update_id or state.marked
            or state.task is not asyncio.current_task()):
        return False
    state.error = error
    return True


def committed(state: Handling | None) -> None:
    """The transaction that marked ``state``'s update committed."""
    if state is not None:
        state.marked = True


# --------------------------------------------------------------------------- message digests


async def save_digest(
    ex: Executor, chat_id: int, message_id: int, text_digest: str, kb_digest: str
) -> None:
    """What a message shows now (Telegram accepted it)."""
    await ex.execute(
        "INSERT INTO message_digests (chat_id, message_id, text_digest, kb_digest, updated_at)"
        " VALUES (?, ?, ?, ?, ?) ON CONFLICT (chat_id, message_id) DO UPDATE SET "
        "text_digest = excluded.text_digest, kb_digest = excluded.kb_digest, "
        "updated_at = excluded.updated_at",
        (int(chat_id), int(message_id), text_digest, kb_digest, ex.now()),
    )


async def delete_digests(ex: Executor, chat_id: int, message_id: int) -> None:
    await ex.execute(
        "DELETE FROM message_digests WHERE chat_id = ? AND message_id = ?",
        (int(chat_id), int(message_id)),
    )


async def load_digests(ex: Executor, since: int) -> dict[tuple[int, int], tuple[str, str]]:
    """The digests written at or after the unix time ``since``: (chat, message) ->
    (text digest, keyboard digest)."""
    rows = await ex.fetch(
        "SELECT chat_id, message_id, text_digest, kb_digest FROM message_digests "
        "WHERE updated_at >= ?", (int(since),),
    )
    return {(int(r["chat_id"]), int(r["message_id"])): (str(r["text_digest"]),
                                                        str(r["kb_digest"])) for r in rows}


async def prune_digests(ex: Executor, before: int) -> int:
    """Delete the digests not written since the unix time ``before``."""
    return await ex.execute("DELETE FROM message_digests WHERE updated_at < ?", (int(before),))
