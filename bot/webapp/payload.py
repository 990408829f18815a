"""What the Mini App shows one viewer: a JSON-ready dict built from the core's view.

Everything here comes from ``game.view(seat)`` (``None``: what the group sees) and the
table's public facts (names, dealer, away seats, the turn's deadline); nothing reads a
hand or the socio from the game itself. The actions offered are ``view.legal`` (the
core's legal actions), grouped for drawing; their texts are the chat's (bot.render.texts).
What every viewer of a table is shown alike is built from the group's view, once per
push (:class:`TableState`); each viewer's own part from its seat's view.
"""

from __future__ import annotations

import functools
import html
import random
import re
from collections.abc import Sequence
from typing import Any

from bot.i18n import tr, trn
from bot.render import texts
from bot.render.keyboards import COSTLY_PREFIXES
from bot.service import match_prefs
from bot.tables.render import seat_names
from bot.webapp.decks import pictures_of
from bot.webapp.hub import json_text, sse_head, sse_tail
from game import Game, TableOptions, View, parse_action
from game.cards import card_code, parse_card
from game.events import BriscolaScored, SmazzataScored
from game.view import TrickView
from storage import GameRow

_TAG = re.compile(r"<[^>]+>")
#: Static texts of the page, sent with every state (so a language switch needs no reload).
UI_KEYS = (
    "webapp.title", "webapp.hand", "webapp.auction", "webapp.scores", "webapp.briscola",
    "webapp.called", "webapp.face_up", "webapp.partner_hand", "webapp.declare",
    "webapp.name_card", "webapp.spectator", "webapp.offline", "webapp.over",
    "webapp.confirm", "webapp.dealer", "webapp.last_trick", "webapp.led", "webapp.review",
    "webapp.caller_side", "webapp.caller_alone", "webapp.others", "webapp.card_points",
    "webapp.contract", "webapp.made", "webapp.failed", "webapp.multiplier",
    "webapp.changes", "webapp.more_calls", "webapp.close", "webapp.side_won", "webapp.draw",
    "webapp.tricks_taken", "webapp.trick_n", "webapp.share", "webapp.shared",
    "btn.rematch",
)
#: A computer's name as the chat writes it: "🤖 Computer 3 (normale)" (its level last).
_LEVEL = re.compile(r"^(?P<name>.*?)\s*\((?P<level>[^()]+)\)$")


@functools.cache
def ui_texts(lang: str) -> dict[str, str]:
    """The page's static texts in ``lang`` (the same for every state: built once)."""
    return {**{key.split(".", 1)[1]: tr(lang, key) for key in UI_KEYS},
            "no_bids": tr(lang, "table.no_bids")}


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
        elif kind in "tno":  # a stepper of each family: "2 a N", "N punti", obbligato
            rank, _, points = code[1:].rpartition(".")
            key = kind + rank
            family = families.get(key)
            if family is None:  # (its template once, not once a call)
                template = tr(lang, "bid.obbligato", rank=texts.rank_name(style, rank),
                              points="{n}") if kind == "o" else \
                    tr(lang, "bid.two" if kind == "t" else "bid.points", points="{n}")
                family = families[key] = {"prefix": key + "." if kind == "o" else kind,
                                          "values": [], "template": plain(template)}
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
    return TableState(row, game, lang).payload(seat)


