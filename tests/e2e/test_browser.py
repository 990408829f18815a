"""A real browser plays the sandbox: Debian's Chromium, driven by Playwright, opens the page
of ``python -m sandbox`` (the real bot in its own process against the local fake Telegram),
creates a table, fills it with computers and plays a whole smazzata by clicking the page's
buttons only; it saves a screenshot mid-smazzata (``SANDBOX_SCREENSHOT=path`` to keep it:
README's docs/sandbox.png is one).

Needs the ``chromium`` apt package and Playwright from PyPI (``.ci/run`` installs both; the
browser Playwright would download is not used). Where they are missing the test is skipped
with the reason — except under CI, where it fails, since CI installs them.
"""

from __future__ import annotations

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


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[str]:
    """``python -m sandbox`` on a free port (its own directory: no developer's .env); the
    computers move without the human-friendly pause, no turn timer."""
    env = {k: v for k, v in os.environ.items() if k != "BOT_TOKEN"}
    env.update(COMPUTER_DELAY_SECONDS="0.05", TURN_TIMEOUT_SECONDS="0", LOG_LEVEL="WARNING",
               PYTHONUNBUFFERED="1")
    process = subprocess.Popen(
        [sys.executable, "-m", "sandbox", "--port", "0"],
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


#: Decides the next click from what the page shows: the callback data and the panel.
NEXT_CLICK = """(me) => {
  const group = document.querySelector('section[data-type="group"]');
  const mine = document.querySelector('section[data-type="private"]');
  const withButtons = (panel) => [...panel.querySelectorAll('.message')]
      .filter((m) => m.querySelector('button[data-callback^="a:"]'));
  const table = withButtons(group).pop();
  if (table) {
    const pass = [...table.querySelectorAll('button[data-callback$=":P"]')][0];
    if (pass && table.textContent.includes('Tocca a ' + me)) {
      const call = table.querySelector('button[data-callback*=":r"]');
      const bid = document.body.dataset.bid ? null : call;
      document.body.dataset.bid = "1";
      return {panel: 'group', data: (bid || pass).dataset.callback};
    }
  }
  const hand = withButtons(mine).pop();
  if (hand && hand.textContent.includes('Tocca a te')) {
    const card = [...hand.querySelectorAll('button[data-callback^="a:"]')]
        .find((b) => !b.textContent.startsWith('🚫'));
    if (card) return {panel: 'private', data: card.dataset.callback};
  }
  return null;
}"""


def start_table(page: Any, url: str) -> Any:
    """Open the sandbox's page as Anna: a new table in the group, Anna and four computers,
    started by clicking the lobby's buttons. Returns the group's panel."""
    page.goto(url)
    group = page.locator('section[data-type="group"]')
    group.locator(".text").fill("/nuova")
    group.locator(".composer button").click()
    lobby = group.locator(".message", has_text="Briscola chiamata").last
    lobby.get_by_role("button", name="Entra").click()
    page.wait_for_function(
        "() => document.querySelector('section[data-type=\"group\"]')"
        ".textContent.includes('1. Anna')")
    for _ in range(4):
        lobby.get_by_role("button", name="Computer").click()
        page.wait_for_timeout(150)
    page.get_by_text("Tavolo completo").wait_for()
    lobby.get_by_role("button", name="Inizia").click()
    return group


def test_a_browser_plays_a_smazzata_in_the_sandbox(sandbox: str, tmp_path: Path) -> None:
    sync_api = _require_browser()
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            group = start_table(page, sandbox)

            shot = Path(os.environ.get("SANDBOX_SCREENSHOT", tmp_path / "sandbox.png"))
            deadline = time.monotonic() + SMAZZATA_SECONDS
            clicks = 0
            ended = group.locator(".message", has_text="Fine della smazzata 1")
            while not ended.count():
                assert time.monotonic() < deadline, "the smazzata did not end in time"
                move = page.evaluate(NEXT_CLICK, "Anna")
                if move is None:
                    page.wait_for_timeout(50)
                    continue
                selector = f'section[data-type="{move["panel"]}"] ' \
                           f'button[data-callback="{move["data"]}"]'
                page.locator(selector).last.click(timeout=5000)
                clicks += 1
                if clicks == 6:  # mid-smazzata: the table, the hand, the buttons
                    page.screenshot(path=str(shot))
                page.wait_for_function(  # the move is applied: the button's version is gone
                    f"() => !document.querySelector('{selector}')", timeout=10000)
            assert clicks >= 8  # Anna played her eight cards (and bid) by clicking
            assert "Punti:" in ended.last.text_content()
            page.screenshot(path=str(tmp_path / "end.png"))
            assert shot.stat().st_size > 10_000

            # act as another user: their own private chat, the same group
            page.select_option("#user", label="Bruno (it)")
            private = page.locator('section[data-type="private"]')
            sync_api.expect(private.locator(".title")).to_contain_text("Bruno")
            sync_api.expect(private).not_to_contain_text("Le tue carte")
            sync_api.expect(group).to_contain_text("Fine della smazzata 1")
            # and a new user, who joins the group and is switched to
            page.fill("#new-name", "Zoe")
            page.click("#add-user button")
            sync_api.expect(private.locator(".title")).to_contain_text("Zoe")
            sync_api.expect(group).to_contain_text("Zoe joined the group")
        finally:
            browser.close()
