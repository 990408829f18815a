"""What each chat of a game shows, drawn from the stored state through the outbox.

:meth:`Renderer.draw` is pure reconciliation: the table message shows ``view(None)``,
each hand ``view(seat)``; a new smazzata gets new messages, otherwise edits (coalesced by
the :class:`~bot.outbox.Outbox`). It writes nothing itself: it fills a :class:`Drawn`
record (new message ids, posted results) that the driver saves as a UI patch.

Priorities in Telegram's budget (:class:`~bot.budget.Priority`): the message a person
just pressed goes before everything (it shows them their own move: part of answering the
press, whatever else waits); then the buttons of the seat in turn (always in its private
hand: cards, the declaration, and the auction's calls), and so do new messages (a
smazzata's results, the next smazzata's table and hands: a few per smazzata; they are
sent outside the game's redraw lock, see :meth:`Renderer.detach`, so the next move's
redraw does not wait for them); then the table; then the hands of players who cannot act
(when the bot's budget is short, these are the ones that wait, merged into one edit).

Bids with your cards (issue 32): the bidder in turn bids from their own private hand (a
private chat gets a call a second, a group one every three): the group's auction message
shows the auction as it goes (each call, the bid to beat, whose turn) with links to the
hand and to the Mini App, never a bid button. A bid costs the presser's own edit and the
next bidder's hand (both private), and the group's edit at the table's rank. The hands'
private-only calls (obbligato ranks, il monte) are buttons drawn for the whole smazzata
(:func:`bot.render.keyboards.stable_calls`), pressed to open the picker or the
confirmation at the player's turn (:mod:`bot.features.auction`), so a waiting hand is not
redrawn for every bid of the others, only when its text or its buttons change, held like
the others'.

Presence (:mod:`bot.presence`): a player whose Mini App page is live at the table gets
nothing in the chat per move (no hand redraw, no turn's buttons): the Mini App shows it.
A press they make in the chat still gets its own redraw. When their page closes, their
hand is brought up to date once, at once (the driver redraws on the presence change);
and a live player whose turn waits :attr:`Renderer.live_turn_seconds` gets the chat's
turn (their hand with the buttons) too, so nobody misses a turn. A table with a human
live in the Mini App serves spectators in the group (the players see the table on their
page or in their own hands): its group edits take the lowest rank and are held until a
milestone (a trick won, the auction's result; where some play in the chat, the auction
is also shown as it goes, several bids in one edit; where all are live, every other
trick won, each edit listing every trick won since the previous one, and a new
smazzata's table is sent with the auction's result, not before, and the old table is
closed with the smazzata's result in it instead of a new message), so that the budget
goes to the players who play in the chat. A new hand whose player is live when the budget grants
its call is not sent (it is when their page closes).

What a waiting player sees: their hand is *held and merged* while the others play
(during the auction up to ``private_lazy_seconds``; in play until the trick ends), and
always brought up to date at the end of each trick (at a table with a player live in
the Mini App, the group's milestone edit shows it instead) and when their turn comes (the
current trick is then in their private message), and right after their own move. The
group table shows every move as it happens while the bot is within its budget; when many
busy tables saturate it, a group gets a bounded share (:mod:`bot.budget`): its table is
redrawn less often, each edit showing every move since the last one, never frozen.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from telegram import InlineKeyboardMarkup, Message

from bot.budget import Priority
from bot.i18n import tr
from bot.outbox import Outbox
from bot.prefs import is_private_chat
from bot.presence import Presence
from bot.ratings import texts as rating_texts
from bot.render import keyboards as kb
from bot.render import texts
from bot.service import names_of
from bot.tables.layout import ChatLayout
from bot.tables.state import UiState, prefs_of, seat_language
from game import Game, TrickView, View
from game.events import (
    BidMade,
    BriscolaScored,
    Dealt,
    DealVoided,
    Event,
    MonteDeclared,
    SmazzataScored,
    SuitDeclared,
    TrickWon,
)
from storage import GameRow
from storage.ratings import RatingSeat

Result = SmazzataScored | BriscolaScored
#: In play, the hand of a player who cannot act waits for the end of the trick (or their
#: turn) — at most this many times ``private_lazy_seconds`` (a minute by default).
HELD_FACTOR = 15.0
#: Events after which a table served only to spectators is redrawn at once (otherwise
#: its group edits are held, merged, up to ``HELD_FACTOR × private_lazy_seconds``): a
#: trick won, the auction's result (once the suit is declared, the move after the last
#: bid: one edit shows both), a deal voided. The smazzata's result is a new message (where
#: all players are live, it is in the closing edit of its table: ``_result_on_close``).
MILESTONES = (TrickWon, SuitDeclared, DealVoided)
#: Where every human playing is live in the Mini App, the group's table (spectators'
#: only) is redrawn at a trick won only once this many tricks were won since its
#: previous edit, which lists them all (the product's decision for issue 32's d: about
#: 0.1 calls a move fewer). The smazzata's last trick closes it at once, as before.
SPECTATOR_TRICKS = 2
#: In the auction, the group of a table with players in the chat and in the Mini App is
#: held this many times ``private_lazy_seconds`` (16 s by default): it shows the auction
#: as it goes, several bids in one edit, when a call is spare.
AUCTION_HELD_FACTOR = 4.0
#: The smazzata results stored for a game (to post those a restart left behind).
ResultsReader = Callable[[int], Awaitable[list[Result]]]
#: A game's rating changes: smazzata index -> the seats of the unit it ended.
RatingsReader = Callable[[int], Awaitable[dict[int, tuple[RatingSeat, ...]]]]


def hand_pressable(view: View, markup: InlineKeyboardMarkup | None, *, away: bool,
                   solo: bool) -> bool:
    """Whether a hand's message carries buttons drawn for this version that its player can
    press now: their turn's (in a group's auction the bidder in turn's hand carries the
    auction's calls; the other hands' private-only calls are drawn for the whole
    smazzata: not for this version)."""
    if not view.legal or away:
        return False
    if solo or view.phase != "auction":
        return solo or markup is not None
    return view.current_seat == view.seat


def hand_urgency(phase: str, *, pressable: bool, solo: bool, just_moved: bool,
                 trick_over: bool, lazy: float, pressed_here: bool = False,
                 ) -> tuple[Priority, float]:
    """The priority of a hand's edit in Telegram's budget and how long it may be held
    (merged with the next ones): see the module's docstring. ``pressed_here``: the
    player just pressed a button of this message; showing the press is part of
    answering it."""
    if pressed_here:
        return Priority.PRESSED, 0.0
    if pressable:
        return Priority.TURN, 0.0
    if solo:  # alone, this message is the table too: never held
        return Priority.TABLE, 0.0
    if just_moved or trick_over:  # due now, after the turns and the tables
        return Priority.IDLE, 0.0
    if phase == "play":  # held until the trick ends or their turn comes
        return Priority.IDLE, lazy * HELD_FACTOR
    return Priority.IDLE, lazy


def seat_names(row: GameRow, game: Game, lang: str) -> list[str]:
    """Names by game seat; il morto's seat (nobody's, R86) is shown as such."""
    names = names_of(row, game.n)
    if game.morto is not None:
        names[game.morto] = tr(lang, "seat.morto")
    return names


#: Computes what a new message's landing stores (or None: nothing, it came too late),
#: from the latest UI state and the game's current smazzata.
Landing = Callable[[UiState, int], dict[str, Any] | None]


@dataclass
class Drawn:
    """What one redraw did: UI fields to store, and whether the version is on its way."""

    ui: UiState
    changes: dict[str, Any] = field(default_factory=dict)
    #: Chats with content of this version queued (None: nothing new was drawn).
    chats: set[int] | None = None
    #: Stores what a new message's send brought, computed from the latest UI state under
    #: the game's redraw lock (set by the driver; see :meth:`Renderer.detach`); True if
    #: something was stored.
    land: Callable[[Landing], Awaitable[bool]] | None = None
    #: New messages being sent, outside the game's redraw lock (the driver awaits them
    #: after releasing it): True if the message was sent and stored.
    pending: list[asyncio.Task[bool]] = field(default_factory=list)

    def set(self, **changes: Any) -> None:
        self.changes.update(changes)
        self.ui = self.ui.merged(changes)


#: One new message of a detached sequence: (chat, text, keyboard, thread, what its
#: landing stores given the sent message or None, what to show instead if it came too
#: late for the game: (text for the message) or None, its rank in the budget, and
#: whether it is still wanted when the budget grants it (None: always)).
NewMessage = tuple[int, str, InlineKeyboardMarkup | None, int | None,
                   Callable[[Message | None, UiState, int], dict[str, Any] | None],
                   str | None, Priority, Callable[[], bool] | None]


class Renderer:
    def __init__(self, outbox: Outbox, layout: ChatLayout, results: ResultsReader,
                 bot_username: Callable[[], str | None],
                 presence: Presence | None = None) -> None:
        self.outbox = outbox
        self.layout = layout
        self.results = results
        #: The rating changes of a game's rated units, by smazzata (None: not shown).
        self.ratings: RatingsReader | None = None
        self.bot_username = bot_username
        #: Private messages last drawn with something to press (their edits are urgent).
        self._pressable: set[tuple[int, int]] = set()
        #: (game, seat) -> (message, callback data) of the buttons last asked for a hand.
        self._buttons: dict[tuple[int, int], tuple[int, frozenset[str]]] = {}
        #: New messages being sent outside the redraw lock: (game, "group" or "hand:<seat>").
        self._sending: set[tuple[int, str]] = set()
        #: (game, user) -> ((game, seat), chat, message) of the hand last drawn for them
        self._hand_of: dict[tuple[int, int], tuple[tuple[int, int], int, int]] = {}
        #: the tasks sending new messages (see :meth:`detach`)
        self._sends: set[asyncio.Task[bool]] = set()
        #: How long an edit of a private message that nobody can press may wait, so that
        #: several moves of the others become one edit (real seconds; tests scale it).
        self.private_lazy_seconds = 4.0
        #: The Mini App (WEBAPP_URL, WEBAPP_SHORT_NAME): None draws no button for it.
        self.webapp_url: str | None = None
        self.webapp_short_name: str | None = None
        #: Who is live in the Mini App (their chat gets nothing per move).
        self.presence = presence or Presence()
        #: A live player whose turn waits this long gets the chat's turn too (seconds).
        self.live_turn_seconds = 20.0
        #: Asks for a redraw of a game (id, version) in so many seconds if it is still
        #: at that version (set by the driver): the chat's turn of a live player who
        #: lets it wait.
        self.wake: Callable[[int, int, float], None] | None = None
        #: Hands not redrawn while their player was live: brought up to date at once.
        self._behind: set[tuple[int, int]] = set()
        #: (game, user) whose last page just closed (see :meth:`back`).
        self._back: set[tuple[int, int]] = set()
        #: Messages of past smazzate of live players, closed when they are back (chat,
        #: message, final text), by (game, seat).
        self._unclosed: dict[tuple[int, int], list[tuple[int, int, str]]] = {}
        #: (game, seat) of a live player in turn -> (version, since when: monotonic).
        self._live_turn: dict[tuple[int, int], tuple[int, float]] = {}
        #: Games whose table someone asked for (/tavolo): sent at the next redraw.
        self._table_asked: set[int] = set()
        #: game -> (table message, how many of its smazzata's tricks it showed when it
        #: was last sent or edited): the tricks won since are listed in its next edit.
        self._table_shown: dict[int, tuple[int, int]] = {}

    async def draw(self, row: GameRow, game: Game, drawn: Drawn,
                   events: Sequence[Event], pressed: tuple[int, int] | None = None) -> None:
        """Bring every message of ``row`` in line with ``game`` (fills ``drawn``).

        ``pressed``: the message (chat, id) whose button made the move: its redraw shows
        the presser their own move, and goes first (part of answering the press). The
        group's messages and the hands go at the same time: a new smazzata's hands (the
        first bidder's buttons) do not wait for the group's results and table."""
        prefs = prefs_of(row)
        lang, style = prefs.language, prefs.options.deck_style.value
        names = seat_names(row, game, lang)
        chat_id = self.outbox.resolve(self.layout.table_chat(row))
        ui = drawn.ui
        if ui.table is not None and (ui.table_chat or row.chat_id) != chat_id:
            drawn.set(table=None)  # the group became a supergroup: the old one is read-only
        void_unseen = drawn.ui.table is None and any(isinstance(e, DealVoided)
                                                     for e in events)
        if drawn.ui.table is not None and (
            drawn.ui.table_smz != game.smazzata_index or game.is_over()
        ):
            result = self._result_on_close(row, game, drawn, names, lang, style)
            last = game.last_score or game.last_briscola
            if result is not None and last is not None:
                result = await self._with_ratings(row, last.smazzata, result, names, lang)
            closing = _closing_events(game, events)
            self._close_smazzata(row, drawn.ui, closing, names, lang, style,
                                 game.is_over(), result,
                                 self._unshown_before(row.game_id, game, drawn.ui.table,
                                                     closing), pressed)
            drawn.set(table=None, hands=None)
            if result is not None:
                drawn.set(scored=game.scored_count)  # (shown by the closing edit)

        # a hand pressed is asked for first (its edit is the first call after the answer);
        # at a new smazzata the group's results and table are reserved first
        hand_first = (pressed is not None and drawn.ui.table is not None
                      and pressed != (chat_id, drawn.ui.table))

        async def group() -> None:
            if (row.game_id, "group") in self._sending:
                return  # its results and new table are on their way (then a redraw)
            messages = await self._post_results(row, game, drawn, names, lang, style, chat_id)
            if (void_unseen and not is_private_chat(row.chat_id)
                    and drawn.ui.table_smz != game.smazzata_index):
                # a deal voided before its table was sent (all in the Mini App: it waited
                # for the auction's result): the group is told so
                text = _closing_text(events, game.smazzata_index - 1, names, lang, style)
                messages.append((chat_id, text, None, row.thread_id, _nothing, None,
                                 self.group_rank(row), None))
            if not game.is_over():
                table = self._draw_table(row, game, drawn, names, lang, chat_id, events,
                                         pressed)
                messages += [table] if table is not None else []
            if messages:
                self.detach(drawn, row.game_id, "group", messages)

        async def hands() -> None:
            if not game.is_over():
                if not hand_first:
                    await asyncio.sleep(0)  # the group's first call is reserved first
                await self._draw_hands(row, game, drawn, names, lang, events, pressed)

        parts = (hands(), group()) if hand_first else (group(), hands())
        failed = [r for r in await asyncio.gather(*parts, return_exceptions=True)
                  if isinstance(r, BaseException)]
        if failed:  # (both finished: what they sent is in ``drawn``)
            raise failed[0]
        if drawn.ui.drawn != row.version and not self.sending(row.game_id):
            drawn.chats = self.chats(row)

    def chats(self, row: GameRow) -> set[int]:
        """Every chat that shows the game."""
        return self.layout.chats(row) | {self.outbox.resolve(self.layout.table_chat(row))}

    def sending(self, game_id: int) -> bool:
        """Whether new messages of the game are on their way (not stored yet)."""
        return any(key[0] == game_id for key in self._sending)

    def detach(self, drawn: Drawn, game_id: int, slot: str,
               messages: Sequence[NewMessage]) -> None:
        """Send new messages (in this order) outside the game's redraw lock: a new
        smazzata's results, table and hands wait for Telegram's budget (at 50 tables
        starting at once, seconds) while the next move's redraw (the next bidder's
        keyboard) goes on. Each one is stored as soon as it is sent (``Drawn.land``: a
        process that dies later does not send it again); meanwhile the slot is marked
        in flight, so that no other redraw sends it too; a message that comes too late
        (the smazzata moved on) is closed, not stored. The driver awaits
        ``drawn.pending`` after releasing the lock, then redraws (the new messages get
        the latest content)."""
        key = (game_id, slot)
        self._sending.add(key)

        async def run() -> bool:
            landed = False
            try:
                for chat, text, markup, thread, stores, late, priority, wanted in messages:
                    msg = await self.outbox.send(chat, text, markup, thread_id=thread,
                                                 priority=priority, wanted=wanted)
                    stored = drawn.land is not None and await drawn.land(
                        functools.partial(stores, msg))
                    # (a hand not sent, its player live: done too, the version is shown)
                    skipped = msg is None and wanted is not None and not wanted()
                    landed = landed or (stored and msg is not None) or skipped
                    if not stored and msg is not None and late is not None:
                        self.outbox.edit(msg.chat.id, msg.message_id, late, None)
            finally:
                self._sending.discard(key)
            return landed

        task = asyncio.get_running_loop().create_task(run(), name=f"send:{game_id}:{slot}")
        self._sends.add(task)
        task.add_done_callback(self._sends.discard)
        drawn.pending.append(task)

    async def sends_done(self, timeout: float) -> None:
        """Wait (at most ``timeout`` s) for the new messages on their way to be sent and
        stored: a graceful stop that cancelled them could leave a message delivered whose
        id was never stored (its buttons never closed, a new copy sent after the restart)."""
        if self._sends and timeout > 0:
            await asyncio.wait(set(self._sends), timeout=timeout)

    async def _post_results(
        self, row: GameRow, game: Game, drawn: Drawn, names: list[str], lang: str,
        style: str, chat_id: int,
    ) -> list[NewMessage]:
        """The results not posted yet, then the final scores, as new messages."""
        messages: list[NewMessage] = []
        posted = drawn.ui.scored
        # the match's last message: the final scores, the match's rating changes and
        # 🔁 Rivincita together (the last result then leaves its rating block to it)
        final = game.is_over() and not drawn.ui.over and game.final is not None
        if game.scored_count > posted:
            results = await self._results(row, game, posted)
            for i, result in enumerate(results, start=posted + 1):
                over = game.is_over() and i == game.scored_count
                text = texts.any_result_text(lang, style, result, names, over, game.morto)
                if not (over and final):
                    text = await self._with_ratings(row, result.smazzata, text, names, lang)
                messages.append((chat_id, text, None, row.thread_id, _scored(i), None,
                                 self.group_rank(row), None))
        if final:
            assert game.final is not None
            text = texts.final_text(lang, game.final, names, game.rules.game, game.rules.sides,
                                    alone=is_private_chat(row.chat_id))
            if self.ratings is not None:
                units = await self.ratings(row.game_id)
                text = rating_texts.with_match_changes(
                    lang, text, [units[k] for k in sorted(units)], names)
            # 🔁 Rivincita under the match's last message (bot/features/rematch.py)
            messages.append((chat_id, text, kb.rematch_keyboard(lang, row.game_id),
                             row.thread_id, _over, None, self.group_rank(row), None))
        return messages

    async def _with_ratings(self, row: GameRow, smazzata: int, text: str, names: list[str],
                            lang: str) -> str:
        """A result with the rating changes of the unit it ended, if it ended one."""
        seats = None if self.ratings is None else \
            (await self.ratings(row.game_id)).get(smazzata)
        if not seats:
            return text
        return rating_texts.with_changes(lang, text, seats, names)

    async def _results(self, row: GameRow, game: Game, posted: int) -> list[Result]:
        """The results not posted yet (several if the redraws fell behind, e.g. a restart)."""
        last: Result | None = game.last_score or game.last_briscola
        if game.scored_count == posted + 1 and last is not None:
            return [last]
        return (await self.results(row.game_id))[posted : game.scored_count]

    def _result_on_close(self, row: GameRow, game: Game, drawn: Drawn, names: list[str],
                         lang: str, style: str) -> str | None:
        """The result of the smazzata whose table is being closed, to show in that
        closing edit instead of a new message, where the group serves spectators only
        (every player live in the Mini App: nothing else is posted there in between, so
        the table is the group's newest message): one call instead of two at the end of
        each smazzata. None: it goes as a new message (see :meth:`_post_results`)."""
        if (game.is_over() or is_private_chat(row.chat_id)
                or game.scored_count != drawn.ui.scored + 1
                or drawn.ui.table_smz != game.smazzata_index - 1 or not self._all_live(row)):
            return None
        last: Result | None = game.last_score or game.last_briscola
        if last is None:
            return None
        return texts.any_result_text(lang, style, last, names, False, game.morto)

    def _close_smazzata(
        self, row: GameRow, ui: UiState, events: Sequence[Event], names: list[str],
        lang: str, style: str, over: bool = False, result: str | None = None,
        unshown: Sequence[TrickView] = (),
        pressed: tuple[int, int] | None = None,
    ) -> None:
        """Final edit of the previous smazzata's messages (no keyboards left behind;
        ``result``: the group's shows the smazzata's result too; ``unshown``: the tricks
        won before the last one that the table has not shown yet, listed in it). A live
        player's are closed when they are back in the chat (see :meth:`_close`), or at
        the match's end. The message whose button made the move that ended it
        (``pressed``: its last card) is closed first, at once: it shows the presser
        their own move (issue 46: a hand waited for the others' lazy close, 4 s)."""
        smz = ui.table_smz
        text = _closing_text(events, smz, names, lang, style)
        assert ui.table is not None
        solo = is_private_chat(row.chat_id)
        self._table_shown.pop(row.game_id, None)
        if not solo or over or not self.presence.live(row.game_id, row.chat_id):
            table = _closing_text(events, smz, names, lang, style, unshown) if unshown else text
            table_chat = self.layout.table_chat(row)
            self.outbox.edit(table_chat, ui.table,
                             table if result is None else f"{table}\n\n{result}", None,
                             priority=Priority.PRESSED if pressed == (table_chat, ui.table)
                             else Priority.TABLE)
        for seat_no, mid in ui.hands.items():
            seat = row.seat(seat_no)
            chat = None if seat is None else self.layout.hand_chat(seat)
            if seat is not None and chat is not None:
                key = (row.game_id, seat.seat)
                self._pressable.discard(key)
                self._buttons.pop(key, None)
                if seat.user_id is not None:
                    self._hand_of.pop((row.game_id, seat.user_id), None)
                finished = text if solo else tr(seat_language(seat, lang), "private.finished",
                                                n=smz + 1)
                if not over and self.presence.live(row.game_id, seat.user_id):
                    self._unclosed.setdefault(key, []).append((chat, mid, finished))
                elif not solo and pressed == (chat, mid):  # (its own move: at once)
                    self.outbox.edit(chat, mid, finished, priority=Priority.PRESSED)
                elif not solo:  # (alone: the hand's message was the table, closed above)
                    self.outbox.edit(chat, mid, finished, delay=self.private_lazy_seconds,
                                     priority=Priority.IDLE)

    def _close(self, key: tuple[int, int]) -> None:
        """Close the messages of past smazzate left open while their player was live."""
        for chat, mid, text in self._unclosed.pop(key, ()):
            self.outbox.edit(chat, mid, text, None, priority=Priority.IDLE)

    def _draw_table(
        self, row: GameRow, game: Game, drawn: Drawn, names: list[str], lang: str,
        chat_id: int, events: Sequence[Event] = (), pressed: tuple[int, int] | None = None,
    ) -> NewMessage | None:
        """The table's edit, or (a new smazzata) the new table message to send."""
        if is_private_chat(row.chat_id):
            return None  # alone: the hand's message shows the table (see _draw_hands)
        view = game.view(None)
        since = self._shown_tricks(row.game_id, drawn.ui.table)
        text = texts.table_text(lang, view, names, since=since)
        # no bid button: the bidder in turn bids from their hand (see the docstring)
        markup = kb.with_table_button(self.hand_link(lang), tr(lang, "webapp.button"),
                                      url=self.webapp_link(row.game_id))
        priority, delay = self.group_rank(row), 0.0
        if priority == Priority.IDLE and not self._milestone(row, view, events, since):
            # held until a milestone; at a table with chat players too, the auction is
            # shown as it goes, a few bids in one edit
            mixed = view.phase == "auction" and not self._all_live(row)
            delay = self.private_lazy_seconds * (AUCTION_HELD_FACTOR if mixed
                                                 else HELD_FACTOR)
        if pressed is not None and pressed == (chat_id, drawn.ui.table):
            priority, delay = Priority.PRESSED, 0.0  # (a keyboard drawn before issue 32)
        if drawn.ui.table is None:
            if (priority == Priority.IDLE and view.phase in ("auction", "declaration")
                    and row.game_id not in self._table_asked and self._all_live(row)):
                # spectators only: the new table comes with the auction's result, its
                # first milestone (one call, not a send and then that edit)
                return None
            self._table_asked.discard(row.game_id)
            smazzata, tricks = game.smazzata_index, len(view.tricks)

            def stores(msg: Message | None, ui: UiState, now: int) -> dict[str, Any] | None:
                if msg is None or now != smazzata or ui.table is not None:
                    return None
                self._table_shown[row.game_id] = (msg.message_id, tricks)
                return {"table": msg.message_id, "table_chat": msg.chat.id,
                        "table_smz": smazzata}

            return (chat_id, text, markup, row.thread_id, stores,
                    tr(lang, "table.finished", n=smazzata + 1), priority, None)
        self.outbox.edit(self.layout.table_chat(row), drawn.ui.table, text, markup,
                         delay=delay, priority=priority,
                         shown=functools.partial(self._table_shown.__setitem__, row.game_id,
                                                 (drawn.ui.table, len(view.tricks))))
        return None

    def _shown_tricks(self, game_id: int, table: int | None) -> int | None:
        """How many tricks the table message showed when last sent or edited (None: not
        known, e.g. after a restart)."""
        shown = self._table_shown.get(game_id)
        return shown[1] if shown is not None and shown[0] == table else None

    def _milestone(self, row: GameRow, view: View, events: Sequence[Event],
                   since: int | None) -> bool:
        """Whether a spectators' table (see :meth:`group_rank`) is redrawn now: at the
        auction's result, a deal voided, a trick won, but where every human playing is
        live only once :data:`SPECTATOR_TRICKS` tricks were won since its previous edit
        (that edit lists them; as soon as someone is back in the chat, every trick)."""
        if not any(isinstance(e, MILESTONES) for e in events):
            return False
        if not all(isinstance(e, TrickWon) for e in events if isinstance(e, MILESTONES)):
            return True
        return (since is None or not self._all_live(row)
                or len(view.tricks) - since >= SPECTATOR_TRICKS)

    def _unshown_before(self, game_id: int, game: Game, table: int | None,
                        closing: Sequence[Event]) -> tuple[TrickView, ...]:
        """The tricks of the smazzata being closed, won before its last one, that its
        table message has not shown (its closing edit lists them)."""
        since = self._shown_tricks(game_id, table)
        last = next((e for e in reversed(closing) if isinstance(e, TrickWon)), None)
        if since is None or last is None:
            return ()
        tricks = game.view(None).scored_tricks
        if not tricks or (tricks[-1].trick, tricks[-1].winner) != (last.trick, last.seat):
            return ()  # (not that smazzata's: a redraw fell behind)
        return tricks[since:-1]

    def table_asked(self, game_id: int) -> None:
        """Someone asked for the table (/tavolo): the next redraw sends it, also where
        it would wait for the auction's result (see :meth:`_draw_table`)."""
        self._table_asked.add(game_id)

    def live(self, game_id: int, user_id: int) -> None:
        """``user_id``'s page on ``game_id`` opened: the redraw of their chat hand that
        waits in the outbox (a lazy one, held seconds) is not made, at once, before the
        redraw that follows the page's opening (see :meth:`_draw_hands`); it is redrawn
        when they are back."""
        entry = self._hand_of.get((game_id, user_id))
        if entry is not None:
            key, chat, mid = entry
            self.outbox.withdraw(chat, mid)
            self._behind.add(key)
            self._pressable.discard(key)

    def back(self, game_id: int, user_id: int) -> None:
        """``user_id``'s last page on ``game_id`` closed: at the next redraw their chat
        hand is brought up to date at once (at a turn's rank), whatever the outbox was
        holding for it (a waiting hand's edit, held up to a minute in play)."""
        self._back.add((game_id, user_id))

    def _anyone_live(self, row: GameRow) -> bool:
        return any(self.presence.live(row.game_id, s.user_id) for s in row.seats
                   if s.is_human and not s.away)

    def _all_live(self, row: GameRow) -> bool:
        players = (s.user_id for s in row.seats if s.is_human and not s.away)
        return self.presence.all_live(row.game_id, players)

    def group_rank(self, row: GameRow) -> Priority:
        """The rank of the group's messages (the table, the results): a table's, or the
        lowest when a human playing is live in the Mini App; alone in a private chat, the
        player's own (a turn's).

        With someone in the Mini App the group serves spectators: the players there see
        the table on their page, those in the chat the auction and the trick in their
        own hands (the bidder in turn bids there). Its edits then go when a call is
        spare, held until a milestone (see :meth:`_draw_table`), so that the budget goes
        to the chat players' own moves and turns: at 50 tables of human pace with 60%
        of the seats in the Mini App the group's edits at a table's rank were 0.76
        calls a move of 1.80 (issue 32 wants at most 1.2 in all)."""
        if is_private_chat(row.chat_id):
            return Priority.TURN
        return Priority.IDLE if self._anyone_live(row) else Priority.TABLE

    def webapp_page(self, game_id: int) -> str | None:
        """The Mini App's address for one table (a private chat's ``web_app`` button)."""
        if self.webapp_url is None:
            return None
        return f"{self.webapp_url}{'&' if '?' in self.webapp_url else '?'}table={game_id}"

    def webapp_link(self, game_id: int) -> str | None:
        """The direct link that opens the Mini App on a table inside a group."""
        username = self.bot_username()
        if self.webapp_url is None or self.webapp_short_name is None or not username:
            return None
        return f"https://t.me/{username}/{self.webapp_short_name}?startapp={game_id}"

    def hand_link(self, lang: str) -> InlineKeyboardMarkup | None:
        username = self.bot_username()
        if not username:
            return None
        return kb.url_keyboard(tr(lang, "btn.my_hand"), f"https://t.me/{username}")

    async def _draw_hands(
        self, row: GameRow, game: Game, drawn: Drawn, names: list[str], lang: str,
        events: Sequence[Event], pressed: tuple[int, int] | None = None,
    ) -> None:
        """Each human's private message. Edits are urgent for whoever can press something
        now or could a moment ago; the others' wait up to ``private_lazy_seconds`` so that
        several moves become one edit (the outbox also keeps each chat under 1 call/s),
        except at the end of a trick.

        Alone against computers (a private chat) the hand's message is also the table: it
        holds the auction's calls too, and is closed and replaced like a table."""
        # the waiting hands show a trick's end at once; at a table with a player in the
        # Mini App the group shows it (its milestone), the hands at their turn: two calls
        # a trick fewer (0.28 calls a move of 1.36 at 50 such tables, issue 32's c)
        trick_over = (any(isinstance(e, TrickWon) for e in events)
                      and self.group_rank(row) != Priority.IDLE)
        # who made a private call: their hand still shows the picker they called from
        bidders = {e.seat for e in events if isinstance(e, BidMade) and e.code[0] == "o"}
        solo = is_private_chat(row.chat_id)
        seats = sorted(row.seats, key=lambda s: pressed is None
                       or self.layout.hand_chat(s) != pressed[0])  # the presser's first
        for seat in seats:
            chat = self.layout.hand_chat(seat)
            mid = drawn.ui.hands.get(seat.seat)
            if chat is None:
                continue
            if mid is None and (row.game_id, f"hand:{seat.seat}") in self._sending:
                # a new hand on its way (the redraw after it draws it): sent as a turn's
                # if its player's turn has come meanwhile (the first bidder in the Mini
                # App bid while 50 new tables' hands were being sent)
                if game.current_seat() == seat.seat:
                    self.outbox.promote(chat, Priority.TURN)
                continue
            key = (row.game_id, seat.seat)
            live = not seat.away and self.presence.live(row.game_id, seat.user_id)
            pressed_here = pressed is not None and pressed == (chat, mid)
            if live and not pressed_here and not self._live_turn_due(
                    key, game.version, game.current_seat() == seat.seat):
                self._behind.add(key)  # the Mini App shows it: nothing in the chat,
                self._pressable.discard(key)
                if mid is not None:  # not even a redraw asked before the page opened
                    self.outbox.withdraw(chat, mid)  # (redrawn when back, see _behind)
                continue
            if not live:
                self._live_turn.pop(key, None)
                if (row.game_id, seat.user_id) in self._back:  # their page just closed
                    self._back.discard((row.game_id, seat.user_id))
                    self._behind.add(key)
            view = game.view(seat.seat)
            plang = seat_language(seat, lang)
            note = tr(plang, "private.away_note") if seat.away else ""
            text = texts.hand_text(plang, view, names, note)
            # the bidder in turn bids from their hand (no bid button in the group)
            bidding = (not solo and not seat.away and view.phase == "auction"
                       and view.current_seat == seat.seat)
            if (solo or bidding) and not seat.away:
                markup = kb.solo_keyboard(plang, row.game_id, view, stable=not solo)
            else:
                markup = kb.private_keyboard(plang, row.game_id, view, away=seat.away)
            buttons = frozenset(kb.all_callback_data(markup))
            pressable = bidding or hand_pressable(view, markup, away=seat.away, solo=solo)
            just_moved = not pressable and (key in self._pressable or seat.seat in bidders)
            if pressable:
                self._pressable.add(key)
            else:
                self._pressable.discard(key)
            pressable = pressable or (view.current_seat == seat.seat and not seat.away
                                      and self._new_buttons(key, mid, buttons))
            markup = kb.with_table_button(markup, tr(plang, "webapp.button"),
                                          web_app=self.webapp_page(row.game_id))
            priority, delay = hand_urgency(
                view.phase, pressable=pressable, solo=solo, just_moved=just_moved,
                trick_over=trick_over, lazy=self.private_lazy_seconds,
                pressed_here=pressed_here)
            if key in self._behind:  # back from the Mini App: brought up to date at once
                self._behind.discard(key)
                self._close(key)
                priority, delay = min(priority, Priority.TURN), 0.0
            if mid is None:  # a new smazzata: the cards to bid on unblock play; the new
                # hands all at once, outside the redraw lock (see :meth:`detach`). The
                # hands of a group's new smazzata whose players cannot act yet go after
                # the turns (50 tables starting at once are ~300 new messages: the next
                # bidders' keyboards go before them); a hand sent again (/mano) does not,
                # nor one at a table with players in the Mini App (they bid within a
                # second: the chat player's turn would wait for their hand in flight).
                rank = (Priority.TURN if solo or pressable or drawn.ui.hands
                        or view.current_seat == seat.seat or self._anyone_live(row)
                        else Priority.TABLE)
                self.detach(drawn, row.game_id, f"hand:{seat.seat}", [
                    self._new_hand(chat, text, markup, key, buttons, game.smazzata_index,
                                   solo, tr(plang, "private.finished",
                                            n=game.smazzata_index + 1), rank,
                                   None if seat.away else seat.user_id)])
            else:
                self.outbox.edit(chat, mid, text, markup, delay=delay, priority=priority)
                self._buttons[key] = (mid, buttons)
                if seat.user_id is not None:
                    self._hand_of[(row.game_id, seat.user_id)] = (key, chat, mid)

    def _new_hand(self, chat: int, text: str, markup: InlineKeyboardMarkup | None,
                  key: tuple[int, int], buttons: frozenset[str], smazzata: int, solo: bool,
                  late: str, priority: Priority, user_id: int | None) -> NewMessage:
        """A new hand's message. Not sent if its player is live in the Mini App once the
        budget grants it (their page opened while it waited: at 200 tables starting at
        once, a thousand hands nobody looks at held the turns up for a minute): it is
        sent when their page closes, as a hand left behind."""
        seat_no = key[1]

        def wanted() -> bool:
            if self.presence.live(key[0], user_id):
                self._behind.add(key)
                return False
            return True

        def stores(msg: Message | None, ui: UiState, now: int) -> dict[str, Any] | None:
            if msg is None or now != smazzata or ui.hands.get(seat_no) is not None:
                return None
            self._buttons[key] = (msg.message_id, buttons)
            changes: dict[str, Any] = {"hands": {**ui.hands, seat_no: msg.message_id}}
            if solo:  # alone: the hand's message is the table
                changes.update(table=msg.message_id, table_chat=msg.chat.id,
                               table_smz=smazzata)
            return changes

        return chat, text, markup, None, stores, late, priority, wanted

    def _live_turn_due(self, key: tuple[int, int], version: int, in_turn: bool) -> bool:
        """Whether a live player's turn (``key``: game, seat) has waited
        :attr:`live_turn_seconds` at ``version``: the chat's turn goes too (the first
        time a turn is seen, a redraw is asked for then)."""
        if not in_turn:
            self._live_turn.pop(key, None)
            return False
        now = time.monotonic()
        since = self._live_turn.get(key)
        if since is None or since[0] != version:
            since = self._live_turn[key] = (version, now)
            if self.wake is not None:
                self.wake(key[0], version, self.live_turn_seconds)
        return now - since[1] >= self.live_turn_seconds

    def _new_buttons(self, key: tuple[int, int], mid: int | None,
                     buttons: frozenset[str]) -> bool:
        """Whether ``buttons`` has one not asked for that hand's message before (its
        buttons drawn for the smazzata, e.g. back from "away", or after a restart)."""
        return not buttons <= self._asked(key, mid)

    def _asked(self, key: tuple[int, int], mid: int | None) -> frozenset[str]:
        """The buttons last asked for that hand's message (none if it is another one)."""
        asked = self._buttons.get(key)
        return asked[1] if asked is not None and asked[0] == mid else frozenset()

    def cancelled(self, row: GameRow, ui: UiState, *, table: bool = True) -> None:
        """/annulla, or the group is gone: the table and every hand say so, no buttons."""
        lang = prefs_of(row).language
        chat_id = self.outbox.resolve(self.layout.table_chat(row))
        if table and ui.table is not None and (ui.table_chat or row.chat_id) == chat_id:
            self.outbox.edit(chat_id, ui.table, tr(lang, "table.cancelled"), None)
        for seat_no, mid in ui.hands.items():
            seat = row.seat(seat_no)
            chat = None if seat is None else self.layout.hand_chat(seat)
            solo_table = table and is_private_chat(row.chat_id)  # (already edited above)
            if seat is not None and chat is not None and not solo_table:
                self.outbox.edit(chat, mid, tr(seat_language(seat, lang), "table.cancelled"),
                                 None)


def _closing_events(game: Game, events: Sequence[Event]) -> Sequence[Event]:
    """The events that ended the previous smazzata: ``events`` when they hold its end, else
    (a redraw without them ran first, e.g. after new messages landed) the game's log of
    that smazzata, so its table is closed with what ended it (a deal voided, the last
    trick) whichever redraw closes it."""
    if any(isinstance(e, (DealVoided, TrickWon)) for e in events):
        return events
    starts = [i for i, e in enumerate(game.history) if isinstance(e, Dealt)]
    if not starts:
        return events
    if game.is_over():
        return game.history[starts[-1]:]
    return game.history[starts[-2]:starts[-1]] if len(starts) > 1 else events


def _closing_text(events: Sequence[Event], smz: int, names: list[str], lang: str,
                  style: str, unshown: Sequence[TrickView] = ()) -> str:
    """What the messages of smazzata ``smz`` show once it is over (``events``: those of
    the move that ended it): the deal voided, or its last trick."""
    void = next((e for e in events if isinstance(e, DealVoided)), None)
    last = next((e for e in reversed(events) if isinstance(e, TrickWon)), None)
    if void is not None:
        monte = next((e.seat for e in events if isinstance(e, MonteDeclared)), None)
        return texts.voided_text(lang, smz, void.reason, names, monte)
    if last is not None:
        return texts.finished_table_text(lang, style, smz, names, last.seat, last.cards,
                                         last.trick, unshown)
    return tr(lang, "table.finished", n=smz + 1)


def _nothing(msg: Message | None, ui: UiState, now: int) -> dict[str, Any] | None:
    return None


def _scored(i: int) -> Callable[[Message | None, UiState, int], dict[str, Any] | None]:
    """A result's landing: the results posted are now ``i`` (sent or refused)."""
    def stores(msg: Message | None, ui: UiState, now: int) -> dict[str, Any] | None:
        return {"scored": i} if ui.scored < i else None

    return stores


def _over(msg: Message | None, ui: UiState, now: int) -> dict[str, Any] | None:
    return None if ui.over else {"over": True}