class TableState:
    """One table's state in one language, as each of its viewers is sent it.

    The part every viewer is shown alike (:meth:`public_part`) is built once, from the
    group's view, and serialised once; each viewer's own part (:meth:`own_part`: the
    hand, the moves offered, whatever ``view(seat)`` may tell that seat alone) is built
    from ``view(seat)``. A push builds one per language and hands each seat its
    :meth:`event`; the state's dict is :meth:`payload`.
    """

    def __init__(self, row: GameRow, game: Game, lang: str) -> None:
        self.row, self.game, self.lang = row, game, lang
        self.group = game.view(None)
        self.style = self.group.options.deck_style.value
        self.names = seat_names(row, game, lang)
        self.short = [_without_level(name) for name in self.names]
        self.public = self.public_part(self.group)
        view = self.group
        self._seats = self.public_seats(view)
        self._turn_line = ""  # the status line of a viewer not in turn
        if view.phase != "over" and view.current_seat is not None:
            self._turn_line = plain(tr(lang, "table.turn",
                                       name=texts.esc(self.short[view.current_seat])))
        #: The contract lines differ by viewer only while the cards are played (R66).
        self._info = None if view.game == "chiamata" and view.phase == "play" else \
            self.info_lines(view)
        codes = {c for _, c in self.public["trick"]}
        if self.public["last_trick"]:
            codes |= {c for _, c in self.public["last_trick"]["plays"]}
        if self.public["sheet"] and self.public["sheet"].get("called"):
            codes.add(self.public["sheet"]["called"])
        codes |= {c for c in (self.public["face_up"],) if c}
        self._codes = codes
        self._head: bytes | None = None
        self._seats_json: list[str] = []

    def public_part(self, view: View) -> dict[str, Any]:
        """What every viewer of the table is shown alike, from ``view``'s public facts
        only (the tests check that every seat's view gives the same)."""
        lang, style, names = self.lang, self.style, self.names
        prefs = match_prefs(self.row)
        last_trick = None
        if view.tricks or view.scored_tricks:
            smazzata = view.smazzata if view.tricks else _scored_index(view)
            last_trick = trick_payload(
                (view.tricks or view.scored_tricks)[-1], smazzata, self.short, lang)
        final = None
        if view.final is not None:
            final = plain(texts.final_text(lang, view.final, names, view.game, view.sides))
        return {
            "type": "state",
            "table": self.row.game_id,
            "status": self.row.status,
            "version": view.version,
            "lang": lang,
            "ui": ui_texts(lang),
            "deck": pictures_of(style),
            "game": view.game,
            "players": view.players,
            "phase": view.phase,
            "title": plain(tr(lang, "table.head", n=view.smazzata + 1,
                              dealer=texts.esc(names[view.dealer]))),
            "deadline": (self.row.turn_deadline
                         if prefs.turn_timeout and not self.game.is_over() else None),
            "turn_seconds": prefs.turn_timeout or None,
            "trick": [[s, card_code(c)] for s, c in view.current_trick],
            "leader": view.leader if view.phase == "play" else None,
            "last_trick": last_trick,
            "face_up": None if view.face_up is None else card_code(view.face_up),
            "stock": view.stock_count,
            "auction": {
                "history": [{"seat": s, "text": texts.bid_text(lang, style, code)}
                            for s, code in view.auction],
                "current": None if view.current_bid is None else {
                    "seat": view.current_bidder,
                    "text": texts.bid_text(lang, style, view.current_bid)},
                "passed": list(view.passed),
            },
            "result": _result(lang, style, view, names),
            "sheet": sheet_payload(view, names, lang),
            "final": final,
        }

    def public_seats(self, view: View) -> list[dict[str, Any]]:
        """The seats as every viewer sees them (``you`` and ``socio`` are set per viewer),
        from ``view``'s public facts only (the tests check every seat's view gives the
        same)."""
        lang, names = self.lang, self.names
        seat_rows = {s.seat: s for s in self.row.seats}
        contract = (texts.contract_text(lang, self.style, view)
                    if view.contract is not None else None)
        taken = [0] * view.players  # tricks each seat has taken in this smazzata
        for t in view.tricks:
            if t.winner is not None:
                taken[t.winner] += 1
        seats: list[dict[str, Any]] = []
        for n in range(view.players):
            s = seat_rows.get(n)
            computer = s is not None and not s.is_human
            level = _LEVEL.match(names[n]) if computer else None
            seats.append({
                "seat": n, "name": level["name"] if level else names[n],
                "level": level["level"] if level else None, "you": False,
                "dealer": n == view.dealer,
                "turn": n == view.current_seat, "cards": view.hand_sizes[n],
                "tricks": taken[n],
                "total": view.totals[n] if n < len(view.totals) else 0,
                "computer": computer, "away": bool(s and s.away),
                "morto": n == view.morto, "chiamante": n == view.chiamante,
                "contract": contract if n == view.chiamante else None,
                "socio": False,
            })
        return seats

    def info_lines(self, view: View) -> list[str]:
        """The lines under the table: the contract (its briscola, the socio as ``view``
        knows them) while the cards are played, else what every viewer sees alike."""
        lang, style, names = self.lang, self.style, self.names
        if view.game == "chiamata" and view.phase == "play":
            return [plain(line) for line in texts.contract_lines(lang, style, view, names)]
        if view.game == "chiamata" and view.phase == "declaration":
            return [plain(tr(lang, "table.contract", name=texts.esc(names[view.chiamante or 0]),
                             contract=texts.contract_text(lang, style, view)))]
        if view.game == "briscola" and view.stock_count:
            return [plain(trn(lang, "table.stock", view.stock_count))]
        return []

    def own_part(self, seat: int | None) -> dict[str, Any]:
        """What ``seat``'s viewer is shown of its own (None: the group), from
        ``view(seat)``; no key of :attr:`public`."""
        if seat is not None and self.game.morto == seat:
            seat = None
        view = self.group if seat is None else self.game.view(seat)
        lang, style = self.lang, self.style
        legal = set(view.legal)
        my_turn = seat is not None and view.current_seat == seat
        seats = [self._seat(n, seat, view) for n in range(len(self._seats))]
        hand = [card_code(c) for c in sorted(view.hand)]
        called = None if view.called_card is None else card_code(view.called_card)
        partner_hand = None if view.partner_hand is None else _cards(view.partner_hand)
        actions = _actions(lang, style, view)
        codes = self._codes | set(hand) | set(partner_hand or ()) | set(actions["name_cards"])
        if called:
            codes.add(called)
        return {
            "me": seat,
            "status_line": (plain(tr(lang, "table.your_turn"))
                            if my_turn and view.phase != "over" else self._turn_line),
            "my_turn": my_turn,
            "seats": seats,
            "trump": None if view.trump is None else texts.suit_name(style, view.trump),
            "called": called,
            "info": self._info if self._info is not None else self.info_lines(view),
            "hand": [{"card": code, "playable": "c" + code in legal} for code in hand],
            "partner_hand": partner_hand,
            "actions": actions,
            "card_names": {code: card_name(lang, style, code) for code in sorted(codes)},
        }

    def _seat(self, n: int, seat: int | None, view: View) -> dict[str, Any]:
        """Seat ``n`` as ``seat``'s viewer is shown it (with ``view``, its view)."""
        you, socio = n == seat, view.socio == n and not view.solo
        return {**self._seats[n], "you": you, "socio": socio} if you or socio else \
            self._seats[n]

    def payload(self, seat: int | None) -> dict[str, Any]:
        """The state ``seat``'s viewer may see (None: the group's) as a dict."""
        return {**self.public, **self.own_part(seat)}

    def event(self, seat: int | None, now: float) -> bytes:
        """:meth:`payload` with ``now`` as a Server-Sent Event (the public part's JSON is
        written once for every viewer)."""
        if self._head is None:
            self._head = sse_head("state", self.public)
            self._seats_json = [json_text(s) for s in self._seats]
        own = self.own_part(seat)
        seats = own.pop("seats")  # most of it written once too: who is "you" differs
        text = ",".join(self._seats_json[n] if s is self._seats[n] else json_text(s)
                        for n, s in enumerate(seats))
        return sse_tail(self._head, {**own, "now": now}, {"seats": f"[{text}]"})


