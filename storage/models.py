"""Typed rows returned (and accepted) by :mod:`storage.repo`.

Plain frozen dataclasses: ints, strings and JSON text only – nothing from Telegram or the
game engine.  Timestamps are integer unix seconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from .db import Row

__all__ = [
    "ACTIVE_STATUSES",
    "ACTORS",
    "GAME_STATUSES",
    "SEAT_KINDS",
    "ActionRow",
    "Actor",
    "ChatMigrationResult",
    "ChatPaceRow",
    "ChatRow",
    "FinishedGameRow",
    "GameRow",
    "GameStatus",
    "PlayedSmazzataRow",
    "ScoreDelta",
    "ScoreRow",
    "SeatKind",
    "SeatRow",
    "SmazzataResultRow",
    "UserRow",
]

GameStatus = Literal["lobby", "playing", "finished", "cancelled"]
SeatKind = Literal["human", "computer"]
Actor = Literal["human", "computer", "timeout", "system"]

GAME_STATUSES: tuple[GameStatus, ...] = ("lobby", "playing", "finished", "cancelled")
ACTIVE_STATUSES: tuple[GameStatus, ...] = ("lobby", "playing")
SEAT_KINDS: tuple[SeatKind, ...] = ("human", "computer")
ACTORS: tuple[Actor, ...] = ("human", "computer", "timeout", "system")


@dataclass(frozen=True, slots=True)
class ChatRow:
    """Per-chat preferences for the next matches."""

    chat_id: int
    language: str | None
    settings_json: str
    updated_at: int

    @classmethod
    def from_row(cls, r: Row) -> ChatRow:
        return cls(r["chat_id"], r["language"], r["settings_json"], r["updated_at"])


@dataclass(frozen=True, slots=True)
class ChatPaceRow:
    """The pacing of the bot's calls to a chat, kept across restarts (unix seconds, not
    integers: the slots are fractions of a second apart): the next slot of its even
    pace, the calls of its last rolling window (a JSON array, groups) and when the
    process wrote it."""

    chat_id: int
    next_at: float
    sent_json: str
    saved_at: float

    @classmethod
    def from_row(cls, r: Row) -> ChatPaceRow:
        return cls(r["chat_id"], float(r["next_at"]), r["sent_json"], float(r["saved_at"]))


@dataclass(frozen=True, slots=True)
class UserRow:
    """What we know about a Telegram user; ``private_ok`` = pressed Start, not blocked."""

    user_id: int
    first_name: str
    last_name: str | None
    username: str | None
    language_code: str | None
    private_ok: bool
    updated_at: int

    @classmethod
    def from_row(cls, r: Row) -> UserRow:
        return cls(
            r["user_id"],
            r["first_name"],
            r["last_name"],
            r["username"],
            r["language_code"],
            bool(r["private_ok"]),
            r["updated_at"],
        )


@dataclass(frozen=True, slots=True)
class SeatRow:
    """One seat at a table.  Also the input type of ``set_seats``/``add_seat``.

    A human seat has a ``user_id``; a computer seat has none.  ``away`` marks a human
    whose turns a computer plays while they are absent.
    """

    seat: int
    kind: SeatKind
    user_id: int | None
    display_name: str
    language_code: str | None = None
    computer_level: str | None = None
    afk_strikes: int = 0
    away: bool = False

    @classmethod
    def human(
        cls, seat: int, user_id: int, display_name: str, language_code: str | None = None
    ) -> SeatRow:
        """A human seat."""
        return cls(seat, "human", user_id, display_name, language_code)

    @classmethod
    def computer(
        cls,
        seat: int,
        display_name: str,
        computer_level: str | None = None,
        language_code: str | None = None,
    ) -> SeatRow:
        """A computer seat."""
        return cls(seat, "computer", None, display_name, language_code, computer_level)

    @property
    def is_human(self) -> bool:
        return self.kind == "human"

    def __post_init__(self) -> None:
        if self.kind not in SEAT_KINDS:
            raise ValueError(f"bad seat kind {self.kind!r}")
        if (self.kind == "human") != (self.user_id is not None):
            raise ValueError("a human seat needs a user_id and a computer seat must not have one")
        if self.seat < 0:
            raise ValueError(f"seat must be >= 0, got {self.seat}")


@dataclass(frozen=True, slots=True)
class GameRow:
    """A game with its seats (ordered by seat number)."""

    game_id: int
    chat_id: int
    thread_id: int
    status: GameStatus
    creator_id: int | None
    settings_json: str
    seed: int | None
    version: int
    snapshot_json: str | None
    ui_json: str
    turn_deadline: float | None
    created_at: int
    updated_at: int
    finished_at: int | None
    seats: tuple[SeatRow, ...] = field(default=())

    @property
    def is_active(self) -> bool:
        """Lobby or playing."""
        return self.status in ACTIVE_STATUSES

    def seat_of(self, user_id: int) -> SeatRow | None:
        """The seat of a user at this table, or None."""
        for s in self.seats:
            if s.user_id == user_id:
                return s
        return None

    def seat(self, number: int) -> SeatRow | None:
        """The seat with this number, or None if empty."""
        for s in self.seats:
            if s.seat == number:
                return s
        return None


@dataclass(frozen=True, slots=True)
class ActionRow:
    """One entry of a game's action log; ``seq`` is the game version after it."""

    game_id: int
    seq: int
    seat: int | None
    code: str
    actor: Actor
    user_id: int | None
    created_at: int

    @classmethod
    def from_row(cls, r: Row) -> ActionRow:
        return cls(
            r["game_id"], r["seq"], r["seat"], r["code"], r["actor"], r["user_id"], r["created_at"]
        )


