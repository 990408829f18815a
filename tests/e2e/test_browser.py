"""A real browser plays the sandbox: Debian's Chromium, driven by Playwright, opens the page
of ``python -m sandbox`` (the real bot in its own process against the local fake Telegram)
and uses it as a person does: types commands in the group and in the private chat (several
in a row, the next one typed before the bot answered the last), opens a table in the group,
fills it with computers and plays a whole smazzata by clicking in the private chat, bids
included (pressing again while the redraw of a press is on its way); opens the Mini App
from the hand, which takes the chat out of the loop while it is open and gives it back
when closed; reloads the page, switches users, adds one; and plays a smazzata alone
against the computers in the private chat (``/nuova`` there). It saves a
screenshot mid-smazzata (``SANDBOX_SCREENSHOT=path`` to keep it: README's docs/sandbox.png
is one).

Needs the ``chromium`` apt package and Playwright from PyPI (``.ci/run`` installs both; the
browser Playwright would download is not used). Where they are missing the test is skipped
with the reason — except under CI, where it fails, since CI installs them.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
SMAZZATA_SECONDS = 60.0


def _require_browser() -> Any:
    problem = None
    try:
        from playwright import sync_api
    except ImportError:
        problem = "Playwright is not installed (pip install -e '.[test]')"
    if problem is None and not (os.access(CHROMIUM, os.X_OK) or shutil.which(CHROMIUM)):
        problem = f"no Chromium at {CHROMIUM} (apt-get install chromium chromium-driver)"
    if problem is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI installs the browser, but: {problem}")
        pytest.skip(f"no browser to drive: {problem}")
    return sync_api


@contextlib.contextmanager
def _browsers_lock(factory: pytest.TempPathFactory, alone: bool) -> Iterator[None]:
    """Across pytest-xdist's workers: the paced sandbox's test runs with no other browser
    test at once (``alone``: exclusive; the others share the lock). It measures each
    press's redraw against 0.3 s, and beside two more Chromiums and their sandboxes on a
    2-core machine a bid was redrawn in 0.5 s, a card in 1.1 s."""
    path = factory.getbasetemp().parent / "browsers.lock"
    with path.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@pytest.fixture
def sandbox(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``python -m sandbox`` on a free port (its own directory: no developer's .env); the
    computers move without the human-friendly pause, no turn timer, the chats redrawn
    without Telegram's pace (``--no-flood-limits``)."""
    with _browsers_lock(tmp_path_factory, alone=False):
        yield from _sandbox(tmp_path, computer_delay="0.05", paced=False)


#: The computers' pause in the paced sandbox: half their production second, still under a
#: private chat's 1.25 s a call, so that the redraws their moves bring still use the
#: presser's chat up between two presses (the path of issue 46's late cards). With the
#: presser's call not kept (``bot.outbox.edits.PRESSED_KEEPS = 0``, the bug) the test
#: below measured p95 1.23 s at this pause; at a second it took 20 s longer.
PACED_COMPUTER_DELAY = "0.5"


