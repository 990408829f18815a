"""Translations: gettext ``.po`` catalogs in ``locales/<lang>/LC_MESSAGES/messages.po``.

Message ids are symbolic keys (``"lobby.title"``); the catalogs hold the texts with
``str.format`` placeholders. Catalogs are read once with Babel. Every user-facing string
goes through :func:`tr`; a test checks Italian and English have exactly the same keys and
placeholders and that every key used in the code exists.
"""

from __future__ import annotations

import gettext
import logging
from collections.abc import Callable
from functools import cache
from pathlib import Path

from babel.messages.pofile import read_po

log = logging.getLogger(__name__)

LOCALES_DIR = Path(__file__).resolve().parent.parent / "locales"
LANGUAGES: tuple[str, ...] = ("it", "en")
FALLBACK = "it"


@cache
def _read(lang: str) -> tuple[dict[str, str], dict[str, tuple[str, ...]], Callable[[int], int]]:
    path = LOCALES_DIR / lang / "LC_MESSAGES" / "messages.po"
    with path.open("rb") as fh:
        po = read_po(fh, locale=lang)
    singular: dict[str, str] = {}
    plural: dict[str, tuple[str, ...]] = {}
    for m in po:
        if not m.id or not m.string:
            continue
        if isinstance(m.id, tuple | list):  # msgid + msgid_plural: the key is the msgid
            plural[str(m.id[0])] = tuple(str(form) for form in m.string)
        else:
            singular[str(m.id)] = str(m.string)
    return singular, plural, gettext.c2py(po.plural_expr)


def catalog(lang: str) -> dict[str, str]:
    """The messages of one language as ``{key: text}``."""
    return _read(lang)[0]


def plural_catalog(lang: str) -> dict[str, tuple[str, ...]]:
    """The plural messages of one language as ``{key: (form 0, form 1, …)}``."""
    return _read(lang)[1]


def trn(lang: str, key: str, n: int, /, **values: object) -> str:
    """The form of plural message ``key`` for ``n`` (gettext's Plural-Forms of the
    language), formatted with ``values``."""
    lang = lang if lang in LANGUAGES else FALLBACK
    forms = plural_catalog(lang).get(key) or plural_catalog(FALLBACK).get(key)
    if not forms:
        log.error("missing plural translation key %r", key)
        return key
    index = _read(lang)[2](n) if key in plural_catalog(lang) else _read(FALLBACK)[2](n)
    text = forms[min(index, len(forms) - 1)]
    try:
        return text.format(**values)
    except (KeyError, IndexError, ValueError):
        log.exception("bad placeholders in %s/%s", lang, key)
        return text


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
