"""Errors of the fake Telegram server, worded like the real Bot API.

`ApiError` is what API method implementations raise; the HTTP layer turns it into
``{"ok": false, "error_code": ..., "description": ..., "parameters": ...}`` so that
python-telegram-bot raises its real exceptions (BadRequest, Forbidden, RetryAfter, ...).

`FakeClientError` is raised on the *test* side when a test asks a simulated user to do
something a real Telegram client could not do (press a button that does not exist, write
in a group the user is not a member of, ...).
"""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    """An error answer of the Bot API."""

    def __init__(self, code: int, description: str, parameters: dict[str, Any] | None = None):
        super().__init__(description)
        self.code = code
        self.description = description
        self.parameters = parameters

    def payload(self) -> dict[str, Any]:
        """The JSON body Telegram would send."""
        body: dict[str, Any] = {
            "ok": False,
            "error_code": self.code,
            "description": self.description,
        }
        if self.parameters:
            body["parameters"] = self.parameters
        return body

    def __repr__(self) -> str:
        return f"ApiError({self.code}, {self.description!r}, {self.parameters!r})"


class FakeClientError(AssertionError):
    """A test asked a simulated user for something a real client cannot do."""


class WaitTimeout(AssertionError):
    """A waiting helper timed out; the message contains a dump of the fake's state."""


# Descriptions used in several places (and handy for assertions in tests).
NOT_MODIFIED = (
    "Bad Request: message is not modified: specified new message content and reply markup "
    "are exactly the same as a current content and reply markup of the message"
)
QUERY_TOO_OLD = "Bad Request: query is too old and response timeout expired or query ID is invalid"
CONFLICT_GET_UPDATES = (
    "Conflict: terminated by other getUpdates request; "
    "make sure that only one bot instance is running"
)
CONFLICT_SET_WEBHOOK = "Conflict: terminated by setWebhook request"
CONFLICT_WEBHOOK = (
    "Conflict: can't use getUpdates method while webhook is active; "
    "use deleteWebhook to delete the webhook first"
)
CANT_INITIATE = "Forbidden: bot can't initiate conversation with a user"
BLOCKED = "Forbidden: bot was blocked by the user"
MIGRATED = "Bad Request: group chat was upgraded to a supergroup chat"
#: A message to a closed forum topic, from a bot that may not manage topics.
TOPIC_CLOSED = "Bad Request: TOPIC_CLOSED"


def bad_request(detail: str) -> ApiError:
    """400 ``Bad Request: <detail>``."""
    return ApiError(400, f"Bad Request: {detail}")


def forbidden(detail: str) -> ApiError:
    """403 ``Forbidden: <detail>``."""
    return ApiError(403, f"Forbidden: {detail}")


def too_many_requests(retry_after: int) -> ApiError:
    """429 with ``parameters.retry_after`` (PTB raises RetryAfter)."""
    return ApiError(
        429, f"Too Many Requests: retry after {retry_after}", {"retry_after": retry_after}
    )


def chat_migrated(new_chat_id: int) -> ApiError:
    """400 with ``parameters.migrate_to_chat_id`` (PTB raises ChatMigrated)."""
    return ApiError(400, MIGRATED, {"migrate_to_chat_id": new_chat_id})


def not_found() -> ApiError:
    """404 for unknown methods and malformed tokens."""
    return ApiError(404, "Not Found")


def unauthorized() -> ApiError:
    """401 for a well-formed but wrong token."""
    return ApiError(401, "Unauthorized")
