"""Typed exceptions of the storage layer.

Every error raised by :mod:`storage` is a :class:`StorageError`; callers never need to
catch :mod:`sqlite3` exceptions.  Each error has a short, stable ``code`` string that is
safe to log, to match on and to map to a user-facing message.
"""

from __future__ import annotations

import sqlite3

__all__ = [
    "ActiveGameExists",
    "Conflict",
    "GameNotFound",
    "IntegrityViolation",
    "SchemaTooNew",
    "SeatTaken",
    "StaleVersion",
    "StatusConflict",
    "StorageError",
    "StorageUnavailable",
    "is_busy",
    "translate_postgres_error",
    "translate_sqlite_error",
    "unavailable_code",
]


class StorageError(Exception):
    """Base class of every storage error.  ``code`` is stable and machine readable."""

    code: str = "storage_error"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code


class StorageUnavailable(StorageError):
    """The database cannot be used right now (not a bug in the caller).

    ``code`` is one of:

    * ``"locked"`` – another process held the write lock longer than the busy timeout
      and the bounded retries;
    * ``"readonly"`` – the database file, its directory or the connection is read-only;
    * ``"disk_full"`` – no space left on the device (or the database hit its size limit);
    * ``"io_error"`` – an operating-system level I/O error;
    * ``"cannot_open"`` – the file (or its -wal/-shm companions) cannot be opened/created;
    * ``"permission_denied"`` – access denied by the OS;
    * ``"corrupt"`` – the file is not a database or is damaged;
    * ``"no_memory"`` – SQLite ran out of memory;
    * ``"closed"`` – the :class:`~storage.db.Database` was already closed;
    * ``"disconnected"`` – the connection to the database server was lost (PostgreSQL;
      the next transaction connects again).
    """

    code = "unavailable"


class SchemaTooNew(StorageError):
    """The database was written by a newer version of the code; refuse to touch it."""

    code = "schema_too_new"

    def __init__(self, db_version: int, code_version: int) -> None:
        super().__init__(
            f"database schema version {db_version} is newer than the latest version this "
            f"code knows ({code_version}); upgrade the bot or restore a matching backup"
        )
        self.db_version = db_version
        self.code_version = code_version


class IntegrityViolation(StorageError):
    """A constraint (unique key, foreign key, CHECK, NOT NULL) rejected a write."""

    code = "constraint"


class Conflict(StorageError):
    """Base class for "somebody else changed it first" errors: the write lost a race
    and nothing was written.  Re-read the state and decide again."""

    code = "conflict"


class StaleVersion(Conflict):
    """``record_action`` was given an ``expected_version`` that is not the current one
    (double click, or two concurrent writers)."""

    code = "stale_version"

    def __init__(self, game_id: int, expected_version: int, actual_version: int | None) -> None:
        super().__init__(
            f"game {game_id}: expected version {expected_version}, "
            f"current version is {actual_version}"
        )
        self.game_id = game_id
        self.expected_version = expected_version
        self.actual_version = actual_version


class StatusConflict(Conflict):
    """The game is not in the status the operation requires (e.g. joining a lobby that
    was just started, or acting in a game that was cancelled)."""

    code = "status_conflict"

    def __init__(self, game_id: int, expected: str | tuple[str, ...], actual: str | None) -> None:
        exp = expected if isinstance(expected, str) else "/".join(expected)
        super().__init__(f"game {game_id}: expected status {exp}, current status is {actual}")
        self.game_id = game_id
        self.expected = expected
        self.actual = actual


class ActiveGameExists(Conflict):
    """A chat + thread already has a game in ``lobby`` or ``playing`` status."""

    code = "active_game_exists"

    def __init__(self, chat_id: int, thread_id: int, game_id: int | None) -> None:
        super().__init__(
            f"chat {chat_id} thread {thread_id} already has an active game ({game_id})"
        )
        self.chat_id = chat_id
        self.thread_id = thread_id
        self.game_id = game_id


class SeatTaken(Conflict):
    """The seat number is occupied, or the user already sits at this table."""

    code = "seat_taken"

    def __init__(self, game_id: int, seat: int | None, user_id: int | None) -> None:
        super().__init__(f"game {game_id}: seat {seat} / user {user_id} already taken")
        self.game_id = game_id
        self.seat = seat
        self.user_id = user_id


class GameNotFound(StorageError):
    """No game with this id."""

    code = "game_not_found"

    def __init__(self, game_id: int) -> None:
        super().__init__(f"game {game_id} does not exist")
        self.game_id = game_id


# Primary SQLite result codes (https://sqlite.org/rescode.html) -> stable codes.
_UNAVAILABLE_CODES: dict[int, str] = {
    3: "permission_denied",  # SQLITE_PERM
    5: "locked",  # SQLITE_BUSY
    6: "locked",  # SQLITE_LOCKED
    7: "no_memory",  # SQLITE_NOMEM
    8: "readonly",  # SQLITE_READONLY
    10: "io_error",  # SQLITE_IOERR
    11: "corrupt",  # SQLITE_CORRUPT
    13: "disk_full",  # SQLITE_FULL
    14: "cannot_open",  # SQLITE_CANTOPEN
    23: "permission_denied",  # SQLITE_AUTH
    26: "corrupt",  # SQLITE_NOTADB
}

