"""Commands: menus per scope and language, /aiuto, /regole, /mano, /annulla, commands in
the wrong kind of chat, anonymous admins, and the error report to ADMIN_CHAT_ID."""

from __future__ import annotations

import asyncio
import logging
import random
from pathlib import Path
from typing import Any

import pytest

from bot.features.help import GROUP_COMMANDS, PRIVATE_COMMANDS
from bot.prefs import with_value
from bot.tables import ui_of
from game import Game, TableOptions
from storage import repo
from tests.conftest import SPEED, make_bot
from tests.e2e.driver import cheap_policy, small_table

ANONYMOUS_ADMIN_ID = 1087968824  # Telegram's "GroupAnonymousBot"


def names(commands: list[dict[str, str]]) -> list[str]:
    return [c["command"] for c in commands]


async def anonymous_command(tg: Any, group: Any, text: str) -> Any:
    """An anonymous admin writes in ``group``: from GroupAnonymousBot, sender_chat = group.
    (The fake has no helper for it, so the update is put together from its parts.)"""
    from sandbox.fakeapi.world import text_entities

    anon = tg.world.users.get(ANONYMOUS_ADMIN_ID) or tg.add_user(
        "Group", username="GroupAnonymousBot", id=ANONYMOUS_ADMIN_ID
    )
    message = tg.world.new_message(group, anon, text=text, entities=text_entities(text))
    payload = tg.world.message_json(message)
    payload["from"]["is_bot"] = True
    payload["sender_chat"] = group.to_api()
    tg.world.emit("message", payload)
    await asyncio.sleep(0)
    return message


