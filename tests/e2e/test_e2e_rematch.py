"""🔁 Rivincita (issue 48) through the real Application against the fake Bot API: the
final message's button opens a lobby with the same settings and seats; the other people
confirm with one press (the match then starts); a seat not confirmed in time is offered
like any empty seat; alone in private, one press and the same computers deal again; a
second press, a press by someone who did not play: a short alert, nothing changes."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from bot.features import rematch
from bot.features.lobby_message import waiting_of
from storage import GameRow, repo
from tests.conftest import make_bot
from tests.e2e.driver import Table, cheap_policy, small_table
from tests.e2e.test_e2e_solo import open_solo_table


def people(tg: Any, *names: str) -> list[Any]:
    return [tg.add_user(n, language_code="it") for n in names]


def final_message(tg: Any, chat: Any, game_id: int) -> Any:
    for m in reversed(tg.chat_messages(chat, from_bot=True)):
        if any(b.callback_data == f"r:{game_id}:go" for b in m.buttons):
            return m
    return None


async def finished_match(tg: Any, bot: Any, group: Any, humans: list[Any],
                         thread: int | None = None) -> tuple[Table, Any]:
    """A one-smazzata match played to its end; the final message with its button."""
    table = await small_table(tg, bot, group, humans, thread=thread)
    sent = await humans[0].send(group, "/inizia", thread_id=thread)
    await tg.wait_for_message(group, "Smazzata 1", after=sent, timeout=10)
    await table.play(cheap_policy)
    assert (await table.row()).status == "finished"
    assert table.game_id is not None
    gid = table.game_id
    final = await tg.wait_until(lambda: final_message(tg, group, gid), timeout=10,
                                what="the final message's rivincita")
    assert "Partita finita" in final.content and "Rivincita" in final.content
    return table, final


async def active(bot: Any, chat_id: int, thread: int = 0) -> GameRow:
    row = await repo.get_active_game(bot.rt.db, chat_id, thread)
    assert row is not None
    return row


def lineup(row: GameRow) -> list[tuple[str, int | None, str | None]]:
    """Who sits where (kind, person, level), in seat order, il morto's gap closed."""
    return [(s.kind, s.user_id, s.computer_level) for s in sorted(row.seats, key=lambda s: s.seat)]


