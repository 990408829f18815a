"""Telegram bot for Briscola chiamata (python-telegram-bot 22)."""

import os

# Durations from PTB (e.g. RetryAfter.retry_after) as datetime.timedelta, as they will be
# in PTB's next major version; the int form is deprecated since 22.2 (and warns on use).
os.environ.setdefault("PTB_TIMEDELTA", "true")
