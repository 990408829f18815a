"""Hostile input: forged and random callback data, clicks of outsiders, double and
concurrent clicks, commands with junk arguments, one user at many tables.

Expectation: invalid input changes nothing in the database, the user gets a clear alert
(callbacks), and nothing is logged at ERROR level or with a traceback.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

from bench.sim import find_button_message
from game import card_code
from storage import Database, repo
from tests.chaos.checks import check_acknowledged, check_scoreboard, replay, turn_in_play
from tests.chaos.conftest import SEED, Chaos

TABLES = ("games", "seats", "actions", "scores", "smazzata_results", "chats")


class Unclear(AssertionError):
    """Some invalid input was not answered with a clear alert, or logged a traceback."""


async def db_state(db: Database) -> dict[str, list[tuple[Any, ...]]]:
    """Everything a move or a setting could change (users are upserted by /start)."""
    return {
        t: [tuple(r) for r in await db.fetch(f"SELECT * FROM {t} ORDER BY 1, 2")] for t in TABLES
    }


async def quiet(chaos: Chaos, seconds: float = 0.3) -> None:
    """Let the bot react to every update, finish rendering and record what it delivered
    (a game's drawn version, written once its messages were sent: one came after the
    outbox's drain in a fresh-clone CI run, and the database changed under the test)."""
    await chaos.tg.wait_until(
        lambda: all(
            u.handled_at is not None
            for u in chaos.tg.update_log
            if u.kind in ("message", "callback_query")
        ),
        10,
        "every update handled",
    )
    await chaos.bot.rt.outbox.drain(5)
    await chaos.tg.wait_until(lambda: not chaos.bot.rt.tables.delivery.pending(), 10,
                              "the delivered versions recorded")
    await chaos.tg.idle(quiet=seconds, timeout=10)


async def test_forged_and_random_callback_data_change_nothing(chaos: Chaos) -> None:
    table = await chaos.table(2)
    other = await chaos.table(1)
    outsider = chaos.tg.add_user("Estraneo <x>", language_code="it")
    await outsider.start_bot()
    await outsider.join(table.group)
    version, mover = await turn_in_play(table)
    await other.human_turn()
    row, game = await table.state()
    other_row, _ = await other.state()
    assert game is not None
    gid, ogid = row.game_id, other_row.game_id
    idle = next(u for u in table.humans if u is not mover)
    plain = table.humans[1]  # a seated player who neither created the table nor is admin
    mover_seat = row.seat_of(mover.id).seat  # type: ignore[union-attr]
    idle_seat = row.seat_of(idle.id).seat  # type: ignore[union-attr]
    legal = game.view(mover_seat).legal
    hand = next(find_button_message(mover.private_chat, f"a:{gid}:{version}:{c}") for c in legal)
    group_msg = next(m for m in reversed(chaos.tg.chat_messages(table.group, from_bot=True)))
    others_card = "c" + card_code(game.view(idle_seat).hand[0])
    rng = random.Random(SEED)
    junk = [
        "".join(chr(rng.randrange(33, 0x2FFF)) for _ in range(rng.randrange(1, 40)))
        for _ in range(8)
    ]
    forged: list[tuple[Any, Any, str | bytes]] = [
        (mover, hand, f"a:{ogid}:{other_row.version}:P"),  # another game's id
        (mover, hand, f"a:{ogid}:{other_row.version}:{legal[0]}"),
        (mover, hand, f"a:{gid}:{version - 1}:{legal[0]}"),  # old version
        (mover, hand, f"a:{gid}:{version + 3}:{legal[0]}"),  # future version
        (mover, hand, f"a:{gid}:{version}:{others_card}"),  # another seat's card
        (
            idle,
            idle.private_chat.messages[max(idle.private_chat.messages)],
            f"a:{gid}:{version}:{legal[0]}",
        ),  # not their turn
        (mover, hand, f"a:{gid}:{version}:" + "c" * 300),  # overlong
        (mover, hand, b"a:" + str(gid).encode() + b":\xff\xfe:\xc3("),  # not UTF-8
        (mover, hand, f"a:{gid}:{version}:cZz"),
        (mover, hand, f"a:{gid}:{version}:sx"),
        (mover, hand, "a:99999999999999999999999999:0:P"),
        (mover, hand, f"a:{gid}:99999999999999999999999999:{legal[0]}"),
        (mover, hand, f"a:-{gid}:{version}:{legal[0]}"),
        (mover, hand, f"a:{gid}:-1:{legal[0]}"),
        (mover, hand, f"a:{gid}:{version}:{legal[0]}:extra"),
        (mover, hand, f"a:{gid}:{version}"),
        (mover, hand, f"q:{gid}:{version - 1}:M"),
        (mover, hand, f"p:{gid}:{version}:t:999"),
        (mover, hand, f"p:{gid}:{version}:o9:61"),
        (mover, hand, f"x:{gid}:{version + 9}"),
        (mover, hand, f"h:{gid}:99:o5"),  # a hand's call of another smazzata
        (mover, hand, f"h:{gid}:0:t"),  # not a private call
        (mover, hand, f"h:{gid}:0:o9.61"),
        (mover, hand, f"h:{gid}:0:M"),  # monte, not offered (off)
        (mover, hand, f"h:{gid}:0"),
        (outsider, group_msg, f"h:{gid}:0:M"),
        (mover, hand, f"b:{gid}"),  # "I'm back" while playing
        (mover, group_msg, f"l:{gid}:join"),  # lobby buttons of a started game
        (mover, group_msg, f"l:{gid}:go"),
        (mover, group_msg, f"l:{gid}:nope"),
        (plain, group_msg, f"k:{gid}:y"),  # cancel confirmation by a non-manager
        (outsider, group_msg, f"k:{gid}:y"),
        (outsider, group_msg, f"a:{gid}:{version}:{legal[0]}"),  # not at the table
        (outsider, group_msg, f"a:{gid}:{version}:P"),
        (outsider, group_msg, "s:c:9"),  # settings by a non-admin
        (table.admin, group_msg, "s:c:999"),
        (table.admin, group_msg, "s:c:-1"),
        (table.admin, group_msg, "s:zz:1:2:3"),
        (mover, hand, ":"),
        (mover, hand, "a"),
        (mover, hand, "a:"),
        (mover, hand, "\x00"),
        (mover, hand, "💥" * 10),
        *[(mover, hand, j) for j in junk],
    ]
    await quiet(chaos)
    before = await db_state(chaos.db)
    handles = []
    for user, message, data in forged:
        handles.append(await user.press(message, data, check=False))
    answers = [await h.wait(10) for h in handles]
    await quiet(chaos)
    assert await db_state(chaos.db) == before
    assert not chaos.tg.internal_errors
    unclear: list[Any] = [
        (h.data, a.text)
        for h, a in zip(handles, answers, strict=True)
        if not (a.show_alert and a.text and len(a.text) >= 10)
    ]
    unclear += chaos.problems()
    # the real game goes on afterwards (a picker drawn by mistake is redrawn by /mano)
    if unclear:
        await mover.dm("/mano")
    loop = asyncio.get_running_loop()
    assert await table.play(deadline=loop.time() + 30, stall_after=5)
    await check_acknowledged(chaos.db, table.presses)
    if unclear:
        raise Unclear(f"{len(unclear)} of {len(forged)} invalid presses: {unclear}")


async def test_double_and_concurrent_clicks_apply_once(chaos: Chaos) -> None:
    table = await chaos.table(2)
    version, mover = await turn_in_play(table)
    row, game = await table.state()
    assert game is not None
    gid = row.game_id
    seat = row.seat_of(mover.id).seat  # type: ignore[union-attr]
    legal = list(game.view(seat).legal)
    first, second = legal[0], legal[-1]
    hand = find_button_message(mover.private_chat, f"a:{gid}:{version}:{first}")
    assert hand is not None
    # three presses in the same instant: the same card twice, then another card
    handles = [
        await mover.press(hand, f"a:{gid}:{version}:{code}") for code in (first, first, second)
    ]
    answers = [await h.wait(10) for h in handles]
    acknowledged = [h.data for h, a in zip(handles, answers, strict=True) if not a.show_alert]
    assert len(acknowledged) == 1, answers
    assert all(a.text for a in answers if a.show_alert)
    actions = await repo.load_actions(chaos.db, gid, after_seq=version)
    mine = [a for a in actions if a.user_id == mover.id]
    assert len(mine) == 1 and mine[0].seq == version + 1
    assert f"a:{gid}:{version}:{mine[0].code}" == acknowledged[0]

    # the player in turn and another player press a card at the same instant
    version, mover = await turn_in_play(table)
    idle = next(u for u in table.humans if u is not mover)
    await quiet(chaos)
    row, game = await table.state()
    assert game is not None and row.version == version
    presses = []
    for user in (mover, idle):
        message = next(
            m
            for m in reversed(list(user.private_chat.messages.values()))
            if any((b.callback_data or "").startswith(f"a:{gid}:{version}:") for b in m.buttons)
        )
        seat_legal = game.view(row.seat_of(user.id).seat).legal  # type: ignore[union-attr]
        data = next(
            b.callback_data
            for b in message.buttons
            if (b.callback_data or "").startswith(f"a:{gid}:{version}:")
            and (user is idle or b.callback_data.split(":")[3] in seat_legal)
        )
        presses.append(await user.press(message, data))
    answers = [await h.wait(10) for h in presses]
    assert [a.show_alert for a in answers] == [False, True], answers
    actions = await repo.load_actions(chaos.db, gid, after_seq=version)
    assert actions[0].user_id == mover.id
    assert not any(a.user_id == idle.id for a in actions if a.seq <= version + 1)
    loop = asyncio.get_running_loop()
    assert await table.play(deadline=loop.time() + 30, stall_after=5)
    row = await repo.get_game(chaos.db, gid)
    assert row is not None
    await replay(chaos.db, row)
    assert not chaos.problems(), chaos.problems()


JUNK_GROUP = [
    "/nuova junk ☃ " + "x" * 200,
    "/inizia 99999999999999999999999999999",
    "/entra \u202e\u0000? " + "é" * 1000,
    "/annulla zz",
    "/classifica 💥 -1 ' OR 1=1 --",
    "/impostazioni \x01 <b>",
    "/mano foo",
    "/start j1 j2",
    "/help ?",
    "/nuova@BriscolaTestBot @@@",
]
JUNK_PRIVATE = [
    "/start j99999999999999999999999999999",
    "/start j²",
    "/start j١٢",
    "/start j-1",
    "/start j0",
    "/start " + "é" * 60,
    "/start " + "j" * 64,
    "/nuova x",  # in private it opens a table alone, but not with arguments it cannot read
    "/entra x",
    "/classifica y",
    "/impostazioni z",
]


async def test_commands_with_junk_arguments_change_nothing(chaos: Chaos) -> None:
    table = await chaos.table(2)
    await turn_in_play(table)
    user = table.humans[1]  # not the creator
    await quiet(chaos)
    before = await db_state(chaos.db)
    for text in JUNK_GROUP:
        await user.send(table.group, text)
    for text in JUNK_PRIVATE:
        await user.dm(text)
    await quiet(chaos, 0.5)
    after = await db_state(chaos.db)
    changed = {t: (before[t], after[t]) for t in TABLES if before[t] != after[t]}
    assert not changed, changed
    assert not chaos.tg.errors, chaos.tg.errors[:5]
    if chaos.problems():
        raise Unclear(str(chaos.problems()))


async def test_one_user_at_many_tables_at_once(chaos: Chaos) -> None:
    user = chaos.tg.add_user("Ubiqua <&>", language_code="it")
    tables = [await chaos.table(users=[user]) for _ in range(3)]
    loop = asyncio.get_running_loop()
    results = await asyncio.gather(
        *(t.play(deadline=loop.time() + 40, stall_after=6) for t in tables)
    )
    assert all(results)
    game_ids = {t.game_id for t in tables}
    assert len(game_ids) == 3
    for table in tables:
        await check_acknowledged(chaos.db, table.presses)
        await check_scoreboard(chaos.db, table.group.id)
        assert {p.game_id for p in table.presses} == {table.game_id}
    # one hand message per game in the private chat, each with its own game's buttons
    assert not chaos.problems(), chaos.problems()
