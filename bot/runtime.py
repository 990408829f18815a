"""The objects shared by every handler (kept in ``application.bot_data["rt"]``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from telegram import Chat, Message, Update, User
from telegram.constants import ChatMemberStatus, ChatType
from telegram.error import TelegramError
from telegram.ext import ContextTypes

from bot.config import Settings
from bot.i18n import LANGUAGES
from bot.outbox import Outbox
from bot.prefs import Prefs, is_private_chat
from bot.service import GameService
from bot.tables import Tables
from storage import Database, GameRow, repo


@dataclass
class Runtime:
    settings: Settings
    db: Database
    service: GameService
    outbox: Outbox
    tables: Tables

    async def chat_prefs(self, chat_id: int) -> Prefs:
        row = await repo.get_chat_settings(self.db, chat_id)
        prefs = Prefs.from_json(
            row.settings_json if row else None,
            # alone against computers nobody waits for you: no turn timer unless chosen
            timeout=0 if is_private_chat(chat_id) else self.settings.turn_timeout_seconds,
            language=self.settings.default_language,
        )
        return prefs

    async def chat_language(self, chat_id: int) -> str:
        return (await self.chat_prefs(chat_id)).language

    async def user_language(self, user: User | None, chat: Chat | None = None) -> str:
        """A user's language if supported, else the chat's (or the default)."""
        code = ((user.language_code if user else None) or "").split("-")[0].lower()
        if code in LANGUAGES:
            return code
        if chat is not None and chat.type != ChatType.PRIVATE:
            return await self.chat_language(chat.id)
        return self.settings.default_language


def rt_of(context: ContextTypes.DEFAULT_TYPE) -> Runtime:
    return context.bot_data["rt"]  # type: ignore[no-any-return]


def thread_of(message: Message | Any) -> int:
    """The forum topic of a message (0 outside topics): one game per topic."""
    if message is not None and getattr(message, "is_topic_message", False):
        return int(message.message_thread_id or 0)
    return 0


def is_group(update: Update) -> bool:
    chat = update.effective_chat
    return chat is not None and chat.type in (ChatType.GROUP, ChatType.SUPERGROUP)


async def is_admin(context: ContextTypes.DEFAULT_TYPE, chat_id: int, user_id: int) -> bool:
    try:
        member = await context.bot.get_chat_member(chat_id, user_id)
    except TelegramError:
        return False
    return member.status in (ChatMemberStatus.ADMINISTRATOR, ChatMemberStatus.OWNER)


async def may_manage(
    context: ContextTypes.DEFAULT_TYPE, row: GameRow | None, chat_id: int, user_id: int
) -> bool:
    """The lobby creator or a chat admin (in a private chat: its owner)."""
    if chat_id == user_id or (row is not None and row.creator_id == user_id):
        return True
    return await is_admin(context, chat_id, user_id)


def display_name(user: User) -> str:
    name = user.full_name.strip() or (user.username or str(user.id))
    return name[:64]
