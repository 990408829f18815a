"""A real browser uses the inline mode and sees the ratings, in the sandbox (issue 48).

Chromium opens the sandbox's page as Anna: she types ``@BriscolaSandboxBot`` in the
group's composer, the bot's inline results appear above it, she picks the invitation
(her message, via the bot, with the links to play); its group link opens a lobby there;
she plays the first smazzata against four computers, and its result sheet in the group
shows each player's rating and change. In the Mini App (opened from her hand's
``web_app`` button), the sheet of that smazzata lists the same ratings, and its "share"
(the page's script speaks Bot API 8.0) sends the result card to the group, via the bot.

``RATINGS_SCREENSHOT=docs/ratings.png`` keeps the screenshot of that sheet (README).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from tests.e2e.test_browser import _open, _require_browser, fill_and_start, sandbox

__all__ = ["sandbox"]


def test_a_browser_invites_inline_and_sees_the_ratings(sandbox: str, tmp_path: Path) -> None:
    sync_api = _require_browser()
    with sync_api.sync_playwright() as playwright:
        browser, ui = _open(sync_api, playwright, sandbox)
        try:
            page, group, expect = ui.page, ui.panel("group"), sync_api.expect
            draft = group.locator(".draft")
            draft.fill("@BriscolaSandboxBot garbage ∅∅∅")
            hint = group.locator(".inline-hint")
            expect(hint).to_contain_text("Non capisco")
            draft.fill("@BriscolaSandboxBot ")
            results = group.locator(".inline-result")
            expect(results).to_have_count(2)
            expect(results.first).to_contain_text("Invita a un tavolo")
            results.first.click()
            invite = group.locator(".message.mine", has_text="ti invita")
            expect(invite).to_have_count(1)
            expect(draft).to_have_value("")
            expect(group.locator(".inline-results")).to_be_hidden()
            invite.get_by_role("button", name="Apri un tavolo in un gruppo").click()
            lobby = ui.answered("group", "nuova partita")
            fill_and_start(ui, lobby)

            ended = group.locator(".message", has_text="Fine della smazzata 1")
            ui.play("Anna", ended, double_press_from=3)
            sheet = ended.last
            expect(sheet).to_contain_text("📈 Rating")
            text = sheet.text_content() or ""
            assert re.search(r"Anna: \d{3,4} \([+−±]\d+\)", text), text
            assert re.search(r"🤖 normale: \d{3,4} \([+−±]\d+\)", text), text
            # after the scores, before "next smazzata"
            assert text.index("📈 Rating") < text.index("Si prosegue")
            # the table still: her turn in the next auction (until then the computers'
            # bids redraw the group, and the page replaces a chat's messages at each)
            expect(ui.panel("private").locator(".message").last).to_contain_text("Tocca a te")
            sheet.scroll_into_view_if_needed()
            shot = Path(os.environ.get("RATINGS_SCREENSHOT", tmp_path / "ratings.png"))
            page.screenshot(path=str(shot))
            assert shot.stat().st_size > 10_000
            mini_app_sheet_shows_the_ratings_and_shares(ui, text)
            assert not ui.errors, ui.errors
        finally:
            browser.close()


def mini_app_sheet_shows_the_ratings_and_shares(ui: Any, sheet_text: str) -> None:
    page, group, expect = ui.page, ui.panel("group"), ui.api.expect
    ui.panel("private").locator("button.web-app", has_text="Tavolo").last.click(timeout=15000)
    frame = None
    while frame is None:
        frame = next((f for f in page.frames if "tgWebAppData" in f.url), None)
        page.wait_for_timeout(50)
    frame.wait_for_load_state("load")
    # her turn in the next auction first: a turn closes whatever covers the table
    frame.wait_for_function("() => window.miniApp.state && window.miniApp.state.my_turn",
                            timeout=30000)
    frame.locator("#sheet-button").click(timeout=15000)
    rows = frame.locator("table.ratings tr")
    expect(rows).to_have_count(2)  # Anna and the computers' level
    shown = [" ".join(r.split()) for r in rows.all_inner_texts()]
    for line in shown:  # "Anna 1088 +88": as the group's sheet says "Anna: 1088 (+88)"
        name, rating, change = line.rsplit(" ", 2)
        assert f"{name}: {rating} ({change})" in sheet_text, (line, sheet_text)
    before = group.locator(".message.mine").count()
    frame.locator(".share-button").click()
    card = group.locator(".message.mine", has_text="Fine della smazzata 1")
    expect(card).to_have_count(1)
    assert group.locator(".message.mine").count() == before + 1
    expect(card).to_contain_text("📈 Rating")
    expect(card.get_by_role("button", name="Apri un tavolo in un gruppo")).to_be_visible()
    expect(frame.locator("#toast")).to_contain_text("Inviato")
    page.locator("#webapp .close").click()
