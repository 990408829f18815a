"""Tests of the fake Telegram Bot API server, driven through real PTB objects.

Every check goes through ``telegram.Bot`` / ``telegram.ext.Application`` over HTTP, so it
also proves that PTB turns the fake's answers into its real exceptions.
"""

from __future__ import annotations

import asyncio
import html
import json
import sys
import textwrap

import aiohttp
import pytest
from aiohttp import web
from telegram import (
    Bot,
    ChatFullInfo,
    ChatMemberAdministrator,
    ChatMemberBanned,
    ChatMemberLeft,
    ChatMemberMember,
    ChatMemberOwner,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    InputFile,
    MenuButtonCommands,
    Update,
)
from telegram.constants import ParseMode
from telegram.error import (
    BadRequest,
    ChatMigrated,
    Conflict,
    EndPointNotFound,
    Forbidden,
    InvalidToken,
    NetworkError,
    RetryAfter,
    TimedOut,
)
from telegram.ext import Application, CallbackQueryHandler, CommandHandler, ContextTypes

from sandbox.fakeapi import (
    FakeClientError,
    FakeTelegram,
    FloodLimits,
    HtmlParseError,
    WaitTimeout,
    parse_html,
)
from sandbox.fakeapi.errors import NOT_MODIFIED

NO_FLOOD = FloodLimits(enabled=False)

def retry_in(seconds: int) -> str:
    """PTB's RetryAfter message, "Retry in 0:00:0N" with timedeltas (importing ``bot``, as
    tests/conftest.py does, opts in: PTB_TIMEDELTA) or "Retry in N seconds" without."""
    return rf"Retry in ({seconds} seconds|0:00:0?{seconds}\b)"


def keyboard(*rows: list[tuple[str, str]]) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup(
        [[InlineKeyboardButton(text, callback_data=data) for text, data in row] for row in rows]
    )


@pytest.fixture
async def tg():
    async with FakeTelegram(flood=NO_FLOOD) as server:
        yield server


@pytest.fixture
async def bot(tg: FakeTelegram):
    async with tg.make_bot() as ptb_bot:
        yield ptb_bot


@pytest.fixture
async def alice(tg: FakeTelegram):
    user = tg.add_user("Al<i>ce & co", last_name="Rossi", language_code="it", username="alice_r")
    await user.start_bot()
    return user


# ---------------------------------------------------------------------------------------
# identity, tokens, routing
# ---------------------------------------------------------------------------------------


async def test_get_me_bad_token_and_unknown_method(tg: FakeTelegram, bot: Bot) -> None:
    me = await bot.get_me()
    assert (me.username, me.is_bot, me.can_join_groups) == ("BriscolaTestBot", True, True)
    assert me.can_read_all_group_messages is False  # privacy mode is on by default

    wrong = Bot("123456:" + "x" * 35, base_url=tg.base_url)
    with pytest.raises(InvalidToken, match=r"(?i)Unauthorized"):
        await wrong.get_me()
    malformed = Bot("not-a-token", base_url=tg.base_url)
    with pytest.raises(InvalidToken, match=r"(?i)Not Found"):
        await malformed.get_me()
    with pytest.raises(EndPointNotFound):
        await bot.do_api_request("sendCarrierPigeon", api_kwargs={"chat_id": 1})


# ---------------------------------------------------------------------------------------
# sending and editing
# ---------------------------------------------------------------------------------------


async def test_send_edit_and_not_modified(tg: FakeTelegram, bot: Bot, alice) -> None:
    markup = keyboard([("Gioca", "play"), ("Regole", "rules")])
    sent = await bot.send_message(
        alice.id, "Ciao <b>Alice</b>", parse_mode="HTML", reply_markup=markup
    )
    assert sent.text == "Ciao Alice"
    assert sent.reply_markup == markup
    stored = tg.last_bot_message(alice)
    assert stored is not None and stored.message_id == sent.message_id
    assert stored.button_pairs == [[("Gioca", "play"), ("Regole", "rules")]]
    assert stored.entity_texts("bold") == ["Alice"]

    edited = await bot.edit_message_text(
        "Turno di <i>Alice</i>", alice.id, sent.message_id, parse_mode="HTML", reply_markup=markup
    )
    assert edited.text == "Turno di Alice" and edited.edit_date is not None
    assert stored.text == "Turno di Alice" and len(stored.history) == 1

    with pytest.raises(BadRequest, match=r"(?i)message is not modified"):
        await bot.edit_message_text(
            "Turno di <i>Alice</i>",
            alice.id,
            sent.message_id,
            parse_mode="HTML",
            reply_markup=markup,
        )
    assert tg.errors[-1].description == NOT_MODIFIED
    with pytest.raises(BadRequest, match=r"(?i)message is not modified"):
        await bot.edit_message_reply_markup(alice.id, sent.message_id, reply_markup=markup)

    # Same text but different entities is a modification; omitting reply_markup drops it.
    await bot.edit_message_text("Turno di Alice", alice.id, sent.message_id)
    assert stored.reply_markup is None and stored.entities == []
    assert [c.error_code for c in tg.errors] == [400, 400]


async def test_edit_and_delete_unknown_messages(tg: FakeTelegram, bot: Bot, alice) -> None:
    with pytest.raises(BadRequest, match=r"(?i)Message to edit not found"):
        await bot.edit_message_text("x", alice.id, 999)
    with pytest.raises(BadRequest, match=r"(?i)Message to delete not found"):
        await bot.delete_message(alice.id, 999)
    user_msg = tg.last_message(alice)
    assert user_msg is not None and user_msg.text == "/start"
    with pytest.raises(BadRequest, match=r"(?i)Message can't be edited"):
        await bot.edit_message_text("x", alice.id, user_msg.message_id)

    sent = await bot.send_message(alice.id, "temporary")
    assert await bot.delete_message(alice.id, sent.message_id) is True
    with pytest.raises(BadRequest, match=r"(?i)Message to delete not found"):
        await bot.delete_message(alice.id, sent.message_id)
    assert tg.last_bot_message(alice) is None
    assert tg.chat_messages(alice, include_deleted=True, from_bot=True)[0].deleted