@functools.cache
def card_name(lang: str, style: str, code: str) -> str:
    """A card's name ("Asso di Denari") from its code (built once)."""
    return texts.card_name(lang, style, parse_card(code))


def _without_level(name: str) -> str:
    """A computer's name without its level ("🤖 Computer 3")."""
    found = _LEVEL.match(name) if name.startswith("🤖") else None
    return found["name"] if found else name


def _scored_index(view: View) -> int | None:
    """The index of the last smazzata scored (that ``view.scored_tricks`` are of)."""
    last = view.last_briscola if view.game == "briscola" else view.last_scored
    return None if last is None else last.smazzata


def trick_payload(t: TrickView, smazzata: int | None, names: list[str],
                  lang: str) -> dict[str, Any]:
    """One trick taken, as the table saw it: who led, who played what, who took it."""
    winner = "?" if t.winner is None else names[t.winner]
    return {"key": f"{smazzata}.{t.trick}", "trick": t.trick, "leader": t.leader,
            "winner": t.winner, "plays": [[s, card_code(c)] for s, c in t.plays],
            "text": plain(tr(lang, "webapp.took", name=winner))}


def sheet_payload(view: View, names: list[str], lang: str) -> dict[str, Any] | None:
    """The last smazzata's score sheet, from the core's scored event: the sides, their
    card points, the contract, made or not, the multiplier, each seat's change."""
    style = view.options.deck_style.value
    if view.game == "briscola":
        b = view.last_briscola
        if b is None:
            return None
        return {
            "smazzata": b.smazzata, "title": plain(tr(lang, "webapp.sheet", n=b.smazzata + 1)),
            "sides": [{"seats": list(side), "points": points, "won": b.winner == k,
                       "wins": b.wins[k]}
                      for k, (side, points) in enumerate(zip(b.sides, b.points, strict=True))],
            "draw": b.winner is None, "contract": None, "made": None, "multiplier": None,
            "changes": [],
        }
    ev = view.last_scored
    if ev is None:
        return None
    callers = [ev.chiamante] + ([ev.socio] if ev.socio is not None else [])
    others = [n for n in range(view.players) if n not in callers and n != view.morto]
    return {
        "smazzata": ev.smazzata, "title": plain(tr(lang, "webapp.sheet", n=ev.smazzata + 1)),
        "sides": [
            {"seats": callers, "points": ev.caller_points, "won": ev.won, "callers": True},
            {"seats": others, "points": 120 - ev.caller_points, "won": not ev.won},
        ],
        "contract": plain(texts.scored_contract_text(lang, style, ev)),
        "called": None if ev.called_card is None else card_code(ev.called_card),
        "target": ev.target, "made": ev.won, "multiplier": ev.multiplier,
        "cappotto": ev.cappotto,
        "changes": [{"seat": n, "delta": ev.deltas[n], "total": ev.totals[n]}
                    for n in range(view.players) if n != view.morto],
    }


