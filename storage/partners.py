"""Who sat with whom (issue 48's partner statistics): read-only queries."""

from __future__ import annotations

from dataclasses import dataclass

from .db import Executor

__all__ = ["Mate", "table_mates", "user_by_username"]


@dataclass(frozen=True, slots=True)
class Mate:
    """Another person at one of the user's tables."""

    game_id: int
    seat: int
    user_id: int
    display_name: str


async def table_mates(ex: Executor, user_id: int) -> list[Mate]:
    """The other people seated (as humans) at every table where ``user_id`` sits as a
    human, by game and seat (served by ``seats_by_user`` and the seats' primary key)."""
    rows = await ex.fetch(
        "SELECT o.game_id, o.seat, o.user_id, o.display_name FROM seats AS s "
        "JOIN seats AS o ON o.game_id = s.game_id "
        "WHERE s.user_id = ? AND s.kind = 'human' AND o.kind = 'human' AND o.user_id <> ? "
        "ORDER BY o.game_id, o.seat",
        (user_id, user_id),
    )
    return [Mate(int(r[0]), int(r[1]), int(r[2]), str(r[3])) for r in rows]


async def user_by_username(ex: Executor, username: str) -> tuple[int, str] | None:
    """(user id, first name) of the user with this Telegram username (any case), or
    None if the bot never saw them."""
    row = await ex.fetchrow(
        "SELECT user_id, first_name FROM users WHERE lower(username) = lower(?) "
        "ORDER BY updated_at DESC LIMIT 1",
        (username,),
    )
    return None if row is None else (int(row[0]), str(row[1]))
