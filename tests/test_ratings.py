"""Ratings (issue 48): the model's sides and update, units rated in the move's
transaction on both engines, and the rebuild giving the stored numbers again."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bench.sim import simple_policy
from bot.prefs import Prefs
from bot.ratings import model
from bot.ratings.rebuild import AlreadyRated, Busy, backfill, rebuild
from bot.service import GameService
from game import TableOptions
from storage import Database, SeatRow, open_database, repo
from storage import ratings as store

CHAT = -100777
REPO_ROOT = Path(__file__).resolve().parent.parent


# --------------------------------------------------------------------------- the model


def test_equal_players_meet_at_even_odds_whatever_the_sizes() -> None:
    players = {s: f"u:{s}" for s in range(5)}
    won = model.rate(model.Unit(((0, 1), (2, 3, 4)), (1, 2)), players, {})
    lost = model.rate(model.Unit(((0, 1), (2, 3, 4)), (2, 1)), players, {})
    gain = won["u:0"].mu - model.MU
    assert gain > 0 and won["u:2"].mu < model.MU
    # padded to three a side: a win and a loss move the caller by the same amount
    assert lost["u:0"].mu == pytest.approx(model.MU - gain)
    assert won["u:2"].mu == pytest.approx(model.MU - gain)
    # alone (in mano), the chiamante takes the side's whole change
    solo = model.rate(model.Unit(((0,), (1, 2, 3, 4)), (1, 2)), players, {})
    assert solo["u:0"].mu == pytest.approx(model.MU + gain, rel=0.05)
    assert all(r.sigma < model.SIGMA for r in solo.values())


def test_a_stronger_winner_gains_less() -> None:
    players = {0: "u:strong", 1: "u:weak"}
    strong = {"u:strong": model.Rating(35.0, 3.0), "u:weak": model.Rating(20.0, 3.0)}
    expected = model.rate(model.Unit(((0,), (1,)), (1, 2)), players, strong)
    upset = model.rate(model.Unit(((0,), (1,)), (2, 1)), players, strong)
    assert 0 < expected["u:strong"].mu - 35.0 < 35.0 - upset["u:strong"].mu


def test_one_computer_level_on_several_seats_is_one_player() -> None:
    players = {0: "u:1", 1: "cpu:normale", 2: "cpu:normale", 3: "cpu:normale",
               4: "cpu:normale"}
    after = model.rate(model.Unit(((0, 1), (2, 3, 4)), (1, 2)), players, {})
    alone = model.rate(model.Unit(((0, 1), (2, 3, 4)), (1, 2)),
                       {s: f"u:{s}" for s in range(5)}, {})
    step = alone["u:0"].mu - model.MU
    # on the winning side once, on the losing side three times
    assert after["cpu:normale"].mu == pytest.approx(model.MU + step - 3 * step)
    assert set(after) == {"u:1", "cpu:normale"}


def test_units_from_stored_results() -> None:
    chiamata = {"chiamante": 3, "socio": 0, "won": False, "in_mano": False}
    assert model.chiamata_unit(chiamata, range(5)) == model.Unit(((0, 3), (1, 2, 4)), (2, 1))
    in_mano = {"chiamante": 2, "socio": None, "won": True, "in_mano": True}
    assert model.chiamata_unit(in_mano, range(6)) == model.Unit(((2,), (0, 1, 3, 4, 5)), (1, 2))
    three = {"sides": [[0], [1], [2]], "wins": [1, 3, 1]}
    assert model.briscola_unit(three) == model.Unit(((0,), (1,), (2,)), (2, 1, 2))
    pairs = {"sides": [[0, 2], [1, 3]], "wins": [2, 1]}
    assert model.briscola_unit(pairs) == model.Unit(((0, 2), (1, 3)), (1, 2))
    assert [model.family_of(g, n) for g, n in
            (("chiamata", 4), ("chiamata", 6), ("briscola", 2), ("briscola", 4),
             ("briscola", 3))] == ["chiamata", "chiamata", "briscola", "briscola", "briscola3"]


def test_the_number_shown() -> None:
    assert model.Rating().shown == model.OFFSET
    assert model.Rating(30.0, 2.0).shown == model.OFFSET + model.SCALE * 24


# --------------------------------------------------------------------------- stored


@pytest.fixture
async def db(database_url: str) -> AsyncIterator[Database]:
    database = await open_database(database_url)
    yield database
    await database.close()


async def play(
    db: Database, service: GameService, options: TableOptions, seats: list[SeatRow],
    *, chat: int = CHAT, until_over: bool = True, seed: int = 5,
) -> int:
    """A match through the service, every seat moved by bench.sim's policy."""
    service.seed_source = lambda: seed
    gid = await repo.create_lobby(db, chat, 0, 100, "{}")
    await service.start(gid, seats, Prefs(options=options, turn_timeout=0))
    rng = random.Random(seed)
    while True:
        row, game = await service.load(gid)
        seat = game.current_seat()
        assert seat is not None
        applied = await service.apply(gid, row.version, seat,
                                      simple_policy(game.view(seat), rng), "computer")
        if applied.game.is_over() or (not until_over and applied.game.scored_count):
            return gid