async def test_callback_data_is_limited_to_64_bytes(tg: FakeTelegram, bot: Bot, alice) -> None:
    ok_data = "é" * 32  # 32 characters, 64 bytes
    await bot.send_message(alice.id, "ok", reply_markup=keyboard([("A", ok_data)]))
    assert tg.last_bot_message(alice).buttons[0].callback_data == ok_data  # type: ignore[union-attr]

    too_long = "é" * 32 + "a"  # 33 characters, 65 bytes
    with pytest.raises(BadRequest, match=r"(?i)BUTTON_DATA_INVALID"):
        await bot.send_message(alice.id, "ko", reply_markup=keyboard([("A", too_long)]))
    with pytest.raises(BadRequest, match=r"(?i)BUTTON_DATA_INVALID"):
        await bot.send_message(alice.id, "empty", reply_markup=keyboard([("A", "")]))
    assert [c.description for c in tg.errors] == ["Bad Request: BUTTON_DATA_INVALID"] * 2


@pytest.mark.parametrize(
    ("button", "error"),
    [
        (InlineKeyboardButton("x", url="ftp://example.org"), "BUTTON_URL_INVALID"),
        (InlineKeyboardButton("x", url="javascript:alert(1)"), "BUTTON_URL_INVALID"),
        (InlineKeyboardButton("x"), "Text buttons are unallowed in the inline keyboard"),
        (InlineKeyboardButton("x", callback_data="a", url="https://a.b"), "exactly one"),
        (InlineKeyboardButton("", callback_data="a"), "BUTTON_TEXT_INVALID"),
    ],
)
async def test_invalid_inline_buttons(
    tg: FakeTelegram, bot: Bot, alice, button: InlineKeyboardButton, error: str
) -> None:
    markup = InlineKeyboardMarkup([[button]])
    with pytest.raises(BadRequest):
        await bot.send_message(alice.id, "t", reply_markup=markup)
    assert error in tg.errors[-1].description


async def test_keyboard_size_limits(bot: Bot, alice) -> None:
    url_ok = InlineKeyboardMarkup([[InlineKeyboardButton("site", url="https://example.org/x")]])
    await bot.send_message(alice.id, "url ok", reply_markup=url_ok)
    row_of_9 = [(str(i), str(i)) for i in range(9)]
    with pytest.raises(BadRequest, match=r"(?i)Button_type_invalid"):
        await bot.send_message(alice.id, "t", reply_markup=keyboard(row_of_9))
    rows = [[(f"{r}-{c}", f"{r}-{c}") for c in range(8)] for r in range(13)]  # 104 buttons
    with pytest.raises(BadRequest, match=r"(?i)Reply markup is too long"):
        await bot.send_message(alice.id, "t", reply_markup=keyboard(*rows))


async def test_text_length_is_counted_after_parsing_in_utf16(bot: Bot, alice) -> None:
    await bot.send_message(alice.id, "x" * 4096)
    with pytest.raises(BadRequest, match=r"(?i)Message is too long"):
        await bot.send_message(alice.id, "x" * 4097)
    await bot.send_message(alice.id, "😀" * 2048)  # 2048 code points, 4096 UTF-16 units
    with pytest.raises(BadRequest, match=r"(?i)Message is too long"):
        await bot.send_message(alice.id, "😀" * 2048 + "x")
    sent = await bot.send_message(alice.id, "<b>" + "y" * 4096 + "</b>", parse_mode="HTML")
    assert len(sent.text) == 4096
    for empty in ("   ", "<b> </b>"):
        with pytest.raises(BadRequest, match=r"(?i)Message text is empty"):
            await bot.send_message(alice.id, empty, parse_mode="HTML")


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        ("<b>x", 'Can\'t find end tag corresponding to start tag "b"'),
        ("a < b", 'Unsupported start tag "" at byte offset 2'),
        ("<script>alert(1)</script>", 'Unsupported start tag "script" at byte offset 0'),
        ("<b><i>x</b></i>", 'expected "</i>", found "</b>"'),
        ("x</b>", "Unexpected end tag at byte offset 1"),
        ("Tom & Jerry", "Character '&' at byte offset 4"),
        ("<span>x</span>", 'Tag "span" must have class "tg-spoiler"'),
        ("Al<i>ce", 'Can\'t find end tag corresponding to start tag "i"'),
    ],
)
async def test_malformed_html_is_rejected(
    tg: FakeTelegram, bot: Bot, alice, text: str, detail: str
) -> None:
    with pytest.raises(BadRequest, match=r"(?i)Can't parse entities"):
        await bot.send_message(alice.id, text, parse_mode=ParseMode.HTML)
    description = tg.errors[-1].description
    assert description.startswith("Bad Request: can't parse entities: ")
    assert detail in description


async def test_escaped_user_names_pass(tg: FakeTelegram, bot: Bot, alice) -> None:
    name = alice.full_name  # "Al<i>ce & co Rossi"
    sent = await bot.send_message(
        alice.id, f"Tocca a <b>{html.escape(name)}</b> 😀 &#127183;", parse_mode="HTML"
    )
    assert sent.text == f"Tocca a {name} 😀 🃏"
    assert sent.parse_entity(sent.entities[0]) == name
    assert tg.last_bot_message(alice).entity_texts("bold") == [name]  # type: ignore[union-attr]