# Fallback for exceptions without ``sqlite_errorcode`` (e.g. raised by wrappers).
_UNAVAILABLE_MESSAGES: tuple[tuple[str, str], ...] = (
    ("database is locked", "locked"),
    ("database table is locked", "locked"),
    ("readonly database", "readonly"),
    ("database or disk is full", "disk_full"),
    ("disk i/o error", "io_error"),
    ("unable to open database", "cannot_open"),
    ("file is not a database", "corrupt"),
    ("malformed", "corrupt"),
)

_HINTS: dict[str, str] = {
    "locked": "another process kept the database write lock for too long",
    "readonly": "the database file or its directory is read-only",
    "disk_full": "no space left on the device holding the database",
    "io_error": "the operating system reported an I/O error",
    "cannot_open": "the database file (or its -wal/-shm files) cannot be opened or created",
    "permission_denied": "access to the database was denied",
    "corrupt": "the database file is damaged or not an SQLite database",
    "no_memory": "SQLite ran out of memory",
    "disconnected": "the connection to the database server was lost",
}


def unavailable_code(exc: BaseException) -> str | None:
    """Return the stable :class:`StorageUnavailable` code for an sqlite3 error, or None
    if the error is not an environmental one (syntax error, constraint, …)."""
    errcode = getattr(exc, "sqlite_errorcode", None)
    if isinstance(errcode, int):
        code = _UNAVAILABLE_CODES.get(errcode & 0xFF)
        if code is not None:
            return code
    msg = str(exc).lower()
    for needle, code in _UNAVAILABLE_MESSAGES:
        if needle in msg:
            return code
    return None


def is_busy(exc: BaseException) -> bool:
    """True if the error means "another connection holds the lock" (worth retrying)."""
    return unavailable_code(exc) == "locked"


def translate_sqlite_error(exc: sqlite3.Error, context: str = "") -> StorageError:
    """Map an :mod:`sqlite3` exception to the matching :class:`StorageError`.

    The original exception should be chained (``raise translate(e) from e``).
    """
    where = f" during {context}" if context else ""
    code = unavailable_code(exc)
    if code is not None:
        return StorageUnavailable(
            f"database unavailable ({code}){where}: {_HINTS[code]} [{exc}]", code=code
        )
    if isinstance(exc, sqlite3.IntegrityError):
        return IntegrityViolation(f"constraint violated{where}: {exc}")
    return StorageError(f"sqlite error{where}: {exc}", code="sqlite_error")


# PostgreSQL SQLSTATE classes / codes (https://www.postgresql.org/docs/current/errcodes-appendix.html)
_POSTGRES_CODES: tuple[tuple[str, str], ...] = (
    ("40P01", "locked"),  # deadlock_detected
    ("40001", "locked"),  # serialization_failure
    ("55P03", "locked"),  # lock_not_available (lock_timeout)
    ("53100", "disk_full"),  # disk_full
    ("53200", "no_memory"),  # out_of_memory
    ("25006", "readonly"),  # read_only_sql_transaction (e.g. a standby)
    ("42501", "permission_denied"),  # insufficient_privilege
    ("28", "permission_denied"),  # invalid authorization (class 28)
    ("08", "disconnected"),  # connection exceptions (class 08)
    ("57P", "disconnected"),  # operator intervention: shutdown, crash (57P01…57P03)
    ("58", "io_error"),  # system error (class 58)
    ("53", "cannot_open"),  # insufficient resources (too many connections…)
    ("XX001", "corrupt"),  # data_corrupted
    ("XX002", "corrupt"),  # index_corrupted
)


def translate_postgres_error(exc: BaseException, context: str = "") -> StorageError:
    """Map an asyncpg exception (or a lost connection's ``OSError``) to the matching
    :class:`StorageError`.  Chain the original (``raise … from e``)."""
    where = f" during {context}" if context else ""
    sqlstate = getattr(exc, "sqlstate", None)
    if isinstance(sqlstate, str):
        if sqlstate.startswith("23"):  # integrity_constraint_violation
            return IntegrityViolation(f"constraint violated{where}: {exc}")
        for prefix, code in _POSTGRES_CODES:
            if sqlstate.startswith(prefix):
                return StorageUnavailable(
                    f"database unavailable ({code}){where}: {_HINTS[code]} [{exc}]", code=code
                )
        return StorageError(f"postgres error {sqlstate}{where}: {exc}", code="postgres_error")
    # asyncpg.InterfaceError (connection closed), ConnectionError, OSError
    return StorageUnavailable(
        f"database unavailable (disconnected){where}: {_HINTS['disconnected']} [{exc}]",
        code="disconnected",
    )
