"""Recording the drawn version once the outbox sent it (bot.tables.delivery)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from bot.tables.delivery import Delivery
from storage import StorageUnavailable


class _Outbox:
    async def settled(self, chats: set[int]) -> None:
        await asyncio.sleep(0)


class _Service:
    def __init__(self, code: str) -> None:
        self.code = code
        self.saves = 0

    async def save_ui(self, game_id: int, patch: Any) -> None:
        self.saves += 1
        raise StorageUnavailable("no", code=self.code)


@pytest.mark.parametrize(("code", "warned"), [("fenced", False), ("locked", True)])
async def test_a_record_refused_by_the_fence_is_not_logged_as_a_problem(
    code: str, warned: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """Fenced (standing by: the active instance redraws), the refused record is expected
    and logs nothing; another storage failure is a warning."""
    service = _Service(code)
    delivery = Delivery(service, _Outbox())  # type: ignore[arg-type]
    with caplog.at_level(logging.DEBUG, logger="bot.tables.delivery"):
        delivery.queued(7, 3, {1, 2})
        await delivery.flush(1.0)
    assert service.saves == 1
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert bool(warnings) is warned, warnings
