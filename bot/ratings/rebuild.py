"""Every rating recomputed from the stored results: ``python -m bot.ratings rebuild``.

The rated units are replayed in the order their ratings changed (their ids), each from
the smazzata result that decided it and the players stored with it, through the same
model the bot rates with (:mod:`bot.ratings.model`). :func:`fold` is pure; the same
numbers come out as the bot stored, to the last bit (a test checks it), unless the model
changed, which is what a rebuild is for.

A rebuild refuses to run while a match is being played (:class:`Busy`): its ratings
would change under it. It runs in one transaction, which on PostgreSQL also holds off
the rating of any unit until it is done.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bot.ratings import model
from storage import Database
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
