"""Wiring: build the PTB Application, open the database, resume games, set commands."""

from __future__ import annotations

import asyncio
import html
import json
import logging
import traceback
from collections.abc import Callable
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
)

from bot import players, webapp
from bot.aiohttp_request import AiohttpRequest
from bot.config import Settings
from bot.failover import LEADER, STAND_DOWN
from bot.features import (
    auction,
    common,
    help,
    inline,
    lobby,
    migration,
    notify,
    play,
    rematch,
    rules,
    scoreboard,
    settings,
    stats,
    topics,
)
from bot.features.help import command_list
from bot.health import HEARTBEAT_SECONDS, heartbeat
from bot.i18n import LANGUAGES, tr
from bot.inbox import PROCESS_DIED, Inbox, InboxQueue
from bot.outbox import Outbox, PacedRateLimiter
from bot.runtime import Runtime, rt_of
from bot.service import GameService
from bot.tables import Tables
from bot.updates import PerChatUpdateProcessor
from storage import StorageUnavailable, open_database, repo
from storage import inbox as storage_inbox

log = logging.getLogger(__name__)

def build_application(
    config: Settings,
    *,
    rate_limiter: AIORateLimiter | None = None,
    outbox_rates: dict[str, float] | None = None,
    gate: Callable[[], bool] | None = None,
    instance: str | None = None,
) -> Application:  # type: ignore[type-arg]
    """The Application, wired; the database is opened in ``post_init``. ``gate``: while it
    returns False no Bot API request is made (fencing, :mod:`bot.failover`); ``instance``
    names this process in the requests' User-Agent."""
    builder = (
        Application.builder()
        .token(config.bot_token.get_secret_value())
        .defaults(Defaults(parse_mode=ParseMode.HTML))
        .rate_limiter(rate_limiter or PacedRateLimiter(
            # the overall rate (TELEGRAM_MESSAGES_PER_SECOND, 10% under Telegram's ~30/s)
            # is the outbox's: messages only, by priority; a first-come limiter here too
            # would queue the callback answers (not messages) behind the edits. A group's
            # rate is the outbox's too (GROUP_MESSAGES_PER_MINUTE): PTB's own per-group
            # limiter (20 a minute, a burst of 20) stays a safety net under it, raised
            # with it (at its default of 20 it held a group raised to 1000 at 3 s a call)
            overall_max_rate=0, max_retries=3,
            group_max_rate=max(20, config.group_messages_per_minute),
        ))
        .concurrent_updates(PerChatUpdateProcessor())
        # stores each update before PTB's Updater confirms it / its webhook answers 200
        .update_queue(InboxQueue())
        # aiohttp instead of PTB's httpx: ~1 ms less CPU per call (bot/aiohttp_request.py)
        .request(AiohttpRequest(user_agent=instance, gate=gate))
        .get_updates_request(
            AiohttpRequest(connection_pool_size=1, user_agent=instance, gate=gate)
        )
        .post_init(_post_init)
        .post_stop(_post_stop)
        .post_shutdown(_post_shutdown)
    )
    if config.telegram_base_url:
        builder = builder.base_url(config.telegram_base_url)
    if config.telegram_base_file_url:
        builder = builder.base_file_url(config.telegram_base_file_url)
    app = builder.build()
    app.bot_data["config"] = config
    app.bot_data["outbox_rates"] = outbox_rates or {}
    common.register(app)
    for feature in (lobby, auction, play, scoreboard, stats, settings, rules, help,
                    migration, inline, rematch, notify, topics):
        feature.register(app)
    app.add_handler(ChatMemberHandler(_on_my_chat_member, ChatMemberHandler.MY_CHAT_MEMBER))
    play.register_fallback(app)
    app.add_error_handler(_on_error)
    return app


#: ``bot_data`` key: the Mini App's server (bot/webapp/), when WEBAPP_URL is set.
WEBAPP = "webapp"
#: ``bot_data`` key: the task running ``_post_init`` while it runs (a stop signal during
#: start-up cancels it: ``bot.__main__.StopGuard``).
STARTING = "starting"
#: ``bot_data`` key: the :class:`~bot.inbox.Inbox`.
INBOX = "inbox"
#: ``bot_data`` key: the tasks started after the start-up (resuming the tables, the
#: command menus), cancelled at the stop.
AFTER_START = "after_start"


