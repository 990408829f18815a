"""Load benchmark: the real bot (``python -m bot`` in a subprocess) against the fake Bot
API server, N tables of five simulated humans clicking at a set pace, then an echo bot
(``bench.echo``) on the same server with the same rate of clicks as the floor; and an
echo bot alongside, clicked during the bot's window on a second fake server in the same
process (the same machine and harness load as the bot).

    python -m bench.load --tables 10 50 200 --seconds 60
    python -m bench.load --tables 50 --think human --miniapp-share 0.6
    python -m bench.load --solo 30 --computer-level esperto

``--solo N``: N tables of one person each (in the Mini App, pausing like a person) and four
of the bot's computers; the details line gives how long a computer's move took beyond the
display pause and the CPU of the decisions (the search pool's processes included).

For each N it prints: updates processed per second; p50/p95/p99 latency from an update
being offered by getUpdates to the bot's first API call for it (callback queries: their
answerCallbackQuery) and the same for the echo bot; the oldest update (user action ->
first call) and how many were older than 2 s; updates never handled (lost); how long a
player waits from their turn being stored to their buttons being on screen ("next
button": the pace the table feels, bounded by the bot's paced rendering); CPU seconds
per update; peak memory and memory per active game; database growth per 1,000 smazzate
and Bot API calls per smazzata (measured per stored move, times the moves of a smazzata
played with the same policy by the game core: with many tables few smazzate end inside
the window). The fake server enforces Telegram's flood limits (per chat,
per group, global) unless ``--no-flood``; the bot runs with its production defaults.

Everything runs on 127.0.0.1 and stops by itself.
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import contextlib
import gc
import os
import random
import re
import socket
import sys
import tempfile
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from bench.miniapp import MiniAppSeat
from bench.sim import BotProcess, SimTable, Think, World, open_reader, simple_policy
from bot.config import Settings
from game import Game, TableOptions, parse_action
from game.players import LEVELS
from sandbox.fakeapi import FakeTelegram, PendingUpdate
from storage import Database, is_postgres_url, repo
from storage.postgres import create_database, drop_database

KINDS = ("message", "callback_query")
#: The harness's collector once the tables are set up (``--harness-gc tuned``): the same
#: as the bot's (``bot.__main__.GC_THRESHOLDS``), after ``gc.freeze()``.
HARNESS_GC_THRESHOLDS = (20_000, 20, 10)
#: ``--solo``: tables set up at once (each adds its four computers from the lobby: at 200
#: tables, 800 such presses at once were not all answered within 30 s on a loaded machine).
SOLO_OPENING = 20


@contextlib.contextmanager
def harness_collector(mode: str) -> Iterator[None]:
    """``tuned``: what the set-up made (a thousand pages, the tables) is frozen out of
    the collector's passes and the thresholds are :data:`HARNESS_GC_THRESHOLDS`, until
    the block ends. Every timestamp of the figures is taken on this process's event
    loop (an update offered, a press answered, for the bot and the echo alike), so its
    collections land on both: with CPython's defaults, passes of 5-180 ms (a full one
    every ~20 s at 200 tables) were the largest part of the slowest clicks' latency, for
    the bot and the echo alongside (issue 32). ``default``: CPython's collector as is."""
    if mode != "tuned":
        yield
        return
    before = gc.get_threshold()
    gc.collect()
    gc.freeze()
    gc.set_threshold(*HARNESS_GC_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()


@dataclass
class Figures:
    tables: int
    seconds: float = 0.0
    setup_seconds: float = 0.0
    updates: int = 0
    callbacks: int = 0
    p50: float = 0.0
    p95: float = 0.0
    p99: float = 0.0
    max_age: float = 0.0
    older_than_2s: int = 0
    lost: int = 0
    cpu_per_update: float = 0.0
    bot_cpu_share: float = 0.0
    harness_cpu_share: float = 0.0
    peak_rss_mib: float = 0.0
    rss_per_game_kib: float = 0.0
    db_kib_per_1000: float | None = None
    smazzate: int = 0
    actions: int = 0
    actions_per_smazzata: float = 0.0
    calls: int = 0
    calls_per_smazzata: float | None = None
    call_mix: Counter[str] = field(default_factory=Counter)
    #: editMessage* calls of the window: to groups, to private chats, answered with an error
    edit_split: Counter[str] = field(default_factory=Counter)
    flood_429: int = 0
    #: Successful message calls (sends, edits) of the window.
    message_calls: int = 0
    turn_p50: float = float("nan")
    turn_p95: float = float("nan")
    #: The bot's side of the next button: from a move's answer to the first Bot API call
    #: carrying the buttons of the next version (whoever polls for them, and when).
    bot_turn_p50: float = float("nan")
    bot_turn_p95: float = float("nan")
    #: Moves of the window by phase (auction, declaration, play): at many tables a short
    #: warm-up measures the auction, where each bid is a group call.
    phases: Counter[str] = field(default_factory=Counter)
    #: Next-button waits by where the buttons are: "group" (the auction's keyboard),
    #: "private" (the hand: cards, declaration) -> (count, p50, p95).
    turn_split: dict[str, tuple[int, float, float]] = field(default_factory=dict)
    #: The same for the turns that began in the window (not during the set-up and the
    #: warm-up: at many tables all the first smazzate start in the same second).
    turn_split_begun: dict[str, tuple[int, float, float]] = field(default_factory=dict)
    #: Bot API message calls (sends, edits) per stored move: to groups, to the private
    #: chat of the seat in turn (the call carries its buttons), to other private chats.
    per_move: dict[str, float] = field(default_factory=dict)
    #: The presser's own message: from the bot getting a press (offered by getUpdates)
    #: to the first edit of the pressed message (the press shown on it).
    own_p50: float = float("nan")
    own_p95: float = float("nan")
    #: The same by where the pressed message is: "group" (a bid on the group's keyboard,
    #: paced at ~20 calls a minute per group), "private" -> (count, p50, p95).
    own_split: dict[str, tuple[int, float, float]] = field(default_factory=dict)
    #: Seconds from a move being acknowledged to the group table showing it.
    staleness_p50: float = float("nan")
    staleness_p95: float = float("nan")
    #: The longest time a group went without a message call while its table moved (from
    #: a move answered to the group's next call; issue 46: at most 6 s), and its table.
    group_gap: float = float("nan")
    group_gap_table: str = ""
    echo_p50: float = 0.0
    echo_p95: float = 0.0
    echo_p99: float = 0.0
    echo_updates: int = 0
    #: The echo bot on the bot's own HTTP backend (aiohttp), when measured.
    echo_same_http: tuple[float, float, float] | None = None
    #: The echo bot measured at the same time as the bot (its own fake server in the
    #: harness's process and loop), when measured.
    echo_alongside: tuple[float, float, float] | None = None
    echo_alongside_updates: int = 0
    slowest: list[str] = field(default_factory=list)
    #: Next-button waits of the window by phase: "auction", "play" (the declaration with
    #: play) -> (count, p50, p95).
    turn_phases: dict[str, tuple[int, float, float]] = field(default_factory=dict)
    #: Mini App seats: from the previous move stored to the state with their turn received;
    #: from their move posted to their own new state received (seconds).
    miniapp_seats: int = 0
    miniapp_turn_p50: float = float("nan")
    miniapp_turn_p95: float = float("nan")
    miniapp_turns: int = 0
    miniapp_own_p50: float = float("nan")
    miniapp_own_p95: float = float("nan")
    miniapp_moves: int = 0
    miniapp_refused: int = 0
    #: Pages closed mid-run: seconds from the close to the first message call to that
    #: player's chat (their hand brought up to date), p50/p95, and how many.
    fallback: tuple[int, float, float] | None = None
    #: Computers' moves seen by the Mini App seats: from the move before stored to the
    #: computer's move received, minus the display pause (s), and how many.
    computer_p50: float = float("nan")
    computer_p95: float = float("nan")
    computer_moves: int = 0
    #: Moves stored by the computers in the window, and the CPU seconds of the bot's
    #: child processes (the search pool) in it.
    computer_actions: int = 0
    pool_cpu_seconds: float = 0.0
    #: The bot's summaries of degraded decisions (bot/players.py) logged during the run:
    #: searched in full, cut short by the clock, played by the fallback.
    decisions: tuple[int, int, int] | None = None


def computer_seats(tables: int, share: float) -> list[int]:
    """Computers at each table so that ``share`` of all the seats are computers (spread
    evenly: with 0.5, tables of 2 and 3 computers in turn); at least one human each."""
    return [min(4, int((i + 1) * 5 * share) - int(i * 5 * share)) for i in range(tables)]


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


async def db_size_and_smazzate(db: Database) -> tuple[int, int, int]:
    """(bytes, scored smazzate, actions) of the bot's database."""
    size = await repo.database_size(db)
    smazzate = int(await db.fetchval("SELECT COUNT(*) FROM smazzata_results"))
    actions = int(await db.fetchval("SELECT COUNT(*) FROM actions"))
    return size, smazzate, actions


def actions_per_smazzata(seed: int, deals: int = 300) -> float:
    """Mean actions of a scored smazzata when every seat plays like the simulated humans
    (voided deals included in the count), from the game core alone."""
    rng = random.Random(seed)
    actions = scored = 0
    game = Game.new(TableOptions(), rng=random.Random(seed))
    while scored < deals:
        if game.is_over():
            game = Game.new(TableOptions(), rng=random.Random(rng.random()))
        seat = game.current_seat()
        assert seat is not None
        before = game.scored_count
        game.apply(seat, parse_action(simple_policy(game.view(seat), rng)))
        actions += 1
        scored += game.scored_count - before
    return actions / scored


async def computer_actions(db: Database) -> int:
    """Moves stored by the computers."""
    return int(await db.fetchval("SELECT COUNT(*) FROM actions WHERE actor = 'computer'"))


async def until_moves(reader: Database, moves: int, timeout: float) -> None:
    """Wait until ``moves`` moves were stored (at most ``timeout`` seconds)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while (await db_size_and_smazzate(reader))[2] < moves and loop.time() < deadline:
        await asyncio.sleep(0.2)


def window(updates: list[PendingUpdate], t0: float, t1: float) -> list[PendingUpdate]:
    return [u for u in updates if t0 <= u.created_at < t1 and u.kind in KINDS]


async def run_bot(
    args: argparse.Namespace, tables: int, workdir: Path, database_url: str | None = None
) -> Figures:
    figures = Figures(tables)
    flood: Any = not args.no_flood
    async with FakeTelegram(flood=flood) as tg, FakeTelegram(flood=flood) as side_tg:
        tg.world.keep_update_log = True
        env = {"LOG_LEVEL": args.log_level, "COMPUTER_LEVEL": args.computer_level,
               "COMPUTER_DELAY_SECONDS": str(args.computer_delay)}
        webapp_port = free_port() if args.miniapp_share > 0 else None
        if webapp_port is not None:  # the Mini App's server, beside the bot
            env.update(WEBAPP_URL=f"http://127.0.0.1:{webapp_port}/",
                       WEBAPP_LISTEN="127.0.0.1", WEBAPP_PORT=str(webapp_port))
        bot = BotProcess(tg, workdir, name=f"bot{tables}", env=env, database_url=database_url)
        await bot.start()
        reader = await open_reader(bot.database_url)
        side: EchoBot | None = None
        side_clicks: asyncio.Task[tuple[float, float]] | None = None
        http = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))
        pages: dict[int, list[MiniAppSeat]] = {}
        closing: list[asyncio.Task[None]] = []
        collector = contextlib.ExitStack()
        try:
            rss_idle, _ = bot.memory_kib()
            world = World(tg, reader)
            rng = random.Random(args.seed)
            computers = ([4] * tables if args.solo
                         else computer_seats(tables, args.computer_share))
            think = Think.parse(args.think)
            sims = [world.add_table(i, 5 - computers[i], rng=rng, think=think)
                    for i in range(tables)]
            # the Mini App seats: that share of the humans, spread evenly over the tables
            web_rng = random.Random(args.seed + 3)
            humans = [5 - c for c in computers]
            shares = miniapp_seats(humans, args.miniapp_share)
            for i, table in enumerate(sims):
                pages[i] = [MiniAppSeat(table, user, http, f"http://127.0.0.1:{webapp_port}/",
                                        tg.token, random.Random(web_rng.random()))
                            for user in table.humans[: shares[i]]]
            figures.miniapp_seats = sum(shares)
            loop = asyncio.get_running_loop()
            t_setup = loop.time()
            opening = asyncio.Semaphore(SOLO_OPENING if args.solo else tables)

            async def open_table(i: int, table: SimTable) -> None:
                async with opening:
                    await table.open_and_start(computers[i], timeout=600)

            await asyncio.gather(*(open_table(i, t) for i, t in enumerate(sims)))
            await asyncio.gather(*(page.open(sims[i].game_id or 0) for i in pages
                                   for page in pages[i]))
            figures.setup_seconds = loop.time() - t_setup
            collector.enter_context(harness_collector(args.harness_gc))
            stop = asyncio.Event()

            async def keep_playing(i: int, table: SimTable) -> None:
                while not stop.is_set():
                    done = await table.play(deadline=loop.time() + 3600, stop=stop)
                    if done and not stop.is_set():
                        await table.open_and_start(5 - len(table.users), timeout=600)
                        await asyncio.gather(*(page.open(table.game_id or 0)
                                               for page in pages[i] if page.live))

            players = [asyncio.create_task(keep_playing(i, t)) for i, t in enumerate(sims)]
            if args.echo_alongside:
                side = EchoBot(side_tg, workdir, tables, "httpx", f"echo{tables}alongside",
                               args.seed + 2)
                await side.start()
            warm0 = time.monotonic()
            await asyncio.sleep(args.warmup)
            await until_moves(reader, args.warmup_moves, timeout=max(60.0, args.warmup))
            t0 = time.monotonic()
            # some pages close (or go inactive) mid-window: the chat takes over for them
            every = [page for i in pages for page in pages[i]]
            for page in web_rng.sample(every, round(len(every) * args.miniapp_close)):
                closing.append(asyncio.create_task(close_later(
                    page, web_rng.uniform(0.1, 0.8) * args.seconds, AWAY_SECONDS, web_rng)))
            if side is not None:  # at the rate the tables have clicked in the last 10 s
                clicks = ClickRate(tg, warm0)
                side_clicks = asyncio.create_task(side.click(clicks.rate, args.seconds))
            cpu0, harness0 = bot.cpu_seconds(), time.process_time()
            pool0, cpu_moves0 = bot.children_cpu_seconds(), await computer_actions(reader)
            size0, smz0, act0 = await db_size_and_smazzate(reader)
            calls0 = len(tg.calls)
            await asyncio.sleep(args.seconds)
            t1 = time.monotonic()
            cpu1, harness1 = bot.cpu_seconds(), time.process_time()
            pool1, cpu_moves1 = bot.children_cpu_seconds(), await computer_actions(reader)
            size1, smz1, act1 = await db_size_and_smazzate(reader)
            calls = [c for c in tg.calls[calls0:] if c.method != "getUpdates"]
            rss_now, peak = bot.memory_kib()
            stop.set()
            for task in players:
                task.cancel()
            await asyncio.gather(*players, return_exceptions=True)
            measure_miniapp(figures, sims, [p for i in pages for p in pages[i]],
                            tg.calls[calls0:], t0, t1)
            late = computer_move_waits([p for i in pages for p in pages[i]], t0, t1,
                                       args.computer_delay)
            figures.computer_moves = len(late)
            figures.computer_p50, figures.computer_p95 = percentile(late, 50), \
                percentile(late, 95)
            figures.computer_actions = cpu_moves1 - cpu_moves0
            figures.pool_cpu_seconds = pool1 - pool0
            side_window = None if side_clicks is None else await side_clicks
            # grace: whatever was offered in the window must still be handled (before the
            # pages close: a thousand pages closing at once make the bot redraw a
            # thousand chat hands, and the window's last clicks waited behind them)
            grace_end = loop.time() + args.grace
            while loop.time() < grace_end:
                pending = [u for u in window(tg.update_log, t0, t1) if u.handled_at is None]
                if not pending:
                    break
                await asyncio.sleep(0.2)
            await asyncio.gather(*(page.stop() for i in pages for page in pages[i]))
            turns = window_turns(sims, t0, t1)
            waits = [w for w, _ in turns]
            figures.turn_p50 = percentile(waits, 50)
            figures.turn_p95 = percentile(waits, 95)
            figures.turn_split = split(turns)
            figures.turn_phases = split(window_turns(sims, t0, t1, by_phase=True),
                                        ("auction", "play"))
            figures.turn_split_begun = split(window_turns(sims, t0, t1, begun=True))
            measured = window(tg.update_log, t0, t1)
            handled = [u for u in measured if u.handled_at is not None]
            callbacks = [u for u in handled if u.kind == "callback_query"]
            latencies = [u.latency for u in callbacks if u.latency is not None]
            ages = [u.age for u in handled if u.age is not None]
            span = t1 - t0
            figures.seconds = span
            figures.updates = len(handled)
            figures.callbacks = len(callbacks)
            figures.p50 = percentile(latencies, 50)
            figures.p95 = percentile(latencies, 95)
            figures.p99 = percentile(latencies, 99)
            figures.max_age = max(ages, default=0.0)
            for u in sorted(handled, key=lambda u: u.age or 0.0, reverse=True)[: args.slowest]:
                body = u.payload.get(u.kind) or {}
                what = body.get("data") or body.get("text") or ""
                figures.slowest.append(
                    f"{u.kind} chat {u.chat_id} {str(what)[:40]!r}: age {u.age or 0:.2f} s, "
                    f"offered after {(u.offered_at or u.created_at) - u.created_at:.2f} s, "
                    f"latency {u.latency or 0:.2f} s"
                )
            figures.older_than_2s = sum(1 for a in ages if a > 2.0)
            figures.lost = len(measured) - len(handled)
            figures.cpu_per_update = (cpu1 - cpu0) / max(1, len(handled))
            figures.bot_cpu_share = (cpu1 - cpu0) / span
            figures.harness_cpu_share = (harness1 - harness0) / span
            figures.peak_rss_mib = peak / 1024
            figures.rss_per_game_kib = (rss_now - rss_idle) / tables
            figures.smazzate = smz1 - smz0
            figures.calls = len(calls)
            figures.call_mix = Counter(c.method for c in calls)
            for c in calls:
                if c.method.startswith("editMessage"):
                    chat = c.chat_id if isinstance(c.chat_id, int) else 0
                    figures.edit_split["group" if chat < 0 else "private"] += 1
                    figures.edit_split["failed"] += c.ok is False
            figures.flood_429 = sum(1 for c in calls if c.error_code == 429)
            figures.message_calls = sum(1 for c in calls if c.method in MESSAGE_CALLS and c.ok)
            in_turn = {k: v for t in sims for k, v in t.in_turn.items()}
            figures.phases = Counter(
                move_phase(p.code) for t in sims for p in t.presses
                if p.handle.answer is not None and not p.handle.answer.show_alert
                and t0 <= p.handle.answer.at < t1
            )
            delivered = bot_turn_waits(tg.calls[calls0:], sims, t0, t1, {
                key for i in pages for page in pages[i] for key in page.turns})
            figures.bot_turn_p50 = percentile(delivered, 50)
            figures.bot_turn_p95 = percentile(delivered, 95)
            figures.per_move = calls_per_move(calls, act1 - act0, in_turn)
            own_by_chat = own_redraw_waits(tg.calls[calls0:], sims, tg.update_log, t0, t1)
            own = [wait for wait, _ in own_by_chat]
            figures.own_p50 = percentile(own, 50)
            figures.own_p95 = percentile(own, 95)
            figures.own_split = split(own_by_chat)
            figures.group_gap, figures.group_gap_table = max(
                ((longest_gap(group_calls(tg.calls[calls0:], t.group.id, t0, t1),
                              [p.handle.answer.at for p in acknowledged([t], t0, t1)],
                              t1)[0], t.group.title or str(t.group.id)) for t in sims),
                default=(float("nan"), ""))
            stale = await group_staleness(reader, sims, tg, t0, t1)
            figures.staleness_p50 = percentile(stale, 50)
            figures.staleness_p95 = percentile(stale, 95)
            # per smazzata: per stored action × actions of a smazzata (few tables finish
            # one in the window when Telegram's 30 calls/s are shared by many tables)
            figures.actions = act1 - act0
            if figures.actions:
                per = actions_per_smazzata(args.seed)
                figures.actions_per_smazzata = per
                figures.db_kib_per_1000 = (size1 - size0) / 1024 / figures.actions * per * 1000
                figures.calls_per_smazzata = len(calls) / figures.actions * per
            if side is not None and side_window is not None:
                side_latencies = await side.latencies(*side_window, args.grace)
                figures.echo_alongside = percentiles(side_latencies)
                figures.echo_alongside_updates = len(side_latencies)
            figures.decisions = decision_summaries(bot.log_text())
            problems = bot.problems()
            if problems:
                print(f"  [bot log: {len(problems)} error lines, e.g. {problems[0][:160]}]",
                      file=sys.stderr)
        finally:
            collector.close()
            for task in closing:
                task.cancel()
            for page in (p for i in pages for p in pages[i]):
                await page.stop()
            await http.close()
            await reader.close()
            if side_clicks is not None:
                side_clicks.cancel()
            if side is not None:
                await side.kill()
            with contextlib.suppress(Exception):
                await bot.stop(timeout=10)
            await bot.kill()
        # the echo bot, same server, same click rate
        rate = figures.callbacks / max(figures.seconds, 1e-9)
        await run_echo(args, tg, workdir, tables, rate, figures, "httpx")
        if args.echo_http == "both":
            await run_echo(args, tg, workdir, tables, rate, figures, "aiohttp")
    return figures


def window_turns(sims: list[SimTable], t0: float, t1: float, *, begun: bool = False,
                 by_phase: bool = False) -> list[tuple[float, bool]]:
    """The next-button waits of the window: (seconds, whether the buttons were in the
    group; ``by_phase``: whether it was a bid), for the buttons that appeared in the
    window — the moves pressed there, as the moves by phase count them. (Counted by when
    the turn began instead, the 200-table window after a 90 s warm-up held none of the
    group waits of the ~120 bids pressed in it: under saturation those turns had all
    begun before the window.)"""
    return [(wait, bid if by_phase else group) for t in sims
            for seen, wait, group, bid in t.turn_waits
            if t0 <= seen + wait < t1 and (not begun or seen >= t0)]


#: How long a page closed mid-window stays closed (seconds, uniform).
AWAY_SECONDS = (5.0, 15.0)


def miniapp_seats(humans: list[int], share: float) -> list[int]:
    """Mini App seats at each table so that ``share`` of all the human seats play there
    (spread evenly, as :func:`computer_seats`)."""
    seats, total = [], 0.0
    for h in humans:
        before = round(total)
        total += h * share
        seats.append(min(h, round(total) - before))
    return seats


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def close_later(page: MiniAppSeat, delay: float, away: tuple[float, float],
                      rng: random.Random) -> None:
    """The page closes (goes inactive) after ``delay`` s, and is back after a pause drawn
    from ``away`` (the player switched to another app for a while)."""
    await asyncio.sleep(delay)
    await page.close()
    await asyncio.sleep(rng.uniform(*away))
    if page.table.game_id is not None:
        await page.open(page.table.game_id)


def measure_miniapp(figures: Figures, sims: list[SimTable], pages: list[MiniAppSeat],
                    calls: list[Any], t0: float, t1: float) -> None:
    """The Mini App's figures of the window (see :class:`Figures`)."""
    if not pages:
        return
    # the previous move's storage: a chat press answered, a Mini App move answered
    stored: dict[tuple[int, int], float] = {}
    for table in sims:
        for p in table.presses:
            if p.handle.answer is not None and not p.handle.answer.show_alert:
                stored.setdefault((p.game_id, p.version + 1), p.handle.answer.at)
    for page in pages:
        for post in page.posts:
            if post.stored is not None:
                stored.setdefault((post.game_id, post.version + 1), post.stored)
    turns = [at - stored[key] for page in pages for key, at in page.turns.items()
             if t0 <= at < t1 and key in stored]
    end = max((c.at for c in calls), default=t1)
    own = [(post.shown if post.shown is not None else end) - post.sent
           for page in pages for post in page.posts
           if post.stored is not None and t0 <= post.sent < t1]
    figures.miniapp_turns, figures.miniapp_moves = len(turns), len(own)
    figures.miniapp_turn_p50, figures.miniapp_turn_p95 = percentile(turns, 50), \
        percentile(turns, 95)
    figures.miniapp_own_p50, figures.miniapp_own_p95 = percentile(own, 50), \
        percentile(own, 95)
    figures.miniapp_refused = sum(page.refused for page in pages)
    fallback = []
    for page in pages:
        if page.closed_at is None:
            continue
        later = [c.at for c in calls if c.chat_id == page.user.id and c.ok
                 and c.method in MESSAGE_CALLS and c.at >= page.closed_at]
        fallback.append(min(later, default=end) - page.closed_at)
    if fallback:
        figures.fallback = (len(fallback), percentile(fallback, 50), percentile(fallback, 95))


def computer_move_waits(pages: list[MiniAppSeat], t0: float, t1: float,
                        pause: float) -> list[float]:
    """The computers' moves the Mini App seats saw in the window: for each state with a
    computer in turn followed by the next version, seconds from that state being stored
    (the seat's own move answered, else the state received) to the next version received,
    minus the display pause ``pause``."""
    waits = []
    for page in pages:
        stored = {(post.game_id, post.version + 1): post.stored for post in page.posts
                  if post.stored is not None}
        for game_id, version in page.computer_turns:
            moved = page.states.get((game_id, version + 1))
            if moved is None or not t0 <= moved < t1:
                continue
            start = stored.get((game_id, version), page.states[(game_id, version)])
            waits.append(moved - start - pause)
    return waits


#: The bot's summary of its computers' decisions under load (bot/players.py).
DECISIONS_LOGGED = re.compile(r"(\d+) searched in full, (\d+) cut short by the clock, "
                              r"(\d+) played by")


def decision_summaries(log_text: str) -> tuple[int, int, int] | None:
    """The bot's summaries of degraded decisions in its log, added up (None: none)."""
    found = [tuple(map(int, m.groups())) for m in DECISIONS_LOGGED.finditer(log_text)]
    if not found:
        return None
    return (sum(f[0] for f in found), sum(f[1] for f in found), sum(f[2] for f in found))


MESSAGE_CALLS = ("sendMessage", "editMessageText", "editMessageReplyMarkup")
#: The game and version in the callback data of an action button ("a:gid:version:code").
ACTION_DATA = re.compile(r'"a:(\d+):(\d+):')


def calls_per_move(
    calls: list[Any], moves: int, in_turn: dict[tuple[int, int], int]
) -> dict[str, float]:
    """Successful message calls per stored move: group / private to the seat in turn at
    the version the call's buttons were drawn for (``in_turn``: (game, version) -> user)
    / other private."""
    split: Counter[str] = Counter()
    for c in calls:
        if c.method not in MESSAGE_CALLS or not c.ok or not isinstance(c.chat_id, int):
            continue
        if c.chat_id < 0:
            split["group"] += 1
            continue
        drawn = ACTION_DATA.search(str(c.params.get("reply_markup", "")))
        key = (int(drawn[1]), int(drawn[2])) if drawn else None
        split["turn" if key is not None and in_turn.get(key) == c.chat_id else "other"] += 1
    return {k: split[k] / max(1, moves) for k in ("group", "turn", "other")}


def move_phase(code: str) -> str:
    """The phase of the game a move's code belongs to."""
    if code.startswith("c"):
        return "play"
    if code.startswith("s"):
        return "declaration"
    return "auction"


def bot_turn_waits(calls: list[Any], sims: list[SimTable], t0: float, t1: float,
                   elsewhere: AbstractSet[tuple[int, int]] = frozenset()) -> list[float]:
    """For each move acknowledged in the window: seconds from its answer to the first
    successful call drawing buttons of a later version of that game (the bot's delivery
    alone, without the simulated humans' polling; a later version, not only the next one:
    when a computer seat moves next, the next buttons a person gets are of the version
    after the computer's move); a move never followed by buttons counts until the last
    call. ``elsewhere``: (game, version) turns received in the Mini App (no chat button
    comes for them while the page is live): the moves before them are not counted."""
    drawn_at: dict[int, list[tuple[float, int]]] = {}
    for c in calls:
        if c.method in MESSAGE_CALLS and c.ok:
            drawn = ACTION_DATA.search(str(c.params.get("reply_markup", "")))
            if drawn:
                drawn_at.setdefault(int(drawn[1]), []).append((c.at, int(drawn[2])))
    end = max((c.at for c in calls), default=t1)
    waits = []
    for p in acknowledged(sims, t0, t1):
        if (p.game_id, p.version + 1) in elsewhere:
            continue
        later = (at for at, version in drawn_at.get(p.game_id, ()) if version > p.version)
        waits.append(max(0.0, min(later, default=end) - p.handle.answer.at))
    return waits


def group_calls(calls: list[Any], group: int, t0: float, t1: float) -> list[float]:
    """When the successful message calls (sends, edits) to ``group`` were made in the
    window."""
    return sorted(c.at for c in calls if c.chat_id == group and c.ok
                  and c.method in MESSAGE_CALLS and t0 <= c.at < t1)


def longest_gap(calls: list[float], moves: list[float], end: float,
                down: tuple[float, float] = (0.0, 0.0)) -> tuple[float, float]:
    """How long a group went without a message call while its table moved (issue 46):
    the longest time from a move of its table being answered to the group's next call
    (or ``end``), the time ``down`` not counted (the bot was not running); and when that
    move was. (From the group's previous call instead, a player's long pause before the
    move would count as the group standing still.)"""
    worst = (0.0, 0.0)
    for move in moves:
        following = bisect.bisect_right(calls, move)
        stop = calls[following] if following < len(calls) else end
        overlap = max(0.0, min(stop, down[1]) - max(move, down[0]))
        worst = max(worst, (stop - move - overlap, move))
    return worst


def acknowledged(sims: list[SimTable], t0: float, t1: float) -> list[Any]:
    """The presses answered without an alert in the window (moves stored)."""
    return [p for table in sims for p in table.presses
            if p.handle.answer is not None and not p.handle.answer.show_alert
            and t0 <= p.handle.answer.at < t1]


def own_redraw_waits(calls: list[Any], sims: list[SimTable], updates: list[PendingUpdate],
                     t0: float, t1: float) -> list[tuple[float, bool]]:
    """For each move acknowledged in the window: seconds from the bot getting the press
    (getUpdates offered it) to the first successful edit of the message pressed (the
    bot's side of "my press is shown"; never edited: until the last call), and whether
    that message is in a group."""
    offered = {u.query_id: u.offered_at for u in updates
               if u.query_id is not None and u.offered_at is not None}
    edits: dict[tuple[int, int], list[float]] = {}
    for c in calls:
        if c.method.startswith("editMessage") and c.ok and isinstance(c.chat_id, int):
            with contextlib.suppress(TypeError, ValueError):
                key = (c.chat_id, int(c.params.get("message_id")))
                edits.setdefault(key, []).append(c.at)
    end = max((c.at for c in calls), default=t1)
    waits = []
    for p in acknowledged(sims, t0, t1):
        message = p.handle.message
        start = offered.get(p.handle.id) or p.handle.created_at
        at = [t for t in edits.get((message.chat.id, message.message_id), ()) if t >= start]
        waits.append((max(0.0, min(at, default=end) - start), message.chat.id < 0))
    return waits


async def group_staleness(
    reader: Database, sims: list[SimTable], tg: FakeTelegram, t0: float, t1: float
) -> list[float]:
    """For each move of the window (a press the bot acknowledged: the move was stored
    before the answer): seconds from the answer until a group call showed that version
    (or a later one) of the table, found by replaying the game and matching the text the
    bot draws for each version (``texts.table_text``) with what the group received."""
    from sandbox.fakeapi.html import parse_html

    waits: list[float] = []
    for table in sims:
        shown: list[tuple[float, str]] = sorted(
            (c.at, str(c.params.get("text", ""))) for c in tg.calls
            if c.chat_id == table.group.id and c.ok and c.at >= t0
            and c.method in ("sendMessage", "editMessageText")
        )
        seen = [
            (p.game_id, p.version + 1, p.handle.answer.at) for p in table.presses
            if p.handle.answer is not None and not p.handle.answer.show_alert
            and t0 <= p.handle.answer.at < t1
        ]
        for game_id in {g for g, _, _ in seen}:
            version_of = await table_versions(reader, game_id)
            drawn = [(at, version_of.get(parse_html(text)[0], -1)) for at, text in shown]
            for g, version, at in seen:
                if g != game_id or version not in version_of.values():
                    continue
                later = [d for d, v in drawn if v >= version and d >= at - 0.05]
                first = min(later, default=t1)
                waits.append(max(0.0, first - at))
    return waits


async def table_versions(reader: Database, game_id: int) -> dict[str, int]:
    """The group table's text (as Telegram shows it) -> the first version drawing it,
    from a replay of the game's log."""
    from bot.prefs import Prefs
    from bot.render import texts
    from bot.service import names_of
    from sandbox.fakeapi.html import parse_html

    row = await repo.get_game(reader, game_id)
    if row is None or row.seed is None:
        return {}
    prefs = Prefs.from_json(row.settings_json)
    names = names_of(row)
    game = Game.new(prefs.options, rng=random.Random(row.seed))
    version_of: dict[str, int] = {}
    for action in [None, *await repo.load_actions(reader, game_id)]:
        if action is not None:
            if action.seat is None:
                break
            game.apply(action.seat, parse_action(action.code))
        if game.is_over():
            break
        text = texts.table_text(prefs.language, game.view(None), names)
        version_of.setdefault(parse_html(text)[0], game.version)
    return version_of


class ClickRate:
    """Callback queries per second on ``tg`` over the last ``span`` seconds (or since
    ``since``, monotonic, if more recent), counted incrementally from the update log."""

    def __init__(self, tg: FakeTelegram, since: float, span: float = 10.0) -> None:
        self.log = tg.update_log
        self.since = since
        self.span = span
        self.seen = 0
        self.recent: deque[float] = deque()

    def rate(self) -> float:
        fresh = self.log[self.seen :]
        self.seen = len(self.log)
        self.recent.extend(
            u.created_at for u in fresh
            if u.kind == "callback_query" and u.created_at >= self.since
        )
        now = time.monotonic()
        while self.recent and self.recent[0] < now - self.span:
            self.recent.popleft()
        return len(self.recent) / max(min(self.span, now - self.since), 1e-9)


class EchoBot:
    """The floor: ``bench.echo`` in a subprocess, with ``tables`` groups of five users and
    one button each, pressed by random users at a given rate."""

    def __init__(self, tg: FakeTelegram, workdir: Path, tables: int, http: str, name: str,
                 seed: int) -> None:
        self.tg = tg
        self.tables = tables
        self.rng = random.Random(seed)
        self.process = BotProcess(tg, workdir, module="bench.echo", name=name,
                                  env={"ECHO_HTTP": http})
        self.targets: list[tuple[Any, Any]] = []

    async def start(self) -> None:
        self.tg.world.keep_update_log = True
        await self.process.start()
        for i in range(self.tables):
            users = [self.tg.add_user(f"E{i}U{j}") for j in range(5)]
            group = self.tg.add_group(f"Echo {i}", users)
            message = self.tg.world.new_message(
                group, None, text="echo",
                reply_markup={"inline_keyboard": [[{"text": "x", "callback_data": "e"}]]},
            )
            self.targets += [(user, message) for user in users]

    async def click(
        self, rate: float | Callable[[], float], seconds: float
    ) -> tuple[float, float]:
        """Press at ``rate`` per second (Poisson; a callable is asked again before every
        press) for ``seconds``; return the window."""
        t0 = time.monotonic()
        loop = asyncio.get_running_loop()
        end = loop.time() + seconds
        while loop.time() < end and (callable(rate) or rate > 0):
            now_rate = rate() if callable(rate) else rate
            if now_rate <= 0:
                await asyncio.sleep(0.1)
                continue
            await asyncio.sleep(self.rng.expovariate(now_rate))
            user, message = self.rng.choice(self.targets)
            await user.press(message, "e")
        return t0, time.monotonic()

    async def latencies(self, t0: float, t1: float, grace: float) -> list[float]:
        """The press → answer latencies of the window (after up to ``grace`` s for the
        last ones)."""
        loop = asyncio.get_running_loop()
        grace_end = loop.time() + grace
        while loop.time() < grace_end and any(
            u.handled_at is None for u in window(self.tg.update_log, t0, t1)
        ):
            await asyncio.sleep(0.2)
        return [u.latency for u in window(self.tg.update_log, t0, t1)
                if u.kind == "callback_query" and u.latency is not None]

    async def kill(self) -> None:
        await self.process.kill()


def split(waits: list[tuple[float, bool]], names: tuple[str, str] = ("group", "private"),
          ) -> dict[str, tuple[int, float, float]]:
    """(seconds, in a group) pairs by where: "group", "private" -> (count, p50, p95)
    (``names``: what True and False stand for)."""
    figures = {}
    for where, in_group in ((names[0], True), (names[1], False)):
        some = [w for w, group in waits if group == in_group]
        figures[where] = (len(some), percentile(some, 50), percentile(some, 95))
    return figures


def split_text(label: str, figures: dict[str, tuple[int, float, float]],
               digits: int = 1) -> str:
    """One split of the details line: "label group p50/p95 s (n), private …"."""
    return label + " " + ", ".join(
        f"{where} {p50:.{digits}f}/{p95:.{digits}f} s ({n})"
        for where, (n, p50, p95) in figures.items())


def percentiles(values: list[float]) -> tuple[float, float, float]:
    return percentile(values, 50), percentile(values, 95), percentile(values, 99)


async def run_echo(
    args: argparse.Namespace, tg: FakeTelegram, workdir: Path, tables: int, rate: float,
    figures: Figures, http: str,
) -> None:
    """The echo bot alone, after the bot, on the bot's fake server."""
    echo = EchoBot(tg, workdir, tables, http, f"echo{tables}{http}", args.seed + 1)
    await echo.start()
    try:
        seconds = args.seconds if args.echo_seconds is None else args.echo_seconds
        t0, t1 = await echo.click(rate, seconds)
        latencies = await echo.latencies(t0, t1, args.grace)
        if http == "httpx":
            figures.echo_updates = len(latencies)
            figures.echo_p50, figures.echo_p95, figures.echo_p99 = percentiles(latencies)
        else:
            figures.echo_same_http = percentiles(latencies)
    finally:
        await echo.kill()


def pair(p50: float, p95: float) -> str:
    """"p50/p95" in seconds, "-" without figures."""
    return "-" if p50 != p50 else f"{p50:.2f}/{p95:.2f}"


def ms(seconds: float) -> str:
    return "-" if seconds != seconds else f"{seconds * 1000:.0f}"


def report(all_figures: list[Figures], args: argparse.Namespace) -> str:
    head = (
        "| tables | updates/s | p50 ms | p95 ms | p99 ms | echo p50/p95/p99 ms | oldest s | "
        ">2 s | lost | next button p50/p95 s | own redraw p50/p95 s | group stale p50/p95 s | "
        "calls/move group/turn/other | CPU ms/update | peak RSS MiB | KiB/game | "
        "DB KiB/1000 smazzate | API calls/smazzata | smazzate | 429 | "
        "miniapp next turn p50/p95 s | miniapp own p50/p95 s |"
    )
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for f in all_figures:
        db = "-" if f.db_kib_per_1000 is None else f"{f.db_kib_per_1000:,.0f}"
        calls = "-" if f.calls_per_smazzata is None else f"{f.calls_per_smazzata:.1f}"
        lines.append(
            f"| {f.tables} | {f.updates / max(f.seconds, 1e-9):.1f} | {ms(f.p50)} | "
            f"{ms(f.p95)} | {ms(f.p99)} | {ms(f.echo_p50)}/{ms(f.echo_p95)}/{ms(f.echo_p99)} | "
            f"{f.max_age:.2f} | {f.older_than_2s} | {f.lost} | "
            f"{f.turn_p50:.1f}/{f.turn_p95:.1f} | {f.own_p50:.2f}/{f.own_p95:.2f} | "
            f"{f.staleness_p50:.1f}/{f.staleness_p95:.1f} | "
            f"{f.per_move.get('group', 0):.2f}/{f.per_move.get('turn', 0):.2f}/"
            f"{f.per_move.get('other', 0):.2f} | {f.cpu_per_update * 1000:.1f} | "
            f"{f.peak_rss_mib:.0f} | {f.rss_per_game_kib:.0f} | {db} | {calls} | "
            f"{f.smazzate} | {f.flood_429} | "
            f"{pair(f.miniapp_turn_p50, f.miniapp_turn_p95)} | "
            f"{pair(f.miniapp_own_p50, f.miniapp_own_p95)} |"
        )
    lines.append("")
    for f in all_figures:
        mix = ", ".join(f"{k} {v}" for k, v in f.call_mix.most_common())
        if f.edit_split:
            mix += " (edits: " + ", ".join(
                f"{k} {f.edit_split[k]}" for k in ("group", "private", "failed")
            ) + ")"
        verdict = []
        if f.echo_p95 == f.echo_p95 and f.p95 == f.p95:
            ratio = f.p95 / f.echo_p95 if f.echo_p95 else float("inf")
            verdict.append(f"p95 = {ratio:.1f}× echo")
        if f.echo_alongside is not None:
            side = f.echo_alongside
            ratio = f.p95 / side[1] if side[1] else float("inf")
            verdict.append(f"{ratio:.1f}× the echo alongside (p50/p95/p99 "
                           f"{ms(side[0])}/{ms(side[1])}/{ms(side[2])} ms, "
                           f"{f.echo_alongside_updates} clicks)")
        if f.echo_same_http is not None:
            same = f.echo_same_http
            ratio = f.p95 / same[1] if same[1] else float("inf")
            verdict.append(f"{ratio:.1f}× the echo on aiohttp (p50/p95/p99 "
                           f"{ms(same[0])}/{ms(same[1])}/{ms(same[2])} ms)")
        verdict.append(f"next button, the bot's side (answer -> buttons sent) p50/p95 "
                       f"{f.bot_turn_p50:.1f}/{f.bot_turn_p95:.1f} s")
        if f.phases:
            verdict.append("moves by phase: " + ", ".join(
                f"{k} {f.phases[k]}" for k in ("auction", "declaration", "play")))
        if f.turn_split:
            verdict.append(split_text("next button p50/p95", f.turn_split))
        if f.turn_split_begun:
            verdict.append(split_text("of the turns begun in the window",
                                      f.turn_split_begun))
        if f.turn_phases:
            verdict.append(split_text("next button by phase p50/p95", f.turn_phases))
        if f.own_split:
            verdict.append(split_text("own redraw p50/p95", f.own_split, digits=2))
        verdict.append(f"message calls/move {sum(f.per_move.values()):.2f}, "
                       f"{f.message_calls / max(f.seconds, 1e-9):.1f} message calls/s")
        verdict.append(f"longest a group went without a call while its table moved "
                       f"{f.group_gap:.1f} s ({f.group_gap_table})")
        if f.miniapp_seats:
            line = (f"Mini App: {f.miniapp_seats} seats, next turn p50/p95 "
                    f"{pair(f.miniapp_turn_p50, f.miniapp_turn_p95)} s ({f.miniapp_turns}), "
                    f"own p50/p95 {pair(f.miniapp_own_p50, f.miniapp_own_p95)} s "
                    f"({f.miniapp_moves} moves), {f.miniapp_refused} refused")
            if f.fallback is not None:
                n, p50, p95 = f.fallback
                line += (f"; {n} pages closed mid-window: their chat hand redrawn "
                         f"p50/p95 {p50:.2f}/{p95:.2f} s after")
            verdict.append(line)
        if args.solo or f.computer_actions:
            line = (f"computer move p50/p95 {pair(f.computer_p50, f.computer_p95)} s "
                    f"({f.computer_moves}) beyond the {args.computer_delay:g} s pause "
                    f"({args.computer_level}); {f.computer_actions} computer moves stored, "
                    f"decisions' CPU: the search pool {f.pool_cpu_seconds:.1f} s "
                    f"({f.pool_cpu_seconds / max(f.seconds, 1e-9):.0%} of a core, "
                    f"{f.pool_cpu_seconds / max(1, f.computer_actions) * 1000:.0f} ms a "
                    f"computer move; the bot's own process below)")
            if f.decisions is not None:
                line += ("; the bot's log: {} searched in full, {} cut short, {} by the "
                         "fallback".format(*f.decisions))
            verdict.append(line)
        verdict.append("no update older than 2 s" if not f.older_than_2s
                       else f"{f.older_than_2s} updates older than 2 s")
        verdict.append("nothing lost" if not f.lost else f"{f.lost} LOST")
        lines.append(
            f"{f.tables} tables: {'; '.join(verdict)}. Window {f.seconds:.0f} s after "
            f"{args.warmup:.0f} s warm-up (set-up {f.setup_seconds:.0f} s); "
            f"{f.updates} updates ({f.callbacks} clicks), {f.actions} moves stored "
            f"({f.actions_per_smazzata:.1f} per smazzata), echo {f.echo_updates}; CPU: bot "
            f"{f.bot_cpu_share:.0%} of a core, harness+fake {f.harness_cpu_share:.0%}; "
            f"calls: {mix}"
        )
    return "\n".join(lines)


def think_arg(text: str) -> str:
    """``--think``: a number of seconds or ``human``."""
    Think.parse(text)
    return text


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.load", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", type=int, nargs="+", default=[10],
                        help="concurrent tables (5 simulated humans each); several = one run each")
    parser.add_argument("--seconds", type=float, default=60, help="measurement window")
    parser.add_argument("--warmup", type=float, default=10, help="play before measuring")
    parser.add_argument("--warmup-moves", type=int, default=0,
                        help="after --warmup, also wait until this many moves were stored "
                             "(a short run then measures play, not the start-up: the "
                             "groups' pacing spaces the first messages)")
    parser.add_argument("--solo", type=int, nargs="+", default=None, metavar="N",
                        help="N tables of one person (in the Mini App, --think human "
                             "unless given) and four computers (--computer-level, default "
                             "the bot's; --computer-delay, default the bot's pause); "
                             "several = one run each (instead of --tables)")
    parser.add_argument("--think", default=None, type=think_arg,
                        help="SECONDS: mean seconds a human waits before clicking (uniform "
                             "0.5×..1.5×, the stress case); human: a person's pause, "
                             "lognormal with median 2.5 s, 10%% under 1.2 s, 10%% over 6 s "
                             "(from the seed; the parameters are printed); default 1, "
                             "with --solo human")
    parser.add_argument("--miniapp-share", type=float, default=0.0,
                        help="share of the human seats playing through the Mini App as a "
                             "browser does (session, live stream, moves posted)")
    parser.add_argument("--miniapp-close", type=float, default=0.2,
                        help="share of those pages closed (gone inactive) once mid-window, "
                             "for 5-15 s: the chat's fallback, then back")
    parser.add_argument("--echo-seconds", type=float, default=None,
                        help="length of each echo bot run (default: --seconds, so that both "
                             "are as exposed to the machine's hiccups)")
    parser.add_argument("--echo-http", choices=("httpx", "both"), default="both",
                        help="the echo bot on PTB's default HTTP backend only, or also on "
                             "the bot's (aiohttp), as a floor with the same cost per call")
    parser.add_argument("--echo-alongside", action=argparse.BooleanOptionalAction,
                        default=True,
                        help="also measure an echo bot during the bot's window, on a second "
                             "fake server in the same process (same machine and harness load)")
    parser.add_argument("--harness-gc", choices=("tuned", "default"), default="tuned",
                        help="this process's garbage collector once the tables are set up: "
                             "tuned (gc.freeze, thresholds 20000/20/10, as the bot's) or "
                             "CPython's default; its pauses delay the timestamps of the bot "
                             "and of the echo alike")
    parser.add_argument("--grace", type=float, default=30,
                        help="seconds after the window for late updates to be handled")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--computer-share", type=float, default=0.0,
                        help="share of the seats played by computers (0.5: half)")
    parser.add_argument("--computer-level", default=None, choices=LEVELS,
                        help="level of those computers (COMPUTER_LEVEL of the bot; default "
                             "facile, with --solo the bot's default)")
    parser.add_argument("--computer-delay", type=float, default=None,
                        help="COMPUTER_DELAY_SECONDS of the bot (the pause before a move; "
                             "default 0, with --solo the bot's default)")
    parser.add_argument("--slowest", type=int, default=0,
                        help="also print the N oldest updates of the window (diagnosis)")
    parser.add_argument("--no-flood", action="store_true",
                        help="the fake server does not enforce Telegram's flood limits")
    parser.add_argument("--log-level", default="INFO", help="LOG_LEVEL of the bot")
    parser.add_argument("--database", default=None, metavar="URL",
                        help="the bot's database: default, a new SQLite file per run; "
                        "postgresql://… : a new database per run on that server (created "
                        "through this URL, so CREATEDB is needed; dropped afterwards)")
    parser.add_argument("--workdir", type=Path, default=None,
                        help="where databases and logs go (default: a temporary directory)")
    args = parser.parse_args(argv)
    bot_default = Settings.model_fields
    if args.solo:
        args.tables, args.miniapp_share = args.solo, 1.0
    if args.think is None:
        args.think = "human" if args.solo else "1"
    if args.computer_level is None:
        args.computer_level = bot_default["computer_level"].default if args.solo else "facile"
    if args.computer_delay is None:
        args.computer_delay = (bot_default["computer_delay_seconds"].default if args.solo
                               else 0.0)
    return args


async def main_async(args: argparse.Namespace) -> None:
    print(Think.parse(args.think).describe(args.seed))
    print(f"harness collector: {args.harness_gc}" + (
        f" (after the set-up: gc.freeze(), thresholds {HARNESS_GC_THRESHOLDS})"
        if args.harness_gc == "tuned" else " (CPython's)"))
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
        workdir = args.workdir or Path(tmp)
        for tables in args.tables:
            print(f"== {tables} tables: set-up, {args.warmup:.0f} s warm-up, "
                  f"{args.seconds:.0f} s measured, then the echo bot ...", file=sys.stderr)
            database_url = args.database
            if args.database and is_postgres_url(args.database):  # a new database per run
                database_url = await create_database(
                    args.database, f"bench_load_{tables}_{os.getpid()}"
                )
            try:
                results.append(await run_bot(args, tables, workdir, database_url))
            finally:
                if database_url and database_url != args.database:
                    await drop_database(database_url)
            print(report(results[-1:], args), file=sys.stderr)
            for line in results[-1].slowest:
                print("  slow: " + line, file=sys.stderr)
    print(report(results, args))


def main(argv: list[str] | None = None) -> None:
    asyncio.run(main_async(parse_args(argv)))


if __name__ == "__main__":
    main()
