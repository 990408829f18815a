"""Opening a database: the factory that picks the backend from the URL and brings the
schema up to date.

It sits above the modules it combines: :mod:`storage.db` (the interface),
:mod:`storage.sqlite` and :mod:`storage.postgres` (the backends, below the interface's
users but above the interface itself) and :mod:`storage.migrations` (which runs on the
interface).  None of them imports this module, so the imports of ``storage`` run one
way::

    errors, models  <-  db  <-  sqlite, postgres, migrations, repo  <-  connect  <-  copy
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from . import migrations
from .db import (
    DEFAULT_BUSY_TIMEOUT_MS,
    DEFAULT_LOCK_RETRIES,
    DEFAULT_RETRY_DELAY,
    Database,
    is_postgres_url,
    parse_database_url,
)
from .postgres import PostgresDatabase
from .sqlite import SQLiteDatabase

__all__ = ["open_database"]


async def open_database(
    url_or_path: str | os.PathLike[str],
    *,
    busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
    lock_retries: int = DEFAULT_LOCK_RETRIES,
    retry_delay: float = DEFAULT_RETRY_DELAY,
    migrate: bool = True,
    check_writable: bool | None = None,
    clock: Callable[[], float] = time.time,
) -> Database:
    """Open (creating if needed) a database, configure it and bring the schema up to date.

    :param url_or_path: ``postgresql://user:password@host:port/dbname`` (also
        ``postgres://``; a unix socket directory as ``?host=/run/postgresql``), or for
        SQLite ``sqlite:///relative.db``, ``sqlite:////abs/path.db``, a plain path, or
        ``:memory:`` / ``sqlite://`` for an in-memory database.
    :param busy_timeout_ms: how long a statement waits for another connection's lock.
    :param lock_retries: extra attempts of BEGIN/COMMIT/autocommit statements that still
        failed with a lock error after the busy timeout.
    :param retry_delay: first backoff delay in seconds (doubled on each retry).
    :param migrate: apply pending migrations (``False`` only checks the version is not
        too new; used by tests and tools).
    :param check_writable: fail fast with ``StorageUnavailable(code="readonly")`` if the
        database cannot be written.  Default: yes, unless the URL asks for a read-only
        connection (SQLite's ``?mode=ro``).
    :raises SchemaTooNew: the database was written by a newer version of the code.
    :raises StorageUnavailable: the database cannot be opened / written (``.code``).
    """
    options: dict[str, Any] = {
        "busy_timeout_ms": busy_timeout_ms,
        "lock_retries": lock_retries,
        "retry_delay": retry_delay,
        "clock": clock,
    }
    db: Database
    if is_postgres_url(url_or_path):
        db = await PostgresDatabase.connect(os.fspath(url_or_path), **options)
    else:
        db = await SQLiteDatabase.connect(parse_database_url(url_or_path), **options)
    try:
        if migrate:
            await migrations.upgrade(db)
        else:
            await migrations.check_version(db)
        await db._after_migrations(check_writable)
    except BaseException:
        await db.close()
        raise
    return db
