"""Seasons (issue 48): their boundaries in Europe/Rome, the table from stored results,
the podium; and the storage of "/avvisami" and of the podiums shown, on both engines."""

from __future__ import annotations

import json
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from bot.features import seasons
from bot.features.seasons import Season, season_at, standings
from bot.prefs import MENU, Prefs, cycle, with_value
from storage import SeatRow, open_database, repo, social
from storage.migrations import LATEST_VERSION, get_version

UTC = ZoneInfo("UTC")


def ts(*args: int, zone: ZoneInfo = UTC) -> float:
    return datetime(*args, tzinfo=zone).timestamp()  # type: ignore[misc]


def test_a_month_begins_at_midnight_in_rome() -> None:
    # 23:30 UTC on 31 October is 00:30 on 1 November in Rome (CET, UTC+1)
    assert season_at("month", ts(2026, 10, 31, 23, 30)) == Season("month", 2026, 11)
    assert season_at("month", ts(2026, 10, 31, 22, 59)) == Season("month", 2026, 10)
    # summer time: 22:00 UTC on 30 June is midnight in Rome (CEST, UTC+2)
    assert season_at("month", ts(2026, 6, 30, 22, 0)) == Season("month", 2026, 7)
    nov = Season("month", 2026, 11)
    assert nov.start == ts(2026, 11, 1, zone=seasons.SEASON_ZONE)
    assert nov.end == ts(2026, 12, 1, zone=seasons.SEASON_ZONE)
    assert nov.previous() == Season("month", 2026, 10)
    assert Season("month", 2026, 1).previous() == Season("month", 2025, 12)
    assert Season("month", 2026, 12).following() == Season("month", 2027, 1)


def test_quarters_years_and_none() -> None:
    assert season_at("quarter", ts(2026, 11, 28)) == Season("quarter", 2026, 10)
    assert season_at("quarter", ts(2026, 3, 31, 21, 59)) == Season("quarter", 2026, 1)
    assert season_at("quarter", ts(2026, 3, 31, 22, 0)) == Season("quarter", 2026, 4)
    assert Season("quarter", 2026, 1).previous() == Season("quarter", 2025, 10)
    assert season_at("year", ts(2026, 12, 31, 23, 30)) == Season("year", 2027, 1)
    assert Season("year", 2027, 1).previous() == Season("year", 2026, 1)
    assert season_at("none", ts(2026, 5, 5)) is None
    assert Season("quarter", 2026, 10).label("it") == "4º trimestre 2026"
    assert Season("quarter", 2026, 10).label("en") == "Q4 2026"
    assert Season("month", 2026, 11).label("it") == "novembre 2026"
    assert Season("month", 2026, 11).label("en") == "November 2026"
    assert Season("year", 2026, 1).label("it") == "2026"
    keys = {Season(k, 2026, 1).key for k in ("month", "quarter", "year")}
    assert len(keys) == 3


def result(chiamante: int, socio: int | None, won: bool, deltas: list[int]) -> str:
    return json.dumps({"kind": "scored", "chiamante": chiamante, "socio": socio, "won": won,
                       "deltas": deltas})


def test_standings_from_stored_results() -> None:
    rows = [
        social.SeasonSmazzataRow(1, 10, "Ada", 0, result(0, 1, True, [4, 2, -2, -2, -2])),
        social.SeasonSmazzataRow(1, 11, "Ben", 1, result(0, 1, True, [4, 2, -2, -2, -2])),
        social.SeasonSmazzataRow(1, 10, "Ada", 0, result(2, 3, False, [1, 1, -2, -1, 1])),
        social.SeasonSmazzataRow(1, 11, "Ben", 1, result(2, 3, False, [1, 1, -2, -1, 1])),
        social.SeasonSmazzataRow(2, 11, "Ben", 0, result(0, None, False,
                                                         [-8, 2, 2, 2, 2])),
        # plain Briscola has its own standings; a broken row is skipped
        social.SeasonSmazzataRow(3, 10, "Ada", 0, json.dumps({"kind": "briscola_scored"})),
        social.SeasonSmazzataRow(4, 10, "Ada", 0, "{not json"),
    ]
    chiamata = Prefs().to_json()
    briscola = with_value(Prefs(), "game", "briscola").to_json()
    matches = [social.SeasonMatchRow(1, 10, chiamata), social.SeasonMatchRow(1, 11, chiamata),
               social.SeasonMatchRow(3, 10, briscola)]
    assert standings(rows, matches) == [
        ("Ada", 5, 1, 2, 1, 1),
        ("Ben", -5, 1, 3, 1, 0),
    ]
    text = seasons.podium_text("it", Season("month", 2026, 10), standings(rows, matches))
    assert text.splitlines() == ["🏁 <b>Stagione finita: ottobre 2026</b>",
                                 "🥇 Ada: <b>+5</b>", "🥈 Ben: <b>−5</b>"]
    tied = [("A", 3, 1, 1, 0, 0), ("B", 3, 1, 1, 0, 0), ("C", 1, 1, 1, 0, 0),
            ("D", 0, 1, 1, 0, 0)]
    assert [line.split()[0] for line in seasons.podium_text(
        "en", Season("year", 2026, 1), tied).splitlines()[1:]] == ["🥇", "🥇", "🥉"]


def test_the_season_is_a_setting_of_the_chat() -> None:
    index = next(i for i, option in enumerate(MENU) if option.key == "season")
    prefs = Prefs()
    assert prefs.season == "month"
    seen = []
    for _ in range(4):
        prefs = cycle(prefs, index)
        seen.append(prefs.season)
    assert seen == ["quarter", "year", "none", "month"]
    assert Prefs.from_json(with_value(Prefs(), "season", "year").to_json()).season == "year"
    assert Prefs.from_json('{"season": "week"}').season == "month"  # unreadable: default


