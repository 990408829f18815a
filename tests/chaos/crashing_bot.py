"""``python -m tests.chaos.crashing_bot``: the bot (``python -m bot``) with one bug, for
tests only: the press of a game whose id is in the file ``CRASH_GAME_FILE`` kills the
process (SIGKILL, as the kernel's OOM killer would) while it is being handled, before
anything of it is stored. No file, no crash: the bot as shipped."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Any

from bot.__main__ import main
from bot.tables import Tables

_human_action = Tables.human_action


async def _crashing(self: Tables, game_id: int, *args: Any, **kwargs: Any) -> Any:
    crash = Path(os.environ["CRASH_GAME_FILE"])
    if crash.exists() and crash.read_text().strip() == str(game_id):
        os.kill(os.getpid(), signal.SIGKILL)
    return await _human_action(self, game_id, *args, **kwargs)


Tables.human_action = _crashing  # type: ignore[method-assign]

if __name__ == "__main__":
    sys.exit(main())
