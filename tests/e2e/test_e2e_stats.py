"""/statistiche end to end: several matches in two groups (one still running) and one alone
in a private chat; then each player's record as the bot shows it equals the figures
recomputed from a replay of the action logs through the game core (and agrees with the
chats' leaderboards); so do their partners (issue 48), and their rating there equals the
one a rebuild from the stored results gives."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from bot.features.stats import stats_message
from bot.partners import Pairing, Partners, partner_lines
from bot.prefs import is_private_chat
from bot.ratings import texts as rating_texts
from bot.ratings.model import user_key
from bot.ratings.rebuild import fold
from bot.render import texts
from bot.stats import Record
from game import View
from game.events import MatchOver, SmazzataScored
from storage import Executor, repo
from storage import ratings as rating_store
from tests.chaos.checks import replay
from tests.conftest import make_bot
from tests.e2e.driver import cheap_policy, small_table
from tests.e2e.test_e2e_solo import open_solo_table


def varied_policy(view: View, rng: random.Random) -> str:
    """Mostly the cheap policy, but the first bidder sometimes bids "2 a 61+" so that the
    records hold more than one contract kind."""
    legal = list(view.legal)
    if view.phase == "auction" and view.current_bid is None:
        twos = [c for c in legal if c.startswith("t") and int(c[1:]) <= 63]
        if twos and rng.random() < 0.4:
            return rng.choice(twos)
    return cheap_policy(view, rng)


async def replayed_games(db: Executor, user_id: int) -> list[tuple[int, int, list[Any]]]:
    """(chat id, the user's seat, events) of every started game the user sits in, from a
    replay of its action log (which must reproduce the stored snapshot)."""
    games = []
    for row in await repo.games_of_user(db, user_id, active_only=False):
        if row.seed is None:
            continue
        full = await repo.get_game(db, row.game_id)
        assert full is not None
        game = await replay(db, full)
        seat = next(s.seat for s in full.seats if s.user_id == user_id)
        games.append((full.chat_id, seat, list(game.history)))
    return games


def expected_record(games: list[tuple[int, int, list[Any]]], keep: Any) -> Record:
    """The record, written from the core's events (not from the stored results)."""
    record = Record()
    for chat_id, seat, events in games:
        if not keep(chat_id):
            continue
        for ev in events:
            if isinstance(ev, MatchOver):
                record.matches.add(seat in ev.winners)
            if not isinstance(ev, SmazzataScored):
                continue
            side = {ev.chiamante} | ({ev.socio} if ev.socio is not None else set())
            won = (seat in side) == ev.won
            record.smazzate.add(won)
            if seat == ev.chiamante:
                record.chiamante.add(won)
                record.contracts.setdefault(ev.contract, type(record.chiamante)()).add(won)
                if ev.in_mano:
                    record.in_mano.add(won)
            elif seat == ev.socio:
                record.socio.add(won)
            else:
                record.compare.add(won)
            taken = ev.caller_points if seat in side else 120 - ev.caller_points
            record.card_points += taken
            record.cappotti_made += taken == 120
            record.cappotti_suffered += taken == 0
            record.points += ev.deltas[seat]
    return record


async def test_statistiche_equal_a_replay_of_the_logs(tg: Any, tmp_path: Path) -> None:
    bot = await make_bot(tg, tmp_path / "bot.db").start()
    try:
        ada = tg.add_user("Ada <3", language_code="it")
        bea = tg.add_user("Bea & co", language_code="en")
        carlo = tg.add_user("Carlo", language_code="it")
        for person in (ada, bea, carlo):
            await person.start_bot()
        one = tg.add_group("Uno", [ada, bea], admins=[ada])
        two = tg.add_group("Due", [ada, carlo], admins=[ada])
        matches = [(one, [ada, bea], "hands:2"), (two, [carlo, ada], "hands:1"),
                   (one, [bea, ada], "hands:1"), (two, [carlo], "hands:1")]
        for group, people, end in matches:
            table = await small_table(tg, bot, group, people, match_end=end)
            sent = await people[0].send(group, "/inizia")
            await tg.wait_for_message(group, "Smazzata 1", after=sent, timeout=10)
            await table.play(varied_policy)
            assert (await table.row()).status == "finished"
        # a match alone against computers, in Ada's private chat
        solo_table = await open_solo_table(tg, bot, ada)
        await solo_table.play(varied_policy)
        assert (await solo_table.row()).status == "finished"
        # a match still running: its smazzata counts, the match does not (yet)
        running = await small_table(tg, bot, two, [ada, carlo], match_end="hands:3")
        sent = await ada.send(two, "/inizia")
        await tg.wait_for_message(two, "Smazzata 1", after=sent, timeout=10)
        await running.play(varied_policy, until=lambda game: game.smazzata_index == 1)
        await bot.rt.outbox.drain()

        db = bot.rt.db
        for user, group in ((ada, one), (ada, two), (bea, one), (carlo, two)):
            games = await replayed_games(db, user.id)
            overall = expected_record(games, lambda chat: True)
            here = expected_record(games, lambda chat, g=group.id: chat == g)
            solo = expected_record(games, is_private_chat)
            score = await repo.get_score(db, group.id, user.id)
            assert score is not None and here.points == score.total  # = the leaderboard
            assert (here.smazzate.played, here.smazzate.won) == (
                score.smazzate, score.smazzate_won)
            assert (here.matches.played, here.matches.won) == (score.matches, score.matches_won)
            sent = await user.send(group, "/statistiche")
            reply = await tg.wait_for_message(group, "📊", after=sent)
            expected = texts.stats_text("it", user.first_name, _stats(overall, here, solo))
            ratings, partners = await expected_extras(db, user.id, group.id, "it")
            assert ratings  # every player here has played a rated smazzata in this group
            assert reply.source == stats_message("it", expected, ratings, partners)
            assert "1 smazzate" not in reply.content and "1 partite" not in reply.content

        ada_games = await replayed_games(db, ada.id)
        overall = expected_record(ada_games, lambda chat: True)
        assert overall.matches.played == 4 and overall.smazzate.played == 7
        assert overall.chiamante.played + overall.socio.played + overall.compare.played == 7
        assert expected_record(ada_games, is_private_chat).smazzate.played == 2
        sent = await ada.dm("/statistiche")  # in private: every chat and alone, no group
        reply = await tg.wait_for_message(ada, "📊", after=sent)
        solo = expected_record(ada_games, is_private_chat)
        ratings, partners = await expected_extras(db, ada.id, ada.id, "it")  # alone's rating
        assert ratings
        assert reply.source == stats_message(
            "it", texts.stats_text("it", ada.first_name, _stats(overall, None, solo)), ratings,
            partners)
        assert "Da solo contro il computer</b>\nPartite: 1 partita" in reply.source
        # in private, and in English: every chat and the solo section (empty until solo play)
        sent = await bea.dm("/stats")
        reply = await tg.wait_for_message(bea, "📊", after=sent)
        bea_games = await replayed_games(db, bea.id)
        bea_overall = expected_record(bea_games, lambda chat: True)
        expected = texts.stats_text(
            "en", bea.first_name, _stats(bea_overall, None, Record())
        )
        ratings, partners = await expected_extras(db, bea.id, bea.id, "en")
        assert not ratings  # never played alone: no rating in her private chat
        assert reply.source == stats_message("en", expected, ratings, partners)
        assert "Alone against the computer" in reply.content
        assert "no deals yet" in reply.content and "In this group" not in reply.content

        assert not tg.errors, tg.errors
        assert not tg.unanswered_callbacks() and not tg.flood_violations
    finally:
        await bot.stop()


async def expected_extras(db: Executor, user_id: int, chat_id: int,
                          lang: str) -> tuple[list[str], list[str]]:
    """The rating lines (from a rebuild: the stored results replayed through the model)
    and the partner lines (from a replay of the action logs) /statistiche should show."""
    units = await rating_store.units(db)
    rebuilt = fold(units, {})
    where = {u.unit_id: (u.chat_id, u.family) for u in units}
    last = {where[unit_id]: seat for unit_id, seat in rebuilt.seats
            if seat.player == user_key(user_id)}
    mine = [r for r in rebuilt.ratings if r.player == user_key(user_id)]
    ratings = rating_texts.stats_lines(lang, mine, last, chat_id)
    found = Partners()
    for row in await repo.games_of_user(db, user_id, active_only=False):
        if row.seed is None:
            continue
        full = await repo.get_game(db, row.game_id)
        assert full is not None
        me = next(s.seat for s in full.seats if s.user_id == user_id)
        others = {s.seat: s for s in full.seats if s.is_human and s.user_id != user_id}
        for ev in (await replay(db, full)).history:
            if not isinstance(ev, SmazzataScored):
                continue
            side = {ev.chiamante} | ({ev.socio} if ev.socio is not None else set())
            for seat, other in others.items():
                assert other.user_id is not None
                pairing = found.pairings.setdefault(other.user_id,
                                                    Pairing(other.user_id, other.display_name))
                if (seat in side) != (me in side):
                    pairing.against += 1
                    pairing.against_won += int(ev.won == (me in side))
                elif me in side:
                    pairing.together += 1
                    pairing.together_won += int(ev.won)
                    pairing.called_you += int(seat == ev.chiamante and me == ev.socio)
                    pairing.you_called += int(me == ev.chiamante and seat == ev.socio)
    return ratings, partner_lines(lang, found, None)


def _stats(overall: Record, here: Record | None, solo: Record) -> Any:
    from bot.stats import PlayerStats

    return PlayerStats(overall, here, solo)
