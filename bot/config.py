"""Settings from the environment and ``.env`` (pydantic-settings).

Every setting is documented in ``.env.example``. :func:`load_settings` turns any problem
into one :class:`ConfigError` whose message is a single readable line.
"""

from __future__ import annotations

import logging
import re
from typing import Literal, Self
from urllib.parse import urlsplit, urlunsplit

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from game.players import Level

Language = Literal["it", "en"]
_SECRET_RE = re.compile(r"[A-Za-z0-9_-]{1,256}")


class ConfigError(Exception):
    """A missing or malformed setting; ``str()`` is one line fit for the console."""


class Settings(BaseSettings):
    """The bot's configuration (environment variables, case-insensitive, or ``.env``)."""

    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")

    bot_token: SecretStr
    telegram_base_url: str | None = None
    telegram_base_file_url: str | None = None
    database_url: str = "sqlite:///briscola.db"
    default_language: Language = "it"
    turn_timeout_seconds: int = Field(default=90, ge=0, le=86400)
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = "INFO"
    admin_chat_id: int | None = None
    #: Default level of the computer players (``game.players.LEVELS``; ``esperto`` is
    #: measured stronger than ``forte``, see game/players/expert.py, and thinks about
    #: twice as long).
    computer_level: Level = "normale"
    #: Pause before each computer move, so that people can follow the table.
    computer_delay_seconds: float = Field(default=1.0, ge=0, le=30)
    #: Budget of sends + edits per group per rolling minute (Telegram: about 20; we keep
    #: a small safety margin by default).
    group_messages_per_minute: int = Field(default=18, ge=1, le=1000)
    #: Sends + edits per second for the whole bot (Telegram: about 30; 10% under it by
    #: default), paced evenly and granted by priority (bot/budget.py).
    telegram_messages_per_second: float = Field(default=27.0, gt=0, le=1000)
    #: Sends + edits per second to one private chat (Telegram: about 1; 0.8 by default,
    #: a burst of two), paced evenly. Raised, like group_messages_per_minute, only where
    #: Telegram's limits are not enforced (the sandbox's browser tests).
    private_messages_per_second: float = Field(default=0.8, gt=0, le=1000)
    #: Webhook mode (unset: long polling): the public HTTPS URL Telegram posts updates to;
    #: PTB's server listens on webhook_listen:webhook_port, on the URL's path.
    webhook_url: str | None = None
    #: Required with webhook_url: Telegram sends it in X-Telegram-Bot-Api-Secret-Token
    #: and requests without it get 403.
    webhook_secret: SecretStr | None = None
    webhook_listen: str = "127.0.0.1"
    webhook_port: int = Field(default=8443, ge=1, le=65535)
    #: The Mini App (bot/webapp/): its public HTTPS address (unset: no Mini App, no
    #: buttons); its server listens on webapp_listen:webapp_port behind a reverse proxy.
    webapp_url: str | None = None
    webapp_listen: str = "127.0.0.1"
    webapp_port: int = Field(default=8081, ge=0, le=65535)
    #: The app's short name from BotFather's /newapp: the group's table gets a link
    #: https://t.me/<bot>/<short name>?startapp=<table> (unset: no button in groups).
    webapp_short_name: str | None = None
    #: How old Telegram's initData may be (seconds since auth_date) to open a session.
    webapp_init_data_max_age: int = Field(default=86400, ge=60, le=30 * 86400)
    #: Where the page loads telegram-web-app.js from (the sandbox serves a stand-in).
    webapp_telegram_js: str = "https://telegram.org/js/telegram-web-app.js"
    #: A player live in the Mini App gets nothing in the chat per move; if their turn
    #: waits this many seconds, the chat's turn (their hand with its buttons) goes too.
    live_turn_notice_seconds: float = Field(default=20.0, ge=0, le=3600)
    #: File the running bot touches every 10 s, for `python -m bot.health` (containers).
    health_file: str | None = None

    @field_validator("bot_token")
    @classmethod
    def _token_shape(cls, value: SecretStr) -> SecretStr:
        token = value.get_secret_value().strip()
        if ":" not in token or not token.split(":", 1)[0].isdigit():
            raise ValueError("must look like 123456:ABC... (from @BotFather)")
        return SecretStr(token)

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper(cls, value: object) -> object:
        return value.upper() if isinstance(value, str) else value

    @field_validator(
        "telegram_base_url", "telegram_base_file_url", "admin_chat_id", "webhook_url",
        "webhook_secret", "health_file", "webapp_url", "webapp_short_name", mode="before",
    )
    @classmethod
    def _empty_is_none(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("telegram_base_url", "telegram_base_file_url", "webhook_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value

    @field_validator("webapp_url")
    @classmethod
    def _webapp_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        host = urlsplit(value).hostname or ""
        # Telegram opens only HTTPS Mini Apps; plain HTTP on this machine is for the sandbox
        if not value.startswith("https://") and not (
            value.startswith("http://") and host in ("127.0.0.1", "localhost", "::1")
        ):
            raise ValueError("must start with https:// (http:// only for 127.0.0.1)")
        parts = urlsplit(value)
        if not parts.path.endswith("/"):  # the page's addresses are relative to it
            value = urlunsplit(parts._replace(path=parts.path + "/"))
        return value

    @field_validator("webapp_short_name")
    @classmethod
    def _short_name(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"[A-Za-z0-9_]{3,30}", value):
            raise ValueError("must be the app's short name from BotFather (3-30 A-Z, 0-9, _)")
        return value

    @field_validator("webhook_secret")
    @classmethod
    def _secret_shape(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not _SECRET_RE.fullmatch(value.get_secret_value()):
            raise ValueError("must be 1-256 characters A-Z, a-z, 0-9, _ or - (Telegram's rule)")
        return value

    @model_validator(mode="after")
    def _webhook_needs_secret(self) -> Self:
        if self.webhook_url is not None and self.webhook_secret is None:
            raise ValueError("WEBHOOK_SECRET is required with WEBHOOK_URL")
        return self

    @property
    def log_level_number(self) -> int:
        return int(logging.getLevelName(self.log_level))


def load_settings(**overrides: object) -> Settings:
    """Read the settings; raise :class:`ConfigError` with a one-line explanation."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            name = ".".join(str(p) for p in err["loc"]).upper() or "settings"
            message = "is required" if err["type"] == "missing" else err["msg"]
            problems.append(f"{name} {message}")
        raise ConfigError("configuration error: " + "; ".join(problems)) from None
