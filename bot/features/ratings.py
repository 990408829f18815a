"""Ratings in the chat: ``/classifica rating`` (the group's ratings per family)."""

from __future__ import annotations

from telegram import Message
from telegram.ext import ContextTypes

from bot.features.common import reply
from bot.ratings import texts as rating_texts
from bot.ratings.model import FAMILIES
from bot.runtime import rt_of
from storage import ratings as rating_store

#: ``/classifica rating`` (and ``/leaderboard rating``).
RATING_WORDS = frozenset({"rating", "ratings", "elo"})


def wants_ratings(args: list[str] | None) -> bool:
    return any(a.lower() in RATING_WORDS for a in args or [])


async def reply_board(
    context: ContextTypes.DEFAULT_TYPE, message: Message, chat_id: int, lang: str
) -> None:
    """The chat's ratings, one table per family of games."""
    db = rt_of(context).db
    boards: dict[str, list[rating_store.RatingRow]] = {
        family: await rating_store.ratings_board(db, chat_id, family) for family in FAMILIES
    }
    reply(context, message, rating_texts.board_text(lang, boards))
