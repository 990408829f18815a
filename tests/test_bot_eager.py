"""bot.eager.start_now: a task whose first step runs at once, as a task of its own."""

from __future__ import annotations

import asyncio
import contextvars
from pathlib import Path

import pytest
from telegram import Update

from bot.eager import start_now
from bot.inbox import Inbox
from bot.updates import PerChatUpdateProcessor
from storage import inbox as storage_inbox
from storage import open_database

VAR: contextvars.ContextVar[str] = contextvars.ContextVar("eager_test_var", default="caller")


async def test_the_first_step_runs_before_start_now_returns_and_the_rest_as_a_task() -> None:
    seen: list[object] = []
    gate = asyncio.get_running_loop().create_future()

    async def work() -> str:
        seen.append(asyncio.current_task())
        VAR.set("task")
        value = await gate
        seen.append(asyncio.current_task())
        return f"{value} {VAR.get()}"

    caller = asyncio.current_task()
    task = start_now(work(), name="eager-1")
    assert seen == [task]  # ran already, as the new task (not as the caller)
    assert asyncio.current_task() is caller and VAR.get() == "caller"  # nothing leaked
    assert task.get_name() == "eager-1" and not task.done()
    gate.set_result("done")
    assert await task == "done task"
    assert seen == [task, task]


async def test_a_coroutine_that_never_waits_and_one_that_raises() -> None:
    async def at_once() -> int:
        return 7

    async def fails() -> None:
        raise ValueError("boom")

    assert await start_now(at_once()) == 7
    with pytest.raises(ValueError, match="boom"):
        await start_now(fails())


async def test_awaits_after_the_first_step_work_as_in_any_task() -> None:
    steps: list[str] = []

    async def inner() -> str:
        await asyncio.sleep(0)  # (a bare yield)
        return "inner"

    async def work() -> list[str]:
        steps.append("a")
        steps.append(await inner())
        await asyncio.sleep(0.001)
        try:
            await asyncio.wait_for(asyncio.sleep(1), 0.001)  # a timeout cancels *this* task
        except TimeoutError:
            steps.append("timed out")
        return steps

    assert await start_now(work()) == ["a", "inner", "timed out"]


@pytest.mark.parametrize("ran", [True, False], ids=["while-waiting", "before-its-own-step"])
async def test_a_cancelled_task_cancels_or_closes_the_coroutine(ran: bool) -> None:
    """Cancelled while it waits, the coroutine sees the cancellation; cancelled before the
    loop ran the task at all, it is closed: its ``finally`` runs either way, in its context
    (a copy of the caller's)."""
    cleaned: list[str] = []

    async def work() -> None:
        try:
            await asyncio.sleep(10)
        finally:
            cleaned.append(VAR.get())

    VAR.set("outer")
    task = start_now(work())
    if ran:
        await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert cleaned == ["outer"]


def test_from_a_callback_with_no_task_running() -> None:
    async def main() -> str:
        loop = asyncio.get_running_loop()
        made: asyncio.Future[asyncio.Task[str]] = loop.create_future()

        async def work() -> str:
            await asyncio.sleep(0)
            return "ok"

        loop.call_soon(lambda: made.set_result(start_now(work())))
        return await (await made)

    assert asyncio.run(main()) == "ok"


async def test_the_inbox_handles_a_stored_update_before_the_loop_turns(tmp_path: Path) -> None:
    """Issue 32: an update stored by the poller is handled at once, in a task of its own
    (the handler applies a move and sends the answer before the loop's next turn: behind
    everything ready, that turn was 2-7 ms of the slowest answers)."""
    handled: list[tuple[int, object]] = []

    class App:
        running = True
        bot = None
        update_processor = PerChatUpdateProcessor()

        async def process_update(self, update: Update) -> None:
            handled.append((update.update_id, asyncio.current_task()))
            await asyncio.sleep(0)

    db = await open_database(tmp_path / "inbox.db")
    try:
        inbox = Inbox(App(), db)  # type: ignore[arg-type]
        await inbox.resume()
        turned: list[bool] = []
        asyncio.get_running_loop().call_soon(turned.append, True)
        poller = asyncio.current_task()
        await inbox.receive(Update(update_id=41))
        assert [u for u, _ in handled] == [41] and not turned
        assert handled[0][1] is not poller  # (its own task)
        await inbox.stop(5.0)
        assert await storage_inbox.pending_updates(db) == []  # marked handled
    finally:
        await db.close()
