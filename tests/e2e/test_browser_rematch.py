"""The sandbox's page in a real browser (issue 48): Anna sets a one-smazzata match in the
group's /impostazioni, plays it against four computers by clicking, presses
🔁 Rivincita under the final scores (the same computers deal again at once: she is the
only person), asks /classifica, whose answer is the README's screenshot
(``CLASSIFICA_SCREENSHOT=docs/classifica.png`` keeps it), and presses 🔁 Rivincita again
(a short refusal).

Needs Chromium and Playwright, as ``tests/e2e/test_browser.py`` (its fixture and helpers).
"""

from __future__ import annotations

import os
from pathlib import Path

from bot.prefs import MENU
from tests.e2e.test_browser import _open, _require_browser, fill_and_start, sandbox  # noqa: F401 (fixture)

MATCH_END = next(i for i, option in enumerate(MENU) if option.key == "match_end")


def test_a_browser_plays_a_match_then_its_rivincita(sandbox: str, tmp_path: Path) -> None:  # noqa: F811
    sync_api = _require_browser()
    with sync_api.sync_playwright() as playwright:
        browser, ui = _open(sync_api, playwright, sandbox)
        try:
            page, group, expect = ui.page, ui.panel("group"), sync_api.expect
            ui.type("group", "/impostazioni")
            menu = ui.answered("group", "valgono dalla prossima partita")
            button = menu.locator(f'button[data-callback="s:c:{MATCH_END}"]')
            while "1 smazzata" not in button.text_content():  # 11, 7, 5, 21 punti, 1 smazzata
                before = button.text_content()
                button.click()
                expect(button).not_to_have_text(before)
            ui.type("group", "/nuova")
            lobby = ui.answered("group", "nuova partita")
            fill_and_start(ui, lobby)

            ended = group.locator(".message", has_text="Partita finita")
            ui.play("Anna", ended, double_press_from=3)
            final = ended.last
            expect(final).to_contain_text("Rivincita")
            tables = group.locator(".message", has_text="Smazzata 1").count()
            final.get_by_role("button", name="🔁 Rivincita").click()
            # the same four computers, and Anna: no one to wait for, it deals at once
            expect(group.locator(".message", has_text="Smazzata 1")).to_have_count(tables + 1)
            expect(ui.panel("private").locator(".message", has_text="Tocca a te")
                   .or_(ui.panel("private").locator(".message", has_text="Le tue carte"))
                   .last).to_be_visible()
            # the table still: her turn in the new auction (until then the computers'
            # bids redraw the group, and the page replaces a chat's messages at each)
            expect(ui.panel("private").locator(".message").last).to_contain_text("Tocca a te")

            ui.type("group", "/classifica")
            board = ui.answered("group", "Classifica —")
            expect(board).to_contain_text("Anna")
            board.scroll_into_view_if_needed()
            expect(page.locator("#toast")).to_be_hidden()  # (no toast over the picture)
            shot = Path(os.environ.get("CLASSIFICA_SCREENSHOT", tmp_path / "classifica.png"))
            group.screenshot(path=str(shot))
            assert shot.stat().st_size > 10_000
            # (after the picture: the refusal's toast, an alert, stays 6 s; the picture
            # waited it out when the refusal came first)
            final.get_by_role("button", name="🔁 Rivincita").click()  # twice: refused
            expect(page.locator("#toast")).to_contain_text("già stata chiesta")
            assert all(status == 200 and body["ok"] for status, body in ui.presses)
            assert not ui.errors, ui.errors
        finally:
            browser.close()