@pytest.fixture
def paced_sandbox(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The same with the computers pausing before each move (``PACED_COMPUTER_DELAY``),
    under Telegram's limits and the bot's production pacing."""
    with _browsers_lock(tmp_path_factory, alone=True):
        yield from _sandbox(tmp_path, computer_delay=PACED_COMPUTER_DELAY, paced=True)


def _sandbox(tmp_path: Path, computer_delay: str, paced: bool) -> Iterator[str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("BOT_TOKEN", "COMPUTER_DELAY_SECONDS", "GROUP_MESSAGES_PER_MINUTE",
                        "PRIVATE_MESSAGES_PER_SECOND")}
    env.update(TURN_TIMEOUT_SECONDS="0", LOG_LEVEL="WARNING", PYTHONUNBUFFERED="1",
               COMPUTER_DELAY_SECONDS=computer_delay)
    if not paced:
        # and the chats redrawn without Telegram's pace (nor the fake's flood control):
        # what these tests check is the page; the pacing has its own tests (and the paced
        # sandbox above). The group's 3 s a call was a third of their time, and a private
        # chat's 1.25 s a call (two calls a move: the presser's hand, the next turn) made
        # each of Anna's clicks 2.5 s apart, ~25 s of each smazzata played by clicking
        env.update(GROUP_MESSAGES_PER_MINUTE="1000", PRIVATE_MESSAGES_PER_SECOND="1000")
    process = subprocess.Popen(
        [sys.executable, "-m", "sandbox", "--port", "0",
         *([] if paced else ["--no-flood-limits"])],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        url = None
        assert process.stdout is not None
        for line in process.stdout:
            found = re.search(r"open (http://\S+)", line)
            if found:
                url = found.group(1)
                break
        assert url, "the sandbox did not print its address"
        yield url
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:  # (shown with a failure: the calls refused)
            print("sandbox:", process.stdout.read()[-3000:])


#: Decides the next click from what the page shows: the callback data and the panel. The
#: bids are in ``me``'s private hand (in a group too: no group message carries a bid
#: button), where ``me`` calls a rank once, then passes; then the first card it may play.
NEXT_CLICK = """(smz) => {
  const mine = document.querySelector('section[data-type="private"]');
  const withButtons = (panel) => [...panel.querySelectorAll('.message')]
      .filter((m) => m.querySelector('button[data-callback^="a:"]'));
  const hand = withButtons(mine).pop();
  // only the hand of smazzata ``smz`` (if given): the next one's may come before the
  // group shows the end of this one
  if (smz && hand && !new RegExp('smazzata ' + smz + '(?!\\d)').test(hand.textContent)) {
    return null;
  }
  if (hand && hand.textContent.includes('Tocca a te')) {
    const pass = hand.querySelector('button[data-callback$=":P"]');
    if (pass) {
      const call = hand.querySelector('button[data-callback^="a:"][data-callback*=":r"]');
      const bid = document.body.dataset.bid ? null : call;
      document.body.dataset.bid = "1";
      return {panel: 'private', data: (bid || pass).dataset.callback, card: false};
    }
    const cards = [...hand.querySelectorAll('button[data-callback^="a:"]')]
        .filter((b) => !b.textContent.startsWith('🚫'));
    if (cards.length) return {panel: 'private', data: cards[0].dataset.callback, card: true};
  }
  return null;
}"""

#: In the Mini App's frame: a session of its own from Telegram's ``initData`` (the page's
#: DOM is not relied on), then "pass" at the current version through the Mini App's API;
#: the HTTP status of the move and the session's token.
MINI_APP_PASS = """async () => {
  const table = new URLSearchParams(location.search).get("table") || "";
  const session = await (await fetch("api/session", {method: "POST",
      headers: {"Content-Type": "application/json"},
      body: JSON.stringify({init_data: Telegram.WebApp.initData, table})})).json();
  const move = await fetch("api/move", {method: "POST",
      headers: {"Content-Type": "application/json", Authorization: "Bearer " + session.token},
      body: JSON.stringify({version: session.state.version, code: "P"})});
  return {status: move.status, token: session.token};
}"""
#: Whether it is the viewer's turn, from the Mini App's API (``api/state``).
MINI_APP_MY_TURN = """async (token) => {
  const state = await (await fetch("api/state?token=" + encodeURIComponent(token))).json();
  return state.my_turn ? state.version : null;
}"""


class Browser:
    """One page of the sandbox in Chromium, with what it asked the server and its errors."""

    def __init__(self, sync_api: Any, page: Any) -> None:
        self.api = sync_api
        self.page = page
        self.presses: list[tuple[int, dict[str, Any]]] = []
        self.errors: list[str] = []
        self.shot: Path | None = None  # where play() saves its screenshot mid-smazzata
        page.on("pageerror", lambda error: self.errors.append(f"page error: {error}"))
        page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        page.on("response", self._response)

    def _response(self, response: Any) -> None:
        if response.url.endswith("/api/press"):
            self.presses.append((response.status, response.json()))
        elif "/api/" in response.url and response.status != 200:
            self.errors.append(f"{response.url}: {response.status} {response.text()}")

    def panel(self, kind: str) -> Any:
        return self.page.locator(f'section[data-type="{kind}"]')

    def type(self, kind: str, text: str) -> None:
        """Type ``text`` in a chat's composer and press Enter (no waiting for the bot)."""
        draft = self.panel(kind).locator(".draft")
        draft.fill(text)
        draft.press("Enter")
        self.api.expect(draft).to_have_value("")  # taken: the box is free for the next one

    def answered(self, kind: str, text: str | re.Pattern[str]) -> Any:
        """The bot's message in that chat containing ``text``, once there is one."""
        found = self.panel(kind).locator(".message:not(.mine)", has_text=text)
        self.api.expect(found).to_have_count(1)
        return found

    def play(self, me: str, ended: Any, *, double_press_from: int,
             smazzata: int | None = None) -> int:
        """Click ``me``'s moves until ``ended`` shows (the number of clicks); the first card
        from click ``double_press_from`` on is pressed twice, as an impatient person does:
        the second press comes while the redraw of the first is on its way. ``smazzata``:
        only that smazzata's moves (the next hand may arrive before ``ended`` does)."""
        deadline = time.monotonic() + SMAZZATA_SECONDS
        clicks = 0
        doubled = False
        while not ended.count():
            assert time.monotonic() < deadline, "the smazzata did not end in time"
            move = self.page.evaluate(NEXT_CLICK, smazzata)
            if move is None:
                self.page.wait_for_timeout(50)
                continue
            selector = (f'section[data-type="{move["panel"]}"] '
                        f'button[data-callback="{move["data"]}"]')
            clicks += 1
            if clicks >= double_press_from and move["card"] and not doubled:
                doubled, pressed = True, len(self.presses)
                self.page.locator(selector).last.dblclick(timeout=5000)
                # both presses answered; the second one refused, and the page says so
                self.api.expect(self.page.locator("#toast")).to_be_visible()
                self.page.wait_for_function(f"() => !document.querySelector('{selector}')",
                                            timeout=10000)
                deadline_two = time.monotonic() + 10
                while len(self.presses) < pressed + 2 and time.monotonic() < deadline_two:
                    self.page.wait_for_timeout(50)
                assert len(self.presses) == pressed + 2, self.presses[pressed:]
                second = self.presses[pressed + 1][1]  # "superato", or already gone
                said = "gone" if second.get("gone") else second["answer"]["text"]
                assert said, second
                if not second.get("gone"):
                    self.api.expect(self.page.locator("#toast")).to_have_text(said)
            else:
                self.page.locator(selector).last.click(timeout=5000)
            if clicks == 6 and self.shot:  # mid-smazzata: the table, the hand, the buttons
                self.page.screenshot(path=str(self.shot))
            self.page.wait_for_function(  # the move is applied: the button's version is gone
                f"() => !document.querySelector('{selector}')", timeout=10000)
        assert doubled, "no card was pressed twice"
        return clicks


def _open(sync_api: Any, playwright: Any, url: str) -> tuple[Any, Browser]:
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    sync_api.expect.set_options(timeout=15000)  # a group is paced at ~20 messages a minute
    page.goto(url)
    return browser, Browser(sync_api, page)


def fill_and_start(ui: Browser, lobby: Any, computers: int = 4) -> None:
    """Anna enters the open ``lobby`` by its button, ``computers`` computers fill the
    table, she starts it; returns once the group shows the first smazzata."""
    expect = ui.api.expect
    lobby.get_by_role("button", name="Entra").click()
    expect(lobby).to_contain_text("1. Anna")
    for _ in range(computers):
        lobby.get_by_role("button", name="Computer").click()
        ui.page.wait_for_timeout(150)
    expect(lobby).to_contain_text("Tavolo completo")
    lobby.get_by_role("button", name="Inizia").click()
    ui.answered("group", "Smazzata 1")


def start_table(page: Any, url: str, command: str = "/nuova", computers: int = 4) -> Any:
    """Open the sandbox's page as Anna: a new table in the group (``command``), Anna and
    ``computers`` computers, started by clicking the lobby's buttons. Returns the group's
    panel."""
    page.goto(url)
    group = page.locator('section[data-type="group"]')
    group.locator(".draft").fill(command)
    group.locator(".draft").press("Enter")
    lobby = group.locator(".message", has_text="Briscola").last
    lobby.get_by_role("button", name="Entra").click()
    page.wait_for_function(
        "() => document.querySelector('section[data-type=\"group\"]')"
        ".textContent.includes('1. Anna')")
    for _ in range(computers):
        lobby.get_by_role("button", name="Computer").click()
        page.wait_for_timeout(150)
    page.get_by_text("Tavolo completo").wait_for()
    lobby.get_by_role("button", name="Inizia").click()
    return group


def test_a_browser_plays_a_smazzata_in_the_group(sandbox: str, tmp_path: Path) -> None:
    sync_api = _require_browser()
    with sync_api.sync_playwright() as playwright:
        browser, ui = _open(sync_api, playwright, sandbox)
        try:
            page, group, expect = ui.page, ui.panel("group"), sync_api.expect
            ui.type("group", "/nuova")
            lobby = ui.answered("group", "nuova partita")
            ui.type("group", "/entra")
            expect(lobby).to_contain_text("1. Anna")
            for _ in range(4):
                lobby.get_by_role("button", name="Computer").click()
                page.wait_for_timeout(150)
            expect(lobby).to_contain_text("Tavolo completo")
            ui.type("group", "/inizia")
            ui.answered("group", "Smazzata 1")  # (the lobby's "started" edit may come later)

            ui.shot = Path(os.environ.get("SANDBOX_SCREENSHOT", tmp_path / "sandbox.png"))
            ended = group.locator(".message", has_text="Fine della smazzata 1")
            clicks = ui.play("Anna", ended, double_press_from=3, smazzata=1)
            assert clicks >= 8  # Anna played her eight cards (and bid) by clicking
            assert "Punti:" in ended.last.text_content()
            page.screenshot(path=str(tmp_path / "end.png"))
            assert ui.shot.stat().st_size > 10_000  # (README's docs/sandbox.png is one)
            # no group message ever carried a bid button: they were all in her hand
            assert not group.locator('button[data-callback^="a:"]').count()
            mini_app_takes_the_chat_out_of_the_loop(ui)

            page.reload()  # the same user, the same chats, and the composer still works
            expect(page.locator("#user option:checked")).to_have_text("Anna (it)")
            expect(group).to_contain_text("Fine della smazzata 1")
            ui.type("group", "/classifica")
            ui.answered("group", re.compile("Classifica|nessun punteggio"))

            # act as another user: their own private chat, the same group
            page.select_option("#user", label="Bruno (it)")
            private = ui.panel("private")
            expect(private.locator(".title")).to_contain_text("Bruno")
            expect(private).not_to_contain_text("Le tue carte")
            expect(group).to_contain_text("Fine della smazzata 1")
            ui.type("private", "/mano")
            ui.answered("private", "Non stai giocando")
            # and a new user, who joins the group and is switched to
            page.fill("#new-name", "Zoe")
            page.click("#add-user button")
            expect(private.locator(".title")).to_contain_text("Zoe")
            expect(group).to_contain_text("Zoe joined the group")
            assert all(status == 200 and body["ok"] for status, body in ui.presses)
            assert not ui.errors, ui.errors
        finally:
            browser.close()


def mini_app_takes_the_chat_out_of_the_loop(ui: Browser) -> None:
    """In the second smazzata, at Anna's turn, she opens the Mini App from her hand's
    ``web_app`` button: while its page is open (its live stream: the presence contract)
    her private chat stays as it was though the table moves on — she passes through the
    Mini App's API, the computers finish the auction and play up to her next turn, and
    no redraw, no turn's buttons reach her chat. She closes it: her chat hand is brought
    up to date at once, with her turn's buttons."""
    page, private, expect = ui.page, ui.panel("private"), ui.api.expect
    turn = private.locator(".message", has_text="Tocca a te").filter(
        has=page.locator('button[data-callback$=":P"]'))
    expect(turn).to_have_count(1, timeout=30000)  # her turn in the new auction: idle
    # the first smazzata's hand closed first (its edit waits up to the bot's 4 s for
    # the hands of players who cannot act; a fixed 1.5 s here was once too short)
    expect(private.locator(".message", has_text="Smazzata 1 conclusa")).to_have_count(1)
    before = private.inner_text()
    private.locator("button.web-app", has_text="Tavolo").last.click(timeout=15000)
    page.wait_for_function("() => [...document.querySelectorAll('#webapp iframe')].length")
    frame = None
    while frame is None:
        frame = next((f for f in page.frames if "tgWebAppData" in f.url), None)
        page.wait_for_timeout(50)
    frame.wait_for_load_state("load")
    frame.wait_for_function(  # its live stream opened (the page is live: the server
        # counts it live before its first byte reaches the page)
        "() => window.miniApp.source && window.miniApp.source.readyState === 1")
    moved = frame.evaluate(MINI_APP_PASS)
    assert moved["status"] == 200, moved
    deadline = time.monotonic() + 60
    version = None
    while version is None:  # the computers play on, up to her next turn
        assert time.monotonic() < deadline, "her next turn did not come"
        page.wait_for_timeout(200)
        version = frame.evaluate(MINI_APP_MY_TURN, moved["token"])
    page.wait_for_timeout(1000)
    assert private.inner_text() == before  # nothing in her chat while the page was live
    page.locator("#webapp .close").click()  # the page closes: its stream with it
    expect(private).not_to_have_text(before, timeout=2500)  # brought up to date at once
    expect(private.locator(f'button[data-callback^="a:"][data-callback*=":{version}:"]')
           .first).to_be_visible(timeout=2500)


#: Clicks the button ``data`` of ``panel`` and resolves with the milliseconds until no
#: button with that callback is left on the page (the message pressed redrawn: the
#: button's version is gone), or -1 after 10 s.
TIMED_CLICK = """([panel, data]) => new Promise((resolve) => {
  const selector = `section[data-type="${panel}"] button[data-callback="${data}"]`;
  const button = [...document.querySelectorAll(selector)].pop();
  const t0 = performance.now();
  const done = (ms) => { observer.disconnect(); clearTimeout(timer); resolve(ms); };
  const observer = new MutationObserver(() => {
    if (!document.querySelector(selector)) done(performance.now() - t0);
  });
  const timer = setTimeout(() => done(-1), 10000);
  observer.observe(document.body, {subtree: true, childList: true, attributes: true,
                                   characterData: true});
  button.click();
})"""
#: Issue 46: the presser's own message is redrawn first, always.
OWN_REDRAW_P95 = 0.3


def test_every_press_is_redrawn_at_once_with_computers_at_the_table(
    paced_sandbox: str,
) -> None:
    """Anna and four computers pausing before each move (half a second: see
    ``PACED_COMPUTER_DELAY``) in the group; Anna bids and plays a whole smazzata from her
    hand. From each click to her pressed message redrawn (its button gone): p95 at most
    0.3 s, printed. Some cards waited for the computers' next move (0.8-1.25 s): their
    redraws had used the private chat's calls up. One waited 1.1 s in about one run of
    twenty: the card Anna led at once after her card won the trick, two presses right
    after her turn's call (a call beyond the burst is kept for it now)."""
    sync_api = _require_browser()
    with sync_api.sync_playwright() as playwright:
        browser, ui = _open(sync_api, playwright, paced_sandbox)
        try:
            page = ui.page
            group = start_table(page, paced_sandbox)
            ended = group.locator(".message", has_text="Fine della smazzata 1")
            waits: list[tuple[float, bool]] = []
            deadline = time.monotonic() + 3 * SMAZZATA_SECONDS
            while not ended.count():
                assert time.monotonic() < deadline, "the smazzata did not end in time"
                move = page.evaluate(NEXT_CLICK, None)
                if move is None:
                    page.wait_for_timeout(20)
                    continue
                ms = page.evaluate(TIMED_CLICK, [move["panel"], move["data"]])
                assert ms >= 0, f"{move} was not redrawn within 10 s"
                waits.append((ms / 1000, move["card"]))
            seconds = sorted(w for w, _ in waits)
            p95 = seconds[min(len(seconds) - 1, int(len(seconds) * 0.95))]
            cards = [w for w, card in waits if card]  # (in the order played)
            print(f"\nown redraw with computers at the table: {len(seconds)} presses "
                  f"({len(cards)} cards), p50 {seconds[len(seconds) // 2]:.2f} s, p95 "
                  f"{p95:.2f} s, max {seconds[-1]:.2f} s; cards, in the order played: "
                  + " ".join(f"{w:.2f}" for w in cards))
            assert len(cards) == 8, (waits, ui.errors)  # her eight cards, by clicking
            assert p95 <= OWN_REDRAW_P95, (waits, ui.errors)
            assert all(status == 200 and body["ok"] for status, body in ui.presses)
            assert not ui.errors, ui.errors
        finally:
            browser.close()


def test_a_browser_plays_alone_in_the_private_chat(sandbox: str, tmp_path: Path) -> None:
    """Bruno types commands in his private chat, each before the last is answered, then
    /nuova there: a table of his own against the computers, played by clicking."""
    sync_api = _require_browser()
    with sync_api.sync_playwright() as playwright:
        browser, ui = _open(sync_api, playwright, sandbox)
        try:
            page, private, expect = ui.page, ui.panel("private"), sync_api.expect
            page.select_option("#user", label="Bruno (it)")
            expect(private.locator(".title")).to_contain_text("Bruno")
            for command in ("/aiuto", "/regole", "/impostazioni"):
                ui.type("private", command)
            ui.answered("private", "comandi")
            ui.answered("private", "Regole della Briscola")
            ui.answered("private", "valgono dalla prossima partita")
            ui.type("private", "/nuova")
            lobby = ui.answered("private", "nuova partita")
            lobby.get_by_role("button", name="Computer facile").click()
            expect(lobby).to_contain_text("Computer 4")
            lobby.get_by_role("button", name="Inizia").click()
            ui.answered("private", "Le tue carte")

            ui.shot = tmp_path / "alone.png"
            ended = private.locator(".message", has_text="Fine della smazzata 1")
            clicks = ui.play("Bruno", ended, double_press_from=4)
            assert clicks >= 8, clicks  # his eight cards (and his passes) by clicking
            assert "Punti:" in ended.last.text_content()
            assert not ui.panel("group").locator(".message").count()  # nothing in the group
            page.reload()
            expect(private.locator(".title")).to_contain_text("Bruno")
            ui.type("private", "/statistiche")
            ui.answered("private", "Statistiche di Bruno")
            assert all(status == 200 and body["ok"] for status, body in ui.presses)
            assert not ui.errors, ui.errors
        finally:
            browser.close()