@dataclass(frozen=True, slots=True)
class ScoreRow:
    """A leaderboard line."""

    chat_id: int
    user_id: int
    display_name: str
    total: int
    matches: int
    matches_won: int
    smazzate: int
    smazzate_won: int
    chiamante_count: int
    chiamante_wins: int
    updated_at: int

    @classmethod
    def from_row(cls, r: Row) -> ScoreRow:
        return cls(
            r["chat_id"],
            r["user_id"],
            r["display_name"],
            r["total"],
            r["matches"],
            r["matches_won"],
            r["smazzate"],
            r["smazzate_won"],
            r["chiamante_count"],
            r["chiamante_wins"],
            r["updated_at"],
        )


@dataclass(frozen=True, slots=True)
class ScoreDelta:
    """Score change of one human for one finished smazzata.

    ``points`` is added to the total; ``won``: the player's side won the smazzata;
    ``chiamante``: the player was the caller (chiamante) of this smazzata.
    """

    user_id: int
    display_name: str
    points: int
    won: bool = False
    chiamante: bool = False


@dataclass(frozen=True, slots=True)
class BriscolaLine:
    """Plain Briscola: what one side of people adds to the chat's standings.

    ``side_key`` names the side (the user ids of its people joined by ``+``); the counts
    are added to the stored line (0 or 1 each, for one smazzata or one match)."""

    players: int
    side_key: str
    display_name: str
    smazzate: int = 0
    smazzate_won: int = 0
    matches: int = 0
    matches_won: int = 0


@dataclass(frozen=True, slots=True)
class BriscolaScoreRow:
    """A line of plain Briscola's standings."""

    chat_id: int
    players: int
    side_key: str
    display_name: str
    smazzate: int
    smazzate_won: int
    matches: int
    matches_won: int


@dataclass(frozen=True, slots=True)
class FinishedGameRow:
    """A finished game's version and UI state, without its snapshot or seats."""

    game_id: int
    chat_id: int
    version: int
    ui_json: str
    finished_at: int


@dataclass(frozen=True, slots=True)
class SmazzataResultRow:
    """Stored result of one smazzata (hand) of a game."""

    game_id: int
    smazzata_index: int
    result_json: str
    created_at: int


@dataclass(frozen=True, slots=True)
class PlayedSmazzataRow:
    """One scored smazzata of a game where a user sits as a human (their statistics).

    ``game_status``/``settings_json`` belong to the game (a finished match counts as
    played; its options say who won); ``seat`` is the user's seat in it."""

    game_id: int
    chat_id: int
    game_status: GameStatus
    settings_json: str
    seat: int
    smazzata_index: int
    result_json: str


@dataclass(frozen=True, slots=True)
class ChatMigrationResult:
    """What :func:`storage.repo.migrate_chat` did."""

    settings_moved: bool = False
    games_moved: int = 0
    games_cancelled: tuple[int, ...] = ()
    scores_moved: int = 0
    scores_merged: int = 0
