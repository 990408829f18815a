"""The presser's own message shows the press first (issue 18): after a player presses a
card in their hand, the first call the bot makes after answering the press is the edit of
that message, even when the press comes right after their turn's edit (a private chat
may take a short burst). And no edit repeats what a message shows (Telegram would answer
400 "message is not modified")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.prefs import with_value
from storage import repo
from tests.conftest import make_bot
from tests.e2e.driver import Table, cheap_policy


def not_modified(tg: Any) -> list[Any]:
    return [c for c in tg.calls if c.error_code == 400
            and "not modified" in (c.description or "")]


async def test_the_pressed_hand_is_the_first_call_after_the_answer(
    tg: Any, tmp_path: Path
) -> None:
    bot = await make_bot(tg, tmp_path / "bot.db").start()
    try:
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
            handle = await user.press(message, data)
            answer = await handle.wait(10)
            assert not answer.show_alert, answer.text
            seq = answered_seq(tg, handle.id)

            def edited(user: Any = user, message: Any = message, seq: int = seq) -> bool:
                return any(c.method.startswith("editMessage") and c.chat_id == user.id
                           and int(c.params.get("message_id", 0)) == message.message_id
                           and c.seq > seq for c in tg.calls)

            await tg.wait_until(edited, timeout=10, what="the pressed message's edit")
            after = [c for c in tg.calls if c.seq > seq and c.method != "getUpdates"]
            first = after[0]
            assert first.method.startswith("editMessage"), (first, after[:3])
            assert (first.chat_id, int(first.params["message_id"])) == (
                user.id, message.message_id), (first, after[:3])
            await table._wait_version(row.version, 10)
            checked += 1
        assert checked >= 3
        await bot.rt.outbox.drain()
        assert not not_modified(tg), not_modified(tg)[:3]
    finally:
        await bot.stop()


def answered_seq(tg: Any, query_id: str) -> int:
    return next(c.seq for c in tg.calls if c.method == "answerCallbackQuery"
                and c.params.get("callback_query_id") == query_id)
