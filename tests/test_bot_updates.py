"""Updates of different chats run concurrently; those of one chat one at a time, in order."""

from __future__ import annotations

import asyncio

from telegram import Chat, Message, Update

from bot.updates import PerChatUpdateProcessor


def message_update(update_id: int, chat_id: int) -> Update:
    chat = Chat(chat_id, "group" if chat_id < 0 else "private")
    return Update(update_id, message=Message(update_id, None, chat, text="x"))  # type: ignore[arg-type]


async def test_chats_run_concurrently_but_each_chat_in_order() -> None:
    processor = PerChatUpdateProcessor(8)
    log: list[tuple[str, int]] = []
    release = asyncio.Event()

    async def handle(update_id: int, slow: bool) -> None:
        log.append(("start", update_id))
        if slow:
            await release.wait()  # e.g. waiting for the chat's message budget
        log.append(("end", update_id))

    updates = [(1, -100, True), (2, -100, False), (3, -200, False)]
    tasks = [asyncio.create_task(processor.process_update(message_update(u, c), handle(u, s)))
             for u, c, s in updates]
    await asyncio.sleep(0.05)
    # the other group was not blocked; the second update of the slow group waits its turn
    assert log == [("start", 1), ("start", 3), ("end", 3)]
    release.set()
    await asyncio.gather(*tasks)
    assert log[3:] == [("end", 1), ("start", 2), ("end", 2)]
    assert processor._locks == {}  # nothing kept once a chat is idle
