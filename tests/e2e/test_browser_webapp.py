"""A real browser plays a whole smazzata through the Mini App, in the sandbox.

Chromium (Playwright) opens the sandbox's page (``python -m sandbox``: the real bot in its
own process, the fake Telegram, and the bot's Mini App server), creates a table with four
computers, then opens the Mini App from the ``🃏 Tavolo`` web_app button of Anna's
private chat (initData signed by the fake Telegram, checked by the bot as in production)
and plays the auction, the declaration and her eight cards by tapping the Mini App only,
while a second phone-sized page of hers (390×844) follows live. The group's chat follows
as after button presses. Then Bruno, in the group but not seated, opens the group's
direct link and sees the table without a hand or controls.

``WEBAPP_SCREENSHOTS=docs`` keeps the phone's screenshots (README's docs/webapp*.png).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from tests.e2e.test_browser import CHROMIUM, _require_browser, sandbox, start_table

__all__ = ["sandbox"]

SMAZZATA_SECONDS = 90.0

#: One tap by Anna in the Mini App when it is her turn: a rank call once, then passes;
#: the first suit; the first card she may play. Returns what was tapped (or null).
TAP = """() => {
  const body = document.body;
  if (body.dataset.myTurn !== "1" || body.classList.contains("sending")) return null;
  const phase = body.dataset.phase;
  let target = null;
  if (phase === "auction") {
    const rank = [...document.querySelectorAll('#controls button.call')]
        .find((b) => b.dataset.code.startsWith("r"));
    target = (!body.dataset.bid && rank) ? rank
        : document.querySelector('#controls button[data-code="P"]');
    body.dataset.bid = "1";
  } else if (phase === "declaration") {
    target = document.querySelector('#controls button.suit, #controls .name-cards .card');
  } else if (phase === "play") {
    target = document.querySelector('#hand .card.playable');
  }
  if (!target) return null;
  const done = {code: target.dataset.code, version: body.dataset.version};
  target.click();
  return done;
}"""


def test_a_browser_plays_a_smazzata_through_the_mini_app(sandbox: str, tmp_path: Path) -> None:
    sync_api = _require_browser()
    shots = Path(os.environ.get("WEBAPP_SCREENSHOTS") or tmp_path)
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 940})
            group = start_table(page, sandbox)

            # Anna's private hand message carries the web_app button: it opens the Mini App
            private = page.locator('section[data-type="private"]')
            private.locator("button.web-app", has_text="Tavolo").last.click(timeout=15000)
            app = page.frame_locator("#webapp iframe")
            app.locator("#hand .card").first.wait_for(timeout=15000)
            assert app.locator("#hand .card").count() == 8
            # the same Mini App on a phone-sized page of hers: a second live connection
            launch = page.locator("#webapp iframe").get_attribute("src")
            assert launch is not None and "#tgWebAppData=" in launch
            phone = browser.new_page(viewport={"width": 390, "height": 844})
            phone.goto(launch)
            phone.locator("#hand .card").first.wait_for(timeout=15000)
            frame = next(f for f in page.frames if "tgWebAppData" in f.url)

            taps: list[dict[str, str]] = []
            deadline = time.monotonic() + SMAZZATA_SECONDS
            ended = group.locator(".message", has_text="Fine della smazzata 1")
            shot_auction = shot_play = False
            while not ended.count():
                assert time.monotonic() < deadline, "the smazzata did not end in time"
                if not shot_auction and phone.evaluate(
                        "() => document.body.dataset.myTurn === '1' && "
                        "document.body.dataset.phase === 'auction'"):
                    phone.screenshot(path=str(shots / "webapp-auction.png"))
                    shot_auction = True
                tapped = frame.evaluate(TAP)
                if tapped is None:
                    page.wait_for_timeout(40)
                    continue
                taps.append(tapped)
                # the move is stored and pushed: the page's version moves on (or a
                # refusal is shown, which the loop would not survive: no toast expected)
                frame.wait_for_function(
                    f"() => document.body.dataset.version !== '{tapped['version']}'"
                    " || !document.getElementById('toast').hidden", timeout=10000)
                assert app.locator("#toast.bad").count() == 0 or \
                    app.locator("#toast.bad").is_hidden(), app.locator("#toast").text_content()
                cards = sum(t["code"].startswith("c") for t in taps)
                if cards == 3 and not shot_play:
                    # the phone follows live: same version as the page that tapped
                    version = frame.evaluate("() => document.body.dataset.version")
                    phone.wait_for_function(
                        f"() => Number(document.body.dataset.version) >= {version}")
                    phone.wait_for_timeout(300)
                    phone.screenshot(path=str(shots / "webapp.png"))
                    shot_play = True
            codes = [t["code"] for t in taps]
            assert sum(c.startswith("c") for c in codes) == 8, codes  # her eight cards
            assert codes[0].startswith(("r", "P")), codes  # she took part in the auction
            # the chat followed as after button presses: the group's table and result
            assert "Punti:" in ended.last.text_content()
            assert shot_play and (shots / "webapp.png").stat().st_size > 20_000
            # the Mini App shows the result too
            app.locator("#result").wait_for(timeout=10000)
            assert "smazzata 1" in (app.locator("#result").text_content() or "").lower()
            page.locator("#webapp .close").click()

            # Bruno is in the group, not at the table: the group's direct link shows him
            # what the group sees, no hand, nothing to press
            page.select_option("#user", label="Bruno (it)")
            sync_api.expect(private.locator(".title")).to_contain_text("Bruno")
            link = group.locator("button.url", has_text="Tavolo").last
            link.click(timeout=15000)
            watcher = page.frame_locator("#webapp iframe")
            watcher.locator(".seat").first.wait_for(timeout=15000)
            sync_api.expect(watcher.locator("#status-text")).to_contain_text(
                "Guardi il tavolo")
            assert watcher.locator("#hand .card").count() == 0
            assert watcher.locator("#controls button").count() == 0
        finally:
            browser.close()