def test_html_parser_entities_and_offsets() -> None:
    text, entities = parse_html(
        '😀 <b>bold <i>both</i></b> <a href="https://t.me/x">link</a> '
        '<pre><code class="language-python">x = 1</code></pre>'
        "<blockquote expandable>q</blockquote><tg-spoiler>s</tg-spoiler>&lt;&gt;&quot;&amp;"
    )
    assert text == '😀 bold both link x = 1qs<>"&'
    kinds = [(e["type"], e["offset"], e["length"]) for e in entities]
    assert kinds == [
        ("bold", 3, 9),
        ("italic", 8, 4),
        ("text_link", 13, 4),
        ("pre", 18, 5),
        ("expandable_blockquote", 23, 1),
        ("spoiler", 24, 1),
    ]
    assert entities[2]["url"] == "https://t.me/x"
    assert entities[3]["language"] == "python"
    # Real Telegram keeps a bare "&"; the fake does too when not strict.
    assert parse_html("Tom & Jerry", strict_ampersand=False)[0] == "Tom & Jerry"
    with pytest.raises(HtmlParseError, match=r"(?i)byte offset 5"):
        parse_html("èè <x>")  # "è" is two bytes in UTF-8


async def test_markdown_is_not_supported_and_unknown_parse_mode(bot: Bot, alice) -> None:
    with pytest.raises(BadRequest, match=r"(?i)not supported by the fake"):
        await bot.send_message(alice.id, "*x*", parse_mode=ParseMode.MARKDOWN_V2)
    with pytest.raises(BadRequest, match=r"(?i)Unsupported parse_mode"):
        await bot.send_message(alice.id, "x", parse_mode="BBCode")


# ---------------------------------------------------------------------------------------
# private chats: start / block
# ---------------------------------------------------------------------------------------


async def test_forbidden_before_start_then_blocked(tg: FakeTelegram, bot: Bot) -> None:
    bob = tg.add_user("Bob")
    assert bob.id > 2**32
    with pytest.raises(Forbidden, match=r"(?i)bot can't initiate conversation with a user"):
        await bot.send_message(bob.id, "ciao")
    await bob.start_bot(payload="invite-42")
    await bot.send_message(bob.id, "ciao")

    bob.block_bot()
    with pytest.raises(Forbidden, match=r"(?i)bot was blocked by the user"):
        await bot.send_message(bob.id, "ciao")
    updates = await bot.get_updates()
    assert updates[0].message.text == "/start invite-42"
    assert updates[1].my_chat_member.new_chat_member.status == "kicked"

    await bob.start_bot()  # "Restart" unblocks
    await bot.send_message(bob.id, "bentornato")
    updates = await bot.get_updates(offset=updates[-1].update_id + 1)
    assert updates[0].my_chat_member.new_chat_member.status == "member"
    assert updates[1].message.text == "/start"
    with pytest.raises(FakeClientError):
        await bob.start_bot(payload="not valid!")


# ---------------------------------------------------------------------------------------
# callback queries
# ---------------------------------------------------------------------------------------


async def test_callback_query_answer_rules(tg: FakeTelegram, bot: Bot, alice) -> None:
    sent = await bot.send_message(alice.id, "Scegli", reply_markup=keyboard([("Asso", "card:A")]))
    with pytest.raises(FakeClientError, match=r"(?i)no button"):
        await alice.press(sent, "card:K")
    pressed = await alice.press(sent, "card:A")
    query = (await bot.get_updates())[-1].callback_query
    assert (query.data, query.from_user.id, query.message.message_id) == (
        "card:A",
        alice.id,
        sent.message_id,
    )
    assert tg.unanswered_callbacks() == [pressed]

    with pytest.raises(BadRequest, match=r"(?i)Message_too_long"):
        await query.answer("x" * 201)
    with pytest.raises(BadRequest, match=r"(?i)Url_invalid"):
        await query.answer(url="https://example.org")
    with pytest.raises(BadRequest, match=r"(?i)Url_invalid"):
        await query.answer(url="https://t.me/OtherBot?start=x")
    assert await query.answer("Giocata!", show_alert=True, url="t.me/BriscolaTestBot?start=g1")
    answer = await pressed
    assert (answer.text, answer.show_alert, answer.url) == (
        "Giocata!",
        True,
        "t.me/BriscolaTestBot?start=g1",
    )
    with pytest.raises(BadRequest, match=r"(?i)Query is too old"):
        await query.answer()
    with pytest.raises(BadRequest, match=r"(?i)Query is too old"):
        await bot.answer_callback_query("12345")
    assert tg.unanswered_callbacks() == []


async def test_callback_queries_expire() -> None:
    async with FakeTelegram(flood=False, callback_timeout=0.05) as tg, tg.make_bot() as bot:
        carol = tg.add_user("Carol", started=True)
        sent = await bot.send_message(carol.id, "x", reply_markup=keyboard([("ok", "ok")]))
        pressed = await carol.press_button(sent, "ok")
        await asyncio.sleep(0.1)
        with pytest.raises(BadRequest, match=r"(?i)Query is too old"):
            await bot.answer_callback_query(pressed.id)
        with pytest.raises(WaitTimeout, match=r"(?i)was not answered"):
            await pressed.wait(timeout=0.01)


# ---------------------------------------------------------------------------------------
# a real PTB Application over long polling
# ---------------------------------------------------------------------------------------


