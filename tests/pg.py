"""A throwaway PostgreSQL cluster for the tests: ``initdb`` into a temporary directory,
``pg_ctl start`` on a unix socket in that directory (no TCP port to collide on), one
database per test, ``pg_ctl stop`` and removal at the end.

``initdb`` refuses to run as root, and CI runs as root: then the server runs as the
``postgres`` user (``runuser -u postgres -- …``) in a directory that user owns.  The
binaries are looked for in ``$PG_BINDIR``, then ``/usr/lib/postgresql/<newest>/bin``,
then on ``PATH``; :func:`unavailable` says why a cluster cannot be started (the tests
then skip with that reason).
"""

from __future__ import annotations

import itertools
import os
import pwd
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

#: The server's settings for tests: no durability (the data is thrown away), small.
_SERVER_OPTIONS = (
    "-c listen_addresses='' -c fsync=off -c synchronous_commit=off "
    "-c full_page_writes=off -c shared_buffers=16MB -c max_connections=40"
)


def bindir() -> Path | None:
    """The directory of ``initdb`` and ``pg_ctl``, or None."""
    candidates = []
    if os.environ.get("PG_BINDIR"):
        candidates.append(Path(os.environ["PG_BINDIR"]))
    versions = sorted(
        Path("/usr/lib/postgresql").glob("*/bin"),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
        reverse=True,
    )
    candidates += versions
    on_path = shutil.which("pg_ctl")
    if on_path:
        candidates.append(Path(on_path).parent)
    return next(
        (d for d in candidates if (d / "initdb").is_file() and (d / "pg_ctl").is_file()), None
    )


def unavailable() -> str | None:
    """Why no cluster can be started here, or None if one can."""
    if bindir() is None:
        return "no PostgreSQL binaries (initdb, pg_ctl): install postgresql or set PG_BINDIR"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no 'postgres' user to run the server as"
        if shutil.which("runuser") is None:
            return "running as root and there is no runuser to run the server as postgres"
    return None


class PostgresCluster:
    """A running throwaway cluster; :meth:`new_database` gives each test its own."""

    def __init__(self) -> None:
        found = bindir()
        assert found is not None, unavailable()
        self.bindir = found
        self.root = Path(tempfile.mkdtemp(prefix="briscola-pg-"))
        self.data = self.root / "data"
        self._as_postgres = os.geteuid() == 0
        if self._as_postgres:  # the server's user must own its directories
            entry = pwd.getpwnam("postgres")
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        self.root.chmod(0o755)
        self._names = itertools.count(1)
        self._run(
            "initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres",
            "--no-sync", "-E", "UTF8", "--locale=C",
        )
        self._run(
            "pg_ctl", "-D", str(self.data), "-l", str(self.root / "server.log"), "-w",
            "-o", f"-k {self.root} {_SERVER_OPTIONS}", "start",
        )
        # if this process dies without stop() (killed test run), the server goes too
        stop = " ".join(shlex.quote(a) for a in self._command(
            "pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop"
        ))
        self._watchdog = subprocess.Popen(
            ["sh", "-c", f"while kill -0 {os.getpid()} 2>/dev/null; do sleep 1; done; "
             f"{stop}; rm -rf {shlex.quote(str(self.root))}"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,
        )

    def _command(self, program: str, *args: str) -> list[str]:
        command = [str(self.bindir / program), *args]
        if self._as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        return command

    def _run(self, program: str, *args: str) -> None:
        command = self._command(program, *args)
        result = subprocess.run(command, capture_output=True, text=True, cwd=self.root)
        if result.returncode != 0:
            log_file = self.root / "server.log"
            log = log_file.read_text(errors="replace") if log_file.exists() else ""
            raise RuntimeError(
                f"{program} failed ({result.returncode}): {result.stderr}{result.stdout}{log}"
            )

    def url(self, database: str) -> str:
        return f"postgresql://postgres@/{database}?host={self.root}"

    def sql(self, statement: str) -> None:
        """Run one statement on the maintenance database, as the superuser."""
        subprocess.run(
            [str(self.bindir / "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1",
             "-h", str(self.root), "-U", "postgres", "-d", "postgres", "-c", statement],
            check=True, capture_output=True,
        )

    def new_database(self) -> str:
        """Create an empty database; return its URL."""
        name = f"test_{os.getpid()}_{next(self._names)}"
        self.sql(f"CREATE DATABASE {name}")
        return self.url(name)

    def drop_database(self, url: str) -> None:
        name = url.partition("@/")[2].partition("?")[0]
        self.sql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def stop(self) -> None:
        self._watchdog.kill()
        self._watchdog.wait()
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
