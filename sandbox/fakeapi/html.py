"""Telegram-HTML parsing, modelled on tdlib's ``parse_html`` (td/telegram/MessageEntity.cpp).

`parse_html` turns Telegram-flavoured HTML into plain text plus a list of Bot API
``MessageEntity`` dicts with offsets/lengths in UTF-16 code units, and raises `HtmlParseError`
with tdlib's wording (``Unsupported start tag "script" at byte offset 0``, ...) where
Telegram answers ``400 Bad Request: can't parse entities: ...``.

Differences from the real server (all deliberate, see ``strict_ampersand``):

* Telegram keeps a ``&`` that does not start a known entity as a literal character.  With
  ``strict_ampersand=True`` (the default of the fake) such a ``&`` is rejected, because it
  nearly always means that user-provided text (a player name such as ``"Tom & Jerry"``) was
  interpolated without ``html.escape``.
* ``<a href>``: like tdlib, a link that cannot be validated is silently dropped (no error);
  the fake accepts http(s)/tg/ton/mailto URLs and bare host names (``example.org/x`` becomes
  ``http://example.org/x``), which approximates tdlib's ``LinkManager::check_link``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

ALLOWED_TAGS = frozenset(
    {
        "a", "b", "strong", "i", "em", "s", "strike", "del", "u", "ins",
        "tg-spoiler", "tg-emoji", "span", "pre", "code", "blockquote",
    }
)  # fmt: skip

_SIMPLE_TYPES = {
    "b": "bold",
    "strong": "bold",
    "i": "italic",
    "em": "italic",
    "u": "underline",
    "ins": "underline",
    "s": "strikethrough",
    "strike": "strikethrough",
    "del": "strikethrough",
    "tg-spoiler": "spoiler",
    "span": "spoiler",
}

_NAMED_ENTITIES = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}
_ENTITY_RE = re.compile(r"&(?:#[xX]([0-9A-Fa-f]{1,8})|#([0-9]{1,8})|([A-Za-z]+));?")
_SPECIAL_RE = re.compile(r"[<&]")
_SPACES = frozenset(" \t\r\n\v\0")
_URL_SCHEME_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_BARE_HOST_RE = re.compile(r"^[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}(?:[/?#]\S*)?$")
_LINK_SCHEMES = frozenset({"http", "https", "tg", "ton", "mailto"})
_TG_USER_RE = re.compile(r"^tg://user\?id=(\d+)$")


class HtmlParseError(ValueError):
    """The text is not valid Telegram HTML; ``str(err)`` is the tdlib-style detail."""


def utf16_len(text: str) -> int:
    """Length of ``text`` in UTF-16 code units (what Telegram offsets and limits count)."""
    return len(text.encode("utf-16-le")) // 2


def utf16_slice(text: str, offset: int, length: int) -> str:
    """The substring of ``text`` at a UTF-16 ``offset``/``length`` (as in MessageEntity)."""
    raw = text.encode("utf-16-le")
    return raw[2 * offset : 2 * (offset + length)].decode("utf-16-le", errors="replace")


def _byte_offset(text: str, index: int) -> int:
    return len(text[:index].encode("utf-8"))


def decode_entity(text: str, pos: int) -> tuple[str, int] | None:
    """Decode the HTML entity starting at ``text[pos] == '&'`` like tdlib does.

    Returns ``(character, position after the entity)`` or ``None`` if it is not a known
    entity.  The trailing ``;`` is optional, as in tdlib.
    """
    match = _ENTITY_RE.match(text, pos)
    if match is None:
        return None
    hex_digits, dec_digits, name = match.groups()
    if name is not None:
        char = _NAMED_ENTITIES.get(name)
        if char is None:
            return None
        return char, match.end()
    code = int(hex_digits, 16) if hex_digits is not None else int(dec_digits)
    if code == 0 or code >= 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        return None
    return chr(code), match.end()


@dataclass(slots=True)
class _Open:
    """A start tag waiting for its end tag."""

    name: str
    argument: str
    offset: int  # UTF-16 offset in the output text
    text_index: int  # code-point index in the output text


class _HtmlParser:
    """Single-use parser; `run` returns ``(text, entities)``."""

    def __init__(self, source: str, strict_ampersand: bool):
        self.src = source
        self.n = len(source)
        self.strict_ampersand = strict_ampersand
        self.out: list[str] = []
        self.out_chars = 0
        self.utf16 = 0
        self.stack: list[_Open] = []
        self.entities: list[dict[str, Any]] = []

    # -- helpers -----------------------------------------------------------------------
    def at(self, i: int) -> str:
        return self.src[i] if i < self.n else "\0"

    def error(self, message: str) -> HtmlParseError:
        return HtmlParseError(message)

    def emit(self, chunk: str) -> None:
        if chunk:
            self.out.append(chunk)
            self.out_chars += len(chunk)
            self.utf16 += utf16_len(chunk)

    def skip_spaces(self, i: int) -> int:
        while i < self.n and self.src[i] in _SPACES:
            i += 1
        return i

    # -- main loop ---------------------------------------------------------------------
    def run(self) -> tuple[str, list[dict[str, Any]]]:
        i = 0
        while i < self.n:
            match = _SPECIAL_RE.search(self.src, i)
            if match is None:
                self.emit(self.src[i:])
                break
            j = match.start()
            self.emit(self.src[i:j])
            i = self.ampersand(j) if self.src[j] == "&" else self.tag(j)
        if self.stack:
            name = self.stack[-1].name
            raise self.error(f'Can\'t find end tag corresponding to start tag "{name}"')
        self.entities.sort(key=lambda e: (e["offset"], -e["length"]))
        return "".join(self.out), self.entities

    def ampersand(self, i: int) -> int:
        decoded = decode_entity(self.src, i)
        if decoded is not None:
            self.emit(decoded[0])
            return decoded[1]
        if self.strict_ampersand:
            raise self.error(
                f"Character '&' at byte offset {_byte_offset(self.src, i)} does not start an "
                "HTML entity; escape it as &amp; (strict check of the fake server)"
            )
        self.emit("&")
        return i + 1

    def tag(self, begin: int) -> int:
        if self.at(begin + 1) == "/":
            return self.end_tag(begin)
        return self.start_tag(begin)

    # -- start tags --------------------------------------------------------------------
    def start_tag(self, begin: int) -> int:
        i = begin + 1
        name_start = i
        while self.at(i) not in _SPACES and self.at(i) != ">":
            i += 1
        if i >= self.n:
            raise self.error(f"Unclosed start tag at byte offset {_byte_offset(self.src, begin)}")
        name = self.src[name_start:i].lower()
        if name not in ALLOWED_TAGS:
            raise self.error(
                f'Unsupported start tag "{name}" at byte offset {_byte_offset(self.src, begin)}'
            )
        i, argument = self.attributes(i, name, begin)
        if name == "span" and argument != "spoiler":
            raise self.error(
                'Tag "span" must have class "tg-spoiler" at byte offset '
                f"{_byte_offset(self.src, begin)}"
            )
        self.stack.append(_Open(name, argument, self.utf16, self.out_chars))
        return i + 1  # skip '>'

    def attributes(self, i: int, tag: str, begin: int) -> tuple[int, str]:
        """Parse attributes up to the closing ``>``; return (index of '>', argument)."""
        argument = ""
        while True:
            i = self.skip_spaces(i)
            if i >= self.n:
                raise self.error(
                    f"Unclosed start tag at byte offset {_byte_offset(self.src, begin)}"
                )
            if self.src[i] == ">":
                return i, argument
            attr_start = i
            while self.at(i) not in _SPACES and self.at(i) not in "=>":
                i += 1
            attr = self.src[attr_start:i].lower()
            i = self.skip_spaces(i)
            if self.at(i) != "=":
                if tag == "blockquote" and attr == "expandable":
                    argument = "expandable"
                    continue
                raise self.error(
                    "Expected equal sign in declaration of an attribute of the tag "
                    f'"{tag}" at byte offset {_byte_offset(self.src, begin)}'
                )
            i, value = self.attribute_value(self.skip_spaces(i + 1), tag, begin)
            argument = _tag_argument(tag, attr, value, argument)

    def attribute_value(self, i: int, tag: str, begin: int) -> tuple[int, str]:
        if i >= self.n:
            raise self.error(
                f'Unclosed start tag "{tag}" at byte offset {_byte_offset(self.src, begin)}'
            )
        quote = self.src[i]
        if quote not in "'\"":
            start = i
            while self.at(i).isalnum() or self.at(i) in ".-":
                i += 1
            if self.at(i) not in _SPACES and self.at(i) != ">":
                raise self.error(
                    f"Unexpected end of name token at byte offset {_byte_offset(self.src, start)}"
                )
            return i, self.src[start:i].lower()
        i += 1
        value: list[str] = []
        while i < self.n and self.src[i] != quote:
            if self.src[i] == "&":
                decoded = decode_entity(self.src, i)
                if decoded is not None:
                    value.append(decoded[0])
                    i = decoded[1]
                    continue
            value.append(self.src[i])
            i += 1
        if i >= self.n:
            raise self.error(f"Unclosed start tag at byte offset {_byte_offset(self.src, begin)}")
        return i + 1, "".join(value)

    # -- end tags ----------------------------------------------------------------------
    def end_tag(self, begin: int) -> int:
        if not self.stack:
            raise self.error(f"Unexpected end tag at byte offset {_byte_offset(self.src, begin)}")
        i = name_start = begin + 2
        while self.at(i) not in _SPACES and self.at(i) != ">":
            i += 1
        end_name = self.src[name_start:i].lower()
        i = self.skip_spaces(i)
        if self.at(i) != ">":
            raise self.error(
                f"Unclosed end tag at byte offset {_byte_offset(self.src, name_start)}"
            )
        opened = self.stack[-1]
        if end_name and end_name != opened.name:
            raise self.error(
                f"Unmatched end tag at byte offset {_byte_offset(self.src, begin)}, "
                f'expected "</{opened.name}>", found "</{end_name}>"'
            )
        self.stack.pop()
        if self.utf16 > opened.offset:
            self.close_entity(opened)
        return i + 1

    def close_entity(self, opened: _Open) -> None:
        offset, length = opened.offset, self.utf16 - opened.offset
        name, arg = opened.name, opened.argument
        last = self.entities[-1] if self.entities else None
        same_span = last is not None and (last["offset"], last["length"]) == (offset, length)
        if name in _SIMPLE_TYPES:
            self.entities.append({"type": _SIMPLE_TYPES[name], "offset": offset, "length": length})
        elif name == "a":
            url = arg or "".join(self.out)[opened.text_index :]
            entity = _link_entity(url, offset, length)
            if entity is not None:
                self.entities.append(entity)
        elif name == "tg-emoji":
            if not arg.isdigit():
                raise self.error("Invalid custom emoji identifier specified")
            self.entities.append(
                {"type": "custom_emoji", "offset": offset, "length": length, "custom_emoji_id": arg}
            )
        elif name == "pre":
            if same_span and last is not None and last["type"] == "code" and "language" in last:
                last["type"] = "pre"
            else:
                self.entities.append({"type": "pre", "offset": offset, "length": length})
        elif name == "code":
            if same_span and last is not None and last["type"] == "pre" and arg:
                last["language"] = arg
            else:
                entity = {"type": "code", "offset": offset, "length": length}
                if arg:
                    entity["language"] = arg  # becomes pre+language if a <pre> wraps it
                self.entities.append(entity)
        elif name == "blockquote":
            kind = "expandable_blockquote" if arg == "expandable" else "blockquote"
            self.entities.append({"type": kind, "offset": offset, "length": length})


def _tag_argument(tag: str, attr: str, value: str, current: str) -> str:
    if tag == "a" and attr == "href":
        return value
    if tag == "code" and attr == "class" and value.startswith("language-"):
        return value[len("language-") :]
    if tag == "span" and attr == "class" and value.startswith("tg-"):
        return value[len("tg-") :]
    if tag == "tg-emoji" and attr == "emoji-id":
        return value
    return current


def _link_entity(url: str, offset: int, length: int) -> dict[str, Any] | None:
    url = url.strip()
    user = _TG_USER_RE.match(url)
    if user is not None:
        return {
            "type": "text_mention",
            "offset": offset,
            "length": length,
            "user": {"id": int(user.group(1)), "is_bot": False, "first_name": ""},
        }
    scheme = _URL_SCHEME_RE.match(url)
    if scheme is None:
        if not _BARE_HOST_RE.match(url):
            return None
        url = f"http://{url}"
    elif scheme.group(1).lower() not in _LINK_SCHEMES:
        return None
    return {"type": "text_link", "offset": offset, "length": length, "url": url}


def parse_html(source: str, *, strict_ampersand: bool = True) -> tuple[str, list[dict[str, Any]]]:
    """Parse Telegram HTML into ``(plain_text, entities)``; raise `HtmlParseError`.

    Entities use UTF-16 offsets.  A ``code`` entity carrying ``language`` outside a ``pre``
    keeps the key out of the result.  The text is *not* trimmed here (see `finalize_text`).
    """
    text, entities = _HtmlParser(source, strict_ampersand).run()
    for entity in entities:
        if entity["type"] == "code":
            entity.pop("language", None)
    return text, entities


def finalize_text(text: str, entities: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """Trim surrounding whitespace like Telegram does and fix up entity offsets."""
    stripped = text.strip()
    if stripped == text:
        return text, entities
    lead = utf16_len(text[: len(text) - len(text.lstrip())])
    end = utf16_len(stripped)
    fixed: list[dict[str, Any]] = []
    for entity in entities:
        start = max(entity["offset"] - lead, 0)
        stop = min(entity["offset"] + entity["length"] - lead, end)
        if stop > start:
            fixed.append({**entity, "offset": start, "length": stop - start})
    return stripped, fixed


def entity_text(text: str, entity: dict[str, Any]) -> str:
    """The part of ``text`` covered by ``entity``."""
    return utf16_slice(text, entity["offset"], entity["length"])
