"""End-to-end: a whole match of every variant (issue 12) through the fake Bot API.

Chiamata with 4 (il morto) and 6, the a punti auction, plain Briscola for 2, 3 and 4
(pairs), each opened with ``/nuova <game> <players>`` in a group and played to its final
message by people pressing the buttons they see, with computers in the other seats. The
checks are the five-player match's: no hand in the group, no Bot API error, every
callback answered, and the chat's scoreboard equal to a replay of the stored logs.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from bot.prefs import seat_count, with_value
from bot.render.texts import card_label
from bot.service import match_prefs
from game import Game, View
from game.events import BriscolaScored, MatchOver
from storage import repo
from tests.conftest import make_bot
from tests.e2e.driver import Policy, Table
from tests.e2e.test_e2e_match import finish, group_texts


def variant_policy(view: View, rng: random.Random) -> str:
    """Open (or raise a punti calls up to 70), else pass; name the first card or suit
    offered; random legal cards. Only codes of ``view.legal``: the core's."""
    legal = list(view.legal)
    if view.phase == "auction":
        points = [c for c in legal if c.startswith("n")]
        if points and int(points[0][1:]) <= 70:
            return points[min(len(points) - 1, rng.randrange(3))]
        if view.current_bid is None and "rR" in legal:
            return "rR"
        return "P"
    if view.phase == "declaration":
        return legal[rng.randrange(len(legal))]
    return rng.choice(legal)


def punti_policy(people: set[int]) -> Policy:
    """A punti: a person outbids any computer by one point (never the other person), so
    a person wins the auction and names the card; otherwise :func:`variant_policy`."""

    def policy(view: View, rng: random.Random) -> str:
        if view.phase != "auction":
            return variant_policy(view, rng)
        points = [c for c in view.legal if c.startswith("n")]
        if points and view.current_bidder not in people:
            return points[0]
        return "P"

    return policy


async def open_variant(
    tg: Any, bot: Any, new: str, humans: int, *, options: dict[str, str]
) -> Table:
    """``/nuova <new>`` in a group of ``humans`` people, who join by button; computers
    fill the other seats; ``options`` (short matches) are saved as the chat's first."""
    users = [tg.add_user(f"P{i} <{new}>", language_code="it") for i in range(humans)]
    group = tg.add_group(f"Tavolo {new}", users, admins=[users[0]])
    for user in users:
        await user.start_bot()
    prefs = await bot.rt.chat_prefs(group.id)
    for key, value in options.items():
        prefs = with_value(prefs, key, value)
    await repo.save_chat_settings(bot.rt.db, group.id, prefs.language, prefs.to_json())
    await users[0].send(group, f"/nuova {new}")
    lobby = await tg.wait_for_message(group, "nuova partita")
    gid = next(int(b.callback_data.split(":")[1]) for b in lobby.buttons
               if (b.callback_data or "").endswith(":join"))
    table = Table(tg, bot, group, users)
    table.game_id = gid
    for user in users:
        answer = await (await user.press(lobby, f"l:{gid}:join")).wait(10)
        assert not answer.show_alert, answer.text
    size = seat_count((await bot.rt.chat_prefs(group.id)).options)
    for _ in range(size - humans):
        answer = await (await users[0].press(lobby, f"l:{gid}:cpu")).wait(10)
        assert not answer.show_alert, answer.text
    await tg.wait_until(lambda: f"\n{size}. P" in tg.message(group, lobby.message_id).content
                        or f"\n{size}. 🤖" in tg.message(group, lobby.message_id).content)
    assert f"\n{size + 1}. " not in tg.message(group, lobby.message_id).content
    await users[0].send(group, "/inizia")
    await tg.wait_for_message(group, "Smazzata 1")
    return table


async def check_chiamata_board(bot: Any, table: Table, row: Any, replay: Game) -> None:
    """The chat's chiamata board holds exactly the replayed totals of the people."""
    board = {r.user_id: r.total for r in await repo.leaderboard(bot.rt.db, table.group.id)}
    people = {s.user_id: s.seat for s in row.seats if s.user_id is not None}
    assert board == {u: replay.totals[s] for u, s in people.items()}


