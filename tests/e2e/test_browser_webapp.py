"""A real browser plays through the Mini App, under Telegram's own script, in the sandbox.

Chromium (Playwright) opens the sandbox's page (``python -m sandbox``: the real bot in its
own process, the fake Telegram, and the bot's Mini App server), creates a table, then opens
the Mini App from the ``🃏 Tavolo`` web_app button of Anna's private chat (initData signed
by the fake Telegram, checked by the bot as in production). The Mini App runs under
Telegram's ``telegram-web-app.js`` (npm's ``@twa-dev/sdk`` 8.0.2, fetched by
``scripts/telegram-js``; never committed): a phone-sized page (390×844,
``sandbox/static/phone.html``) holds it in an iframe and answers Telegram's web
``postMessage`` protocol as Telegram's client does (``sandbox/static/telegram-host.js``,
which records what the page posted). Anna plays by tapping the phone only; the group's
chat follows as after button presses.

``WEBAPP_SCREENSHOTS=docs`` keeps the phone's screenshots (README's docs/webapp*.png).
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from tests.e2e.test_browser import CHROMIUM, _require_browser, sandbox, start_table

__all__ = ["sandbox"]

ROOT = Path(__file__).resolve().parents[2]
SMAZZATA_SECONDS = 90.0
PHONE = {"width": 390, "height": 844}


@pytest.fixture
def telegram_js(monkeypatch: pytest.MonkeyPatch) -> str:
    """Telegram's script, as scripts/telegram-js leaves it (the sandbox's bot serves it)."""
    path = Path(os.environ.get("TELEGRAM_WEB_APP_JS") or ROOT / ".telegram/telegram-web-app.js")
    if not path.is_file():
        problem = (f"no Telegram script at {path}: scripts/telegram-js fetches it with npm "
                   "(@twa-dev/sdk 8.0.2)")
        if os.environ.get("CI"):
            pytest.fail(f"CI fetches Telegram's script, but: {problem}")
        pytest.skip(problem)
    monkeypatch.setenv("WEBAPP_TELEGRAM_JS", str(path))
    return str(path)


@pytest.fixture
def telegram_sandbox(telegram_js: str, sandbox: str) -> str:
    """The sandbox, its bot's Mini App under Telegram's script (set up in this order)."""
    return sandbox


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
    target = document.querySelector('#hand .card.playable:not(.leaving)');
  }
  if (!target) return null;
  const done = {code: target.dataset.code, version: body.dataset.version};
  target.click();
  return done;
}"""

#: Where each seat chip, trick card, stock card and hand card lies (page pixels).
BOXES = """() => {
  const rect = (e) => { const r = e.getBoundingClientRect();
    return {x: r.left, y: r.top, w: r.width, h: r.height, seat: e.dataset.seat,
            card: e.dataset.card}; };
  const all = (q) => [...document.querySelectorAll(q)].map(rect);
  return {felt: rect(document.getElementById('felt')), seats: all('#seats .seat'),
          trick: all('#trick:not(.gather) .card'),
          taken: document.querySelector('#trick.taken:not(.gather)') !== null,
          stock: all('#stock:not([hidden]) .card'), hand: all('#hand .card:not(.leaving)'),
          playable: all('#hand .card.playable'),
          scroll: document.scrollingElement.scrollTop};
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


class Phone:
    """Anna's phone: Telegram (the host page) with the Mini App filling its 390×844."""

    def __init__(self, browser: Any, sandbox_url: str, launch: str, **host: str) -> None:
        self.page = browser.new_page(viewport=PHONE)
        self.errors: list[str] = []
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.requests: list[str] = []
        self.page.on("request", lambda r: self.requests.append(f"{r.method} {r.url}"))
        query = "".join(f"&{k}={quote(v)}" for k, v in host.items())
        self.page.goto(f"{sandbox_url.rstrip('/')}/static/phone.html?src={quote(launch)}{query}")
        self.page.frame_locator("#app").locator("#seats .seat").first.wait_for(timeout=15000)
        self.app = self.page.main_frame.child_frames[0]

    def posted(self, kind: str | None = None) -> list[dict[str, Any]]:
        """What the Mini App posted to Telegram, in order."""
        events: list[dict[str, Any]] = self.page.evaluate("() => window.telegramHost.events")
        return [e for e in events if kind is None or e["type"] == kind]

    def host(self, call: str) -> Any:
        return self.page.evaluate(f"() => window.telegramHost.{call}")

    def shot(self, shots: Path, name: str) -> None:
        self.page.screenshot(path=str(shots / name), animations="disabled")

    def counted(self, path: str) -> int:
        return sum(r.split(" ", 1)[1].split("?")[0].endswith(path) for r in self.requests)