async def test_rematch_in_a_group_same_seats_each_confirms(tg: Any, tmp_path: Path) -> None:
    bot = await make_bot(tg, tmp_path / "bot.db").start()
    try:
        ada, ben = people(tg, "Ada", "Ben")
        cleo = tg.add_user("Cleo", language_code="en")
        for p in (ada, ben, cleo):
            await p.start_bot()
        group = tg.add_group("Bar Sport", [ada, ben, cleo], admins=[ada])
        table, final = await finished_match(tg, bot, group, [ada, ben])
        old = await table.row()

        # someone who did not play: a short alert in their language, nothing opened
        answer = await (await cleo.press(final, f"r:{old.game_id}:go")).wait(10)
        assert answer.show_alert and "players of this match" in answer.text
        assert await repo.get_active_game(bot.rt.db, group.id) is None

        answer = await (await ben.press(final, f"r:{old.game_id}:go")).wait(10)
        assert not answer.show_alert and "Rivincita" in answer.text
        lobby = await active(bot, group.id)
        assert lobby.status == "lobby" and lobby.creator_id == ben.id
        assert lineup(lobby) == lineup(old)  # the same seats, computers at their levels
        assert lobby.settings_json == old.settings_json
        shown = await tg.wait_for_message(group, "⏳ Ada")
        assert f"r:{lobby.game_id}:ok" in [b.callback_data for b in shown.buttons]

        # forged or misplaced presses: a short alert each, nothing changes
        async def seen() -> tuple[Any, ...]:  # (not the UI JSON: its redraws land later)
            row = await active(bot, group.id)
            return row.game_id, row.status, lineup(row), waiting_of(row)

        before = await seen()
        for user, message, data, said in (
            (cleo, final, f"r:{old.game_id}:nope", "Invalid or expired"),
            (ada, final, f"r:{lobby.game_id}:go", "non è finita"),  # the lobby: not over
            (cleo, shown, f"r:{lobby.game_id}:ok", "players of this match"),
            (ada, final, "r:999999:go", "partita"),
            (ada, final, "r:x:go", "Pulsante"),
        ):
            answer = await (await user.press(message, data, check=False)).wait(10)
            assert answer.show_alert and said in (answer.text or ""), (data, answer.text)
        assert await seen() == before

        # pressed twice (by anyone of the match): refused, still one lobby
        answer = await (await ada.press(final, f"r:{old.game_id}:go")).wait(10)
        assert answer.show_alert and "già" in answer.text
        # the creator cannot start over the people still to confirm
        sent = await ben.send(group, "/inizia")
        await tg.wait_for_message(group, "confermino", after=sent)
        assert (await active(bot, group.id)).status == "lobby"
        # Ben confirmed by pressing; a second confirmation is refused politely
        answer = await (await ben.press(shown, f"r:{lobby.game_id}:ok")).wait(10)
        assert answer.show_alert and "già confermato" in answer.text  # (he pressed it)

        answer = await (await ada.press(shown, f"r:{lobby.game_id}:ok")).wait(10)
        assert not answer.show_alert, answer.text
        await bot.handled()
        row = await repo.get_game(bot.rt.db, lobby.game_id)
        assert row is not None and row.status == "playing"
        assert [s.user_id for s in sorted(row.seats, key=lambda s: s.seat)] == \
            [s.user_id for s in sorted(old.seats, key=lambda s: s.seat)]
        await tg.wait_until(lambda: any(
            "Smazzata 1" in m.content and m.message_id > shown.message_id
            for m in tg.chat_messages(group, from_bot=True)), timeout=10)
        assert not tg.unanswered_callbacks() and not tg.flood_violations
        assert not [e for e in tg.errors if e.chat_id == group.id], tg.errors
    finally:
        await bot.stop()


async def test_a_seat_not_confirmed_in_time_is_free(
    tg: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rematch, "CONFIRM_SECONDS", 0.5)
    bot = await make_bot(tg, tmp_path / "bot.db").start()
    try:
        ada, ben, dora = people(tg, "Ada", "Ben", "Dora")
        for p in (ada, ben, dora):
            await p.start_bot()
        group = tg.add_group("Circolo", [ada, ben, dora], admins=[ada])
        table, final = await finished_match(tg, bot, group, [ada, ben])
        for person in (ben, dora):  # /avvisami (after the first lobby: no round yet)
            sent = await person.send(group, "/avvisami")
            await tg.wait_for_message(group, "ti scrivo in privato", after=sent)
        old = await table.row()
        answer = await (await ada.press(final, f"r:{old.game_id}:go")).wait(10)
        assert not answer.show_alert, answer.text
        lobby = await active(bot, group.id)
        ben_seat = lobby.seat_of(ben.id)
        assert ben_seat is not None
        assert not [m for m in tg.chat_messages(dora, from_bot=True)
                    if "Si è aperto un tavolo" in m.content]  # every seat taken yet

        def redrawn() -> Any:
            return next((m for m in tg.chat_messages(group, from_bot=True)
                         if any(b.callback_data == f"l:{lobby.game_id}:join"
                                for b in m.buttons) and "Ben" not in m.content), None)

        message = await tg.wait_until(redrawn, timeout=10, what="Ben's seat offered")
        assert "Posti liberi: 1" in message.content and "⏳" not in message.content
        assert f"r:{lobby.game_id}:ok" not in [b.callback_data for b in message.buttons]
        row = await active(bot, group.id)
        assert row.seat_of(ben.id) is None and len(row.seats) == 4
        # a seat free: the subscribers are told as for any lobby with seats (Dora), not
        # the one whose seat it was (Ben), with the lobby's link and the group's title
        told = await tg.wait_for_message(dora, "Si è aperto un tavolo", timeout=10)
        assert "Circolo" in told.content and "1 posto libero" in told.content
        assert any(f"start=j{lobby.game_id}" in (b.url or "") for b in told.buttons)
        # Ben comes back late: his confirmation is refused, the free seat is his to take
        answer = await (await ben.press(message, f"l:{lobby.game_id}:join")).wait(10)
        assert not answer.show_alert, answer.text
        row = await active(bot, group.id)
        again = row.seat_of(ben.id)
        assert again is not None and again.seat == ben_seat.seat  # the seat left free
        sent = await ada.send(group, "/inizia")
        await tg.wait_for_message(group, "Smazzata 1", after=sent, timeout=10)
        row = await repo.get_game(bot.rt.db, lobby.game_id)
        assert row is not None and row.status == "playing"
        assert not [m for m in tg.chat_messages(ben, from_bot=True)
                    if "Si è aperto un tavolo" in m.content]
        assert len([m for m in tg.chat_messages(dora, from_bot=True)
                    if "Si è aperto un tavolo" in m.content]) == 1
    finally:
        await bot.stop()


