"""The typed UI state of a game: which Telegram messages show it, and how far they got.

Stored as a JSON object in ``games.ui_json`` (the keys are this module's business only,
kept compatible with older databases). Every write is a *patch* of some fields
(:func:`ui_patch`), merged atomically by :meth:`bot.service.GameService.save_ui`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from bot.i18n import LANGUAGES
from bot.prefs import Prefs
from bot.service import match_prefs
from storage import FinishedGameRow, GameRow, SeatRow

#: Field name -> key in the stored JSON (short keys of the first versions kept).
_KEYS = {"drawn": "rv"}


@dataclass(frozen=True, slots=True)
class UiState:
    #: Display name of who opened the lobby.
    creator: str = "?"
    #: The lobby message, and the chat it was sent to (a migrated group changes id).
    lobby: int | None = None
    lobby_chat: int | None = None
    #: The table message of the current smazzata, its chat and the smazzata it shows.
    table: int | None = None
    table_chat: int | None = None
    table_smz: int = 0
    #: Seat -> message id of the hand in that player's chat.
    hands: Mapping[int, int] = field(default_factory=dict)
    #: Smazzata results already posted; whether the final scores were.
    scored: int = 0
    over: bool = False
    #: The last version whose messages were *delivered* (a restart redraws the others).
    drawn: int | None = None

    @classmethod
    def parse(cls, text: str | None) -> UiState:
        """Lenient: a malformed value is left at its default (never crash a game)."""
        try:
            data = json.loads(text or "{}")
        except ValueError:
            data = {}
        if not isinstance(data, dict):
            data = {}
        values: dict[str, Any] = {}
        for f in fields(cls):
            raw = data.get(_KEYS.get(f.name, f.name))
            if raw is None:
                continue
            try:
                values[f.name] = _parse_value(f.name, raw)
            except (TypeError, ValueError, AttributeError):
                continue
        return cls(**values)

    def merged(self, changes: Mapping[str, Any]) -> UiState:
        """This state with the fields of ``changes`` (field names; None = default)."""
        defaults = UiState()
        return replace(self, **{
            name: getattr(defaults, name) if value is None else value
            for name, value in changes.items()
        })


def _parse_value(name: str, raw: Any) -> Any:
    if name == "creator":
        return str(raw)
    if name == "hands":
        return {int(k): int(v) for k, v in dict(raw).items()}
    if name == "over":
        return bool(raw)
    return int(raw)


def ui_patch(changes: Mapping[str, Any]) -> dict[str, Any]:
    """Field changes -> the JSON patch to store (None deletes the key)."""
    names = {f.name for f in fields(UiState)}
    patch: dict[str, Any] = {}
    for name, value in changes.items():
        if name not in names:
            raise TypeError(f"unknown UI field {name!r}")
        if name == "hands" and value is not None:
            value = {str(seat): int(mid) for seat, mid in value.items()} or None
        elif name == "over":
            value = 1 if value else None
        patch[_KEYS.get(name, name)] = value
    return patch


def ui_of(row: GameRow | FinishedGameRow) -> UiState:
    return UiState.parse(row.ui_json)


def prefs_of(row: GameRow) -> Prefs:
    """The match's own settings (fixed when it started), not the chat's current ones."""
    return match_prefs(row)


def seat_language(seat: SeatRow, group_lang: str) -> str:
    """Private messages: the player's Telegram language when supported, else the chat's."""
    code = (seat.language_code or "").split("-")[0].lower()
    return code if code in LANGUAGES else group_lang
