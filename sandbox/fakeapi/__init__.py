"""A local fake Telegram Bot API server for end-to-end tests of the bot.

Entry point: `FakeTelegram` (server.py).  README.md in this package documents the API, the
enforced limits (with Telegram's error descriptions) and the known gaps.
"""

from .client import (
    CallbackAnswer,
    CallbackQueryHandle,
    FakeUser,
    InlineAnswer,
    InlineQueryHandle,
)
from .errors import ApiError, FakeClientError, WaitTimeout
from .html import HtmlParseError, parse_html, utf16_len
from .limits import FloodLimits, FloodViolation
from .markup import Button
from .models import BotIdentity, FakeChat, FakeMessage, PendingUpdate
from .server import ApiCall, ChatWatch, FakeTelegram, Fault, WebhookDelivery

__all__ = [
    "ApiCall",
    "ApiError",
    "BotIdentity",
    "Button",
    "CallbackAnswer",
    "CallbackQueryHandle",
    "ChatWatch",
    "FakeChat",
    "FakeClientError",
    "FakeMessage",
    "FakeTelegram",
    "FakeUser",
    "Fault",
    "FloodLimits",
    "FloodViolation",
    "HtmlParseError",
    "InlineAnswer",
    "InlineQueryHandle",
    "PendingUpdate",
    "WaitTimeout",
    "WebhookDelivery",
    "parse_html",
    "utf16_len",
]
