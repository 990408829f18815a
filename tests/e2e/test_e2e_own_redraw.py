"""The presser's own message shows the press first (issue 18): after a player presses a
card in their hand, the first call the bot makes after answering the press is the edit of
that message, even when the press comes right after their turn's edit (a private chat
may take a short burst), and even when the bot's budget is saturated (other turns
queued for it: the press is shown before them). And no edit repeats what a message shows
(Telegram would answer 400 "message is not modified")."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from bot.budget import Priority
from bot.prefs import with_value
from storage import repo
from tests.conftest import make_bot
from tests.e2e.driver import Table, cheap_policy


def not_modified(tg: Any) -> list[Any]:
    return [c for c in tg.calls if c.error_code == 400
            and "not modified" in (c.description or "")]


#: Turns of other tables queued for the bot's budget when the press comes (saturated):
#: its burst and this many seconds of calls.
QUEUED_SECONDS = 0.5
#: Timed in this process: no earlier test's garbage is collected while they run.
pytestmark = pytest.mark.usefixtures("collected")


@pytest.mark.parametrize("saturated", [False, True], ids=["quiet", "saturated"])
async def test_the_pressed_hand_is_the_first_call_after_the_answer(
    tg: Any, tmp_path: Path, saturated: bool
) -> None:
    bot = await make_bot(tg, tmp_path / "bot.db").start()
    try:
        table = await started_table(tg, bot)
        await table.play(cheap_policy, until=lambda g: g.phase.value == "play")
        checked = 0
        while checked < 6:
            row, game = await table.state()
            if row.status != "playing" or game.is_over():
                break
            seat = row.seat(game.current_seat())
            if seat is None or not seat.is_human:
                await table.step(cheap_policy)
                continue
            await press_and_check_first_call(tg, bot, table, row, game, seat, saturated)
            await table._wait_version(row.version, 10)
            checked += 1
        assert checked >= 3
        await bot.rt.outbox.drain()
        assert not not_modified(tg), not_modified(tg)[:3]
    finally:
        await bot.stop()


async def press_and_check_first_call(tg: Any, bot: Any, table: Table, row: Any, game: Any,
                                     seat: Any, saturated: bool = False) -> None:
    """The human in turn presses their move in their hand; the first call after the
    answer is the edit of that message (before turns queued, if ``saturated``)."""
    user = table.users[seat.user_id]
    view = game.view(seat.seat)
    code = cheap_policy(view, table.rng)
    data = f"a:{row.game_id}:{row.version}:{code}"
    # pressed once the turn's buttons are on screen and nothing else waits to be
    # sent (an edit of another chat whose time came could go first), nor the
    # presser's chat for its pace (a burst of its own used up)
    message = await tg.wait_until(lambda d=data, u=user: table._message_with(
        u.private_chat, d), timeout=10, what=data)
    await tg.wait_until(lambda u=user: not bot.rt.outbox.pending()
                        and not bot.rt.outbox.wait_for(u.id), timeout=10,
                        what="nothing queued")
    budget = bot.rt.outbox.budget
    turns = int(budget.burst + QUEUED_SECONDS / budget.interval) if saturated else 0
    queued = [asyncio.create_task(budget.acquire(Priority.TURN)) for _ in range(turns)]
    handle = await user.press(message, data)
    answer = await handle.wait(10)
    assert not answer.show_alert, answer.text
    seq = answered_seq(tg, handle.id)

    def edited(user: Any = user, message: Any = message, seq: int = seq) -> bool:
        return any(c.method.startswith("editMessage") and c.chat_id == user.id
                   and int(c.params.get("message_id", 0)) == message.message_id
                   and c.seq > seq for c in tg.calls)

    await tg.wait_until(edited, timeout=10, what="the pressed message's edit")
    # the press went before the turns already waiting (most still wait)
    if saturated:
        assert sum(t.done() for t in queued) < turns - QUEUED_SECONDS / 3 / \
            budget.interval, "behind the turns"
    await asyncio.gather(*queued)
    after = [c for c in tg.calls if c.seq > seq and c.method != "getUpdates"]
    first = after[0]
    assert first.method.startswith("editMessage"), (first, after[:3])
    assert (first.chat_id, int(first.params["message_id"])) == (
        user.id, message.message_id), (first, after[:3])


async def started_table(tg: Any, bot: Any) -> Table:
    """Ada (seat 0) and Bea (seat 4, last) with three computers, one smazzata, started."""
    ada, bea = (tg.add_user(n, language_code="it") for n in ("Ada", "Bea"))
    for user in (ada, bea):
        await user.start_bot()
    group = tg.add_group("Tavolo", [ada, bea], admins=[ada])
    # Bea sits last: after her move the next seat is Ada's (seat 0), drawn before hers
    # in seat order
    prefs = with_value(await bot.rt.chat_prefs(group.id), "match_end", "hands:1")
    await repo.save_chat_settings(bot.rt.db, group.id, prefs.language, prefs.to_json())
    sent = await ada.send(group, "/nuova")
    lobby = await tg.wait_for_message(group, "nuova partita", after=sent)
    gid = next(int(b.callback_data.split(":")[1]) for b in lobby.buttons
               if (b.callback_data or "").endswith(":join"))
    for user, data in ((ada, "join"), (ada, "cpu"), (ada, "cpu"), (ada, "cpu"),
                       (bea, "join")):
        answer = await (await user.press(lobby, f"l:{gid}:{data}")).wait(10)
        assert not answer.show_alert, answer.text
    table = Table(tg, bot, group, [ada, bea])
    table.game_id = gid
    assert (await table.row()).seat_of(bea.id).seat == 4  # type: ignore[union-attr]
    await ada.send(group, "/inizia")
    await tg.wait_for_message(group, "Smazzata 1", timeout=10)
    return table


async def test_a_bid_pressed_in_private_is_the_first_call_after_the_answer(
    tg: Any, tmp_path: Path
) -> None:
    """The bidder in turn bids from their own hand (issue 32): each bid's own edit is the
    first call the bot makes after answering the press, and no group message of the
    auction carries a bid button (the group shows the auction, with links)."""
    bot = await make_bot(tg, tmp_path / "bot.db").start()
    try:
        table = await started_table(tg, bot)
        start = len(tg.calls)
        bids = 0
        while True:
            row, game = await table.state()
            if row.status != "playing" or game.view(None).phase != "auction":
                break
            seat = row.seat(game.current_seat())
            if seat is None or not seat.is_human:
                await table.step(cheap_policy)
                continue
            await press_and_check_first_call(tg, bot, table, row, game, seat)
            await table._wait_version(row.version, 10)
            bids += 1
        assert bids >= 2  # Ada's and Bea's
        await bot.rt.outbox.drain()
        group_calls = [c for c in tg.calls[start:] if c.chat_id == table.group.id
                       and c.method in ("sendMessage", "editMessageText",
                                        "editMessageReplyMarkup")]
        assert group_calls  # the group followed the auction
        for call in group_calls:
            markup = str(call.params.get("reply_markup") or "")
            assert not re.search(r"[\"'][apqxh]:", markup), markup
        assert not not_modified(tg), not_modified(tg)[:3]
    finally:
        await bot.stop()


def answered_seq(tg: Any, query_id: str) -> int:
    return next(c.seq for c in tg.calls if c.method == "answerCallbackQuery"
                and c.params.get("callback_query_id") == query_id)


async def test_two_presses_after_a_turn_fit_telegrams_limits_and_go_at_once(
    tmp_path: Path,
) -> None:
    """A turn's edit, then two presses of its player within a fraction of a second (their
    card wins the trick, they lead the next one): at the production pacing, against the
    fake server's real limits (a private chat: 3 calls at once, then 1 a second), both
    presses are shown at once (issue 46: the second one waited for the chat's next slot,
    1.25 s), and none of the three calls is refused (429)."""
    from sandbox.fakeapi import FakeTelegram

    async with FakeTelegram() as tg:  # Telegram's limits, real time
        bot = await make_bot(tg, tmp_path / "bot.db", speed=1).start()
        try:
            ada = tg.add_user("Ada", language_code="it")
            await ada.start_bot()
            hand = await bot.app.bot.send_message(ada.id, "le tue carte")
            await asyncio.sleep(2.5)  # (the chat's pace and the server's bucket back)
            outbox = bot.rt.outbox
            outbox.edit(ada.id, hand.message_id, "tocca a te", priority=Priority.TURN)
            for text in ("la tua carta: prendi tu, tocca a te", "la tua carta d'apertura"):
                await asyncio.sleep(0.1)  # (the press comes once the last edit is shown)
                outbox.edit(ada.id, hand.message_id, text, priority=Priority.PRESSED)
            await outbox.drain(10)
            edits = [c for c in tg.calls if c.method == "editMessageText"]
            assert [c.params["text"] for c in edits if c.ok] == [
                "tocca a te", "la tua carta: prendi tu, tocca a te",
                "la tua carta d'apertura"]
            assert not tg.flood_violations, tg.flood_violations
            # (the fake's call times are its own clock: the edits' spacing is compared)
            assert edits[-1].at - edits[0].at < 0.6, [c.at for c in edits]
        finally:
            await bot.stop()