def people(n: int, computers: int = 0) -> list[SeatRow]:
    seats = [SeatRow.human(i, 100 + i, f"P{i}") for i in range(n - computers)]
    return seats + [SeatRow.computer(i, f"🤖 {i}", "normale")
                    for i in range(n - computers, n)]


async def test_units_are_rated_with_the_move_and_rebuilt_the_same(db: Database) -> None:
    service = GameService(db)
    chiamata = TableOptions(match_end="hands:3")
    five = await play(db, service, chiamata, people(5, computers=2))
    four = await play(db, service, TableOptions(players=4, match_end="hands:2"), people(4),
                      seed=8)
    await play(db, service, TableOptions(game="briscola", players=4, briscola_match="wins:1"),
               people(4, computers=1), seed=9)
    await play(db, service, TableOptions(game="briscola", players=3, briscola_match="wins:1"),
               people(3), seed=10)

    changes = await store.game_changes(db, five)
    results = await repo.load_smazzata_results(db, five)
    assert sorted(changes) == [r.smazzata_index for r in results]  # a unit per smazzata
    for result in results:
        scored = json.loads(result.result_json)
        seats = changes[result.smazzata_index]
        calling = {scored["chiamante"], scored["socio"]}
        for seat in seats:
            won = (seat.seat in calling) == scored["won"]
            # a computer level sits on both sides: its change is their sum
            if not seat.player.startswith("cpu:"):
                assert (seat.mu > seat.mu_before) == won, (seat, scored)
        assert [s.player for s in seats] == ["u:100", "u:101", "u:102", "cpu:normale",
                                             "cpu:normale"]
    morto_seats = next(iter((await store.game_changes(db, four)).values()))
    assert [s.player for s in morto_seats].count(model.MORTO) == 1

    board = await store.ratings_board(db, CHAT, "chiamata")
    assert {r.player for r in board} == {"u:100", "u:101", "u:102", "u:103", "cpu:normale",
                                         model.MORTO}
    assert [model.shown(r.mu, r.sigma) for r in board] == sorted(
        (model.shown(r.mu, r.sigma) for r in board), reverse=True)
    assert {r.family for r in await store.player_ratings(db, "u:100")} == {
        "chiamata", "briscola", "briscola3"}
    pairs = await store.ratings_board(db, CHAT, "briscola")
    assert all(r.units == 1 for r in pairs) and len(pairs) == 4

    assert await rebuild(db, write=False) == []  # the same numbers, to the last bit

    # a rating spoiled by hand is found, and put back by a rebuild
    await db.execute("UPDATE ratings SET mu = mu + 1 WHERE player = 'u:100'")
    found = await rebuild(db)
    assert {d.what for d in found} == {f"rating ({CHAT}, 'chiamata', 'u:100')",
                                       f"rating ({CHAT}, 'briscola', 'u:100')",
                                       f"rating ({CHAT}, 'briscola3', 'u:100')"}
    assert await rebuild(db, write=False) == []


