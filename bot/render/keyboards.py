"""Pure inline-keyboard builders. Every callback data goes through :mod:`bot.callbacks`.

The auction's public calls (:func:`calls_keyboard`) are built from public facts only (the
core's public calls, ``View.public_calls`` and ``View.min_call_points``), never from a
hand; they are drawn in the private message of the bidder in turn only (no group message
carries a bid button: a private chat gets a call a second, a group one every three).
Hand-dependent calls (obbligato, monte) are offered there too: in a group's hands, as
buttons drawn for the whole smazzata (:func:`stable_calls`, ``h:`` data), so that a hand
is not redrawn for every bid of the others; alone, for the current version. The core
re-validates every press.
"""

from __future__ import annotations

from collections.abc import Sequence

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, WebAppInfo

from bot import callbacks as cb
from bot.i18n import tr, tr_word, trn
from bot.prefs import MENU, MENU_ORDER, Prefs, applies, current_value
from bot.render.texts import (
    bid_text,
    briscola_match_text,
    card_label,
    match_end_text,
    rank_name,
    suit_name,
)
from game import View
from game.actions import MAX_POINTS
from game.cards import card_code, parse_card
from game.players import LEVELS

#: Calls that need a second tap (R: protect against costly accidental taps).
COSTLY_PREFIXES = ("K", "M")


def _btn(text: str, data: str) -> InlineKeyboardButton:
    return InlineKeyboardButton(text, callback_data=data)


def button(text: str, data: str) -> InlineKeyboardButton:
    """A callback button (for the feature modules' own rows)."""
    return _btn(text, data)


def rematch_keyboard(lang: str, game_id: int) -> InlineKeyboardMarkup | None:
    """🔁 Rivincita, under a finished match's last message."""
    return markup([[_btn(tr(lang, "btn.rematch"), cb.rematch(game_id, "go"))]])


def markup(rows: Sequence[Sequence[InlineKeyboardButton]]) -> InlineKeyboardMarkup | None:
    rows = [list(r) for r in rows if r]
    return InlineKeyboardMarkup(rows) if rows else None


def all_callback_data(kb: InlineKeyboardMarkup | None) -> list[str]:
    if kb is None:
        return []
    return [
        str(b.callback_data)
        for row in kb.inline_keyboard
        for b in row
        if b.callback_data is not None
    ]


# --------------------------------------------------------------------------- lobby


def lobby_keyboard(lang: str, game_id: int) -> InlineKeyboardMarkup | None:
    return markup(
        [
            [
                _btn(tr(lang, "btn.join"), cb.lobby(game_id, "join")),
                _btn(tr(lang, "btn.leave"), cb.lobby(game_id, "leave")),
            ],
            [
                _btn(tr(lang, "btn.computer"), cb.lobby(game_id, "cpu")),
                _btn(tr(lang, "btn.settings"), cb.lobby(game_id, "set")),
            ],
            [_btn(tr(lang, "btn.start"), cb.lobby(game_id, "go"))],
        ]
    )


# --------------------------------------------------------------------------- auction


def calls_keyboard(lang: str, game_id: int, view: View) -> InlineKeyboardMarkup | None:
    """The auction's public calls at this version (ranks, "2 a N" or a punti's points,
    carichi, pass), for the bidder in turn's private message (:func:`solo_keyboard`)."""
    if view.phase != "auction":
        return None
    style = view.options.deck_style.value
    v = view.version
    ranks = [c for c in view.public_calls if c.startswith("r")]
    rows = [
        [_btn(rank_name(style, c[1:]), cb.action(game_id, v, c)) for c in ranks[i : i + 5]]
        for i in range(0, len(ranks), 5)
    ]
    last: list[InlineKeyboardButton] = []
    low = view.min_call_points
    if low is not None and view.options.a_punti:  # R44: calls at points, then the card
        last.append(_btn(trn(lang, "btn.points_pick", low), cb.picker(game_id, v, "n", low)))
    elif low is not None:
        last.append(_btn(tr(lang, "btn.two_pick", points=low), cb.picker(game_id, v, "t", low)))
    if "K" in view.public_calls:
        last.append(_btn(bid_text(lang, style, "K"), cb.confirm(game_id, v, "K")))
    rows.append(last)
    rows.append([_btn(tr(lang, "btn.pass"), cb.action(game_id, v, "P"))])
    return markup(rows)


