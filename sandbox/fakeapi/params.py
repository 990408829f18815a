"""Decoding of Bot API request parameters.

PTB 22 posts ``application/x-www-form-urlencoded`` (or ``multipart/form-data`` when uploading)
where every value is a string: plain strings as-is, numbers as digits, booleans as
``true``/``false`` and nested objects (``reply_markup``, ``entities``, ``scope``, ...) as JSON
text.  Other clients post ``application/json`` with typed values; query-string parameters
are accepted too.  `Params` coerces lazily, per the type the method implementation asks for,
the way the real Bot API server does.
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from .errors import ApiError, bad_request

MAX_BODY = 50 * 1024 * 1024


class UploadedFile:
    """A file part of a multipart request."""

    def __init__(self, filename: str | None, content_type: str | None, data: bytes):
        self.filename = filename
        self.content_type = content_type
        self.data = data

    def __repr__(self) -> str:
        return f"<UploadedFile {self.filename!r} {len(self.data)} bytes>"


async def read_params(request: web.Request) -> dict[str, Any]:
    """All parameters of a request: query string, then body (JSON, form or multipart)."""
    params: dict[str, Any] = dict(request.query)
    if not request.body_exists:
        return params
    ctype = request.content_type
    if ctype == "application/json":
        params.update(await _json_body(request))
    elif ctype in ("application/x-www-form-urlencoded", "multipart/form-data"):
        form = await request.post()
        for key, value in form.items():
            if isinstance(value, web.FileField):
                params[key] = UploadedFile(value.filename, value.content_type, value.file.read())
            else:
                params[key] = value
    return params


async def _json_body(request: web.Request) -> dict[str, Any]:
    raw = await request.read()
    if not raw.strip():
        return {}
    try:
        body = json.loads(raw)
    except ValueError as exc:
        raise bad_request("can't parse JSON object") from exc
    if not isinstance(body, dict):
        raise bad_request("JSON object expected")
    return body


class Params:
    """Typed, lazy access to the raw parameter dict of one call."""

    def __init__(self, raw: dict[str, Any]):
        self.raw = raw

    def has(self, name: str) -> bool:
        """Whether the parameter was sent (``None`` counts as absent)."""
        return self.raw.get(name) is not None

    def string(self, name: str, *, required: bool = False, empty_error: str | None = None) -> Any:
        """A string parameter; numbers sent via JSON are converted to str."""
        value = self.raw.get(name)
        if value is None:
            if required:
                raise bad_request(empty_error or f"{name} is empty")
            return None
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int | float):
            return str(value)
        if not isinstance(value, str):
            raise bad_request(f'field "{name}" must be of type String')
        return value

    def integer(self, name: str, *, required: bool = False, default: int | None = None) -> Any:
        """An integer parameter."""
        value = self.raw.get(name)
        if value is None or value == "":
            if required:
                raise bad_request(f"{name} is empty")
            return default
        if isinstance(value, bool):
            raise bad_request(f"invalid {name} specified")
        if isinstance(value, int):
            return value
        try:
            return int(str(value).strip())
        except ValueError:
            raise bad_request(f"invalid {name} specified") from None

    def number(self, name: str, *, default: float | None = None) -> Any:
        """A float parameter."""
        value = self.raw.get(name)
        if value is None or value == "":
            return default
        if isinstance(value, bool):
            raise bad_request(f"invalid {name} specified")
        try:
            return float(value)
        except (TypeError, ValueError):
            raise bad_request(f"invalid {name} specified") from None

    def flag(self, name: str, *, default: bool = False) -> bool:
        """A boolean parameter (``true``/``false``/``1``/``0``)."""
        value = self.raw.get(name)
        if value is None or value == "":
            return default
        if isinstance(value, bool):
            return value
        if isinstance(value, int):
            return value != 0
        return str(value).strip().lower() in ("true", "1", "yes")

    def json(self, name: str, *, what: str | None = None) -> Any:
        """A JSON-serialised parameter (a JSON string in forms, a value in JSON bodies)."""
        value = self.raw.get(name)
        if value is None or value == "":
            return None
        if not isinstance(value, str):
            return value
        try:
            return json.loads(value)
        except ValueError:
            raise bad_request(f"can't parse {what or name} JSON object") from None

    def chat_id(self, name: str = "chat_id", *, required: bool = True) -> Any:
        """An ``int`` chat id, an ``@username`` string, or ``None``."""
        value = self.raw.get(name)
        if value is None or value == "":
            if required:
                raise bad_request(f"{name} is empty")
            return None
        if isinstance(value, str) and value.startswith("@"):
            return value
        try:
            return int(value)
        except (TypeError, ValueError):
            raise bad_request("chat not found") from None

    def loggable(self) -> dict[str, Any]:
        """The raw parameters with uploads replaced by a short description."""
        return {
            key: (repr(value) if isinstance(value, UploadedFile) else value)
            for key, value in self.raw.items()
        }


def ensure(condition: bool, error: ApiError) -> None:
    """Raise ``error`` unless ``condition``."""
    if not condition:
        raise error
