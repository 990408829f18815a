"""JSON persistence of a whole game with pydantic: options, history, action log, RNG state.

Restoring folds the recorded history again (no rule checks, no randomness) and puts the
RNG back where it was, so the restored game continues exactly as the original would.
"""

from __future__ import annotations

import random
from typing import Any

from pydantic import BaseModel, ConfigDict

from game.engine import Game
from game.events import (
    AuctionWon,
    BidMade,
    CardPlayed,
    Dealt,
    DealVoided,
    Event,
    MatchOver,
    MatchStarted,
    MonteDeclared,
    PartnerRevealed,
    Passed,
    SmazzataScored,
    SuitDeclared,
    TrickWon,
    TrumpRevealed,
)
from game.options import TableOptions

FORMAT_VERSION = 1

EVENT_TYPES: dict[str, type[Any]] = {
    cls._field_defaults["kind"]: cls
    for cls in (
        MatchStarted,
        Dealt,
        MonteDeclared,
        Passed,
        BidMade,
        AuctionWon,
        DealVoided,
        SuitDeclared,
        TrumpRevealed,
        CardPlayed,
        PartnerRevealed,
        TrickWon,
        SmazzataScored,
        MatchOver,
    )
}


class Snapshot(BaseModel):
    """The stored form of a game."""

    model_config = ConfigDict(extra="forbid")

    format: int = FORMAT_VERSION
    options: TableOptions
    rng_state: tuple[int, tuple[int, ...], float | None]
    events: list[dict[str, Any]]
    actions: list[tuple[int, str]]


def event_to_dict(event: Event) -> dict[str, Any]:
    data = event._asdict()
    if isinstance(event, MatchStarted):
        data["options"] = event.options.model_dump(mode="json")
    return data


def event_from_dict(data: dict[str, Any]) -> Event:
    """Rebuild an event; raises ``ValueError`` on an unknown kind or bad fields."""
    cls = EVENT_TYPES.get(data.get("kind", ""))
    if cls is None:
        raise ValueError(f"unknown event kind {data.get('kind')!r}")
    fields = dict(data)
    unknown = set(fields) - set(cls._fields)
    if unknown:
        raise ValueError(f"unknown fields {sorted(unknown)} for {cls.__name__}")
    for name, value in fields.items():
        if isinstance(value, list):
            fields[name] = tuple(tuple(v) if isinstance(v, list) else v for v in value)
    if cls is MatchStarted:
        fields["options"] = TableOptions.model_validate(fields["options"])
    event: Event = cls(**fields)
    return event


def dump_game(game: Game) -> str:
    snapshot = Snapshot(
        options=game.options,
        rng_state=game.rng.getstate(),
        events=[event_to_dict(e) for e in game.history],
        actions=game.actions,
    )
    return snapshot.model_dump_json()


def load_game(text: str) -> Game:
    snapshot = Snapshot.model_validate_json(text)
    if snapshot.format != FORMAT_VERSION:
        raise ValueError(f"unknown snapshot format {snapshot.format}")
    rng = random.Random()
    rng.setstate(snapshot.rng_state)
    events = [event_from_dict(e) for e in snapshot.events]
    return Game.from_history(snapshot.options, events, snapshot.actions, rng)
