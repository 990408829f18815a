"""Validation of ``reply_markup`` and a small `Button` view for tests.

Enforced for inline keyboards (descriptions as Telegram words them where it has one):

* ``inline_keyboard`` must be an array of arrays of objects, otherwise
  ``field "inline_keyboard" of the InlineKeyboardMarkup must be an Array of Arrays``;
* each button needs a non-empty string ``text`` and **exactly one** action field
  (the real server silently takes the first one; the fake is stricter);
* ``callback_data``: 1..64 bytes UTF-8 -> ``BUTTON_DATA_INVALID``;
* ``url``: ``http(s)://host...`` or ``tg://...`` -> ``BUTTON_URL_INVALID``;
* ``web_app``: ``{"url": "https://..."}`` -> ``BUTTON_URL_INVALID`` (plain HTTP only on
  loopback hosts, like Telegram's test environment), and only in private chats ->
  ``BUTTON_TYPE_INVALID`` (:func:`check_chat_allows`);
* at most `MAX_BUTTONS` (100) buttons -> ``reply markup is too long`` and at most
  `MAX_ROW` (8) buttons per row -> ``BUTTON_TYPE_INVALID`` (fake's wording).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .errors import bad_request

MAX_BUTTONS = 100
MAX_ROW = 8
MAX_CALLBACK_DATA_BYTES = 64

INLINE_ACTIONS = (
    "url",
    "callback_data",
    "web_app",
    "login_url",
    "switch_inline_query",
    "switch_inline_query_current_chat",
    "switch_inline_query_chosen_chat",
    "copy_text",
    "callback_game",
    "pay",
)
_HTTP_URL_RE = re.compile(r"^https?://[^\s/?#]+[^\s]*$", re.IGNORECASE)
_TG_URL_RE = re.compile(r"^tg://[^\s]+$", re.IGNORECASE)
_LOOPBACK_HTTP_RE = re.compile(
    r"^http://(127\.0\.0\.1|localhost|\[::1\])(:\d+)?(/|$)", re.IGNORECASE
)


@dataclass(frozen=True)
class Button:
    """One inline keyboard button as the bot sent it."""

    text: str
    callback_data: str | None = None
    url: str | None = None
    row: int = 0
    col: int = 0
    raw: dict[str, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)

    @property
    def target(self) -> str | None:
        """``callback_data`` or ``url`` (whichever the button has)."""
        return self.callback_data if self.callback_data is not None else self.url


def validate_reply_markup(markup: Any) -> dict[str, Any]:
    """Validate a parsed ``reply_markup`` object and return it normalised."""
    if not isinstance(markup, dict):
        raise bad_request("can't parse reply keyboard markup JSON object")
    if "inline_keyboard" in markup:
        return {"inline_keyboard": _validate_inline(markup["inline_keyboard"])}
    if "keyboard" in markup:
        return _validate_reply_keyboard(markup)
    if markup.get("remove_keyboard") is True or markup.get("force_reply") is True:
        return dict(markup)
    raise bad_request("can't parse reply keyboard markup JSON object")


def _validate_inline(rows: Any) -> list[list[dict[str, Any]]]:
    if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows):
        raise bad_request(
            'field "inline_keyboard" of the InlineKeyboardMarkup must be an Array of Arrays'
        )
    total = sum(len(row) for row in rows)
    if total > MAX_BUTTONS:
        raise bad_request("reply markup is too long")
    result: list[list[dict[str, Any]]] = []
    for row in rows:
        if len(row) > MAX_ROW:
            raise bad_request(f"BUTTON_TYPE_INVALID (more than {MAX_ROW} buttons in a row)")
        checked = [_validate_inline_button(button) for button in row]
        if checked:
            result.append(checked)
    return result


def _validate_inline_button(button: Any) -> dict[str, Any]:
    if not isinstance(button, dict):
        raise bad_request(
            "can't parse inline keyboard button: InlineKeyboardButton must be an Object"
        )
    text = button.get("text")
    if not isinstance(text, str):
        raise bad_request(
            'can\'t parse inline keyboard button: Field "text" must be of type String'
        )
    if not text.strip():
        raise bad_request("BUTTON_TEXT_INVALID")
    actions = [name for name in INLINE_ACTIONS if button.get(name) is not None]
    if not actions:
        raise bad_request(
            "can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard"
        )
    if len(actions) > 1:
        raise bad_request(
            "can't parse inline keyboard button: exactly one of the optional fields must be "
            f"used, got {', '.join(actions)} (strict check of the fake server)"
        )
    action = actions[0]
    if action == "callback_data":
        _check_callback_data(button["callback_data"])
    elif action == "url":
        _check_url(button["url"])
    elif action == "web_app":
        _check_web_app(button["web_app"])
    return {key: value for key, value in button.items() if value is not None}


def _check_callback_data(data: Any) -> None:
    if not isinstance(data, str):
        raise bad_request("BUTTON_DATA_INVALID")
    size = len(data.encode("utf-8"))
    if not 1 <= size <= MAX_CALLBACK_DATA_BYTES:
        raise bad_request("BUTTON_DATA_INVALID")


def _check_url(url: Any) -> None:
    if not isinstance(url, str) or not (_HTTP_URL_RE.match(url) or _TG_URL_RE.match(url)):
        raise bad_request("BUTTON_URL_INVALID")


def _check_web_app(info: Any) -> None:
    """A ``WebAppInfo``: an HTTPS ``url``. Like Telegram's test environment, plain HTTP is
    accepted on this machine (127.0.0.1, localhost, ::1: the sandbox and the tests)."""
    url = info.get("url") if isinstance(info, dict) else None
    if not isinstance(url, str) or not _HTTP_URL_RE.match(url):
        raise bad_request("BUTTON_URL_INVALID")
    if not (url.lower().startswith("https://") or _LOOPBACK_HTTP_RE.match(url)):
        raise bad_request("BUTTON_URL_INVALID")


def check_chat_allows(markup: dict[str, Any] | None, private: bool) -> None:
    """``web_app`` buttons only in private chats (Bot API: "Available only in private
    chats between a user and the bot"); elsewhere Telegram answers BUTTON_TYPE_INVALID."""
    if private or not markup:
        return
    for row in markup.get("inline_keyboard", ()):
        for button in row:
            if "web_app" in button:
                raise bad_request("BUTTON_TYPE_INVALID")


def _validate_reply_keyboard(markup: dict[str, Any]) -> dict[str, Any]:
    rows = markup["keyboard"]
    if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows):
        raise bad_request('field "keyboard" of the ReplyKeyboardMarkup must be an Array of Arrays')
    for row in rows:
        for button in row:
            text = button.get("text") if isinstance(button, dict) else button
            if not isinstance(text, str) or not text:
                raise bad_request(
                    'can\'t parse keyboard button: Field "text" must be of type String'
                )
    return dict(markup)


def inline_buttons(markup: dict[str, Any] | None) -> list[list[Button]]:
    """The rows of `Button` of an inline keyboard (empty if none)."""
    if not markup or "inline_keyboard" not in markup:
        return []
    return [
        [
            Button(
                text=raw["text"],
                callback_data=raw.get("callback_data"),
                url=raw.get("url"),
                row=r,
                col=c,
                raw=raw,
            )
            for c, raw in enumerate(row)
        ]
        for r, row in enumerate(markup["inline_keyboard"])
    ]