async def check_briscola_board(bot: Any, table: Table, row: Any, replay: Game) -> None:
    """Plain Briscola's standings equal the smazzate and match won in the replay."""
    expected: dict[str, list[int]] = {}
    for ev in replay.history:
        sides = None
        if isinstance(ev, BriscolaScored):
            sides, won, column = ev.sides, {ev.winner}, 0
        elif isinstance(ev, MatchOver):
            sides = replay.rules.sides
            won, column = {i for i, s in enumerate(sides) if s[0] in ev.winners}, 2
        if sides is None:
            continue
        for index, side in enumerate(sides):
            ids = sorted(s.user_id for s in row.seats if s.seat in side and s.user_id)
            if ids:
                line = expected.setdefault("+".join(map(str, ids)), [0, 0, 0, 0])
                line[column] += 1
                line[column + 1] += int(index in won)
    rows = await repo.briscola_leaderboard(bot.rt.db, table.group.id)
    got = {r.side_key: [r.smazzate, r.smazzate_won, r.matches, r.matches_won] for r in rows}
    assert got == expected and all(r.players == replay.n for r in rows)


async def test_chiamata_four_with_il_morto(tg: Any, tmp_path: Path) -> None:
    bot = await make_bot(tg, tmp_path / "bot.db", computer_delay_seconds=0.02).start()
    try:
        table = await open_variant(tg, bot, "chiamata 4", 3, options={"match_end": "hands:1"})
        row, game, replay = await finish(tg, bot, table, variant_policy)
        assert game.n == 5 and game.morto is not None and row.seat(game.morto) is None
        texts = "\n".join(group_texts(tg, table.group))
        assert "💀 il morto" in texts
        # il morto's plays (R90) on the table as plays of its own seat: how many of them
        # reach the group depends on the group's pace against the computers' speed (0 of 8
        # seen once in the full suite on a loaded machine), so it is printed here and
        # checked on every version's table in tests/test_bot_variants.py
        style = match_prefs(row).options.deck_style.value
        shown = [c for c in replay.played_by[game.morto]
                 if f"💀 il morto: {card_label(style, c)}" in texts]
        print(f"\nil morto's cards seen on the table: {len(shown)} of 8")
        await check_chiamata_board(bot, table, row, replay)
        # R92: the people's changes need not add up to zero (il morto's share is dropped)
        assert replay.last_score is not None and replay.last_score.deltas[game.morto] == 0
        await list(table.users.values())[1].send(table.group, "/classifica")
        await tg.wait_for_message(table.group, "Classifica")
    finally:
        await bot.stop()


@pytest.mark.parametrize(("new", "humans"), [("chiamata 6", 2), ("a punti", 2)])
async def test_chiamata_six_and_a_punti(tg: Any, tmp_path: Path, new: str, humans: int) -> None:
    bot = await make_bot(tg, tmp_path / "bot.db").start()
    try:
        table = await open_variant(tg, bot, new, humans, options={"match_end": "hands:1"})
        people = {s.seat for s in (await table.row()).seats if s.is_human}
        policy = punti_policy(people) if new == "a punti" else variant_policy
        row, game, replay = await finish(tg, bot, table, policy)
        await check_chiamata_board(bot, table, row, replay)
        if new == "a punti":
            assert replay.last_score is not None and replay.last_score.contract == "punti"
            actions = await repo.load_actions(bot.rt.db, row.game_id)
            by_people = [a.code for a in actions if a.actor == "human"]
            # people called points through the group's picker (R44), and one of them
            # named the whole card with the private keyboard (R45)
            assert any(code.startswith("n") for code in by_people), by_people
            assert any(code.startswith("d") for code in by_people), by_people
            print(f"\na punti, the people's actions: {by_people[:12]}")
            buttons = [b.callback_data or "" for m in tg.chat_messages(
                table.group, from_bot=True, include_deleted=True) for b in m.buttons]
            assert not [d for d in buttons if d.startswith("a:") and d.split(":")[3][0] in "rto"]
        else:
            assert game.n == 6 and sum(replay.totals) == 0
    finally:
        await bot.stop()


@pytest.mark.parametrize("players", [2, 3, 4])
async def test_plain_briscola(tg: Any, tmp_path: Path, players: int) -> None:
    bot = await make_bot(tg, tmp_path / "bot.db").start()
    try:
        humans = 2
        table = await open_variant(tg, bot, f"briscola {players}", humans,
                                   options={"briscola_match": "rounds:1"})
        row, game, replay = await finish(tg, bot, table, variant_policy)
        assert game.n == players
        texts = "\n".join(group_texts(tg, table.group))
        assert "scoperta sotto il mazzo" in texts and "Mazzo: " in texts
        assert "Tutti hanno pescato" in texts
        assert "1 smazzata, vince chi ne vince di più" in texts  # the match format, R110
        privately = "\n".join(t for u in table.users.values() for t in group_texts(tg, u))
        assert "Hai pescato" in privately
        if players == 4:
            assert "Coppie:" in texts
            assert "Carte del compagno" in privately  # R107, in private only
        await check_briscola_board(bot, table, row, replay)
        assert not await repo.leaderboard(bot.rt.db, table.group.id)  # no chiamata points
        await next(iter(table.users.values())).send(table.group, "/classifica briscola")
        await tg.wait_for_message(table.group, "Classifica della Briscola")
    finally:
        await bot.stop()


