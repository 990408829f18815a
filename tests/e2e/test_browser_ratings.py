"""A real browser uses the inline mode and sees the ratings, in the sandbox (issue 48).

Chromium opens the sandbox's page as Anna: she types ``@BriscolaSandboxBot`` in the
group's composer, the bot's inline results appear above it, she picks the invitation
(her message, via the bot, with the links to play); its group link opens a lobby there;
she plays the first smazzata against four computers, and its result sheet in the group
shows each player's rating and change.

``RATINGS_SCREENSHOT=docs/ratings.png`` keeps the screenshot of that sheet (README).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from tests.e2e.test_browser import _open, _require_browser, sandbox

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
            lobby.get_by_role("button", name="Entra").click()
            expect(lobby).to_contain_text("1. Anna")
            for _ in range(4):
                lobby.get_by_role("button", name="Computer").click()
                page.wait_for_timeout(150)
            expect(lobby).to_contain_text("Tavolo completo")
            lobby.get_by_role("button", name="Inizia").click()
            ui.answered("group", "Smazzata 1")

            ended = group.locator(".message", has_text="Fine della smazzata 1")
            ui.play("Anna", ended, double_press_from=3)
            sheet = ended.last
            expect(sheet).to_contain_text("📈 Rating")
            text = sheet.text_content() or ""
            assert re.search(r"Anna: \d{3,4} \([+−±]\d+\)", text), text
            assert re.search(r"🤖 normale: \d{3,4} \([+−±]\d+\)", text), text
            # after the scores, before "next smazzata"
            assert text.index("📈 Rating") < text.index("Si prosegue")
            sheet.scroll_into_view_if_needed()
            shot = Path(os.environ.get("RATINGS_SCREENSHOT", tmp_path / "ratings.png"))
            page.screenshot(path=str(shot))
            assert shot.stat().st_size > 10_000
            assert not ui.errors, ui.errors
        finally:
            browser.close()