async def _post_init(app: Application) -> None:  # type: ignore[type-arg]
    app.bot_data[STARTING] = asyncio.current_task()
    try:
        await _start(app)
    finally:
        app.bot_data.pop(STARTING, None)


async def _start(app: Application) -> None:  # type: ignore[type-arg]
    config: Settings = app.bot_data["config"]
    db = await open_database(config.database_url)
    leader = app.bot_data.get(LEADER)
    if leader is not None:
        await leader.started(db)
    service = GameService(db)
    rates: dict[str, float] = {
        "group_per_minute": float(config.group_messages_per_minute),
        "messages_per_second": config.telegram_messages_per_second,
        "chat_rate": config.private_messages_per_second,
        **app.bot_data["outbox_rates"],
    }
    lazy = rates.pop("private_lazy_seconds", None)
    outbox = Outbox(app.bot, **rates)  # type: ignore[arg-type]
    await outbox.digests.open(db)  # what each message shows: a redraw skips the same
    tables = Tables(app, config, service, outbox)
    if lazy is not None:
        tables.private_lazy_seconds = lazy
    limiter = app.bot.rate_limiter
    if isinstance(limiter, PacedRateLimiter):
        limiter.outbox = outbox
    rt = Runtime(config, db, service, outbox, tables)
    outbox.on_forbidden = tables.forbidden
    outbox.on_topic_closed = tables.topic_closed
    outbox.on_migrated = _migrated_handler(rt)
    app.bot_data["rt"] = rt
    # the pacing the instance before left, before any chat is paced (a chat paced before
    # it is known is paced as if its budget had just been used)
    await tables.pacing.restore()
    # the inbox first: what the instance before stored and did not handle is handled as
    # soon as the application runs, before what is polled; presses are answered at once
    inbox = Inbox(app, db, webhook=config.webhook_url is not None)
    app.bot_data[INBOX] = inbox
    inbox.on_poisoned = _poisoned_handler(app)
    queue = app.update_queue
    if isinstance(queue, InboxQueue):
        queue.inbox = inbox
    inbox.start()
    app.bot_data[STAND_DOWN] = lambda: _stand_down_soon(app)
    if config.webapp_url is not None:  # the Mini App's server, beside the chat
        app.bot_data[WEBAPP] = await webapp.start(app.bot, rt)
    # the redraws (the seat in turn first) and the command menus go after: the first
    # getUpdates does not wait for them
    app.bot_data[AFTER_START] = [
        asyncio.get_running_loop().create_task(_after_start(app, rt), name="after-start"),
    ]
    if config.health_file and app.job_queue is not None:
        app.job_queue.run_repeating(
            heartbeat, HEARTBEAT_SECONDS, first=1.0, data=config.health_file,
            name="heartbeat",
        )  # fmt: skip


async def _after_start(app: Application, rt: Runtime) -> None:  # type: ignore[type-arg]
    """Once polling: resume every table (redraws of what was not shown, timers,
    computers), then set the command menus. Not before the application runs: a stop
    signalled before (during the start-up) gets no ``post_stop`` to cancel this task,
    and PTB closes the HTTP client before ``post_shutdown`` does."""
    while not app.running:
        await asyncio.sleep(0.005)
    try:
        await rt.tables.resume_all()
        await rematch.resume(rt)  # the rivincita lobbies' timers
        await _set_commands(app)
        await asyncio.to_thread(players.warm_up)  # the fallback's network, read once
    except StorageUnavailable as exc:
        log.warning("resuming the tables stopped: %s", exc)


def _stand_down_soon(app: Application) -> None:  # type: ignore[type-arg]
    """Fenced: cancel the active period's tasks now (the stop goes on meanwhile)."""
    task = asyncio.get_running_loop().create_task(stand_down(app), name="stand-down")
    app.bot_data.setdefault(AFTER_START, []).append(task)