async def test_lobby_follows_the_game_chosen(tg: Any, tmp_path: Path) -> None:
    """/nuova with words it does not know explains the forms; three people sit at a
    chiamata lobby, the settings menu turns it into Briscola for 2: the seat list follows,
    /inizia asks one to leave, then starts a two-seat game."""
    from tests.e2e.test_e2e_match import set_options

    bot = await make_bot(tg, tmp_path / "bot.db").start()
    try:
        anna, beppe, carla = (tg.add_user(n, language_code="it") for n in ("Anna", "Beppe",
                                                                             "Carla"))
        group = tg.add_group("Noi tre", [anna, beppe, carla], admins=[anna])
        for user in (anna, beppe, carla):
            await user.start_bot()
        await anna.send(group, "/nuova poker 7")
        await tg.wait_for_message(group, "/nuova briscola 2")
        await anna.send(group, "/nuova")
        lobby = await tg.wait_for_message(group, "Briscola chiamata a 5")
        assert "\n5. —" in lobby.content
        table = Table(tg, bot, group, [anna, beppe])
        gid = table.game_id = next(int(b.callback_data.split(":")[1]) for b in lobby.buttons
                                   if (b.callback_data or "").endswith(":join"))
        for user in (anna, beppe, carla):
            answer = await (await user.press(lobby, f"l:{gid}:join")).wait(10)
            assert not answer.show_alert, answer.text
        await set_options(table, anna, {"game": "briscola"})
        await tg.wait_until(lambda: "Briscola a 2" in tg.message(group, lobby.message_id).content)
        content = tg.message(group, lobby.message_id).content
        assert "\n3. Carla" in content and "\n4. " not in content
        sent = await anna.send(group, "/inizia")
        assert "Troppi giocatori" in (await tg.wait_for_message(group, after=sent)).content
        await carla.send(group, "/esci")
        await tg.wait_until(lambda: "Carla" not in tg.message(group, lobby.message_id).content)
        await anna.send(group, "/inizia")
        await tg.wait_for_message(group, "Smazzata 1")
        row, game = await table.state()
        assert game.n == 2 and {s.user_id for s in row.seats} == {anna.id, beppe.id}
        await bot.rt.outbox.drain()
        assert not tg.errors and not tg.unanswered_callbacks()
    finally:
        await bot.stop()


async def test_briscola_alone_against_the_computer(tg: Any, tmp_path: Path) -> None:
    """``/nuova briscola 2`` in the private chat: one computer, the table and the hand in
    one message, to the end of the match."""
    bot = await make_bot(tg, tmp_path / "bot.db").start()
    try:
        ada = tg.add_user("Ada", language_code="it")
        await ada.start_bot()
        prefs = with_value(await bot.rt.chat_prefs(ada.id), "briscola_match", "rounds:1")
        await repo.save_chat_settings(bot.rt.db, ada.id, prefs.language, prefs.to_json())
        sent = await ada.dm("/nuova briscola 2")
        lobby = await tg.wait_for_message(ada, "Briscola a 2", after=sent)
        fill = next(b.callback_data for b in lobby.buttons
                    if (b.callback_data or "").startswith("l:") and "fill" in b.callback_data)
        gid = int(fill.split(":")[1])
        for data in (fill, f"l:{gid}:go"):
            answer = await (await ada.press(lobby, data)).wait(10)
            assert not answer.show_alert, answer.text
        table = Table(tg, bot, ada.private_chat, [ada])
        table.game_id = gid
        await tg.wait_for_message(ada, "Le tue carte")
        await table.play(variant_policy)
        row, game = await table.state()
        assert row.status == "finished" and game.n == 2 and len(row.seats) == 2
        await tg.wait_for_message(ada, "Partita finita")
        await bot.rt.outbox.drain()
        assert not tg.errors and not tg.unanswered_callbacks() and not tg.flood_violations
    finally:
        await bot.stop()
