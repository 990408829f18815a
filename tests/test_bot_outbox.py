"""The outbox on its own (a recording stand-in for the Bot): coalescing, delays, pacing
per private chat, and groups that became supergroups."""

from __future__ import annotations

import asyncio
import itertools
import time
from typing import Any

import pytest
from telegram import Chat, Message
from telegram.error import ChatMigrated, NetworkError

from bot.aiohttp_request import Fenced
from bot.budget import Priority
from bot.outbox import Outbox, PacedRateLimiter

RATE = 20.0  # calls per second per chat: 50 ms apart


class RecordingBot:
    def __init__(self, migrated: dict[int, int] | None = None) -> None:
        self.calls: list[tuple[float, str, int, Any]] = []
        self.migrated = migrated or {}
        self.next_id = 100

    async def send_message(self, chat_id: int, text: str, **kwargs: Any) -> Message:
        if chat_id in self.migrated:
            raise ChatMigrated(self.migrated[chat_id])
        self.calls.append((time.monotonic(), "send", chat_id, text))
        self.next_id += 1
        return Message(self.next_id, None, Chat(chat_id, "private"), text=text)  # type: ignore[arg-type]

    async def edit_message_text(self, text: str, chat_id: int, message_id: int, **kw: Any) -> None:
        if chat_id in self.migrated:
            raise ChatMigrated(self.migrated[chat_id])
        self.calls.append((time.monotonic(), "edit", chat_id, text))

    async def edit_message_reply_markup(self, chat_id: int, message_id: int, **kw: Any) -> None:
        self.calls.append((time.monotonic(), "markup", chat_id, None))


def outbox(bot: RecordingBot, **kw: Any) -> Outbox:
    return Outbox(bot, chat_rate=RATE, chat_burst=2, private_burst=1,  # type: ignore[arg-type]
                  group_per_minute=1000, **kw)


async def test_bursts_become_one_edit_and_private_chats_are_paced() -> None:
    bot = RecordingBot()
    box = outbox(bot)
    for i in range(10):  # ten moves in a row: only the last content is sent
        box.edit(7, 1, f"state {i}")
    box.edit(7, 2, "other message")
    await box.drain()
    assert [c[3] for c in bot.calls] == ["state 9", "other message"]
    for i in range(5):
        box.edit(7, 1, f"again {i}")
        await asyncio.sleep(0.03)  # faster than the chat's budget
    await box.drain()
    times = [c[0] for c in bot.calls]
    assert min(b - a for a, b in itertools.pairwise(times)) >= 1 / RATE * 0.95
    assert bot.calls[-1][3] == "again 4"  # the latest content always wins
    box.edit(7, 1, "again 4")  # identical: nothing to do
    await box.drain()
    assert bot.calls[-1][3] == "again 4" and len(bot.calls) == len(times)
    await box.close()


async def test_only_the_content_sent_is_told_shown() -> None:
    """``edit(shown=...)``: called once the message shows that content; not for a content
    replaced before it went (the renderer counts what the group's table has shown)."""
    bot = RecordingBot()
    box = outbox(bot)
    told: list[str] = []
    box.edit(7, 1, "first", shown=lambda: told.append("first"))
    box.edit(7, 1, "second", shown=lambda: told.append("second"))
    await box.drain()
    assert [c[3] for c in bot.calls] == ["second"] and told == ["second"]
    box.edit(7, 1, "second", shown=lambda: told.append("again"))  # (shows it already)
    box.edit(7, 1, "later", delay=60, shown=lambda: told.append("later"))
    await asyncio.sleep(0.1)
    assert told == ["second", "again"]  # the held one is not shown yet
    await box.close()


async def test_delayed_edits_wait_unless_something_urgent_comes() -> None:
    bot = RecordingBot()
    box = outbox(bot)
    start = time.monotonic()
    box.edit(8, 1, "the others played", delay=0.3)
    await asyncio.sleep(0.1)
    assert bot.calls == []  # still waiting, collecting changes
    box.edit(8, 1, "and one more", delay=0.3)  # does not push the deadline further
    await box.drain()
    assert [c[3] for c in bot.calls] == ["and one more"]
    assert 0.28 <= bot.calls[0][0] - start < 0.45

    box.edit(8, 1, "later", delay=5)
    await asyncio.sleep(0.05)
    box.edit(8, 1, "your turn")  # urgent: goes now and replaces the delayed one
    await asyncio.wait_for(box.drain(), 1)
    assert [c[3] for c in bot.calls][-1] == "your turn" and len(bot.calls) == 2
    await box.close()


async def test_a_withdrawn_edit_is_not_sent_and_the_message_still_known() -> None:
    """``withdraw``: a player whose Mini App page opened gets no redraw asked before it;
    what the message shows is still known (the same content asked again sends nothing,
    another content goes)."""
    bot = RecordingBot()
    box = outbox(bot)
    box.edit(8, 1, "shown")
    await box.drain()
    box.edit(8, 1, "the others played", delay=0.2)
    box.withdraw(8, 1)
    await asyncio.sleep(0.4)
    await box.drain()
    assert [c[3] for c in bot.calls] == ["shown"]
    box.edit(8, 1, "shown")
    await box.drain()
    assert len(bot.calls) == 1
    box.edit(8, 1, "back in the chat")
    await box.drain()
    assert [c[3] for c in bot.calls] == ["shown", "back in the chat"]
    await box.close()


