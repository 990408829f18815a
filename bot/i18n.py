"""Translations: gettext ``.po`` catalogs in ``locales/<lang>/LC_MESSAGES/messages.po``.

The catalogs are package data of ``bot`` (``bot/locales`` links to the repository's
``locales/``; a wheel carries them as files), read with :mod:`importlib.resources`, so an
installed bot finds them wherever it runs from.

Message ids are symbolic keys (``"lobby.title"``); the catalogs hold the texts with
``str.format`` placeholders. Catalogs are read once with Babel. Every user-facing string
goes through :func:`tr`; a test checks Italian and English have exactly the same keys and
placeholders and that every key used in the code exists.
"""

from __future__ import annotations

import logging
from functools import cache
from importlib.resources import files

from babel.messages.pofile import read_po

log = logging.getLogger(__name__)

LOCALES_DIR = files("bot") / "locales"
LANGUAGES: tuple[str, ...] = ("it", "en")
FALLBACK = "it"


@cache
def catalog(lang: str) -> dict[str, str]:
    """The messages of one language as ``{key: text}``."""
    path = LOCALES_DIR / lang / "LC_MESSAGES" / "messages.po"
    with path.open("rb") as fh:
        po = read_po(fh, locale=lang)
    return {str(m.id): str(m.string) for m in po if m.id and m.string}


def pick_language(*candidates: str | None) -> str:
    """The first supported language among Telegram language codes (``"en-US"`` -> en)."""
    for code in candidates:
        if code:
            short = code.split("-")[0].split("_")[0].lower()
            if short in LANGUAGES:
                return short
    return FALLBACK


def tr(lang: str, key: str, /, **values: object) -> str:
    """The text of ``key`` in ``lang`` (falling back to Italian), formatted with values."""
    text = catalog(lang if lang in LANGUAGES else FALLBACK).get(key)
    if text is None:
        text = catalog(FALLBACK).get(key)
        if text is None:
            log.error("missing translation key %r", key)
            return key
    if not values:
        return text
    try:
        return text.format(**values)
    except (KeyError, IndexError, ValueError):
        log.exception("bad placeholders in %s/%s", lang, key)
        return text
