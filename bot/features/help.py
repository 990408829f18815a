"""/aiuto: what the bot does and its commands."""

from __future__ import annotations

from telegram import BotCommand, Update
from telegram.ext import Application, CommandHandler, ContextTypes

from bot.features.common import reply
from bot.i18n import tr
from bot.runtime import is_group, rt_of

GROUP_COMMANDS = (
    ("nuova", "new"),
    ("entra", "join"),
    ("esci", "leave"),
    ("inizia", "begin"),
    ("annulla", "cancel"),
    ("tavolo", "table"),
    ("classifica", "leaderboard"),
    ("avvisami", "notify"),
    ("statistiche", "stats"),
    ("regole", "rules"),
    ("impostazioni", "settings"),
    ("aiuto", "help"),
)
PRIVATE_COMMANDS = (
    ("start", "start"), ("nuova", "new"), ("inizia", "begin"), ("annulla", "cancel"),
    ("mano", "hand"), ("statistiche", "stats"), ("impostazioni", "settings"), ("regole", "rules"),
    ("aiuto", "help"),
)


def command_list(lang: str, private: bool) -> list[BotCommand]:
    """The command menu of a scope in a language (Italian names, English aliases)."""
    pairs = PRIVATE_COMMANDS if private else GROUP_COMMANDS
    return [
        BotCommand(it if lang == "it" else en, tr(lang, f"cmd.{it}")) for it, en in pairs
    ]


async def cmd_help(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    rt, chat, message = rt_of(context), update.effective_chat, update.effective_message
    assert chat and message
    group = is_group(update)
    lang = await (rt.chat_language(chat.id) if group else rt.user_language(update.effective_user))
    lines = [tr(lang, "help.head"), ""]
    for it, en in GROUP_COMMANDS if group else PRIVATE_COMMANDS:
        alias = f" (/{en})" if en != it else ""
        lines.append(f"/{it}{alias} — {tr(lang, 'cmd.' + it)}")
    lines += ["", tr(lang, "help.group_tail" if group else "help.private_tail")]
    if context.bot.username:  # 🔁 Rivincita, and the inline mode (@bot in any chat)
        lines.append(tr(lang, "help.extras", bot=context.bot.username))
    reply(context, message, "\n".join(lines))


def register(app: Application) -> None:  # type: ignore[type-arg]
    app.add_handler(CommandHandler(["aiuto", "help"], cmd_help))
