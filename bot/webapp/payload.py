"""What the Mini App shows one viewer: a JSON-ready dict built from the core's view.

Everything here comes from ``game.view(seat)`` (``None``: what the group sees) and the
table's public facts (names, dealer, away seats, the turn's deadline); nothing reads a
hand or the socio from the game itself. The actions offered are ``view.legal`` (the
core's legal actions), grouped for drawing; their texts are the chat's (bot.render.texts).
"""

from __future__ import annotations

import html
import re
from typing import Any

from bot.i18n import tr, trn
from bot.render import texts
from bot.render.keyboards import COSTLY_PREFIXES
from bot.service import match_prefs
from bot.tables.render import seat_names
from bot.webapp.decks import pictures_of
from game import Game, View
from game.cards import card_code, parse_card
from storage import GameRow

_TAG = re.compile(r"<[^>]+>")
#: Static texts of the page, sent with every state (so a language switch needs no reload).
UI_KEYS = (
    "webapp.title", "webapp.hand", "webapp.auction", "webapp.scores", "webapp.briscola",
    "webapp.called", "webapp.face_up", "webapp.partner_hand", "webapp.declare",
    "webapp.name_card", "webapp.spectator", "webapp.offline", "webapp.over",
    "webapp.confirm", "webapp.dealer",
)


def plain(text: str) -> str:
    """A chat text (Telegram HTML) as plain text for the page."""
    return html.unescape(_TAG.sub("", text))


def _cards(cards: tuple[int, ...] | list[int]) -> list[str]:
    return [card_code(c) for c in cards]


def _actions(lang: str, style: str, view: View) -> dict[str, Any]:
    """``view.legal`` grouped for drawing: plain calls, families of calls at points (one
    stepper each), suits, cards to name. Nothing is added or removed."""
    calls: list[dict[str, Any]] = []
    families: dict[str, dict[str, Any]] = {}
    suits: list[dict[str, str]] = []
    name_cards: list[str] = []
    for code in view.legal:
        kind = code[0]
        if code in ("P", "K", "M") or kind == "r":
            calls.append({"code": code, "text": texts.bid_text(lang, style, code),
                          "confirm": code.startswith(COSTLY_PREFIXES)})
        elif kind in "tn":
            key = "bid.two" if kind == "t" else "bid.points"
            family = families.setdefault(kind, {"prefix": kind, "values": [],
                                                "template": plain(tr(lang, key, points="{n}"))})
            family["values"].append(int(code[1:]))
        elif kind == "o":
            rank, points = code[1:].split(".")
            key = "o" + rank
            template = plain(tr(lang, "bid.obbligato", rank=texts.rank_name(style, rank),
                                points="{n}"))
            family = families.setdefault(key, {"prefix": key + ".", "values": [],
                                               "template": template})
            family["values"].append(int(points))
        elif kind == "s":
            suits.append({"code": code,
                          "text": texts.suit_name(style, "cdsb".index(code[1]))})
        elif kind == "d":
            name_cards.append(code[1:])
    return {"calls": calls, "points": list(families.values()), "suits": suits,
            "name_cards": name_cards}


def _result(lang: str, style: str, view: View, names: list[str]) -> str | None:
    last = view.last_briscola if view.game == "briscola" else view.last_scored
    if last is None:
        return None
    return plain(texts.any_result_text(lang, style, last, names, view.final is not None,
                                       view.morto))


