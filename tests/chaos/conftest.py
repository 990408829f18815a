"""Fixtures of the chaos suite: the real bot Application in-process (fast; the SIGKILL
scenario runs ``python -m bot`` instead) and tables of simulated humans."""

from __future__ import annotations

import logging
import random
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from bench.sim import SimTable
from storage import Database
from tests.conftest import RunningBot, make_bot

SEED = 4242


@dataclass
class Chaos:
    """A running in-process bot on the fake server, and helpers to open tables."""

    tg: Any
    bot: RunningBot
    caplog: pytest.LogCaptureFixture
    rng: random.Random = field(default_factory=lambda: random.Random(SEED))
    tables: list[SimTable] = field(default_factory=list)

    @property
    def db(self) -> Database:
        return self.bot.rt.db

    async def table(
        self, humans: int = 1, *, computers: int | None = None, match_end: str = "hands:1",
        users: list[Any] | None = None, start: bool = True,
    ) -> SimTable:
        """A group with ``humans`` simulated humans (or ``users``), computers in the other
        seats, ``match_end`` preset; the match started unless ``start=False``."""
        index = len(self.tables)
        users = users or [
            self.tg.add_user(f"T{index}P{i} <&>", language_code="it") for i in range(humans)
        ]
        table = SimTable(self.tg, self.db, f"Chaos {index} & co", users,
                         rng=random.Random(self.rng.random()))
        self.tables.append(table)
        await table.preset_match_end(match_end)
        if start:
            await table.open_and_start(5 - len(users) if computers is None else computers)
        return table

    def problems(self) -> list[str]:
        """Log records at ERROR or above, or carrying a traceback."""
        return [
            f"{r.name} {r.levelname}: {r.getMessage()}"
            + (f" [{r.exc_info[0].__name__}: {r.exc_info[1]}]" if r.exc_info and r.exc_info[0]
               else "")
            for r in self.caplog.records
            if r.levelno >= logging.ERROR or r.exc_info
        ]


@pytest.fixture
async def chaos(tg: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> AsyncIterator[Chaos]:
    caplog.set_level(logging.INFO)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    bot = await make_bot(tg, tmp_path / "bot.db").start()
    try:
        yield Chaos(tg, bot, caplog)
    finally:
        # Nothing is checked after the test: drop the edits still waiting for their chat's
        # budget (often a last edit of the group, up to a whole 3 s window away) instead of
        # waiting to deliver them, then stop as usual.
        outbox = bot.rt.outbox
        for chat_id in {*tg.world.chats, *tg.world.users}:  # groups and private chats
            outbox.drop_chat(chat_id)
        await outbox.close()
        await bot.stop()
