"""The Mini App's ratings and "share" (issue 48).

``GET api/ratings?smazzata=N``: the rating change of each player in the unit that
smazzata ended (none for a smazzata that ended none: plain Briscola rates the match),
for the result sheet. ``POST api/share {"smazzata": N}``: the result card of that
smazzata (the chat's result text with the rating changes, and a link to play) saved for
the user with the Bot API's ``savePreparedInlineMessage`` (8.0); the page then calls
``Telegram.WebApp.shareMessage(id)``, behind ``isVersionAtLeast("8.0")``, and the user
picks the chat it goes to.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from bot.i18n import tr
from bot.ratings import model
from bot.ratings import texts as rating_texts
from bot.render import texts
from bot.service import GameService, result_from_json
from bot.tables.render import seat_names
from bot.webapp.payload import plain
from game import Game
from storage import GameRow, repo
from storage import ratings as rating_store

#: Saves a prepared inline message for a user: (user id, text as HTML, language) -> its
#: id (``savePreparedInlineMessage``).
Sharer = Callable[[int, str, str], Awaitable[str]]


class NotFound(Exception):
    """No such smazzata scored at this table (yet)."""


async def rating_lines(
    service: GameService, row: GameRow, game: Game, smazzata: int, lang: str
) -> dict[str, Any]:
    """The rating block of a result sheet, for the page."""
    changes = (await rating_store.game_changes(service.db, row.game_id)).get(smazzata, ())
    names = seat_names(row, game, lang)
    seen: set[str] = set()
    lines = []
    for seat in changes:
        if seat.player in seen:
            continue
        seen.add(seat.player)
        after = model.shown(seat.mu, seat.sigma)
        name = names[seat.seat] if seat.seat < len(names) else ""
        lines.append({
            "seat": seat.seat,
            "name": plain(rating_texts.player_name(lang, seat.player, name)),
            "rating": after,
            "change": after - model.shown(seat.mu_before, seat.sigma_before),
        })
    return {"smazzata": smazzata, "title": plain(tr(lang, "rating.changes")), "lines": lines}


async def result_card(
    service: GameService, row: GameRow, game: Game, smazzata: int, lang: str
) -> str:
    """The card a player shares: the smazzata's result as the chat shows it (with the
    rating changes when it ended a rated unit), without "next smazzata"."""
    stored = {r.smazzata_index: r for r in await repo.load_smazzata_results(service.db,
                                                                              row.game_id)}
    if smazzata not in stored:
        raise NotFound(smazzata)
    result = result_from_json(stored[smazzata].result_json)
    names = seat_names(row, game, lang)
    style = game.options.deck_style.value
    text = texts.any_result_text(lang, style, result, names, True, game.morto)
    changes = (await rating_store.game_changes(service.db, row.game_id)).get(smazzata)
    return rating_texts.with_changes(lang, text, changes, names) if changes else text