async def stand_down(app: Application) -> None:  # type: ignore[type-arg]
    """Cancel every task this instance started while active (fenced, or at the end of a
    stop): the inbox's handlers, the start-up's redraws, the tables (drivers, timers'
    watchers, redraws, delivery records), the pacing saver, the outbox's flushers. Nothing
    is sent or written: the next active instance redraws what is left."""
    current = asyncio.current_task()
    for task in app.bot_data.get(AFTER_START, []):
        if task is not current and not task.done():
            task.cancel()
    inbox: Inbox | None = app.bot_data.get(INBOX)
    if inbox is not None:
        await inbox.cancel()
    rt: Runtime | None = app.bot_data.get("rt")
    if rt is None:
        return
    await rt.tables.close()
    await rt.tables.confirm_delivered(0.0)  # (cancels the delivery records)
    await rt.tables.pacing.close(save=False)
    await rt.outbox.close()


#: Seconds a graceful stop waits for the pending edits.
DRAIN_SECONDS = 5.0


async def _post_stop(app: Application) -> None:  # type: ignore[type-arg]
    """Updates are no longer fetched but the HTTP client is still open: let the updates
    taken in hand finish, stop the computers, then send what is pending (bounded; a
    restart redraws the rest). Fenced: nothing of that, every task is cancelled."""
    rt: Runtime | None = app.bot_data.get("rt")
    leader = app.bot_data.get(LEADER)
    active = leader is None or leader.active
    inbox: Inbox | None = app.bot_data.get(INBOX)
    if rt is None or inbox is None:
        return
    for task in app.bot_data.get(AFTER_START, []):
        if task.get_name() != "stand-down":
            task.cancel()
    await asyncio.gather(*app.bot_data.get(AFTER_START, []), return_exceptions=True)

    def budget() -> float:
        """What is left of the drain's time now (and of the lock's, on PostgreSQL)."""
        left = _drain_budget(app)
        return left if leader is None else leader.drain_budget(left)

    await inbox.stop(_drain_budget(app) if active else 0.0)
    if active:  # new messages on their way are sent and stored, not cut off halfway
        await rt.tables.finish_sends(budget())
    await rt.tables.close()
    if active:  # (a fenced instance sends and writes nothing)
        await rt.outbox.drain(budget())
        await rt.tables.confirm_delivered(1.0 if leader is None else leader.confirm_budget(1.0))
        await rt.tables.pacing.close()  # (after the last calls: a restart paces from there)
    await stand_down(app)  # whatever is left of the active period
    if leader is not None:
        await leader.step_down()  # PostgreSQL: a standby takes over now


#: ``bot_data`` key: the event-loop time by which a signalled stop wants the drain done
#: (set by ``bot.__main__.StopGuard``, which exits the process soon after).
STOP_BY = "stop_by"


def _drain_budget(app: Application) -> float:  # type: ignore[type-arg]
    stop_by: float | None = app.bot_data.get(STOP_BY)
    if stop_by is None:
        return DRAIN_SECONDS
    return max(0.0, min(DRAIN_SECONDS, stop_by - asyncio.get_running_loop().time()))


async def _post_shutdown(app: Application) -> None:  # type: ignore[type-arg]
    rt: Runtime | None = app.bot_data.get("rt")
    if rt is None:
        return
    server: webapp.WebAppServer | None = app.bot_data.pop(WEBAPP, None)
    if server is not None:
        await server.stop()
    players.shutdown()  # the search pool's workers
    await stand_down(app)  # (post_stop did, unless the application never ran)
    await rt.db.close()


async def _set_commands(app: Application) -> None:  # type: ignore[type-arg]
    """Command menus per scope (groups, private chats) and language; users whose language
    is neither get the default language's menu."""
    config: Settings = app.bot_data["config"]
    for code in ("", *LANGUAGES):
        lang = code or config.default_language
        for private, scope in ((False, BotCommandScopeAllGroupChats()),
                               (True, BotCommandScopeAllPrivateChats())):
            try:
                await app.bot.set_my_commands(
                    command_list(lang, private=private), scope=scope, language_code=code or None
                )
            except TelegramError:
                log.warning("could not set the command menu for %r", code, exc_info=True)


def _migrated_handler(rt: Runtime) -> Any:
    async def handler(old: int, new: int) -> None:
        try:
            await migration.migrate(rt, old, new)
        except Exception:
            log.exception("could not migrate chat %s to %s", old, new)

    return handler


