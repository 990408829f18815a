"""Telegram misbehaving, injected by the fake server: 429 with retry_after, 5xx, timeouts,
connection resets, 403 when a player blocks the bot, the bot removed from a group.

Expectation everywhere: the match goes on *without anybody typing anything*, no
acknowledged move is lost, nothing is applied twice, and the scoreboard equals a replay.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from bench.sim import SimTable
from bot.tables.state import ui_of
from storage import repo
from tests.chaos.checks import check_acknowledged, check_scoreboard, replay
from tests.chaos.conftest import Chaos


class Stalled(AssertionError):
    """The match stopped moving (nobody typed anything to help it)."""


async def finish(chaos: Chaos, table: SimTable, seconds: float = 30) -> None:
    """Play to the end without help (failing with `Stalled` when the game does not move
    for 2.5 s), then check the invariants."""
    loop = asyncio.get_running_loop()
    finished = await table.play(deadline=loop.time() + seconds, stall_after=2.5)
    if not finished:
        raise Stalled(f"the match stopped\n{chaos.tg.dump()}")
    await final_posted(chaos, table, deadline=loop.time() + 15)
    await check_invariants(chaos, table)


async def final_posted(chaos: Chaos, table: SimTable, deadline: float) -> None:
    """Wait until the bot has posted the end of every match of the table: the move that
    ends it is stored before its results and final message go out, paced like any group
    message, and a match is finished for the players only once those arrive."""
    loop = asyncio.get_running_loop()
    while True:
        rows = [await repo.get_game(chaos.db, game_id) for game_id in table.game_ids]
        if all(row is not None and ui_of(row).over for row in rows):
            return
        if loop.time() > deadline:
            raise Stalled(f"the end of the match was never posted\n{chaos.tg.dump()}")
        await asyncio.sleep(0.1)


async def check_invariants(chaos: Chaos, table: SimTable) -> None:
    for game_id in table.game_ids:
        row = await repo.get_game(chaos.db, game_id)
        assert row is not None
        await replay(chaos.db, row)
    await check_acknowledged(chaos.db, table.presses)
    await check_scoreboard(chaos.db, table.group.id)


def markup_has_version(call: Any, game_id: int, version: int) -> bool:
    markup = call.params.get("reply_markup")
    text = markup if isinstance(markup, str) else json.dumps(markup)
    return f'"a:{game_id}:{version}:' in (text or "")


# ------------------------------------------------------------------------------ 429


async def test_429_retry_after_is_obeyed_and_the_match_finishes(chaos: Chaos) -> None:
    """One 429 on the first answer, edit and send of the match (several 429 in a row on
    one call make PTB's rate limiter give up after max_retries: see the report)."""
    table = await chaos.table(1)
    faults = [
        chaos.tg.inject(method, "429", retry_after=1, count=1)
        for method in ("answerCallbackQuery", "editMessageText", "sendMessage")
    ]
    await finish(chaos, table)
    hits = [hit for fault in faults for hit in fault.hits]
    assert len(hits) == 3
    for hit in hits:
        retry = next(
            (c for c in chaos.tg.calls if c.seq > hit.seq and c.ok and c.method == hit.method
             and c.chat_id == hit.chat_id and c.params.get("callback_query_id")
             == hit.params.get("callback_query_id")),
            None,
        )
        if retry is not None:  # a later edit may have made the retry unnecessary
            assert retry.at - hit.at >= 0.95, f"{hit!r} retried after {retry.at - hit.at:.2f}s"
    assert not chaos.problems(), chaos.problems()


# ------------------------------------------------------------------------------ 5xx, resets


@pytest.mark.parametrize("kind", ["500", "reset"])
async def test_failed_callback_answer_does_not_stop_the_match(chaos: Chaos, kind: str) -> None:
    table = await chaos.table(1)
    await table.human_turn()
    # reset with executed=True: the user saw the answer, the bot saw the connection drop
    fault = chaos.tg.inject("answerCallbackQuery", kind, count=1, executed=kind == "reset")
    await finish(chaos, table, seconds=15)
    assert len(fault.hits) == 1


async def test_failed_edit_of_the_keyboard_in_turn_is_retried(chaos: Chaos) -> None:
    table = await chaos.table(1)
    human = table.humans[0]
    loop = asyncio.get_running_loop()
    version, _ = await table.human_turn(human)
    while (await table.state())[1].phase.value != "play":  # type: ignore[union-attr]
        await table.play(deadline=loop.time() + 10, presses=1)
        version, _ = await table.human_turn(human, after=version)
    gid = table.game_id
    assert gid is not None
    faults = [
        chaos.tg.inject(method, "502", chat=human.private_chat, count=1000)
        for method in ("editMessageText", "editMessageReplyMarkup")
    ]
    await table.play(deadline=loop.time() + 10, presses=1)

    seat_no = (await table.state())[0].seat_of(human.id).seat  # type: ignore[union-attr]

    async def next_turn() -> int | None:
        row, game = await table.state()
        ok = game is not None and game.current_seat() == seat_no and row.version > version
        return row.version if ok else None

    failed = await table.until_async(next_turn, 10, "the human's next turn")
    # every edit attempt of the next 1.5 s fails (the bot paces private edits well below)
    seen = sum(len(f.hits) for f in faults)
    await asyncio.sleep(1.5)
    assert sum(len(f.hits) for f in faults) > seen or any(
        markup_has_version(h, gid, failed) for f in faults for h in f.hits
    ), "the keyboard of the turn was never attempted"
    chaos.tg.clear_faults()
    row, game = await table.state()
    assert row.version == failed and game is not None
    legal = game.view(seat_no).legal
    try:
        await table.until(lambda: table.drawn(human, failed, legal), 4, "the edit again")
    except AssertionError as exc:
        raise Stalled(str(exc)) from None
    await finish(chaos, table)


async def test_failed_send_of_the_table_message_is_retried(chaos: Chaos) -> None:
    table = await chaos.table(1, start=False)
    faults = []
    await table.open_and_start(4, before_start=lambda: faults.append(
        chaos.tg.inject("sendMessage", "500", chat=table.group, count=1)
    ))
    await finish(chaos, table, seconds=15)
    assert len(faults[0].hits) == 1


# ------------------------------------------------------------------------------ getUpdates


@pytest.mark.parametrize("kind", ["timeout", "reset"])
async def test_lost_get_updates_answers_neither_lose_nor_repeat_a_move(
    chaos: Chaos, kind: str
) -> None:
    """The fake marks the updates as delivered, then the answer never arrives (held past
    the client's timeout, or the connection is dropped): they must be offered again and
    applied exactly once."""
    table = await chaos.table(1)
    await table.human_turn()
    first_new = len(chaos.tg.calls)
    fault = chaos.tg.inject("getUpdates", kind, count=1, executed=True, hold=30)
    # the poll being held now started before the fault: wait for one that matches it
    await chaos.tg.wait_until(
        lambda: any(c.method == "getUpdates" for c in chaos.tg.calls[first_new:]), 5
    )
    loop = asyncio.get_running_loop()
    await table.play(deadline=loop.time() + 20, presses=1)
    press = table.presses[-1]
    await press.handle.wait(20)
    assert press.acknowledged, press.handle.answer
    assert len(fault.hits) == 1
    update = next(u for u in chaos.tg.update_log if u.query_id == press.handle.id)
    assert update.offers >= 2, "the lost batch was not offered again"
    await finish(chaos, table)
    assert not [p for p in chaos.problems() if "bot." in p], chaos.problems()


# ------------------------------------------------------------------------------ 403


@pytest.mark.parametrize("how", ["my_chat_member", "403 only"])
async def test_player_who_blocks_the_bot_is_replaced_and_the_group_told(
    chaos: Chaos, how: str
) -> None:
    table = await chaos.table(2)
    quitter = table.humans[1]
    loop = asyncio.get_running_loop()
    await table.play(deadline=loop.time() + 10, presses=3)
    if how == "my_chat_member":
        quitter.block_bot()
    else:  # Telegram did not tell the bot: it finds out at the next message
        chaos.tg.inject(kind="403_blocked", chat=quitter.private_chat, count=10_000)
    note = await table.until(
        lambda: next((m for m in chaos.tg.chat_messages(table.group, from_bot=True)
                      if quitter.first_name in m.content and "computer" in m.content), None),
        10, "the group to be told",
    )
    assert "&lt;" not in note.content  # the name is escaped, shown as typed
    row, _ = await table.state()
    seat = next(s for s in row.seats if s.display_name.endswith(quitter.first_name))
    assert not seat.is_human and seat.user_id is None
    await finish(chaos, table)
    assert not chaos.problems(), chaos.problems()


# ------------------------------------------------------------------------------ kicked


async def test_bot_removed_from_the_group_ends_that_game_cleanly(chaos: Chaos) -> None:
    table = await chaos.table(1)
    other = await chaos.table(1)
    loop = asyncio.get_running_loop()
    await table.play(deadline=loop.time() + 10, presses=2)
    gid = table.game_id
    assert gid is not None
    before = await repo.get_game(chaos.db, gid)
    assert before is not None
    chaos.tg.kick_bot(table.group)

    async def ended() -> bool:
        row = await repo.get_game(chaos.db, gid)
        return row is not None and row.status not in ("lobby", "playing")

    try:
        await table.until_async(ended, 3, "the game to end")
    except AssertionError as exc:
        raise Stalled(f"the game did not end: {exc}") from None
    row = await repo.get_game(chaos.db, gid)
    assert row is not None and row.version >= before.version  # data kept
    await replay(chaos.db, row)
    await check_acknowledged(chaos.db, table.presses)
    calls = len(chaos.tg.calls_to("sendMessage", table.group))
    await asyncio.sleep(0.5)
    assert len(chaos.tg.calls_to("sendMessage", table.group)) == calls  # no more writes
    await finish(chaos, other)  # the other group is not affected
    assert not chaos.problems(), chaos.problems()