async def test_a_rebuild_during_play_is_refused(db: Database) -> None:
    service = GameService(db)
    await play(db, service, TableOptions(match_end="hands:3"), people(5), until_over=False)
    before = await store.stored_ratings(db)
    with pytest.raises(Busy) as refused:
        await rebuild(db)
    assert refused.value.playing == 1
    assert await store.stored_ratings(db) == before


def test_the_command_line(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"

    async def setup(playing: bool) -> None:
        database = await open_database(url)
        try:
            await play(database, GameService(database), TableOptions(match_end="hands:2"),
                       people(5, computers=4), chat=1234, until_over=not playing)
        finally:
            await database.close()

    import asyncio
    asyncio.run(setup(False))
    run = [sys.executable, "-m", "bot.ratings", "rebuild", "--database-url", url]
    done = subprocess.run([*run, "--check"], cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert "the same as recomputed" in done.stdout
    done = subprocess.run([sys.executable, "-m", "bot.ratings", "backfill", "--database-url",
                           url], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "backfill refused: " in done.stderr  # rated already
    asyncio.run(setup(True))
    done = subprocess.run(run, cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "rebuild refused: 1 match(es) being played" in done.stderr


async def test_ratings_follow_a_group_that_becomes_a_supergroup(db: Database) -> None:
    service = GameService(db)
    gid = await play(db, service, TableOptions(match_end="hands:2"), people(5, computers=3))
    before = await store.ratings_board(db, CHAT, "chiamata")
    supergroup = -1009990001
    await service.migrate_chat(CHAT, supergroup, [gid])
    assert await store.ratings_board(db, CHAT, "chiamata") == []
    after = await store.ratings_board(db, supergroup, "chiamata")
    assert [(r.player, r.mu, r.sigma, r.units) for r in after] == [
        (r.player, r.mu, r.sigma, r.units) for r in before]
    assert {u.chat_id for u in await store.units(db)} == {supergroup}
    assert await rebuild(db, write=False) == []
    await service.migrate_chat(CHAT, supergroup, [gid])  # again: nothing changes
    assert await store.ratings_board(db, supergroup, "chiamata") == after


async def test_a_unit_that_cannot_be_rated_never_blocks_the_move(
    db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    """A stored result the model cannot read (here: a seat nobody holds) is logged and
    left unrated; the move is stored all the same, and the rebuild agrees."""
    from bot.ratings import live
    from storage import GameRow

    service = GameService(db)
    gid = await play(db, service, TableOptions(match_end="hands:1"), people(5))
    row = await repo.get_game(db, gid)
    assert isinstance(row, GameRow)
    async with db.transaction() as tx:
        seats = await live.rate_unit(tx, row, "chiamata", None, 7, {
            "chiamante": 9, "socio": None, "won": True, "in_mano": True})
    assert seats == [] and "smazzata 7 of game" in caplog.text
    assert all(u.smazzata_index != 7 for u in await store.units(db))
    assert await rebuild(db, write=False) == []


async def test_a_backfill_rates_the_matches_played_before_as_the_bot_did(
    db: Database
) -> None:
    """Matches played, then their ratings forgotten (a database from before ratings):
    the backfill rates them again, the same numbers as the bot rated them live; once."""
    service = GameService(db)
    await play(db, service, TableOptions(match_end="hands:2"), people(5, computers=2))
    await play(db, service, TableOptions(players=4, match_end="hands:2"), people(4), seed=8)
    await play(db, service, TableOptions(game="briscola", players=3, briscola_match="wins:1"),
               people(3), seed=10)
    live_units = [(u.game_id, u.smazzata_index, u.seats) for u in await store.units(db)]
    live_ratings = [(r.chat_id, r.family, r.player, r.mu, r.sigma, r.units)
                    for r in await store.stored_ratings(db)]
    for table in ("rating_seats", "rating_units", "ratings"):
        await db.execute(f"DELETE FROM {table}")
    assert await backfill(db) == len(live_units)
    assert [(u.game_id, u.smazzata_index, u.seats) for u in await store.units(db)] == \
        live_units
    assert [(r.chat_id, r.family, r.player, r.mu, r.sigma, r.units)
            for r in await store.stored_ratings(db)] == live_ratings
    assert await rebuild(db, write=False) == []
    with pytest.raises(AlreadyRated):
        await backfill(db)
