"""/avvisami (issue 48) through the real Application against the fake Bot API: who
subscribed in a group gets one private message when a lobby opens there with seats left
(a button that seats them), never for a lobby they opened, at most one round an hour per
group; ``/avvisami off`` stops it, a blocked bot (403) too; in private it is refused."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from bot.features import notify
from storage import SeatRow, repo, social
from tests.conftest import make_bot


def lobby_notes(tg: Any, user: Any) -> list[Any]:
    return [m for m in tg.chat_messages(user, from_bot=True) if "Si è aperto un tavolo" in
            m.content or "A table opened" in m.content]


async def open_lobby(tg: Any, bot: Any, group: Any, opener: Any) -> int:
    """/nuova by ``opener``; the lobby's id."""
    sent = await opener.send(group, "/nuova")
    await tg.wait_for_message(group, "nuova partita", after=sent)
    row = await repo.get_active_game(bot.rt.db, group.id)
    assert row is not None
    return row.game_id


async def close(bot: Any, game_id: int) -> None:
    """The lobby cancelled (as /annulla does): the next /nuova may open another."""
    await bot.handled()
    await bot.rt.outbox.drain()
    await bot.rt.service.cancel(game_id)


async def test_avvisami_one_message_per_lobby_and_per_hour(tg: Any, tmp_path: Path) -> None:
    bot = await make_bot(tg, tmp_path / "bot.db").start()
    try:
        ada = tg.add_user("Ada", language_code="it")
        ben = tg.add_user("Ben", language_code="en")
        cleo = tg.add_user("Cleo", language_code="it")
        dino = tg.add_user("Dino", language_code="it")
        eva = tg.add_user("Eva", language_code="it")
        group = tg.add_group("Bar <Sport>", [ada, ben, cleo, dino, eva], admins=[ada])

        # in private: refused, in the person's language
        await ben.start_bot()
        sent = await ben.dm("/notify")
        note = await tg.wait_for_message(ben, "used in a group", after=sent)
        assert "/notify" in note.content
        # never pressed Start: told how, not subscribed
        sent = await cleo.send(group, "/avvisami")
        await tg.wait_for_message(group, "premi Avvia", after=sent)
        assert await social.notify_subscribers(bot.rt.db, group.id) == []
        sent = await cleo.send(group, "/avvisami per favore")
        await tg.wait_for_message(group, "Uso: /avvisami", after=sent)

        for person in (ada, cleo, dino):
            await person.start_bot()
        for person in (ada, ben, cleo, dino):
            sent = await person.send(group, "/avvisami")
            await tg.wait_for_message(group, "ti scrivo in privato", after=sent)
        sent = await ada.send(group, "/avvisami")
        await tg.wait_for_message(group, "sei già iscritto", after=sent)
        dino.block_bot()  # (the bot is told: Telegram's my_chat_member)
        await eva.start_bot()
        sent = await eva.send(group, "/avvisami")
        await tg.wait_for_message(group, "ti scrivo in privato", after=sent)
        eva.block_bot()
        for _ in range(500):  # (the bot learns it from Telegram's my_chat_member update)
            known = await repo.get_user(bot.rt.db, eva.id)
            if known is not None and not known.private_ok:
                break
            await asyncio.sleep(0.01)
        await repo.set_private_ok(bot.rt.db, eva.id, True)  # as if that update was lost

        first = await open_lobby(tg, bot, group, ada)
        await tg.wait_until(lambda: lobby_notes(tg, ben) and lobby_notes(tg, cleo), timeout=10)
        note = lobby_notes(tg, ben)[-1]
        assert "Bar &lt;Sport&gt;" in note.content or "Bar <Sport>" in note.text
        assert "5 seats free" in note.content  # in Ben's language
        link = note.buttons[0].url
        assert link is not None and link.endswith(f"?start=j{first}")
        assert lobby_notes(tg, ada) == []  # who opened it: nothing
        await bot.handled()
        # Dino blocked the bot: unsubscribed everywhere; Eva too, at her message's 403
        await tg.wait_until(lambda: any(e.chat_id == eva.id and e.error_code == 403
                                        for e in tg.errors), timeout=10)
        await bot.handled()
        for _ in range(100):
            subscribed = {u for u, _ in await social.notify_subscribers(bot.rt.db, group.id)}
            if subscribed == {ada.id, ben.id, cleo.id}:
                break
            await asyncio.sleep(0.02)
        assert subscribed == {ada.id, ben.id, cleo.id}
        assert not any(e.chat_id == dino.id for e in tg.errors)  # (not even tried)
        await close(bot, first)

        # another lobby within the hour: no new round
        second = await open_lobby(tg, bot, group, cleo)
        await asyncio.sleep(0.5)
        await close(bot, second)
        assert len(lobby_notes(tg, ben)) == 1 and len(lobby_notes(tg, ada)) == 0

        # an hour later: a new round; Ben said /avvisami off meanwhile
        sent = await ben.send(group, "/notify off")
        await tg.wait_for_message(group, "non ti scrivo più", after=sent)
        clock = bot.rt.db.clock
        bot.rt.db.clock = lambda: clock() + 3601
        third = await open_lobby(tg, bot, group, cleo)
        await tg.wait_until(lambda: len(lobby_notes(tg, ada)) == 1, timeout=10)
        await asyncio.sleep(0.2)
        await close(bot, third)
        assert len(lobby_notes(tg, ben)) == 1  # (unsubscribed)
        assert len(lobby_notes(tg, cleo)) == 1  # (she opened this one)
        sent = await ben.send(group, "/notify off")
        await tg.wait_for_message(group, "non eri iscritto", after=sent)
        assert not tg.unanswered_callbacks() and not tg.flood_violations
        assert all(e.chat_id == eva.id for e in tg.errors), tg.errors
    finally:
        await bot.stop()


async def test_avvisami_skips_who_already_sits(tg: Any, tmp_path: Path) -> None:
    """The message goes at the lowest rank: who joined meanwhile does not get it."""
    bot = await make_bot(tg, tmp_path / "bot.db").start()
    try:
        ada, ben = tg.add_user("Ada", language_code="it"), tg.add_user("Ben", language_code="it")
        group = tg.add_group("Tavolo", [ada, ben], admins=[ada])
        for person in (ada, ben):
            await person.start_bot()
        sent = await ben.send(group, "/avvisami")
        await tg.wait_for_message(group, "ti scrivo in privato", after=sent)
        row_id = await bot.rt.service.open_lobby(group.id, 0, ada.id, "{}", "{}")
        await repo.add_seat(bot.rt.db, row_id, SeatRow.human(0, ben.id, "Ben"))
        await notify.lobby_opened(bot.rt, row_id, "Tavolo")
        await bot.rt.outbox.drain()
        assert lobby_notes(tg, ben) == []
        assert await social.claim_notify_round(bot.rt.db, group.id, row_id + 1, 3600) is False
    finally:
        await bot.stop()