def _centre(box: dict[str, Any]) -> tuple[float, float]:
    return box["x"] + box["w"] / 2, box["y"] + box["h"] / 2


def _overlap(a: dict[str, float], b: dict[str, float]) -> float:
    dx = min(a["x"] + a["w"], b["x"] + b["w"]) - max(a["x"], b["x"])
    dy = min(a["y"] + a["h"], b["y"] + b["h"]) - max(a["y"], b["y"])
    return max(0.0, dx) * max(0.0, dy)


def _check_table(boxes: dict[str, Any]) -> None:
    """Each card of the trick lies nearer its player's seat than any other seat; the
    hand is one row."""
    seats = {s["seat"]: _centre(s) for s in boxes["seats"]}
    for card in boxes["trick"]:
        x, y = _centre(card)
        distance = {seat: math.dist((x, y), at) for seat, at in seats.items()}
        nearest = min(distance, key=distance.__getitem__)
        assert nearest == card["seat"], (card, distance)
    hand = boxes["hand"]
    if hand:
        tops = [c["y"] for c in hand]
        assert max(tops) - min(tops) < hand[0]["h"] / 2, hand  # one row
        assert all(c["x"] >= 0 and c["x"] + c["w"] <= PHONE["width"] + 1 for c in hand), hand


def _check_auction_fits(boxes: dict[str, Any]) -> None:
    """During the auction the whole hand is on the 390×844 screen, without scrolling."""
    assert boxes["scroll"] == 0
    assert len(boxes["hand"]) == 8
    for card in boxes["hand"]:
        assert card["y"] >= 0 and card["y"] + card["h"] <= PHONE["height"], card
        assert card["x"] >= 0 and card["x"] + card["w"] <= PHONE["width"] + 1, card


#: The called card's corner of the felt: its box, the card's and its labels'.
CORNER = """() => {
  const rect = (e) => { const r = e.getBoundingClientRect();
    return {x: r.left, y: r.top, w: r.width, h: r.height}; };
  const box = document.getElementById('corner');
  return {felt: rect(document.getElementById('felt')), box: rect(box),
          card: rect(box.querySelector('.card')),
          labels: [...box.querySelectorAll('.caption, .suit')].map(rect)};
}"""

#: Each visible button of the controls: whether its centre is on the screen and the
#: button itself is what a tap there reaches (nothing covers it).
REACHABLE = """() => [...document.querySelectorAll('#controls button')]
  .filter((b) => b.offsetParent !== null).map((b) => {
    const r = b.getBoundingClientRect();
    const x = r.left + r.width / 2, y = r.top + r.height / 2;
    const hit = document.elementFromPoint(x, y);
    return {code: b.dataset.code || b.textContent,
            onScreen: x >= 0 && x <= innerWidth && y >= 0 && y <= innerHeight,
            reached: hit !== null && b.contains(hit)};
  })"""


