"""A person alone against computers, in the private chat with the bot: /nuova opens the
table there, one message per smazzata shows the table and holds every button (the auction's
calls and the cards), edited in place, plus the end-of-smazzata summaries; the bot restarts
mid-match and the match goes on; it counts in /statistiche, never in a group's scoreboard."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from bot.prefs import with_value
from storage import repo
from tests.conftest import make_bot
from tests.e2e.driver import Table, cheap_policy


async def open_solo_table(tg: Any, bot: Any, user: Any, level: str = "facile") -> Table:
    prefs = with_value(await bot.rt.chat_prefs(user.id), "match_end", "hands:2")
    await repo.save_chat_settings(bot.rt.db, user.id, prefs.language, prefs.to_json())
    sent = await user.dm("/nuova")
    lobby = await tg.wait_for_message(user, "nuova partita", after=sent)
    assert "4 posti liberi: scegli" in lobby.content or "4 free seats" in lobby.content
    fill = next(b.callback_data for b in lobby.buttons if (b.callback_data or "").endswith(level))
    gid = int(fill.split(":")[1])
    answer = await (await user.press(lobby, f"l:{gid}:set")).wait(10)  # the owner may
    assert not answer.show_alert, answer.text
    await tg.wait_for_message(user, "Impostazioni", after=lobby)
    answer = await (await user.press(lobby, fill)).wait(10)
    assert not answer.show_alert, answer.text
    await tg.wait_until(lambda: "Tavolo completo" in tg.message(user, lobby.message_id).text)
    row = await repo.get_game(bot.rt.db, gid)
    assert row is not None and [s.kind for s in row.seats].count("computer") == 4
    assert all(s.computer_level == level for s in row.seats if not s.is_human)
    answer = await (await user.press(lobby, f"l:{gid}:go")).wait(10)
    assert not answer.show_alert, answer.text
    table = Table(tg, bot, user.private_chat, [user])  # every button is in the private chat
    table.game_id = gid
    return table


async def test_a_whole_match_alone_in_private_with_a_restart(tg: Any, tmp_path: Path) -> None:
    db_path = tmp_path / "bot.db"
    bot = await make_bot(tg, db_path).start()
    ada = tg.add_user("Ada & <co>", language_code="it")
    await ada.start_bot()
    await tg.wait_for_message(ada, "Ciao")
    try:
        table = await open_solo_table(tg, bot, ada)
        await tg.wait_for_message(ada, "Le tue carte")
        row = await table.row()
        assert row.chat_id == ada.id and (await bot.rt.chat_prefs(ada.id)).turn_timeout == 0
        assert row.turn_deadline is None  # no timer alone, by default
        started = len(tg.calls)
        await table.play(cheap_policy, until=lambda g: g.smazzata_index == 1 and g.version > 60)
        assert (await table.row()).status == "playing"  # the restart comes mid-smazzata
        await bot.rt.outbox.drain()
    finally:
        await bot.stop()
    bot = await make_bot(tg, db_path).start()  # restart mid-match (smazzata 2)
    table.bot = bot
    try:
        old = (await table.row()).ui_json
        sent = await ada.dm("/mano")  # the table-and-hand message again, at the bottom
        again = await tg.wait_for_message(ada, "Le tue carte", after=sent)
        assert any(b.callback_data for b in again.buttons) and old != (await table.row()).ui_json
        await table.play(cheap_policy)
        row = await table.row()
        assert row.status == "finished"
        final = await tg.wait_for_message(ada, "Partita finita", timeout=10)
        assert "/statistiche" in final.content and "/classifica" not in final.content
        await bot.rt.outbox.drain()

        sends = [c for c in tg.calls[started:] if c.method == "sendMessage" and c.ok]
        assert all(c.chat_id == ada.id for c in tg.calls if c.chat_id is not None)
        # one table-and-hand message per smazzata (the first was sent before `started`),
        # two summaries and the final scores: no private message per move
        assert len(sends) <= 1 + 1 + 2 + 1, [c.text for c in sends]  # (+ /mano's)
        tables = [m for m in tg.chat_messages(ada, from_bot=True)
                  if "Le tue carte" in m.content or any("Le tue carte" in (h.text or "")
                                                       for h in m.history)]
        assert len(tables) == 2  # smazzata 1, and smazzata 2 (/mano deleted its first one)
        auction_states = [h for m in tables for h in m.history if h.reply_markup
                          and "Passo" in str(h.reply_markup) and "Le tue carte" in (h.text or "")]
        assert auction_states  # the auction's calls were on the hand's message
        assert all(m.reply_markup is None for m in tables)  # no buttons left behind
        summaries = [m for m in tg.chat_messages(ada, from_bot=True)
                     if "Fine della smazzata" in m.content]
        assert len(summaries) == 2

        assert not tg.errors, tg.errors
        assert not tg.unanswered_callbacks() and not tg.flood_violations
        # alone: never in a group's scoreboard; in the player's statistics
        group = tg.add_group("Amici", [ada], admins=[ada])
        sent = await ada.send(group, "/classifica")
        assert "Ancora nessun punteggio" in (await tg.wait_for_message(group, after=sent)).content
        sent = await ada.dm("/statistiche")
        stats = await tg.wait_for_message(ada, "📊", after=sent)
        solo = stats.content.split("Da solo contro il computer")[1]
        assert "Partite: 1 partita" in solo and "Smazzate: 2 smazzate" in solo
    finally:
        await bot.stop()


async def test_blocking_the_bot_ends_the_table_alone(tg: Any, running_bot: Any) -> None:
    bea = tg.add_user("Bea", language_code="en")
    await bea.start_bot()
    await tg.wait_for_message(bea, "Hi")
    table = await open_solo_table(tg, running_bot, bea, level="forte")
    await tg.wait_for_message(bea, "Your cards")
    await running_bot.rt.outbox.drain()
    bea.block_bot()
    for _ in range(200):  # the game ends at once: no computer plays on in a blocked chat
        if (await table.row()).status == "cancelled":
            break
        await asyncio.sleep(0.05)
    assert (await table.row()).status == "cancelled"
    assert not tg.unanswered_callbacks()


async def test_the_computers_decide_during_the_display_pause(
    tg: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    """Issue 47: a computer's decision begins with the pause before its move, with the
    pause as its budget (a busy search pool gives way to the cheap level within it), so
    the move is stored when the pause ends, not a decision later."""
    from bot import players

    pause = 0.3
    loop = asyncio.get_running_loop()
    begun: dict[int, tuple[float, float | None]] = {}  # version -> (when, budget)
    real_decide = players.decide

    async def decide(level: str, seed: int, view: Any, budget: float | None = None) -> Any:
        begun.setdefault(view.version, (loop.time(), budget))
        return await real_decide(level, seed, view, budget)

    monkeypatch.setattr(players, "decide", decide)
    bot = await make_bot(tg, tmp_path / "bot.db", computer_delay_seconds=pause).start()
    stored: dict[int, float] = {}  # version before a computer's move -> when stored
    service = bot.rt.tables.service
    real_apply = service.apply

    async def apply(game_id: int, version: int, seat: Any, code: str, actor: Any,
                    *args: Any, **kwargs: Any) -> Any:
        applied = await real_apply(game_id, version, seat, code, actor, *args, **kwargs)
        if actor == "computer":
            stored.setdefault(version, loop.time())
        return applied

    monkeypatch.setattr(service, "apply", apply)
    try:
        cleo = tg.add_user("Cleo", language_code="it")
        await cleo.start_bot()
        await tg.wait_for_message(cleo, "Ciao")
        table = await open_solo_table(tg, bot, cleo, level="forte")
        await table.play(cheap_policy, until=lambda g: len(stored) >= 8)
    finally:
        await bot.stop()
    assert len(stored) >= 8
    for version, at in stored.items():
        started, budget = begun[version]
        assert budget == pause
        assert at - started >= pause - 0.02  # begun before the pause, not after it
