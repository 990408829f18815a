"""What each message of the bot shows, as Telegram last accepted it (issue 35).

Per message, a digest of its text and one of its keyboard, recorded right after each
successful send or edit: in memory at once, and in the database (table
``message_digests``, :mod:`storage.inbox`) before the outbox's next call to that chat.
A redraw that would show the same is skipped, also after a restart or a takeover: the
process before wrote what it delivered, whatever happened after. Only a call whose answer
came and whose digest was not yet written when the process died (a SIGKILL between the
two, a few milliseconds) can be made once more: Telegram then answers "message is not
modified", which is taken as accepted.
"""

from __future__ import annotations

import hashlib
import logging

from storage import Database, StorageUnavailable, inbox

log = logging.getLogger(__name__)

#: Digests not written for this long are deleted at start (messages of games long over;
#: a redraw of one then edits it once more at worst).
KEEP_SECONDS = 8 * 86400

Key = tuple[int, int]  # (chat id, message id)


def digest(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=12).hexdigest()


class Digests:
    def __init__(self) -> None:
        self._shown: dict[Key, tuple[str, str]] = {}
        self.db: Database | None = None
        #: Writes refused (not fenced): counted, logged once in a while.
        self.unsaved = 0

    async def open(self, db: Database) -> None:
        """Read what the processes before recorded (and drop the old rows)."""
        self.db = db
        try:
            await inbox.prune_digests(db, db.now() - KEEP_SECONDS)
            shown = await inbox.load_digests(db, db.now() - KEEP_SECONDS)
        except StorageUnavailable as exc:
            log.warning("message digests not read (%s): a redraw may repeat a message", exc)
            return
        for key, value in shown.items():
            self._shown.setdefault(key, value)

    def shows(self, key: Key, text: str, kb: str) -> bool:
        """Whether the message shows this text and keyboard already."""
        return self._shown.get(key) == (digest(text), digest(kb))

    def same_text(self, key: Key, text: str) -> bool:
        """Whether the message shows this text already (only its keyboard may differ)."""
        shown = self._shown.get(key)
        return shown is not None and shown[0] == digest(text)

    def known(self, key: Key) -> bool:
        return key in self._shown

    def note(self, key: Key, text: str, kb: str) -> tuple[str, str]:
        """Record in memory only (a message gone, or not editable: never edited again)."""
        value = self._shown[key] = (digest(text), digest(kb))
        return value

    async def accepted(self, key: Key, text: str, kb: str) -> None:
        """Telegram accepted this content for the message: record it (memory, then the
        database)."""
        text_digest, kb_digest = self.note(key, text, kb)
        if self.db is None:
            return
        try:
            await self.db.batched(  # (with the other writes waiting: one commit)
                lambda tx: inbox.save_digest(tx, key[0], key[1], text_digest, kb_digest)
            )
        except StorageUnavailable as exc:
            if exc.code in ("fenced", "closed"):
                return  # this instance no longer acts
            self.unsaved += 1
            if self.unsaved == 1 or self.unsaved % 100 == 0:
                log.warning("digest of %s/%s not saved (%s; %d so far): a restart may "
                            "redraw it once", key[0], key[1], exc, self.unsaved)

    def forget(self, key: Key) -> None:
        self._shown.pop(key, None)
