"""The installed package: build the wheel, install it into a fresh virtualenv outside the
source tree and run its ``briscola-bot`` command against the fake Bot API until it answers
``/start`` in Italian and in English (the translations travel inside the wheel), with the
container's health check (``python -m bot.health``) passing while it runs.

Offline: the wheel (pure Python: see :func:`build_wheel`) is built without build
isolation (setuptools comes from the test venv) and installed with ``--no-deps
--no-index``; the fresh venv sees the test venv's installed dependencies through a
``.pth`` line (which adds that directory to ``sys.path`` without running its own ``.pth``
files, so the editable install of the source tree stays out of sight).
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import time
import zipfile
from pathlib import Path

import pytest

from bench.sim import BotProcess
from sandbox.fakeapi import FakeTelegram

ROOT = Path(__file__).resolve().parent.parent
PROJECT_FILES = ("pyproject.toml", "setup.py", "README.md")
PROJECT_DIRS = ("bot", "game", "storage", "sandbox", "locales")


def build_wheel(tmp_path: Path) -> Path:
    """The wheel of a copy of the project's files (no caches, no build/ left in the tree)."""
    src = tmp_path / "src"
    src.mkdir()
    for name in PROJECT_FILES:
        shutil.copy2(ROOT / name, src / name)
    for name in PROJECT_DIRS:
        shutil.copytree(
            ROOT / name, src / name, symlinks=True,
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
        )  # fmt: skip
    dist = tmp_path / "dist"
    # pure Python (setup.py's switch): compiling the hot loop with mypyc takes a minute of
    # CPU and is not what is checked here; the compiled wheel is built and run by the
    # container check (scripts/container-check, in .ci/run), and the compiled modules are
    # checked against their source by tests/test_players_compiled.py
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--verbose", "--no-deps", "--no-index",
         "--no-build-isolation", "--wheel-dir", str(dist), str(src)],
        check=True, cwd=tmp_path, capture_output=True, text=True,
        env={**os.environ, "BRISCOLA_PURE_PYTHON": "1"},
    )  # fmt: skip
    # the build warns about nothing (a deprecated `project.license` table did, every time)
    warnings = re.findall(r"\w+Warning: .*", build.stdout + build.stderr)
    assert not warnings, warnings
    (wheel,) = dist.glob("briscola_chiamata-*.whl")
    return wheel


def fresh_venv(tmp_path: Path, wheel: Path) -> Path:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    (Path(site) / "test_venv_dependencies.pth").write_text(sysconfig.get_paths()["purelib"])
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
         "--no-deps", "--no-index", str(wheel)],
        check=True, cwd=tmp_path,
    )  # fmt: skip
    return venv


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("wheel"))


def test_wheel_carries_every_package_and_the_catalogs(wheel: Path) -> None:
    archive = zipfile.ZipFile(wheel)
    names = set(archive.namelist())
    for package in ("bot", "game", "storage", "sandbox", "sandbox/fakeapi"):
        assert f"{package}/__init__.py" in names, package
    for lang in ("it", "en"):
        assert f"bot/locales/{lang}/LC_MESSAGES/messages.po" in names
    # the Mini App's page and card pictures, with their provenance (bot/webapp/static/)
    for name in ("index.html", "app.js", "style.css", "stand-in.js", "cards/PROVENANCE.md",
                 "cards/back.webp", "cards/napoletane/Ad.webp", "cards/francesi/Rb.webp"):
        assert f"bot/webapp/static/{name}" in names, name
    assert sum(n.startswith("bot/webapp/static/cards/") and n.endswith(".webp")
               for n in names) == 4 * 40 + 1
    # the network player's weights (game/players/net.py reads them from the package)
    assert "game/players/net_weights.npz" in names
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    text = archive.read(entry_points).decode()
    assert "briscola-bot = bot.__main__:main" in text
    metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
    assert "License-Expression: MIT" in archive.read(metadata).decode().splitlines()


async def test_installed_bot_answers_start_in_italian_and_english(
    tmp_path: Path, wheel: Path
) -> None:
    venv = fresh_venv(tmp_path, wheel)
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import bot; print(bot.__file__)"],
        check=True, capture_output=True, text=True, cwd=tmp_path,
    ).stdout  # fmt: skip
    assert where.startswith(str(venv)), where  # the installed copy, not the source tree

    alive = tmp_path / "alive"
    async with FakeTelegram() as tg:
        bot = BotProcess(
            tg, tmp_path / "run", command=[str(venv / "bin" / "briscola-bot")],
            env={"PYTHONPATH": "", "HEALTH_FILE": str(alive)},  # nothing from the source tree
        )  # fmt: skip
        await bot.start()
        try:
            anna = tg.add_user("Anna", language_code="it")
            bob = tg.add_user("Bob", language_code="en")
            await anna.start_bot()
            await bob.start_bot()
            await tg.wait_for_message(anna, "Ciao! Sono il bot della")
            await tg.wait_for_message(bob, "Hi! I am the")
            # the container's HEALTHCHECK: fresh while the bot runs, stale after
            for _ in range(50):
                if alive.exists():
                    break
                await asyncio.sleep(0.1)
            assert health(venv, bot) == 0
            assert await bot.stop() == 0
            os.utime(alive, (time.time() - 60, time.time() - 60))
            assert health(venv, bot) == 1
        finally:
            await bot.kill()
        assert bot.problems() == [], bot.log_tail()


def health(venv: Path, bot: BotProcess) -> int:
    """``python -m bot.health`` of the installed package, in the bot's environment."""
    return subprocess.run(
        [str(venv / "bin" / "python"), "-m", "bot.health"], env=bot.environment(),
        cwd=bot.workdir, capture_output=True,
    ).returncode  # fmt: skip