async def _on_my_chat_member(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A user blocked (or unblocked) the bot in private; the bot was removed from a group."""
    member = update.my_chat_member
    if member is None:
        return
    rt = rt_of(context)
    status = member.new_chat_member.status
    if member.chat.type != ChatType.PRIVATE:
        if status in (ChatMemberStatus.BANNED, ChatMemberStatus.LEFT):
            await rt.tables.chat_gone(member.chat.id)
        return
    if status in (ChatMemberStatus.BANNED, ChatMemberStatus.LEFT):
        await rt.tables.private_forbidden(member.chat.id)
    elif status == ChatMemberStatus.MEMBER:
        await repo.set_private_ok(rt.db, member.chat.id, True)


async def _on_error(update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Log first; then tell the user something went wrong; then report to ADMIN_CHAT_ID.
    A handler's error before anything of its update was stored or shown is the inbox's:
    it handles the update again, or sets it aside (:mod:`bot.inbox`), and logs."""
    error = context.error
    if (isinstance(update, Update) and error is not None
            and not isinstance(error, StorageUnavailable)  # (told at once: not saved)
            and storage_inbox.failed(update.update_id, error)):
        return
    log.error("error while handling an update", exc_info=error)
    if isinstance(update, Update):
        await _tell_user(update, context.bot_data, error)
    await _report(context.bot, context.bot_data, update, error)


async def _report(bot: Any, bot_data: dict[str, Any], update: object,
                  error: BaseException | None) -> None:
    config: Settings = bot_data["config"]
    if config.admin_chat_id is None:
        return
    try:
        await bot.send_message(config.admin_chat_id, error_report(update, error))
    except TelegramError:
        log.warning("could not report the error to ADMIN_CHAT_ID", exc_info=True)


def _poisoned_handler(app: Application) -> Any:  # type: ignore[type-arg]
    """The inbox's ``on_poisoned``: the person is told (a press: a short apology that it
    was set aside; a command: that something went wrong), the admin gets a report."""

    async def handler(update: Update | None, error: BaseException | None) -> None:
        if update is None:
            return
        key = "error.poisoned" if update.callback_query is not None else "error.generic"
        await _tell_user(update, app.bot_data, error, key=key)
        await _report(app.bot, app.bot_data, update, error)

    return handler


async def _tell_user(update: Update, bot_data: dict[str, Any], error: BaseException | None,
                     key: str = "error.generic") -> None:
    rt: Runtime | None = bot_data.get("rt")
    user, chat = update.effective_user, update.effective_chat
    lang = await rt.user_language(user, chat) if rt is not None else "it"
    storage = isinstance(error, StorageUnavailable)
    text = tr(lang, "storage.not_saved" if storage else key)
    try:
        if update.callback_query is not None:
            await update.callback_query.answer(text, show_alert=True)
        elif update.effective_message is not None and update.effective_message.text:
            await update.effective_message.reply_text(text)
    except Exception:  # the user may be unreachable; the report below still goes out
        log.info("could not tell the user about the error", exc_info=True)


def error_report(update: object, error: BaseException | None) -> str:
    """The HTML report for the admin chat: error (its class and message), update,
    traceback (< 4096 characters). No error: an update set aside because the process
    died while handling it (bot.inbox), which has no exception to show."""
    tb = "".join(traceback.format_exception(error)) if error is not None else ""
    payload = update.to_dict() if isinstance(update, Update) else str(update)
    if error is None:
        what = f"{PROCESS_DIED} (il processo è morto mentre gestiva questo update)"
    else:
        what = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    return (
        f"<b>Errore</b>: {_escaped_head(what, 300)}\n"
        f"<pre>{_escaped_head(json.dumps(payload, ensure_ascii=False), 1200)}</pre>\n"
        f"<pre>{_escaped_tail(tb, 2000)}</pre>"
    )


def _escaped_head(text: str, limit: int) -> str:
    out = html.escape(text, quote=False)
    if len(out) <= limit:
        return out
    out = out[:limit]
    if out.rfind("&") > out.rfind(";"):  # do not cut an entity in two
        out = out[: out.rfind("&")]
    return out + "…"


def _escaped_tail(text: str, limit: int) -> str:
    out = html.escape(text, quote=False)
    if len(out) <= limit:
        return out
    out = out[-limit:]
    semi, amp = out.find(";"), out.find("&")
    if semi != -1 and (amp == -1 or semi < amp):  # starts inside an entity
        out = out[semi + 1 :]
    return "…" + out
