"""/tavolo (/table): a way out of any stale screen in a group (issue 18). The group's table
is posted again with its current content and links (the bids are in the hand of the
bidder in turn, issue 32), the old message is deleted, and the next move is drawn on the
new one; without a match the command says so; in private it sends the hand again, like
/mano."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.tables.state import ui_of
from tests.conftest import make_bot
from tests.e2e.driver import small_table


def gone(tg: Any, chat: Any, message_id: int) -> bool:
    return all(m.message_id != message_id for m in tg.chat_messages(chat, from_bot=True))


def buttons(message: Any) -> list[str]:
    return [b.target for b in message.buttons if b.target]


async def test_tavolo_reposts_the_table_with_its_current_keyboard(
    tg: Any, tmp_path: Path
) -> None:
    bot = await make_bot(tg, tmp_path / "bot.db").start()
    try:
        ada = tg.add_user("Ada", language_code="it")
        await ada.start_bot()
        group = tg.add_group("Tavolino", [ada], admins=[ada])
        sent = await ada.send(group, "/tavolo")
        await tg.wait_for_message(group, "Nessuna partita in corso", after=sent)

        table = await small_table(tg, bot, group, [ada], match_end="hands:1")
        await ada.send(group, "/inizia")
        old = await tg.wait_for_message(group, "Smazzata 1", timeout=10)
        # the auction goes on until the human bids: computers bid first if in turn
        row, game = await table.state()
        while game.current_seat() != row.seat_of(ada.id).seat:  # type: ignore[union-attr]
            await table._wait_version(row.version, 10)
            row, game = await table.state()
        # what Ada sees before she types: the table showing her turn (the computer's
        # move is stored before its redraw is handed to the outbox)
        table_id = ui_of(await table.row()).table
        old = await tg.wait_until(
            lambda: (m := tg.message(group, table_id)) and "Tocca a Ada" in m.content and m,
            timeout=10,
            what="the table showing Ada's turn",
        )
        await bot.rt.outbox.drain()
        assert buttons(old) == ["https://t.me/BriscolaTestBot"]  # the link to the hand

        for command in ("/tavolo", "/table"):
            sent = await ada.send(group, command)
            new = await tg.wait_until(lambda s=sent: next(
                (m for m in tg.chat_messages(group, from_bot=True)
                 if m.message_id > s.message_id and "Smazzata 1" in m.content), None),
                timeout=10, what="the table again")
            await tg.wait_until(lambda o=old: gone(tg, group, o.message_id),
                                timeout=10, what="the old table deleted")
            assert new.content == old.content and buttons(new) == buttons(old)
            old = new
            await bot.rt.outbox.drain()
            # at most once in a while per game: a second one at once changes nothing
            if command == "/tavolo":
                before = len(tg.chat_messages(group, from_bot=True))
                await ada.send(group, "/tavolo")
                await bot.rt.outbox.drain()
                assert len(tg.chat_messages(group, from_bot=True)) == before
                bot.rt.tables._table_resent.clear()  # (the next one is a while later)

        # the bid is taken from the hand, and the table is redrawn on the new message
        shown = old.content
        hand = tg.chat_messages(ada, from_bot=True)[-1]
        answer = await (await ada.press(hand, f"a:{row.game_id}:{row.version}:P")).wait(10)
        assert not answer.show_alert, answer.text
        await table._wait_version(row.version, 10)
        await bot.handled()  # (its redraw starts once the answer is sent)
        await bot.rt.outbox.drain()
        assert tg.message(group, old.message_id).content != shown

        # in private: the hand again, as /mano
        hand = max((m for m in tg.chat_messages(ada, from_bot=True) if "Le tue carte" in
                    m.content), key=lambda m: m.message_id)
        await ada.dm("/tavolo")
        await tg.wait_until(lambda: gone(tg, ada, hand.message_id), timeout=10,
                            what="the old hand deleted")
        assert any("Le tue carte" in m.content and m.message_id > hand.message_id
                   for m in tg.chat_messages(ada, from_bot=True))
        assert not tg.errors and not tg.flood_violations
    finally:
        await bot.stop()