async def test_rematch_alone_deals_again_with_the_same_computers(
    tg: Any, tmp_path: Path
) -> None:
    bot = await make_bot(tg, tmp_path / "bot.db").start()
    ada = tg.add_user("Ada", language_code="it")
    await ada.start_bot()
    try:
        table = await open_solo_table(tg, bot, ada, level="normale")
        await table.play(cheap_policy)
        old = await table.row()
        assert old.status == "finished"
        final = await tg.wait_until(lambda: final_message(tg, ada, old.game_id), timeout=10,
                                    what="the final message's rivincita")
        answer = await (await ada.press(final, f"r:{old.game_id}:go")).wait(10)
        assert not answer.show_alert, answer.text
        row = await active(bot, ada.id)
        assert row.status == "playing" and row.game_id != old.game_id  # at once
        assert lineup(row) == lineup(old)  # the same four computers, in their seats
        await tg.wait_for_message(ada, "Le tue carte", after=final, timeout=10)
        answer = await (await ada.press(final, f"r:{old.game_id}:go")).wait(10)
        assert answer.show_alert and "già" in answer.text
    finally:
        await bot.stop()


async def test_the_time_to_confirm_survives_a_restart(
    tg: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rivincita's lobby is stored with its deadline: a bot started again frees the
    unconfirmed seats when the deadline comes (the named job is armed again)."""
    monkeypatch.setattr(rematch, "CONFIRM_SECONDS", 1.5)
    db_path = tmp_path / "bot.db"
    bot = await make_bot(tg, db_path).start()
    ada, ben = people(tg, "Ada", "Ben")
    for p in (ada, ben):
        await p.start_bot()
    group = tg.add_group("Circolo", [ada, ben], admins=[ada])
    try:
        table, final = await finished_match(tg, bot, group, [ada, ben])
        answer = await (await ada.press(final, f"r:{table.game_id}:go")).wait(10)
        assert not answer.show_alert, answer.text
        lobby = await active(bot, group.id)
        assert lobby.seat_of(ben.id) is not None
        await bot.handled()
    finally:
        await bot.stop()
    bot = await make_bot(tg, db_path).start()
    try:
        assert bot.app.job_queue is not None
        assert bot.app.job_queue.get_jobs_by_name(f"rematch:{lobby.game_id}")
        for _ in range(500):
            row = await active(bot, group.id)
            if row.seat_of(ben.id) is None:
                break
            await asyncio.sleep(0.01)
        assert row.seat_of(ben.id) is None and row.seat_of(ada.id) is not None
        assert row.status == "lobby" and len(row.seats) == 4
    finally:
        await bot.stop()