def picker_keyboard(
    lang: str, game_id: int, view: View, prefix: str, points: int
) -> InlineKeyboardMarkup | None:
    """Choose N for "2 a N" (``t``) or "r obbligato a N" (``o<rank>``); confirm or go back."""
    low = view.min_call_points
    if low is None:
        return None
    points = max(low, min(MAX_POINTS, points))
    v = view.version
    steps = []
    for delta in (-5, -1, 1, 5, 10):
        target = max(low, min(MAX_POINTS, points + delta))
        if target != points:
            label = f"{delta:+d}"
            steps.append(_btn(label, cb.picker(game_id, v, prefix, target)))
    code = f"{prefix}{points}" if prefix in ("t", "n") else f"o{prefix[1:]}.{points}"
    style = view.options.deck_style.value
    return markup(
        [
            steps,
            [_btn("✅ " + bid_text(lang, style, code), cb.action(game_id, v, code))],
            [_btn(tr(lang, "btn.back"), cb.back(game_id, v))],
        ]
    )


def confirm_keyboard(lang: str, game_id: int, view: View, code: str) -> InlineKeyboardMarkup | None:
    style = view.options.deck_style.value
    return markup(
        [
            [_btn("✅ " + bid_text(lang, style, code), cb.action(game_id, view.version, code))],
            [_btn(tr(lang, "btn.back"), cb.back(game_id, view.version))],
        ]
    )


# --------------------------------------------------------------------------- private


def _obbligato_ranks(view: View) -> list[str]:
    seen: list[str] = []
    for code in view.legal:
        if code.startswith("o"):
            rank = code[1:].split(".")[0]
            if rank not in seen:
                seen.append(rank)
    return seen


def private_keyboard(
    lang: str, game_id: int, view: View, *, away: bool = False, stable: bool = True
) -> InlineKeyboardMarkup | None:
    """The player's private keyboard: cards in play, suits at the declaration, private-only
    calls (obbligato, monte) in the auction.

    In the auction, ``stable`` (a group's hands): those calls are drawn for the whole
    smazzata (``h:`` buttons, see :func:`stable_calls`), so the hand need not be redrawn
    at every bid; otherwise (alone, where the message is redrawn at every move anyway)
    they are drawn for this version from the seat's legal actions."""
    if view.seat is None:
        raise ValueError("private keyboards need a seat's view")
    if away:
        return markup([[_btn(tr(lang, "btn.im_back"), cb.im_back(game_id))]])
    style = view.options.deck_style.value
    v = view.version
    if view.phase == "play":
        legal = set(view.legal)
        buttons = []
        for card in sorted(view.hand):
            code = "c" + card_code(card)
            label = card_label(style, card)
            if view.current_seat == view.seat and code not in legal:
                label = "🚫" + label
            buttons.append(_btn(label, cb.action(game_id, v, code)))
        return markup([buttons[i : i + 4] for i in range(0, len(buttons), 4)])
    if view.phase == "declaration" and view.contract == "punti":
        return _card_naming(game_id, view)
    if view.phase == "declaration":
        suits = [c for c in view.legal if c.startswith("s")]
        return markup(
            [
                [_btn(suit_name(style, "cdsb".index(c[1])), cb.action(game_id, v, c))]
                for c in suits
            ]
        )
    if view.phase == "auction" and stable:
        return stable_calls(lang, game_id, view)
    if view.phase == "auction":
        rows: list[list[InlineKeyboardButton]] = []
        low = view.min_call_points
        if low is not None:  # obbligato calls are at points: none are left without
            for rank in _obbligato_ranks(view):
                label = tr(lang, "btn.obbligato_pick", rank=rank_name(style, rank))
                rows.append([_btn(label, cb.picker(game_id, v, "o" + rank, low))])
        if "M" in view.legal:
            rows.append([_btn(bid_text(lang, style, "M"), cb.confirm(game_id, v, "M"))])
        return markup(rows)
    return None


def stable_calls(lang: str, game_id: int, view: View) -> InlineKeyboardMarkup | None:
    """A group hand's private-only calls for the rest of the auction, whoever is in turn:
    one button per obbligato rank the core says this hand may call at its turns
    (``View.obbligato_ranks``), and monte while the core offers it (out of turn, R17).
    Their data names the smazzata, not the version: they stay valid bid after bid, and
    open the points picker or the confirmation (drawn for the version of that moment)
    when pressed (:mod:`bot.features.auction`)."""
    style = view.options.deck_style.value
    smazzata = view.smazzata
    rows = [
        [_btn(tr(lang, "btn.obbligato_pick", rank=rank_name(style, rank)),
              cb.hand_call(game_id, smazzata, "o" + rank))]
        for rank in view.obbligato_ranks
    ]
    if "M" in view.legal:
        rows.append([_btn(bid_text(lang, style, "M"), cb.hand_call(game_id, smazzata, "M"))])
    return markup(rows)


