"""Try the bot as a service against the fake Bot API (run by ``scripts/container-check``).

``--image NAME``: the container image (``docker run --network host``, the database on a
named volume; ``--engine podman`` runs it with podman instead, whose health checks are
run on demand: ``podman healthcheck run``); ``--local``: the installed ``briscola-bot``
command of this venv, for trying these same checks where there is no Docker. Checks, in
order: the bot starts and answers ``/start`` in Italian and English; it runs as a
non-root user with its database on the volume; its health check passes; a stop (``docker
stop``: SIGTERM, SIGKILL after 10 s) ends it with status 0 in time; a new container
finds the database on the volume. Prints one line per check and exits 1 if any failed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.sim import BotProcess  # noqa: E402
from sandbox.fakeapi import FakeTelegram  # noqa: E402

#: docker stop's default grace period before SIGKILL.
GRACE = 10.0
ENV_FOR_CONTAINER = (
    "BOT_TOKEN", "TELEGRAM_BASE_URL", "TELEGRAM_BASE_FILE_URL", "DATABASE_URL",
    "TURN_TIMEOUT_SECONDS", "COMPUTER_LEVEL", "COMPUTER_DELAY_SECONDS", "DEFAULT_LANGUAGE",
    "LOG_LEVEL",
)  # fmt: skip


class Checks:
    def __init__(self) -> None:
        self.failed = 0

    def report(self, ok: bool, what: str, detail: str = "") -> bool:
        self.failed += not ok
        print(f"{'PASS' if ok else 'FAIL'}  {what}{f' ({detail})' if detail else ''}", flush=True)
        return ok


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, check=False)


def health(engine: str, name: str) -> str:
    """The container's health status: Docker's, or podman's check run now (podman runs
    them from systemd timers, which a machine without systemd does not have)."""
    if engine == "podman":
        done = run("podman", "healthcheck", "run", name)
        return "healthy" if done.returncode == 0 else (done.stdout + done.stderr).strip()
    return run("docker", "inspect", "--format", "{{.State.Health.Status}}", name).stdout.strip()


async def check(image: str | None, engine: str = "docker") -> int:
    checks = Checks()
    work = Path(tempfile.mkdtemp(prefix="briscola-container-check-"))
    name = f"briscola-check-{os.getpid()}"
    volume = f"{name}-data"
    async with FakeTelegram() as tg:
        if image is not None:
            command = [
                engine, "run", "--rm", "--name", name, "--network", "host",
                "--volume", f"{volume}:/data", "--health-interval", "2s",
                "--health-start-period", "1s",
                *(arg for key in ENV_FOR_CONTAINER for arg in ("--env", key)), image,
            ]  # fmt: skip
            env = {"DATABASE_URL": "sqlite:////data/briscola.db"}
        else:
            command = [str(Path(sys.executable).parent / "briscola-bot")]
            env = {"HEALTH_FILE": str(work / "alive")}
        bot = BotProcess(tg, work, command=command, env=env)
        try:
            await bot.start(timeout=60)
            checks.report(True, "the bot starts and polls the fake Bot API")
            anna = tg.add_user("Anna", language_code="it")
            bob = tg.add_user("Bob", language_code="en")
            await anna.start_bot()
            await bob.start_bot()
            for user, text in ((anna, "Ciao! Sono il bot della"), (bob, "Hi! I am the")):
                try:
                    await tg.wait_for_message(user, text, timeout=10)
                    checks.report(True, f"/start answered in {user.language_code}")
                except Exception as exc:
                    checks.report(False, f"/start answered in {user.language_code}", repr(exc))
            if image is not None:
                uid = run(engine, "exec", name, "id", "-u").stdout.strip()
                checks.report(uid not in ("", "0"), "runs as a non-root user", f"uid {uid}")
                listing = run(engine, "exec", name, "ls", "/data").stdout.split()
                checks.report("briscola.db" in listing, "the database is on the /data volume")
                status = ""
                for _ in range(30):
                    status = health(engine, name)
                    if status == "healthy":
                        break
                    await asyncio.sleep(1)
                checks.report(status == "healthy", "HEALTHCHECK reports healthy", status)
            else:
                await asyncio.sleep(1.5)  # the first heartbeat
                code = subprocess.run(
                    [sys.executable, "-m", "bot.health"], env=bot.environment(), cwd=work,
                    check=False,
                ).returncode  # fmt: skip
                checks.report(code == 0, "the health check passes", f"exit {code}")

            started = time.monotonic()
            assert bot.proc is not None
            if image is not None:
                stopper = await asyncio.create_subprocess_exec(
                    engine, "stop", "--time", str(int(GRACE)), name,
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                )  # fmt: skip
                await stopper.wait()
            else:
                bot.proc.send_signal(signal.SIGTERM)
            code = await asyncio.wait_for(bot.proc.wait(), GRACE + 5)
            took = time.monotonic() - started
            checks.report(
                code == 0 and took < GRACE, "a stop (SIGTERM) ends it cleanly in time",
                f"exit {code} after {took:.1f} s",
            )  # fmt: skip
            if image is not None:
                await bot.start(timeout=60)
                listing = run(engine, "exec", name, "ls", "/data").stdout.split()
                checks.report("briscola.db" in listing, "a new container finds the database")
                await bot.stop()
        except Exception as exc:
            checks.report(False, "the check ran to the end", repr(exc))
            print(bot.log_tail(), file=sys.stderr)
        finally:
            await bot.kill()
            if image is not None:
                run(engine, "rm", "--force", name)
                run(engine, "volume", "rm", volume)
            shutil.rmtree(work, ignore_errors=True)
    print(f"{checks.failed} failed")
    return 1 if checks.failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--image", help="the container image to try")
    where.add_argument("--local", action="store_true", help="this venv's briscola-bot")
    parser.add_argument("--engine", choices=("docker", "podman"), default="docker",
                        help="what runs the image (default: docker)")
    args = parser.parse_args()
    return asyncio.run(check(None if args.local else args.image, args.engine))


if __name__ == "__main__":
    sys.exit(main())
