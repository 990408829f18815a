"""Who is asking: Telegram's ``initData``, then a short-lived token of our own.

:func:`validate_init_data` follows the Bot API's "Validating data received via the Mini
App" exactly: the secret key is HMAC-SHA256 of the bot token keyed with ``"WebAppData"``;
the hash is HMAC-SHA256 of the data-check string (every field but ``hash``, as
``key=value``, sorted by key, joined by ``\\n``) keyed with that secret, compared in
constant time; ``auth_date`` must be recent. Only then is ``user.id`` trusted.

The live connection then carries a :class:`Tokens` token (``EventSource`` cannot send
headers, and ``initData`` is meant to be checked once): ``<user>.<table>.<expiry>.<mac>``,
the MAC keyed with a key derived from the bot token for this use only.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode

#: initData is a URL-encoded query string of a few hundred bytes; refuse huge ones early.
MAX_INIT_DATA = 4096


class AuthError(Exception):
    """Invalid, forged, expired or missing credentials (the server answers 401)."""


@dataclass(frozen=True, slots=True)
class WebAppUser:
    id: int
    first_name: str
    language_code: str | None
    #: ``start_param`` of a direct link (``?startapp=``), if any.
    start_param: str | None
    auth_date: int


def _secret(bot_token: str) -> bytes:
    return hmac.new(b"WebAppData", bot_token.encode(), hashlib.sha256).digest()


def data_check_string(fields: dict[str, str]) -> str:
    return "\n".join(f"{k}={fields[k]}" for k in sorted(fields) if k != "hash")


def validate_init_data(
    init_data: str, bot_token: str, max_age: float, now: float | None = None
) -> WebAppUser:
    """The user of a valid ``initData``; :class:`AuthError` for anything else."""
    if not init_data or len(init_data) > MAX_INIT_DATA:
        raise AuthError("missing init data")
    try:
        pairs = parse_qsl(init_data, keep_blank_values=True, strict_parsing=True)
    except ValueError:
        raise AuthError("malformed init data") from None
    fields = dict(pairs)
    if len(fields) != len(pairs):
        raise AuthError("repeated field")
    received = fields.get("hash", "")
    expected = hmac.new(
        _secret(bot_token), data_check_string(fields).encode(), hashlib.sha256
    ).hexdigest()
    if not hmac.compare_digest(expected, received):
        raise AuthError("bad hash")
    try:
        auth_date = int(fields["auth_date"])
        user = json.loads(fields["user"])
        user_id = int(user["id"])
    except (KeyError, ValueError, TypeError):
        raise AuthError("no user") from None
    now = time.time() if now is None else now
    if not -60 <= now - auth_date <= max_age:
        raise AuthError("expired")
    language = user.get("language_code")
    return WebAppUser(
        id=user_id,
        first_name=str(user.get("first_name", ""))[:64],
        language_code=language if isinstance(language, str) else None,
        start_param=fields.get("start_param") or None,
        auth_date=auth_date,
    )


def sign_init_data(fields: dict[str, str], bot_token: str) -> str:
    """``initData`` as Telegram would sign it (for tests and the sandbox's stand-in)."""
    signed = dict(fields)
    signed["hash"] = hmac.new(
        _secret(bot_token), data_check_string(fields).encode(), hashlib.sha256
    ).hexdigest()
    return urlencode(signed)


@dataclass(frozen=True, slots=True)
class Grant:
    user_id: int
    game_id: int
    expires: int


class Tokens:
    """Short-lived tokens for one user at one table."""

    def __init__(self, bot_token: str, ttl: float = 900.0) -> None:
        self._key = hmac.new(bot_token.encode(), b"briscola-webapp-token", hashlib.sha256).digest()
        self.ttl = ttl

    def _mac(self, body: str) -> str:
        return hmac.new(self._key, body.encode(), hashlib.sha256).hexdigest()[:32]

    def issue(self, user_id: int, game_id: int, now: float | None = None) -> str:
        expires = int((time.time() if now is None else now) + self.ttl)
        body = f"{user_id}.{game_id}.{expires}"
        return f"{body}.{self._mac(body)}"

    def check(self, token: str | None, now: float | None = None) -> Grant:
        if not token or len(token) > 200:
            raise AuthError("missing token")
        body, _, mac = token.rpartition(".")
        if not hmac.compare_digest(self._mac(body), mac):
            raise AuthError("bad token")
        try:
            user, game, expires = (int(p) for p in body.split("."))
        except ValueError:
            raise AuthError("bad token") from None
        if expires < (time.time() if now is None else now):
            raise AuthError("token expired")
        return Grant(user, game, expires)