def _card_naming(game_id: int, view: View) -> InlineKeyboardMarkup | None:
    """A punti (R45): the chiamante names a whole card, one row per suit, from the core's
    legal ``d`` actions only."""
    style = view.options.deck_style.value
    rows = []
    for suit in range(4):
        codes = [c for c in view.legal if c.startswith("d") and "cdsb".index(c[-1]) == suit]
        buttons = [
            _btn(card_label(style, parse_card(c[1:])), cb.action(game_id, view.version, c))
            for c in codes
        ]
        rows += [buttons[i : i + 5] for i in range(0, len(buttons), 5)]
    return markup(rows)


def solo_keyboard(lang: str, game_id: int, view: View, *,
                  stable: bool = False) -> InlineKeyboardMarkup | None:
    """The auction's public calls at the player's turn above the player's own buttons:
    the bidder in turn bids from their hand. Alone against computers this one private
    message holds everything; in a group (``stable``: the hand's own calls drawn for the
    smazzata) the public calls are there at the player's turn only."""
    rows: list[list[InlineKeyboardButton]] = []
    for markup_part in (
        calls_keyboard(lang, game_id, view) if view.current_seat == view.seat else None,
        private_keyboard(lang, game_id, view, stable=stable),
    ):
        if markup_part is not None:
            rows += [list(row) for row in markup_part.inline_keyboard]
    return markup(rows)


def solo_lobby_keyboard(lang: str, game_id: int) -> InlineKeyboardMarkup | None:
    """A private lobby: fill the table with computers of a level, settings, start."""
    levels = [
        _btn(tr(lang, "btn.fill", level=tr_word(lang, f"level.{level}", level)),
             cb.lobby(game_id, f"fill-{level}"))
        for level in LEVELS
    ]
    return markup(
        [
            *(levels[i : i + 2] for i in range(0, len(levels), 2)),  # two a row: long names
            [_btn(tr(lang, "btn.settings"), cb.lobby(game_id, "set"))],
            [_btn(tr(lang, "btn.start"), cb.lobby(game_id, "go"))],
        ]
    )


# --------------------------------------------------------------------------- misc


def settings_keyboard(lang: str, prefs: Prefs) -> InlineKeyboardMarkup | None:
    rows = []
    for index in MENU_ORDER:
        option = MENU[index]
        if not applies(prefs, option.key):
            continue
        value = current_value(prefs, option.key)
        shown = tr_word(lang, f"val.{value}", value)  # on/off, orario… (stored in Italian)
        if option.key == "turn_timeout":
            shown = tr(lang, "opt.timeout_off") if value == "0" else f"{value}s"
        elif option.key == "briscola_match":
            shown = briscola_match_text(lang, prefs.options)
        elif option.key == "match_end":
            shown = match_end_text(lang, prefs.options)
        elif option.key in ("cappotto", "winners"):  # the words of the options summary
            shown = tr(lang, f"opt.{option.key}_{value}")
        label = f"{tr(lang, 'set.' + option.key)}: {shown}"
        rows.append([_btn(label, cb.settings("c", str(index)))])
    rows.append([_btn(tr(lang, "btn.close"), cb.settings("x"))])
    return markup(rows)


def cancel_keyboard(lang: str, game_id: int) -> InlineKeyboardMarkup | None:
    return markup(
        [
            [
                _btn(tr(lang, "btn.cancel_yes"), cb.cancel(game_id, "y")),
                _btn(tr(lang, "btn.cancel_no"), cb.cancel(game_id, "n")),
            ]
        ]
    )


def url_keyboard(text: str, url: str) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup([[InlineKeyboardButton(text, url=url)]])


def with_table_button(keyboard: InlineKeyboardMarkup | None, text: str, *,
                      web_app: str | None = None, url: str | None = None
                      ) -> InlineKeyboardMarkup | None:
    """``keyboard`` with a last row opening the Mini App: a ``web_app`` button (private
    chats only, as the Bot API allows) or a ``url`` button (a group's direct link)."""
    if web_app is None and url is None:
        return keyboard
    button = (InlineKeyboardButton(text, web_app=WebAppInfo(web_app)) if web_app is not None
              else InlineKeyboardButton(text, url=url))
    rows = [list(row) for row in keyboard.inline_keyboard] if keyboard is not None else []
    return InlineKeyboardMarkup([*rows, [button]])
