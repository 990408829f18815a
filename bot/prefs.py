"""Per-chat preferences: table options plus bot-only settings, and the settings menu model.

Stored as JSON in ``chats.settings_json`` and copied into ``games.settings_json`` when a
lobby opens (changes apply from the next match).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from game import DeckStyle, TableOptions
from game.options import Ruleset


def is_private_chat(chat_id: int) -> bool:
    """Telegram's private chats have the user's (positive) id, groups a negative one: a game
    in a private chat is a person alone against computers."""
    return chat_id > 0


class Prefs(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    options: TableOptions = Field(default_factory=TableOptions)
    turn_timeout: int = Field(default=90, ge=0, le=86400)
    language: str = "it"
    #: The scoreboard's season (issue 48, bot/features/seasons.py): a calendar month,
    #: quarter or year (Europe/Rome), or none (the table of all time only).
    season: Literal["month", "quarter", "year", "none"] = "month"

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
    # issue 12, after the older lines so that their indexes (in callback data) keep
    # their meaning; shown first (MENU_ORDER)
    MenuOption("game", ("chiamata", "briscola")),
    MenuOption("players", ("5", "4", "6", "2", "3")),
    MenuOption("a_punti", _BOOL),
    MenuOption("briscola_match", ("wins:2", "wins:1", "wins:3", "rounds:1", "rounds:3",
                                  "rounds:5")),
    # issue 48: the scoreboard's season (a bot setting, like the language)
    MenuOption("season", ("month", "quarter", "year", "none")),
)
#: The order the menu shows its lines in: the game and table size first.
_SHOWN_FIRST = ("game", "players", "a_punti", "briscola_match")
MENU_ORDER: tuple[int, ...] = tuple(
    sorted(range(len(MENU)), key=lambda i: (MENU[i].key not in _SHOWN_FIRST, i))
)


#: Settings of the bot, not of the game (``Prefs`` fields beside ``options``).
BOT_ONLY = frozenset({"language", "season"})


def current_value(prefs: Prefs, key: str) -> str:
    if key == "turn_timeout":
        return str(prefs.turn_timeout)
    if key in BOT_ONLY:
        return str(getattr(prefs, key))
    value = getattr(prefs.options, key)
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value.value if isinstance(value, DeckStyle) else value)


#: Options that mean something in one game only (the menu hides the others' lines).
CHIAMATA_ONLY = frozenset({
    "chiamata_obbligata", "a_carichi", "al_buio", "monte", "in_mano", "follow_suit",
    "tie_goes_to_caller", "cappotto", "winners", "match_end", "a_punti",
})
BRISCOLA_ONLY = frozenset({"briscola_match"})


def applies(prefs: Prefs, key: str) -> bool:
    """Whether menu option ``key`` matters for the chosen game."""
    if prefs.options.game == "briscola":
        return key not in CHIAMATA_ONLY
    return key not in BRISCOLA_ONLY


def seat_count(options: TableOptions) -> int:
    """Seats people (or computers) take in the lobby: il morto's is nobody's (R86)."""
    return Ruleset.for_options(options).humans


def cycle(prefs: Prefs, index: int) -> Prefs:
    """The preferences with menu option ``index`` moved to its next value that the
    options accept (e.g. ``players`` skips 2 and 3 for chiamata)."""
    option = MENU[index]
    values = option.values
    now = current_value(prefs, option.key)
    start = values.index(now) + 1 if now in values else 0
    for step in range(len(values)):
        try:
            return with_value(prefs, option.key, values[(start + step) % len(values)])
        except ValidationError:
            continue
    return prefs


#: /nuova arguments (Italian and English) -> option changes. Numbers are the players.
_NEW_WORDS: dict[str, dict[str, str]] = {
    "chiamata": {"game": "chiamata", "a_punti": "off"},
    "called": {"game": "chiamata", "a_punti": "off"},
    "briscola": {"game": "briscola"},
    "plain": {"game": "briscola"},
    "punti": {"game": "chiamata", "a_punti": "on"},
    "points": {"game": "chiamata", "a_punti": "on"},
    "morto": {"game": "chiamata", "players": "4"},
    "dummy": {"game": "chiamata", "players": "4"},
}
_NEW_FILLERS = frozenset({"a", "al", "con", "il", "in", "da", "with", "the", "for", "of",
                          "giocatori", "players"})


def new_game_prefs(prefs: Prefs, args: list[str]) -> Prefs | None:
    """The chat's preferences with the game chosen by ``/nuova`` arguments, or None if
    they are not understood (e.g. ``briscola 2``, ``chiamata 4``, ``a punti 6``)."""
    changes: dict[str, str] = {}
    for word in (a.strip().lower() for a in args):
        if word in _NEW_FILLERS:
            continue
        if word.isdigit() and len(word) == 1:
            changes["players"] = word
        elif word in _NEW_WORDS:
            changes.update(_NEW_WORDS[word])
        else:
            return None
    try:
        result = prefs
        if "game" in changes:
            result = with_value(result, "game", changes.pop("game"))
        for key, value in changes.items():
            result = with_value(result, key, value)
    except (ValidationError, ValueError):
        return None
    return result


def with_value(prefs: Prefs, key: str, value: str) -> Prefs:
    if key == "turn_timeout":
        return prefs.model_copy(update={"turn_timeout": int(value)})
    if key in BOT_ONLY:
        return prefs.model_validate({**prefs.model_dump(), key: value})
    data = prefs.options.model_dump()
    field = TableOptions.model_fields[key]
    if field.annotation is bool:
        data[key] = value == "on"
    elif field.annotation is int:
        data[key] = int(value)
    else:
        data[key] = value
    if key == "game" and value != prefs.options.game:
        del data["players"]  # each game has its own default table size (§1)
        if value == "chiamata":
            data["players"] = 5
    return prefs.model_copy(update={"options": TableOptions.model_validate(data)})
