"""JSON persistence of a whole game with pydantic: options, history, action log, RNG state.

Restoring folds the recorded history again (no rule checks, no randomness) and puts the
RNG back where it was, so the restored game continues exactly as the original would.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, get_args

from pydantic import BaseModel, ConfigDict

from game.events import Event, MatchStarted
from game.options import TableOptions

FORMAT_VERSION = 2

#: Every event class by its ``kind``, straight from the ``Event`` union.
EVENT_TYPES: dict[str, type[Any]] = {cls._field_defaults["kind"]: cls for cls in get_args(Event)}


class Snapshot(BaseModel):
    """The stored form of a game."""

    model_config = ConfigDict(extra="forbid")

    format: int = FORMAT_VERSION
    options: TableOptions
    rng_state: tuple[int, tuple[int, ...], float | None]
    #: Each event as ``[kind, field, field, …]`` in field order (compact and fast).
    events: list[list[Any]]
    actions: list[tuple[int, str]]


def event_to_list(event: Event) -> list[Any]:
    """``[kind, *fields]`` with the ``kind`` field itself left out of the fields."""
    if isinstance(event, MatchStarted):
        return [event.kind, event.options.model_dump(mode="json"), event.first_dealer]
    return [event[-1], *event[:-1]]


def event_from_list(data: list[Any]) -> Event:
    """Rebuild an event; raises ``ValueError`` on an unknown kind or a wrong field count."""
    if not data or not isinstance(data[0], str) or data[0] not in EVENT_TYPES:
        raise ValueError(f"unknown event {str(data)[:60]}")
    cls = EVENT_TYPES[data[0]]
    values = data[1:]
    wanted = len(cls._fields) - 1
    # Fields added later (with a default, just before ``kind``) may be missing in older
    # snapshots: they take their default.
    missing = cls._fields[len(values) : wanted]
    if all(name in cls._field_defaults for name in missing):
        values = [*values, *(cls._field_defaults[name] for name in missing)]
    if len(values) != wanted:
        raise ValueError(f"{cls.__name__} wants {len(cls._fields) - 1} fields, got {len(values)}")
    if cls is MatchStarted:
        values[0] = TableOptions.model_validate(values[0])
    else:
        values = [
            tuple(tuple(v) if isinstance(v, list) else v for v in value)
            if isinstance(value, list)
            else value
            for value in values
        ]
    event: Event = cls(*values)
    return event


def dump_snapshot(
    options: TableOptions,
    rng_state: tuple[Any, ...],
    history: Sequence[Event],
    actions: list[tuple[int, str]],
) -> str:
    """The stored form of a game (:meth:`game.engine.Game.to_json`)."""
    # model_construct: the fields come from a live game and are valid by construction;
    # validating 600 events again would cost several milliseconds per stored action.
    snapshot = Snapshot.model_construct(
        format=FORMAT_VERSION,
        options=options,
        rng_state=rng_state,
        events=[event_to_list(e) for e in history],
        actions=actions,
    )
    return snapshot.model_dump_json()


def load_snapshot(
    text: str,
) -> tuple[TableOptions, random.Random, list[Event], list[tuple[int, str]]]:
    """What :func:`dump_snapshot` stored: the options, the RNG where it was, the history
    and the actions (``ValueError`` on anything else); the engine folds them again."""
    snapshot = Snapshot.model_validate_json(text)
    if snapshot.format != FORMAT_VERSION:
        raise ValueError(f"unknown snapshot format {snapshot.format}")
    rng = random.Random()
    rng.setstate(snapshot.rng_state)
    events = [event_from_list(e) for e in snapshot.events]
    return snapshot.options, rng, events, snapshot.actions