async def test_application_long_polling_end_to_end(tg: FakeTelegram) -> None:
    seen: list[str] = []

    async def nuova(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        seen.append(update.message.text)
        name = html.escape(update.effective_user.first_name)
        await update.message.reply_html(
            f"Nuova partita di <b>{name}</b>", reply_markup=keyboard([("Entra", "join")])
        )

    async def join(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        query = update.callback_query
        await query.answer("Sei dentro!")
        await query.edit_message_text(f"Giocatori: {html.escape(query.from_user.first_name)}")

    app: Application = tg.application_builder().build()
    app.add_handler(CommandHandler("nuova", nuova))
    app.add_handler(CallbackQueryHandler(join, pattern="^join$"))
    alice = tg.add_user("Al<i>ce & co", language_code="it")
    group = tg.add_group("Tavolo <1>", members=[alice], admins=[alice])

    async with app:
        await app.start()
        await app.updater.start_polling(poll_interval=0.0, timeout=5)
        await alice.send(group, "chiacchiere")  # privacy mode: never delivered
        await alice.send(group, "/nuova@BriscolaTestBot")
        table = await tg.wait_for_message(group, "Nuova partita")
        assert table.text == "Nuova partita di Al<i>ce & co"
        assert table.reply_to is not None and table.reply_to.text == "/nuova@BriscolaTestBot"

        answer = await alice.press(table, "join")
        assert (await answer).text == "Sei dentro!"
        await tg.wait_until(lambda: table.text.startswith("Giocatori"))
        await tg.idle()
        assert tg.unanswered_callbacks() == []
        await app.updater.stop()
        await app.stop()

    assert seen == ["/nuova@BriscolaTestBot"]
    assert tg.errors == []
    assert tg.pending_updates == []  # the final getUpdates confirmed everything


# ---------------------------------------------------------------------------------------
# getUpdates conflicts
# ---------------------------------------------------------------------------------------


async def test_second_get_updates_terminates_the_first(tg: FakeTelegram, bot: Bot) -> None:
    first = asyncio.create_task(bot.get_updates(timeout=5))
    await tg.wait_until(lambda: tg.polling)
    async with tg.make_bot() as other:
        assert await other.get_updates(timeout=0) == ()
    with pytest.raises(Conflict, match=r"(?i)terminated by other getUpdates request"):
        await first


async def test_reject_new_policy_answers_409_to_the_second_consumer() -> None:
    tg = FakeTelegram(conflict_policy="reject_new")
    async with tg, tg.make_bot() as bot, tg.make_bot() as other:
        first = asyncio.create_task(bot.get_updates(timeout=5))
        await tg.wait_until(lambda: tg.polling)
        with pytest.raises(Conflict, match=r"(?i)make sure that only one bot instance"):
            await other.get_updates(timeout=0)
        alice = tg.add_user("Alice")
        await alice.start_bot()
        (update,) = await first
        assert update.message.text == "/start"


async def test_long_poll_returns_on_update_and_honours_offset(tg: FakeTelegram, bot: Bot) -> None:
    poll = asyncio.create_task(bot.get_updates(timeout=5))
    await tg.wait_until(lambda: tg.polling)
    dave = tg.add_user("Dave")
    await dave.start_bot()
    (first,) = await asyncio.wait_for(poll, 1)
    assert first.message.from_user.id == dave.id
    await dave.dm("due")
    again = await bot.get_updates(timeout=0)
    assert [u.update_id for u in again] == [first.update_id, first.update_id + 1]
    assert await bot.get_updates(offset=again[-1].update_id + 1, timeout=0) == ()
    assert tg.pending_updates == []


# ---------------------------------------------------------------------------------------
# groups: kick, migration, members
# ---------------------------------------------------------------------------------------


async def test_kicked_bot_gets_forbidden_and_my_chat_member(
    tg: FakeTelegram, bot: Bot, alice
) -> None:
    group = tg.add_group("Tavolo", members=[alice])
    await bot.send_message(group.id, "ciao")
    tg.kick_bot(group)
    with pytest.raises(Forbidden, match=r"(?i)bot was kicked from the group chat"):
        await bot.send_message(group.id, "ciao?")
    updates = await bot.get_updates()
    member_update = updates[-1].my_chat_member
    assert member_update.chat.id == group.id
    assert isinstance(member_update.new_chat_member, ChatMemberBanned)
    assert member_update.from_user.id == alice.id


async def test_migration_raises_chat_migrated(tg: FakeTelegram, bot: Bot, alice) -> None:
    group = tg.add_group("Tavolo", members=[alice], admins=[alice])
    sent = await bot.send_message(group.id, "prima")
    new = tg.migrate_to_supergroup(group)
    assert new.type == "supergroup" and str(new.id).startswith("-100")
    with pytest.raises(ChatMigrated) as info:
        await bot.send_message(group.id, "dopo")
    assert info.value.new_chat_id == new.id
    with pytest.raises(ChatMigrated):
        await bot.edit_message_text("x", group.id, sent.message_id)
    await bot.send_message(new.id, "dopo")

    updates = [u for u in await bot.get_updates() if u.message and u.message.chat.type != "private"]
    assert updates[0].message.chat.id == group.id
    assert updates[0].message.migrate_to_chat_id == new.id
    assert updates[1].message.chat.id == new.id
    assert updates[1].message.migrate_from_chat_id == group.id
    member = await bot.get_chat_member(new.id, alice.id)
    assert isinstance(member, ChatMemberOwner)


async def test_chat_members_admins_and_full_info(tg: FakeTelegram, bot: Bot, alice) -> None:
    bob, carol, eve = tg.add_user("Bob"), tg.add_user("Carol"), tg.add_user("Eve")
    group = tg.add_supergroup(
        "Tavolo", members=[bob], admins=[alice, carol], bot_admin=True, username="tavolo1"
    )
    statuses = {
        user.id: type(await bot.get_chat_member(group.id, user.id))
        for user in (alice, carol, bob, eve)
    }
    assert statuses == {
        alice.id: ChatMemberOwner,
        carol.id: ChatMemberAdministrator,
        bob.id: ChatMemberMember,
        eve.id: ChatMemberLeft,
    }
    admins = await bot.get_chat_administrators(group.id)
    assert [a.user.id for a in admins] == [alice.id, carol.id, tg.bot.id]
    me = await bot.get_chat_member("@tavolo1", tg.bot.id)
    assert isinstance(me, ChatMemberAdministrator) and me.can_delete_messages
    info = await bot.get_chat(group.id)
    assert isinstance(info, ChatFullInfo) and info.title == "Tavolo" and info.type == "supergroup"
    assert await bot.get_chat_member_count(group.id) == 4
    with pytest.raises(BadRequest, match=r"(?i)User not found"):
        await bot.get_chat_member(group.id, 42)
    with pytest.raises(BadRequest, match=r"(?i)Chat not found"):
        await bot.get_chat(-1009999)
    private = await bot.get_chat(alice.id)
    assert private.first_name == alice.first_name and private.username == "alice_r"


async def test_group_rights_privacy_and_service_messages(tg: FakeTelegram, bot: Bot, alice) -> None:
    bob = tg.add_user("Bob")
    group = tg.add_group("Tavolo", members=[bob], admins=[alice])
    sent = await bot.send_message(group.id, "tavolo")
    await bob.send(group, "parlo da solo")  # not delivered (privacy mode)
    await bob.reply(sent, "rispondo al bot")  # delivered
    await bob.send(group, "/regole@AltroBot")  # not for us
    await bob.send(group, "/regole")  # delivered
    texts = [u.message.text for u in await bot.get_updates() if u.message]
    assert texts == ["/start", "rispondo al bot", "/regole"]

    bob_msg = tg.last_message(group, from_bot=False)
    with pytest.raises(BadRequest, match=r"(?i)Message can't be deleted"):
        await bot.delete_message(group.id, bob_msg.message_id)  # type: ignore[union-attr]
    with pytest.raises(BadRequest, match=r"(?i)Not enough rights to manage pinned messages"):
        await bot.pin_chat_message(group.id, sent.message_id)
    tg.set_bot_admin(group)
    await bot.delete_message(group.id, bob_msg.message_id)  # type: ignore[union-attr]
    await bot.pin_chat_message(group.id, sent.message_id)
    assert (await bot.get_chat(group.id)).pinned_message.message_id == sent.message_id
    await bob.send(group, "ora il bot vede tutto")  # admins see everything
    last = await bot.get_updates(offset=-1)
    assert last[0].message.text == "ora il bot vede tutto"

    with pytest.raises(BadRequest, match=r"(?i)Wrong parameter action"):
        await bot.send_chat_action(group.id, "dancing")
    assert await bot.send_chat_action(group.id, "typing")
    assert await bot.leave_chat(group.id)
    with pytest.raises(Forbidden, match=r"(?i)bot is not a member of the group chat"):
        await bot.send_message(group.id, "x")
    with pytest.raises(FakeClientError, match=r"(?i)not a member"):
        await tg.add_user("Zed").send(group, "ciao")


async def test_forum_topics(tg: FakeTelegram, bot: Bot, alice) -> None:
    forum = tg.add_forum("Circolo", members=[alice])
    topic = tg.add_topic(forum, "Partita 1")
    sent = await bot.send_message(forum.id, "nel topic", message_thread_id=topic)
    assert sent.message_thread_id == topic and sent.is_topic_message
    with pytest.raises(BadRequest, match=r"(?i)Message thread not found"):
        await bot.send_message(forum.id, "x", message_thread_id=topic + 100)
    msg = await alice.send(forum, "/nuova", thread_id=topic)
    update = (await bot.get_updates(offset=-1))[0]
    assert update.message.message_thread_id == topic and update.message.is_topic_message
    assert msg.thread_id == topic


# ---------------------------------------------------------------------------------------
# commands, menu button
# ---------------------------------------------------------------------------------------


async def test_commands_per_scope_and_language(tg: FakeTelegram, bot: Bot, alice) -> None:
    from telegram import BotCommand, BotCommandScopeAllGroupChats, BotCommandScopeChat

    await bot.set_my_commands([BotCommand("start", "Start"), BotCommand("help", "Help")])
    await bot.set_my_commands([BotCommand("nuova", "Nuova partita")], language_code="it")
    group = tg.add_group("Tavolo", members=[alice])
    await bot.set_my_commands(
        [BotCommand("nuova", "Nuova partita"), BotCommand("abbandona", "Esci")],
        scope=BotCommandScopeAllGroupChats(),
        language_code="it",
    )
    assert [c.command for c in await bot.get_my_commands()] == ["start", "help"]
    assert [c.command for c in await bot.get_my_commands(language_code="it")] == ["nuova"]
    assert await bot.get_my_commands(scope=BotCommandScopeChat(group.id)) == ()
    assert [c["command"] for c in tg.visible_commands(group, alice)] == ["nuova", "abbandona"]
    bob = tg.add_user("Bob", language_code="en")
    assert [c["command"] for c in tg.visible_commands(bob.private_chat, bob)] == ["start", "help"]

    for bad in (BotCommand("Nuova", "x"), BotCommand("a" * 33, "x"), BotCommand("nuova-2", "x")):
        with pytest.raises(BadRequest, match=r"(?i)Bot_command_invalid"):
            await bot.set_my_commands([bad])
    for description in ("", "x" * 257):
        with pytest.raises(BadRequest, match=r"(?i)Bot_command_description_invalid"):
            await bot.set_my_commands([BotCommand("ok", description)])
    assert await bot.delete_my_commands(language_code="it")
    assert await bot.get_my_commands(language_code="it") == ()

    assert await bot.set_chat_menu_button(alice.id, MenuButtonCommands())
    assert isinstance(await bot.get_chat_menu_button(alice.id), MenuButtonCommands)


# ---------------------------------------------------------------------------------------
# flood control
# ---------------------------------------------------------------------------------------


async def test_flood_control_per_chat_and_per_group() -> None:
    async with FakeTelegram() as tg, tg.make_bot() as bot:
        bob = tg.add_user("Bob", started=True)
        for i in range(3):  # the burst allowance
            await bot.send_message(bob.id, f"m{i}")
        with pytest.raises(RetryAfter, match=retry_in(1)):
            await bot.send_message(bob.id, "too fast")
        assert [(v.scope, v.chat_id) for v in tg.flood_violations] == [("chat", bob.id)]

    limits = FloodLimits(chat_burst=100, chat_rate=100, group_burst=5, group_per_minute=20)
    async with FakeTelegram(flood=limits) as tg, tg.make_bot() as bot:
        bob = tg.add_user("Bob")
        group = tg.add_group("Tavolo", members=[bob])
        sent = await bot.send_message(group.id, "0")
        for i in range(1, 5):  # edits count too
            await bot.edit_message_text(str(i), group.id, sent.message_id)
        with pytest.raises(RetryAfter, match=retry_in(3)):  # 1 token per 3 s
            await bot.send_message(group.id, "troppi")
        assert tg.flood_violations[-1].scope == "group"
        await bot.delete_message(group.id, sent.message_id)  # not counted


# ---------------------------------------------------------------------------------------
# fault injection
# ---------------------------------------------------------------------------------------


async def test_injected_faults_surface_as_ptb_errors(tg: FakeTelegram, bot: Bot, alice) -> None:
    tg.inject("sendMessage", "500")
    with pytest.raises(NetworkError, match=r"(?i)Internal Server Error") as info:
        await bot.send_message(alice.id, "x")
    assert type(info.value) is NetworkError

    tg.inject("sendMessage", "reset")
    with pytest.raises(NetworkError, match=r"(?i)disconnected") as info:
        await bot.send_message(alice.id, "x")
    assert type(info.value) is NetworkError

    tg.inject(kind="429", retry_after=7)
    with pytest.raises(RetryAfter, match=retry_in(7)):
        await bot.get_chat(alice.id)

    tg.inject("editMessageText", "403_blocked", chat=alice.private_chat)
    assert await bot.send_message(alice.id, "not affected")
    with pytest.raises(Forbidden, match=r"(?i)blocked"):
        await bot.edit_message_text("y", alice.id, 1)

    # The call took effect although the client saw the connection drop.
    tg.inject("sendMessage", "reset", executed=True)
    with pytest.raises(NetworkError):
        await bot.send_message(alice.id, "sent anyway")
    assert tg.last_bot_message(alice).text == "sent anyway"  # type: ignore[union-attr]
    assert [c.fault for c in tg.errors] == ["500", "reset", "429", "403_blocked", "reset"]
    assert all(f.remaining == 0 for f in tg.faults)


async def test_injected_timeout_and_slow_answers(tg: FakeTelegram, alice) -> None:
    async with tg.make_bot(read_timeout=0.2) as bot:
        fault = tg.inject("sendMessage", "timeout", hold=5)
        with pytest.raises(TimedOut):
            await bot.send_message(alice.id, "lost")
        assert len(fault.hits) == 1
        assert tg.last_bot_message(alice) is None
        await tg.wait_until(lambda: fault.hits[0].cancelled)

        tg.inject("sendMessage", "slow", delay=0.05)
        sent = await bot.send_message(alice.id, "late but fine")
        assert sent.text == "late but fine"


# ---------------------------------------------------------------------------------------
# transports: JSON bodies, multipart, subprocess bots
# ---------------------------------------------------------------------------------------


async def test_json_body_and_multipart_upload(tg: FakeTelegram, bot: Bot, alice) -> None:
    async with aiohttp.ClientSession() as session:
        payload = {
            "chat_id": alice.id,
            "text": "<i>json</i>",
            "parse_mode": "HTML",
            "reply_markup": {"inline_keyboard": [[{"text": "A", "callback_data": "a"}]]},
        }
        async with session.post(f"{tg.base_url}{tg.token}/sendMessage", json=payload) as resp:
            body = await resp.json()
        assert body["ok"] and body["result"]["text"] == "json"
        assert body["result"]["entities"] == [{"type": "italic", "offset": 0, "length": 4}]
        async with session.get(f"{tg.base_url}{tg.token}/sendMessage?chat_id=1&text=x") as resp:
            body = await resp.json()
        assert (resp.status, body["description"]) == (400, "Bad Request: chat not found")

    photo = await bot.send_photo(
        alice.id,
        InputFile(b"\x89PNG fake", filename="tavolo.png"),
        caption="<b>Tavolo</b>",
        parse_mode="HTML",
    )
    assert photo.caption == "Tavolo" and photo.photo
    with pytest.raises(BadRequest, match=r"(?i)Message caption is too long"):
        await bot.send_photo(alice.id, photo.photo[0].file_id, caption="c" * 1025)
    await bot.edit_message_caption(alice.id, photo.message_id, caption="Nuovo")
    assert tg.last_bot_message(alice).caption == "Nuovo"  # type: ignore[union-attr]


async def test_bot_in_a_subprocess(tg: FakeTelegram, alice) -> None:
    script = textwrap.dedent(
        f"""
        import asyncio
        from telegram import Bot

        async def main():
            async with Bot({tg.token!r}, base_url={tg.base_url!r}) as bot:
                await bot.send_message({alice.id}, "dal sottoprocesso")

        asyncio.run(main())
        """
    )
    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", script)
    message = await tg.wait_for_message(alice, "sottoprocesso", timeout=8)
    assert await asyncio.wait_for(proc.wait(), 8) == 0
    assert message.from_bot


# ---------------------------------------------------------------------------------------
# test-side helpers
# ---------------------------------------------------------------------------------------


async def test_wait_helpers_report_state_on_timeout(tg: FakeTelegram, bot: Bot, alice) -> None:
    await bot.send_message(alice.id, "qualcosa")
    with pytest.raises(WaitTimeout) as info:
        await tg.wait_for_message(alice, "mai", timeout=0.05)
    assert "FakeTelegram state" in str(info.value) and "qualcosa" in str(info.value)

    waiter = asyncio.create_task(tg.wait_for_message(alice, "dopo", timeout=2))
    await asyncio.sleep(0)
    await bot.send_message(alice.id, "arriva dopo")
    assert (await waiter).text == "arriva dopo"
    call = await tg.wait_for_call("sendMessage", lambda c: c.text == "arriva dopo")
    assert call.ok and call.result["text"] == "arriva dopo"
    assert json.dumps(tg.pending_updates)  # updates are plain JSON


async def test_bot_added_to_group_user_edits_and_webhook_conflict(
    tg: FakeTelegram, bot: Bot
) -> None:
    alice = tg.add_user("Alice")
    group = tg.add_group("Nuovo tavolo", members=[alice], bot_member=False)
    with pytest.raises(Forbidden, match=r"(?i)bot is not a member of the group chat"):
        await bot.send_message(group.id, "x")
    tg.add_bot_to_group(group, by=alice)
    command = await alice.send(group, "/nuova")
    await alice.edit(command, "/nuova 3")
    updates = await bot.get_updates()
    assert updates[0].my_chat_member.new_chat_member.status == "member"
    assert updates[1].message.new_chat_members[0].id == tg.bot.id
    assert updates[2].message.text == "/nuova"
    assert updates[3].edited_message.text == "/nuova 3"
    assert updates[3].edited_message.message_id == command.message_id

    assert await bot.set_webhook("https://example.org/hook")
    assert (await bot.get_webhook_info()).url == "https://example.org/hook"
    with pytest.raises(Conflict, match=r"(?i)webhook is active"):
        await bot.get_updates()
    assert await bot.delete_webhook(drop_pending_updates=True)
    assert await bot.get_updates() == ()


async def test_without_privacy_mode_the_bot_sees_all_group_messages() -> None:
    tg = FakeTelegram(privacy_mode=False, flood=False)
    async with tg, tg.make_bot() as bot:
        assert (await bot.get_me()).can_read_all_group_messages is True
        alice = tg.add_user("Alice")
        group = tg.add_group("Tavolo", members=[alice])
        await alice.send(group, "briscola a bastoni")
        (update,) = await bot.get_updates()
        assert update.message.text == "briscola a bastoni"
        first = await bot.send_message(group.id, "uno")
        second = await bot.send_message(group.id, "due")
        assert await bot.delete_messages(group.id, [first.message_id, second.message_id, 999])
        assert tg.chat_messages(group, from_bot=True) == []


# ---------------------------------------------------------------------------------------
# load and chaos helpers: update timing, chat watches, random faults, forged data
# ---------------------------------------------------------------------------------------


async def test_update_timing_records_offer_and_first_reaction(tg: FakeTelegram, bot: Bot) -> None:
    alice = tg.add_user("Alice")
    await alice.start_bot()
    group = tg.add_group("Tavolo", [alice])
    table = await bot.send_message(group.id, "Tavolo", reply_markup=keyboard([("A", "a")]))
    command = tg.update_log[-1]
    assert command.kind == "message" and command.chat_id == alice.id
    assert command.offered_at is None and command.latency is None
    handle = await alice.press(table, "a")
    query = tg.update_log[-1]
    assert (query.kind, query.query_id, query.chat_id) == ("callback_query", handle.id, group.id)

    updates = await bot.get_updates()
    assert [u.update_id for u in updates] == [command.update_id, query.update_id]
    assert command.offers == query.offers == 1 and query.offered_at is not None
    await asyncio.sleep(0.02)
    await bot.send_message(group.id, "unrelated: the group has no pending message")
    assert query.handled_at is None and command.handled_at is None
    await bot.send_message(alice.id, "hello")  # first call to the private chat: /start
    assert command.handled_by == "sendMessage" and command.latency is not None
    await bot.answer_callback_query(handle.id)
    assert query.handled_by == "answerCallbackQuery"
    assert query.latency is not None and query.latency >= 0.02
    assert query.age is not None and query.age >= query.latency
    assert tg.handled_updates() == [query]
    assert tg.handled_updates(None) == [command, query]
    assert tg.handled_updates(since=query.created_at + 1) == []

    # not confirmed: offered again (as after a crash), the first offer time is kept
    first = query.offered_at
    await bot.get_updates(offset=query.update_id)
    assert query.offers == 2 and query.offered_at == first and command.offers == 1


async def test_chat_watch_wakes_only_for_its_chats(tg: FakeTelegram, bot: Bot, alice) -> None:
    bob = tg.add_user("Bob")
    await bob.start_bot()
    watch = tg.watch([alice])
    assert not await watch.wait(0.01)
    await bot.send_message(bob.id, "not for alice")
    assert not await watch.wait(0.01)
    waiter = asyncio.create_task(watch.wait(2))
    await asyncio.sleep(0)
    await bot.send_message(alice.id, "for alice")
    assert await waiter
    watch.poke()
    assert await watch.wait(0)
    watch.close()
    await bot.send_message(alice.id, "nobody listens")
    assert not watch.event.is_set()


async def test_random_faults_are_seeded_and_bounded(tg: FakeTelegram, bot: Bot, alice) -> None:
    def run(seed: int) -> list[bool]:
        fault = tg.inject("getChat", "500", count=5, probability=0.3, seed=seed)
        hits = [fault.matches("getchat", alice.id) for _ in range(40)]
        tg.clear_faults()
        return hits

    first = run(3)
    assert first == run(3) and first != run(4)
    assert 0 < sum(first) < 40
    with pytest.raises(ValueError):
        tg.inject("getChat", "500", probability=0)

    fault = tg.inject("getChat", "502", count=2, probability=0.5, seed=1)
    outcomes = []
    for _ in range(30):
        try:
            await bot.get_chat(alice.id)
            outcomes.append(True)
        except NetworkError:
            outcomes.append(False)
    assert outcomes.count(False) == 2 == len(fault.hits) and fault.remaining == 0


async def test_forged_callback_data_reaches_the_bot(tg: FakeTelegram, bot: Bot, alice) -> None:
    message = await bot.send_message(alice.id, "x", reply_markup=keyboard([("A", "a")]))
    with pytest.raises(FakeClientError):
        await alice.press(message, b"\xff\xfe")  # not a button of the message
    overlong = "z" * 300
    await alice.press(message, overlong, check=False)
    await alice.press(message, b"a:\xff\xfe:\xc3", check=False)
    await alice.press(message, "caf\u00e9 \u2603", check=False)
    updates = await bot.get_updates()
    data = [u.callback_query.data for u in updates[-3:]]  # type: ignore[union-attr]
    assert data[0] == overlong
    assert data[1] == "a:\udcff\udcfe:\udcc3"  # lone surrogates, as JSON escapes
    assert data[2] == "caf\u00e9 \u2603"
    assert not tg.internal_errors


# ---------------------------------------------------------------------------------------
# webhooks: delivery by POST
# ---------------------------------------------------------------------------------------


class WebhookEndpoint:
    """A bot's webhook server on 127.0.0.1 that records every request and answers
    ``status``."""

    def __init__(self, status: int = 200) -> None:
        self.status = status
        self.requests: list[tuple[dict[str, str], dict]] = []
        self.url = ""
        self._runner: web.AppRunner | None = None

    async def _handle(self, request: web.Request) -> web.Response:
        self.requests.append((dict(request.headers), await request.json()))
        return web.Response(status=self.status)

    async def __aenter__(self) -> WebhookEndpoint:
        app = web.Application()
        app.router.add_post("/hook", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{self._runner.addresses[0][1]}/hook"
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._runner is not None
        await self._runner.cleanup()


async def test_webhook_delivers_updates_by_post_with_the_secret(
    tg: FakeTelegram, bot: Bot
) -> None:
    async with WebhookEndpoint() as endpoint:
        assert await bot.set_webhook(endpoint.url, secret_token="s3cr-et_1", max_connections=5)
        dave = tg.add_user("Dave")
        await dave.start_bot()
        await dave.dm("due")
        await tg.wait_until(lambda: len(endpoint.requests) == 2 and not tg.pending_updates)
        (headers, first), (_, second) = endpoint.requests
        assert headers["X-Telegram-Bot-Api-Secret-Token"] == "s3cr-et_1"
        assert headers["Content-Type"].startswith("application/json")
        assert first["message"]["text"] == "/start" and second["message"]["text"] == "due"
        assert second["update_id"] == first["update_id"] + 1  # in order, each once
        assert [d.ok for d in tg.webhook_deliveries] == [True, True]
        info = await bot.get_webhook_info()
        assert (info.url, info.pending_update_count, info.max_connections) == (endpoint.url, 0, 5)
        assert info.last_error_message is None
        with pytest.raises(Conflict, match=r"(?i)webhook is active"):
            await bot.get_updates()
        # without a secret no header is sent
        assert await bot.set_webhook(endpoint.url)
        await dave.dm("tre")
        await tg.wait_until(lambda: len(endpoint.requests) == 3)
        assert "X-Telegram-Bot-Api-Secret-Token" not in endpoint.requests[2][0]


async def test_webhook_failures_are_retried_in_order_and_reported(
    tg: FakeTelegram, bot: Bot
) -> None:
    async with WebhookEndpoint(status=500) as endpoint:
        assert await bot.set_webhook(endpoint.url, secret_token="abc")
        dave = tg.add_user("Dave")
        await dave.start_bot()
        await dave.dm("due")
        await tg.wait_until(lambda: len(endpoint.requests) >= 3)
        assert {body["message"]["text"] for _, body in endpoint.requests} == {"/start"}
        info = await bot.get_webhook_info()
        assert info.pending_update_count == 2
        error = "Wrong response from the webhook: 500 Internal Server Error"
        assert info.last_error_message == error
        assert info.last_error_date is not None
        endpoint.status = 200
        await tg.wait_until(lambda: not tg.pending_updates)
        texts = [body["message"]["text"] for _, body in endpoint.requests]
        assert texts[-2:] == ["/start", "due"] and texts.count("due") == 1
    # the endpoint is gone: connection refused, the update waits
    await dave.dm("tre")
    await tg.wait_until(lambda: tg.webhook_deliveries[-1].error is not None)
    assert tg.webhook_deliveries[-1].error.startswith("Connection failed")
    assert len(tg.pending_updates) == 1


async def test_set_webhook_validation_and_no_traffic_off_this_machine(
    tg: FakeTelegram, bot: Bot
) -> None:
    with pytest.raises(BadRequest, match=r"(?i)an https url must be provided for webhook"):
        await bot.set_webhook("http://example.org/hook")
    with pytest.raises(BadRequest, match=r"(?i)secret token contains unallowed characters"):
        await bot.set_webhook("https://example.org/hook", secret_token="not a secret!")
    with pytest.raises(BadRequest, match="max_connections"):
        await bot.set_webhook("https://example.org/hook", max_connections=101)
    assert (await bot.get_webhook_info()).url == ""
    # a public HTTPS URL is accepted, but the fake never sends anything there
    assert await bot.set_webhook("https://example.org/hook")
    dave = tg.add_user("Dave")
    await dave.start_bot()
    await tg.wait_until(lambda: tg.world.webhook_last_error is not None)
    assert tg.webhook_deliveries == [] and len(tg.pending_updates) == 1
    assert await bot.delete_webhook()
    (update,) = await bot.get_updates()
    assert update.message.text == "/start"


async def test_set_webhook_ends_a_held_long_poll_with_409(tg: FakeTelegram, bot: Bot) -> None:
    poll = asyncio.create_task(bot.get_updates(timeout=5))
    await tg.wait_until(lambda: tg.polling)
    async with tg.make_bot() as other, WebhookEndpoint() as endpoint:
        assert await other.set_webhook(endpoint.url, secret_token="abc")
        with pytest.raises(Conflict, match=r"(?i)terminated by setwebhook request"):
            await asyncio.wait_for(poll, 2)
        assert await other.delete_webhook()
    assert await bot.get_updates(timeout=0) == ()
