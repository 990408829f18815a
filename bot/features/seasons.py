"""Seasons (issue 48): ``/classifica`` shows the current season of the chat's points table,
``/classifica sempre`` the table of all time; when a season has ended, the first message
of the next game in that group (its lobby) starts with the last season's podium.

A season is a calendar month by default; a group admin chooses month, quarter, year or
none (``/impostazioni``: ``season``; none: ``/classifica`` is the table of all time). Its
boundaries are midnight in :data:`SEASON_ZONE` (Europe/Rome, whatever the server's zone:
what Italian players expect; a match played at 00:30 on the 1st in Rome counts in the new
month). The season's table is read from the stored results (``smazzata_results``'
``created_at``, the finished matches' ``finished_at``): nothing more is written per move,
and a change of the setting applies to past games too. Only chiamata's points table has
seasons; plain Briscola's standings (``/classifica briscola``) are of all time.

A person replaced by a computer in the middle of a match (they left, or blocked the bot)
counts in the table of all time for the smazzate played before, not in the season's
(its seats name the computer for the whole match).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

from babel.dates import format_date

from bot.features.lobby_message import PODIUM
from bot.i18n import tr
from bot.prefs import Prefs, is_private_chat
from bot.render import texts
from bot.runtime import Runtime
from storage import Executor, social

log = logging.getLogger(__name__)

#: Where the seasons begin and end (midnight of their first day).
SEASON_ZONE = ZoneInfo("Europe/Rome")
MEDALS = ("🥇", "🥈", "🥉")


@dataclass(frozen=True, slots=True)
class Season:
    kind: str
    #: The first day's year and month (a quarter's first month; January for a year).
    year: int
    month: int

    @property
    def key(self) -> str:
        """Stable name, e.g. ``month:2026-11``, ``quarter:2026-10``, ``year:2026-01``."""
        return f"{self.kind}:{self.year:04d}-{self.month:02d}"

    def _months(self) -> int:
        return {"month": 1, "quarter": 3, "year": 12}[self.kind]

    @property
    def start(self) -> int:
        """Unix seconds of its first instant."""
        return int(datetime(self.year, self.month, 1, tzinfo=SEASON_ZONE).timestamp())

    @property
    def end(self) -> int:
        """Unix seconds of the next season's first instant."""
        return self.following().start

    def following(self) -> Season:
        index = self.year * 12 + self.month - 1 + self._months()
        return Season(self.kind, index // 12, index % 12 + 1)

    def previous(self) -> Season:
        index = self.year * 12 + self.month - 1 - self._months()
        return Season(self.kind, index // 12, index % 12 + 1)

    def label(self, lang: str) -> str:
        """"novembre 2026", "4º trimestre 2026", "2026" (English: "November 2026"...)."""
        if self.kind == "quarter":
            return tr(lang, "season.quarter", q=(self.month - 1) // 3 + 1, year=self.year)
        if self.kind == "year":
            return tr(lang, "season.year", year=self.year)
        month = format_date(datetime(self.year, self.month, 1), "LLLL yyyy", locale=lang)
        return tr(lang, "season.month", month=month)


def season_at(kind: str, when: float) -> Season | None:
    """The season of kind ``kind`` holding the unix time ``when`` (None: no seasons)."""
    if kind not in ("month", "quarter", "year"):
        return None
    local = datetime.fromtimestamp(when, SEASON_ZONE)
    month = 1 if kind == "year" else local.month - (local.month - 1) % 3 \
        if kind == "quarter" else local.month
    return Season(kind, local.year, month)


#: A line of the table: (name, total, matches, smazzate, as chiamante, won as chiamante).
Line = tuple[str, int, int, int, int, int]


def standings(smazzate: Sequence[social.SeasonSmazzataRow],
              matches: Sequence[social.SeasonMatchRow]) -> list[Line]:
    """The season's points table from its stored results: points (each smazzata's change
    of the person's seat), chiamata matches finished, smazzate, calls and calls made; by
    points, then name."""
    @dataclass
    class Tally:
        name: str
        total: int = 0
        matches: int = 0
        smazzate: int = 0
        calls: int = 0
        call_wins: int = 0

    people: dict[int, Tally] = {}
    for row in smazzate:
        try:
            result = json.loads(row.result_json)
            if result.get("kind", "scored") != "scored":
                continue  # plain Briscola: its own standings
            delta = int(result["deltas"][row.seat])
        except (ValueError, KeyError, IndexError, TypeError):
            log.warning("game %s: unreadable result skipped in a season's table", row.game_id)
            continue
        tally = people.setdefault(row.user_id, Tally(row.display_name))
        tally.total += delta
        tally.smazzate += 1
        if result.get("chiamante") == row.seat:
            tally.calls += 1
            tally.call_wins += bool(result.get("won"))
    for match in matches:
        if match.user_id in people and Prefs.from_json(match.settings_json).options.game \
                == "chiamata":
            people[match.user_id].matches += 1
    ordered = sorted(people.values(), key=lambda t: (-t.total, t.name.lower()))
    return [(t.name, t.total, t.matches, t.smazzate, t.calls, t.call_wins) for t in ordered]


async def season_table(ex: Executor, chat_id: int, season: Season) -> list[Line]:
    smazzate = await social.season_smazzate(ex, chat_id, season.start, season.end)
    matches = await social.season_matches(ex, chat_id, season.start, season.end)
    return standings(smazzate, matches)


def board_text(lang: str, season: Season, lines: Sequence[Line], *, briscola_hint: bool) -> str:
    """``/classifica``: the season's table, and how to see the table of all time."""
    label = texts.esc(season.label(lang))
    hint = [tr(lang, "board.season_hint"), tr(lang, "board.rating_hint")]
    if briscola_hint:
        hint.append(tr(lang, "board.briscola_hint"))
    if not lines:
        return "\n".join([tr(lang, "board.season_empty", season=label), "", *hint])
    table = texts.leaderboard_text(lang, lines)
    body = table.partition("\n")[2]  # (its own head: the season's instead)
    return texts.clip("\n".join([tr(lang, "board.season_head", season=label), body, "",
                                 *hint]))


def podium_text(lang: str, season: Season, lines: Sequence[Line]) -> str:
    """The last season's podium (the first three places, ties sharing a medal)."""
    out = [tr(lang, "podium.head", season=texts.esc(season.label(lang)))]
    place, previous = 0, None
    for index, (name, total, *_rest) in enumerate(lines[:3]):
        if total != previous:
            place, previous = index, total
        out.append(tr(lang, "podium.line", medal=MEDALS[place], name=texts.esc(name),
                      total=texts.signed(total)))
    return "\n".join(out)


async def podium_for(ex: Executor, chat_id: int, prefs: Prefs, now: float) -> str | None:
    """The podium the group's next game starts with: the season before the current one,
    once (claimed in the database), if anyone scored in it; else None."""
    current = season_at(prefs.season, now)
    if current is None or is_private_chat(chat_id):
        return None
    last = current.previous()
    lines = await season_table(ex, chat_id, last)
    if not lines or not await social.claim_podium(ex, chat_id, last.key):
        return None
    log.info("chat %s: the podium of season %s is shown", chat_id, last.key)
    return podium_text(prefs.language, last, lines)


async def open_with_podium(rt: Runtime, game_id: int, chat_id: int) -> None:
    """A group's new lobby: it starts with the last season's podium when that season
    ended since the group's last game (see :func:`podium_for`)."""
    text = await podium_for(rt.db, chat_id, await rt.chat_prefs(chat_id), rt.db.now())
    if text is not None:
        await rt.service.save_ui(game_id, {PODIUM: text})
