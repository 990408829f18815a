"""/classifica: the chat's scoreboard of the current season (:mod:`bot.features.seasons`);
``/classifica sempre``: of all time; ``/classifica briscola``: plain Briscola's own;
``/classifica rating``: the ratings (bot/features/ratings.py).

Chiamata with 4 (il morto), 5 and 6 players counts in the same points table; plain
Briscola counts smazzate and matches won, per player or pair, by table size.
"""

from __future__ import annotations

from telegram import Update
from telegram.ext import Application, CommandHandler, ContextTypes

from bot.features import ratings, seasons
from bot.features.common import refuse_in_private, reply
from bot.i18n import tr
from bot.render import texts
from bot.runtime import rt_of
from storage import repo

BRISCOLA_WORDS = frozenset({"briscola", "plain"})
ALL_TIME_WORDS = frozenset({"sempre", "always", "all", "tutto", "tutti"})


async def cmd_leaderboard(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    if await refuse_in_private(update, context):
        return
    rt, chat, message = rt_of(context), update.effective_chat, update.effective_message
    assert chat and message
    lang = await rt.chat_language(chat.id)
    if ratings.wants_ratings(context.args):
        await ratings.reply_board(context, message, chat.id, lang)
        return
    if any(a.lower() in BRISCOLA_WORDS for a in context.args or []):
        board = await repo.briscola_leaderboard(rt.db, chat.id)
        reply(context, message, texts.briscola_board_text(lang, board))
        return
    has_briscola = bool(await repo.briscola_leaderboard(rt.db, chat.id, limit=1))
    season = seasons.season_at((await rt.chat_prefs(chat.id)).season, rt.db.now())
    if season is not None and not any(a.lower() in ALL_TIME_WORDS for a in context.args or []):
        lines = await seasons.season_table(rt.db, chat.id, season)
        reply(context, message,
              seasons.board_text(lang, season, lines, briscola_hint=has_briscola))
        return
    rows = await repo.leaderboard(rt.db, chat.id)
    lines = [
        (r.display_name, r.total, r.matches, r.smazzate, r.chiamante_count, r.chiamante_wins)
        for r in rows
    ]
    text = texts.leaderboard_text(lang, lines, briscola_hint=has_briscola)
    hints = [tr(lang, "board.rating_hint")] if lines else []
    if season is not None:  # (the table of all time, asked for)
        hints.insert(0, tr(lang, "board.alltime_hint"))
    if hints:
        text = "\n".join([text, "", *hints]) if not has_briscola else \
            "\n".join([text, *hints])
    reply(context, message, text)


def register(app: Application) -> None:  # type: ignore[type-arg]
    app.add_handler(CommandHandler(["classifica", "leaderboard"], cmd_leaderboard))
