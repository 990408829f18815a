"""``python -m sandbox.token``: exit 0 if a bot token is configured, 1 if not.

``./scripts/run`` asks this to choose between the bot (a token: Telegram) and the sandbox
(no token: a local fake Telegram in the browser). The token is read like the bot reads it
(environment, then ``.env``); the placeholder of ``.env.example`` counts as no token.
"""

from __future__ import annotations

import sys

from pydantic_settings import BaseSettings, SettingsConfigDict

PLACEHOLDER = "123456:replace-me"


class _TokenOnly(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")

    bot_token: str = ""


def token_configured() -> bool:
    token = _TokenOnly().bot_token.strip()
    return bool(token) and token != PLACEHOLDER


if __name__ == "__main__":
    sys.exit(0 if token_configured() else 1)