async def test_migrated_group_sends_go_to_the_new_id_and_old_edits_stop() -> None:
    bot = RecordingBot(migrated={-5: -1005})
    told: list[tuple[int, int]] = []

    async def on_migrated(old: int, new: int) -> None:
        told.append((old, new))

    box = outbox(bot, on_migrated=on_migrated)
    msg = await box.send(-5, "result")
    assert msg is not None and msg.chat.id == -1005 and box.resolve(-5) == -1005
    await box.drain()
    assert told == [(-5, -1005)]
    box.edit(-5, 3, "old table")  # a message of the old chat: read-only now
    await box.send(-5, "next")
    await box.drain()
    assert [(c[1], c[2], c[3]) for c in bot.calls] == [
        ("send", -1005, "result"), ("send", -1005, "next")
    ]
    await box.close()


class FlakyBot(RecordingBot):
    """Fails the first ``failures`` calls of each kind with a network error (5xx)."""

    def __init__(self, failures: int) -> None:
        super().__init__()
        self.left = {"send": failures, "edit": failures}

    def _maybe_fail(self, kind: str) -> None:
        if self.left[kind] > 0:
            self.left[kind] -= 1
            self.calls.append((time.monotonic(), f"failed {kind}", 0, None))
            raise NetworkError("Bad Gateway")

    async def send_message(self, chat_id: int, text: str, **kwargs: Any) -> Message:
        self._maybe_fail("send")
        return await super().send_message(chat_id, text, **kwargs)

    async def edit_message_text(self, text: str, chat_id: int, message_id: int, **kw: Any) -> None:
        self._maybe_fail("edit")
        await super().edit_message_text(text, chat_id, message_id, **kw)


async def test_an_edit_that_failed_with_a_network_error_is_retried_with_backoff() -> None:
    bot = FlakyBot(failures=3)
    box = outbox(bot)
    await box.edit_now(7, 1, "your turn")  # fails: kept wanted, retried by the flusher
    await box.drain(5)
    kinds = [c[1] for c in bot.calls]
    assert kinds == ["failed edit"] * 3 + ["edit"] and bot.calls[-1][3] == "your turn"
    gaps = [b[0] - a[0] for a, b in itertools.pairwise(bot.calls)]
    assert gaps[1] > gaps[0] * 1.5  # backing off
    assert box.pending() == 0
    await box.close()


async def test_a_send_that_failed_with_a_network_error_is_retried_a_few_times() -> None:
    box = outbox(FlakyBot(failures=2))
    msg = await box.send(7, "table")
    assert msg is not None and msg.text == "table"
    box = outbox(FlakyBot(failures=10))
    with pytest.raises(NetworkError):  # bounded: the caller schedules a redraw
        await box.send(7, "table")
    await box.close()


class FencedBot(RecordingBot):
    """This instance lost the database lock: every Bot API call is refused before it goes."""

    async def send_message(self, chat_id: int, text: str, **kwargs: Any) -> Message:
        self.calls.append((time.monotonic(), "refused send", chat_id, text))
        raise Fenced("not sent (sendMessage): this instance is not active")

    async def edit_message_text(self, text: str, chat_id: int, message_id: int, **kw: Any) -> None:
        self.calls.append((time.monotonic(), "refused edit", chat_id, text))
        raise Fenced("not sent (editMessageText): this instance is not active")


