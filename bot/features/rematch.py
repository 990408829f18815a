"""🔁 Rivincita (issue 48): the last message of a finished match (and the Mini App's
result sheet) carries a button; one press by a player of that match opens a lobby in the
same chat (and topic) with the same settings and the same seats, the computers in theirs.

* The presser is seated and counts as confirmed; every other person of the match is
  seated too but *waiting*: their "✅ Ci sono" press confirms. A seat not confirmed
  within :data:`CONFIRM_SECONDS` is freed and offered like any empty seat (the lobby's
  usual buttons). Once every seat is taken and nobody is waiting, the match starts.
* Alone in a private chat (only computers beside the person): one press and the same
  computers deal again.
* A second press (by anyone) or a press by someone who did not play: a short alert.
* Seats freed for want of a confirmation make the lobby one "with seats" like any other:
  the group's ``/avvisami`` subscribers are told then (:mod:`bot.features.notify`; not
  the people whose seats were freed: they saw the lobby already).

State: the finished game's UI JSON records the lobby it opened (``rematch``); the lobby's
records where it came from (``rematch_of``), who is still waiting (``wait``), until
when (``until``) and the group's title for ``/avvisami`` (``title``); see
:func:`bot.features.lobby_message.waiting_of`. The expiry is a named job
(``rematch:<lobby>``), armed again after a restart (:func:`resume`).
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from telegram import Update
from telegram.ext import Application, CallbackQueryHandler, ContextTypes

from bot import callbacks as cb
from bot.features import notify, seasons
from bot.features.common import alert, answer
from bot.features.lobby_message import show_lobby, waiting_of
from bot.i18n import tr
from bot.prefs import is_private_chat, seat_count
from bot.runtime import Runtime, rt_of
from bot.service import Refused, match_prefs
from bot.tables import ui_patch
from storage import ActiveGameExists, GameRow, SeatRow, StatusConflict, repo

log = logging.getLogger(__name__)

#: Seconds a person of the last match has to confirm their seat (the default turn time).
CONFIRM_SECONDS = 90.0
#: UI JSON keys (see the module docstring).
OPENED, ORIGIN, WAIT, UNTIL, TITLE = "rematch", "rematch_of", "wait", "until", "title"


def opened_from(row: GameRow) -> int | None:
    """The lobby a finished game's rivincita opened, if any."""
    try:
        value = json.loads(row.ui_json or "{}").get(OPENED)
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, int) else None


async def rematch(rt: Runtime, game_id: int, user_id: int,
                  group_title: str = "") -> tuple[int, bool]:
    """Open the rivincita of finished game ``game_id`` for ``user_id`` (raises
    :class:`Refused`): the new game's id, and whether it started at once (nobody else
    to wait for). The chat's button and the Mini App's both come here (``group_title``:
    the group's, if the update carried it, for ``/avvisami``)."""
    old = await rt.service.row(game_id)
    seat = old.seat_of(user_id)
    if seat is None or not seat.is_human:
        raise Refused("rematch.not_player")
    if old.status != "finished":
        raise Refused("rematch.not_over")
    if opened_from(old) is not None:
        raise Refused("rematch.already")
    prefs = match_prefs(old)
    current = await rt.chat_prefs(old.chat_id)
    ui = {**ui_patch({"creator": seat.display_name}), ORIGIN: old.game_id}
    try:
        new_id = await rt.service.open_lobby(
            old.chat_id, old.thread_id, user_id, prefs.to_json(), json.dumps(ui)
        )
    except ActiveGameExists:
        raise Refused("rematch.busy") from None
    await rt.service.save_ui(old.game_id, {OPENED: new_id})
    await seasons.open_with_podium(rt, new_id, old.chat_id)
    if current != prefs:  # the same settings: the chat's from now on (as /nuova briscola 2)
        await repo.save_chat_settings(rt.db, old.chat_id, prefs.language, prefs.to_json())
    size = seat_count(prefs.options)
    waiting: list[int] = []
    for old_seat in sorted(old.seats, key=lambda s: s.seat):
        if old_seat.is_human and old_seat.user_id is not None:
            new_seat = SeatRow.human(0, old_seat.user_id, old_seat.display_name,
                                     old_seat.language_code)
            if old_seat.user_id != user_id:
                waiting.append(old_seat.user_id)
        else:
            new_seat = SeatRow.computer(0, old_seat.display_name, old_seat.computer_level)
        await rt.service.take_seat(new_id, new_seat, size)
    log.info("game %s: rivincita %s opened by %s (waiting for %s)", old.game_id, new_id,
             user_id, waiting)
    if not waiting:
        return new_id, await start_if_ready(rt, new_id)
    until = time.time() + CONFIRM_SECONDS
    await rt.service.save_ui(new_id, {WAIT: waiting, UNTIL: until, TITLE: group_title or None})
    arm(rt, new_id, until)
    show_lobby(rt, new_id)
    return new_id, False