async def test_storage_of_subscriptions_rounds_and_podiums(database_url: str) -> None:
    db = await open_database(database_url)
    now = [1_000_000.0]
    db.clock = lambda: now[0]  # type: ignore[attr-defined]
    try:
        assert await get_version(db) == LATEST_VERSION
        await db.execute(
            "INSERT INTO users (user_id, first_name, private_ok, updated_at) "
            "VALUES (1, 'a', 1, 0), (2, 'b', 0, 0)")
        assert await social.subscribe(db, -5, 1) is True
        assert await social.subscribe(db, -5, 1) is False
        assert await social.subscribe(db, -5, 2) is True  # (has blocked the bot)
        assert await social.subscribe(db, -5, 3) is True  # (never seen: may be tried)
        assert await social.subscribe(db, -6, 1) is True
        assert await social.notify_subscribers(db, -5) == [(1, True), (2, False), (3, True)]
        assert await social.unsubscribe(db, -5, 3) is True
        assert await social.unsubscribe(db, -5, 3) is False
        assert await social.unsubscribe_everywhere(db, 1) == 2
        assert await social.notify_subscribers(db, -6) == []

        assert await social.claim_notify_round(db, -5, 10, 3600) is True
        assert await social.claim_notify_round(db, -5, 11, 3600) is False  # within the hour
        assert await social.claim_notify_round(db, -7, 11, 3600) is True  # another group
        now[0] += 3600
        assert await social.claim_notify_round(db, -5, 10, 3600) is False  # same lobby
        assert await social.claim_notify_round(db, -5, 12, 3600) is True

        assert await social.claim_podium(db, -5, "month:2026-10") is True
        assert await social.claim_podium(db, -5, "month:2026-10") is False
        assert await social.claim_podium(db, -5, "month:2026-11") is True
        assert await social.claim_podium(db, -8, "month:2026-11") is True

        # a group becomes a supergroup: its rows follow (the new id's own are kept)
        await social.subscribe(db, -5, 3)
        await social.subscribe(db, -9, 3)
        await social.subscribe(db, -9, 4)
        await social.claim_podium(db, -9, "month:2026-09")
        await social.migrate_chat(db, -5, -9)
        await social.migrate_chat(db, -5, -9)  # (idempotent)
        assert [u for u, _ in await social.notify_subscribers(db, -9)] == [2, 3, 4]
        assert await social.notify_subscribers(db, -5) == []
        assert await social.claim_notify_round(db, -9, 12, 3600) is False  # -5's round
        assert await social.claim_podium(db, -9, "month:2026-09") is False  # -9's own
    finally:
        await db.close()


@pytest.mark.parametrize("kind", ["month", "quarter", "year"])
def test_seasons_tile_time(kind: str) -> None:
    """Consecutive seasons meet exactly: every instant is in one season."""
    season = season_at(kind, ts(2024, 1, 15))
    assert season is not None
    for _ in range(30):
        nxt = season.following()
        assert season.end == nxt.start and season.start < season.end
        assert season_at(kind, season.end - 1) == season
        assert season_at(kind, nxt.start) == nxt
        season = nxt


async def test_a_seasons_rows_on_both_engines(database_url: str) -> None:
    """The season's smazzate and matches are read by the time they were stored, in the
    chat, people only."""
    db = await open_database(database_url)
    now = [ts(2026, 10, 31, 22, 30)]  # 23:30 in Rome: October
    db.clock = lambda: now[0]  # type: ignore[attr-defined]
    try:
        gid = await repo.create_lobby(db, -5, 0, 1, Prefs().to_json())
        seats = [SeatRow.human(0, 1, "Ada"), SeatRow.computer(1, "🤖 1", "facile"),
                 SeatRow.human(2, 2, "Ben")]
        await repo.start_game(db, gid, 7, "{}", seats=seats, settings_json=Prefs().to_json())
        await repo.record_smazzata_result(db, gid, 0, result(0, 2, True, [2, -1, 1]))
        now[0] += 3600  # 00:30 in Rome: November
        await repo.record_smazzata_result(db, gid, 1, result(1, None, False, [1, -4, 1]))
        await repo.set_status(db, gid, "finished")
        other = await repo.create_lobby(db, -6, 0, 1, Prefs().to_json())  # another chat
        await repo.start_game(db, other, 8, "{}", seats=seats[:1])
        await repo.record_smazzata_result(db, other, 0, result(0, None, True, [4]))

        october, november = Season("month", 2026, 10), Season("month", 2026, 11)
        rows = await social.season_smazzate(db, -5, october.start, october.end)
        assert [(r.user_id, r.seat, r.display_name) for r in rows] == [(1, 0, "Ada"),
                                                                         (2, 2, "Ben")]
        assert await social.season_matches(db, -5, october.start, october.end) == []
        rows = await social.season_smazzate(db, -5, november.start, november.end)
        assert [json.loads(r.result_json)["deltas"][r.seat] for r in rows] == [1, 1]
        matches = await social.season_matches(db, -5, november.start, november.end)
        assert [(m.game_id, m.user_id) for m in matches] == [(gid, 1), (gid, 2)]
        assert await seasons.season_table(db, -5, november) == [
            ("Ada", 1, 1, 1, 0, 0), ("Ben", 1, 1, 1, 0, 0)]
    finally:
        await db.close()
