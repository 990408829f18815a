"""Translations: gettext ``.po`` catalogs in ``locales/<lang>/LC_MESSAGES/messages.po``.

The catalogs are package data of ``bot`` (``bot/locales`` links to the repository's
``locales/``; a wheel carries them as files), read with :mod:`importlib.resources`, so an
installed bot finds them wherever it runs from.

Message ids are symbolic keys (``"lobby.title"``); the catalogs hold the texts with
``str.format`` placeholders. Catalogs are read once with Babel. Every user-facing string
goes through :func:`tr`, or :func:`trn` for a count (gettext plural forms: ``msgid`` +
``msgid_plural`` + ``msgstr[i]``, chosen by the catalog's ``Plural-Forms``); a test checks
Italian and English have exactly the same keys and placeholders and that every key used in
the code exists.
"""

from __future__ import annotations

import gettext
import io
import logging
from functools import cache
from importlib.resources import files

from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

log = logging.getLogger(__name__)

LOCALES_DIR = files("bot") / "locales"
LANGUAGES: tuple[str, ...] = ("it", "en")
FALLBACK = "it"


@cache
def _po(lang: str) -> Catalog:
    path = LOCALES_DIR / lang / "LC_MESSAGES" / "messages.po"
    with path.open("rb") as fh:
        return read_po(fh, locale=lang)


@cache
def catalog(lang: str) -> dict[str, str]:
    """The (singular) messages of one language as ``{key: text}``."""
    return {
        str(m.id): str(m.string) for m in _po(lang) if m.id and m.string and not m.pluralizable
    }


@cache
def plural_catalog(lang: str) -> dict[str, tuple[str, ...]]:
    """The messages with plural forms of one language as ``{key: (form0, form1, ...)}``."""
    found: dict[str, tuple[str, ...]] = {}
    for message in _po(lang):
        forms = message.string
        if message.pluralizable and isinstance(forms, tuple | list) and all(forms):
            found[str(message.id[0])] = tuple(str(form) for form in forms)
    return found


@cache
def _translations(lang: str) -> gettext.GNUTranslations:
    """The catalog as the standard library's gettext translations (plural rule included)."""
    buffer = io.BytesIO()
    write_mo(buffer, _po(lang))
    buffer.seek(0)
    return gettext.GNUTranslations(buffer)


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


def tr_word(lang: str, key: str, fallback: str) -> str:
    """The text of ``key`` in ``lang`` (then Italian), else ``fallback`` as it is: for
    words looked up by a stored value (``level.<name>``, ``val.<value>``), so a value
    added later shows its own name until it is translated."""
    text = catalog(lang if lang in LANGUAGES else FALLBACK).get(key)
    return text if text is not None else catalog(FALLBACK).get(key, fallback)


def trn(lang: str, key: str, n: int, /, **values: object) -> str:
    """The plural form of ``key`` for the count ``n`` in ``lang`` (falling back to
    Italian), formatted with ``n`` and ``values``."""
    code = lang if lang in LANGUAGES else FALLBACK
    if key not in plural_catalog(code):
        code = FALLBACK
        if key not in plural_catalog(code):
            log.error("missing plural translation key %r", key)
            return key
    text = _translations(code).ngettext(key, key, n)
    try:
        return text.format(n=n, **values)
    except (KeyError, IndexError, ValueError):
        log.exception("bad placeholders in %s/%s", code, key)
        return text
