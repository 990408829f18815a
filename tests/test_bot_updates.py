"""Updates of different chats run concurrently; those of one chat one at a time, in order."""

from __future__ import annotations

import asyncio

from telegram import CallbackQuery, Chat, Message, Update, User

from bot.updates import PerChatUpdateProcessor


def message_update(update_id: int, chat_id: int) -> Update:
    chat = Chat(chat_id, "group" if chat_id < 0 else "private")
    return Update(update_id, message=Message(update_id, None, chat, text="x"))  # type: ignore[arg-type]


class Handlers:
    """Handlers that record when they start and end; slow ones wait for ``release``
    (e.g. for the chat's message budget)."""

    def __init__(self) -> None:
        self.log: list[tuple[str, int]] = []
        self.release = asyncio.Event()

    async def handle(self, update_id: int, slow: bool) -> None:
        self.log.append(("start", update_id))
        if slow:
            await self.release.wait()
        self.log.append(("end", update_id))


async def test_chats_run_concurrently_but_each_chat_in_order() -> None:
    processor = PerChatUpdateProcessor(8)
    handlers = Handlers()
    log, release, handle = handlers.log, handlers.release, handlers.handle

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


def button_update(update_id: int, chat_id: int, user_id: int, data: str) -> Update:
    chat = Chat(chat_id, "group" if chat_id < 0 else "private")
    message = Message(update_id, None, chat, text="table")  # type: ignore[arg-type]
    user = User(user_id, f"U{user_id}", False)
    return Update(update_id, callback_query=CallbackQuery(str(update_id), user, "i", message,
                                                          data=data))


async def test_game_buttons_are_ordered_per_game_not_behind_the_chat() -> None:
    processor = PerChatUpdateProcessor(8)
    handlers = Handlers()
    log, release, handle = handlers.log, handlers.release, handlers.handle

    updates = [
        (message_update(1, -100), True),  # a lobby command waiting for the group's budget
        (button_update(2, -100, 7, "a:12:3:rA"), True),  # a bid of game 12 in that group
        (button_update(3, 7, 7, "a:12:4:P"), False),  # then a press of game 12 in private
        (button_update(4, 8, 8, "a:13:0:P"), False),  # another game
    ]
    tasks = []
    for update, slow in updates:
        coroutine = handle(update.update_id, slow)
        tasks.append(asyncio.create_task(processor.process_update(update, coroutine)))
        await asyncio.sleep(0)
    await asyncio.sleep(0.05)
    # the bid did not wait for the group's message; game 12's second press waits for its
    # first (another chat, same game); game 13 was not held up
    assert log == [("start", 1), ("start", 2), ("start", 4), ("end", 4)]
    release.set()
    await asyncio.gather(*tasks)
    assert log.index(("end", 2)) < log.index(("start", 3))
    assert processor._locks == {}
