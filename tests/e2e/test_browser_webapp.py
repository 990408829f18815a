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

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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


@contextlib.contextmanager
def _chromium(tmp_path: Path) -> Iterator[tuple[Any, Any, Any, Path]]:
    """Playwright's API, a Chromium, a desktop-sized page of the sandbox, and where the
    screenshots go."""
    sync_api = _require_browser()
    shots = Path(os.environ.get("WEBAPP_SCREENSHOTS") or tmp_path)
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield sync_api, browser, browser.new_page(viewport={"width": 1280, "height": 940}), \
                shots
        finally:
            browser.close()


def test_a_browser_plays_a_smazzata_through_the_mini_app(sandbox: str, tmp_path: Path) -> None:
    with _chromium(tmp_path) as (sync_api, browser, page, shots):
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
            # (after her eighth card the Mini App, live, may show the next smazzata
            # before the chat's result message arrives: she stops there)
            done = sum(t["code"].startswith("c") for t in taps) == 8
            tapped = None if done else frame.evaluate(TAP)
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


#: Where each seat chip, trick card and the stock lie on the felt (page pixels).
BOXES = """() => {
  const rect = (e) => { const r = e.getBoundingClientRect();
    return {x: r.left, y: r.top, w: r.width, h: r.height}; };
  return {felt: rect(document.getElementById('felt')),
          seats: [...document.querySelectorAll('#seats .seat')].map(rect),
          trick: [...document.querySelectorAll('#trick .card')].map(rect),
          stock: [...document.querySelectorAll('#stock:not([hidden]) .card')].map(rect),
          hand: [...document.querySelectorAll('#hand .card.playable')].map(rect)};
}"""


def _overlap(a: dict[str, float], b: dict[str, float]) -> float:
    dx = min(a["x"] + a["w"], b["x"] + b["w"]) - max(a["x"], b["x"])
    dy = min(a["y"] + a["h"], b["y"] + b["h"]) - max(a["y"], b["y"])
    return max(0.0, dx) * max(0.0, dy)


def test_a_phone_plays_a_match_of_plain_briscola_through_the_mini_app(
        sandbox: str, tmp_path: Path) -> None:
    """Plain Briscola for two, Anna against a computer, played to the match's end by
    tapping the Mini App on a phone-sized page: the stock and the briscola lie on the
    table, the seats do not cover each other or the cards, the cards are big enough to
    tap, and the final result shows in the page as in the group."""
    with _chromium(tmp_path) as (sync_api, browser, page, shots):
        group = start_table(page, sandbox, "/nuova briscola", computers=1)
        private = page.locator('section[data-type="private"]')
        private.locator("button.web-app", has_text="Tavolo").last.click(timeout=15000)
        launch = page.locator("#webapp iframe").get_attribute("src")
        assert launch is not None and "#tgWebAppData=" in launch
        page.locator("#webapp .close").click()
        phone = browser.new_page(viewport={"width": 390, "height": 844})
        phone.goto(launch)
        phone.locator("#hand .card").first.wait_for(timeout=15000)
        assert phone.locator("#seats .seat").count() == 2
        assert phone.locator("#hand .card").count() == 3
        # what Telegram's users expect: the app expanded, Back shown (it closes the
        # app), no page zoom, Telegram's theme followed when it changes
        telegram = "() => window.Telegram.WebApp"
        assert phone.evaluate(f"({telegram})().isExpanded")
        assert phone.evaluate(f"({telegram})().BackButton.isVisible")
        assert "user-scalable=no" in (phone.locator('meta[name="viewport"]')
                                      .get_attribute("content") or "")
        phone.evaluate("""() => window.postMessage({eventType: "theme_changed",
            eventData: {theme_params: {bg_color: "#212121", text_color: "#ffffff"}}}, "*")""")
        phone.wait_for_function("() => getComputedStyle(document.documentElement)"
                                ".getPropertyValue('--bg').trim() === '#212121'")
        assert phone.evaluate("() => document.documentElement.dataset.scheme") == "dark"
        # back from the background (phones suspend web views): a fresh session
        sessions: list[str] = []
        phone.on("request", lambda r: sessions.append(r.url)
                 if r.url.endswith("/api/session") else None)
        for hidden in (True, False):
            phone.evaluate("""(hidden) => {
                Object.defineProperty(document, "hidden", {value: hidden, configurable: true});
                document.dispatchEvent(new Event("visibilitychange")); }""", hidden)
            phone.wait_for_timeout(1100 if hidden else 0)
        phone.wait_for_timeout(600)
        assert len(sessions) == 1, sessions
        # the briscola lies face up under the stock, on the table
        briscola = phone.locator("#stock .briscola")
        assert briscola.is_visible()
        # (40 - 6 dealt: the briscola is the last card drawn)
        assert phone.locator("#stock .stock-count").text_content() == "34"

        deadline = time.monotonic() + 150
        cards = 0
        checked = False
        while phone.evaluate("() => document.body.dataset.phase") != "over":
            assert time.monotonic() < deadline, "the match did not end in time"
            tapped = phone.evaluate(TAP)
            if tapped is None:
                phone.wait_for_timeout(40)
                continue
            cards += 1  # (then a moment, as a fast thumb: the server allows 4 a second)
            phone.wait_for_timeout(250)
            phone.wait_for_function(
                f"() => document.body.dataset.version !== '{tapped['version']}'"
                " || !document.getElementById('toast').hidden", timeout=10000)
            assert phone.locator("#toast.bad").is_hidden(), \
                phone.locator("#toast").text_content()
            boxes = phone.evaluate(BOXES)
            seats, felt = boxes["seats"], boxes["felt"]
            assert _overlap(seats[0], seats[1]) == 0
            for thing in seats + boxes["trick"] + boxes["stock"]:
                assert felt["x"] <= thing["x"] and thing["x"] + thing["w"] <= \
                    felt["x"] + felt["w"], thing
            for card in boxes["trick"] + boxes["stock"]:
                assert all(_overlap(card, seat) < 0.1 * card["w"] * card["h"]
                           for seat in seats), (card, seats)
            assert all(card["w"] >= 44 and card["h"] >= 44 for card in boxes["hand"])
            if len(boxes["trick"]) == 1 and boxes["stock"] and not checked:
                phone.screenshot(path=str(shots / "webapp-briscola.png"))
                checked = True
        assert checked and cards >= 20  # at least one whole hand of twenty tricks
        calls = phone.evaluate(f"({telegram})().calls")
        assert calls.count("haptic:impact:medium") == cards, calls  # a buzz per card
        assert "haptic:notification:error" not in calls
        # the end: the final result in the page, as in the group
        result = phone.locator("#result")
        sync_api.expect(result).to_contain_text("Partita finita")
        assert "fresh" in (result.get_attribute("class") or "")
        assert phone.locator("#hand-box").is_hidden()
        group.locator(".message", has_text="Partita finita").last.wait_for(timeout=15000)
        phone.screenshot(path=str(shots / "webapp-briscola-end.png"), full_page=True)
        phone.evaluate("() => window.postMessage({eventType: 'back_button_pressed'}, '*')")
        phone.wait_for_function(f"() => ({telegram})().calls.includes('close')")
