"""Wiring: build the PTB Application, open the database, resume games, set commands."""

from __future__ import annotations

import html
import json
import logging
import traceback
from typing import Any

from telegram import (
    BotCommandScopeAllGroupChats,
    BotCommandScopeAllPrivateChats,
    Update,
)
from telegram.constants import ChatMemberStatus, ChatType, ParseMode
from telegram.error import TelegramError
from telegram.ext import (
    AIORateLimiter,
    Application,
    ChatMemberHandler,
    ContextTypes,
    Defaults,
    MessageHandler,
    filters,
)

from bot.config import Settings
from bot.features import auction, help, lobby, play, rules, scoreboard, settings
from bot.features.help import command_list
from bot.i18n import LANGUAGES
from bot.outbox import Outbox
from bot.runtime import Runtime, rt_of
from bot.service import GameService
from bot.tables import Tables
from storage import Database, repo

log = logging.getLogger(__name__)


def build_application(
    config: Settings,
    *,
    rate_limiter: AIORateLimiter | None = None,
    outbox_rates: dict[str, float] | None = None,
) -> Application:  # type: ignore[type-arg]
    """The Application, wired; the database is opened in ``post_init``."""
    builder = (
        Application.builder()
        .token(config.bot_token.get_secret_value())
        .defaults(Defaults(parse_mode=ParseMode.HTML))
        .rate_limiter(rate_limiter or AIORateLimiter(max_retries=3))
        .post_init(_post_init)
        .post_shutdown(_post_shutdown)
    )
    if config.telegram_base_url:
        builder = builder.base_url(config.telegram_base_url)
    if config.telegram_base_file_url:
        builder = builder.base_file_url(config.telegram_base_file_url)
    app = builder.build()
    app.bot_data["config"] = config
    app.bot_data["outbox_rates"] = outbox_rates or {}
    for feature in (lobby, auction, play, scoreboard, settings, rules, help):
        feature.register(app)
    app.add_handler(MessageHandler(filters.StatusUpdate.MIGRATE, _on_migrate))
    app.add_handler(ChatMemberHandler(_on_my_chat_member, ChatMemberHandler.MY_CHAT_MEMBER))
    play.register_fallback(app)
    app.add_error_handler(_on_error)
    return app


async def _post_init(app: Application) -> None:  # type: ignore[type-arg]
    config: Settings = app.bot_data["config"]
    db = await Database.open(config.database_url)
    service = GameService(db)
    rates = {
        "group_per_minute": float(config.group_messages_per_minute),
        **app.bot_data["outbox_rates"],
    }
    outbox = Outbox(app.bot, **rates)  # type: ignore[arg-type]
    tables = Tables(app, config, service, outbox)
    outbox.on_forbidden = _forbidden_handler(tables)
    outbox.on_migrated = _migrated_handler(app)
    rt = Runtime(config, db, service, outbox, tables)
    app.bot_data["rt"] = rt
    await _set_commands(app)
    await tables.resume_all()


async def _post_shutdown(app: Application) -> None:  # type: ignore[type-arg]
    rt: Runtime | None = app.bot_data.get("rt")
    if rt is None:
        return
    await rt.tables.close()
    await rt.outbox.drain(5)
    await rt.outbox.close()
    await rt.db.close()


async def _set_commands(app: Application) -> None:  # type: ignore[type-arg]
    for lang in LANGUAGES:
        code = "" if lang == "it" else lang
        try:
            await app.bot.set_my_commands(
                command_list(lang, private=False), scope=BotCommandScopeAllGroupChats(),
                language_code=code or None,
            )
            await app.bot.set_my_commands(
                command_list(lang, private=True), scope=BotCommandScopeAllPrivateChats(),
                language_code=code or None,
            )
        except TelegramError:
            log.warning("could not set the command menu for %s", lang, exc_info=True)


def _forbidden_handler(tables: Tables) -> Any:
    async def handler(chat_id: int) -> None:
        if chat_id > 0:
            await tables.private_forbidden(chat_id)

    return handler


def _migrated_handler(app: Application) -> Any:  # type: ignore[type-arg]
    async def handler(old: int, new: int) -> None:
        rt: Runtime = app.bot_data["rt"]
        await repo.migrate_chat(rt.db, old, new)

    return handler


async def _on_migrate(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A group became a supergroup: move games, settings and scores to the new id."""
    message = update.effective_message
    if message is None:
        return
    if message.migrate_to_chat_id:
        old, new = message.chat.id, message.migrate_to_chat_id
    elif message.migrate_from_chat_id:
        old, new = message.migrate_from_chat_id, message.chat.id
    else:
        return
    rt = rt_of(context)
    result = await repo.migrate_chat(rt.db, old, new)
    log.info("chat %s migrated to %s: %s", old, new, result)
    for row in await repo.list_unfinished_games(rt.db):
        if row.chat_id == new and row.status == "playing":
            await repo.patch_ui(rt.db, row.game_id, {"table": None, "hands": None})
            await rt.tables.sync(row.game_id)


async def _on_my_chat_member(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A user blocked (or unblocked) the bot in private."""
    member = update.my_chat_member
    if member is None or member.chat.type != ChatType.PRIVATE:
        return
    rt = rt_of(context)
    status = member.new_chat_member.status
    if status in (ChatMemberStatus.BANNED, ChatMemberStatus.LEFT):
        await rt.tables.private_forbidden(member.chat.id)
    elif status == ChatMemberStatus.MEMBER:
        await repo.set_private_ok(rt.db, member.chat.id, True)


async def _on_error(update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Log first, then report to the admin chat if configured."""
    log.error("error while handling an update", exc_info=context.error)
    config: Settings = context.bot_data["config"]
    if config.admin_chat_id is None:
        return
    tb = "".join(
        traceback.format_exception(None, context.error, context.error.__traceback__)  # type: ignore[union-attr]
    )
    payload = update.to_dict() if isinstance(update, Update) else str(update)
    text = (
        f"<b>Errore</b>: {html.escape(str(context.error))[:300]}\n"
        f"<pre>{html.escape(json.dumps(payload, ensure_ascii=False)[:1200])}</pre>\n"
        f"<pre>{html.escape(tb[-2000:])}</pre>"
    )
    try:
        await context.bot.send_message(config.admin_chat_id, text[:4096])
    except TelegramError:
        log.warning("could not report the error to ADMIN_CHAT_ID", exc_info=True)
