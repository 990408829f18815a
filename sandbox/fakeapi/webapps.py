"""Mini Apps as Telegram opens them: ``initData`` signed with the bot's token.

Telegram's clients open a Mini App at its URL with the launch parameters in the fragment
(``#tgWebAppData=<initData>&tgWebAppVersion=…&tgWebAppThemeParams=…``); ``initData`` is a
query string (``user``, ``auth_date``, ``query_id`` or ``chat_type``/``chat_instance``,
``start_param``) with ``hash``: HMAC-SHA256 of the sorted data-check string keyed with
HMAC-SHA256("WebAppData", bot token). Written here independently of the bot's checker.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
from typing import Any
from urllib.parse import quote, urlencode

#: Theme colours the fake client passes (Telegram's light theme).
THEME = {"bg_color": "#ffffff", "text_color": "#000000", "hint_color": "#707579",
         "button_color": "#3390ec", "button_text_color": "#ffffff",
         "secondary_bg_color": "#f4f4f5"}


def sign(fields: dict[str, str], token: str) -> str:
    """``fields`` as a signed ``initData`` query string."""
    check = "\n".join(f"{k}={fields[k]}" for k in sorted(fields))
    secret = hmac.new(b"WebAppData", token.encode(), hashlib.sha256).digest()
    digest = hmac.new(secret, check.encode(), hashlib.sha256).hexdigest()
    return urlencode({**fields, "hash": digest})


def init_data(
    token: str, user: dict[str, Any], *, start_param: str | None = None,
    chat_type: str | None = None, chat_instance: str | None = None,
    auth_date: int | None = None,
) -> str:
    """What Telegram gives a Mini App opened by ``user`` (a ``User`` JSON object): from a
    ``web_app`` button (a ``query_id``) or a direct link (chat type and instance)."""
    fields = {
        "user": json.dumps(user, ensure_ascii=False, separators=(",", ":")),
        "auth_date": str(int(time.time()) if auth_date is None else auth_date),
    }
    if chat_type is None:
        fields["query_id"] = "AAF" + secrets.token_urlsafe(12)
    else:
        fields["chat_type"] = chat_type
        fields["chat_instance"] = chat_instance or str(secrets.randbelow(10**18))
    if start_param is not None:
        fields["start_param"] = start_param
    return sign(fields, token)


def launch_url(url: str, data: str, start_param: str | None = None) -> str:
    """The URL a Telegram client loads: the app's URL with the launch fragment."""
    fragment = {"tgWebAppData": data, "tgWebAppVersion": "8.0",
                "tgWebAppPlatform": "sandbox",
                "tgWebAppThemeParams": json.dumps(THEME, separators=(",", ":"))}
    if start_param is not None:
        fragment["tgWebAppStartParam"] = start_param
    return url.split("#", 1)[0] + "#" + urlencode(fragment, quote_via=quote)
