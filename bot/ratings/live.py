"""Rating a unit as it ends, in the transaction of the move that ends it.

:func:`rate_events` is called by the service with the events of one move: a scored
smazzata of chiamata is a unit, and so is the end of a plain Briscola match (its last
scored smazzata decides it). Who sits where is read from the stored seats at that moment
(a seat a computer took over is rated as that computer from then on) and stored with the
unit, so that a rebuild finds the same players.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence

from bot.ratings import model
from game import TableOptions
from game.events import BriscolaScored, Event, MatchOver, SmazzataScored
from storage import Executor, GameRow, SeatRow
from storage import ratings as store

log = logging.getLogger(__name__)


def seat_players(row: GameRow, morto: int | None) -> dict[int, str]:
    """Seat -> player key: a person, a computer level, il morto."""
    players = {s.seat: _key(s) for s in row.seats}
    if morto is not None:
        players[morto] = model.MORTO
    return players


def _key(seat: SeatRow) -> str:
    if seat.is_human and seat.user_id is not None:
        return model.user_key(seat.user_id)
    return model.computer_key(seat.computer_level)


async def rate_events(
    tx: Executor, row: GameRow, options: TableOptions, morto: int | None,
    events: Sequence[Event],
) -> None:
    """Rate the units ``events`` end (none, usually)."""
    game = options.game
    family = model.family_of(game, options.players)
    last_briscola: BriscolaScored | None = None
    for ev in events:
        if isinstance(ev, SmazzataScored):
            # (the result as stored and read back by a rebuild: its tuples are lists)
            await rate_unit(tx, row, family, morto, ev.smazzata, json.loads(
                json.dumps(ev._asdict())))
        elif isinstance(ev, BriscolaScored):
            last_briscola = ev
        elif isinstance(ev, MatchOver) and game == "briscola" and last_briscola is not None:
            await rate_unit(tx, row, family, None, last_briscola.smazzata,
                            json.loads(json.dumps(last_briscola._asdict())))


async def rate_unit(
    tx: Executor, row: GameRow, family: model.Family, morto: int | None, index: int,
    result: dict[str, object],
) -> list[store.RatingSeat]:
    """Rate one unit (``result``: the stored smazzata result that decides it)."""
    players = seat_players(row, morto)
    try:  # (pure: nothing is written yet, the move goes on without its rating)
        unit = model.unit_of(family, result, sorted(players))
    except (KeyError, ValueError, TypeError) as exc:
        log.error("smazzata %s of game %s not rated: %s", index, row.game_id, exc)
        return []
    names = {players[s.seat]: s.display_name for s in row.seats if s.is_human}
    keys = {players[seat]: names.get(players[seat], "") for side in unit.sides
            for seat in side}
    before = await store.lock_ratings(tx, row.chat_id, family, keys,
                                      (model.MU, model.SIGMA))
    ratings = {key: model.Rating(*value) for key, value in before.items()}
    after = model.rate(unit, players, ratings)
    seats = [
        store.RatingSeat(seat, players[seat], ratings[players[seat]].mu,
                         ratings[players[seat]].sigma, after[players[seat]].mu,
                         after[players[seat]].sigma)
        for side in unit.sides for seat in side
    ]
    seats.sort(key=lambda s: s.seat)
    await store.record_unit(tx, row.game_id, index, row.chat_id, family, seats, names)
    return seats
