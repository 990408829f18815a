"""A basic group became a supergroup (new chat id): games, settings and scores follow.

Telegram tells us twice, and in no fixed order with our own sends: the service messages
(``migrate_to_chat_id`` in the old chat, ``migrate_from_chat_id`` in the new one) and
``ChatMigrated`` when the bot writes to the old id (the :class:`~bot.outbox.Outbox` reports
it). Both end in :func:`migrate`, which is idempotent.
"""

from __future__ import annotations

import logging

from telegram import Update
from telegram.ext import Application, ContextTypes, MessageHandler, filters

from bot.features.lobby_message import render_lobby
from bot.runtime import Runtime, rt_of
from storage import repo, social

log = logging.getLogger(__name__)


async def migrate(rt: Runtime, old: int, new: int) -> None:
    """Move the chat's rows to ``new``, then redraw its running games there."""
    rt.outbox.note_migration(old, new)
    async with rt.tables.migration_lock:
        games = [r for r in await repo.list_unfinished_games(rt.db) if r.chat_id == old]
        result = await rt.service.migrate_chat(old, new, [r.game_id for r in games])
        await social.migrate_chat(rt.db, old, new)  # /avvisami, the podiums shown
        if result != type(result)():
            log.info("chat %s migrated to %s: %s", old, new, result)
        for row in games:
            fresh = await repo.get_game(rt.db, row.game_id)
            if fresh is None or fresh.chat_id != new:
                continue
            if fresh.status == "lobby":
                await render_lobby(rt, fresh.game_id)
            elif fresh.status == "playing":
                await rt.tables.sync(fresh.game_id)  # the table message is re-created
                rt.tables.kick(fresh.game_id)


async def on_migrate(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    message = update.effective_message
    if message is None:
        return
    rt = rt_of(context)  # the redraws wait for the budgets: not in the handler
    if message.migrate_to_chat_id:
        rt.tables.background(migrate(rt, message.chat.id, message.migrate_to_chat_id))
    elif message.migrate_from_chat_id:
        rt.tables.background(migrate(rt, message.migrate_from_chat_id, message.chat.id))


def register(app: Application) -> None:  # type: ignore[type-arg]
    app.add_handler(MessageHandler(filters.StatusUpdate.MIGRATE, on_migrate))
