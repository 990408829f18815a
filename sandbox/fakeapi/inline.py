"""Inline mode in the fake server: inline queries, their answers, chosen results, and the
prepared inline messages a Mini App shares (Bot API 8.0).

Telegram's behaviour modelled here:

* inline queries reach a bot only once its inline mode is switched on with @BotFather
  (``/setinline``); a query's text is at most 256 characters; its ``chat_type`` says
  where it was typed (``sender`` for the private chat with the bot);
* ``answerInlineQuery`` takes at most 50 results (``RESULTS_TOO_MUCH``), each with an
  ``id`` of 1-64 bytes (``RESULT_ID_INVALID``), unique in the answer
  (``RESULT_ID_DUPLICATE``); a query is answered once, within the same time as a
  callback query (``query is too old and response timeout expired or query ID is
  invalid``); ``button.start_parameter`` is 1-64 of ``A-Za-z0-9_-``;
* results are validated for the type the bot uses, ``article``: a ``title`` and an
  ``input_message_content`` with a ``message_text`` (parsed with its ``parse_mode``,
  1-4096 characters), and an inline keyboard at most;
* a chosen result becomes a message *sent by the user* ``via_bot`` in the chat where
  the query was typed; the bot gets ``chosen_inline_result`` only if inline feedback is
  on (@BotFather ``/setinlinefeedback``);
* ``savePreparedInlineMessage`` stores a result for one user known to Telegram (with
  the kinds of chats it may go to) and returns a ``PreparedInlineMessage`` (``id``,
  ``expiration_date``); the Mini App's ``shareMessage(id)`` lets the user pick a chat
  and sends it there, as a chosen inline result.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .errors import bad_request
from .markup import validate_reply_markup
from .models import FakeChat

MAX_RESULTS = 50
MAX_QUERY = 256
MAX_ID_BYTES = 64
#: Seconds a prepared inline message stays usable (Telegram: "expiration_date").
PREPARED_SECONDS = 24 * 3600
START_PARAMETER = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
CHAT_TYPES = frozenset({"sender", "private", "group", "supergroup", "channel"})


def _field_missing(name: str) -> Exception:
    return bad_request(f"can't parse inline query result: Can't find field \"{name}\"")


def validate_result(result: Any) -> dict[str, Any]:
    """One ``InlineQueryResult`` as the bot sent it (``article`` is checked in full)."""
    if not isinstance(result, dict):
        raise bad_request("can't parse inline query result: InlineQueryResult must be an Object")
    for name in ("type", "id"):
        if name not in result:
            raise _field_missing(name)
    result_id = result["id"]
    if not isinstance(result_id, str) or not 1 <= len(result_id.encode()) <= MAX_ID_BYTES:
        raise bad_request("RESULT_ID_INVALID")
    if result["type"] != "article":
        raise bad_request(
            f"can't parse inline query result: result type {result['type']!r} is not "
            "supported by the fake Telegram server; use article"
        )
    if not isinstance(result.get("title"), str) or not result["title"]:
        raise _field_missing("title")
    content = result.get("input_message_content")
    if not isinstance(content, dict) or "message_text" not in content:
        raise _field_missing("message_text")
    if "reply_markup" in result:
        markup = validate_reply_markup(result["reply_markup"])
        if "inline_keyboard" not in markup:
            raise bad_request("REPLY_MARKUP_INVALID")
        result = {**result, "reply_markup": markup}
    return dict(result)


def validate_button(button: Any) -> dict[str, Any] | None:
    """``answerInlineQuery``'s ``button`` (an ``InlineQueryResultsButton``)."""
    if button is None:
        return None
    if not isinstance(button, dict) or not isinstance(button.get("text"), str) \
            or not button["text"]:
        raise bad_request("can't parse InlineQueryResultsButton: Can't find field \"text\"")
    start = button.get("start_parameter")
    if ("web_app" in button) == (start is not None):
        raise bad_request("BUTTON_TYPE_INVALID")
    if start is not None and not START_PARAMETER.match(str(start)):
        raise bad_request("START_PARAM_INVALID")
    return dict(button)


@dataclass
class PreparedMessage:
    """A result saved by ``savePreparedInlineMessage`` for one user."""

    id: str
    user_id: int
    result: dict[str, Any]
    #: the kinds of chats it may be sent to: "users", "bots", "groups", "channels"
    allowed: frozenset[str]
    expiration_date: int
    shared_to: list[int] = field(default_factory=list)

    def allows(self, chat: FakeChat) -> bool:
        if chat.type == "private":
            return "users" in self.allowed  # (the fake has no chats with other bots)
        if chat.type in ("group", "supergroup"):
            return "groups" in self.allowed
        return "channels" in self.allowed
