"""Per-chat preferences: table options plus bot-only settings, and the settings menu model.

Stored as JSON in ``chats.settings_json`` and copied into ``games.settings_json`` when a
lobby opens (changes apply from the next match).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from game import DeckStyle, TableOptions


def is_private_chat(chat_id: int) -> bool:
    """Telegram's private chats have the user's (positive) id, groups a negative one: a game
    in a private chat is a person alone against computers."""
    return chat_id > 0


class Prefs(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    options: TableOptions = Field(default_factory=TableOptions)
    turn_timeout: int = Field(default=90, ge=0, le=86400)
    language: str = "it"

    def to_json(self) -> str:
        return self.model_dump_json()

    @classmethod
    def from_json(cls, text: str | None, *, timeout: int = 90, language: str = "it") -> Prefs:
        """Parse stored preferences; anything unreadable falls back to the defaults."""
        base = {"turn_timeout": timeout, "language": language}
        if not text:
            return cls(**base)  # type: ignore[arg-type]
        try:
            data = json.loads(text)
            if not isinstance(data, dict) or not data:
                return cls(**base)  # type: ignore[arg-type]
            return cls.model_validate({**base, **data})
        except (ValueError, ValidationError):
            return cls(**base)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class MenuOption:
    """One line of the settings menu: a key and the values it cycles through."""

    key: str  # TableOptions field, or "turn_timeout" / "language"
    values: tuple[str, ...]


_BOOL = ("on", "off")
MENU: tuple[MenuOption, ...] = (
    MenuOption("chiamata_obbligata", _BOOL),
    MenuOption("a_carichi", _BOOL),
    MenuOption("al_buio", _BOOL),
    MenuOption("monte", _BOOL),
    MenuOption("in_mano", _BOOL),
    MenuOption("follow_suit", _BOOL),
    MenuOption("tie_goes_to_caller", _BOOL),
    MenuOption("cappotto", ("double", "off")),
    MenuOption("winners", ("top", "seed000")),
    MenuOption(
        "match_end",
        ("target:11", "target:7", "target:5", "target:21", "hands:1", "hands:2", "hands:5",
         "hands:10"),
    ),
    MenuOption("deck_style", tuple(s.value for s in DeckStyle)),
    MenuOption("direction", ("antiorario", "orario")),
    MenuOption("turn_timeout", ("90", "60", "30", "180", "300", "0")),
    MenuOption("language", ("it", "en")),
)


def current_value(prefs: Prefs, key: str) -> str:
    if key == "turn_timeout":
        return str(prefs.turn_timeout)
    if key == "language":
        return prefs.language
    value = getattr(prefs.options, key)
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value.value if isinstance(value, DeckStyle) else value)


def cycle(prefs: Prefs, index: int) -> Prefs:
    """The preferences with menu option ``index`` moved to its next value."""
    option = MENU[index]
    values = option.values
    now = current_value(prefs, option.key)
    nxt = values[(values.index(now) + 1) % len(values)] if now in values else values[0]
    return with_value(prefs, option.key, nxt)


def with_value(prefs: Prefs, key: str, value: str) -> Prefs:
    if key == "turn_timeout":
        return prefs.model_copy(update={"turn_timeout": int(value)})
    if key == "language":
        return prefs.model_copy(update={"language": value})
    data = prefs.options.model_dump()
    field = TableOptions.model_fields[key]
    data[key] = (value == "on") if field.annotation is bool else value
    return prefs.model_copy(update={"options": TableOptions.model_validate(data)})