async def test_menus_help_rules_and_wrong_chats(tg: Any, tmp_path: Path) -> None:
    bot = await make_bot(tg, tmp_path / "bot.db").start()
    try:
        groups = {"type": "all_group_chats"}
        private = {"type": "all_private_chats"}
        italian = [it for it, _ in GROUP_COMMANDS]
        assert names(tg.commands(groups, "it")) == italian
        assert names(tg.commands(groups, "")) == italian  # default: DEFAULT_LANGUAGE=it
        assert names(tg.commands(groups, "en")) == [en for _, en in GROUP_COMMANDS]
        assert names(tg.commands(private, "it")) == [it for it, _ in PRIVATE_COMMANDS]
        assert names(tg.commands(private, "en")) == [en for _, en in PRIVATE_COMMANDS]
        assert "mano" not in names(tg.commands(groups, "it"))
        assert "classifica" not in names(tg.commands(private, "it"))
        assert "nuova" in names(tg.commands(private, "it"))  # a table alone
        hand = next(c for c in tg.commands(private, "en") if c["command"] == "hand")
        assert hand["description"] == "show your hand again"

        ugo = tg.add_user("Ugo", language_code="it")
        emma = tg.add_user("Emma", language_code="en-GB")
        for user in (ugo, emma):
            await user.start_bot()
        group = tg.add_group("Bar <Sport>", [ugo, emma], admins=[ugo])
        assert names(tg.visible_commands(group, emma)) == [en for _, en in GROUP_COMMANDS]

        async def answer(chat: Any, user: Any, text: str, **kw: Any) -> Any:
            await asyncio.sleep(1.5 / SPEED)  # people do not type 20 commands a second
            sent = await user.send(chat, text, **kw)
            return await tg.wait_for_message(chat, after=sent)

        help_group = await answer(group, ugo, "/aiuto@" + tg.bot.username)
        assert "comandi" in help_group.content and "/nuova" in help_group.content
        assert "/mano" not in help_group.content
        # issue 48: every /classifica variant, /avvisami, /statistiche @nome, the
        # rivincita and the inline mode (in the bot's command menu too)
        for said in ("/classifica sempre", "/classifica rating", "/classifica briscola",
                     "/avvisami", "/statistiche @nome", "Rivincita",
                     f"@{tg.bot.username}"):
            assert said in help_group.content, said
        board = next(c for c in tg.commands(groups, "it") if c["command"] == "classifica")
        assert "/classifica rating" in board["description"]
        board = next(c for c in tg.commands(groups, "en") if c["command"] == "leaderboard")
        for said in ("/leaderboard always", "/leaderboard rating", "/leaderboard briscola"):
            assert said in board["description"], said
        help_private = await answer(emma, emma, "/help")
        assert "commands" in help_private.content and "/mano (/hand)" in help_private.content
        assert "Rematch" in help_private.content and f"@{tg.bot.username}" in help_private.content

        rules = await answer(group, ugo, "/regole")
        assert "Regole della Briscola chiamata" in rules.content
        assert "Chiamata obbligata" in rules.content and "chiude subito l'asta" not in rules.content
        prefs = with_value(await bot.rt.chat_prefs(group.id), "a_carichi", "on")
        prefs = with_value(prefs, "language", "en")
        await repo.save_chat_settings(bot.rt.db, group.id, "en", prefs.to_json())
        rules = await answer(group, ugo, "/rules")  # this chat's options and language
        assert "Briscola chiamata rules" in rules.content
        assert "ends the auction at once" in rules.content
        rules = await answer(ugo, ugo, "/regole")  # private: the user's language
        assert "Regole della Briscola chiamata" in rules.content
        # A match being played keeps the options it started with (a carichi off).
        game_id = await repo.create_lobby(bot.rt.db, group.id, 0, ugo.id, with_value(
            prefs, "a_carichi", "off").to_json())
        rules = await answer(group, ugo, "/rules")
        assert "ends the auction at once" in rules.content  # a lobby: the chat's options
        snapshot = Game.new(TableOptions(), random.Random(1)).to_json()
        await repo.start_game(bot.rt.db, game_id, 1, snapshot)
        rules = await answer(group, ugo, "/rules")
        assert "Briscola chiamata rules" in rules.content  # still the chat's language
        assert "ends the auction at once" not in rules.content
        await repo.set_status(bot.rt.db, game_id, "cancelled")

        wrong = await answer(ugo, ugo, "/classifica")  # (/nuova in private: a table alone)
        assert "si usa in un gruppo" in wrong.content
        wrong = await answer(emma, emma, "/leaderboard")
        assert "works in a group" in wrong.content
        hand = await answer(group, emma, "/hand")  # the group speaks English now
        assert "private chat" in hand.content and "/hand" in hand.content
        assert hand.buttons[0].url == f"https://t.me/{tg.bot.username}"
        none = await answer(ugo, ugo, "/mano")
        assert "Non stai giocando" in none.content

        await asyncio.sleep(1.5 / SPEED)
        anon = await anonymous_command(tg, group, "/nuova")
        refused = await tg.wait_for_message(
            group, lambda m: m.reply_to is not None and m.reply_to.message_id == anon.message_id
        )
        assert "anonymous admin" in refused.content
        assert await repo.get_active_game(bot.rt.db, group.id, 0) is None
        await asyncio.sleep(1.5 / SPEED)
        anon = await anonymous_command(tg, group, "/classifica")  # needs nobody's identity
        board = await tg.wait_for_message(
            group, lambda m: m.reply_to is not None and m.reply_to.message_id == anon.message_id
        )
        assert "No scores" in board.content or "Scoreboard" in board.content
        await bot.rt.outbox.drain()
        assert not tg.errors, tg.errors
    finally:
        await bot.stop()


