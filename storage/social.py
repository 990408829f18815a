"""What brings a group back (issue 48): "/avvisami" subscriptions and their rounds, the
season's table read from the stored results, the podium shown once per season.

Same rules as :mod:`storage.repo`: an :class:`~storage.db.Executor` first, parameterised
SQL valid on SQLite and PostgreSQL, typed results.
"""

from __future__ import annotations

from dataclasses import dataclass

from .db import Executor

__all__ = [
    "SeasonMatchRow",
    "SeasonSmazzataRow",
    "claim_notify_round",
    "claim_podium",
    "migrate_chat",
    "notify_subscribers",
    "season_matches",
    "season_smazzate",
    "subscribe",
    "unsubscribe",
    "unsubscribe_everywhere",
]


# --------------------------------------------------------------------------- avvisami


async def subscribe(ex: Executor, chat_id: int, user_id: int) -> bool:
    """``user_id`` wants a private message when a lobby opens in ``chat_id``. True if
    new (False: already subscribed)."""
    return bool(await ex.execute(
        "INSERT INTO notify_subscriptions (chat_id, user_id, created_at) VALUES (?, ?, ?) "
        "ON CONFLICT (chat_id, user_id) DO NOTHING",
        (chat_id, user_id, ex.now()),
    ))


async def unsubscribe(ex: Executor, chat_id: int, user_id: int) -> bool:
    """No more messages about ``chat_id``; True if there was a subscription."""
    return bool(await ex.execute(
        "DELETE FROM notify_subscriptions WHERE chat_id = ? AND user_id = ?",
        (chat_id, user_id),
    ))


async def unsubscribe_everywhere(ex: Executor, user_id: int) -> int:
    """The user blocked the bot: no more messages about any group; how many removed."""
    return await ex.execute("DELETE FROM notify_subscriptions WHERE user_id = ?", (user_id,))


async def notify_subscribers(ex: Executor, chat_id: int) -> list[tuple[int, bool]]:
    """The users subscribed in ``chat_id``, by time of subscription, each with whether
    they may be written to (False: the bot knows they blocked it)."""
    rows = await ex.fetch(
        "SELECT n.user_id, COALESCE(u.private_ok, 1) FROM notify_subscriptions AS n "
        "LEFT JOIN users AS u ON u.user_id = n.user_id "
        "WHERE n.chat_id = ? ORDER BY n.created_at, n.user_id",
        (chat_id,),
    )
    return [(int(r[0]), bool(r[1])) for r in rows]


async def claim_notify_round(ex: Executor, chat_id: int, game_id: int, gap: int) -> bool:
    """Claim the group's round of messages for the lobby ``game_id``: True at most once
    per lobby and at most once per ``gap`` seconds per group (one statement: two
    instances or two lobbies at once cannot both claim it)."""
    now = ex.now()
    return bool(await ex.execute(
        "INSERT INTO notify_rounds (chat_id, game_id, sent_at) VALUES (?, ?, ?) "
        "ON CONFLICT (chat_id) DO UPDATE SET game_id = excluded.game_id, "
        "sent_at = excluded.sent_at "
        "WHERE notify_rounds.sent_at <= ? AND notify_rounds.game_id <> excluded.game_id",
        (chat_id, game_id, now, now - gap),
    ))


# --------------------------------------------------------------------------- seasons


@dataclass(frozen=True, slots=True)
class SeasonSmazzataRow:
    """One scored smazzata of a chat's game within a season, with one person's seat."""

    game_id: int
    user_id: int
    display_name: str
    seat: int
    result_json: str


@dataclass(frozen=True, slots=True)
class SeasonMatchRow:
    """A match of a chat finished within a season, with one person seated."""

    game_id: int
    user_id: int
    settings_json: str


async def season_smazzate(
    ex: Executor, chat_id: int, start: int, end: int
) -> list[SeasonSmazzataRow]:
    """The smazzate of ``chat_id``'s games scored in ``[start, end)`` (unix seconds), one
    row per person seated (computers are not ranked)."""
    rows = await ex.fetch(
        "SELECT g.game_id, s.user_id, s.display_name, s.seat, r.result_json "
        "FROM games AS g "
        "JOIN smazzata_results AS r ON r.game_id = g.game_id "
        "JOIN seats AS s ON s.game_id = g.game_id "
        "WHERE g.chat_id = ? AND r.created_at >= ? AND r.created_at < ? "
        "AND s.kind = 'human' "
        "ORDER BY g.game_id, r.smazzata_index, s.seat",
        (chat_id, start, end),
    )
    return [SeasonSmazzataRow(int(r[0]), int(r[1]), str(r[2]), int(r[3]), str(r[4]))
            for r in rows]


async def season_matches(ex: Executor, chat_id: int, start: int, end: int) -> list[SeasonMatchRow]:
    """The matches of ``chat_id`` finished in ``[start, end)``, one row per person seated."""
    rows = await ex.fetch(
        "SELECT g.game_id, s.user_id, g.settings_json FROM games AS g "
        "JOIN seats AS s ON s.game_id = g.game_id "
        "WHERE g.chat_id = ? AND g.status = 'finished' AND g.finished_at >= ? "
        "AND g.finished_at < ? AND s.kind = 'human' ORDER BY g.game_id, s.seat",
        (chat_id, start, end),
    )
    return [SeasonMatchRow(int(r[0]), int(r[1]), str(r[2])) for r in rows]


async def claim_podium(ex: Executor, chat_id: int, season: str) -> bool:
    """Claim the showing of ``season``'s podium in ``chat_id``: True once per season (the
    first game after it ended shows it; one statement, so two lobbies cannot both)."""
    return bool(await ex.execute(
        "INSERT INTO season_podiums (chat_id, season, shown_at) VALUES (?, ?, ?) "
        "ON CONFLICT (chat_id) DO UPDATE SET season = excluded.season, "
        "shown_at = excluded.shown_at WHERE season_podiums.season <> excluded.season",
        (chat_id, season, ex.now()),
    ))


async def migrate_chat(ex: Executor, old_chat_id: int, new_chat_id: int) -> None:
    """A group became a supergroup: its subscriptions, its last round of messages and its
    last podium shown follow it (kept where the new id has its own). Idempotent."""
    if old_chat_id == new_chat_id:
        return
    async with ex.transaction() as tx:
        await tx.execute(
            "INSERT INTO notify_subscriptions (chat_id, user_id, created_at) "
            "SELECT ?, user_id, created_at FROM notify_subscriptions WHERE chat_id = ? "
            "AND true ON CONFLICT (chat_id, user_id) DO NOTHING",
            (new_chat_id, old_chat_id),
        )
        for table, columns in (("notify_rounds", "game_id, sent_at"),
                               ("season_podiums", "season, shown_at")):
            await tx.execute(
                f"INSERT INTO {table} (chat_id, {columns}) SELECT ?, {columns} FROM {table} "
                "WHERE chat_id = ? AND true ON CONFLICT (chat_id) DO NOTHING",
                (new_chat_id, old_chat_id),
            )
        for table in ("notify_subscriptions", "notify_rounds", "season_podiums"):
            await tx.execute(f"DELETE FROM {table} WHERE chat_id = ?", (old_chat_id,))