def review_payload(row: GameRow, game: Game, seat: int | None, lang: str) -> dict[str, Any]:
    """The review of the smazzata ``game`` has just scored (:func:`replay_to_smazzata`):
    its tricks as the table saw them, and its sheet, from the core's view of ``seat``."""
    view = game.view(seat)
    names = [_without_level(name) for name in seat_names(row, game, lang)]
    scored: SmazzataScored | BriscolaScored | None = (
        view.last_briscola if view.game == "briscola" else view.last_scored)
    smazzata = None if scored is None else scored.smazzata
    style = view.options.deck_style.value
    tricks = [trick_payload(t, smazzata, names, lang) for t in view.scored_tricks]
    codes = {c for t in tricks for _, c in t["plays"]}
    sheet = sheet_payload(view, names, lang)
    if sheet and sheet.get("called"):
        codes.add(sheet["called"])
    return {"type": "review", "smazzata": smazzata, "tricks": tricks, "sheet": sheet,
            "names": names,
            "card_names": {code: card_name(lang, style, code) for code in sorted(codes)}}


def closed_payload(row: GameRow, lang: str) -> dict[str, Any]:
    """A table that is no longer played (cancelled before its end)."""
    return {"type": "closed", "table": row.game_id, "status": row.status,
            "text": plain(tr(lang, "table.cancelled"))}


def replay_to_smazzata(options: TableOptions, seed: int,
                       actions: Sequence[tuple[int, str]], smazzata: int) -> Game | None:
    """The match replayed from its seed and stored actions through the core (every action
    verified again), stopped when smazzata ``smazzata`` is scored; None if it never was."""
    game = Game.new(options, random.Random(seed))
    briscola = game.rules.game == "briscola"
    for seat, code in actions:
        scored = game.scored_count
        game.apply(seat, parse_action(code))
        if game.scored_count != scored:
            last = game.last_briscola if briscola else game.last_score
            if last is not None and last.smazzata == smazzata:
                return game
            if last is not None and last.smazzata > smazzata:
                return None
    return None