async def test_cancel_and_hand(tg: Any, tmp_path: Path) -> None:
    bot = await make_bot(tg, tmp_path / "bot.db").start()
    try:
        ada, bea, cris = (tg.add_user(n, language_code="it") for n in ("Ada", "Bea", "Cris"))
        for user in (ada, bea, cris):
            await user.start_bot()
        group = tg.add_group("Tavolo", [ada, bea, cris], admins=[ada])
        table = await small_table(tg, bot, group, [bea, cris], match_end="hands:3")
        gid = table.game_id
        await bea.send(group, "/inizia")  # bea created the table; ada is the admin
        await tg.wait_for_message(group, "Smazzata 1")
        await table.play(cheap_policy, until=lambda g: g.smazzata_index == 1)
        after_first = {r.user_id: r.total for r in await repo.leaderboard(bot.rt.db, group.id)}
        results = await repo.load_smazzata_results(bot.rt.db, gid)
        assert len(results) == 1 and set(after_first) == {bea.id, cris.id}

        # /mano: the hand message is sent again (the old one deleted)
        row = await table.row()
        seat = row.seat_of(cris.id)
        assert seat is not None
        old = await hand_message(table, seat.seat)
        await cris.dm("/mano")
        new = await hand_message(table, seat.seat, other_than=old)
        await tg.wait_until(lambda: cris.private_chat.messages[old].deleted, timeout=5)
        assert "Le tue carte" in tg.message(cris, new).content
        assert tg.last_bot_message(cris).message_id == new

        # /annulla: refused to a player who is neither creator nor admin
        sent = await cris.send(group, "/annulla")
        no = await tg.wait_for_message(group, "Solo chi ha creato la partita", after=sent)
        assert no.reply_to is not None and no.reply_to.message_id == sent.message_id
        sent = await bea.send(group, "/annulla")
        confirm = await tg.wait_for_message(group, "Vuoi davvero annullare", after=sent)
        refused = await (await cris.press(confirm, f"k:{gid}:y")).wait(10)
        assert refused.show_alert and "Solo chi ha creato" in (refused.text or "")
        assert (await table.row()).status == "playing"
        await (await bea.press(confirm, f"k:{gid}:n")).wait(10)
        await tg.wait_until(lambda: "Si continua" in tg.message(group, confirm.message_id).content)
        assert (await table.row()).status == "playing"

        sent = await bea.send(group, "/annulla")
        confirm = await tg.wait_for_message(group, "Vuoi davvero annullare", after=sent)
        answer = await (await ada.press(confirm, f"k:{gid}:y")).wait(10)  # an admin may
        assert not answer.show_alert
        await tg.wait_until(lambda: "annullata" in tg.message(group, confirm.message_id).content)
        row = await table.row()
        assert row.status == "cancelled"
        await bot.rt.outbox.drain()
        ui = ui_of(row)
        assert ui.table is not None
        assert "annullata" in tg.message(group, ui.table).content
        hand = tg.message(cris, ui.hands[seat.seat])
        assert "annullata" in hand.content and not hand.buttons
        version = row.version
        await asyncio.sleep(0.3)  # the computers stopped too
        assert (await table.row()).version == version
        scores = await repo.leaderboard(bot.rt.db, group.id)
        assert {r.user_id: r.total for r in scores} == after_first  # smazzata 1 stays
        assert all(r.matches == 0 for r in scores)  # a cancelled match is not counted
        sent = await cris.send(group, "/nuova")  # the table is free again
        await tg.wait_for_message(group, "Briscola chiamata", after=sent)
        assert not tg.errors, tg.errors
        assert not tg.unanswered_callbacks()
    finally:
        await bot.stop()


async def hand_message(table: Any, seat: int, other_than: int | None = None) -> int:
    """The id of the seat's hand message of smazzata 2, once drawn."""
    for _ in range(500):
        ui = ui_of(await table.row())
        mid = ui.hands.get(seat)
        if ui.table_smz == 1 and mid is not None and mid != other_than:
            return mid
        await asyncio.sleep(0.01)
    raise AssertionError("no hand message")


async def test_errors_are_logged_then_reported(
    tg: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ops = tg.add_group("Ops", [])
    bot = await make_bot(tg, tmp_path / "bot.db", admin_chat_id=ops.id).start()
    seen: list[int] = []

    class Spy(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.levelno >= logging.ERROR and record.exc_info:
                seen.append(len(tg.calls_to("sendMessage", ops)))

    spy = Spy()
    logging.getLogger("bot").addHandler(spy)  # (bot.inbox logs an update set aside)
    try:
        calls: list[int] = []

        async def broken(*args: Any, **kwargs: Any) -> Any:
            calls.append(1)
            raise RuntimeError("leaderboard <exploded> & co")

        # (/classifica reads the season's table and plain Briscola's standings: the
        # table of all time, repo.leaderboard, only with "sempre")
        monkeypatch.setattr(repo, "briscola_leaderboard", broken)
        ugo = tg.add_user("Ugo", language_code="it")
        group = tg.add_group("Bar", [ugo])
        sent = await ugo.send(group, "/classifica")
        sorry = await tg.wait_for_message(group, "Qualcosa è andato storto", after=sent)
        assert sorry.reply_to is not None
        report = await tg.wait_for_message(ops, "leaderboard <exploded> & co")
        assert "RuntimeError" in report.content and "/classifica" in report.content
        assert seen == [0]  # logged once, before anything was sent to the admin chat
        # handled again twice before it was set aside (issue 46), told and reported once
        assert len(calls) == 3
        assert len(tg.calls_to("sendMessage", ops)) == 1
        assert [m.text for m in group.messages.values()].count(sorry.text) == 1
        assert not tg.errors, tg.errors
    finally:
        logging.getLogger("bot").removeHandler(spy)
        await bot.stop()