def _check_corner(corner: dict[str, Any]) -> None:
    """The called card's labels lie beside it, not on it, and the whole box is inside the
    felt's curved edge (its rounded corners, 50% / 40%, less the 9 px wooden rim)."""
    for label in corner["labels"]:
        assert _overlap(label, corner["card"]) == 0, corner
    felt, box = corner["felt"], corner["box"]
    rx, ry = felt["w"] / 2, felt["h"] * 0.4
    centre_x, centre_y = felt["x"] + rx, felt["y"] + felt["h"] - ry
    for x in (box["x"], box["x"] + box["w"]):
        y = box["y"] + box["h"]  # (its lower corners: the box is in the felt's lower part)
        if y > centre_y:
            assert ((x - centre_x) / (rx - 9)) ** 2 + ((y - centre_y) / (ry - 9)) ** 2 <= 1, \
                corner


def _overlay_trick(app: Any) -> dict[str, Any]:
    """The trick an overlay shows: (seat, card) in order and the seat lit as its taker."""
    result: dict[str, Any] = app.evaluate("""() => ({
        plays: [...document.querySelectorAll('#overlay-body .play')].map(
            (p) => [Number(p.dataset.seat), p.querySelector('img').dataset.card]),
        winner: [...document.querySelectorAll('#overlay-body .play.winner')].map(
            (p) => Number(p.dataset.seat)),
        key: document.querySelector('#overlay-body .trick-row').dataset.key})""")
    return result


