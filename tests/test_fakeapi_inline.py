"""The fake Bot API's inline mode (issue 48), driven through PTB's ``Bot`` over HTTP:
inline queries only with inline mode on, answerInlineQuery's rules and Telegram's errors,
a chosen result sent by the user via the bot (seen by the bot in a group despite privacy
mode), chosen_inline_result with inline feedback, and savePreparedInlineMessage +
shareMessage (Bot API 8.0)."""

from __future__ import annotations

import asyncio

import pytest
from telegram import (
    Bot,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    InlineQueryResultArticle,
    InlineQueryResultsButton,
    InputTextMessageContent,
)
from telegram.error import BadRequest

from sandbox.fakeapi import FakeClientError, FakeTelegram, FloodLimits

NO_FLOOD = FloodLimits(enabled=False)


def article(result_id: str, text: str = "<b>Ciao</b>", **kw: object) -> InlineQueryResultArticle:
    return InlineQueryResultArticle(result_id, "Titolo",
                                    InputTextMessageContent(text, parse_mode="HTML"), **kw)


async def test_inline_queries_need_inline_mode() -> None:
    async with FakeTelegram(flood=NO_FLOOD) as tg, tg.make_bot() as bot:
        assert (await bot.get_me()).supports_inline_queries is False
        alice = tg.add_user("Alice")
        with pytest.raises(FakeClientError, match="inline mode is off"):
            await alice.inline("ciao")
    async with FakeTelegram(flood=NO_FLOOD, inline_mode=True) as tg, tg.make_bot() as bot:
        assert (await bot.get_me()).supports_inline_queries is True


async def test_answer_rules_and_a_chosen_result() -> None:
    async with FakeTelegram(flood=NO_FLOOD, inline_mode=True) as tg, tg.make_bot() as bot:
        bot: Bot
        alice = tg.add_user("Alice", language_code="it")
        group = tg.add_group("Amici", [alice])
        with pytest.raises(FakeClientError, match="at most 256"):
            await alice.inline("x" * 257, group)
        handle = await alice.inline("tavolo", group)
        (update,) = await bot.get_updates()
        query = update.inline_query
        assert query is not None and query.query == "tavolo" and query.chat_type == "group"
        assert query.from_user.id == alice.id

        for results, error in (
            ([article("a"), article("a")], "RESULT_ID_DUPLICATE"),
            ([article(str(i)) for i in range(51)], "RESULTS_TOO_MUCH"),
            ([article("x" * 65)], "RESULT_ID_INVALID"),
            ([article("a", text="<b>rotto")], "can't parse entities"),
            ([article("a", text="   ")], "MESSAGE_EMPTY"),
            ([article("a", text="x" * 4097)], "MESSAGE_TOO_LONG"),
        ):
            with pytest.raises(BadRequest, match=rf"(?i){error}"):
                await bot.answer_inline_query(query.id, results)
        with pytest.raises(BadRequest, match=r"(?i)start_param_invalid"):
            await bot.answer_inline_query(query.id, [], button=InlineQueryResultsButton(
                "aiuto", start_parameter="non va bene!"))
        assert not handle.answered  # refused answers leave the query open
        markup = InlineKeyboardMarkup([[InlineKeyboardButton("Apri", url="https://t.me/x")]])
        assert await bot.answer_inline_query(query.id, [article("a", reply_markup=markup)],
                                             cache_time=5, is_personal=True)
        with pytest.raises(BadRequest, match=r"(?i)query is too old"):  # answered once
            await bot.answer_inline_query(query.id, [article("b")])
        answer = await handle
        assert (answer.cache_time, answer.is_personal, answer.titles) == (5, True, ["Titolo"])
        assert tg.update_log[-1].handled_by == "answerInlineQuery"

        sent = await alice.choose(handle, "a")  # by Alice, via the bot, where she typed
        assert sent.sender is alice and sent.via_bot and sent.chat is group
        assert sent.content == "Ciao" and sent.entities[0]["type"] == "bold"
        assert [b.url for b in sent.buttons] == ["https://t.me/x"]
        (update,) = await bot.get_updates(offset=update.update_id + 1)
        assert update.message.via_bot.id == bot.id  # privacy mode lets it through
        assert update.message.from_user.id == alice.id
        with pytest.raises(FakeClientError, match="no result"):
            await alice.choose(handle, "zz")


async def test_inline_feedback_and_expiry() -> None:
    # (the fake's answer deadline: long enough for a loaded machine's get_updates and
    # answer, 0.05 s expired the first query once in a whole-suite run)
    tg = FakeTelegram(flood=NO_FLOOD, inline_mode=True, callback_timeout=0.5)
    async with tg, tg.make_bot() as bot:
        tg.world.inline_feedback = True
        alice = tg.add_user("Alice")
        await alice.start_bot()
        handle = await alice.inline("")  # in the private chat with the bot: "sender"
        updates = await bot.get_updates()
        query = updates[-1].inline_query
        assert query.chat_type == "sender"
        await bot.answer_inline_query(query.id, [article("r1")])
        await alice.choose(handle, "r1")
        later = await bot.get_updates(offset=updates[-1].update_id + 1)
        chosen = [u.chosen_inline_result for u in later if u.chosen_inline_result]
        assert [(c.result_id, c.query, c.from_user.id) for c in chosen] == [("r1", "", alice.id)]
        late = await alice.inline("tardi")
        await asyncio.sleep(0.6)
        with pytest.raises(BadRequest, match=r"(?i)query is too old"):
            await bot.answer_inline_query(late.id, [article("r1")])


async def test_prepared_inline_messages_are_shared_by_their_user() -> None:
    async with FakeTelegram(flood=NO_FLOOD) as tg, tg.make_bot() as bot:
        alice = tg.add_user("Alice")
        bob = tg.add_user("Bob")
        await alice.start_bot()
        group = tg.add_group("Amici", [alice, bob])
        with pytest.raises(BadRequest, match=r"(?i)user_id_invalid"):  # nobody Telegram knows
            await bot.save_prepared_inline_message(999, article("p"), allow_user_chats=True)
        with pytest.raises(BadRequest, match=r"(?i)at least one chat type"):
            await bot.save_prepared_inline_message(alice.id, article("p"))
        prepared = await bot.save_prepared_inline_message(alice.id, article("p"),
                                                          allow_group_chats=True)
        assert prepared.id and prepared.expiration_date.timestamp() > 0
        with pytest.raises(FakeClientError, match="may not go"):
            tg.world.share_prepared(alice, prepared.id, bob.private_chat)
        with pytest.raises(FakeClientError, match="no prepared message"):
            tg.world.share_prepared(bob, prepared.id, group)
        sent = tg.world.share_prepared(alice, prepared.id, group)
        assert sent.sender is alice and sent.via_bot and sent.content == "Ciao"
        assert tg.world.prepared[prepared.id].shared_to == [group.id]
