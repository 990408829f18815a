"""``python -m bot``: read the settings and run with long polling."""

from __future__ import annotations

import logging
import sys

from bot.config import ConfigError, load_settings


def main() -> int:
    try:
        settings = load_settings()
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 2
    logging.basicConfig(
        level=settings.log_level_number,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    logging.getLogger("httpx").setLevel(logging.WARNING)
    from telegram import Update

    from bot.app import build_application

    # Redraws read and write on the database thread while the event loop sends edits:
    # hand the GIL over after 1 ms instead of CPython's 5 ms, or each of their statements
    # can wait that long behind the loop, holding the connection a press may need.
    sys.setswitchinterval(0.001)
    app = build_application(settings)
    try:
        app.run_polling(allowed_updates=Update.ALL_TYPES)
    except Exception as exc:  # e.g. a database that cannot be opened
        logging.getLogger("bot").critical("cannot run the bot: %s", exc)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
