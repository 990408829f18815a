"""A task whose first step runs at once (issue 32: the press's answer without a turn of
the event loop between the update stored and its handling).

``loop.create_task(coro)`` runs ``coro``'s first step at the loop's next turn, behind
every callback ready at that moment: on a busy loop, a press stored by the poller waited
there before its handler could apply the move and send the answer (measured at 200
tables: 0.5-1 ms on average, 2-7 ms for the slowest tenth of the presses). A task started
with :func:`start_now` runs its first step right here instead, up to its first real wait
(a move's path has none before the answer's request is written), then goes on as any
task. This is Python 3.12's eager task start (``asyncio.Task(..., eager_start=True)``);
on Python 3.11 the same is done with the two functions 3.12 uses for it
(``asyncio.tasks._enter_task``/``_leave_task``): during the first step
``asyncio.current_task()`` is the new task (timeouts, cancellation and the database's
transactions belong to it, not to the caller), and its context is a copy of the caller's
(nothing it sets leaks back).
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import logging
import sys
import types
from collections.abc import Coroutine, Generator
from typing import Any, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

#: The outcome of one step of a coroutine: ("yield", what it waits for), ("return",
#: its value) or ("raise", its exception).
_Step = tuple[str, Any]


def start_now(coro: Coroutine[Any, Any, T], *, name: str | None = None) -> asyncio.Task[T]:
    """A task running ``coro``, whose first step has run when this returns (see the
    module's docstring). Must be called from the event loop's thread, in a task or a
    callback."""
    loop = asyncio.get_running_loop()
    if sys.version_info >= (3, 12):  # pragma: no cover - the project runs on 3.11 today
        return asyncio.Task(coro, loop=loop, name=name,  # type: ignore[call-arg]
                            eager_start=True)
    context = contextvars.copy_context()
    first: list[_Step] = []
    task = loop.create_task(_rest(coro, first), name=name, context=context)
    task.add_done_callback(lambda _: _close_unfinished(coro, context))
    caller = asyncio.current_task(loop)
    if caller is not None:
        asyncio.tasks._leave_task(loop, caller)
    asyncio.tasks._enter_task(loop, task)
    try:
        first.append(context.run(_send, coro, None))
    finally:
        asyncio.tasks._leave_task(loop, task)
        if caller is not None:
            asyncio.tasks._enter_task(loop, caller)
    return task


def _send(coro: Coroutine[Any, Any, Any], value: Any) -> _Step:
    try:
        return "yield", coro.send(value)
    except StopIteration as stop:
        return "return", stop.value
    except BaseException as exc:  # (the task raises it, as if raised in its first step)
        return "raise", exc


def _throw(coro: Coroutine[Any, Any, Any], exc: BaseException) -> _Step:
    try:
        return "yield", coro.throw(exc)
    except StopIteration as stop:
        return "return", stop.value
    except BaseException as raised:
        return "raise", raised


async def _rest(coro: Coroutine[Any, Any, T], first: list[_Step]) -> T:
    """The task's own coroutine: ``coro`` from where its first step left it."""
    result: T = await _resume(coro, first[0])
    return result


@types.coroutine
def _resume(coro: Coroutine[Any, Any, Any], step: _Step) -> Generator[Any, Any, Any]:
    """What ``await coro`` would do, for a coroutine already started: what it waits for
    goes to the task, what the task sends or throws goes to it."""
    while True:
        kind, value = step
        if kind == "return":
            return value
        if kind == "raise":
            raise value
        try:
            sent = yield value
        except GeneratorExit:
            coro.close()
            raise
        except BaseException as exc:  # (the task's cancellation, a failed future's error)
            step = _throw(coro, exc)
        else:
            step = _send(coro, sent)


def _close_unfinished(coro: Coroutine[Any, Any, Any], context: contextvars.Context) -> None:
    """The task ended without finishing ``coro`` (cancelled before its own first step
    ran): ``coro`` is closed, so that its ``finally`` blocks run now, in its context."""
    if inspect.getcoroutinestate(coro) == inspect.CORO_CLOSED:
        return
    try:
        context.run(coro.close)
    except RuntimeError:  # it waited again while closing
        log.exception("a task cancelled before it ran could not be closed cleanly")