def test_a_phone_plays_a_smazzata_under_telegrams_script(
        telegram_sandbox: str, tmp_path: Path) -> None:
    with _chromium(tmp_path) as (sync_api, browser, page, shots):
        group = start_table(page, telegram_sandbox)
        # Anna's private hand message carries the web_app button: the sandbox opens the
        # Mini App in its own phone frame, under Telegram's script too
        private = page.locator('section[data-type="private"]')
        private.locator("button.web-app", has_text="Tavolo").last.click(timeout=15000)
        launch = page.locator("#webapp iframe").get_attribute("src")
        assert launch is not None and "#tgWebAppData=" in launch
        page.frame_locator("#webapp iframe").locator("#hand .card").first.wait_for(timeout=15000)
        page.locator("#webapp .close").click()

        # her phone: Telegram on Android, full screen, a status bar of 24 px
        phone = Phone(browser, telegram_sandbox, launch, platform="android", inset="24")
        app = phone.app
        app.locator("#hand .card").first.wait_for(timeout=15000)
        telegram = "() => window.Telegram.WebApp"
        assert app.evaluate(f"({telegram})().version") == "8.0"
        assert "WebView" in app.evaluate("() => Object.keys(window.Telegram).join(',')")
        # the page's own start: ready, expand, no vertical swipes, full screen on a phone
        kinds = [e["type"] for e in phone.posted()]
        for kind in ("web_app_ready", "web_app_expand", "web_app_request_fullscreen",
                     "web_app_request_theme", "web_app_request_viewport",
                     "web_app_request_safe_area"):
            assert kind in kinds, kinds
        assert phone.posted("web_app_setup_swipe_behavior")[-1]["data"] == {
            "allow_vertical_swipe": False}
        assert phone.host("fullscreen")
        # the safe area and Telegram's buttons (24 + 46 px) are kept clear
        app.wait_for_function("() => getComputedStyle(document.querySelector('main'))"
                              ".paddingTop === '74px'")
        assert app.locator("#seats .seat").count() == 5
        assert app.locator("#hand .card").count() == 8
        # Telegram's theme, when it changes
        phone.host('setTheme({bg_color: "#212121", text_color: "#ffffff"})')
        app.wait_for_function("() => getComputedStyle(document.documentElement)"
                              ".getPropertyValue('--bg').trim() === '#212121'")
        assert app.evaluate("() => document.documentElement.dataset.scheme") == "dark"
        phone.host('setTheme({bg_color: "#ffffff", text_color: "#000000", '
                   'secondary_bg_color: "#f4f4f5", button_color: "#2481cc", '
                   'button_text_color: "#ffffff", hint_color: "#707579"})')
        # minimised, then back (Telegram's visibility_changed): the event stream closes,
        # then opens again with the current state, and no new session is needed
        streams, sessions = phone.counted("/api/events"), phone.counted("/api/session")
        phone.host("setVisible(false)")
        app.wait_for_function("() => window.miniApp.source === null")
        phone.host("setVisible(true)")
        app.wait_for_function("() => window.miniApp.source !== null && "
                              "window.miniApp.source.readyState === 1")
        assert phone.counted("/api/events") == streams + 1
        assert phone.counted("/api/session") == sessions

        taps: list[dict[str, str]] = []
        deadline = time.monotonic() + SMAZZATA_SECONDS
        ended = group.locator(".message", has_text="Fine della smazzata 1")
        shot = {"auction": False, "half": False, "taken": False}
        refused = doubled = False
        while not ended.count():
            assert time.monotonic() < deadline, "the smazzata did not end in time"
            boxes = app.evaluate(BOXES)
            _check_table(boxes)
            phase = app.evaluate("() => document.body.dataset.phase")
            mine = app.evaluate("() => document.body.dataset.myTurn") == "1"
            if phase == "auction" and sum(t["code"].startswith("c") for t in taps) == 0:
                _check_auction_fits(boxes)
                if mine and not shot["auction"]:
                    phone.shot(shots, "webapp-auction.png")
                    shot["auction"] = True
                    # the other calls, one tap away: the hand stays in sight with them
                    more = app.locator("#controls button.more")
                    if more.count():
                        more.click()
                        app.locator("#controls .more-box").wait_for()
                        _check_auction_fits(app.evaluate(BOXES))
                        more.click()
                        app.locator("#controls .more-box").wait_for(state="detached")
            if phase == "play" and 2 <= len(boxes["trick"]) <= 4 and not boxes["taken"] \
                    and not shot["half"]:
                phone.shot(shots, "webapp.png")  # a trick half played
                _check_corner(app.evaluate(CORNER))
                # (still half played after the picture: else another try)
                after = app.evaluate(BOXES)
                shot["half"] = 2 <= len(after["trick"]) <= 4 and not after["taken"]
            if boxes["taken"] and len(boxes["trick"]) == 5 and not shot["taken"] \
                    and app.locator("#overlay").is_hidden():
                phone.shot(shots, "webapp-taken.png")  # a trick being taken
                # (still the same taken trick after the picture: else another try)
                shot["taken"] = app.evaluate(BOXES)["taken"]
            done = sum(t["code"].startswith("c") for t in taps) == 8
            if mine and phase == "play" and not refused:
                # a move the server refuses (the page's version made stale): the card
                # comes back with the server's message, and a buzz
                version, held = app.evaluate("""() => { const v = window.miniApp.state.version;
                    const held = document.querySelectorAll('#hand .card').length;
                    window.miniApp.state.version = v - 1;
                    document.querySelector('#hand .card.playable').click(); return [v, held]; }""")
                app.locator("#toast.bad").wait_for(timeout=10000)
                assert "cambiato" in (app.locator("#toast").text_content() or "")
                app.wait_for_function("() => !document.body.classList.contains('sending')")
                assert app.locator("#hand .card.leaving").count() == 0
                assert app.locator("#hand .card").count() == held
                assert {"type": "notification", "notification_type": "error"} in [
                    e["data"] for e in phone.posted("web_app_trigger_haptic_feedback")]
                app.evaluate(f"() => {{ window.miniApp.state.version = {version}; "
                             "document.getElementById('toast').hidden = true; }")
                refused = True
                continue
            moves = phone.counted("/api/move")
            if mine and phase == "play" and refused and not doubled and not done:
                # two quick taps on a card: one move
                tapped = app.evaluate("""() => {
                    const card = document.querySelector('#hand .card.playable');
                    const done = {code: card.dataset.code,
                                  version: document.body.dataset.version};
                    card.click();
                    done.left = card.classList.contains("leaving");  // at once
                    card.click(); return done; }""")
                assert tapped.pop("left") is True
                doubled = True
            else:
                tapped = None if done else app.evaluate(TAP)
            if tapped is None:
                page.wait_for_timeout(40)
                continue
            taps.append(tapped)
            app.wait_for_function(
                f"() => document.body.dataset.version !== '{tapped['version']}'"
                " || !document.getElementById('toast').hidden", timeout=10000)
            assert app.locator("#toast.bad").is_hidden(), app.locator("#toast").text_content()
            assert phone.counted("/api/move") == moves + 1
        codes = [t["code"] for t in taps]
        assert sum(c.startswith("c") for c in codes) == 8, codes  # her eight cards
        assert codes[0].startswith(("r", "P")), codes  # she took part in the auction
        assert refused and doubled and shot["auction"] and shot["half"]
        if not shot["taken"] and app.evaluate("() => document.body.dataset.taking") == "1":
            phone.shot(shots, "webapp-taken.png")  # the smazzata's last trick, being taken
            shot["taken"] = True
        assert "Punti:" in ended.last.text_content()
        # haptics: her turns, and each card she played
        haptics = [e["data"] for e in phone.posted("web_app_trigger_haptic_feedback")]
        assert {"type": "impact", "impact_style": "heavy"} in haptics, haptics
        assert haptics.count({"type": "impact", "impact_style": "medium"}) == 8, haptics

        # the next smazzata: at Anna's first call the sheet does not cover anything (it
        # closes by itself on her turn, or does not open over it), it is one tap away
        # on the lit 📋, and her controls and her whole hand are there to use
        app.wait_for_function("() => document.body.dataset.phase === 'auction' && "
                              "document.body.dataset.myTurn === '1' && "
                              "!document.getElementById('sheet-button').hidden",
                              timeout=15000)
        app.wait_for_timeout(2500)  # (after the last trick's 1.5 s and the sheet's moment)
        assert app.evaluate("() => document.body.dataset.myTurn") == "1"
        assert app.locator("#overlay").is_hidden()
        assert not phone.host("backVisible")
        assert "fresh" in (app.locator("#sheet-button").get_attribute("class") or "")
        reachable = app.evaluate(REACHABLE)
        assert len(reachable) >= 2 and all(b["onScreen"] and b["reached"] for b in reachable), \
            reachable
        app.locator('#controls button[data-code="P"]').click(trial=True, timeout=3000)
        app.locator("#controls button.call").first.click(trial=True, timeout=3000)
        _check_auction_fits(app.evaluate(BOXES))
        # the sheet, from 📋 (and nothing moves while it is open: Anna is in turn)
        app.locator("#sheet-button").click()
        app.locator('#overlay[data-kind="sheet"]').wait_for(timeout=5000)
        assert "fresh" not in (app.locator("#sheet-button").get_attribute("class") or "")
        sides = app.locator("table.sides .points").all_text_contents()
        assert sum(int(p.split()[0]) for p in sides) == 120, sides
        assert app.locator("table.changes:not(.ratings) tr").count() == 5
        assert phone.host("backVisible")
        phone.shot(shots, "webapp-sheet.png")
        # the review: the eight tricks as the page saw them taken, in order
        taken: dict[str, Any] = app.evaluate("() => window.miniApp.taken")
        app.locator(".review-button").click()
        app.locator('#overlay[data-kind="review"] .trick-row').wait_for()
        for index in range(8):
            shown = _overlay_trick(app)
            assert shown["key"] == f"0.{index}"
            if shown["key"] in taken:
                seen = taken[shown["key"]]
                assert shown["plays"] == [[s, c] for s, c in seen["plays"]]
                assert shown["winner"] == [seen["winner"]]
            assert len(shown["plays"]) == 5 and len(shown["winner"]) == 1
            if index == 2:
                phone.shot(shots, "webapp-review.png")
            if index < 7:
                app.locator(".review-nav button").last.click()
                app.wait_for_function("() => document.getElementById('overlay-body')"
                                      f".dataset.trick === '{index + 1}'")
        assert sum(k.startswith("0.") for k in taken) >= 6  # (the page saw most taken live)
        # Telegram's Back: from the review to the sheet, then closed
        phone.host("pressBack()")
        app.locator('#overlay[data-kind="sheet"]').wait_for()
        phone.host("pressBack()")
        app.locator("#overlay").wait_for(state="hidden")
        assert not phone.host("backVisible")
        # the last trick: the eighth, as the review showed it
        app.locator("#last-button").click()
        app.locator('#overlay[data-kind="last"] .trick-row').wait_for()
        last = _overlay_trick(app)
        assert last["key"] == "0.7" and len(last["plays"]) == 5
        # (the state after the eighth card carries it: the page saw it taken)
        assert last["plays"] == [[s, c] for s, c in taken["0.7"]["plays"]]
        assert last["winner"] == [taken["0.7"]["winner"]]
        phone.shot(shots, "webapp-last-trick.png")
        app.locator("#overlay-close").click()
        assert phone.errors == []
        phone.page.close()

        # Bruno is in the group, not at the table: the group's direct link shows him
        # what the group sees, no hand, nothing to press
        page.select_option("#user", label="Bruno (it)")
        sync_api.expect(private.locator(".title")).to_contain_text("Bruno")
        link = group.locator("button.url", has_text="Tavolo").last
        link.click(timeout=15000)
        watcher = page.frame_locator("#webapp iframe")
        watcher.locator(".seat").first.wait_for(timeout=15000)
        sync_api.expect(watcher.locator("#status-text")).to_contain_text("Guardi il tavolo")
        assert watcher.locator("#hand .card").count() == 0
        assert watcher.locator("#controls button").count() == 0


