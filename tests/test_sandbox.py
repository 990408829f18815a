"""The sandbox's web API and rendering (the real browser test is tests/e2e/test_browser.py)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import aiohttp

from sandbox.__main__ import bot_environment, build_world, parse_args
from sandbox.fakeapi import parse_html
from sandbox.token import PLACEHOLDER, token_configured
from sandbox.web import SandboxWeb, entities_to_html
from tests.conftest import make_bot


def rendered(source: str) -> str:
    text, entities = parse_html(source)
    return entities_to_html(text, entities)


def test_entities_render_as_safe_html() -> None:
    assert rendered("<b>Anna &amp; co</b> &lt;script&gt;") == (
        "<b>Anna &amp; co</b> &lt;script&gt;"
    )
    assert rendered("a <b>b <i>c</i> d</b> e") == "a <b>b <i>c</i> d</b> e"
    assert rendered("🂡 <b>Asso 🂡</b> x") == "🂡 <b>Asso 🂡</b> x"  # UTF-16 offsets
    assert rendered('<a href="https://t.me/x?start=j1">go</a>') == (
        '<a href="https://t.me/x?start=j1" target="_blank" rel="noopener noreferrer">go</a>'
    )
    assert entities_to_html("<x>", [{"type": "bold", "offset": 0, "length": 3}]) == (
        "<b>&lt;x&gt;</b>"
    )
    bad_link = [{"type": "text_link", "offset": 0, "length": 1, "url": "javascript:x"}]
    assert entities_to_html("x", bad_link) == "x"


def test_token_choice(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("BOT_TOKEN", raising=False)
    assert not token_configured()
    (tmp_path / ".env").write_text(f"BOT_TOKEN={PLACEHOLDER}\n")
    assert not token_configured()
    (tmp_path / ".env").write_text("BOT_TOKEN=123:abc\n")
    assert token_configured()


async def _started(tg: Any, tmp_path: Path) -> tuple[list[Any], SandboxWeb, Any, str]:
    """The sandbox's world, its page's server and the bot: (groups, page, bot, base URL)."""
    groups = build_world(tg)
    page = SandboxWeb(tg, groups)
    port = await page.start("127.0.0.1", 0)
    bot = await make_bot(tg, tmp_path / "bot.db").start()
    return groups, page, bot, f"http://127.0.0.1:{port}"


async def test_sandbox_api_plays_through_the_fake(tg: Any, tmp_path: Path) -> None:
    """A user of the page writes /nuova in the group, presses Entra, sees the answer;
    what a client could not do is refused with a reason."""
    groups, page, bot, base = await _started(tg, tmp_path)
    try:
        anna, _bruno, _carla, dave = tg.world.users.values()
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{base}/") as response:
                assert "sandbox" in await response.text()
            async with http.post(f"{base}/api/send", json={
                "user": anna.id, "chat": groups[0].id, "text": "/nuova"}) as response:
                assert response.status == 200
            lobby = await tg.wait_for_message(groups[0], "Briscola chiamata")
            join = next(b for b in lobby.buttons if (b.callback_data or "").endswith(":join"))
            async with http.get(f"{base}/api/state?user={dave.id}") as response:
                state = await response.json()
            chats = {c["key"]: c for c in state["chats"]}
            forum = groups[1]
            # the group, the forum's topics (each a chat of the page) and Dave's private chat
            assert set(chats) == {str(groups[0].id), str(dave.id),
                                  *(f"{forum.id}:{t}" for t in forum.topics)}
            assert [chats[f"{forum.id}:{t}"]["title"] for t in forum.topics] == [
                "Circolo (forum) › Tavolo 1", "Circolo (forum) › Tavolo 2"]
            chats = {c["id"]: c for c in state["chats"] if c["thread"] is None}
            assert "new" in {c["command"] for c in chats[groups[0].id]["commands"]}  # English
            shown = chats[groups[0].id]["messages"][-1]
            assert [b["data"] for row in shown["buttons"] for b in row if b["data"]]
            async with http.post(f"{base}/api/press", json={
                "user": dave.id, "chat": groups[0].id, "message": lobby.message_id,
                "data": join.callback_data}) as response:
                answer = (await response.json())["answer"]
            # Dave never pressed Start: the bot answers with the deep link to its chat
            assert answer["url"].startswith(f"https://t.me/{tg.bot.username}?start=")
            payload = answer["url"].split("start=")[1]
            async with http.post(f"{base}/api/start", json={
                "user": dave.id, "payload": payload}) as response:
                assert response.status == 200
            await tg.wait_until(lambda: "Dave" in tg.message(groups[0], lobby.message_id).text)
            # a button the message does not have (any more: the page was behind) is not
            # pressed, and the page is told so
            pressed = len(tg.callbacks)
            async with http.post(f"{base}/api/press", json={
                "user": dave.id, "chat": groups[0].id, "message": lobby.message_id,
                "data": "l:1:forged"}) as response:
                assert await response.json() == {"ok": True, "answer": None, "gone": True}
            assert len(tg.callbacks) == pressed
            # refused: a message that does not exist, a chat one is not in, no user
            for body in ({"user": dave.id, "chat": groups[0].id,
                          "message": 999, "data": join.callback_data},
                         {"user": dave.id, "chat": anna.id, "text": "hi"},
                         {"user": 1, "chat": groups[0].id, "text": "hi"}):
                path = "press" if "data" in body else "send"
                async with http.post(f"{base}/api/{path}", json=body) as response:
                    assert response.status == 400 and (await response.json())["error"]
            async with http.post(f"{base}/api/users", json={"name": " Eva  ",
                                                            "language": "en"}) as response:
                eva = (await response.json())["user"]
            assert tg.world.users[eva].full_name == "Eva" and groups[0].is_member(eva)
            await tg.wait_for_message(tg.world.users[eva], "Hi")  # she pressed Start
        # (the bot's probe of Dave's private chat before he pressed Start)
        assert all(e.error_code == 403 and e.chat_id == dave.id for e in tg.errors), tg.errors
        assert not tg.unanswered_callbacks()
    finally:
        await bot.stop()
        await page.stop()


def test_bot_environment_points_only_the_api_at_the_fake(tg: Any, monkeypatch: Any) -> None:
    monkeypatch.setenv("TURN_TIMEOUT_SECONDS", "30")
    monkeypatch.setenv("WEBHOOK_URL", "https://example.org/hook")
    env = bot_environment(tg, "sqlite:///x.db")
    assert env["BOT_TOKEN"] == tg.token and env["TELEGRAM_BASE_URL"] == tg.base_url
    assert env["TURN_TIMEOUT_SECONDS"] == "30" and env["PATH"] == os.environ["PATH"]
    assert env["WEBHOOK_URL"] == ""  # long polling: the local server delivers no webhooks
    args = parse_args([])
    assert (args.host, args.port) == ("127.0.0.1", 8080)


async def test_sandbox_inline_mode_invites_and_shares(tg: Any, tmp_path: Path) -> None:
    """The page's inline mode (issue 48): "@bot" typed in a composer lists the bot's
    results; the invitation picked is Anna's message via the bot; its startgroup link
    opens a lobby in the group; garbage gets the hint; a prepared message is shared."""
    tg.world.inline_mode = True  # (the sandbox's world has it on: sandbox/__main__.py)
    groups, page, bot, base = await _started(tg, tmp_path)
    try:
        anna = next(iter(tg.world.users.values()))
        group = groups[0]
        async with aiohttp.ClientSession() as http:
            async with http.post(f"{base}/api/inline", json={
                    "user": anna.id, "chat": group.id, "query": ""}) as response:
                listed = await response.json()
            assert [r["id"] for r in listed["results"]] == ["invite", "rating"]
            assert listed["results"][0]["title"].startswith("🃏")
            async with http.post(f"{base}/api/inline/choose", json={
                    "user": anna.id, "query": listed["query"], "result": "invite"}) as response:
                assert response.status == 200
            invite = tg.chat_messages(group)[-1]
            assert invite.via_bot and invite.sender is anna
            async with http.get(f"{base}/api/state?user={anna.id}") as response:
                shown = {c["id"]: c for c in (await response.json())["chats"]}
            links = [b["url"] for row in shown[group.id]["messages"][-1]["buttons"] for b in row]
            assert links[0].endswith("?startgroup=nuova")
            async with http.post(f"{base}/api/startgroup", json={
                    "user": anna.id, "chat": group.id, "payload": "nuova"}) as response:
                assert response.status == 200
            await tg.wait_for_message(group, "nuova partita")
            async with http.post(f"{base}/api/inline", json={
                    "user": anna.id, "chat": group.id, "query": "ß" * 300}) as response:
                garbage = await response.json()
            assert garbage["results"] == [] and garbage["button"]["text"]
            # someone else's query, or a startgroup into a private chat: refused
            bruno = list(tg.world.users.values())[1]
            for path, body in (("inline/choose", {"user": bruno.id, "query": listed["query"],
                                                  "result": "invite"}),
                               ("startgroup", {"user": anna.id, "chat": anna.id,
                                               "payload": "nuova"})):
                async with http.post(f"{base}/api/{path}", json=body) as response:
                    assert response.status == 400
            # the Mini App's shareMessage, as the page's Telegram host plays it
            prepared = await bot.app.bot.save_prepared_inline_message(
                anna.id, _article(), allow_group_chats=True)
            async with http.post(f"{base}/api/share", json={
                    "user": anna.id, "chat": group.id, "id": prepared.id}) as response:
                assert response.status == 200
            assert tg.chat_messages(group)[-1].content == "Risultato"
        assert not tg.unanswered_callbacks()
    finally:
        await bot.stop()
        await page.stop()


def _article() -> Any:
    from telegram import InlineQueryResultArticle, InputTextMessageContent

    return InlineQueryResultArticle("card", "Carta", InputTextMessageContent("Risultato"))
async def test_sandbox_forum_topics_are_chats_of_the_page(tg: Any, tmp_path: Path) -> None:
    """The sandbox's forum: a command written in a topic opens that topic's table, shown
    in that topic's panel only (issue 48)."""
    groups = build_world(tg)
    forum = groups[1]
    first, second = forum.topics
    page = SandboxWeb(tg, groups)
    port = await page.start("127.0.0.1", 0)
    bot = await make_bot(tg, tmp_path / "bot.db").start()
    base = f"http://127.0.0.1:{port}"
    try:
        anna = next(iter(tg.world.users.values()))
        async with aiohttp.ClientSession() as http:
            async with http.post(f"{base}/api/send", json={
                "user": anna.id, "chat": forum.id, "text": "/nuova",
                "thread": second}) as response:
                assert response.status == 200
            lobby = await tg.wait_for_message(forum, "Briscola chiamata")
            assert lobby.thread_id == second
            async with http.get(f"{base}/api/state?user={anna.id}") as response:
                state = await response.json()
            topics = {c["thread"]: c for c in state["chats"] if c["id"] == forum.id}
            assert set(topics) == {first, second}
            assert any("Briscola chiamata" in m.get("html", "")
                       for m in topics[second]["messages"])
            assert not any("Briscola chiamata" in m.get("html", "")
                           for m in topics[first]["messages"])
            async with http.post(f"{base}/api/send", json={
                "user": anna.id, "chat": forum.id, "text": "hi", "thread": 999}) as response:
                assert response.status == 400  # no such topic
    finally:
        await bot.stop()