async def test_a_call_refused_by_the_fence_is_dropped_silently(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Fenced (another instance is active now): an edit or a send is neither tried again
    nor logged; the active instance redraws what this one did not show."""
    bot = FencedBot()
    box = outbox(bot)
    with caplog.at_level("DEBUG", logger="bot.outbox"):
        await box.edit_now(7, 1, "your turn")
        assert await box.send(8, "table") is None
        await box.drain(1)
        await asyncio.sleep(0.3)  # a retry would come after 0.25 s
    assert [c[1] for c in bot.calls] == ["refused edit", "refused send"]
    assert box.pending() == 0
    assert [r.getMessage() for r in caplog.records if r.levelno >= 20] == []
    await box.close()


async def test_calls_outside_the_message_budget_do_not_queue_behind_messages() -> None:
    """A chat action (the private probe of a player joining) or a delete is not a message:
    it must not wait in the overall message budget behind the edits of other tables."""
    limiter = PacedRateLimiter(overall_max_rate=1, overall_time_period=30, max_retries=0)
    await limiter.initialize()
    calls: list[str] = []

    async def call(name: str) -> str:
        calls.append(name)
        return name

    async def request(endpoint: str, chat_id: int) -> Any:
        return await limiter.process_request(
            call, (endpoint,), {}, endpoint, {"chat_id": chat_id}, None
        )

    await request("editMessageText", -1)  # the budget: one message per 30 s, now spent
    queued = asyncio.create_task(request("sendMessage", -2))
    await asyncio.sleep(0.1)
    assert not queued.done()  # a message waits for the budget...
    assert await asyncio.wait_for(request("sendChatAction", 7), 5) == "sendChatAction"
    assert await asyncio.wait_for(request("deleteMessage", -2), 5) == "deleteMessage"
    assert calls == ["editMessageText", "sendChatAction", "deleteMessage"]  # ...these not
    queued.cancel()
    await limiter.shutdown()


class GatedBot(RecordingBot):
    """Edits of a chat wait until the test opens that chat's gate."""

    def __init__(self) -> None:
        super().__init__()
        self.gates: dict[int, asyncio.Event] = {}

    async def edit_message_text(self, text: str, chat_id: int, message_id: int, **kw: Any) -> None:
        await self.gates.setdefault(chat_id, asyncio.Event()).wait()
        await super().edit_message_text(text, chat_id, message_id, **kw)


async def test_settled_waits_for_its_chats_edits_and_is_woken_by_them() -> None:
    bot = GatedBot()
    box = outbox(bot)
    box.edit(7, 1, "table of game A")
    box.edit(8, 1, "table of game B")
    box.edit(9, 1, "hand in game B")
    waiter = asyncio.create_task(box.settled({8, 9}, poll=60))  # the fallback never fires
    await asyncio.sleep(0.05)
    assert box.busy(7) and box.busy(8) and box.busy(9)
    bot.gates[7].set()  # another game's edit is delivered: not settled
    await asyncio.sleep(0.05)
    assert not box.busy(7) and not waiter.done()
    bot.gates[8].set()
    await asyncio.sleep(0.05)
    assert not waiter.done()  # chat 9 still being sent
    bot.gates[9].set()
    await asyncio.wait_for(waiter, 2)  # woken by the edit, not by the 60 s poll
    assert not box.busy(8) and not box.busy(9)
    assert await asyncio.wait_for(box.settled({7, 8, 9}), 1) is None  # nothing wanted: at once
    await box.close()


# --------------------------------------------------------------------------- delivery model


async def test_sends_waiting_for_a_dropped_chat_do_not_go_out_later_ones_do() -> None:
    """The bot removed from a group: the messages already waiting for the group's pace
    are not sent (each would be one more refused call); once added again, it sends."""
    bot = RecordingBot()
    box = Outbox(bot, chat_rate=1000, group_per_minute=60, window_seconds=3.0,  # type: ignore[arg-type]
                 chat_burst=1)
    box.pacer._started -= 10  # not a restart
    first = await box.send(-5, "table")
    assert first is not None
    waiting = [asyncio.create_task(box.send(-5, f"later {i}")) for i in range(3)]
    await asyncio.sleep(0.01)  # they wait for the group's pace (one call per 50 ms)
    box.drop_chat(-5)
    assert await asyncio.gather(*waiting) == [None, None, None]
    assert [c[3] for c in bot.calls] == ["table"]
    again = await box.send(-5, "new lobby")
    assert again is not None and [c[3] for c in bot.calls] == ["table", "new lobby"]
    await box.close()


async def test_a_group_is_paced_evenly_not_burst_then_wait() -> None:
    bot = RecordingBot()
    box = Outbox(bot, chat_rate=1000, group_per_minute=60, window_seconds=3.0,  # type: ignore[arg-type]
                 chat_burst=2)
    box.pacer._started -= 10  # not a restart
    interval = box.interval(-5)
    assert interval == pytest.approx(0.05)
    for i in range(6):
        box.edit(-5, 100 + i, f"table {i}")
    await box.drain(5)
    times = [c[0] for c in bot.calls]
    assert len(times) == 6
    # an idle group may send two at once (chat_burst=2), then one per interval: never
    # more than 1 + k calls in k intervals
    for i, j in itertools.combinations(range(len(times)), 2):
        assert times[j] - times[i] >= (j - i - 1) * interval * 0.95, (i, j, times)
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert max(gaps) < interval * 3  # and no long silence
    await box.close()


async def test_the_pressed_message_then_the_seat_in_turn_then_tables_then_idle_hands() -> None:
    bot = RecordingBot()
    box = Outbox(bot, chat_rate=1000, messages_per_second=20)  # type: ignore[arg-type]
    box.pacer._started -= 100
    box.budget.burst = 1.0
    await box.budget.acquire(0)  # the budget is busy for the next 50 ms
    for chat in (1, 2, 3):
        box.edit(chat, 1, f"idle hand {chat}", priority=Priority.IDLE)
    box.edit(-4, 1, "group table", priority=Priority.TABLE)
    box.edit(5, 1, "your turn", priority=Priority.TURN)
    box.edit(6, 1, "idle hand 6", priority=Priority.IDLE)
    box.edit(6, 1, "idle hand 6, now your turn", priority=Priority.TURN)  # promoted while waiting
    box.edit(7, 1, "your own press", priority=Priority.PRESSED)  # asked for last, goes first
    await box.drain(5)
    order = [c[3] for c in bot.calls]
    assert order[0] == "your own press"
    assert set(order[1:3]) == {"your turn", "idle hand 6, now your turn"}
    assert order[3] == "group table"
    assert sorted(order[4:]) == ["idle hand 1", "idle hand 2", "idle hand 3"]
    await box.close()


async def test_a_retired_message_is_never_edited_and_deleted_after_the_edit_in_flight() -> None:
    bot = GatedBot()
    box = outbox(bot)
    box.edit(7, 1, "old hand")
    await asyncio.sleep(0.05)  # in flight, held by the gate
    box.edit(7, 1, "newer content")
    box.retire(7, 1)  # /mano: the hand is re-sent as a new message
    box.edit(7, 1, "queued after the re-send")
    released = asyncio.create_task(box.released(7, 1))
    await asyncio.sleep(0.05)
    assert not released.done()  # the edit in flight lands before the delete
    bot.gates[7].set()
    await asyncio.wait_for(released, 2)
    await box.drain(2)
    assert [c[3] for c in bot.calls] == ["old hand"]
    await box.close()


def test_after_a_restart_a_chat_is_paced_as_if_its_budget_had_been_used() -> None:
    from bot.budget import ChatPace

    pace = ChatPace(interval=60 / 18, per_window=18, window=60)
    pace.assume_used(1000.0)
    assert pace.ready_at(1000.0) == pytest.approx(1000.0)  # one call at once
    first = pace.reserve(1000.0)
    second = pace.reserve(1000.0)
    assert second - first == pytest.approx(60 / 18)
    calls = [first, second] + [pace.reserve(1000.0) for _ in range(30)]
    assumed = [1000.0 - i * 60 / 18 for i in range(1, 19)]
    every = sorted(assumed + calls)
    worst = max(sum(1 for t in every if s <= t < s + 60 - 1e-6) for s in every)
    assert worst <= 18  # Telegram's rolling minute never sees more than the budget


def test_a_call_beyond_the_burst_waits_for_the_jitter_after_its_slot() -> None:
    """A private chat (a call a second, two at once): the presser's call beyond the burst
    (keep -1) goes at once after an idle spell; right after a steady run of calls it goes
    ``ARRIVAL_JITTER`` after its slot (a 429 in the suite: the call before it reached the
    server late), not at the chat's steady pace (the every-press browser test: a card
    waited a second)."""
    from bot.budget import ARRIVAL_JITTER, ChatPace

    idle = ChatPace(interval=1.0, burst=2)
    idle.reserve(0.0)  # (its first call, long before)
    turn, pressed = idle.reserve(10.0), idle.reserve(10.1)
    assert (turn, pressed) == (10.0, 10.1)  # the burst of two
    assert idle.ready_at(10.2, keep=-1) == 10.2  # one beyond it, at once
    assert idle.ready_at(10.2) > 10.2  # (any other call: the pace)

    steady = ChatPace(interval=1.0, burst=2)
    for second in range(10):
        steady.reserve(float(second))  # one a second, for ten seconds
    steady.reserve(9.0)  # (the burst's second call)
    assert steady.ready_at(9.0, keep=-1) == pytest.approx(9.0 + ARRIVAL_JITTER)
    assert steady.ready_at(9.0) == pytest.approx(10.0)  # (the steady pace)


def _calls_refused(interval: float, server_rate: float, delay: float, seed: int) -> int:
    """A private chat's flusher at ``interval`` (burst 2, the presser one beyond it), its
    calls reaching the fake server's bucket (3 at once, ``server_rate`` a second) up to
    ``delay`` after their slot; how many the server refuses (429)."""
    import random

    from bot.budget import ChatPace
    from bot.outbox.edits import PRESSED_EXTRA, PRESSED_KEEPS
    from sandbox.fakeapi.errors import ApiError
    from sandbox.fakeapi.limits import FloodController, FloodLimits

    rng = random.Random(seed)
    pace = ChatPace(interval=interval, burst=2)
    now, arrivals = 0.0, []
    for _ in range(2000):
        now += rng.choice([0.0, 0.0, 0.1, 0.5, 1.0, 3.0]) * interval
        keep = -PRESSED_EXTRA if rng.random() < 0.4 else PRESSED_KEEPS
        now = pace.ready_at(now, keep)  # (the flusher sleeps until then)
        pace.reserve(now)
        arrivals.append(now + rng.uniform(0.0, delay))
    clock = [0.0]
    server = FloodController(FloodLimits(chat_rate=server_rate), clock=lambda: clock[0])
    refused = 0
    for at in sorted(arrivals):
        clock[0] = at
        try:
            server.acquire("editMessageText", 1, is_group=False)
        except ApiError:
            refused += 1
    return refused


@pytest.mark.parametrize("scale", [1, 20], ids=["telegram", "suite"])
def test_calls_that_reach_telegram_late_by_the_jitter_are_not_refused(
    scale: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The private chat's pace (0.8 of Telegram's rate, two at once, the presser one
    beyond them) against the fake server's bucket, every call late by up to
    ``ARRIVAL_JITTER`` (at most an interval: the burst's other calls leave Telegram one
    call's room, an interval of lag, and no more), plus nine tenths of what the pace's
    lower rate leaves: none refused, at Telegram's rate and at the suite's twenty times.
    Without the jitter the same calls draw 429s."""
    import bot.budget

    interval, rate = 1 / (0.8 * scale), 1.0 * scale
    late = min(bot.budget.ARRIVAL_JITTER, interval) + 0.9 * (interval - 1 / rate)
    assert sum(_calls_refused(interval, rate, late, seed) for seed in range(5)) == 0
    monkeypatch.setattr(bot.budget, "ARRIVAL_JITTER", 0.0)
    assert sum(_calls_refused(interval, rate, late, seed) for seed in range(5)) > 0


def test_a_group_paced_before_the_pacing_was_read_follows_the_pacing_read() -> None:
    """Issue 46: a group whose first call after a restart came before the pacing kept
    across the restart was read was paced as if its budget had just been used, and the
    real calls were then merged into that assumption: its rolling window held 18 calls
    of which half were imagined, and its next edit waited half a minute."""
    from bot.outbox.pace import Pacer

    pacer = Pacer(group_per_minute=18, chat_rate=0.8, chat_burst=1, private_burst=2,
                  window_seconds=60, messages_per_second=27)
    now = time.monotonic()
    pace = pacer.pace(-5)  # (a press handled at once: its group's edit asked for)
    assert pace.ready_at(now) == pytest.approx(now, abs=0.01)
    interval = 60 / 18
    real = [now - 2 - interval * i for i in range(17)]  # the process before, evenly
    pacer.restore_pacing({-5: (now - 2 + interval, real)}, (now - 1.5, now - 1.0))
    assert pace.ready_at(now) == pytest.approx(now - 2 + interval, abs=0.01)
    first = pace.reserve(now)
    assert [pace.reserve(now) - first for _ in range(3)] == pytest.approx(
        [interval, 2 * interval, 3 * interval])  # then evenly, as before the restart
    # a call this process made before the pacing was read still counts
    pacer = Pacer(group_per_minute=18, chat_rate=0.8, chat_burst=1, private_burst=2,
                  window_seconds=60, messages_per_second=27)
    pace = pacer.pace(-6)
    made = pace.reserve(now)
    pacer.restore_pacing({-6: (now - 10, [now - 13.5])}, None)
    assert pace.ready_at(now) == pytest.approx(made + interval, abs=0.01)
    assert list(pace.sent) == [now - 13.5, made]


async def test_a_table_that_waited_takes_one_grant_in_three_ahead_of_the_turns() -> None:
    from bot.budget import GlobalBudget, Priority

    budget = GlobalBudget(100, table_wait=0.001, table_share=3)
    await budget.acquire(Priority.TURN)  # busy for the next 10 ms
    order: list[str] = []

    async def call(name: str, priority: int) -> None:
        await budget.acquire(priority)
        order.append(name)

    tasks = [asyncio.create_task(call("table", Priority.TABLE))]
    await asyncio.sleep(0)
    tasks += [asyncio.create_task(call(f"turn {i}", Priority.TURN)) for i in range(5)]
    await asyncio.wait_for(asyncio.gather(*tasks), 2)
    assert order[:3] == ["turn 0", "turn 1", "table"]  # not starved by the turns...
    assert order[3:] == ["turn 2", "turn 3", "turn 4"]  # ...nor ahead of them all
    await budget.close()


async def test_under_saturation_the_turns_keep_nine_grants_in_ten_stalest_table_first() -> None:
    """Many busy tables: the buttons of the seats in turn always waiting. The outbox's
    budget gives the group tables a tenth of the grants (one in three left the turns too
    little at 200 tables; one in five cost 0.49 group calls a move at 50 tables of fast
    players, issue 32), in the order they started waiting, and never none."""
    from bot.budget import Priority
    from bot.outbox.pace import TABLE_SHARE

    assert TABLE_SHARE == 10
    box = Outbox(RecordingBot(), messages_per_second=200)  # type: ignore[arg-type]
    budget = box.budget
    budget.burst = 1.0
    budget.table_wait = 0.001  # every table has waited a group interval already
    await budget.acquire(Priority.TURN)  # busy: everything below queues
    order: list[str] = []

    async def call(name: str, priority: int) -> None:
        await budget.acquire(priority)
        order.append(name)

    tasks = [asyncio.create_task(call(f"table {i}", Priority.TABLE)) for i in range(4)]
    # The tables queue first; the turns join before the busy 5 ms end, when the tables
    # have aged (on a loaded machine a stall of 5 ms before the tasks first run frees the
    # budget, and the first table goes at once, before any turn waits).
    await asyncio.sleep(0)
    tasks += [asyncio.create_task(call(f"turn {i}", Priority.TURN)) for i in range(36)]
    tasks.append(asyncio.create_task(call("idle hand", Priority.IDLE)))
    await asyncio.wait_for(asyncio.gather(*tasks), 5)
    tables = [i for i, name in enumerate(order) if name.startswith("table")]
    assert [order[i] for i in tables] == ["table 0", "table 1", "table 2", "table 3"]
    # one grant in ten while turns wait (the first table at once after a stall)
    assert tables in ([9, 19, 29, 39], [0, 10, 20, 30])
    assert [n for n in order if n.startswith("turn")] == [f"turn {i}" for i in range(36)]
    assert order[-1] == "idle hand"  # held while anything else waits
    await box.close()


async def test_what_a_message_shows_is_kept_across_a_restart(tmp_path: Any) -> None:
    """Issue 35: the digest of each accepted call is written at once; an outbox of the
    next process skips a redraw that would show the same, and makes one that differs
    (text and keyboard both count)."""
    from telegram import InlineKeyboardButton, InlineKeyboardMarkup

    from storage import open_database

    kb = InlineKeyboardMarkup([[InlineKeyboardButton("x", callback_data="a:1:2:x")]])
    db = await open_database(f"sqlite:///{tmp_path / 'digests.db'}")
    try:
        bot = RecordingBot()
        first = outbox(bot)
        await first.digests.open(db)
        sent = await first.send(7, "hand", kb)
        assert sent is not None
        first.edit(7, sent.message_id, "hand v2", kb)
        await first.drain()
        await first.close()  # (a SIGKILL would leave the database as it is now)
        assert [c[1] for c in bot.calls] == ["send", "edit"]

        bot = RecordingBot()
        second = outbox(bot)
        await second.digests.open(db)
        second.edit(7, sent.message_id, "hand v2", kb)  # shown already: nothing sent
        second.edit_markup(7, sent.message_id, kb, "hand v2")
        await second.drain()
        assert bot.calls == []
        second.edit_markup(7, sent.message_id, None, "hand v2")  # the keyboard goes
        await second.drain()
        second.edit(7, sent.message_id, "hand v3")
        await second.drain()
        assert [c[1] for c in bot.calls] == ["markup", "edit"]
        await second.close()
    finally:
        await db.close()


class RefusingDatabase:
    """A database whose every transaction fails with ``error``."""

    def __init__(self, error: Exception) -> None:
        self.error = error
        self.attempts = 0

    async def run_transaction(self, fn: Any) -> None:
        self.attempts += 1
        raise self.error


@pytest.mark.parametrize(("code", "warned"), [("fenced", False), ("unavailable", True)])
async def test_a_failed_pacing_save_is_kept_and_warned_except_when_fenced(
    code: str, warned: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """A save the database refuses keeps the changes for the next save and says so in
    the log; when the refusal is the fence (this instance stopped being the active one,
    its tasks are being cancelled) nothing of the active period may log."""
    from bot.tables.pacing import PaceKeeper
    from storage import StorageUnavailable

    bot = RecordingBot()
    box = outbox(bot)
    box.edit(7, 1, "a call")
    await box.drain()
    db = RefusingDatabase(StorageUnavailable("refused", code=code))
    keeper = PaceKeeper(db, box)  # type: ignore[arg-type]
    with caplog.at_level("WARNING", logger="bot.tables.pacing"):
        await keeper.save()
        await keeper.save()  # the kept changes are tried again, nothing new needed
    assert db.attempts == 2
    assert any("pacing not saved" in r.getMessage() for r in caplog.records) is warned


async def test_a_waiting_send_is_promoted_and_one_nobody_wants_is_not_made() -> None:
    """Issue 32: a new message waiting for the bot's budget at a table's rank goes as a
    turn's once promoted (a new hand whose player's turn came meanwhile), before the
    table calls that waited longer; a send whose ``wanted()`` says no when its call is
    granted is not made (its player opened the Mini App meanwhile) and gives the call
    back to the next one waiting."""
    bot = RecordingBot()
    # (5 a second: the promotion below must come within one call's interval of the
    # budget's being taken; at 50 a second, 20 ms, a loaded machine's .ci/run missed it)
    box = Outbox(bot, messages_per_second=5)  # type: ignore[arg-type]
    box.pacer._started -= 100  # (not a restart: no chat's budget taken as used)
    box.budget.burst = 1.0
    await box.budget.acquire(Priority.TURN)  # busy: everything below queues
    tables = [asyncio.create_task(box.send(-(100 + i), f"table {i}")) for i in range(3)]
    wanted = {"hand 7": True, "hand 8": False}
    hands = [asyncio.create_task(box.send(user, f"hand {user}", priority=Priority.TABLE,
                                          wanted=lambda user=user: wanted[f"hand {user}"]))
             for user in (7, 8)]
    await asyncio.sleep(0)
    box.promote(7, Priority.TURN)
    box.promote(9, Priority.TURN)  # (no send waiting there: nothing)
    sent = await asyncio.wait_for(asyncio.gather(*tables, *hands), 5)
    assert [c[3] for c in bot.calls] == ["hand 7", "table 0", "table 1", "table 2"]
    assert sent[-1] is None and box.stats["sends_not_wanted"] == 1
    assert box.stats["private_sends"] == 1 and box.stats["group_sends"] == 3
    await box.close()


def _granted_in_order(budget: Any, order: list[str]) -> Any:
    """A call that waits for ``budget`` at a rank (due to go first at ``overdue_at``)
    and records its name in ``order`` when granted."""

    async def call(name: str, priority: int, overdue_at: float = float("inf")) -> None:
        waiter = budget.waiter(priority)
        waiter.overdue_at = overdue_at
        await budget.acquire(priority, waiter)
        order.append(name)

    return call


async def test_a_due_group_redraw_goes_before_the_turns_whatever_its_rank() -> None:
    """Issue 46 (starvation-free): a group's redraw comes due a fixed time after the
    group's last call; then it goes before every call but the presser's own message, at
    the lowest rank too (a table with a player in the Mini App), one grant in
    ``table_share`` while turns wait, the one due first first; not due, it waits behind
    the turns as its rank says."""
    from bot.budget import GlobalBudget

    budget = GlobalBudget(10, table_wait=0, table_share=3)
    await budget.acquire(Priority.TURN)  # busy for the next 100 ms: everything below queues
    order: list[str] = []
    call = _granted_in_order(budget, order)

    now = time.monotonic()
    tasks = [asyncio.create_task(call("late group", Priority.IDLE, now - 1.0)),
             asyncio.create_task(call("later group", Priority.TABLE, now - 0.5)),
             asyncio.create_task(call("group not due", Priority.TABLE, now + 60)),
             asyncio.create_task(call("idle hand", Priority.IDLE))]
    tasks += [asyncio.create_task(call(f"turn {i}", Priority.TURN)) for i in range(6)]
    tasks.append(asyncio.create_task(call("pressed", Priority.PRESSED)))
    await asyncio.wait_for(asyncio.gather(*tasks), 5)
    # (the presser's own message counts as a turn's grant)
    assert order == ["pressed", "turn 0", "late group", "turn 1", "turn 2", "later group",
                     "turn 3", "turn 4", "turn 5", "group not due", "idle hand"]
    await budget.close()


async def test_with_no_turn_waiting_a_due_group_goes_before_the_other_tables() -> None:
    from bot.budget import GlobalBudget

    budget = GlobalBudget(10, table_wait=0, table_share=10)
    await budget.acquire(Priority.TURN)  # busy for the next 100 ms: everything below queues
    order: list[str] = []
    call = _granted_in_order(budget, order)

    now = time.monotonic()
    tasks = [asyncio.create_task(call(f"table {i}", Priority.TABLE, now + 60))
             for i in range(3)]
    tasks.append(asyncio.create_task(call("due idle group", Priority.IDLE, now - 1)))
    await asyncio.wait_for(asyncio.gather(*tasks), 5)
    assert order == ["due idle group", "table 0", "table 1", "table 2"]
    await budget.close()


async def test_a_group_redraw_comes_due_from_the_groups_last_call() -> None:
    """The outbox sets a group's redraw due from the group's last call (kept across a
    restart): a group not called for longer than that goes before the turns."""
    from bot.outbox.pace import GROUP_OVERDUE_SECONDS

    box = Outbox(RecordingBot(), messages_per_second=100)  # type: ignore[arg-type]
    box.pacer._started -= 100
    now = time.monotonic()
    box.restore_pacing({-1: (now - 1, [now - 10]), -2: (now - 1, [now - 1.5])}, None)
    assert box.pacer.overdue_at(-1) == pytest.approx(now - 10 + GROUP_OVERDUE_SECONDS)
    assert box.pacer.overdue_at(-2) == pytest.approx(now - 1.5 + GROUP_OVERDUE_SECONDS)
    assert box.pacer.overdue_at(-3) == float("-inf")  # no call known: due at once
    await box.close()


async def test_a_new_message_waits_in_line_with_the_chats_edits() -> None:
    """Issue 46: a group's new messages and its edits share one line, by rank, then by
    when they were asked for. At a smazzata's end the old table's closing edit is asked
    for first, then the result and the new table are sent: the closing edit goes first
    (a send used to take the chat's next call at once, ahead of every edit waiting: the
    last trick was shown two group calls late, and a group with sends in a row got no
    edit meanwhile)."""
    bot = RecordingBot()
    box = Outbox(bot, group_per_minute=600, messages_per_second=100)  # type: ignore[arg-type]
    box.pacer._started -= 100
    box.edit(-5, 1, "table before")
    await box.drain(2)  # the group's call just made: the next ones wait for its pace
    box.edit(-5, 1, "closing edit: the last trick")
    results = asyncio.create_task(box.send(-5, "results"))
    await asyncio.sleep(0)
    box.edit(-5, 2, "another edit, asked later")
    table = asyncio.create_task(box.send(-5, "new table", priority=Priority.TURN))
    await asyncio.wait_for(asyncio.gather(results, table), 5)
    await box.drain(2)
    assert [c[3] for c in bot.calls] == [
        "table before", "new table", "closing edit: the last trick", "results",
        "another edit, asked later"]
    times = [c[0] for c in bot.calls]
    assert min(b - a for a, b in itertools.pairwise(times)) >= 0.1 * 0.95  # (its pace)
    await box.close()


async def test_the_pressed_message_never_waits_for_its_chats_pace() -> None:
    """Issue 46: a private chat may take a burst of two calls; its calls other than the
    presser's own message leave the second one to it, so the press is shown at once even
    right after the chat's other calls (alone against the computers their redraws used
    the chat's calls up, and a card was shown a computer's pause late)."""
    bot = RecordingBot()
    box = Outbox(bot, chat_rate=2, private_burst=2, messages_per_second=100)  # type: ignore[arg-type]
    box.pacer._started -= 100
    box.edit(7, 1, "a computer's move", priority=Priority.TURN)
    await box.drain(2)
    box.edit(7, 1, "the next computer's move", priority=Priority.TURN)  # waits its pace
    await asyncio.sleep(0.1)
    pressed_at = time.monotonic()
    box.edit(7, 2, "your card played", priority=Priority.PRESSED)
    await box.drain(2)
    calls = [(c[3], round(c[0] - pressed_at, 2)) for c in bot.calls[1:]]
    assert calls[0][0] == "your card played" and calls[0][1] < 0.05, calls
    assert calls[1][0] == "the next computer's move" and calls[1][1] >= 0.35, calls
    await box.close()


async def test_two_presses_in_a_row_are_both_shown_at_once() -> None:
    """Issue 46: a player whose card wins the trick leads the next one at once, two
    presses within a fraction of a second, right after their turn's call; the second
    press's redraw waited for the chat's next slot (1.0-1.1 s in the sandbox's browser
    test). It may take one call beyond the burst, ``ARRIVAL_JITTER`` after its slot (the
    turn's call); the calls after it keep the pace."""
    from bot.budget import ARRIVAL_JITTER

    bot = RecordingBot()
    box = Outbox(bot, chat_rate=2, private_burst=2, messages_per_second=100)  # type: ignore[arg-type]
    box.pacer._started -= 100
    box.edit(7, 1, "your turn", priority=Priority.TURN)
    await box.drain(2)
    started = time.monotonic()
    box.edit(7, 1, "your card played: you lead", priority=Priority.PRESSED)
    await box.drain(2)
    await asyncio.sleep(0.05)
    box.edit(7, 1, "your lead played", priority=Priority.PRESSED)
    await box.drain(2)
    box.edit(7, 1, "a computer's move", priority=Priority.TURN)
    await box.drain(2)
    calls = [(c[3], round(c[0] - started, 2)) for c in bot.calls[1:]]
    assert [text for text, _ in calls] == [
        "your card played: you lead", "your lead played", "a computer's move"]
    assert calls[0][1] < 0.05 and calls[1][1] < ARRIVAL_JITTER + 0.05, calls  # at once
    assert calls[2][1] >= 3 * 0.5 - 0.1, calls  # the pace: 4 calls took 4 intervals' room
    await box.close()


@pytest.mark.parametrize(("setting", "interval"), [(None, 1.25), (5.0, 0.2)])
async def test_a_private_chats_pace_is_the_private_messages_per_second_setting(
    tg: Any, tmp_path: Any, setting: float | None, interval: float
) -> None:
    """PRIVATE_MESSAGES_PER_SECOND paces each private chat (0.8 a second by default: a
    call every 1.25 s); the sandbox's browser tests raise it, Telegram's limits off."""
    from bot.app import build_application
    from tests.conftest import RunningBot, bot_settings

    extra = {} if setting is None else {"private_messages_per_second": setting}
    bot = await RunningBot(build_application(bot_settings(tg, tmp_path / "bot.db", **extra)),
                           1.0).start()
    try:
        assert bot.rt.outbox.pacer.interval(1234) == pytest.approx(interval)
        assert bot.rt.outbox.pacer.interval(-1234) == pytest.approx(60 / 18)  # (groups)
    finally:
        await bot.stop()


async def test_a_group_raised_above_telegrams_pace_is_not_held_by_ptbs_group_limiter(
    tmp_path: Any,
) -> None:
    """GROUP_MESSAGES_PER_MINUTE above Telegram's 20 (where its limits are off: the
    sandbox's tests) raises the whole bot's pace of a group: PTB's own limiter, 20 a
    minute after a burst of 20, held the 21st call 3 s, the 30th 30 s."""
    from bot.app import build_application
    from sandbox.fakeapi import FakeTelegram
    from tests.conftest import RunningBot, bot_settings

    async with FakeTelegram(flood=False) as tg:
        anna = tg.add_user("Anna")
        group = tg.add_group("Tavolo", members=[anna], admins=[anna])
        config = bot_settings(tg, tmp_path / "bot.db", group_messages_per_minute=1000,
                              private_messages_per_second=1000)
        bot = await RunningBot(build_application(config), 1.0).start()
        try:
            started = time.monotonic()
            for i in range(30):
                await bot.app.bot.send_message(group.id, f"{i}")
            assert time.monotonic() - started < 10  # (0.06 s a call: 1.8 s)
        finally:
            await bot.stop()
        assert sum(c.method == "sendMessage" and c.ok for c in tg.calls) == 30


async def test_a_send_asked_after_the_close_does_not_wait_forever() -> None:
    """A closed outbox (a stop, a fence's stand-down) flushes nothing: a new message asked
    after it is given up at once, as the ones waiting at the close were, rather than
    waiting for a call no flusher will ever grant (the redraw that awaited it kept PTB's
    ``Application.stop()`` waiting for its tasks forever)."""
    bot = RecordingBot()
    box = outbox(bot)
    waiting = asyncio.create_task(box.send(-6, "waiting"))
    await asyncio.sleep(0)
    await box.close()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(waiting, 1)
    late = asyncio.create_task(box.send(-6, "asked after the close"))
    done, _ = await asyncio.wait({late}, timeout=1)
    assert done == {late} and late.cancelled()
    assert bot.calls == []


async def test_a_pressers_redraw_that_waited_for_its_call_is_logged(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
) -> None:
    """The presser's own redraw goes at once; one that waited for its call anyway (here:
    the chat's calls spent by replies, which do not leave it the burst's last call) says
    so in the log, with how long, so that a late one can be traced."""
    from bot.outbox import edits

    monkeypatch.setattr(edits, "PRESSED_LATE_SECONDS", 0.02)
    bot = RecordingBot()
    box = outbox(bot)
    box.edit(7, 1, "shown at once", priority=Priority.PRESSED)
    await box.drain()
    assert not [r for r in caplog.records if "own redraw" in r.getMessage()]
    await asyncio.sleep(0.2)  # (the chat's burst back)
    await box.take(7)
    await box.take(7)  # the chat's calls spent, and a third one reserved (the one beyond
    box.pacer.reserve(7, time.monotonic())  # the burst the presser may take): 1/RATE away
    box.edit(7, 1, "waited", priority=Priority.PRESSED)
    await box.drain()
    assert [c[3] for c in bot.calls] == ["shown at once", "waited"]
    (late,) = [r for r in caplog.records if "own redraw" in r.getMessage()]
    waited = float(late.getMessage().split(" waited ")[1].split()[0])
    assert late.levelname == "WARNING" and "of 7/1 " in late.getMessage() and waited >= 0.02
    await box.close()
