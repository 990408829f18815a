"""Every rating recomputed from the stored results: ``python -m bot.ratings rebuild``.

The rated units are replayed in the order their ratings changed (their ids), each from
the smazzata result that decided it and the players stored with it, through the same
model the bot rates with (:mod:`bot.ratings.model`). :func:`fold` is pure; the same
numbers come out as the bot stored, to the last bit (a test checks it), unless the model
changed, which is what a rebuild is for.

A rebuild refuses to run while a match is being played (:class:`Busy`): its ratings
would change under it. It runs in one transaction, which on PostgreSQL also holds off
the rating of any unit until it is done.

:func:`backfill` (``python -m bot.ratings backfill``) rates, once, the matches finished
before ratings existed (a database upgraded to them has none rated): in the order their
smazzate were scored, through the bot's own rating of a unit, with the seats as stored
at the end of each match (a seat a computer took over counts as that computer). It
refuses when any unit is rated already, or during play.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bot.prefs import Prefs
from bot.ratings import live, model
from game import Game
from storage import Database, repo
from storage import ratings as store


class Busy(Exception):
    """Matches are being played: a rebuild waits until none is."""

    def __init__(self, playing: int) -> None:
        super().__init__(
            f"{playing} match(es) being played: ratings change at each smazzata, so a "
            "rebuild now would race them; run it when no match is being played (stop "
            "the bot, or wait for the tables to end)"
        )
        self.playing = playing


class AlreadyRated(Exception):
    """A backfill runs on a database without rated units only."""

    def __init__(self, units: int) -> None:
        super().__init__(
            f"{units} unit(s) already rated: a backfill rates the matches played before "
            "ratings existed, once; to recompute the ratings use rebuild"
        )
        self.units = units


@dataclass(frozen=True)
class Rebuilt:
    ratings: list[store.RatingRow]
    seats: list[tuple[int, store.RatingSeat]]


def fold(units: Iterable[store.StoredUnit], names: dict[tuple[int, str, str], str]) -> Rebuilt:
    """Replay ``units`` (in their order) from nothing. ``names``: the names to keep,
    by (chat, family, player)."""
    current: dict[tuple[int, str, str], model.Rating] = {}
    counts: dict[tuple[int, str, str], int] = {}
    seats: list[tuple[int, store.RatingSeat]] = []
    for unit in units:
        family = _family(unit.family)
        players = {s.seat: s.player for s in unit.seats}
        rated = model.unit_of(family, json.loads(unit.result_json), sorted(players))
        before = {key: current.get((unit.chat_id, unit.family, key), model.Rating())
                  for key in players.values()}
        after = model.rate(rated, players, before)
        for key, rating in after.items():
            current[(unit.chat_id, unit.family, key)] = rating
            counts[(unit.chat_id, unit.family, key)] = \
                counts.get((unit.chat_id, unit.family, key), 0) + 1
        seats += [(unit.unit_id, store.RatingSeat(
            seat, key, before[key].mu, before[key].sigma, after[key].mu, after[key].sigma))
            for seat, key in sorted(players.items())]
    ratings = [
        store.RatingRow(chat, family, key, names.get((chat, family, key), ""), r.mu, r.sigma,
                        counts[(chat, family, key)])
        for (chat, family, key), r in sorted(current.items())
    ]
    return Rebuilt(ratings, seats)


def _family(name: str) -> model.Family:
    for family in model.FAMILIES:
        if family == name:
            return family
    raise ValueError(f"unknown family of games {name!r}")


@dataclass(frozen=True)
class Difference:
    what: str
    stored: object
    rebuilt: object


def differences(stored: Sequence[store.RatingRow], rebuilt: Rebuilt,
                stored_units: Sequence[store.StoredUnit]) -> list[Difference]:
    """Where the stored ratings differ from the rebuilt ones (none: the same numbers)."""
    found: list[Difference] = []
    was = {(r.chat_id, r.family, r.player): (r.mu, r.sigma, r.units) for r in stored
           if r.units}
    now = {(r.chat_id, r.family, r.player): (r.mu, r.sigma, r.units) for r in rebuilt.ratings}
    for key in sorted(was.keys() | now.keys()):
        if was.get(key) != now.get(key):
            found.append(Difference(f"rating {key}", was.get(key), now.get(key)))
    seats = {(unit.unit_id, s.seat): s for unit in stored_units for s in unit.seats}
    for unit_id, seat in rebuilt.seats:
        if seats.get((unit_id, seat.seat)) != seat:
            found.append(Difference(f"unit {unit_id} seat {seat.seat}",
                                    seats.get((unit_id, seat.seat)), seat))
    return found


async def rebuild(db: Database, *, write: bool = True) -> list[Difference]:
    """Recompute every rating; with ``write``, store what differs. Return the
    differences between the stored ratings and the recomputed ones.

    :raises Busy: a match is being played."""
    async with db.transaction() as tx:
        await store.lock_for_rebuild(tx)
        playing = await store.count_playing(tx)
        if playing:
            raise Busy(playing)
        stored_units = await store.units(tx)
        stored = await store.stored_ratings(tx)
        names = {(r.chat_id, r.family, r.player): r.display_name for r in stored}
        rebuilt = fold(stored_units, names)
        found = differences(stored, rebuilt, stored_units)
        if write and found:
            await store.rewrite(tx, rebuilt.seats, rebuilt.ratings)
    return found


async def backfill(db: Database) -> int:
    """Rate the finished matches of a database that has no rated unit yet; return the
    number of units rated.

    :raises Busy: a match is being played.
    :raises AlreadyRated: units are rated already."""
    async with db.transaction() as tx:
        await store.lock_for_rebuild(tx)
        playing = await store.count_playing(tx)
        if playing:
            raise Busy(playing)
        rated = await store.count_units(tx)
        if rated:
            raise AlreadyRated(rated)
        scored = []
        for finished in await repo.list_finished_games(tx, 0):
            row = await repo.get_game(tx, finished.game_id)
            if row is None or row.snapshot_json is None:
                continue
            options = Prefs.from_json(row.settings_json).options
            results = await repo.load_smazzata_results(tx, row.game_id)
            if options.game == "briscola":
                results = results[-1:]  # the match is the unit: its last smazzata
            morto = Game.from_json(row.snapshot_json).morto
            family = model.family_of(options.game, options.players)
            scored += [(r.created_at, r.game_id, r.smazzata_index, row, family, morto,
                        r.result_json) for r in results]
        scored.sort(key=lambda item: item[:3])
        count = 0
        for _, _, index, row, family, morto, result in scored:
            count += bool(await live.rate_unit(tx, row, family, morto, index,
                                               json.loads(result)))
    return count
