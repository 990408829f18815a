"""The Mini App: the table with card pictures, live, beside the chat (issue 19).

Another adapter over the same service: :mod:`bot.webapp.server` (HTTP, auth, live push)
reads the stored games through :class:`bot.service.GameService` and plays moves through
``Tables.human_action``, the path of a button press. :func:`start` wires it to the bot.
"""

from __future__ import annotations

import time

from telegram import Bot, InlineQueryResultArticle, InputTextMessageContent
from telegram.constants import ChatMemberStatus, ParseMode
from telegram.error import TelegramError

from bot.features.inline import invite_keyboard
from bot.features.rematch import rematch
from bot.i18n import tr
from bot.runtime import Runtime
from bot.webapp.server import WebAppServer

__all__ = ["MemberCache", "WebAppServer", "start"]

#: Seconds a group membership answer (getChatMember) is remembered.
MEMBER_SECONDS = 120.0


class MemberCache:
    """Whether a user is in a group (getChatMember: no message, no message budget)."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self._known: dict[tuple[int, int], tuple[bool, float]] = {}

    async def check(self, chat_id: int, user_id: int) -> bool:
        now = time.monotonic()
        known = self._known.get((chat_id, user_id))
        if known is not None and known[1] > now:
            return known[0]
        try:
            member = await self.bot.get_chat_member(chat_id, user_id)
        except TelegramError:
            return False
        inside = member.status in (
            ChatMemberStatus.OWNER, ChatMemberStatus.ADMINISTRATOR, ChatMemberStatus.MEMBER
        ) or (member.status == ChatMemberStatus.RESTRICTED and bool(getattr(member, "is_member",
                                                                            False)))
        if len(self._known) > 10_000:
            self._known.clear()
        self._known[(chat_id, user_id)] = (inside, now + MEMBER_SECONDS)
        return inside


async def start(bot: Bot, rt: Runtime) -> WebAppServer:
    """Serve the Mini App for the running bot (WEBAPP_LISTEN:WEBAPP_PORT)."""
    settings = rt.settings

    async def move(game_id: int, version: int, user_id: int, code: str) -> None:
        applied = await rt.tables.human_action(game_id, version, user_id, code)
        # the chat follows as after a button press
        rt.tables.background(rt.tables.after(applied))

    async def share(user_id: int, text: str, lang: str) -> str:
        """A result card saved for the user (Bot API 8.0), with the links to play."""
        card = InlineQueryResultArticle(
            id=f"r{user_id}.{time.time_ns()}", title=tr(lang, "webapp.share_title"),
            input_message_content=InputTextMessageContent(text, parse_mode=ParseMode.HTML),
            reply_markup=invite_keyboard(lang, bot.username),
        )
        prepared = await bot.save_prepared_inline_message(
            user_id, card, allow_user_chats=True, allow_group_chats=True)
        return prepared.id

    async def rematcher(game_id: int, user_id: int) -> tuple[int, bool]:
        return await rematch(rt, game_id, user_id)

    server = WebAppServer(
        rt.service, bot_token=settings.bot_token.get_secret_value(), mover=move,
        is_member=MemberCache(bot).check, max_age=settings.webapp_init_data_max_age,
        telegram_js=settings.webapp_telegram_js, default_language=settings.default_language,
        presence=rt.tables.presence, sharer=share, rematcher=rematcher,
    )
    await server.start(settings.webapp_listen, settings.webapp_port)
    return server
