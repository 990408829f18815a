"""Simulated players for the end-to-end tests.

Each simulated user decides from what their own screen shows (their seat's view: own hand
and public facts) and acts ONLY by pressing the buttons the bot sent — the fake server
refuses presses of buttons that are not on the message.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from game import View
from storage import GameRow, repo
from tests.conftest import RunningBot

Policy = Callable[[View, random.Random], str]


def cheap_policy(view: View, rng: random.Random) -> str:
    """Open the auction with a rank call, everyone else passes; random legal cards."""
    legal = list(view.legal)
    if view.phase == "auction":
        if view.current_bid is None and "rR" in legal:
            return "rR"
        return "P"
    if view.phase == "declaration":
        return legal[0]
    return rng.choice(legal)


class Table:
    def __init__(self, tg: Any, bot: RunningBot, group: Any, users: list[Any]) -> None:
        self.tg = tg
        self.bot = bot
        self.group = group
        self.users = {u.id: u for u in users}
        self.rng = random.Random(7)
        self.game_id: int | None = None
        self.actions_done = 0
        self.private_wanted: dict[int, str] = {}

    @property
    def rt(self) -> Any:
        return self.bot.rt

    async def row(self) -> GameRow:
        assert self.game_id is not None
        row = await repo.get_game(self.rt.db, self.game_id)
        assert row is not None
        return row

    async def state(self) -> tuple[GameRow, Any]:
        row = await self.row()
        return row, self.rt.service.game_of(row)

    # ------------------------------------------------------------------ buttons

    def _message_with(self, chat: Any, data: str) -> Any:
        for message in reversed(self.tg.chat_messages(chat, from_bot=True)):
            if any(b.callback_data == data for b in message.buttons):
                return message
        return None

    async def press(self, user: Any, chat: Any, data: str, *, expect_ok: bool = True) -> Any:
        message = await self.tg.wait_until(
            lambda: self._message_with(chat, data), timeout=10, what=f"button {data}"
        )
        handle = await user.press(message, data)
        answer = await handle.wait(10)
        if expect_ok:
            assert not answer.show_alert, f"{user.first_name} pressed {data}: {answer.text}"
        return answer

    async def perform(self, user: Any, view: View, code: str) -> None:
        gid, v = self.game_id, view.version
        private = user.private_chat  # bids and cards alike: from the hand
        if code.startswith(("c", "s", "d")) or code == "P" or code.startswith("r"):
            await self.press(user, private, f"a:{gid}:{v}:{code}")
        elif code == "K":
            await self.press(user, private, f"q:{gid}:{v}:{code}")
            await self.press(user, private, f"a:{gid}:{v}:{code}")
        elif code == "M":  # the hand's monte button (drawn for the smazzata) asks first
            await self.press(user, private, f"h:{gid}:{view.smazzata}:M")
            await self.press(user, private, f"a:{gid}:{v}:{code}")
        elif code.startswith(("t", "o", "n")):
            low = _low(view)
            if code.startswith(("t", "n")):  # "2 a N", a punti's "N": public calls
                chat, prefix, target = private, code[0], int(code[1:])
                await self.press(user, chat, f"p:{gid}:{v}:{prefix}:{low}")
            else:  # the hand's obbligato button (drawn for the smazzata) opens the picker
                chat = private
                prefix, points = code[1:].split(".")
                prefix, target = "o" + prefix, int(points)
                await self.press(user, chat, f"h:{gid}:{view.smazzata}:{prefix}")
            current = low
            while current != target:
                step = max(s for s in (1, 5, 10) if current + s <= target)
                current += step
                await self.press(user, chat, f"p:{gid}:{v}:{prefix}:{current}")
            await self.press(user, chat, f"a:{gid}:{v}:{code}")
        else:
            raise AssertionError(f"no way to play {code}")
        self.actions_done += 1

    # ------------------------------------------------------------------ playing

    async def step(self, policy: Policy, timeout: float = 10) -> bool:
        """One move by the human in turn (or wait for computers). False once over."""
        row, game = await self.state()
        if row.status != "playing" or game.is_over():
            return False
        seat_no = game.current_seat()
        seat = row.seat(seat_no)
        version = row.version
        if seat is not None and seat.is_human and not seat.away:
            for other in row.seats:  # out-of-turn calls first (monte)
                if other.user_id is not None and other.seat != seat_no:
                    oview = game.view(other.seat)
                    if "M" in oview.legal and policy(oview, self.rng) == "M":
                        await self.perform(self.users[other.user_id], oview, "M")
                        await self._wait_version(version, timeout)
                        return True
            view = game.view(seat_no)
            code = policy(view, self.rng)
            assert code in view.legal, (code, view.legal)
            await self.perform(self.users[seat.user_id], view, code)
        await self._wait_version(version, timeout)
        return True

    async def _wait_version(self, version: int, timeout: float) -> None:
        async def changed() -> bool:
            row = await self.row()
            return row.version != version or row.status != "playing"

        import asyncio

        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not await changed():
            if loop.time() > deadline:
                raise AssertionError("the game did not move\n" + self.tg.dump())
            await asyncio.sleep(0.01)

    async def play(self, policy: Policy, until: Callable[[Any], bool] | None = None,
                   max_steps: int = 2000) -> None:
        for _ in range(max_steps):
            if until is not None:
                _, game = await self.state()
                if until(game):
                    break
            if not await self.step(policy):
                break
        else:
            raise AssertionError("too many steps")
        await self.bot.handled()  # (the last move's redraw queued, its new messages sent)


def _low(view: View) -> int:
    bid = view.current_bid
    if bid is not None and bid[0] in "tn":
        return int(bid[1:]) + 1
    if bid is not None and bid[0] == "o":
        return int(bid.split(".")[1]) + 1
    return 61



async def small_table(
    tg: Any, bot: RunningBot, group: Any, humans: list[Any], *, thread: int | None = None,
    match_end: str = "hands:1",
) -> Table:
    """A lobby opened by ``humans[0]`` (in ``thread`` of a forum): the humans join by button
    (all have pressed Start), computers fill the other seats; options set in the database."""
    from bot.prefs import with_value

    prefs = with_value(await bot.rt.chat_prefs(group.id), "match_end", match_end)
    await repo.save_chat_settings(bot.rt.db, group.id, prefs.language, prefs.to_json())
    sent = await humans[0].send(group, "/nuova", thread_id=thread)

    def lobby_message() -> Any:
        for m in tg.chat_messages(group, from_bot=True):
            joins = [b.callback_data for b in m.buttons
                     if (b.callback_data or "").endswith(":join")]
            if m.message_id > sent.message_id and m.thread_id == thread and joins:
                return m, int(joins[0].split(":")[1])
        return None

    lobby, gid = await tg.wait_until(lobby_message, timeout=10, what="the lobby")
    table = Table(tg, bot, group, humans)
    table.game_id = gid
    for user in humans:
        answer = await (await user.press(lobby, f"l:{gid}:join")).wait(10)
        assert not answer.show_alert, answer.text
    for _ in range(5 - len(humans)):
        answer = await (await humans[0].press(lobby, f"l:{gid}:cpu")).wait(10)
        assert not answer.show_alert, answer.text
    return table
