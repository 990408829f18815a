"""PTB's HTTP backend on aiohttp instead of httpx.

Every Bot API call of the bot goes through :class:`telegram.request.BaseRequest`. With PTB's
own backend, ``HTTPXRequest``, an edit with a keyboard costs 2.3 ms of CPU and a callback
answer 1.4 ms on this project's benchmark machine; with this one 1.3 ms and 0.35 ms (``python
-m bench.http``; the rest is PTB's own work). Under load the bot makes ~27 edits a second,
all on the event loop that also answers the players' presses, so that CPU is what a press
waits behind (bench/README.md). aiohttp is already what the fake Bot API server of the
tests runs on.

The python-telegram-bot team keeps an aiohttp backend in ``ptbcontrib``, which is only
installable from git, not from PyPI; this one maps PTB's four timeouts the same way:

* ``read_timeout`` -> ``sock_read`` (also the long poll's: PTB adds the poll's timeout);
* ``connect_timeout`` -> ``sock_connect``;
* ``pool_timeout`` -> ``connect`` (aiohttp's wait for a free connection *and* the connect,
  so it gets both);
* ``write_timeout``: aiohttp has none (the request is written to the socket buffer); an
  upload is bounded by a total of the media write timeout plus the read timeout.

A press's answer (``answerCallbackQuery``) and the long poll (``getUpdates``) carry their
parameters in the URL's query string, with no body (:data:`IN_THE_URL`): on Python < 3.12
aiohttp writes a request's body from a task of its own, one more turn of the event loop
before the request leaves, and on a loop busy with the Mini App's pushes a turn is
milliseconds of the press's answer (issue 32). The Bot API takes parameters in the query
string as in the body; every other call is sent url-encoded, as ``HTTPXRequest`` does.

Errors map as in ``HTTPXRequest``: a timeout raises :class:`telegram.error.TimedOut`, any
other transport failure :class:`telegram.error.NetworkError`; answers of any status are
returned for PTB to turn into its errors.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import quote, urlencode

import aiohttp
from telegram._utils.defaultvalue import DefaultValue
from telegram._utils.types import ODVInput
from telegram.error import NetworkError, TimedOut
from telegram.request import BaseRequest, RequestData

from storage import inbox

#: Methods that PTB builds with another method's shared parameters (its ``_send_message``
#: adds ``parse_mode`` and friends, filled from ``Defaults``): only their own are sent.
OWN_PARAMETERS = {
    "editMessageReplyMarkup": frozenset(
        {"chat_id", "message_id", "inline_message_id", "reply_markup", "business_connection_id"}
    ),
}


def own_parameters(url: str, params: dict[str, str]) -> dict[str, str]:
    """The parameters the method of ``url`` takes (Bot API), the others dropped."""
    allowed = OWN_PARAMETERS.get(url.rsplit("/", 1)[-1])
    if allowed is None:
        return params
    return {key: value for key, value in params.items() if key in allowed}

#: Methods whose parameters go in the URL's query string, with no body (see the module
#: docstring), while they are short: a press's answer and the long poll.
IN_THE_URL = frozenset({"answerCallbackQuery", "getUpdates"})
#: Longest query string sent so (an answer's text is at most 200 characters, 9 bytes
#: each once %-encoded); a longer one goes in the body.
MAX_QUERY_STRING = 2048


def in_the_url(url: str, params: dict[str, str]) -> str | None:
    """``url`` with ``params`` as its query string, if its method is one of
    :data:`IN_THE_URL` and they fit :data:`MAX_QUERY_STRING`; None otherwise."""
    if url.rsplit("/", 1)[-1] not in IN_THE_URL:
        return None
    query = urlencode(params, quote_via=quote)  # (%20, %2B: the same read as form or URL)
    if len(query) > MAX_QUERY_STRING:
        return None
    return f"{url}?{query}" if query else url


class Fenced(NetworkError):
    """The call was not made: this instance is no longer the active one (it lost the
    database lock, see :mod:`bot.failover`)."""


def _resolve(value: ODVInput[float], default: float | None) -> float | None:
    return default if isinstance(value, DefaultValue) else value


def _plus(a: float | None, b: float | None) -> float | None:
    """Sum of two timeouts, ``None`` (no limit) if either is."""
    return None if a is None or b is None else a + b


class AiohttpRequest(BaseRequest):
    """A :class:`~telegram.request.BaseRequest` on one :class:`aiohttp.ClientSession`.

    The parameters and their defaults are those of ``HTTPXRequest``; ``user_agent`` is
    added to PTB's (it names the instance, see :mod:`bot.failover`). While ``gate`` is set
    and returns False no request is made: :class:`Fenced` is raised instead (fencing)."""

    __slots__ = (
        "_connect_timeout", "_media_write_timeout", "_pool_size", "_pool_timeout",
        "_read_timeout", "_session", "_user_agent", "_write_timeout", "gate",
    )

    def __init__(
        self,
        connection_pool_size: int = 256,
        read_timeout: float | None = 5.0,
        write_timeout: float | None = 5.0,
        connect_timeout: float | None = 5.0,
        pool_timeout: float | None = 1.0,
        media_write_timeout: float | None = 20.0,
        user_agent: str | None = None,
        gate: Callable[[], bool] | None = None,
    ) -> None:
        self._user_agent = f"{self.USER_AGENT} {user_agent}" if user_agent else self.USER_AGENT
        self.gate = gate
        self._pool_size = connection_pool_size
        self._read_timeout = read_timeout
        self._write_timeout = write_timeout
        self._connect_timeout = connect_timeout
        self._pool_timeout = pool_timeout
        self._media_write_timeout = media_write_timeout
        self._session: aiohttp.ClientSession | None = None

    @property
    def read_timeout(self) -> float | None:
        return self._read_timeout

    async def initialize(self) -> None:
        """Open the session (it needs the running event loop); again after a shutdown."""
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self._pool_size),
                headers={"User-Agent": self._user_agent},
            )

    async def shutdown(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        write_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        connect_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        pool_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        if self._session is None or self._session.closed:
            raise RuntimeError("This AiohttpRequest is not initialized!")
        if self.gate is not None and not self.gate():
            raise Fenced(f"not sent ({url.rsplit('/', 1)[-1]}): this instance is not active")
        if not url.rsplit("/", 1)[-1].startswith("get"):
            # a reply, an edit: the update being handled is marked first (storage.inbox)
            await inbox.before_effect()
        read = _resolve(read_timeout, self._read_timeout)
        connect = _resolve(connect_timeout, self._connect_timeout)
        pool = _resolve(pool_timeout, self._pool_timeout)
        data: aiohttp.FormData | dict[str, str] | None = None
        target = url
        total = None
        if request_data is not None:
            if request_data.contains_files:
                data = _form(request_data)
                write = _resolve(write_timeout, self._media_write_timeout)
                total = _plus(write, read)
            else:
                params = own_parameters(url, request_data.json_parameters)
                short = in_the_url(url, params)
                if short is not None:
                    target = short  # no body: sent at once (module docstring)
                else:
                    data = params  # sent url-encoded, as HTTPXRequest does
        timeout = aiohttp.ClientTimeout(
            total=total, connect=_plus(pool, connect), sock_connect=connect, sock_read=read
        )
        try:
            async with self._session.request(method, target, data=data,
                                             timeout=timeout) as res:
                return res.status, await res.read()
        except TimeoutError as err:
            if isinstance(err, aiohttp.ConnectionTimeoutError):
                raise TimedOut(
                    "Pool or connect timeout: the request was *not* sent to Telegram."
                ) from err
            raise TimedOut from err
        except aiohttp.ClientError as err:
            raise NetworkError(f"aiohttp.{err.__class__.__name__}: {err}") from err


def _form(request_data: RequestData) -> aiohttp.FormData:
    """multipart/form-data: the parameters, then the files."""
    form = aiohttp.FormData()
    for name, value in request_data.json_parameters.items():
        form.add_field(name, value)
    for name, (filename, content, mime_type) in request_data.multipart_data.items():
        form.add_field(name, content, filename=filename, content_type=mime_type)
    return form
