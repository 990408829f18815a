"""Running as a service: the webhook settings and the bounded stop (bot/__main__.py)."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from bot.__main__ import FORCED_EXIT
from bot.config import ConfigError, load_settings

TOKEN = "123456:ABCdef"


def settings(**values: object) -> object:
    return load_settings(_env_file=None, bot_token=TOKEN, **values)


def test_polling_is_the_default_and_webhook_mode_needs_a_valid_secret() -> None:
    plain = settings()
    assert plain.webhook_url is None  # type: ignore[attr-defined]
    hook = settings(webhook_url="https://bot.example.org/briscola", webhook_secret="a-B_9")
    assert hook.webhook_secret.get_secret_value() == "a-B_9"  # type: ignore[attr-defined]
    assert (hook.webhook_listen, hook.webhook_port) == ("127.0.0.1", 8443)  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match="WEBHOOK_SECRET is required with WEBHOOK_URL"):
        settings(webhook_url="https://bot.example.org/briscola")
    with pytest.raises(ConfigError, match="WEBHOOK_SECRET"):
        settings(webhook_url="https://bot.example.org/x", webhook_secret="not:allowed")
    with pytest.raises(ConfigError, match="WEBHOOK_SECRET"):
        settings(webhook_url="https://bot.example.org/x", webhook_secret="x" * 257)
    with pytest.raises(ConfigError, match="WEBHOOK_URL"):
        settings(webhook_url="bot.example.org", webhook_secret="abc")
    with pytest.raises(ConfigError, match="WEBHOOK_PORT"):
        settings(webhook_port=70000)
    assert settings(webhook_url=" ", webhook_secret="").webhook_url is None  # type: ignore[attr-defined]


GUARDED = textwrap.dedent("""
    import asyncio
    from bot.__main__ import StopGuard

    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    data = {}
    StopGuard(0.6, data).install(loop)
    loop.call_soon(lambda: print("ready", flush=True))
    try:
        loop.run_forever()
    except SystemExit:
        print("stopping", "stop_by" in data, flush=True)
        loop.run_until_complete(asyncio.sleep(30))  # a stop that hangs
        print("not reached", flush=True)
""")


def test_a_hanging_stop_is_cut_short_and_a_second_signal_does_not_interrupt_it(
    tmp_path: Path,
) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", GUARDED], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, cwd=Path(__file__).resolve().parent.parent,
    )  # fmt: skip
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    assert proc.stdout.readline().strip() == "stopping True"
    stopping = time.monotonic()  # (on a loaded machine the signal itself can take a while)
    proc.send_signal(signal.SIGTERM)  # logged, no second SystemExit
    out, err = proc.communicate(timeout=10)
    ended = time.monotonic()
    assert proc.returncode == FORCED_EXIT, err
    # the stop that hangs (30 s) is cut at the guard's 0.6 s after the first signal
    assert ended - started >= 0.5
    assert ended - stopping < 3.0
    assert "not reached" not in out
    assert "the graceful stop took more than 1 s: exiting now" in err
