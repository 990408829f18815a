"""The Mini App's HTTP server (aiohttp), run by the bot process beside the chat.

Routes:

* ``GET /`` — the page (``static/index.html``; Telegram's ``telegram-web-app.js``, or the
  stand-in the sandbox falls back to, from ``WEBAPP_TELEGRAM_JS``; a local file there,
  e.g. the tests' copy of Telegram's script, is served at ``/telegram-web-app.js``);
* ``POST /api/session`` ``{"init_data": …, "table": …}`` — validates Telegram's
  ``initData`` (:mod:`bot.webapp.auth`), finds the table (``table``, else the direct link's
  ``start_param``, else the user's running match) and checks the user may see it (seated,
  or a member of its group); answers a short-lived token and the first state;
* ``GET /api/events?token=…`` — Server-Sent Events: the current state, then every change
  (:mod:`bot.webapp.hub`); ``GET /api/state?token=…`` — the current state once. While a
  stream is open its user is *live* at that table (:mod:`bot.presence`: the chat sends
  them nothing per move); the page closes it when Telegram says it is inactive or it is
  hidden. A stream closed by the client is noticed within :data:`PRESENCE_POLL_SECONDS`
  (the transport is checked; a keep-alive alone would take 15 s);
* ``GET /api/review?token=…&smazzata=N`` — the review of a smazzata played to its end:
  its tricks and its sheet, replayed from the stored actions through the core (only what
  every player saw: :func:`bot.webapp.payload.review_payload`);
* ``POST /api/move`` ``{"version": N, "code": "cAd"}`` (``Authorization: Bearer``) — the
  move goes through the same path as a button press (``Tables.human_action``: version
  check, game lock, one transaction), then the chat is redrawn as after a press.

Errors are JSON ``{"ok": false, "error": code, "message": text}``: 400 malformed, 401
authentication, 403 not allowed, 404 no such table, 409 stale, 413 too large, 422 not a
legal move now, 429 too many requests, 503 storage down.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

from aiohttp import web
from telegram.error import TelegramError

from bot.i18n import LANGUAGES, tr
from bot.presence import Presence
from bot.service import GameService, Refused, match_prefs
from bot.webapp import share
from bot.webapp.auth import AuthError, Grant, Tokens, WebAppUser, validate_init_data
from bot.webapp.hub import Connection, Hub, Viewer, sse
from bot.webapp.payload import (
    TableState,
    closed_payload,
    replay_to_smazzata,
    review_payload,
    state_payload,
)
from bot.webapp.share import Sharer
from game import Game
from storage import GameRow, StorageUnavailable, repo

log = logging.getLogger(__name__)

STATIC_DIR = Path(str(files("bot.webapp") / "static"))
TELEGRAM_JS = "https://telegram.org/js/telegram-web-app.js"
#: Bodies larger than this are refused (413): a move is a few dozen bytes.
MAX_BODY = 8 * 1024
#: Seconds without a change after which an SSE comment keeps proxies and clients alive.
KEEPALIVE_SECONDS = 15.0
#: Seconds a client may take to accept one event before it is disconnected.
WRITE_TIMEOUT = 10.0
#: How often the open streams are checked for a client gone (presence follows).
PRESENCE_POLL_SECONDS = 0.5
#: Live connections one user may hold (the oldest is closed beyond).
MAX_CONNECTIONS_PER_USER = 4
#: Requests a client may make at once, then per second (token bucket, per user or address).
BURST, RATE = 10.0, 4.0
#: The language of a request's answers.
LANG = web.RequestKey("lang", str)
_CODE = re.compile(r"[A-Za-z0-9.]{1,12}")
_TABLE = re.compile(r"[0-9]{1,18}")

#: Applies a move for a user: (game, version, user, code); raises Refused.
Mover = Callable[[int, int, int, str], Awaitable[None]]
#: Opens the rivincita of a finished game for a user: (game, user) -> (new game, started);
#: raises Refused.
Rematcher = Callable[[int, int], Awaitable[tuple[int, bool]]]
#: Whether a user is a member of a group chat.
MemberCheck = Callable[[int, int], Awaitable[bool]]


class ApiError(Exception):
    def __init__(self, status: int, code: str, **values: object) -> None:
        super().__init__(code)
        self.status, self.code, self.values = status, code, values


@dataclass
class Bucket:
    tokens: float
    at: float


class RateLimit:
    """A token bucket per key: ``burst`` at once, refilled at ``rate`` per second."""

    def __init__(self, burst: float = BURST, rate: float = RATE, size: int = 10_000) -> None:
        self.burst, self.rate, self.size = burst, rate, size
        self._buckets: dict[object, Bucket] = {}

    def allow(self, key: object, now: float | None = None) -> bool:
        now = time.monotonic() if now is None else now
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= self.size:  # forget the idle ones
                self._buckets = {k: b for k, b in self._buckets.items()
                                 if b.tokens + (now - b.at) * self.rate < self.burst}
            bucket = self._buckets[key] = Bucket(self.burst, now)
        bucket.tokens = min(self.burst, bucket.tokens + (now - bucket.at) * self.rate)
        bucket.at = now
        if bucket.tokens < 1:
            return False
        bucket.tokens -= 1
        return True


class WebAppServer:
    def __init__(
        self, service: GameService, *, bot_token: str, mover: Mover, is_member: MemberCheck,
        max_age: float = 86400.0, telegram_js: str = TELEGRAM_JS,
        default_language: str = "it", token_ttl: float = 900.0,
        presence: Presence | None = None, sharer: Sharer | None = None,
        rematcher: Rematcher | None = None,
    ) -> None:
        self.service = service
        #: Saves a result card for the page's "share" (None: no sharing)
        self.sharer = sharer
        self.bot_token = bot_token
        self.mover = mover
        #: 🔁 Rivincita from the result sheet (bot/features/rematch.py); None: not offered.
        self.rematcher = rematcher
        self.is_member = is_member
        self.max_age = max_age
        self.default_language = default_language
        self.tokens = Tokens(bot_token, token_ttl)
        self.hub = Hub(self._load, self._builder)
        self.limits = RateLimit()
        #: Sessions opened per address (behind a proxy every user shares one: generous;
        #: each user has the ``limits`` bucket too once their initData is valid).
        self.address_limits = RateLimit(burst=200, rate=50)
        #: Telegram's script from a file here (the tests' copy of npm's @twa-dev/sdk):
        #: served at /telegram-web-app.js; else ``telegram_js`` is the script's address.
        self._telegram_file = Path(telegram_js) if telegram_js.endswith(".js") and \
            Path(telegram_js).is_file() else None
        if self._telegram_file is not None:
            telegram_js = "telegram-web-app.js"
        self._index = (STATIC_DIR / "index.html").read_text(encoding="utf-8").replace(
            "{{telegram_js}}", telegram_js)
        self._runner: web.AppRunner | None = None
        self._streams: set[asyncio.Task[Any]] = set()
        #: Who is live at which table (the chat's renderer reads it).
        self.presence = presence or Presence()
        #: Open streams and their requests (checked for a client gone).
        self._live: dict[Connection, web.Request] = {}
        self._sweeper: asyncio.Task[None] | None = None
        self.port = 0
        service.listeners.append(self.hub.changed)

    # ------------------------------------------------------------------ lifecycle

    def application(self) -> web.Application:
        app = web.Application(client_max_size=MAX_BODY, middlewares=[self._errors])
        app.router.add_get("/", self._page)
        app.router.add_post("/api/session", self._session)
        app.router.add_get("/api/events", self._events)
        app.router.add_get("/api/state", self._state)
        app.router.add_post("/api/move", self._move)
        app.router.add_post("/api/rematch", self._rematch)
        app.router.add_get("/api/review", self._review)
        app.router.add_get("/api/ratings", self._ratings)
        app.router.add_post("/api/share", self._share)
        app.router.add_static("/static/", STATIC_DIR)
        if self._telegram_file is not None:
            app.router.add_get("/telegram-web-app.js", self._telegram_script)
        return app

    async def start(self, host: str, port: int) -> int:
        runner = web.AppRunner(self.application(), access_log=None, shutdown_timeout=1.0)
        await runner.setup()
        site = web.TCPSite(runner, host, port, reuse_address=True)
        await site.start()
        self._runner = runner
        self._sweeper = asyncio.get_running_loop().create_task(
            self._sweep(), name="webapp-presence")
        self.port = runner.addresses[0][1]
        log.info("Mini App server listening on %s:%d", host, self.port)
        return self.port

    async def stop(self) -> None:
        if self.hub.changed in self.service.listeners:
            self.service.listeners.remove(self.hub.changed)
        if self._sweeper is not None:
            self._sweeper.cancel()
            await asyncio.gather(self._sweeper, return_exceptions=True)
        await self.hub.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # ------------------------------------------------------------------ plumbing

    @web.middleware
    async def _errors(self, request: web.Request, handler: Any) -> web.StreamResponse:
        try:
            response: web.StreamResponse = await handler(request)
        except ApiError as exc:
            return self._error(request, exc.status, exc.code, **exc.values)
        except web.HTTPRequestEntityTooLarge:
            return self._error(request, 413, "webapp.too_large")
        except StorageUnavailable:
            return self._error(request, 503, "storage.not_saved")
        if request.path.startswith("/static/cards/"):
            response.headers["Cache-Control"] = "public, max-age=604800, immutable"
        if request.path.endswith(".webp"):  # (Python's mime table lacks it before 3.13)
            response.headers["Content-Type"] = "image/webp"
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        return response

    def _error(self, request: web.Request, status: int, code: str,
               **values: object) -> web.Response:
        lang = request.get(LANG, self.default_language)
        return web.json_response(
            {"ok": False, "error": code, "message": tr(lang, code, **values)}, status=status)

    async def _body(self, request: web.Request) -> dict[str, Any]:
        if request.content_length is not None and request.content_length > MAX_BODY:
            raise ApiError(413, "webapp.too_large")
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise ApiError(400, "webapp.bad_request") from None
        if not isinstance(body, dict):
            raise ApiError(400, "webapp.bad_request")
        return body

    def _limit(self, key: object) -> None:
        if not self.limits.allow(key):
            raise ApiError(429, "webapp.too_many")

    def _grant(self, request: web.Request) -> Grant:
        header = request.headers.get("Authorization", "")
        token = header[7:] if header.startswith("Bearer ") else request.query.get("token")
        try:
            grant = self.tokens.check(token)
        except AuthError:
            raise ApiError(401, "webapp.auth") from None
        request[LANG] = request.query.get("lang", self.default_language)
        return grant

    async def _load(self, game_id: int) -> tuple[GameRow, Game | None] | None:
        row = await self.service.latest(game_id)
        if row is None:
            return None
        try:
            game = self.service.game_of(row)
        except Refused:
            return row, None
        return row, game

    def _view_of(self, row: GameRow, game: Game | None, user_id: int,
                 lang: str) -> tuple[str, dict[str, Any]]:
        """What ``user_id`` may see of the table: its seat's state, the group's state for
        a member who is not seated, or that the table is closed (the SSE event's name)."""
        if game is None or row.status not in ("playing", "finished"):
            return "closed", closed_payload(row, lang)
        seat = row.seat_of(user_id)
        payload = state_payload(row, game, None if seat is None else seat.seat, lang)
        payload["now"] = time.time()
        return "state", payload

    def _builder(self, row: GameRow, game: Game | None) -> Viewer:
        """The events of one push (or one new stream's first): the table's state is built
        once per language (:class:`TableState`), then each viewer's own part."""
        if game is None or row.status not in ("playing", "finished"):
            return lambda user_id, lang: sse("closed", closed_payload(row, lang))
        now = time.time()
        states: dict[str, TableState] = {}

        def build(user_id: int, lang: str) -> bytes:
            state = states.get(lang)
            if state is None:
                state = states[lang] = TableState(row, game, lang)
            seat = row.seat_of(user_id)
            return state.event(None if seat is None else seat.seat, now)
        return build

    def _language(self, user: WebAppUser, row: GameRow) -> str:
        code = (user.language_code or "").split("-")[0].lower()
        return code if code in LANGUAGES else match_prefs(row).language

    # ------------------------------------------------------------------ routes

    async def _page(self, request: web.Request) -> web.Response:
        return web.Response(text=self._index, content_type="text/html",
                            headers={"Cache-Control": "no-cache"})

    async def _telegram_script(self, request: web.Request) -> web.FileResponse:
        assert self._telegram_file is not None
        return web.FileResponse(self._telegram_file, headers={
            "Content-Type": "application/javascript", "Cache-Control": "no-cache"})

    async def _session(self, request: web.Request) -> web.Response:
        if not self.address_limits.allow(request.remote):
            raise ApiError(429, "webapp.too_many")
        body = await self._body(request)
        init_data = body.get("init_data")
        try:
            user = validate_init_data(init_data if isinstance(init_data, str) else "",
                                      self.bot_token, self.max_age)
        except AuthError as exc:
            log.info("Mini App session refused: %s", exc)
            raise ApiError(401, "webapp.auth") from None
        self._limit(("user", user.id))
        row = await self._table_for(user, body.get("table"))
        lang = self._language(user, row)
        request[LANG] = lang
        await self._check_access(user.id, row)
        loaded = await self._load(row.game_id)
        if loaded is None:
            raise ApiError(404, "webapp.no_table")
        token = self.tokens.issue(user.id, row.game_id)
        _, state = self._view_of(*loaded, user.id, lang)
        return web.json_response({"ok": True, "token": token, "table": row.game_id,
                                  "lang": lang, "ttl": self.tokens.ttl, "state": state})

    async def _table_for(self, user: WebAppUser, asked: object) -> GameRow:
        wanted = asked if isinstance(asked, str | int) and not isinstance(asked, bool) else None
        wanted = wanted if wanted not in (None, "") else user.start_param
        if wanted is not None:
            text = str(wanted)
            if not _TABLE.fullmatch(text):
                raise ApiError(404, "webapp.no_table")
            row = await self.service.fetch(int(text))
            if row is None or row.status in ("lobby",):
                raise ApiError(404, "webapp.no_table")
            return row
        for row in await repo.games_of_user(self.service.db, user.id):
            if row.status == "playing":
                return row
        raise ApiError(404, "webapp.no_table")

    async def _check_access(self, user_id: int, row: GameRow) -> None:
        """Seated players, and members of the table's group (who see what it sees)."""
        if row.seat_of(user_id) is not None:
            return
        if row.chat_id > 0:  # a private chat's table: only its owner's
            if row.chat_id != user_id:
                raise ApiError(403, "webapp.not_member")
            return
        if not await self.is_member(row.chat_id, user_id):
            raise ApiError(403, "webapp.not_member")

    async def _state(self, request: web.Request) -> web.Response:
        grant = self._grant(request)
        self._limit(("user", grant.user_id))
        loaded = await self._load(grant.game_id)
        if loaded is None:
            raise ApiError(404, "webapp.no_table")
        lang = request[LANG] if request[LANG] in LANGUAGES else self.default_language
        return web.json_response(self._view_of(*loaded, grant.user_id, lang)[1])

    async def _events(self, request: web.Request) -> web.StreamResponse:
        grant = self._grant(request)
        self._limit(("user", grant.user_id))
        lang = request[LANG] if request[LANG] in LANGUAGES else self.default_language
        loaded = await self._load(grant.game_id)
        if loaded is None:
            raise ApiError(404, "webapp.no_table")
        older = self.hub.of_user(grant.user_id)
        for conn in older[: max(0, len(older) + 1 - MAX_CONNECTIONS_PER_USER)]:
            self.hub.remove(conn)
        response = web.StreamResponse(headers={
            "Content-Type": "text/event-stream", "Cache-Control": "no-cache",
            "X-Accel-Buffering": "no"})
        await response.prepare(request)
        conn = Connection(grant.user_id, grant.game_id, lang)
        self.hub.add(conn)
        self._live[conn] = request
        self.presence.opened(grant.game_id, grant.user_id)
        conn.push(self._builder(*loaded)(grant.user_id, lang))  # the current state first
        try:
            while not conn.closed:
                data = await conn.next(KEEPALIVE_SECONDS)
                if conn.closed:
                    break
                if grant.expires < time.time():
                    data = sse("expired", {})
                    conn.closed = True
                async with asyncio.timeout(WRITE_TIMEOUT):  # (no task a write)
                    await response.write(data or b": keep-alive\n\n")
        except (ConnectionResetError, TimeoutError, asyncio.CancelledError):
            pass
        finally:
            self.hub.remove(conn)
            if self._live.pop(conn, None) is not None:
                self.presence.closed(grant.game_id, grant.user_id)
        return response

    async def _sweep(self) -> None:
        """Close the streams whose client has gone (the page closed its EventSource, or
        the connection dropped): their handler ends and the presence follows at once,
        not at the next keep-alive."""
        while True:
            await asyncio.sleep(PRESENCE_POLL_SECONDS)
            for conn, request in list(self._live.items()):
                transport = request.transport
                if transport is None or transport.is_closing():
                    conn.close()

    async def _review(self, request: web.Request) -> web.Response:
        grant = self._grant(request)
        self._limit(("user", grant.user_id))
        lang = request[LANG] if request[LANG] in LANGUAGES else self.default_language
        wanted = request.query.get("smazzata", "")
        if not _TABLE.fullmatch(wanted):
            raise ApiError(400, "webapp.bad_request")
        row = await self.service.latest(grant.game_id)
        if row is None or row.seed is None:
            raise ApiError(404, "webapp.no_table")
        actions = await repo.load_actions(self.service.db, grant.game_id)
        game = replay_to_smazzata(match_prefs(row).options, row.seed,
                                  [(a.seat, a.code) for a in actions if a.seat is not None],
                                  int(wanted))
        if game is None:  # not played to its end (yet)
            raise ApiError(404, "webapp.no_table")
        seat = row.seat_of(grant.user_id)
        return web.json_response(review_payload(row, game, None if seat is None else seat.seat,
                                                lang))

    async def _scored_table(self, request: web.Request, wanted: object) -> tuple[
            Grant, GameRow, Game, int]:
        """The grant's table, seen by a player or a member, and a smazzata it scored."""
        grant = self._grant(request)
        self._limit(("user", grant.user_id))
        if not isinstance(wanted, str | int) or isinstance(wanted, bool) \
                or not _TABLE.fullmatch(str(wanted)):
            raise ApiError(400, "webapp.bad_request")
        loaded = await self._load(grant.game_id)
        if loaded is None or loaded[1] is None:
            raise ApiError(404, "webapp.no_table")
        await self._check_access(grant.user_id, loaded[0])
        return grant, loaded[0], loaded[1], int(wanted)

    async def _ratings(self, request: web.Request) -> web.Response:
        """The rating changes of a result sheet (bot/webapp/share.py)."""
        _, row, game, smazzata = await self._scored_table(request,
                                                          request.query.get("smazzata", ""))
        lang = request[LANG] if request[LANG] in LANGUAGES else self.default_language
        return web.json_response(await share.rating_lines(self.service, row, game, smazzata,
                                                          lang))

    async def _share(self, request: web.Request) -> web.Response:
        """A result card saved for the user to share (``shareMessage``, Bot API 8.0)."""
        body = await self._body(request)
        grant, row, game, smazzata = await self._scored_table(request, body.get("smazzata"))
        if self.sharer is None:
            raise ApiError(404, "webapp.no_share")
        lang = self._seat_language(row, grant.user_id)
        try:
            card = await share.result_card(self.service, row, game, smazzata, lang)
        except share.NotFound:
            raise ApiError(404, "webapp.no_table") from None
        try:
            prepared = await self.sharer(grant.user_id, card, lang)
        except TelegramError as exc:
            log.warning("could not prepare the share of %s: %s", grant.user_id, exc)
            raise ApiError(502, "webapp.no_share") from None
        return web.json_response({"ok": True, "id": prepared})

    async def _move(self, request: web.Request) -> web.Response:
        grant = self._grant(request)
        self._limit(("user", grant.user_id))
        body = await self._body(request)
        version, code = body.get("version"), body.get("code")
        if (not isinstance(version, int) or isinstance(version, bool) or version < 0
                or not isinstance(code, str) or not _CODE.fullmatch(code)):
            raise ApiError(400, "webapp.bad_request")
        row = await self.service.latest(grant.game_id)
        if row is None:
            raise ApiError(404, "webapp.no_table")
        request[LANG] = self._seat_language(row, grant.user_id)
        if row.seat_of(grant.user_id) is None:  # a member watching: nothing to play
            raise ApiError(403, "alert.not_seated")
        try:
            await self.mover(grant.game_id, version, grant.user_id, code)
        except Refused as exc:
            status, key = _refusal(exc.code)
            raise ApiError(status, key, **exc.values) from None
        return web.json_response({"ok": True})

    async def _rematch(self, request: web.Request) -> web.Response:
        """🔁 Rivincita pressed on the final sheet: the same as the chat's button; the new
        table's id, and whether it started (the page then follows it)."""
        grant = self._grant(request)
        self._limit(("user", grant.user_id))
        row = await self.service.latest(grant.game_id)
        if row is None or self.rematcher is None:
            raise ApiError(404, "webapp.no_table")
        request[LANG] = self._seat_language(row, grant.user_id)
        try:
            table, started = await self.rematcher(grant.game_id, grant.user_id)
        except Refused as exc:
            raise ApiError(409, exc.code, **exc.values) from None
        return web.json_response({"ok": True, "table": table, "started": started,
                                  "message": tr(request[LANG], "rematch.opened")})

    def _seat_language(self, row: GameRow, user_id: int) -> str:
        seat = row.seat_of(user_id)
        code = ((seat.language_code if seat else None) or "").split("-")[0].lower()
        return code if code in LANGUAGES else match_prefs(row).language


def _refusal(code: str) -> tuple[int, str]:
    """HTTP status and message key of a refused move."""
    if code == "alert.stale":
        return 409, "webapp.stale"
    if code in ("alert.not_seated",):
        return 403, code
    if code == "alert.not_playing":
        return 409, code
    if code in ("alert.no_game",):
        return 404, "webapp.no_table"
    return 422, code
