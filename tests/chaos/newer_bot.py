"""``python -m tests.chaos.newer_bot``: the bot (``python -m bot``) as its next release
would be, for the upgrade tests only: the same code with one more migration at the end
of ``storage.migrations.MIGRATIONS`` (a table ``upgrade_probe`` with one row), so that
the schema it migrates to is newer than the one ``python -m bot`` knows.

Why a module rather than an environment switch in the bot: nothing in the shipped code
knows about it; the migrations list is extended exactly as a release appends to it, and
``LATEST_VERSION`` follows, as it does in the module. With ``KILL_MIGRATION_MARK`` set to
a path that does not exist yet, the new migration creates its table, then the process
kills itself (SIGKILL) before the migration's transaction commits, leaving that mark:
a migration killed halfway.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from bot.__main__ import main
from storage import Transaction, migrations


async def upgrade_probe(tx: Transaction) -> None:
    """The next release's migration (tests only): a table with one row."""
    await tx.execute("CREATE TABLE upgrade_probe (id INTEGER PRIMARY KEY, note TEXT NOT NULL)")
    mark = os.environ.get("KILL_MIGRATION_MARK")
    if mark and not Path(mark).exists():
        Path(mark).write_text("killed in the migration\n")
        os.kill(os.getpid(), signal.SIGKILL)
    await tx.execute("INSERT INTO upgrade_probe (id, note) VALUES (1, 'migrated')")


migrations.MIGRATIONS.append(upgrade_probe)
migrations.LATEST_VERSION = len(migrations.MIGRATIONS)

if __name__ == "__main__":
    sys.exit(main())