def state_payload(row: GameRow, game: Game, seat: int | None, lang: str) -> dict[str, Any]:
    """The state one viewer may see: ``seat`` is theirs, or None (the group's view)."""
    if seat is not None and game.morto == seat:
        seat = None
    view = game.view(seat)
    prefs = match_prefs(row)
    style = view.options.deck_style.value
    names = seat_names(row, game, lang)
    seat_rows = {s.seat: s for s in row.seats}
    legal = set(view.legal)
    my_turn = seat is not None and view.current_seat == seat
    status = ""
    if view.phase != "over" and view.current_seat is not None:
        status = plain(tr(lang, "table.your_turn") if my_turn
                       else tr(lang, "table.turn", name=texts.esc(names[view.current_seat])))
    seats = []
    for n in range(view.players):
        s = seat_rows.get(n)
        seats.append({
            "seat": n, "name": names[n], "you": n == seat, "dealer": n == view.dealer,
            "turn": n == view.current_seat, "cards": view.hand_sizes[n],
            "total": view.totals[n] if n < len(view.totals) else 0,
            "computer": s is not None and not s.is_human, "away": bool(s and s.away),
            "morto": n == view.morto, "chiamante": n == view.chiamante,
            "socio": view.socio is not None and n == view.socio and not view.solo,
        })
    last_trick = None
    if view.tricks:
        t = view.tricks[-1]
        winner = "?" if t.winner is None else texts.esc(names[t.winner])
        last_trick = {"winner": t.winner, "plays": [[s, card_code(c)] for s, c in t.plays],
                      "text": plain(tr(lang, "table.last_trick", n=t.trick + 1,
                                       name=winner)).rstrip(":")}
    info: list[str] = []
    if view.game == "chiamata" and view.phase == "play":
        info = [plain(line) for line in texts.contract_lines(lang, style, view, names)]
    elif view.game == "chiamata" and view.phase == "declaration":
        info = [plain(tr(lang, "table.contract", name=texts.esc(names[view.chiamante or 0]),
                         contract=texts.contract_text(lang, style, view)))]
    elif view.game == "briscola" and view.stock_count:
        info = [plain(trn(lang, "table.stock", view.stock_count))]
    auction = {
        "history": [{"seat": s, "text": texts.bid_text(lang, style, code)}
                    for s, code in view.auction],
        "current": None if view.current_bid is None else {
            "seat": view.current_bidder,
            "text": texts.bid_text(lang, style, view.current_bid)},
        "passed": list(view.passed),
    }
    final = None
    if view.final is not None:
        final = plain(texts.final_text(lang, view.final, names, view.game, view.sides))
    return with_card_names({
        "type": "state",
        "table": row.game_id,
        "status": row.status,
        "version": view.version,
        "lang": lang,
        "ui": {**{key.split(".", 1)[1]: tr(lang, key) for key in UI_KEYS},
               "no_bids": tr(lang, "table.no_bids")},
        "deck": pictures_of(style),
        "game": view.game,
        "players": view.players,
        "me": seat,
        "phase": view.phase,
        "title": plain(tr(lang, "table.head", n=view.smazzata + 1,
                          dealer=texts.esc(names[view.dealer]))),
        "status_line": status,
        "my_turn": my_turn,
        "deadline": row.turn_deadline if prefs.turn_timeout and not game.is_over() else None,
        "seats": seats,
        "trick": [[s, card_code(c)] for s, c in view.current_trick],
        "last_trick": last_trick,
        "trump": None if view.trump is None else texts.suit_name(style, view.trump),
        "called": None if view.called_card is None else card_code(view.called_card),
        "face_up": None if view.face_up is None else card_code(view.face_up),
        "stock": view.stock_count,
        "info": info,
        "auction": auction,
        "hand": [{"card": card_code(c), "playable": "c" + card_code(c) in legal}
                 for c in sorted(view.hand)],
        "partner_hand": None if view.partner_hand is None else _cards(view.partner_hand),
        "actions": _actions(lang, style, view),
        "result": _result(lang, style, view, names),
        "final": final,
    }, lang, style)


def with_card_names(payload: dict[str, Any], lang: str, style: str) -> dict[str, Any]:
    """The names of the cards a payload shows ("Asso di Denari"), for the pictures' alt
    text: only cards already in it."""
    codes = {h["card"] for h in payload["hand"]} | {c for _, c in payload["trick"]}
    if payload["last_trick"]:
        codes |= {c for _, c in payload["last_trick"]["plays"]}
    codes |= {c for c in (payload["called"], payload["face_up"]) if c}
    codes |= set(payload["partner_hand"] or ()) | set(payload["actions"]["name_cards"])
    payload["card_names"] = {code: texts.card_name(lang, style, parse_card(code))
                             for code in sorted(codes)}
    return payload


def closed_payload(row: GameRow, lang: str) -> dict[str, Any]:
    """A table that is no longer played (cancelled before its end)."""
    return {"type": "closed", "table": row.game_id, "status": row.status,
            "text": plain(tr(lang, "table.cancelled"))}
