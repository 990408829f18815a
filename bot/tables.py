"""Running tables: human actions, computer moves, turn timers and the game messages.

The UI is *reconciled* from the stored state after every change (:meth:`Tables.sync`):
the group table message shows ``view(None)``, each private message ``view(seat)``; new
smazzata -> new messages, otherwise edits through the coalescing :class:`Outbox`.
Message ids live in the game's ``ui_json`` so that edits in place survive restarts.
"""

from __future__ import annotations

import asyncio
import dataclasses
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
from bot.outbox import Outbox, backoff
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
from storage import Actor, FinishedGameRow, GameRow, SeatRow, StorageUnavailable, repo, urgent

log = logging.getLogger(__name__)

#: Seconds between two "cannot save" notices in the same group (one per outage).
STORAGE_NOTICE_SECONDS = 300.0
#: After a restart, matches that ended this recently still get their final messages if
#: the bot stopped before delivering them; older ones are left alone.
FINISHED_REDRAW_SECONDS = 7 * 24 * 3600
#: A turn's clock restarts when its buttons reach the screen more than this late (the
#: redraw waited for Telegram's limits): players are timed from when they can play.
CLOCK_SLACK_SECONDS = 2.0


def ui_of(row: GameRow | FinishedGameRow) -> dict[str, Any]:
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
        #: Games whose messages must be redrawn (a render failed) -> failures in a row.
        self._resync: dict[int, int] = {}
        #: Groups told that moves cannot be saved -> when (cleared by the next saved move).
        self._storage_told: dict[int, float] = {}
        self._background: set[asyncio.Task[None]] = set()
        #: Versions drawn but not yet delivered -> (version, chats); see :meth:`_confirm`.
        self._unconfirmed: dict[int, tuple[int, set[int]]] = {}
        #: The turn clock (see :meth:`_watch_turn`): game -> (version, the chat with the
        #: buttons of the human in turn, when the turn's clock started) until delivered;
        #: game -> the last version whose buttons were delivered; (game, version) whose
        #: timer or reminder fired before that.
        self._turn_pending: dict[int, tuple[int, int, float]] = {}
        self._turn_watchers: dict[int, asyncio.Task[None]] = {}
        self._turn_shown: dict[int, int] = {}
        self._held_timeouts: set[tuple[int, int]] = set()
        self._confirmers: dict[int, asyncio.Task[None]] = {}
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

        The caller answers the query, then renders with :meth:`after`. The press goes
        before any waiting background database work (:func:`storage.urgent`)."""

        def seat_of_player(row: GameRow, game: Game) -> int:
            seat = row.seat_of(user_id)
            if seat is None:
                raise Refused("alert.not_seated")
            if seat.away:
                raise Refused("alert.away")
            if version != row.version:
                raise Refused("alert.stale")
            if game.current_seat() != seat.seat and code != "M":
                raise Refused("alert.not_your_turn")
            return seat.seat

        async with self.service.lock(game_id), urgent():
            try:
                applied = await self.service.apply(
                    game_id, version, seat_of_player, code, "human", user_id, afk="reset"
                )
            except StorageUnavailable as exc:
                await self._storage_down_game(game_id, exc)
                raise
        self.storage_up(applied.row.chat_id)
        self.cancel_timers(game_id)
        return applied

    async def after(self, applied: Applied) -> None:
        """Render the change, then let computers move and timers run."""
        try:
            await self.sync(applied.row.game_id, applied.events)
        finally:
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
        failures = 0
        try:
            while True:
                self._again.discard(game_id)
                try:
                    if game_id in self._resync:
                        await self.sync(game_id)
                    moved = await self._computer_step(game_id)
                except StorageUnavailable as exc:  # wait for the database to come back
                    failures += 1
                    delay = backoff(failures, first=0.5, cap=10.0)
                    log.warning("game %s: storage unavailable (%s): retry in %.1fs",
                                game_id, exc.code, delay)
                    self._resync.setdefault(game_id, 0)
                    await self._storage_down_game(game_id, exc)
                    await asyncio.sleep(delay)
                    continue
                failures = 0
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
        row = await self.service.fetch(game_id)
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
            row = await self.service.fetch(game_id)
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
                applied = await self.service.apply(
                    game_id, version, seat_no, action.code, actor, None, afk=afk
                )
            except Refused as exc:
                log.error("computer move %s refused in game %s: %s", action, game_id, exc.code)
                return None
        self.storage_up(row.chat_id)
        return applied

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
        if self._undelivered(data["game_id"], data["version"]):
            # nothing to remind of yet: the clock (and this reminder) restart on delivery
            self._held_timeouts.add((data["game_id"], data["version"]))
            return
        row = await self.service.fetch(data["game_id"])
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
        if self._undelivered(game_id, version):
            self._held_timeouts.add((game_id, version))  # the clock restarts on delivery
            return
        row = await self.service.fetch(game_id)
        if row is None or row.status != "playing" or row.version != version:
            return
        game = self.service.game_of(row)
        if row.turn_deadline is not None and row.turn_deadline > time.time() + 0.5:
            self.arm_timer(row, game)  # the clock was restarted after this timer was set
            return
        seat_no = game.current_seat()
        seat = None if seat_no is None else row.seat(seat_no)
        if seat is None or not seat.is_human or seat_no is None:
            return
        # the strike (and "away" at the second one) is written with the move, or not at all
        try:
            applied = await self.computer_move(
                game_id, version, seat_no, "timeout", afk="strike"
            )
        except StorageUnavailable as exc:  # try again a little later
            log.warning("game %s: timeout move not saved (%s)", game_id, exc.code)
            self.storage_down(row, exc)
            jq = self.app.job_queue
            if jq is not None and not self._closing:
                jq.run_once(self._timeout_job, 5.0, data={"game_id": game_id, "version": version},
                            name=f"turn:{game_id}")
            return
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
        self._turn_shown.pop(row.game_id, None)
        ui, lang = ui_of(row), prefs_of(row).language
        chat_id = self.outbox.resolve(row.chat_id)
        if ui.get("table") and int(ui.get("table_chat", row.chat_id)) == chat_id:
            self.outbox.edit(chat_id, int(ui["table"]), tr(lang, "table.cancelled"), None)
        for seat_key, mid in (ui.get("hands") or {}).items():
            seat = row.seat(int(seat_key))
            if seat is not None and seat.user_id is not None:
                text = tr(seat_language(seat, lang), "table.cancelled")
                self.outbox.edit(seat.user_id, int(mid), text, None)

    async def chat_gone(self, chat_id: int) -> None:
        """The bot was removed from a group: its lobby / running games end as cancelled
        (the data stays: finished smazzate keep their scores); timers, computers and
        pending edits of that chat stop."""
        self.outbox.drop_chat(chat_id)
        for row in await repo.list_unfinished_games(self.db):
            if row.chat_id != chat_id:
                continue
            async with self.service.lock(row.game_id):
                fresh = await self.service.fetch(row.game_id)
                if fresh is None or not fresh.is_active:
                    continue
                await repo.set_status(self.db, row.game_id, "cancelled",
                                      expected_status=fresh.status)
            log.warning("bot removed from chat %s: game %s cancelled", chat_id, row.game_id)
            self.cancel_timers(row.game_id)
            self._resync.pop(row.game_id, None)
            task = self._drivers.pop(row.game_id, None)
            if task is not None and task is not asyncio.current_task():
                task.cancel()
            if fresh.status == "playing":
                self._hands_cancelled(fresh)
        self.outbox.drop_chat(chat_id)

    def _hands_cancelled(self, row: GameRow) -> None:
        lang = prefs_of(row).language
        for seat_key, mid in (ui_of(row).get("hands") or {}).items():
            seat = row.seat(int(seat_key))
            if seat is not None and seat.user_id is not None:
                text = tr(seat_language(seat, lang), "table.cancelled")
                self.outbox.edit(seat.user_id, int(mid), text, None)

    async def forbidden(self, chat_id: int, reason: str) -> None:
        """A 403 from Telegram: a user blocked the bot, or the bot left a group."""
        if chat_id > 0:
            await self.private_forbidden(chat_id)
        elif "kicked" in reason.lower() or "not a member" in reason.lower():
            self.background(self.chat_gone(chat_id))

    def background(self, coro: Any) -> None:
        """Run ``coro`` on its own (it may cancel the task that asked for it)."""
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        task.add_done_callback(_log_failure)

    # ------------------------------------------------------------------ storage outages

    def storage_down(self, row: GameRow, exc: StorageUnavailable) -> None:
        """Moves of this game cannot be saved: tell its group once per outage."""
        now = time.monotonic()
        told = self._storage_told.get(row.chat_id)
        if told is not None and now - told < STORAGE_NOTICE_SECONDS:
            return
        self._storage_told[row.chat_id] = now
        log.warning("chat %s: moves cannot be saved (%s)", row.chat_id, exc.code)
        text = tr(prefs_of(row).language, "storage.group_paused")
        self.background(self.announce(row, text))

    async def _storage_down_game(self, game_id: int, exc: StorageUnavailable) -> None:
        try:
            row = await self.service.fetch(game_id)
        except StorageUnavailable:
            return
        if row is not None:
            self.storage_down(row, exc)

    def storage_up(self, chat_id: int) -> None:
        """A move of this chat was saved: the outage (if any) is over."""
        self._storage_told.pop(chat_id, None)

    async def announce(self, row: GameRow, text: str) -> None:
        await self.outbox.send(row.chat_id, text, thread_id=row.thread_id)

    # ------------------------------------------------------------------ rendering

    async def sync(self, game_id: int, events: Sequence[Event] = ()) -> None:
        """Bring every message of the game in line with the stored state (serialised).

        If Telegram or the database fails meanwhile, a redraw is scheduled (backoff)."""
        async with self._sync_locks[game_id]:
            try:
                await self._sync(game_id, events)
            except (TelegramError, StorageUnavailable) as exc:
                failures = self._resync[game_id] = self._resync.get(game_id, 0) + 1
                delay = backoff(failures, first=1.0, cap=30.0)
                log.warning("redraw of game %s failed (%s): again in %.0fs", game_id, exc, delay)
                if not self._closing:
                    asyncio.get_running_loop().call_later(delay, self.kick, game_id)
            else:
                self._resync.pop(game_id, None)

    async def _sync(self, game_id: int, events: Sequence[Event]) -> None:
        row = await self.service.fetch(game_id)
        if row is None or row.status not in ("playing", "finished"):
            return
        try:
            game = self.service.game_of(row)
        except Refused:  # never started
            return
        ui = ui_of(row)
        self._note_shown(game_id, ui.get("rv"))  # delivered before (e.g. before a restart)
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
        try:
            await self._render(row, game, ui, changes, names, lang, style, chat_id)
        finally:  # what was sent is remembered even if a later send failed
            if changes:
                await repo.patch_ui(self.db, game_id, changes)

    async def _render(
        self, row: GameRow, game: Game, ui: dict[str, Any], changes: dict[str, Any],
        names: list[str], lang: str, style: str, chat_id: int,
    ) -> None:
        posted = int(ui.get("scored", 0))
        if game.scored_count > posted:
            results = await self._results(row, game, posted)
            for i, result in enumerate(results, start=posted + 1):
                over = game.is_over() and i == game.scored_count
                text = texts.result_text(lang, style, result, names, over=over)
                await self.outbox.send(chat_id, text, thread_id=row.thread_id)
                changes["scored"] = i
            changes["scored"] = game.scored_count
        if game.is_over():
            self._turn_shown.pop(row.game_id, None)
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
            chats = {chat_id} | {s.user_id for s in row.seats if s.user_id is not None}
            self._rendered(row.game_id, row.version, chats)
            self._watch_turn(row, game, chat_id)

    def _rendered(self, game_id: int, version: int, chats: set[int]) -> None:
        """The messages of ``version`` are queued: record it (``ui["rv"]``) once the outbox
        has delivered them, so that a restart redraws exactly the games it must."""
        self._unconfirmed[game_id] = (version, chats)
        task = self._confirmers.get(game_id)
        if task is None or task.done():
            self._confirmers[game_id] = asyncio.create_task(self._confirm(game_id))

    async def _confirm(self, game_id: int) -> None:
        while (pending := self._unconfirmed.get(game_id)) is not None:
            version, chats = pending
            await self.outbox.settled(chats)
            if self._unconfirmed.get(game_id) != pending:
                continue  # redrawn meanwhile: wait for the newer content
            del self._unconfirmed[game_id]
            try:
                await repo.patch_ui(self.db, game_id, {"rv": version})
            except StorageUnavailable as exc:  # a restart redraws it: harmless
                log.warning("could not record the drawn version of %s: %s", game_id, exc)

    # ------------------------------------------------------------------ the turn clock
    # A turn's clock starts when its move is stored, but under Telegram's limits the
    # buttons may reach the player many seconds later: a timer (or reminder) that fires
    # before they are delivered is held, and a clock that has run for more than
    # CLOCK_SLACK_SECONDS by then starts again. Players are timed from when they can play.

    def _watch_turn(self, row: GameRow, game: Game, group_chat: int) -> None:
        """Note when the buttons of the human in turn at ``row.version`` are delivered."""
        seat_no = game.current_seat()
        seat = None if seat_no is None else row.seat(seat_no)
        if row.turn_deadline is None or seat is None or seat.user_id is None:
            return
        # the auction's buttons are in the group, the others in the player's private chat
        chat = group_chat if game.phase.value == "auction" else seat.user_id
        started = row.turn_deadline - prefs_of(row).turn_timeout
        self._turn_pending[row.game_id] = (row.version, chat, started)
        task = self._turn_watchers.get(row.game_id)
        if task is None or task.done():
            self._turn_watchers[row.game_id] = asyncio.create_task(self._turn_shown_loop(
                row.game_id
            ))

    async def _turn_shown_loop(self, game_id: int) -> None:
        while (pending := self._turn_pending.get(game_id)) is not None:
            version, chat, started = pending
            await self.outbox.settled({chat})
            if self._turn_pending.get(game_id) != pending:
                continue  # a newer turn meanwhile
            del self._turn_pending[game_id]
            self._note_shown(game_id, version)
            held = (game_id, version) in self._held_timeouts
            self._held_timeouts -= {
                h for h in self._held_timeouts if h[0] == game_id and h[1] <= version
            }
            if held or time.time() - started > CLOCK_SLACK_SECONDS:
                try:
                    await self._start_turn_clock(game_id, version, always=held)
                except StorageUnavailable as exc:  # the stored deadline stands
                    log.warning("game %s: turn clock not restarted (%s)", game_id, exc.code)

    def _note_shown(self, game_id: int, version: object) -> None:
        if isinstance(version, int) and version > self._turn_shown.get(game_id, -1):
            self._turn_shown[game_id] = version

    def _undelivered(self, game_id: int, version: int) -> bool:
        """Whether the buttons of ``version`` may not be on screen yet."""
        return self._turn_shown.get(game_id, -1) < version

    async def _start_turn_clock(self, game_id: int, version: int, *, always: bool) -> None:
        """Start the clock of ``version``'s turn again from now if it has been running for
        more than :data:`CLOCK_SLACK_SECONDS` (``always``: its timer already fired)."""
        async with self.service.lock(game_id):  # no move in between: the timer is current
            row = await self.service.fetch(game_id)
            if (
                row is None or row.status != "playing" or row.version != version
                or row.turn_deadline is None
            ):
                return
            fresh = time.time() + prefs_of(row).turn_timeout
            if fresh - row.turn_deadline < CLOCK_SLACK_SECONDS and not always:
                return
            await repo.set_turn_deadline(self.db, game_id, fresh)
            row = dataclasses.replace(row, turn_deadline=fresh)
            self.arm_timer(row, self.service.game_of(row))

    async def confirm_delivered(self, timeout: float) -> None:
        """At a graceful stop, after the outbox drained: record what was delivered."""
        tasks = [t for t in self._confirmers.values() if not t.done()]
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

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
                    changes["hands"] = hands
            else:
                delay = 0.0 if urgent else self.private_lazy_seconds
                self.outbox.edit(seat.user_id, int(mid), text, markup, delay=delay)

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
        """After a restart: re-render every running game, re-arm timers, resume computers.

        ``ui["rv"]`` is the last version whose messages were *delivered*: the games whose
        edits were queued or in flight when the process stopped are redrawn, and so are
        the matches that ended meanwhile (their last results and final scores)."""
        for row in await repo.list_unfinished_games(self.db):
            if row.status != "playing":
                continue
            self.outbox.assume_recent_use(row.chat_id)
            drawn = ui_of(row).get("rv")
            self._note_shown(row.game_id, drawn)
            try:
                if drawn != row.version:
                    await self.sync(row.game_id, [])
            except Exception:
                log.exception("could not resume game %s", row.game_id)
            self.kick(row.game_id)
        since = self.db.now() - FINISHED_REDRAW_SECONDS
        for finished in await repo.list_finished_games(self.db, since):
            if ui_of(finished).get("rv") == finished.version:
                continue
            # the last move was stored, its results (or the final scores) never delivered
            self.outbox.assume_recent_use(finished.chat_id)
            try:
                await self.sync(finished.game_id, [])
            except Exception:
                log.exception("could not finish drawing game %s", finished.game_id)

    async def close(self) -> None:
        self._closing = True
        tasks = [
            t for t in (*self._drivers.values(), *self._background, *self._turn_watchers.values())
            if not t.done()
        ]
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


def _log_failure(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("background task failed", exc_info=task.exception())


def over_event(events: Sequence[Event]) -> MatchOver | None:
    return next((e for e in events if isinstance(e, MatchOver)), None)
