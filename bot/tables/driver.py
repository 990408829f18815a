"""Running tables: human actions, computer moves, redraws, restarts.

The UI is *reconciled* from the stored state after every change (:meth:`Tables.sync`,
drawing with :class:`~bot.tables.render.Renderer`); the turn timers are the
:class:`~bot.tables.clock.TurnClock`'s, which calls :meth:`Tables.timeout` back; seats
changing hands are :class:`~bot.tables.seats.Seats`', storage outages the
:class:`~bot.tables.outages.StorageNotices`' (both called back for redraws). Every write
to a game goes through :class:`~bot.service.GameService`.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from telegram import Bot
from telegram.error import TelegramError
from telegram.ext import Application

from bot import players
from bot.config import Settings
from bot.i18n import tr
from bot.outbox import Outbox, backoff
from bot.presence import Presence
from bot.render import texts
from bot.service import AfkChange, Applied, GameService, Refused, result_from_json
from bot.tables.clock import TurnClock
from bot.tables.delivery import Delivery
from bot.tables.layout import ChatLayout
from bot.tables.outages import StorageNotices, announce
from bot.tables.pacing import PaceKeeper
from bot.tables.render import Drawn, Landing, Renderer
from bot.tables.seats import Seats
from bot.tables.state import UiState, prefs_of, ui_of, ui_patch
from game import Action, Game
from game.events import BriscolaScored, CardPlayed, Event, SmazzataScored
from storage import Actor, GameRow, StorageUnavailable, repo, urgent
from storage import ratings as rating_store
from storage.ratings import RatingSeat

log = logging.getLogger(__name__)

#: After a restart, matches that ended this recently still get their final messages if
#: the bot stopped before delivering them; older ones are left alone.
FINISHED_REDRAW_SECONDS = 7 * 24 * 3600
#: /tavolo reposts a game's table at most once in this many seconds.
TABLE_RESEND_SECONDS = 10.0
#: How long the start-up waits for the redraws of the games a restart found.
RESUME_WAIT_SECONDS = 2.0


def decision_seed(game_id: int, version: int) -> int:
    """The seed of a computer's decision at a game's version (reproducible)."""
    return game_id * 100003 + version


@dataclass(frozen=True)
class Decision:
    """A computer's decision begun before its move: for the seat's ``level`` then."""

    level: str
    action: asyncio.Future[Action]


class Tables:
    def __init__(self, app: Application[Any, Any, Any, Any, Any, Any], settings: Settings,
                 service: GameService, outbox: Outbox,
                 layout: ChatLayout | None = None) -> None:
        self.app = app
        self.settings = settings
        self.service = service
        self.outbox = outbox
        self.layout = layout or ChatLayout()
        #: Who plays in the Mini App right now (written by its server, read by the renderer).
        self.presence = Presence()
        self.presence.listeners.append(self._presence_changed)
        self.renderer = Renderer(outbox, self.layout, self._stored_results, self._username,
                                 self.presence)
        self.renderer.wake = self._wake
        self.renderer.ratings = self._rating_changes
        self.renderer.live_turn_seconds = settings.live_turn_notice_seconds
        self.renderer.webapp_url = settings.webapp_url
        self.renderer.webapp_short_name = settings.webapp_short_name
        self.clock = TurnClock(app, service, outbox, self.layout, self.timeout)
        self.delivery = Delivery(service, outbox)
        self.pacing = PaceKeeper(service.db, outbox)
        self._drivers: dict[int, asyncio.Task[None]] = {}
        self._again: set[int] = set()
        #: Games whose messages must be redrawn (a render failed) -> failures in a row.
        self._resync: dict[int, int] = {}
        self._background: set[asyncio.Task[None]] = set()
        self._sync_locks: defaultdict[int, asyncio.Lock] = defaultdict(asyncio.Lock)
        #: Game -> when /tavolo last reposted its table (monotonic).
        self._table_resent: dict[int, float] = {}
        self._closing = False
        self.migration_lock = asyncio.Lock()
        self.notices = StorageNotices(service, outbox, self.background)
        self.seats = Seats(app, service, outbox, self.clock, self.renderer,
                           computer_level=settings.computer_level, background=self.background,
                           refresh=self._refresh, stop_driver=self._stop_driver)

    @property
    def bot(self) -> Bot:
        bot: Bot = self.app.bot
        return bot

    @property
    def private_lazy_seconds(self) -> float:
        return self.renderer.private_lazy_seconds

    @private_lazy_seconds.setter
    def private_lazy_seconds(self, value: float) -> None:
        self.renderer.private_lazy_seconds = value

    def _username(self) -> str | None:
        return self.bot.username if self.app.bot else None

    async def _stored_results(self, game_id: int) -> list[SmazzataScored | BriscolaScored]:
        stored = await repo.load_smazzata_results(self.service.db, game_id)
        return [result_from_json(r.result_json) for r in stored]

    async def _rating_changes(self, game_id: int) -> dict[int, tuple[RatingSeat, ...]]:
        return await rating_store.game_changes(self.service.db, game_id)

    def render_lock(self, game_id: int) -> asyncio.Lock:
        """Held while a game's messages are drawn (one redraw of a game at a time)."""
        return self._sync_locks[game_id]

    async def after_start(self, game_id: int) -> None:
        """The match started: draw it, then let computers move and timers run."""
        try:
            await self.sync(game_id)
        finally:
            self.kick(game_id)

    def cancel_timers(self, game_id: int) -> None:
        self.clock.cancel(game_id)

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
                await self.notices.down_in_game(game_id, exc)
                raise
        self.notices.up(applied.row.chat_id)
        self.clock.cancel(game_id)
        return applied

    async def after(self, applied: Applied, pressed: tuple[int, int] | None = None) -> None:
        """Render the change, then let computers move and timers run. ``pressed``: the
        message (chat, id) whose button made the move (its redraw goes first)."""
        try:
            await self.sync(applied.row.game_id, applied.events, pressed)
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
                    if exc.code == "fenced":  # standing by: the active instance drives it
                        return
                    failures += 1
                    delay = backoff(failures, first=0.5, cap=10.0)
                    log.warning("game %s: storage unavailable (%s): retry in %.1fs",
                                game_id, exc.code, delay)
                    self._resync.setdefault(game_id, 0)
                    await self.notices.down_in_game(game_id, exc)
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
        row = await self.service.latest(game_id)
        if row is None or row.status != "playing":
            return False
        game = self.service.game_of(row)
        seat_no = game.current_seat()
        seat = None if seat_no is None else row.seat(seat_no)
        if seat is None or (seat.is_human and not seat.away):
            self.clock.arm(row, game)
            return False
        # the decision is made during the display pause (issue 47: the move is stored when
        # the pause ends, unless deciding takes longer), with the pause as its budget
        delay = self.settings.computer_delay_seconds
        level = seat.computer_level or self.settings.computer_level
        decision = Decision(level, asyncio.ensure_future(players.decide(
            level, decision_seed(game_id, row.version), game.view(seat.seat), delay or None)))
        try:
            if delay:
                await asyncio.sleep(delay)
            applied = await self.computer_move(game_id, row.version, seat.seat, "computer",
                                               decision=decision)
        finally:
            decision.action.cancel()  # (done by then, unless the move was not made)
        if applied is None:
            return False
        await self.sync(game_id, applied.events)
        return True

    async def computer_move(
        self, game_id: int, version: int, seat_no: int, actor: Actor,
        afk: AfkChange | None = None, decision: Decision | None = None,
    ) -> Applied | None:
        """The move of a computer (or of a player's stand-in) at ``version``: the
        ``decision`` begun for it if it is still that seat's level's, else one now."""
        async with self.service.lock(game_id):
            row = await self.service.latest(game_id)
            if row is None or row.status != "playing" or row.version != version:
                return None
            game = self.service.game_of(row)
            if game.current_seat() != seat_no:
                return None
            seat = row.seat(seat_no)
            level = (seat.computer_level if seat else None) or self.settings.computer_level
            # off the event loop (a search decision runs in the process pool); the same
            # version and seat: the same view, so the decision begun before is this one
            if decision is not None and decision.level == level:
                action = await decision.action
            else:
                action = await players.decide(level, decision_seed(game_id, version),
                                              game.view(seat_no))
            try:
                applied = await self.service.apply(
                    game_id, version, seat_no, action.code, actor, None, afk=afk
                )
            except Refused as exc:
                log.error("computer move %s refused in game %s: %s", action, game_id, exc.code)
                return None
        self.notices.up(row.chat_id)
        return applied

    async def timeout(self, game_id: int, version: int) -> None:
        """The turn clock ran out (called back by :class:`TurnClock`): move for them."""
        if self.clock.hold_if_undelivered(game_id, version):
            return  # the clock restarts on delivery
        row = await self.service.fetch(game_id)
        if row is None or row.status != "playing" or row.version != version:
            return
        game = self.service.game_of(row)
        if row.turn_deadline is not None and row.turn_deadline > time.time() + 0.5:
            self.clock.arm(row, game)  # the clock was restarted after this timer was set
            return
        seat_no = game.current_seat()
        seat = None if seat_no is None else row.seat(seat_no)
        if seat is None or not seat.is_human or seat_no is None:
            return
        # the strike (and "away" at the second one) is written with the move, or not at all
        try:
            applied = await self.computer_move(game_id, version, seat_no, "timeout",
                                               afk="strike")
        except StorageUnavailable as exc:  # try again a little later
            log.warning("game %s: timeout move not saved (%s)", game_id, exc.code)
            self.notices.down(row, exc)
            if not self._closing:
                self.clock.retry_timeout(game_id, version, 5.0)
            return
        if applied is None:
            return
        key = "afk.away" if applied.went_away else "afk.timeout"
        await announce(self.outbox, row, tr(prefs_of(row).language, key,
                                            name=texts.esc(seat.display_name)))
        await self.sync(game_id, applied.events)
        self.kick(game_id)

    # ------------------------------------------------------------------ seats, outages

    async def im_back(self, game_id: int, user_id: int) -> None:
        await self.seats.im_back(game_id, user_id)

    async def hand_to_computer(self, game_id: int, seat_no: int, reason: str) -> None:
        await self.seats.hand_to_computer(game_id, seat_no, reason)

    async def private_forbidden(self, user_id: int) -> None:
        await self.seats.private_forbidden(user_id)

    def show_cancelled(self, row: GameRow) -> None:
        self.seats.show_cancelled(row)

    async def chat_gone(self, chat_id: int) -> None:
        await self.seats.chat_gone(chat_id)

    async def forbidden(self, chat_id: int, reason: str) -> None:
        await self.seats.forbidden(chat_id, reason)

    async def topic_closed(self, chat_id: int, thread_id: int) -> None:
        await self.seats.topic_closed(chat_id, thread_id)

    def background(self, coro: Any) -> asyncio.Task[None]:
        """Run ``coro`` on its own (it may cancel the task that asked for it)."""
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        task.add_done_callback(_log_failure)
        return task

    async def _refresh(self, game_id: int) -> None:
        """A seat changed: redraw, then let computers move and timers run."""
        await self.sync(game_id, [])
        self.kick(game_id)

    def _presence_changed(self, game_id: int, user_id: int, live: bool) -> None:
        """A player's Mini App page closed (or opened): redraw at once, so that their chat
        hand is brought up to date (and the group's rank follows, see the renderer)."""
        if live:
            self.renderer.live(game_id, user_id)
        else:
            self.renderer.back(game_id, user_id)
        if not self._closing:
            self.background(self._resync_now(game_id))

    def _wake(self, game_id: int, version: int, delay: float) -> None:
        """The renderer asks for a redraw in ``delay`` s if the game is still at
        ``version`` (a live player's turn that waits: the chat's turn goes too)."""
        if self._closing:
            return

        def due() -> None:
            if not self._closing:
                self.background(self._resync_now(game_id, version))

        asyncio.get_running_loop().call_later(delay, due)

    async def _resync_now(self, game_id: int, version: int | None = None) -> None:
        """Redraw a running game (if it is still at ``version``, when given)."""
        row = await self.service.latest(game_id)
        if row is not None and row.status == "playing" and version in (None, row.version):
            await self.sync(game_id)

    def _stop_driver(self, game_id: int) -> None:
        self._resync.pop(game_id, None)
        task = self._drivers.pop(game_id, None)
        if task is not None and task is not asyncio.current_task():
            task.cancel()

    # ------------------------------------------------------------------ redraws

    async def sync(self, game_id: int, events: Sequence[Event] = (),
                   pressed: tuple[int, int] | None = None) -> None:
        """Bring every message of the game in line with the stored state (serialised).

        If Telegram or the database fails meanwhile, a redraw is scheduled (backoff).
        New messages (a new smazzata's results, table and hands) are sent outside the
        lock (:meth:`Renderer.detach`): they are awaited here after it is released, so
        that the next move's redraw does not wait behind them; once they are stored the
        game is redrawn (they get the latest content, the version is confirmed)."""
        pending: list[asyncio.Task[bool]] = []
        version: int | None = None
        async with self._sync_locks[game_id]:
            try:
                await self._show_morto_plays(game_id, events, pending)
                version = await self._sync(game_id, events, pressed, pending)
            except (TelegramError, StorageUnavailable) as exc:
                self._redraw_failed(game_id, exc)
            else:
                self._resync.pop(game_id, None)
        await self._settle(game_id, pending, version)

    async def _settle(self, game_id: int, pending: list[asyncio.Task[bool]],
                      version: int | None) -> None:
        """Await new messages sent outside the redraw lock (drawn for ``version``); once
        they are stored, redraw if the game moved meanwhile (they show an older state),
        else only confirm their delivery (a redraw would replace a picker opened since)."""
        if not pending:
            return
        results = await asyncio.gather(*pending, return_exceptions=True)
        failed = [r for r in results if isinstance(r, BaseException)]
        for exc in failed:
            if not isinstance(exc, (TelegramError, StorageUnavailable)):
                raise exc
        if failed:
            self._redraw_failed(game_id, failed[0])
        elif any(results):
            row = await self.service.latest(game_id)
            if row is None or row.version != version or row.status != "playing":
                await self.sync(game_id)
            elif ui_of(row).drawn != row.version and not self.renderer.sending(game_id):
                self.delivery.queued(game_id, row.version, self.renderer.chats(row))
                self.clock.watch(row, self.service.game_of(row))

    def _redraw_failed(self, game_id: int, exc: BaseException) -> None:
        failures = self._resync[game_id] = self._resync.get(game_id, 0) + 1
        delay = backoff(failures, first=1.0, cap=30.0)
        log.warning("redraw of game %s failed (%s): again in %.0fs", game_id, exc, delay)
        if not self._closing:
            asyncio.get_running_loop().call_later(delay, self.kick, game_id)

    async def _sync(self, game_id: int, events: Sequence[Event],
                    pressed: tuple[int, int] | None = None,
                    pending: list[asyncio.Task[bool]] | None = None) -> int | None:
        """Draw the stored state (see :meth:`sync`); the version drawn, if any."""
        row = await self.service.latest(game_id)
        if row is None or row.status not in ("playing", "finished"):
            return None
        try:
            game = self.service.game_of(row)
        except Refused:  # never started
            return None
        drawn = Drawn(ui_of(row), land=self._lander(game_id))
        self.clock.note_shown(game_id, drawn.ui.drawn)  # delivered before (e.g. a restart)
        try:
            await self.renderer.draw(row, game, drawn, events, pressed)
        finally:  # what was drawn is remembered even if a later part failed
            if pending is not None:
                pending += drawn.pending
            if drawn.changes:
                await self.service.save_ui(game_id, ui_patch(drawn.changes))
        if game.is_over():
            self.clock.game_over(game_id)
        if drawn.chats is not None:
            self.delivery.queued(game_id, row.version, drawn.chats)
            self.clock.watch(row, game)
        return row.version

    def _lander(self, game_id: int) -> Callable[[Landing], Awaitable[bool]]:
        """Stores what a new message brought (see ``Drawn.land``), computed from the latest
        UI state under the game's redraw lock (no redraw reads it meanwhile)."""
        async def land(compute: Landing) -> bool:
            async with self._sync_locks[game_id]:
                row = await self.service.latest(game_id)
                if row is None:
                    return False
                try:
                    smazzata = self.service.game_of(row).smazzata_index
                except Refused:
                    return False
                changes = compute(ui_of(row), smazzata)
                if changes is None:
                    return False
                await self.service.save_ui(game_id, ui_patch(changes))
                return True

        return land

    async def _show_morto_plays(self, game_id: int, events: Sequence[Event],
                                pending: list[asyncio.Task[bool]]) -> None:
        """Il morto plays by itself within the move before its turn (R90): show the table
        just before each of its cards, at the pace of a computer's move, so the group sees
        its plays one by one (then :meth:`_sync` draws the move's outcome)."""
        delay = self.settings.computer_delay_seconds
        autos = [i for i, e in enumerate(events) if isinstance(e, CardPlayed) and e.automatic]
        if not autos or not delay:
            return
        row = await self.service.latest(game_id)
        if row is None or row.status not in ("playing", "finished"):
            return
        game = self.service.game_of(row)
        start = len(game.history) - len(events)
        if start < 0 or game.history[start:] != list(events):
            return  # another move came meanwhile: just draw the latest state
        for index in autos:
            frame = Game.from_history(game.options, game.history[: start + index],
                                      game.actions, random.Random(0))
            drawn = Drawn(ui_of(row), land=self._lander(game_id))
            try:
                await self.renderer.draw(row, frame, drawn, ())
            finally:
                pending += drawn.pending
                if drawn.changes:
                    row = replace(row, ui_json=await self.service.save_ui(
                        game_id, ui_patch(drawn.changes)))
            await asyncio.sleep(delay)

    async def resend_hand(self, user_id: int, ended: Callable[[], None]) -> bool:
        """/mano: send the player's hand message again, in the background (the old one is
        deleted, so the newest message of the chat is the live one); False if they play
        no game. ``ended``: see :meth:`_repost`."""
        for row in await repo.games_of_user(self.service.db, user_id):
            seat = row.seat_of(user_id)
            if row.status == "playing" and seat is not None:
                self.background(self._resend_hand(row.game_id, seat.seat, user_id, ended))
                return True
        return False

    async def _resend_hand(self, game_id: int, seat_no: int, chat_id: int,
                           ended: Callable[[], None]) -> None:
        def hand(ui: UiState) -> tuple[int | None, dict[str, Any]]:
            return ui.hands.get(seat_no), {
                "hands": {s: m for s, m in ui.hands.items() if s != seat_no}}

        await self._repost(game_id, chat_id, hand, ended)

    async def resend_table(self, chat_id: int, thread_id: int,
                           ended: Callable[[], None]) -> bool:
        """/tavolo: post the group's table again with its current keyboard (the old one is
        deleted), in the background; False if the chat plays no match. At most once per
        :data:`TABLE_RESEND_SECONDS` per game (each costs a group call). ``ended``: see
        :meth:`_repost`."""
        row = await repo.get_active_game(self.service.db, chat_id, thread_id)
        if row is None or row.status != "playing":
            return False
        now = time.monotonic()
        if now - self._table_resent.get(row.game_id, -TABLE_RESEND_SECONDS) >= \
                TABLE_RESEND_SECONDS:
            self._table_resent[row.game_id] = now

            def table(ui: UiState) -> tuple[int | None, dict[str, Any]]:
                return ui.table, {"table": None}

            self.renderer.table_asked(row.game_id)

            self.background(self._repost(row.game_id, self.outbox.resolve(
                ui_of(row).table_chat or row.chat_id), table, ended))
        return True

    async def _repost(self, game_id: int, chat_id: int,
                      pick: Callable[[UiState], tuple[int | None, dict[str, Any]]],
                      ended: Callable[[], None]) -> None:
        """Send one of the game's messages again (``pick``: its id in the UI state and the
        patch that forgets it), drawn with the latest content, then delete the old one,
        so that the newest message of the chat is the live one. ``ended``: called instead
        if the game is no longer being played (its last move came between the command's
        check and this, in the background), so that the command still gets an answer."""
        pending: list[asyncio.Task[bool]] = []
        async with self._sync_locks[game_id]:  # no redraw of the old one meanwhile
            row = await self.service.latest(game_id)
            if row is None or row.status != "playing":
                ended()
                return
            old, forget = pick(ui_of(row))
            if old is not None:  # edits queued for it are dropped, none is made from now
                self.outbox.retire(chat_id, old)
            await self.service.save_ui(game_id, ui_patch(forget))
            version = await self._sync(game_id, [], None, pending)
        await self._settle(game_id, pending, version)  # the new one is sent before the old goes
        if old is not None:
            await self.outbox.released(chat_id, old)  # an edit in flight lands first
            try:
                await self.bot.delete_message(chat_id, old)
            except TelegramError as exc:  # already gone
                log.info("could not delete the old message %s/%s: %s", chat_id, old, exc)

    # ------------------------------------------------------------------ lifecycle

    async def resume_all(self) -> None:
        """After a restart: re-render every running game, re-arm timers, resume computers.

        ``UiState.drawn`` is the last version whose messages were *delivered*: the games
        whose edits were queued or in flight when the process stopped are redrawn, and so
        are the matches that ended meanwhile (their last results and final scores). The
        redraws run all at once; this runs in the task started after the application
        (:mod:`bot.app`), so updates are polled and handled meanwhile, and it waits for the
        redraws at most :data:`RESUME_WAIT_SECONDS` before the command menus are set.
        Each chat is paced as the process before left it (:mod:`bot.tables.pacing`): a
        group whose game moved is redrawn as soon as its limit allows, the keyboard of the
        seat in turn first (its edit is a turn's); the pacing was read at the start-up,
        before any update was handled (``bot.app``)."""
        self.pacing.start()
        redraws: list[asyncio.Task[None]] = []
        for row in await repo.list_unfinished_games(self.service.db):
            if row.status != "playing":
                continue
            drawn = ui_of(row).drawn
            self.clock.note_shown(row.game_id, drawn)
            redraws.append(self.background(self._resume(row.game_id,
                                                         redraw=drawn != row.version)))
        since = self.service.db.now() - FINISHED_REDRAW_SECONDS
        for finished in await repo.list_finished_games(self.service.db, since):
            if ui_of(finished).drawn == finished.version:
                continue
            # the last move was stored, its results (or the final scores) never delivered
            redraws.append(self.background(self._resume(finished.game_id, redraw=True)))
        if redraws:
            await asyncio.wait(redraws, timeout=RESUME_WAIT_SECONDS)

    async def _resume(self, game_id: int, *, redraw: bool) -> None:
        try:
            if redraw:
                await self.sync(game_id, [])
        except Exception:
            log.exception("could not resume game %s", game_id)
        self.kick(game_id)

    async def confirm_delivered(self, timeout: float) -> None:
        """At a graceful stop, after the outbox drained: record what was delivered."""
        await self.delivery.flush(timeout)

    async def finish_sends(self, timeout: float) -> None:
        """At a graceful stop, before :meth:`close`: see :meth:`Renderer.sends_done`."""
        await self.renderer.sends_done(timeout)

    async def close(self) -> None:
        self._closing = True
        tasks = [t for t in (*self._drivers.values(), *self._background) if not t.done()]
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        await self.clock.close()


def _log_failure(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("background task failed", exc_info=task.exception())
