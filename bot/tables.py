"""Running tables: human actions, computer moves, turn timers and the game messages.

The UI is *reconciled* from the stored state after every change (:meth:`Tables.sync`):
the group table message shows ``view(None)``, each private message ``view(seat)``; new
smazzata -> new messages, otherwise edits through the coalescing :class:`Outbox`.
Message ids live in the game's ``ui_json`` so that edits in place survive restarts.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from telegram import Bot, InlineKeyboardMarkup
from telegram.error import TelegramError
from telegram.ext import Application, ContextTypes, Job

from bot import players
from bot.config import Settings
from bot.i18n import LANGUAGES, tr
from bot.outbox import Outbox
from bot.prefs import Prefs
from bot.render import keyboards as kb
from bot.render import texts
from bot.service import (
    AfkChange,
    Applied,
    GameService,
    Refused,
    match_prefs,
    names_of,
    result_from_json,
)
from game import Game
from game.events import (
    DealVoided,
    Event,
    MatchOver,
    MonteDeclared,
    SmazzataScored,
    TrickWon,
)
from storage import Actor, GameRow, SeatRow, repo

log = logging.getLogger(__name__)


def ui_of(row: GameRow) -> dict[str, Any]:
    try:
        data = json.loads(row.ui_json or "{}")
    except ValueError:
        data = {}
    return data if isinstance(data, dict) else {}


def prefs_of(row: GameRow) -> Prefs:
    """The match's own settings (fixed when it started), not the chat's current ones."""
    return match_prefs(row)


def seat_language(seat: SeatRow, group_lang: str) -> str:
    """Private messages: the player's Telegram language when supported, else the chat's."""
    code = (seat.language_code or "").split("-")[0].lower()
    return code if code in LANGUAGES else group_lang


class Tables:
    def __init__(self, app: Application[Any, Any, Any, Any, Any, Any], settings: Settings,
                 service: GameService, outbox: Outbox) -> None:
        self.app = app
        self.settings = settings
        self.service = service
        self.outbox = outbox
        self._drivers: dict[int, asyncio.Task[None]] = {}
        self._again: set[int] = set()
        self._sync_locks: defaultdict[int, asyncio.Lock] = defaultdict(asyncio.Lock)
        self._closing = False
        self.migration_lock = asyncio.Lock()
        #: Private messages last drawn with something to press (their edits are urgent).
        self._pressable: set[tuple[int, int]] = set()
        #: How long an edit of a private message that nobody can press may wait, so that
        #: several moves of the others become one edit (real seconds; tests scale it).
        self.private_lazy_seconds = 4.0

    @property
    def bot(self) -> Bot:
        bot: Bot = self.app.bot
        return bot

    @property
    def db(self) -> Any:
        return self.service.db

    # ------------------------------------------------------------------ human actions

    async def human_action(self, game_id: int, version: int, user_id: int, code: str) -> Applied:
        """Apply a button press of a player; raise :class:`Refused` (nothing changed).

        The caller answers the query, then renders with :meth:`after`."""
        async with self.service.lock(game_id):
            row, game = await self.service.load(game_id)
            seat = row.seat_of(user_id)
            if seat is None:
                raise Refused("alert.not_seated")
            if seat.away:
                raise Refused("alert.away")
            if version != row.version:
                raise Refused("alert.stale")
            if game.current_seat() != seat.seat and code != "M":
                raise Refused("alert.not_your_turn")
            applied = await self.service.apply(
                game_id, version, seat.seat, code, "human", user_id, afk="reset"
            )
        self.cancel_timers(game_id)
        return applied

    async def after(self, applied: Applied) -> None:
        """Render the change, then let computers move and timers run."""
        await self.sync(applied.row.game_id, applied.events)
        self.kick(applied.row.game_id)

    # ------------------------------------------------------------------ computer moves

    def kick(self, game_id: int) -> None:
        """Make sure the driver of this game runs (computer turns, timers)."""
        if self._closing:
            return
        task = self._drivers.get(game_id)
        if task is not None and not task.done():
            self._again.add(game_id)
            return
        self._drivers[game_id] = asyncio.create_task(self._drive(game_id), name=f"drive:{game_id}")

    async def _drive(self, game_id: int) -> None:
        try:
            while True:
                self._again.discard(game_id)
                moved = await self._computer_step(game_id)
                if moved:
                    continue
                if game_id not in self._again:
                    return
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("driver of game %s failed", game_id)

    async def _computer_step(self, game_id: int) -> bool:
        """If a computer (or an away human) is in turn, make one move. True if it moved."""
        row = await repo.get_game(self.db, game_id)
        if row is None or row.status != "playing":
            return False
        game = self.service.game_of(row)
        seat_no = game.current_seat()
        seat = None if seat_no is None else row.seat(seat_no)
        if seat is None or (seat.is_human and not seat.away):
            self.arm_timer(row, game)
            return False
        version = row.version
        if self.settings.computer_delay_seconds:
            await asyncio.sleep(self.settings.computer_delay_seconds)
        applied = await self.computer_move(game_id, version, seat.seat, "computer")
        if applied is None:
            return False
        await self.sync(game_id, applied.events)
        return True

    async def computer_move(
        self, game_id: int, version: int, seat_no: int, actor: Actor,
        afk: AfkChange | None = None,
    ) -> Applied | None:
        async with self.service.lock(game_id):
            row = await repo.get_game(self.db, game_id)
            if row is None or row.status != "playing" or row.version != version:
                return None
            game = self.service.game_of(row)
            if game.current_seat() != seat_no:
                return None
            seat = row.seat(seat_no)
            level = (seat.computer_level if seat else None) or self.settings.computer_level
            # A "forte" decision is up to ~0.3 s of CPU: keep it off the event loop.
            action = await asyncio.to_thread(
                players.choose, level, game_id * 100003 + version, game.view(seat_no)
            )
            try:
                return await self.service.apply(
                    game_id, version, seat_no, action.code, actor, None, afk=afk
                )
            except Refused as exc:
                log.error("computer move %s refused in game %s: %s", action, game_id, exc.code)
                return None

    # ------------------------------------------------------------------ timers

    def _jobs(self, name: str) -> tuple[Job[Any], ...]:
        jq = self.app.job_queue
        return jq.get_jobs_by_name(name) if jq is not None else ()

    def cancel_timers(self, game_id: int) -> None:
        for name in (f"turn:{game_id}", f"remind:{game_id}"):
            for job in self._jobs(name):
                job.schedule_removal()

    def arm_timer(self, row: GameRow, game: Game) -> None:
        """Schedule the AFK reminder and timeout of the human in turn (named jobs)."""
        self.cancel_timers(row.game_id)
        jq = self.app.job_queue
        deadline = row.turn_deadline
        if jq is None or deadline is None or game.is_over():
            return
        timeout = prefs_of(row).turn_timeout  # the match's timeout, also after a restart
        left = max(0.5, deadline - time.time())
        data = {"game_id": row.game_id, "version": row.version}
        if left > timeout / 2:
            jq.run_once(
                self._remind_job, left - timeout / 2, data=data, name=f"remind:{row.game_id}"
            )
        jq.run_once(self._timeout_job, left, data=data, name=f"turn:{row.game_id}")

    async def _remind_job(self, context: ContextTypes.DEFAULT_TYPE) -> None:
        data = _job_data(context)
        row = await repo.get_game(self.db, data["game_id"])
        if row is None or row.status != "playing" or row.version != data["version"]:
            return
        game = self.service.game_of(row)
        seat_no = game.current_seat()
        seat = None if seat_no is None else row.seat(seat_no)
        if seat is None or not seat.is_human or seat.user_id is None:
            return
        lang = seat_language(seat, prefs_of(row).language)
        left = int(max(0, (row.turn_deadline or time.time()) - time.time()))
        await self.outbox.send(seat.user_id, tr(lang, "afk.reminder", s=left))

    async def _timeout_job(self, context: ContextTypes.DEFAULT_TYPE) -> None:
        data = _job_data(context)
        await self.timeout(data["game_id"], data["version"])

    async def timeout(self, game_id: int, version: int) -> None:
        row = await repo.get_game(self.db, game_id)
        if row is None or row.status != "playing" or row.version != version:
            return
        game = self.service.game_of(row)
        seat_no = game.current_seat()
        seat = None if seat_no is None else row.seat(seat_no)
        if seat is None or not seat.is_human or seat_no is None:
            return
        # the strike (and "away" at the second one) is written with the move, or not at all
        applied = await self.computer_move(game_id, version, seat_no, "timeout", afk="strike")
        if applied is None:
            return
        key = "afk.away" if applied.went_away else "afk.timeout"
        await self.announce(row, tr(prefs_of(row).language, key,
                                    name=texts.esc(seat.display_name)))
        await self.sync(game_id, applied.events)
        self.kick(game_id)

    async def im_back(self, game_id: int, user_id: int) -> None:
        async with self.service.lock(game_id):
            row, _ = await self.service.load(game_id)
            seat = row.seat_of(user_id)
            if seat is None:
                raise Refused("alert.not_seated")
            if not seat.away:
                raise Refused("alert.not_away")
            async with self.db.transaction() as tx:
                await repo.set_seat_away(tx, game_id, seat.seat, False)
                await repo.set_afk_strikes(tx, game_id, seat.seat, 0)
            row = await self.service.row(game_id)
        await self.announce(row, tr(prefs_of(row).language, "afk.back",
                                    name=texts.esc(seat.display_name)))
        await self.sync(game_id, [])
        self.kick(game_id)

    # ------------------------------------------------------------------ seats changing

    async def hand_to_computer(self, game_id: int, seat_no: int, reason: str) -> None:
        """A player left (/esci) or blocked the bot: a computer plays the seat from now on."""
        async with self.service.lock(game_id):
            row = await self.service.row(game_id)
            seat = row.seat(seat_no)
            if seat is None or not seat.is_human or row.status != "playing":
                return
            name = "🤖 " + seat.display_name
            await repo.replace_seat_with_computer(
                self.db, game_id, seat_no, name[:64], self.settings.computer_level
            )
            row = await self.service.row(game_id)
        lang = prefs_of(row).language
        await self.announce(row, tr(lang, f"seat.{reason}", name=texts.esc(seat.display_name)))
        await self.sync(game_id, [])
        self.kick(game_id)

    async def private_forbidden(self, user_id: int) -> None:
        """The user blocked the bot: remember it; computers take their running seats."""
        await repo.set_private_ok(self.db, user_id, False)
        for row in await repo.games_of_user(self.db, user_id):
            seat = row.seat_of(user_id)
            if row.status == "playing" and seat is not None:
                self.app.create_task(self.hand_to_computer(row.game_id, seat.seat, "blocked"))

    def show_cancelled(self, row: GameRow) -> None:
        """/annulla: the table and every hand say so, without buttons."""
        ui, lang = ui_of(row), prefs_of(row).language
        chat_id = self.outbox.resolve(row.chat_id)
        if ui.get("table") and int(ui.get("table_chat", row.chat_id)) == chat_id:
            self.outbox.edit(chat_id, int(ui["table"]), tr(lang, "table.cancelled"), None)
        for seat_key, mid in (ui.get("hands") or {}).items():
            seat = row.seat(int(seat_key))
            if seat is not None and seat.user_id is not None:
                text = tr(seat_language(seat, lang), "table.cancelled")
                self.outbox.edit(seat.user_id, int(mid), text, None)

    async def announce(self, row: GameRow, text: str) -> None:
        await self.outbox.send(row.chat_id, text, thread_id=row.thread_id)

    # ------------------------------------------------------------------ rendering

    async def sync(self, game_id: int, events: Sequence[Event] = ()) -> None:
        """Bring every message of the game in line with the stored state (serialised)."""
        async with self._sync_locks[game_id]:
            await self._sync(game_id, events)

    async def _sync(self, game_id: int, events: Sequence[Event]) -> None:
        row = await repo.get_game(self.db, game_id)
        if row is None or row.status not in ("playing", "finished") or row.snapshot_json is None:
            return
        game = self.service.game_of(row)
        ui = ui_of(row)
        changes: dict[str, Any] = {}
        prefs = prefs_of(row)
        lang = prefs.language
        names = names_of(row, game.n)
        smz = game.smazzata_index
        style = prefs.options.deck_style.value
        chat_id = self.outbox.resolve(row.chat_id)
        if ui.get("table") and int(ui.get("table_chat", row.chat_id)) != chat_id:
            # the group became a supergroup: the old table cannot be edited any more
            changes["table"] = None
            ui.pop("table", None)
        if ui.get("table") and (ui.get("table_smz") != smz or game.is_over()):
            self._close_smazzata(row, ui, events, names, lang, style)
            changes.update({"table": None, "hands": None})
            ui.pop("table", None)
            ui.pop("hands", None)
        posted = int(ui.get("scored", 0))
        if game.scored_count > posted:
            results = await self._results(row, game, posted)
            for i, result in enumerate(results, start=posted + 1):
                over = game.is_over() and i == game.scored_count
                text = texts.result_text(lang, style, result, names, over=over)
                await self.outbox.send(chat_id, text, thread_id=row.thread_id)
            changes["scored"] = game.scored_count
        if game.is_over():
            if not ui.get("over") and game.final is not None:
                final = game.final
                text = texts.match_over_text(
                    lang, final.totals, final.positions, final.winners, names
                )
                await self.outbox.send(chat_id, text, thread_id=row.thread_id)
                changes["over"] = 1
        else:
            await self._render_table(row, game, ui, changes, names, lang)
            await self._render_hands(row, game, ui, changes, names, lang)
        if ui.get("rv") != row.version:
            changes["rv"] = row.version
        if changes:
            await repo.patch_ui(self.db, game_id, changes)

    async def _results(self, row: GameRow, game: Game, posted: int) -> list[SmazzataScored]:
        """The results not posted yet (several if the redraws fell behind, e.g. a restart)."""
        if game.scored_count == posted + 1 and game.last_score is not None:
            return [game.last_score]
        stored = await repo.load_smazzata_results(self.db, row.game_id)
        return [result_from_json(r.result_json) for r in stored][posted : game.scored_count]

    def _close_smazzata(
        self, row: GameRow, ui: dict[str, Any], events: Sequence[Event], names: list[str],
        lang: str, style: str,
    ) -> None:
        """Final edit of the previous smazzata's messages (no keyboards left behind)."""
        smz = int(ui.get("table_smz", 0))
        void = next((e for e in events if isinstance(e, DealVoided)), None)
        last = next((e for e in reversed(events) if isinstance(e, TrickWon)), None)
        if void is not None:
            monte = next((e.seat for e in events if isinstance(e, MonteDeclared)), None)
            text = texts.voided_text(lang, smz, void.reason, names, monte)
        elif last is not None:
            text = texts.finished_table_text(lang, style, smz, names, last.seat, last.cards)
        else:
            text = tr(lang, "table.finished", n=smz + 1)
        self.outbox.edit(row.chat_id, int(ui["table"]), text, None)
        for seat_key, mid in (ui.get("hands") or {}).items():
            seat = row.seat(int(seat_key))
            if seat is not None and seat.user_id is not None:
                plang = seat_language(seat, lang)
                self._pressable.discard((row.game_id, seat.seat))
                self.outbox.edit(seat.user_id, int(mid), tr(plang, "private.finished", n=smz + 1),
                                 delay=self.private_lazy_seconds)

    async def _render_table(
        self, row: GameRow, game: Game, ui: dict[str, Any], changes: dict[str, Any],
        names: list[str], lang: str,
    ) -> None:
        view = game.view(None)
        text = texts.table_text(lang, view, names)
        markup = kb.auction_group_keyboard(lang, row.game_id, view)
        if view.phase == "play":
            markup = self.hand_link(lang, row.game_id)
        mid = ui.get("table")
        if mid is None:
            chat_id = self.outbox.resolve(row.chat_id)
            msg = await self.outbox.send(chat_id, text, markup, thread_id=row.thread_id)
            if msg is not None:
                changes["table"] = msg.message_id
                changes["table_chat"] = msg.chat.id
                changes["table_smz"] = game.smazzata_index
                ui["table"] = msg.message_id
        else:
            self.outbox.edit(row.chat_id, int(mid), text, markup)

    def hand_link(self, lang: str, game_id: int) -> InlineKeyboardMarkup | None:
        username = self.bot.username if self.app.bot else None
        if not username:
            return None
        return kb.url_keyboard(tr(lang, "btn.my_hand"), f"https://t.me/{username}")

    async def _render_hands(
        self, row: GameRow, game: Game, ui: dict[str, Any], changes: dict[str, Any],
        names: list[str], lang: str,
    ) -> None:
        """Each human's private message. Edits are urgent for whoever can press something
        now or could a moment ago; the others' wait up to ``private_lazy_seconds`` so that
        several moves become one edit (the outbox also keeps each chat under 1 call/s)."""
        hands: dict[str, int] = dict(ui.get("hands") or {})
        new_hands = False
        for seat in row.seats:
            if not seat.is_human or seat.user_id is None:
                continue
            plang = seat_language(seat, lang)
            view = game.view(seat.seat)
            note = tr(plang, "private.away_note") if seat.away else ""
            text = texts.hand_text(plang, view, names, note)
            markup = kb.private_keyboard(plang, row.game_id, view, away=seat.away)
            key = (row.game_id, seat.seat)
            pressable = bool(view.legal) and not seat.away
            urgent = pressable or key in self._pressable
            if pressable:
                self._pressable.add(key)
            else:
                self._pressable.discard(key)
            mid = hands.get(str(seat.seat))
            if mid is None:
                msg = await self.outbox.send(seat.user_id, text, markup)
                if msg is not None:
                    hands[str(seat.seat)] = msg.message_id
                    new_hands = True
            else:
                delay = 0.0 if urgent else self.private_lazy_seconds
                self.outbox.edit(seat.user_id, int(mid), text, markup, delay=delay)
        if new_hands:
            changes["hands"] = hands

    async def resend_hand(self, user_id: int) -> bool:
        """/mano: send the player's hand message again (the old one is deleted, so the
        newest message of the chat is the live one); False if they play no game."""
        for row in await repo.games_of_user(self.db, user_id):
            seat = row.seat_of(user_id)
            if row.status != "playing" or seat is None:
                continue
            async with self._sync_locks[row.game_id]:  # no redraw of the old one meanwhile
                hands = dict(ui_of(row).get("hands") or {})
                old = hands.pop(str(seat.seat), None)
                await repo.patch_ui(self.db, row.game_id, {"hands": hands})
                if old is not None:
                    self.outbox.forget(user_id, int(old))
                await self._sync(row.game_id, [])
            if old is not None:
                try:
                    await self.bot.delete_message(user_id, int(old))
                except TelegramError:  # already gone
                    log.debug("could not delete old hand message", exc_info=True)
            return True
        return False

    # ------------------------------------------------------------------ lifecycle

    async def resume_all(self) -> None:
        """After a restart: re-render every running game, re-arm timers, resume computers."""
        for row in await repo.list_unfinished_games(self.db):
            if row.status != "playing":
                continue
            self.outbox.assume_recent_use(row.chat_id)
            try:
                if ui_of(row).get("rv") != row.version:  # stopped before rendering
                    await self.sync(row.game_id, [])
                self.kick(row.game_id)
            except Exception:
                log.exception("could not resume game %s", row.game_id)

    async def close(self) -> None:
        self._closing = True
        tasks = [t for t in self._drivers.values() if not t.done()]
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)


def _job_data(context: ContextTypes.DEFAULT_TYPE) -> dict[str, int]:
    """The ``{"game_id", "version"}`` a timer job was scheduled with."""
    data = context.job.data if context.job is not None else None
    if not isinstance(data, dict):
        raise TypeError(f"unexpected job data {data!r}")
    return data


def over_event(events: Sequence[Event]) -> MatchOver | None:
    return next((e for e in events if isinstance(e, MatchOver)), None)