async def confirm(rt: Runtime, game_id: int, user_id: int) -> None:
    """A person of the last match confirms their seat in the rivincita's lobby."""
    row = await rt.service.row(game_id)
    if row.status != "lobby":
        raise Refused("alert.lobby_closed")
    waiting = waiting_of(row)
    if user_id not in waiting:
        raise Refused("rematch.confirmed" if row.seat_of(user_id) is not None
                      else "rematch.not_player")
    left = [u for u in waiting if u != user_id]
    await rt.service.save_ui(game_id, {WAIT: left} if left else {WAIT: None, UNTIL: None})
    if not left:
        cancel_job(rt, game_id)
        if await start_if_ready(rt, game_id):
            return
    show_lobby(rt, game_id)


async def start_if_ready(rt: Runtime, game_id: int) -> bool:
    """Start the lobby if every seat is taken and nobody is waiting. True if started."""
    row = await rt.service.row(game_id)
    prefs = await rt.chat_prefs(row.chat_id)
    if row.status != "lobby" or waiting_of(row) or len(row.seats) != seat_count(prefs.options):
        return False
    try:
        new_row, _ = await rt.service.start(game_id, row.seats, prefs)
    except StatusConflict:
        return False
    show_lobby(rt, new_row.game_id, "started")
    rt.tables.background(rt.tables.after_start(game_id))
    return True


async def expire(rt: Runtime, game_id: int) -> None:
    """The time to confirm is over: the seats of who did not confirm are free."""
    row = await rt.service.fetch(game_id)
    if row is None or row.status != "lobby":
        return
    waiting = waiting_of(row)
    if not waiting:
        return
    for user_id in waiting:
        seat = row.seat_of(user_id)
        if seat is not None:
            await rt.service.free_seat(game_id, seat.seat)
    title = json.loads(row.ui_json or "{}").get(TITLE)
    await rt.service.save_ui(game_id, {WAIT: None, UNTIL: None, TITLE: None})
    log.info("rivincita %s: %s did not confirm in time, their seats are free", game_id,
             waiting)
    show_lobby(rt, game_id)
    if not is_private_chat(row.chat_id):  # a lobby with seats now: "/avvisami"
        notify.lobby_opened(rt, game_id, title if isinstance(title, str) else "",
                            skip=frozenset(waiting))


# --------------------------------------------------------------------------- the timer


def _job_name(game_id: int) -> str:
    return f"rematch:{game_id}"


def arm(rt: Runtime, game_id: int, until: float) -> None:
    """The named job that frees the unconfirmed seats at ``until``."""
    queue = rt.tables.app.job_queue
    if queue is None:  # (no job queue: the seats stay until someone leaves)
        return
    cancel_job(rt, game_id)
    queue.run_once(_expire_job, max(0.0, until - time.time()), data=game_id,
                   name=_job_name(game_id))


def cancel_job(rt: Runtime, game_id: int) -> None:
    queue = rt.tables.app.job_queue
    if queue is not None:
        for job in queue.get_jobs_by_name(_job_name(game_id)):
            job.schedule_removal()


async def _expire_job(context: ContextTypes.DEFAULT_TYPE) -> None:
    job = context.job
    assert job is not None and isinstance(job.data, int)
    await expire(rt_of(context), job.data)


async def resume(rt: Runtime) -> None:
    """After a restart: the rivincita lobbies still waiting get their timer again."""
    for row in await repo.list_unfinished_games(rt.db):
        if row.status == "lobby" and waiting_of(row):
            until = json.loads(row.ui_json or "{}").get(UNTIL)
            arm(rt, row.game_id, float(until) if isinstance(until, int | float) else 0.0)


# --------------------------------------------------------------------------- the button


async def on_rematch_button(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """``r:<gid>:go`` on a finished match's last message, ``r:<gid>:ok`` in the lobby."""
    query, rt = update.callback_query, rt_of(context)
    assert query is not None
    user = query.from_user
    lang = await rt.user_language(user, update.effective_chat)
    try:
        data = cb.parse(query.data)
        op = data.parts[0]
        if op == "go":
            chat = update.effective_chat
            await rematch(rt, data.game_id, user.id, (chat.title or "") if chat else "")
            await answer(query, tr(lang, "rematch.opened"))
        elif op == "ok":
            await confirm(rt, data.game_id, user.id)
            await answer(query, tr(lang, "rematch.thanks"))
        else:
            raise cb.BadCallback(query.data)
    except Refused as exc:
        await alert(query, exc.text(lang))
    except cb.BadCallback:
        await alert(query, tr(lang, "alert.bad_button"))


def register(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
    app.add_handler(CallbackQueryHandler(on_rematch_button, pattern=r"^r:"))
