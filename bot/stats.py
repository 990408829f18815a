"""A player's record (/statistiche), computed from the stored smazzata results.

Pure: :func:`player_stats` folds the rows of :func:`storage.repo.played_smazzate` (each
smazzata of each game where the player sat as a human) into three :class:`Record`\\ s:
every chat, the chat where the command was typed (a group), and the matches played alone
against computers (a private chat: Telegram's private chat ids are positive, groups'
negative). Nothing is counted per move: the results are already stored by the service.

Definitions, the same as the chat leaderboard's: a smazzata is *won* by the seats of the
winning side; a *match* counts once it is finished, and is won by the seats that
:func:`game.scoring.match_winners` names for the final totals and the match's options
(il morto's seat, with four, ranks nowhere).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field

from bot.prefs import Prefs, is_private_chat
from game import TableOptions
from game.scoring import match_winners
from storage import PlayedSmazzataRow

#: Contract kinds of the core (``SmazzataScored.contract``), in display order.
CONTRACT_KINDS = ("rank", "two", "obbligato", "carichi", "punti")
TOTAL_CARD_POINTS = 120


@dataclass
class Tally:
    """How many times, and how many of them won."""

    played: int = 0
    won: int = 0

    def add(self, won: bool) -> None:
        self.played += 1
        self.won += int(won)

    @property
    def lost(self) -> int:
        return self.played - self.won


@dataclass
class Record:
    """One player's figures over a set of games."""

    matches: Tally = field(default_factory=Tally)
    smazzate: Tally = field(default_factory=Tally)
    chiamante: Tally = field(default_factory=Tally)
    #: contract kind -> made/failed as chiamante (kinds never played are absent)
    contracts: dict[str, Tally] = field(default_factory=dict)
    in_mano: Tally = field(default_factory=Tally)
    socio: Tally = field(default_factory=Tally)
    compare: Tally = field(default_factory=Tally)
    #: smazzate where the player's side took all 120 card points / none of them
    cappotti_made: int = 0
    cappotti_suffered: int = 0
    #: sums over the smazzate: score change, card points taken by the player's side
    points: int = 0
    card_points: int = 0

    @property
    def average_points(self) -> float | None:
        return self.points / self.smazzate.played if self.smazzate.played else None

    @property
    def average_card_points(self) -> float | None:
        return self.card_points / self.smazzate.played if self.smazzate.played else None

    def add_smazzata(self, seat: int, result: dict[str, object]) -> None:
        chiamante, socio = result["chiamante"], result["socio"]
        calling = seat in (chiamante, socio)
        won = calling == bool(result["won"])
        self.smazzate.add(won)
        if seat == chiamante:
            self.chiamante.add(won)
            self.contracts.setdefault(str(result["contract"]), Tally()).add(won)
            if result["in_mano"]:
                self.in_mano.add(won)
        elif seat == socio:
            self.socio.add(won)
        else:
            self.compare.add(won)
        caller_points = int(result["caller_points"])  # type: ignore[call-overload]
        side_points = caller_points if calling else TOTAL_CARD_POINTS - caller_points
        self.card_points += side_points
        if side_points == TOTAL_CARD_POINTS:
            self.cappotti_made += 1
        elif side_points == 0:
            self.cappotti_suffered += 1
        deltas = result["deltas"]
        assert isinstance(deltas, list)
        self.points += int(deltas[seat])


@dataclass(frozen=True)
class PlayerStats:
    overall: Record
    #: the group the command was typed in (None in a private chat)
    here: Record | None
    solo: Record


def player_stats(rows: Iterable[PlayedSmazzataRow], group_id: int | None) -> PlayerStats:
    """Fold the player's stored results (ordered by game, then smazzata)."""
    overall, here, solo = Record(), Record(), Record()
    last: dict[int, tuple[PlayedSmazzataRow, dict[str, object]]] = {}
    for row in rows:
        result = json.loads(row.result_json)
        if result.get("kind") == "briscola_scored":
            continue  # plain Briscola keeps its own standings (/classifica briscola)
        for record in _records_of(row.chat_id, group_id, overall, here, solo):
            record.add_smazzata(row.seat, result)
        last[row.game_id] = (row, result)
    for row, result in last.values():
        if row.game_status != "finished":
            continue
        totals = result["totals"]
        assert isinstance(totals, list)
        options = Prefs.from_json(row.settings_json).options
        won = row.seat in match_winners(totals, options.winners, _morto_seat(options, result))
        for record in _records_of(row.chat_id, group_id, overall, here, solo):
            record.matches.add(won)
    return PlayerStats(overall, here if group_id is not None else None, solo)


def _morto_seat(options: TableOptions, result: dict[str, object]) -> int | None:
    """Il morto's seat in a chiamata with four (§12), which ranks nowhere (R93).

    A result names no morto, but its deltas do: il morto's share is discarded (R92), so it
    is the one seat scored 0, while every person wins or loses at least one unit (R73)."""
    if options.game != "chiamata" or options.players != 4:
        return None
    deltas = result["deltas"]
    assert isinstance(deltas, list)
    return deltas.index(0)


def _records_of(
    chat_id: int, group_id: int | None, overall: Record, here: Record, solo: Record
) -> list[Record]:
    records = [overall]
    if chat_id == group_id:
        records.append(here)
    if is_private_chat(chat_id):
        records.append(solo)
    return records
