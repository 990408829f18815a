"""The real bot in a subprocess, its database seen through the storage API, and simulated
humans — shared by the load benchmark (``bench.load``) and the chaos suite (``tests/chaos``).

Simulated humans act like the end-to-end driver (``tests/e2e/driver.py``): they decide
from their seat's view (read from the database, exactly what their screen shows) and act
ONLY by pressing buttons the bot sent; the fake server refuses presses of buttons that are
not on the message. Everything else goes through the bot's documented commands
(``/impostazioni``, ``/nuova``, ``/inizia``, ``/mano``) and the fake server's test API.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import random
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from game import Game, View
from sandbox.fakeapi import CallbackQueryHandle, FakeChat, FakeMessage, FakeTelegram, FakeUser
from storage import Database, GameRow, open_database, repo

REPO_ROOT = Path(__file__).resolve().parent.parent
#: Environment variables the bot reads (bot/config.py); inherited values are dropped so a
#: developer's shell or .env never leaks into a run.
BOT_ENV = (
    "BOT_TOKEN", "TELEGRAM_BASE_URL", "TELEGRAM_BASE_FILE_URL", "DATABASE_URL",
    "DEFAULT_LANGUAGE", "TURN_TIMEOUT_SECONDS", "LOG_LEVEL", "ADMIN_CHAT_ID",
    "COMPUTER_LEVEL", "COMPUTER_DELAY_SECONDS", "GROUP_MESSAGES_PER_MINUTE",
    "WEBHOOK_URL", "WEBHOOK_SECRET", "WEBHOOK_LISTEN", "WEBHOOK_PORT",
)  # fmt: skip
_CLK_TCK = os.sysconf("SC_CLK_TCK")


class BotDied(AssertionError):
    """The bot process exited on its own."""


# ======================================================================================
# the bot process
# ======================================================================================


class BotProcess:
    """``python -m <module>`` against the fake server, restartable, killable.

    Settings come from the environment only (``cwd`` is an empty directory, so no
    ``.env`` is read). Output of every run is appended to ``log_path``.
    """

    def __init__(
        self,
        tg: FakeTelegram,
        workdir: Path,
        *,
        db_path: Path | None = None,
        database_url: str | None = None,
        module: str = "bot",
        env: dict[str, str] | None = None,
        name: str = "bot",
        command: list[str] | None = None,
    ) -> None:
        self.tg = tg
        self.workdir = workdir
        self.db_path = db_path or workdir / f"{name}.db"
        #: DATABASE_URL of the bot: ``database_url`` if given, else the SQLite ``db_path``
        self.database_url = database_url or f"sqlite:///{self.db_path.resolve()}"
        self.module = module
        self.extra_env = dict(env or {})
        self.name = name
        #: what to run instead of ``python -m <module>`` (e.g. an installed console script)
        self.command = command
        self.log_path = workdir / f"{name}.log"
        self.proc: asyncio.subprocess.Process | None = None
        #: when each start began (loop time)
        self.started_at: list[float] = []
        #: since when (loop time) the process has been up, polling; None while it is down
        #: or starting
        self.up_since: float | None = None
        self.starts = 0
        self._log: IO[bytes] | None = None

    def environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k.upper() not in BOT_ENV}
        env.update(
            {
                "BOT_TOKEN": self.tg.token,
                "TELEGRAM_BASE_URL": self.tg.base_url,
                "TELEGRAM_BASE_FILE_URL": self.tg.base_file_url,
                "DATABASE_URL": self.database_url,
                "TURN_TIMEOUT_SECONDS": "0",
                "COMPUTER_LEVEL": "facile",
                "COMPUTER_DELAY_SECONDS": "0",
                "DEFAULT_LANGUAGE": "it",
                "LOG_LEVEL": "INFO",
                "PYTHONPATH": os.pathsep.join(
                    p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p
                ),
                "PYTHONUNBUFFERED": "1",
            }
        )
        env.update(self.extra_env)
        return env

    @property
    def pid(self) -> int:
        assert self.proc is not None, "not started"
        return self.proc.pid

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    async def start(self, timeout: float = 30.0, *, wait: bool = True) -> None:
        """Spawn the process and wait for its first getUpdates, or in webhook mode its
        setWebhook and its server listening (start-up done: settings read, database
        opened and migrated, running games resumed). ``wait=False``: only spawn it (a
        standby instance polls nothing)."""
        assert not self.running, "already running"
        self.workdir.mkdir(parents=True, exist_ok=True)
        first_new = len(self.tg.calls)
        self.starts += 1
        self.started_at.append(asyncio.get_running_loop().time())
        self.up_since = None
        self._close_log()
        self._log = self.log_path.open("ab")
        self._log.write(f"\n===== start {self.starts} =====\n".encode())
        self._log.flush()
        self.proc = await asyncio.create_subprocess_exec(
            *(self.command or (sys.executable, "-m", self.module)),
            cwd=self.workdir, env=self.environment(),
            stdin=asyncio.subprocess.DEVNULL, stdout=self._log, stderr=self._log,
            preexec_fn=_die_with_parent,
        )  # fmt: skip
        proc = self.proc
        if not wait:
            return

        def polling() -> bool:
            if proc.returncode is not None:
                raise BotDied(f"{self.name} exited with {proc.returncode}:\n{self.log_tail()}")
            calls = self.tg.calls
            return any(
                c.method == "getUpdates" or (c.method == "setWebhook" and c.ok)
                for c in calls[first_new:]
            )

        try:
            await self.tg.wait_until(polling, timeout, what=f"{self.name} to start polling")
            await self._webhook_listening(timeout)
            self.up_since = asyncio.get_running_loop().time()
        except Exception:
            if proc.returncode is not None:
                raise BotDied(
                    f"{self.name} exited with {proc.returncode}:\n{self.log_tail()}"
                ) from None
            raise

    async def _webhook_listening(self, timeout: float) -> None:
        """In webhook mode, wait until the bot's server accepts connections: PTB calls
        setWebhook *before* it starts listening (Telegram retries an update it could not
        deliver; a test should not send one into that gap)."""
        port = self.extra_env.get("WEBHOOK_PORT")
        if not self.extra_env.get("WEBHOOK_URL") or not port:
            return
        host = self.extra_env.get("WEBHOOK_LISTEN", "127.0.0.1")
        if host in ("0.0.0.0", "::"):
            host = "127.0.0.1"
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            try:
                _, writer = await asyncio.open_connection(host, int(port))
            except OSError:
                if asyncio.get_running_loop().time() > deadline:
                    raise TimeoutError(f"{self.name}'s webhook server never listened") from None
                if self.proc is not None and self.proc.returncode is not None:
                    raise BotDied(f"{self.name} exited with {self.proc.returncode}") from None
                await asyncio.sleep(0.02)
                continue
            writer.close()
            await writer.wait_closed()
            return

    async def kill(self) -> None:
        """SIGKILL: no clean-up of any kind happens in the bot."""
        self.up_since = None
        if self.running:
            assert self.proc is not None
            self.proc.send_signal(signal.SIGKILL)
            await self.proc.wait()
        self._close_log()

    async def stop(self, timeout: float = 20.0) -> int:
        """SIGTERM (PTB stops polling, runs post_shutdown); SIGKILL after ``timeout``."""
        assert self.proc is not None
        self.up_since = None
        if self.running:
            self.proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), timeout)
            except TimeoutError:
                self.proc.send_signal(signal.SIGKILL)
                await self.proc.wait()
        self._close_log()
        assert self.proc.returncode is not None
        return self.proc.returncode

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None

    # -- figures ------------------------------------------------------------------------
    def cpu_seconds(self) -> float:
        """User + system CPU time of the running process."""
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _CLK_TCK

    def children_cpu_seconds(self) -> float:
        """User + system CPU time of the processes the bot started, alive (read from
        /proc: the search pool's forkserver and workers) or ended and waited for by
        them."""
        children: dict[int, list[int]] = {}
        stats: dict[int, list[str]] = {}
        for path in Path("/proc").glob("[0-9]*/stat"):
            with contextlib.suppress(OSError, IndexError, ValueError):
                fields = path.read_text().rsplit(")", 1)[1].split()
                pid = int(path.parent.name)
                stats[pid] = fields
                children.setdefault(int(fields[1]), []).append(pid)
        ticks, todo = 0, list(children.get(self.pid, ()))
        while todo:
            pid = todo.pop()
            fields = stats[pid]  # utime, stime, and of its children waited for
            ticks += sum(int(fields[i]) for i in (11, 12, 13, 14))
            todo += children.get(pid, ())
        return ticks / _CLK_TCK

    def memory_kib(self) -> tuple[int, int]:
        """(resident set size, peak resident set size) in KiB."""
        values = {}
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                values[key] = int(rest.split()[0])
        return values["VmRSS"], values["VmHWM"]

    # -- logs ---------------------------------------------------------------------------
    def log_text(self) -> str:
        if self._log is not None:
            self._log.flush()
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])

    def problems(self) -> list[str]:
        """Log lines at ERROR/CRITICAL level and traceback headers."""
        return [
            line for line in self.log_text().splitlines()
            if " ERROR " in line or " CRITICAL " in line or line.startswith("Traceback")
        ]


def _die_with_parent() -> None:  # pragma: no cover - runs in the child
    """Linux: the bot gets SIGKILL if the harness dies, so no orphan keeps polling."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


async def open_reader(db_path: Path | str) -> Database:
    """A second connection to the bot's database (a file or a URL), for reading through
    the storage API."""
    return await open_database(db_path, migrate=False, check_writable=False)


# ======================================================================================
# simulated humans
# ======================================================================================


def simple_policy(view: View, rng: random.Random) -> str:
    """Cheap and button-friendly: the first bidder calls the highest rank, the others
    pass; the first legal suit; a random legal card. Only one-press actions."""
    legal = list(view.legal)
    if view.phase == "auction":
        ranks = [c for c in legal if c.startswith("r")]
        if view.current_bid is None and ranks:
            return ranks[0]
        if "P" in legal:
            return "P"
        return ranks[0] if ranks else legal[0]
    if view.phase == "declaration":
        return legal[0]
    return rng.choice(legal)


@dataclass(frozen=True)
class Think:
    """How long a simulated person waits before pressing: a fixed mean (uniform 0.5×..1.5×
    of it: the stress case) or like a person (``human``): ``shift`` s plus a lognormal
    (``median``, ``sigma``) — fitted so that the median is 2.5 s, 10% are under 1.2 s and
    10% over 6 s (a plain lognormal cannot have all three: 2.5/1.2 ≠ 6/2.5)."""

    mean: float = 0.0
    human: bool = False
    shift: float = 0.0
    median: float = 0.0
    sigma: float = 0.0

    @classmethod
    def parse(cls, text: str | float) -> Think:
        if str(text) == "human":
            return cls.person()
        return cls(mean=float(text))

    @classmethod
    def person(cls, median: float = 2.5, low: float = 1.2, high: float = 6.0,
               tail: float = 0.10) -> Think:
        """The shifted lognormal with these median and tail quantiles (``tail`` under
        ``low``, ``tail`` over ``high``)."""
        z = NORMAL_QUANTILE_90 if tail == 0.10 else _normal_quantile(1 - tail)
        # s + m/k = low, s + m·k = high, s + m = median  =>  (low−s)(high−s) = (median−s)²
        shift = (low * high - median * median) / (low + high - 2 * median)
        scale = median - shift
        k = (high - shift) / scale
        return cls(human=True, shift=shift, median=scale, sigma=math.log(k) / z)

    def __bool__(self) -> bool:
        return self.human or self.mean > 0

    def pause(self, rng: random.Random) -> float:
        if self.human:
            return self.shift + self.median * math.exp(rng.gauss(0.0, self.sigma))
        return self.mean * rng.uniform(0.5, 1.5)

    def describe(self, seed: int | None = None) -> str:
        if not self.human:
            return f"think: {self.mean:g} s × uniform(0.5, 1.5) per press"
        rng = random.Random(seed)
        sample = sorted(self.pause(rng) for _ in range(20_000))
        q = [sample[int(len(sample) * f)] for f in (0.1, 0.5, 0.9)]
        return (f"think: human: each press after {self.shift:.3f} s + {self.median:.3f} s × "
                f"exp(N(0, {self.sigma:.3f}²)) (a shifted lognormal: median 2.5 s, 10% under "
                f"1.2 s, 10% over 6 s), from the seed"
                f"{'' if seed is None else f' {seed}'}; sampled 10%/50%/90%: "
                f"{q[0]:.2f}/{q[1]:.2f}/{q[2]:.2f} s, mean {sum(sample) / len(sample):.2f} s")


#: The standard normal's 90% quantile.
NORMAL_QUANTILE_90 = 1.2815515655446004


def _normal_quantile(p: float) -> float:
    from statistics import NormalDist

    return NormalDist().inv_cdf(p)


def find_button_message(chat: FakeChat, data: str) -> FakeMessage | None:
    """The newest bot message of ``chat`` carrying a button with this callback data."""
    for message in reversed(list(chat.messages.values())):
        if (
            message.from_bot and not message.deleted and message.reply_markup
            and any(b.callback_data == data for b in message.buttons)
        ):
            return message
    return None


@dataclass
class Press:
    """One button press of a simulated human and the bot's answer (when it comes)."""

    user_id: int
    game_id: int
    version: int
    code: str
    handle: CallbackQueryHandle
    at: float

    @property
    def answered(self) -> bool:
        return self.handle.answer is not None

    @property
    def acknowledged(self) -> bool:
        """Answered without an alert: the bot told the user the move was taken."""
        answer = self.handle.answer
        return answer is not None and not answer.show_alert


@dataclass
class TableStats:
    matches_started: int = 0
    matches_finished: int = 0
    rescues: int = 0  # times a stuck human had to type /mano
    #: Each rescue: (loop time, game, version, phase, whose private chat's last bot call
    #: came how long before), so that a failure says where a table stood.
    rescued: list[tuple[float, int, int, str, float | None]] = field(default_factory=list)


class SimTable:
    """One group with its simulated humans (the remaining seats: computers)."""

    def __init__(
        self,
        tg: FakeTelegram,
        reader: Database,
        name: str,
        humans: list[FakeUser],
        *,
        rng: random.Random,
        think: float | Think = 0.0,
        policy: Callable[[View, random.Random], str] = simple_policy,
        group: FakeChat | None = None,
    ) -> None:
        self.tg = tg
        self.reader = reader
        self.humans = humans
        self.users = {u.id: u for u in humans}
        self.admin = humans[0]
        self.group = group or tg.add_group(name, humans, admins=[humans[0]])
        self.rng = rng
        self.think = think  # (a float is a fixed mean)
        self.policy = policy
        #: Users playing through the Mini App while their page is live (they act by
        #: themselves, see :mod:`bench.miniapp`): this table's loop leaves them alone.
        self.live: set[int] = set()
        self.game_id: int | None = None
        self.game_ids: list[int] = []
        self.presses: list[Press] = []
        #: Seconds from a human's turn being seen in the database to their button being on
        #: screen (the pace the players feel; the bot renders through its Outbox).
        #: (when seen, seconds, whether the button was in the group, whether a bid)
        self.turn_waits: list[tuple[float, float, bool, bool]] = []
        self._turn_seen: dict[tuple[int, int], float] = {}
        #: (game, version) -> the user in turn (a human), as the players saw it.
        self.in_turn: dict[tuple[int, int], int] = {}
        self.stats = TableStats()
        self.watch = tg.watch([self.group, *humans])
        self._cached: tuple[int, int, Game] | None = None
        self._last_view: tuple[tuple[int, int, int], View] | None = None

    @property
    def think(self) -> Think:
        return self._think

    @think.setter
    def think(self, value: float | Think) -> None:
        self._think = value if isinstance(value, Think) else Think(mean=value)

    # -- waiting ------------------------------------------------------------------------
    async def until(self, predicate: Callable[[], Any], timeout: float, what: str) -> Any:
        """Wait (woken by calls to this table's chats) until ``predicate()`` is truthy."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            value = predicate()
            if value:
                return value
            left = deadline - loop.time()
            if left <= 0:
                raise AssertionError(f"{self.group.title}: timed out waiting for {what}")
            await self.watch.wait(min(left, 0.5))

    async def until_async(
        self, predicate: Callable[[], Awaitable[Any]], timeout: float, what: str
    ) -> Any:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            value = await predicate()
            if value:
                return value
            left = deadline - loop.time()
            if left <= 0:
                raise AssertionError(f"{self.group.title}: timed out waiting for {what}")
            await self.watch.wait(min(left, 0.25))

    async def tap(self, user: FakeUser, message: FakeMessage, data: str) -> Any:
        """Press a button and wait for the answer."""
        return await (await user.press(message, data)).wait(30)

    # -- setting up ---------------------------------------------------------------------
    async def set_match_end(self, value: str, timeout: float = 30) -> None:
        """Through /impostazioni: press "Fine partita" until it shows ``value``."""
        after = self._last_id(self.group)
        await self.admin.send(self.group, "/impostazioni")
        menu = await self.until(
            lambda: self._new_bot_message(self.group, after, lambda m: any(
                b.text.startswith("Fine partita") for b in m.buttons
            )),
            timeout, "the settings menu",
        )
        for _ in range(12):
            button = next(b for b in menu.buttons if b.text.startswith("Fine partita"))
            if button.text.endswith(f": {value}"):
                return
            text = button.text
            answer = await self.tap(self.admin, menu, str(button.callback_data))
            assert not answer.show_alert, answer.text

            def changed(before: str = text) -> bool:
                shown = next(b for b in menu.buttons if b.text.startswith("Fine partita"))
                return bool(shown.text != before)

            await self.until(changed, timeout, "the menu to change")
        raise AssertionError(f"match end {value!r} not offered by the menu")

    async def preset_match_end(self, value: str) -> None:
        """The same as `set_match_end`, written through the storage API before ``/nuova``
        (saves the bot five updates per table in big set-ups). Uses the bot's settings
        model, so a change of its format shows up here at once."""
        from bot.prefs import Prefs
        from game import TableOptions

        prefs = Prefs(options=TableOptions(match_end=value), turn_timeout=0, language="it")
        await repo.save_chat_settings(self.reader, self.group.id, "it", prefs.to_json())

    async def open_and_start(
        self, computers: int, timeout: float = 60,
        before_start: Callable[[], Any] | None = None,
    ) -> int:
        """/nuova, every human presses Entra, the admin adds computers, /inizia
        (``before_start()`` is called just before /inizia)."""
        for user in self.humans:
            if not user.started:
                await user.start_bot()
        after = self._last_id(self.group)
        await self.admin.send(self.group, "/nuova")
        lobby = await self.until(
            lambda: self._new_bot_message(self.group, after, lambda m: any(
                (b.callback_data or "").endswith(":join") for b in m.buttons
            )),
            timeout, "the lobby",
        )
        join = next(b.callback_data for b in lobby.buttons if b.callback_data.endswith(":join"))
        gid = int(join.split(":")[1])
        for user in self.humans:
            answer = await self.tap(user, lobby, join)
            assert not answer.show_alert and not answer.url, answer
        for _ in range(computers):
            answer = await self.tap(self.admin, lobby, f"l:{gid}:cpu")
            assert not answer.show_alert, answer.text
        if before_start is not None:
            before_start()
        await self.admin.send(self.group, "/inizia")

        async def playing() -> bool:
            row = await repo.get_game(self.reader, gid)
            return row is not None and row.status == "playing"

        await self.until_async(playing, timeout, "the match to start")
        self.game_id = gid
        self.game_ids.append(gid)
        self.stats.matches_started += 1
        return gid

    def _last_id(self, chat: FakeChat) -> int:
        return max(chat.messages, default=0)

    def _new_bot_message(self, chat: FakeChat, after: int, match: Any) -> FakeMessage | None:
        for message in chat.messages.values():
            if (
                message.message_id > after and message.from_bot and not message.deleted
                and (match(message) if callable(match) else match in message.content)
            ):
                return message
        return None

    # -- playing ------------------------------------------------------------------------
    async def state(self) -> tuple[GameRow, Game | None]:
        assert self.game_id is not None
        cached = self._cached
        known = cached[1] if cached is not None and cached[0] == self.game_id else -1
        # the 25 KB snapshot only when the game moved: this harness shares its process
        # and event loop with the fake server, whose timestamps are the latency figures
        row = await repo.get_game(self.reader, self.game_id, snapshot_unless_version=known)
        assert row is not None
        if row.version == known and cached is not None and row.status != "lobby":
            return row, cached[2]
        if row.snapshot_json is None:
            return row, None
        self._cached = (row.game_id, row.version, Game.from_json(row.snapshot_json))
        return row, self._cached[2]

    async def play(
        self,
        *,
        deadline: float,
        rescue_after: float | None = None,
        stop: asyncio.Event | None = None,
        presses: int | None = None,
        stall_after: float | None = None,
        gate: asyncio.Event | None = None,
        up_since: Callable[[], float | None] | None = None,
    ) -> bool:
        """Play the current match until it is over (True) or ``stop``/``deadline`` or
        after ``presses`` presses or when the game did not move for ``stall_after``
        seconds (False). While ``gate`` is clear, the humans hold their presses.

        ``deadline`` is a ``loop.time()``. With ``rescue_after``, a human whose buttons
        have not appeared for that long types ``/mano`` (counted in ``stats.rescues``);
        with ``up_since`` (the bot's :attr:`BotProcess.up_since`), only the time the bot
        was up counts (a restart on a loaded machine took 6-8 s before its first poll,
        and nothing is redrawn before that).
        """
        loop = asyncio.get_running_loop()
        budget = presses
        moved: tuple[int, float] = (-1, loop.time())
        last_press: dict[int, Press] = {}
        waiting_since: tuple[int, float] | None = None
        while stop is None or not stop.is_set():
            if loop.time() > deadline:
                return False
            row, game = await self.state()
            if row.status != "playing" or game is None:
                if row.status == "finished":
                    self.stats.matches_finished += 1
                return row.status == "finished"
            if row.version != moved[0]:
                moved = (row.version, loop.time())
            elif stall_after is not None and loop.time() - moved[1] > stall_after:
                return False
            seat_no = game.current_seat()
            seat = None if seat_no is None else row.seat(seat_no)
            if (seat is not None and seat.is_human and not seat.away
                    and seat.user_id is not None and seat.user_id not in self.live):
                self.in_turn[(row.game_id, row.version)] = seat.user_id
                view = self._view_of(game, row, seat.seat)
                code = self.policy(view, self.rng)
                user = self.users[seat.user_id]
                data = f"a:{row.game_id}:{row.version}:{code}"
                previous = last_press.get(row.version)
                # bids and cards alike are in the hand (a group message carrying the
                # button would be pressed too, and counted as the group's)
                message = self._button(user, data)
                key = (row.game_id, row.version)
                seen = self._turn_seen.setdefault(key, loop.time())
                if message is not None and seen > 0:
                    self.turn_waits.append((seen, loop.time() - seen,
                                            message.chat.id == self.group.id,
                                            view.phase == "auction"))
                    self._turn_seen[key] = 0.0  # counted
                if message is not None and self._may_press(previous, loop.time()):
                    if self.think:
                        await asyncio.sleep(self.think.pause(self.rng))
                        # a person looks again: a button redrawn away meanwhile is not
                        # pressed (nor by a player who opened the Mini App meanwhile)
                        message = self._button(user, data)
                        if message is None or seat.user_id in self.live:
                            continue
                    if gate is not None and not gate.is_set():
                        await gate.wait()
                        continue  # (and look again)
                    handle = await user.press(message, data)
                    press = Press(user.id, row.game_id, row.version, code, handle, loop.time())
                    self.presses.append(press)
                    last_press[row.version] = press
                    if budget is not None:
                        budget -= 1
                        if budget <= 0:
                            return False
                    continue
                up = loop.time() if up_since is None else up_since()
                if message is None and previous is None and rescue_after is not None:
                    if (waiting_since is None or waiting_since[0] != row.version
                            or up is None):
                        waiting_since = (row.version, loop.time())
                    elif loop.time() - max(waiting_since[1], up) > rescue_after:
                        self.stats.rescues += 1
                        last = [c.at for c in self.tg.calls[-400:]
                                if c.chat_id == user.id and c.ok]
                        self.stats.rescued.append((
                            loop.time(), row.game_id, row.version, view.phase,
                            None if not last else time.monotonic() - last[-1]))
                        waiting_since = (row.version, loop.time())
                        await user.dm("/mano")
            await self.watch.wait(0.25)
        return False

    def _button(self, user: FakeUser, data: str) -> FakeMessage | None:
        """The message showing the button ``data`` to ``user``: their hand (where the bot
        draws bids and cards), else a group message (the bot draws none there)."""
        message = find_button_message(user.private_chat, data)
        if message is None:
            message = find_button_message(self.group, data)
        return message

    def _view_of(self, game: Game, row: GameRow, seat: int) -> View:
        """The seat's view, computed once per version (the loop wakes on every redraw)."""
        key = (row.game_id, row.version, seat)
        if self._last_view is None or self._last_view[0] != key:
            self._last_view = (key, game.view(seat))
        return self._last_view[1]

    def drawn(self, user: FakeUser, version: int, legal: tuple[str, ...]) -> bool:
        """Whether some button of ``legal`` actions at ``version`` is on ``user``'s screen."""
        assert self.game_id is not None
        return any(
            find_button_message(chat, f"a:{self.game_id}:{version}:{code}")
            for code in legal
            for chat in (self.group, user.private_chat)
        )

    async def human_turn(
        self, user: FakeUser | None = None, *, after: int = -1, timeout: float = 20
    ) -> tuple[int, FakeUser]:
        """Wait until a human (``user`` if given) is in turn at a version > ``after`` and
        sees their buttons; return (version, user)."""

        async def ready() -> tuple[int, FakeUser] | None:
            row, game = await self.state()
            if row.status != "playing" or game is None or row.version <= after:
                return None
            seat_no = game.current_seat()
            seat = None if seat_no is None else row.seat(seat_no)
            if seat is None or seat.user_id not in self.users or seat.away:
                return None
            who = self.users[seat.user_id]
            if user is not None and who is not user:
                return None
            legal = game.view(seat.seat).legal
            return (row.version, who) if self.drawn(who, row.version, legal) else None

        found: tuple[int, FakeUser] = await self.until_async(ready, timeout, "a human's turn")
        return found

    @staticmethod
    def _may_press(previous: Press | None, now: float) -> bool:
        """Once per version; again after a refusal, or when no answer came for 10 s (the
        bot was down and the query may have expired)."""
        if previous is None:
            return True
        if previous.answered:
            return not previous.acknowledged and now - previous.at > 0.5
        return now - previous.at > 10.0


@dataclass
class World:
    """Many tables against one bot; users numbered so that names are readable."""

    tg: FakeTelegram
    reader: Database
    tables: list[SimTable] = field(default_factory=list)

    def add_table(
        self, index: int, humans: int, *, rng: random.Random, think: float | Think = 0.0,
        language_code: str = "it",
    ) -> SimTable:
        users = [
            self.tg.add_user(f"T{index}P{i} <&>", language_code=language_code)
            for i in range(humans)
        ]
        table = SimTable(self.tg, self.reader, f"Tavolo {index} & amici", users,
                         rng=random.Random(rng.random()), think=think)
        self.tables.append(table)
        return table


@contextlib.asynccontextmanager
async def running_bot(tg: FakeTelegram, workdir: Path, **kwargs: Any) -> Any:
    """A started :class:`BotProcess`, stopped (or killed) on exit."""
    bot = BotProcess(tg, workdir, **kwargs)
    await bot.start()
    try:
        yield bot
    finally:
        if bot.running:
            await bot.stop()