def test_a_phone_plays_a_match_of_plain_briscola_under_telegrams_script(
        telegram_sandbox: str, tmp_path: Path) -> None:
    """Plain Briscola for two, Anna against a computer, played to the match's end by
    tapping the Mini App on a phone: the stock and the briscola lie on the table, the
    seats do not cover each other or the cards, each card lies before its player, the
    hand is one row of three cards big enough to tap, the final result and its sheet."""
    with _chromium(tmp_path) as (sync_api, browser, page, shots):
        group = start_table(page, telegram_sandbox, "/nuova briscola", computers=1)
        private = page.locator('section[data-type="private"]')
        private.locator("button.web-app", has_text="Tavolo").last.click(timeout=15000)
        launch = page.locator("#webapp iframe").get_attribute("src")
        assert launch is not None and "#tgWebAppData=" in launch
        page.locator("#webapp .close").click()
        phone = Phone(browser, telegram_sandbox, launch)  # Telegram Web: no full screen
        app = phone.app
        app.locator("#hand .card").first.wait_for(timeout=15000)
        assert app.locator("#seats .seat").count() == 2
        assert app.locator("#hand .card").count() == 3
        assert "web_app_request_fullscreen" not in [e["type"] for e in phone.posted()]
        assert "user-scalable=no" in (app.locator('meta[name="viewport"]')
                                      .get_attribute("content") or "")
        briscola = app.locator("#stock .briscola")
        # (waited for, not sampled: sampled right after the hand's first card it was
        # not visible yet once in a whole-suite run)
        briscola.wait_for(state="visible", timeout=5000)
        assert app.locator("#stock .stock-count").text_content() == "34"

        deadline = time.monotonic() + 150
        cards = 0
        checked = taken_shot = False
        while app.evaluate("() => document.body.dataset.phase") != "over":
            assert time.monotonic() < deadline, "the match did not end in time"
            boxes = app.evaluate(BOXES)
            _check_table(boxes)
            if boxes["taken"] and len(boxes["trick"]) == 2 and not taken_shot \
                    and not (shots / "webapp-taken.png").exists():
                phone.shot(shots, "webapp-taken.png")  # (if the chiamata missed it)
                taken_shot = True
            tapped = app.evaluate(TAP)
            if tapped is None:
                app.wait_for_timeout(40)
                continue
            cards += 1  # (then a moment, as a fast thumb: the server allows 4 a second)
            app.wait_for_timeout(250)
            app.wait_for_function(
                f"() => document.body.dataset.version !== '{tapped['version']}'"
                " || !document.getElementById('toast').hidden", timeout=10000)
            assert app.locator("#toast.bad").is_hidden(), app.locator("#toast").text_content()
            boxes = app.evaluate(BOXES)
            seats, felt = boxes["seats"], boxes["felt"]
            assert _overlap(seats[0], seats[1]) == 0
            for thing in seats + boxes["trick"] + boxes["stock"]:
                assert felt["x"] <= thing["x"] and thing["x"] + thing["w"] <= \
                    felt["x"] + felt["w"], thing
            for card in boxes["trick"] + boxes["stock"]:
                assert all(_overlap(card, seat) < 0.1 * card["w"] * card["h"]
                           for seat in seats), (card, seats)
            assert all(card["w"] >= 44 and card["h"] >= 44 for card in boxes["playable"])
            if len(boxes["trick"]) == 1 and boxes["stock"] and not checked:
                phone.shot(shots, "webapp-briscola.png")
                checked = True
        assert checked and cards >= 20  # at least one whole hand of twenty tricks
        haptics = [e["data"] for e in phone.posted("web_app_trigger_haptic_feedback")]
        assert haptics.count({"type": "impact", "impact_style": "medium"}) == cards
        assert {"type": "impact", "impact_style": "heavy"} in haptics
        assert {"type": "notification", "notification_type": "error"} not in haptics
        # the end: the final result in the page, as in the group, and the last sheet
        result = app.locator("#result")
        sync_api.expect(result).to_contain_text("Partita finita")
        assert app.locator("#hand-box").is_hidden()
        group.locator(".message", has_text="Partita finita").last.wait_for(timeout=15000)
        app.locator('#overlay[data-kind="sheet"]').wait_for(timeout=10000)
        assert app.locator("table.sides tr").count() == 2
        # the match's last sheet (issue 48): the ratings (Anna, the computer's level),
        # "share" where the client speaks Bot API 8.0, and 🔁 Rivincita
        sync_api.expect(app.locator("table.ratings tr")).to_have_count(2)
        shares = app.evaluate("() => Telegram.WebApp.isVersionAtLeast('8.0')")
        assert app.locator(".share-button").count() == (1 if shares else 0)
        sync_api.expect(app.locator(".rematch-sheet-button")).to_have_text("🔁 Rivincita")
        phone.host("pressBack()")
        app.locator("#overlay").wait_for(state="hidden")
        phone.shot(shots, "webapp-briscola-end.png")
        # 🔁 Rivincita from the page (issue 48): under the result and on the last sheet,
        # pressed there: Anna and the same computer deal again at once, the sheet closes
        # and the page follows the new table
        rematch = app.locator("#rematch-button")
        sync_api.expect(rematch).to_have_text("🔁 Rivincita")
        app.locator("#sheet-button").click()
        app.locator(".rematch-sheet-button").click()
        app.locator("#overlay").wait_for(state="hidden", timeout=10000)
        sync_api.expect(app.locator("#toast")).to_contain_text("Rivincita")
        app.wait_for_function("() => document.body.dataset.phase !== 'over'", timeout=15000)
        sync_api.expect(app.locator("#hand .card")).to_have_count(3, timeout=15000)
        assert app.locator("#rematch-button").is_hidden()
        group.locator(".message", has_text="Partita iniziata").nth(1).wait_for(timeout=15000)
        assert phone.errors == []
