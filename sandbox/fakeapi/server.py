"""`FakeTelegram`: a local fake Telegram Bot API HTTP server for end-to-end tests.

Run the real PTB ``Application`` against it::

    async with FakeTelegram() as tg:
        app = tg.application_builder().build()      # or ApplicationBuilder().token(tg.token)
        alice = tg.add_user("Al<i>ce & co", language_code="it")   # .base_url(tg.base_url)...
        group = tg.add_group("Tavolo <1>", members=[alice], admins=[alice])
        ...
        await alice.send(group, "/nuova")
        table = await tg.wait_for_message(group, "Nuova partita")
        answer = await alice.press(table, "join")

The server runs on an aiohttp runner in the current event loop: the bot can run in the
same loop (PTB ``Application``) or in a subprocess pointed at ``tg.base_url``; the test must
keep the loop running (``await`` the helpers, never ``time.sleep``).  All waiting helpers are
event-driven: they wake up on every API call and every simulated user action.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import json
import logging
import random
import re
import ssl
import time
from collections import defaultdict, deque
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web

from . import webapps
from .client import CallbackQueryHandle, FakeUser
from .errors import (
    BLOCKED,
    CONFLICT_GET_UPDATES,
    CONFLICT_SET_WEBHOOK,
    CONFLICT_WEBHOOK,
    ApiError,
    FakeClientError,
    WaitTimeout,
    not_found,
    too_many_requests,
    unauthorized,
)
from .limits import FloodController, FloodLimits, FloodViolation
from .markup import Button
from .methods import REGISTRY, BotApi, is_loopback_url, set_allowed_updates
from .models import BotIdentity, FakeChat, FakeMessage, PendingUpdate
from .params import MAX_BODY, Params, read_params
from .world import World, scope_key

FAULT_KINDS = frozenset({"429", "500", "502", "400", "403_blocked", "timeout", "reset", "slow"})
_TOKEN_RE = re.compile(r"^\d+:[A-Za-z0-9_-]{30,}$")
_MAX_POLL_TIMEOUT = 50.0
_LOGGER = logging.getLogger(__name__)


@dataclass
class ApiCall:
    """One request to the fake server, as seen by the server."""

    seq: int
    method: str
    params: dict[str, Any]
    chat_id: int | str | None
    at: float  # time.monotonic() when received
    duration: float = 0.0
    ok: bool | None = None  # None while in flight
    result: Any = None
    error_code: int | None = None
    description: str | None = None
    fault: str | None = None  # kind of the injected fault, if any
    cancelled: bool = False  # the client went away before the answer
    agent: str = ""  # the client's User-Agent (which instance of the bot called)

    @property
    def text(self) -> str | None:
        value = self.params.get("text")
        return value if isinstance(value, str) else None

    def __repr__(self) -> str:
        if self.ok:
            state = "ok"
        elif self.ok is None:
            state = "in flight"
        elif self.cancelled:
            state = "cancelled"
        else:
            state = f"ERROR {self.error_code} {self.description}"
        fault = f" [fault {self.fault}]" if self.fault else ""
        extra = f" text={self.text[:60]!r}" if self.text else ""
        return f"#{self.seq} {self.method} chat={self.chat_id}{extra} -> {state}{fault}"


@dataclass
class Fault:
    """An injected fault; applies to the next ``count`` matching calls."""

    kind: str
    method: str | None
    chat_id: int | None
    count: int
    retry_after: int = 1
    hold: float = 30.0
    delay: float = 0.5
    executed: bool = False
    description: str | None = None
    probability: float = 1.0
    rng: random.Random = field(default_factory=lambda: random.Random(0))
    hits: list[ApiCall] = field(default_factory=list)

    @property
    def remaining(self) -> int:
        return self.count - len(self.hits)

    def matches(self, method: str, chat_id: Any) -> bool:
        if self.remaining <= 0:
            return False
        if self.method is None:
            if method == "getupdates":
                return False
        elif self.method.lower() != method:
            return False
        if self.chat_id is not None and self.chat_id != chat_id:
            return False
        return self.probability >= 1.0 or self.rng.random() < self.probability

    def error(self) -> ApiError:
        """The error answer of a non-delaying fault."""
        if self.kind == "429":
            return too_many_requests(self.retry_after)
        if self.kind == "500":
            return ApiError(500, self.description or "Internal Server Error")
        if self.kind == "502":
            return ApiError(502, self.description or "Bad Gateway")
        if self.kind == "403_blocked":
            return ApiError(403, BLOCKED)
        return ApiError(400, self.description or "Bad Request: injected fault")


@dataclass
class WebhookDelivery:
    """One POST of an update to the webhook URL: ``status`` is the HTTP status of the
    answer (None if there was none: ``error`` says why)."""

    update_id: int
    url: str
    at: float  # time.monotonic() when sent
    status: int | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


NOT_DELIVERED = "the fake delivers webhooks to loopback addresses only"
#: Header of a webhook request carrying setWebhook's secret_token.
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"


class _ConnectionAborted(Exception):
    """Raised after a "reset" fault closed the connection."""


class _Poll:
    """The getUpdates request currently being held."""

    def __init__(self, request: web.Request):
        self.request = request
        self.wakeup = asyncio.Event()
        self.terminated = False

    def client_gone(self) -> bool:
        transport = self.request.transport
        return transport is None or transport.is_closing()


class ChatWatch:
    """Wakes up when a bot API call touching one of some chats has been answered.

    Cheap per-chat notification for simulators driving many tables at once (`wait_until`
    re-evaluates every predicate on every call).  Create with `FakeTelegram.watch`.
    """

    def __init__(self, owner: FakeTelegram, chat_ids: set[int]):
        self._owner = owner
        self.chat_ids = chat_ids
        self.event = asyncio.Event()

    async def wait(self, timeout: float | None = None) -> bool:
        """Wait for a change since the last call (True) or until ``timeout`` (False)."""
        if self.event.is_set():
            self.event.clear()
            return True
        try:
            await asyncio.wait_for(self.event.wait(), timeout)
        except TimeoutError:
            return False
        finally:
            self.event.clear()
        return True

    def poke(self) -> None:
        """Wake the waiter now (e.g. from a test that changed something itself)."""
        self.event.set()

    def close(self) -> None:
        for chat_id in self.chat_ids:
            watchers = self._owner._watches.get(chat_id)
            if watchers is not None:
                watchers.discard(self)


def _default_token(bot_id: int) -> str:
    return f"{bot_id}:" + ("AAFake" + "0123456789abcdefghijklmnopqrstuvwxyz")[:35]


class FakeTelegram:
    """Fake Telegram Bot API server + world state + test helpers.

    Args:
        bot_username / bot_name / bot_id / token: identity of the bot.
        host / port: where to listen (port 0 = a free port).
        flood: `FloodLimits`, ``True`` (defaults) or ``False`` (no flood control).
        strict_html: reject a bare ``&`` in HTML texts (real Telegram keeps it).
        privacy_mode: in groups the bot only gets commands, replies to its messages and
            service messages unless it is an administrator (like a default BotFather bot).
        conflict_policy: ``"terminate_old"`` (real Telegram: a new getUpdates ends the
            pending one with 409) or ``"reject_new"`` (the new one gets 409 unless the
            pending one's client has disconnected).
        callback_timeout: seconds after which a callback query can no longer be answered.
        webhook_timeout: seconds a webhook POST may take before it counts as failed.
        inline_mode: the bot's inline mode is on (@BotFather's /setinline): users may send
            it inline queries (``FakeUser.inline``); ``getMe`` says so.
    """

    def __init__(
        self,
        *,
        bot_username: str = "BriscolaTestBot",
        bot_name: str = "Briscola Test",
        bot_id: int = 7_100_000_001,
        token: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        flood: FloodLimits | bool = True,
        strict_html: bool = True,
        privacy_mode: bool = True,
        conflict_policy: str = "terminate_old",
        callback_timeout: float = 15.0,
        webhook_timeout: float = 10.0,
        inline_mode: bool = False,
    ):
        if conflict_policy not in ("terminate_old", "reject_new"):
            raise ValueError(f"unknown conflict_policy {conflict_policy!r}")
        limits = flood if isinstance(flood, FloodLimits) else FloodLimits(enabled=bool(flood))
        self.token = token or _default_token(bot_id)
        self.host = host
        self.port = port
        self.conflict_policy = conflict_policy
        bot = BotIdentity(
            bot_id, bot_name, bot_username, can_read_all_group_messages=not privacy_mode
        )
        bot.supports_inline_queries = inline_mode
        self.world = World(bot, privacy_mode=privacy_mode)
        self.world.inline_mode = inline_mode
        self.flood = FloodController(limits)
        self.api = BotApi(
            self.world, self.flood, strict_html=strict_html, callback_timeout=callback_timeout
        )
        self.calls: list[ApiCall] = []
        self.internal_errors: list[BaseException] = []
        self.faults: list[Fault] = []
        self._seq = itertools.count(1)
        self._waiters: set[asyncio.Event] = set()
        #: Called (synchronously, no arguments) after every API call and user action: the
        #: hook a live view of the world (the sandbox's web page) refreshes on.
        self.listeners: list[Callable[[], None]] = []
        self._poller: _Poll | None = None
        self._inflight = 0
        self._last_activity = time.monotonic()
        self._stopping = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self._watches: defaultdict[int, set[ChatWatch]] = defaultdict(set)
        # offered updates not yet handled, for latency attribution (see PendingUpdate)
        self._unhandled_queries: dict[str, PendingUpdate] = {}
        self._unhandled_by_chat: defaultdict[int, deque[PendingUpdate]] = defaultdict(deque)
        self.world.on_update = self._on_update
        self.world.on_change = self._changed
        self.world.on_webhook = self._on_update
        self.webhook_timeout = webhook_timeout
        #: Test hooks called with each update as it is handed to the bot (a getUpdates
        #: answer, a webhook POST), before the bot has it: a chaos test kills the bot
        #: right after a press was handed out.
        self.offered_hooks: list[Callable[[PendingUpdate], None]] = []
        #: Every webhook POST, oldest first (see `WebhookDelivery`).
        self.webhook_deliveries: list[WebhookDelivery] = []
        self._webhook_wakeup = asyncio.Event()
        self._webhook_task: asyncio.Task[None] | None = None

    # ======================================================================================
    # lifecycle
    # ======================================================================================
    async def start(self) -> FakeTelegram:
        """Start listening (on a free port unless one was given)."""
        self._stopping = asyncio.Event()
        app = web.Application(client_max_size=MAX_BODY)
        app.router.add_route("*", "/bot{token}/{method}", self._handle_api)
        app.router.add_route("*", "/file/bot{token}/{path:.*}", self._handle_other)
        app.router.add_route("*", "/{tail:.*}", self._handle_other)
        runner = web.AppRunner(
            app, handler_cancellation=True, shutdown_timeout=0.5, access_log=None
        )
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port, reuse_address=True)
        await site.start()
        self._runner = runner
        self.port = runner.addresses[0][1]
        self._webhook_wakeup = asyncio.Event()
        self._webhook_task = asyncio.create_task(self._webhook_loop(), name="fake webhook")
        return self

    async def stop(self) -> None:
        """Stop the server; held requests (long polls, "timeout" faults) end at once."""
        self._stopping.set()
        self._wake_poller()
        if self._webhook_task is not None:
            self._webhook_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._webhook_task
            self._webhook_task = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeTelegram:
        return await self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    @property
    def url(self) -> str:
        """``http://host:port``."""
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """What to give PTB as ``base_url`` (PTB appends the token)."""
        return f"{self.url}/bot"

    @property
    def base_file_url(self) -> str:
        """What to give PTB as ``base_file_url`` (file downloads are not implemented)."""
        return f"{self.url}/file/bot"

    @property
    def bot(self) -> BotIdentity:
        return self.world.bot

    def make_bot(self, **request_kwargs: Any) -> Any:
        """A ``telegram.Bot`` for this server; kwargs go to its ``HTTPXRequest``s.

        The requests share one SSL context (plain HTTP needs none, and building one per
        client costs ~25 ms), which keeps many short tests fast.
        """
        from telegram import Bot
        from telegram.request import HTTPXRequest

        kwargs = {"httpx_kwargs": {"verify": _shared_ssl_context()}, **request_kwargs}
        return Bot(
            self.token,
            base_url=self.base_url,
            base_file_url=self.base_file_url,
            request=HTTPXRequest(**kwargs),
            get_updates_request=HTTPXRequest(**kwargs),
        )

    def application_builder(self) -> Any:
        """A ``telegram.ext.ApplicationBuilder`` with token and URLs set."""
        from telegram.ext import ApplicationBuilder

        return (
            ApplicationBuilder()
            .token(self.token)
            .base_url(self.base_url)
            .base_file_url(self.base_file_url)
        )

    # ======================================================================================
    # HTTP layer
    # ======================================================================================
    async def _handle_other(self, request: web.Request) -> web.Response:
        return _json_response(not_found().payload(), 404)

    async def _handle_api(self, request: web.Request) -> web.StreamResponse:
        token, method = request.match_info["token"], request.match_info["method"]
        entry = REGISTRY.get(method.lower())
        polling = method.lower() == "getupdates"
        call = self._open_call(
            "getUpdates" if polling else (entry[0] if entry else method), polling
        )
        call.agent = request.headers.get("User-Agent", "")
        try:
            if token != self.token:
                raise unauthorized() if _TOKEN_RE.match(token) else not_found()
            params = Params(await read_params(request))
            call.params, call.chat_id = params.loggable(), _chat_id_of(params)
            if not polling:
                self._attribute(call, params)
            if entry is None and not polling:
                raise not_found()
            result = await self._execute(request, call, params, entry)
            call.ok, call.result = True, result
            response = _json_response({"ok": True, "result": result}, 200)
        except ApiError as exc:
            call.ok, call.error_code, call.description = False, exc.code, exc.description
            response = _json_response(exc.payload(), exc.code)
        except _ConnectionAborted:
            call.ok, call.description = False, "connection reset by the fake server (fault)"
            raise asyncio.CancelledError from None
        except asyncio.CancelledError:
            call.ok, call.cancelled, call.description = False, True, "client disconnected"
            raise
        except Exception as exc:  # a bug of the fake: make it loud but keep serving
            _LOGGER.exception("fake Telegram server failed on %s", call.method)
            self.internal_errors.append(exc)
            error = ApiError(500, f"Internal Server Error: fake server bug: {exc!r}")
            call.ok, call.error_code, call.description = False, 500, error.description
            response = _json_response(error.payload(), 500)
        finally:
            self._close_call(call, polling)
        return response

    def _open_call(self, name: str, polling: bool) -> ApiCall:
        call = ApiCall(next(self._seq), name, {}, None, time.monotonic())
        self.calls.append(call)
        if not polling:
            self._inflight += 1
        self._changed()
        return call

    def _close_call(self, call: ApiCall, polling: bool) -> None:
        call.duration = time.monotonic() - call.at
        if not polling:
            self._inflight -= 1
            self._last_activity = time.monotonic()
            if isinstance(call.chat_id, int):
                for watch in self._watches.get(call.chat_id, ()):
                    watch.event.set()
        self._changed()

    def _attribute(self, call: ApiCall, params: Params) -> None:
        """Mark the update this call is the bot's first reaction to (latency figures)."""
        update: PendingUpdate | None = None
        if call.method in ("answerCallbackQuery", "answerInlineQuery"):
            query_id = params.raw.get("callback_query_id", params.raw.get("inline_query_id"))
            update = self._unhandled_queries.pop(str(query_id), None)
        elif isinstance(call.chat_id, int):
            pending = self._unhandled_by_chat.get(call.chat_id)
            while pending:
                candidate = pending.popleft()
                if candidate.handled_at is None:
                    update = candidate
                    break
        if update is not None and update.handled_at is None:
            update.handled_at, update.handled_by = call.at, call.method

    async def _execute(
        self, request: web.Request, call: ApiCall, params: Params, entry: Any
    ) -> Any:
        async def run() -> Any:
            if entry is None:
                return await self._get_updates(request, params)
            return entry[1](self.api, params)

        fault = next((f for f in self.faults if f.matches(call.method.lower(), call.chat_id)), None)
        if fault is None:
            return await run()
        if entry is None and fault.executed and fault.kind in ("timeout", "reset"):
            # losing an answer of getUpdates: only one that carries updates counts
            batch = await run()
            if not batch:
                return batch

            async def done() -> Any:
                return batch

            run = done
        fault.hits.append(call)
        call.fault = fault.kind
        return await self._apply_fault(fault, request, run)

    async def _apply_fault(
        self, fault: Fault, request: web.Request, run: Callable[[], Awaitable[Any]]
    ) -> Any:
        if fault.kind == "slow":
            await self._sleep(fault.delay)
            return await run()
        if fault.kind in ("timeout", "reset"):
            result = await run() if fault.executed else None
            if fault.kind == "reset":
                transport = request.transport
                if transport is not None:
                    transport.abort()
                raise _ConnectionAborted
            await self._sleep(fault.hold)
            if fault.executed:
                return result
            raise ApiError(502, "Bad Gateway")
        raise fault.error()

    async def _sleep(self, seconds: float) -> None:
        """Sleep, but return at once when the server is stopping."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), seconds)

    # ======================================================================================
    # long polling
    # ======================================================================================
    async def _get_updates(self, request: web.Request, p: Params) -> list[dict[str, Any]]:
        if self.world.webhook_url:
            raise ApiError(409, CONFLICT_WEBHOOK)
        offset = p.integer("offset", default=0)
        limit = min(max(p.integer("limit", default=100), 1), 100)
        timeout = min(max(p.number("timeout", default=0.0), 0.0), _MAX_POLL_TIMEOUT)
        set_allowed_updates(self.api, p)
        poll = _Poll(request)
        self._claim_poller(poll)
        try:
            self.world.confirm(offset)
            batch = await self._wait_updates(poll, limit, timeout)
        finally:
            if self._poller is poll:
                self._poller = None
        self._offered(batch)
        return [update.payload for update in batch]

    def _offered(self, batch: Iterable[PendingUpdate]) -> None:
        """Bookkeeping of updates handed to the bot (getUpdates answer or webhook POST)."""
        now = time.monotonic()
        for update in batch:
            update.delivered = True
            update.offers += 1
            for hook in self.offered_hooks:  # (test hooks: see the attribute)
                hook(update)
            if update.offered_at is None:
                update.offered_at = now
                if update.query_id is not None:
                    self._unhandled_queries[update.query_id] = update
                elif update.chat_id is not None and update.kind.endswith("message"):
                    self._unhandled_by_chat[update.chat_id].append(update)

    def _claim_poller(self, poll: _Poll) -> None:
        old = self._poller
        if old is not None:
            if self.conflict_policy == "reject_new" and not old.client_gone():
                raise ApiError(409, CONFLICT_GET_UPDATES)
            old.terminated = True
            old.wakeup.set()
        self._poller = poll
        self._changed()

    async def _wait_updates(self, poll: _Poll, limit: int, timeout: float) -> list[PendingUpdate]:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            if poll.terminated:
                raise ApiError(409, CONFLICT_GET_UPDATES)
            if self.world.webhook_url:
                raise ApiError(409, CONFLICT_SET_WEBHOOK)
            batch = list(itertools.islice(self.world.updates, limit))
            remaining = deadline - loop.time()
            if batch or remaining <= 0 or self._stopping.is_set():
                return batch
            poll.wakeup.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(poll.wakeup.wait(), remaining)

    def _wake_poller(self) -> None:
        if self._poller is not None:
            self._poller.wakeup.set()

    def _on_update(self) -> None:
        """A new update, or the webhook was set or deleted."""
        self._wake_poller()
        self._webhook_wakeup.set()

    # ======================================================================================
    # webhook
    # ======================================================================================
    async def _webhook_loop(self) -> None:
        """While a webhook is set (on this machine: see `is_loopback_url`; others keep the
        updates pending), POST the pending updates to it one at a time, oldest
        first, with the secret header; a 2xx answer confirms the update, anything else
        (status, refused connection, timeout) is retried after a short backoff and shown
        by getWebhookInfo. (Telegram may use up to max_connections requests at once.)"""
        failures = 0
        async with aiohttp.ClientSession() as session:
            while True:
                url = self.world.webhook_url
                if not url or not self.world.updates:
                    self._webhook_wakeup.clear()
                    await self._webhook_wakeup.wait()
                    continue
                update = self.world.updates[0]
                if not is_loopback_url(url):  # held, like an unreachable endpoint
                    self.world.webhook_last_error = (int(time.time()), NOT_DELIVERED)
                    self._webhook_wakeup.clear()
                    await self._webhook_wakeup.wait()
                    continue
                try:
                    delivery = await self._post_update(session, url, update)
                except Exception as exc:  # a bug of the fake: loud, but keep delivering
                    _LOGGER.exception("fake webhook delivery failed")
                    self.internal_errors.append(exc)
                    delivery = WebhookDelivery(
                        update.update_id, url, time.monotonic(), error=f"fake bug: {exc!r}"
                    )
                if delivery.ok:
                    failures = 0
                    update.confirmed_at = time.monotonic()
                    if self.world.updates and self.world.updates[0] is update:
                        self.world.updates.popleft()
                else:
                    failures += 1
                    self.world.webhook_last_error = (int(time.time()), str(delivery.error))
                    self._webhook_wakeup.clear()
                    # (a new update or a webhook change retries at once)
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(
                            self._webhook_wakeup.wait(), min(0.05 * 2**failures, 2.0)
                        )
                self._changed()

    async def _post_update(
        self, session: aiohttp.ClientSession, url: str, update: PendingUpdate
    ) -> WebhookDelivery:
        delivery = WebhookDelivery(update.update_id, url, time.monotonic())
        self.webhook_deliveries.append(delivery)
        headers = {"Content-Type": "application/json"}
        if self.world.webhook_secret:
            headers[SECRET_HEADER] = self.world.webhook_secret
        body = json.dumps(update.payload, ensure_ascii=True, separators=(",", ":"))
        self._offered([update])
        try:
            async with session.post(
                url, data=body.encode("ascii"), headers=headers,
                timeout=aiohttp.ClientTimeout(total=self.webhook_timeout),
            ) as response:  # fmt: skip
                delivery.status = response.status
                await response.read()
                if not delivery.ok:
                    delivery.error = (
                        f"Wrong response from the webhook: {response.status} {response.reason}"
                    )
        except (aiohttp.ClientError, TimeoutError) as exc:
            delivery.error = f"Connection failed: {exc.__class__.__name__}"
        return delivery

    @property
    def polling(self) -> bool:
        """Whether a getUpdates request is currently being held."""
        return self._poller is not None

    # ======================================================================================
    # building the world
    # ======================================================================================
    def add_user(
        self,
        first_name: str,
        *,
        last_name: str | None = None,
        username: str | None = None,
        language_code: str | None = None,
        is_premium: bool = False,
        id: int | None = None,
        started: bool = False,
    ) -> FakeUser:
        """Create a user (ids are > 2**32 by default); ``started=True`` skips /start."""
        user = self.world.add_user(
            first_name,
            id=id,
            last_name=last_name,
            username=username,
            language_code=language_code,
            is_premium=is_premium,
        )
        user.started = started
        return user

    def add_group(
        self,
        title: str,
        members: Iterable[FakeUser] = (),
        *,
        admins: Iterable[FakeUser] = (),
        owner: FakeUser | None = None,
        supergroup: bool = False,
        forum: bool = False,
        username: str | None = None,
        bot_admin: bool = False,
        bot_member: bool = True,
        bot_rights: dict[str, bool] | None = None,
        id: int | None = None,
    ) -> FakeChat:
        """Create a group (no updates are sent; see `add_bot_to_group` for that).

        The creator is ``owner``, else the first admin, else the first member.  A
        ``username`` or ``forum=True`` implies a supergroup.
        """
        status = "administrator" if bot_admin else "member" if bot_member else "left"
        return self.world.add_group(
            title,
            members,
            admins=admins,
            owner=owner,
            supergroup=supergroup,
            forum=forum,
            username=username,
            bot_status=status,
            bot_rights=bot_rights,
            id=id,
        )

    def add_supergroup(
        self, title: str, members: Iterable[FakeUser] = (), **kwargs: Any
    ) -> FakeChat:
        """`add_group` with ``supergroup=True``."""
        return self.add_group(title, members, supergroup=True, **kwargs)

    def add_forum(self, title: str, members: Iterable[FakeUser] = (), **kwargs: Any) -> FakeChat:
        """A forum supergroup (create topics with `add_topic`)."""
        return self.add_group(title, members, forum=True, **kwargs)

    def add_topic(self, forum: FakeChat, name: str, *, by: FakeUser | None = None) -> int:
        """Create a forum topic; returns its ``message_thread_id``."""
        if not forum.is_forum:
            raise FakeClientError(f"{forum!r} is not a forum")
        actor = by or self._creator(forum)
        message_id = forum.next_message_id
        forum.topics[message_id] = name
        created = {"forum_topic_created": {"name": name, "icon_color": 7322096}}
        message = self.world.new_message(
            forum, actor, service=created, thread_id=message_id, is_topic_message=True
        )
        self.world.deliver(message)
        return message_id

    def close_topic(self, forum: FakeChat, thread_id: int, *, by: FakeUser | None = None) -> None:
        """Close a forum topic (as its creator or an admin does in the client): Telegram
        refuses messages there from a bot that may not manage topics (``TOPIC_CLOSED``),
        and posts the service message ``forum_topic_closed`` in it."""
        if thread_id not in forum.topics:
            raise FakeClientError(f"{forum!r} has no topic {thread_id}")
        forum.closed_topics.add(thread_id)
        message = self.world.new_message(
            forum, by or self._creator(forum), service={"forum_topic_closed": {}},
            thread_id=thread_id, is_topic_message=True,
        )
        self.world.deliver(message)

    def reopen_topic(self, forum: FakeChat, thread_id: int, *, by: FakeUser | None = None) -> None:
        """Reopen a closed topic (service message ``forum_topic_reopened``)."""
        forum.closed_topics.discard(thread_id)
        message = self.world.new_message(
            forum, by or self._creator(forum), service={"forum_topic_reopened": {}},
            thread_id=thread_id, is_topic_message=True,
        )
        self.world.deliver(message)

    def private_chat(self, user: FakeUser) -> FakeChat:
        """The private chat of ``user`` with the bot."""
        return self.world.private_chat(user)

    def _creator(self, chat: FakeChat) -> FakeUser | None:
        for user_id, status in chat.members.items():
            if status == "creator":
                return self.world.users[user_id]
        return None

    def add_bot_to_group(
        self, group: FakeChat, *, by: FakeUser | None = None, admin: bool = False
    ) -> None:
        """Add the bot to ``group``: my_chat_member + a new_chat_members message."""
        actor = by or self._creator(group)
        self.world.set_bot_status(group, "administrator" if admin else "member", actor)
        self.world.service_message(group, actor, {"new_chat_members": [self.bot.user_json()]})

    def kick_bot(self, group: FakeChat, *, by: FakeUser | None = None) -> None:
        """Remove the bot from ``group``: my_chat_member (-> kicked); later calls get 403."""
        actor = by or self._creator(group)
        self.world.set_bot_status(group, "kicked", actor)
        self.world.service_message(
            group, actor, {"left_chat_member": self.bot.user_json()}, deliver=False
        )

    def set_bot_admin(
        self,
        group: FakeChat,
        admin: bool = True,
        *,
        by: FakeUser | None = None,
        rights: dict[str, bool] | None = None,
    ) -> None:
        """Promote/demote the bot (my_chat_member update)."""
        if rights:
            group.bot_rights.update(rights)
        self.world.set_bot_status(
            group, "administrator" if admin else "member", by or self._creator(group)
        )

    def migrate_to_supergroup(self, group: FakeChat, *, by: FakeUser | None = None) -> FakeChat:
        """Upgrade a basic group; the old id then answers 400 with migrate_to_chat_id.

        Sends the two service messages (``migrate_to_chat_id`` in the old chat,
        ``migrate_from_chat_id`` in the new one).
        """
        if group.type != "group" or group.migrated_to is not None:
            raise FakeClientError(f"{group!r} is not a basic group that can be migrated")
        actor = by or self._creator(group)
        new = self.world.add_group(group.title or "", bot_status=group.bot_status, supergroup=True)
        new.members = dict(group.members)
        new.bot_rights = dict(group.bot_rights)
        new.migrated_from = group.id
        self.world.service_message(group, actor, {"migrate_to_chat_id": new.id})
        group.migrated_to = new.id
        self.world.service_message(new, actor, {"migrate_from_chat_id": group.id})
        return new

    # ======================================================================================
    # inspecting the world
    # ======================================================================================
    def chat_messages(
        self,
        chat: FakeChat | FakeUser,
        *,
        from_bot: bool | None = None,
        include_deleted: bool = False,
        service: bool = False,
    ) -> list[FakeMessage]:
        """Current state of the messages of ``chat`` (a user means their private chat)."""
        target = chat.private_chat if isinstance(chat, FakeUser) else chat
        return [
            m
            for m in target.messages.values()
            if (include_deleted or not m.deleted)
            and (service or m.service is None)
            and (from_bot is None or m.from_bot == from_bot)
        ]

    def last_message(
        self, chat: FakeChat | FakeUser, *, from_bot: bool | None = None
    ) -> FakeMessage | None:
        """The newest (not deleted, non-service) message of ``chat``."""
        messages = self.chat_messages(chat, from_bot=from_bot)
        return messages[-1] if messages else None

    def last_bot_message(self, chat: FakeChat | FakeUser) -> FakeMessage | None:
        """The newest message the bot sent to ``chat``."""
        return self.last_message(chat, from_bot=True)

    def message(self, chat: FakeChat | int, message_id: int) -> FakeMessage:
        """A stored message by chat and id."""
        chat_id = chat if isinstance(chat, int) else chat.id
        return self.world.lookup_message((chat_id, message_id))

    def open_web_app(
        self, user: FakeUser, url: str, *, start_param: str | None = None,
        chat: FakeChat | None = None, auth_date: int | None = None,
    ) -> str:
        """The URL ``user``'s client loads to open a Mini App: from a private chat's
        ``web_app`` button (``chat`` None) or from a direct link in ``chat``, with
        ``initData`` signed with this bot's token (:mod:`sandbox.fakeapi.webapps`)."""
        chat_type = None if chat is None else chat.type
        instance = None if chat is None else str(abs(chat.id) * 7919 % 10**12)
        data = webapps.init_data(self.token, user.to_api(), start_param=start_param,
                                 chat_type=chat_type, chat_instance=instance,
                                 auth_date=auth_date)
        return webapps.launch_url(url, data, start_param)

    def find_button(self, message: Any, text: str) -> Button:
        """The button of ``message`` whose text equals/contains ``text``."""
        return self.world.lookup_message(message).button(text)

    @property
    def errors(self) -> list[ApiCall]:
        """Calls answered with ``ok: false`` (cancelled requests excluded)."""
        return [c for c in self.calls if c.ok is False and not c.cancelled]

    def calls_to(self, method: str, chat: FakeChat | int | None = None) -> list[ApiCall]:
        """Calls of ``method`` (case-insensitive), optionally only to ``chat``."""
        chat_id = chat.id if isinstance(chat, FakeChat) else chat
        name = method.lower()
        return [
            c
            for c in self.calls
            if c.method.lower() == name and (chat_id is None or c.chat_id == chat_id)
        ]

    def clear_log(self) -> None:
        """Forget the call log and flood violations."""
        self.calls.clear()
        self.flood.violations.clear()

    @property
    def flood_violations(self) -> list[FloodViolation]:
        return self.flood.violations

    @property
    def callbacks(self) -> list[CallbackQueryHandle]:
        """All callback queries, oldest first."""
        return list(self.world.callbacks.values())

    def unanswered_callbacks(self) -> list[CallbackQueryHandle]:
        """Callback queries the bot never answered."""
        return [h for h in self.world.callbacks.values() if not h.answered]

    @property
    def pending_updates(self) -> list[dict[str, Any]]:
        """Updates not yet confirmed by the bot."""
        return [u.payload for u in self.world.updates]

    def commands(
        self, scope: dict[str, Any] | None = None, language_code: str = ""
    ) -> list[dict[str, str]]:
        """Commands stored by setMyCommands for exactly this scope and language."""
        return self.world.commands.get((scope_key(scope), language_code), [])

    def visible_commands(self, chat: FakeChat, user: FakeUser) -> list[dict[str, str]]:
        """The command list ``user`` sees in ``chat``, resolving scopes like Telegram."""
        language = (user.language_code or "")[:2]
        if chat.type == "private":
            scopes = [f"chat:{chat.id}", "all_private_chats", "default"]
        else:
            admin = chat.status_of(user.id) in ("creator", "administrator")
            scopes = [f"chat_member:{chat.id}:{user.id}"]
            scopes += [f"chat_administrators:{chat.id}"] if admin else []
            scopes += [f"chat:{chat.id}"]
            scopes += ["all_chat_administrators"] if admin else []
            scopes += ["all_group_chats", "default"]
        for key in scopes:
            for lang in ([language] if language else []) + [""]:
                found = self.world.commands.get((key, lang))
                if found:
                    return found
        return []

    def watch(self, chats: Iterable[FakeChat | FakeUser | int]) -> ChatWatch:
        """A `ChatWatch` woken by every answered bot call addressed to one of ``chats``
        (a user means their private chat)."""
        ids = {c if isinstance(c, int) else c.id for c in chats}
        watch = ChatWatch(self, ids)
        for chat_id in ids:
            self._watches[chat_id].add(watch)
        return watch

    @property
    def update_log(self) -> list[PendingUpdate]:
        """Every update emitted so far (confirmed or not), oldest first, with timing."""
        return self.world.update_log

    def handled_updates(
        self, kind: str | None = "callback_query", since: float = 0.0
    ) -> list[PendingUpdate]:
        """Updates (of ``kind``; None = all) created at/after ``since`` that the bot reacted
        to; their ``latency`` and ``age`` are set."""
        return [
            u for u in self.world.update_log
            if u.created_at >= since and u.handled_at is not None
            and u.offered_at is not None and (kind is None or u.kind == kind)
        ]

    # ======================================================================================
    # faults
    # ======================================================================================
    def inject(
        self,
        method: str | None = None,
        kind: str = "500",
        count: int = 1,
        *,
        retry_after: int = 1,
        chat: FakeChat | int | None = None,
        hold: float = 30.0,
        delay: float = 0.5,
        executed: bool = False,
        description: str | None = None,
        probability: float = 1.0,
        seed: int = 0,
    ) -> Fault:
        """Make the next ``count`` matching calls fail.

        ``method=None`` matches every method except getUpdates (name it explicitly).
        Kinds: ``"429"`` (RetryAfter, ``retry_after`` s), ``"500"``/``"502"``
        (NetworkError), ``"400"`` (BadRequest, ``description``), ``"403_blocked"``
        (Forbidden), ``"timeout"`` (hold the answer ``hold`` s, longer than the client
        waits), ``"reset"`` (close the connection abruptly), ``"slow"`` (answer normally
        after ``delay`` s).  With ``executed=True`` a timeout/reset happens *after* the
        call took effect (the message exists although the client saw an error); for
        ``getUpdates`` that means the updates were handed out and the answer is lost (only
        an answer carrying updates is hit).  With ``probability < 1`` each matching call
        is hit with that probability (drawn from ``random.Random(seed)``, so a failing run
        reproduces); ``count`` still bounds the hits.
        """
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {kind!r}; expected one of {sorted(FAULT_KINDS)}")
        if not 0.0 < probability <= 1.0:
            raise ValueError("probability must be in (0, 1]")
        chat_id = chat.id if isinstance(chat, FakeChat) else chat
        fault = Fault(
            kind, method, chat_id, count, retry_after, hold, delay, executed, description,
            probability, random.Random(seed),
        )
        self.faults.append(fault)
        return fault

    def clear_faults(self) -> None:
        """Remove all injected faults."""
        self.faults.clear()

    # ======================================================================================
    # waiting
    # ======================================================================================
    def _changed(self) -> None:
        for event in self._waiters:
            event.set()
        for listener in self.listeners:
            listener()

    async def wait_until(
        self, predicate: Callable[[], Any], timeout: float = 5.0, what: str | None = None
    ) -> Any:
        """Wait until ``predicate()`` is truthy and return its value.

        Re-evaluated after every API call and user action.  Exceptions raised by the
        predicate count as "not yet" (the last one is reported on timeout).
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        last_error: BaseException | None = None
        while True:
            try:
                value = predicate()
            except Exception as exc:
                value, last_error = None, exc
            if value:
                return value
            remaining = deadline - loop.time()
            if remaining <= 0:
                detail = f" (last predicate error: {last_error!r})" if last_error else ""
                raise WaitTimeout(
                    f"timed out after {timeout}s waiting for {what or predicate}{detail}\n"
                    + self.dump()
                )
            event = asyncio.Event()
            self._waiters.add(event)
            try:
                await asyncio.wait_for(event.wait(), remaining)
            except TimeoutError:
                pass
            finally:
                self._waiters.discard(event)

    async def wait_for_message(
        self,
        chat: FakeChat | FakeUser,
        match: str | re.Pattern[str] | Callable[[FakeMessage], Any] | None = None,
        *,
        from_bot: bool | None = True,
        after: FakeMessage | int | None = None,
        timeout: float = 5.0,
    ) -> FakeMessage:
        """The first message of ``chat`` (newer than ``after``) matching ``match``.

        ``match`` is a substring of the text/caption, a regex, or a predicate.
        Existing messages count too, so there is no race with a fast bot.
        """
        after_id = after.message_id if isinstance(after, FakeMessage) else (after or 0)
        check = _matcher(match)

        def find() -> FakeMessage | None:
            for message in self.chat_messages(chat, from_bot=from_bot):
                if message.message_id > after_id and check(message):
                    return message
            return None

        found: FakeMessage = await self.wait_until(
            find, timeout, what=f"a message matching {match!r} in {chat!r} after id {after_id}"
        )
        return found

    async def wait_for_call(
        self,
        method: str,
        predicate: Callable[[ApiCall], Any] | None = None,
        *,
        after: int = 0,
        timeout: float = 5.0,
    ) -> ApiCall:
        """The first finished call of ``method`` with ``seq > after`` matching ``predicate``."""
        name = method.lower()

        def find() -> ApiCall | None:
            for call in self.calls:
                if (
                    call.seq > after
                    and call.ok is not None
                    and call.method.lower() == name
                    and (predicate is None or predicate(call))
                ):
                    return call
            return None

        found: ApiCall = await self.wait_until(find, timeout, what=f"a call to {method}")
        return found

    async def idle(self, quiet: float = 0.05, timeout: float = 5.0) -> None:
        """Wait until all updates were fetched and no call happened for ``quiet`` s."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            calm = time.monotonic() - self._last_activity >= quiet
            if calm and self._inflight == 0 and not self.world.undelivered():
                return
            if loop.time() > deadline:
                raise WaitTimeout(f"the bot did not become idle within {timeout}s\n{self.dump()}")
            await asyncio.sleep(quiet / 2)

    # ======================================================================================
    # debugging
    # ======================================================================================
    def dump(self, calls: int = 15, messages: int = 6) -> str:
        """A readable summary of recent activity (used in timeout errors)."""
        lines = ["=== FakeTelegram state ===", f"last {calls} calls:"]
        lines += [f"  {call!r}" for call in self.calls[-calls:]]
        touched = {c.chat_id for c in self.calls[-50:]}
        for chat in self.world.chats.values():
            if chat.messages and (chat.id in touched or chat.type != "private"):
                lines.append(f"{chat!r}:")
                lines += [f"  {m!r}" for m in list(chat.messages.values())[-messages:]]
        undelivered = len(self.world.undelivered())
        lines.append(f"pending updates: {len(self.world.updates)} ({undelivered} never fetched)")
        if self.unanswered_callbacks():
            lines.append(f"unanswered callbacks: {self.unanswered_callbacks()}")
        if self.flood.violations:
            lines.append(f"flood violations: {self.flood.violations[-5:]}")
        active = [f for f in self.faults if f.remaining > 0]
        if active:
            lines.append(f"active faults: {active}")
        return "\n".join(lines)


def _chat_id_of(params: Params) -> int | str | None:
    chat_id = params.raw.get("chat_id")
    if isinstance(chat_id, str) and chat_id.lstrip("-").isdigit():
        return int(chat_id)
    return chat_id if isinstance(chat_id, int | str) else None


@functools.cache
def _shared_ssl_context() -> ssl.SSLContext:
    return ssl.create_default_context()


def _matcher(
    match: str | re.Pattern[str] | Callable[[FakeMessage], Any] | None,
) -> Callable[[FakeMessage], Any]:
    if match is None:
        return lambda message: True
    if isinstance(match, str):
        return lambda message: match in message.content
    if isinstance(match, re.Pattern):
        return lambda message: match.search(message.content) is not None
    return match


def _json_response(body: dict[str, Any], status: int) -> web.Response:
    try:
        data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates (forged non-UTF-8 data): JSON escapes
        data = json.dumps(body, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    return web.Response(body=data, status=status, content_type="application/json")
