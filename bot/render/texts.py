"""Pure text builders (HTML parse mode). Group texts take ``view(None)`` only.

Every user-provided string (names) is escaped here with :func:`html.escape`; nothing
else in the bot builds message text.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from bot.i18n import tr, trn
from bot.prefs import Prefs
from bot.stats import CONTRACT_KINDS, PlayerStats, Record, Tally
from game import TableOptions, TrickView, View, deck_face
from game.cards import RANK_CODES, parse_rank
from game.events import BriscolaScored, MatchOver, SmazzataScored
from storage import BriscolaScoreRow

MAX_TEXT = 4096


def esc(text: str) -> str:
    return html.escape(text, quote=False)


def clip(text: str, limit: int = MAX_TEXT) -> str:
    """Keep a text within Telegram's limit (cut at a line break when possible)."""
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", 0, limit - 1)
    return text[: cut if cut > 0 else limit - 1] + "…"


def signed(n: int) -> str:
    return f"+{n}" if n > 0 else ("±0" if n == 0 else f"−{-n}")


def unsigned(n: int) -> str:
    """A number with the same minus sign as :func:`signed` (U+2212), no plus."""
    return f"−{-n}" if n < 0 else str(n)


# --------------------------------------------------------------------------- cards & bids


def card_label(style: str, card: int) -> str:
    return deck_face(style).card_label(card)


def card_name(lang: str, style: str, card: int) -> str:
    face = deck_face(style)
    return tr(
        lang,
        "card.name",
        rank=face.rank_name(card % 10),
        suit=face.suit_name(card // 10),
        symbol=face.suit_symbols[card // 10],
    )


def suit_name(style: str, suit: int) -> str:
    face = deck_face(style)
    return f"{face.suit_name(suit)} {face.suit_symbols[suit]}"


def rank_name(style: str, rank_code: str) -> str:
    return deck_face(style).rank_name(parse_rank(rank_code))


def bid_text(lang: str, style: str, code: str) -> str:
    """A public auction call in words: ``t65`` -> "2 a 65"."""
    if code == "P":
        return tr(lang, "bid.pass")
    if code == "M":
        return tr(lang, "bid.monte")
    if code == "K":
        return tr(lang, "bid.carichi")
    if code.startswith("r"):
        return rank_name(style, code[1:])
    if code.startswith("t"):
        return tr(lang, "bid.two", points=int(code[1:]))
    if code.startswith("o"):
        rank, points = code[1:].split(".")
        return tr(lang, "bid.obbligato", rank=rank_name(style, rank), points=int(points))
    if code.startswith("n"):
        return tr(lang, "bid.points", points=int(code[1:]))
    return code


def contract_text(lang: str, style: str, view: View) -> str:
    kind, points = view.contract, view.contract_points or 61
    if kind == "carichi":
        return tr(lang, "bid.carichi")
    if kind == "punti":
        return tr(lang, "bid.points", points=points)
    rank = "" if view.contract_rank is None else RANK_CODES[view.contract_rank]
    if kind == "rank":
        return rank_name(style, rank)
    if kind == "two":
        return tr(lang, "bid.two", points=points)
    return tr(lang, "bid.obbligato", rank=rank_name(style, rank), points=points)


def _name(names: Sequence[str], seat: int | None) -> str:
    if seat is None or not 0 <= seat < len(names):
        return "?"
    return esc(names[seat])


# --------------------------------------------------------------------------- lobby


def game_label(lang: str, options: TableOptions) -> str:
    """The game chosen, in words: "Briscola chiamata a 4 con il morto", "Briscola a 2"…"""
    if options.game == "briscola":
        key = "game.briscola_pairs" if options.players == 4 else "game.briscola"
        return tr(lang, key, n=options.players)
    key = {4: "game.chiamata_morto", 6: "game.chiamata_six"}.get(options.players, "game.chiamata")
    label = tr(lang, key, n=options.players)
    return label + (" · " + tr(lang, "game.a_punti") if options.a_punti else "")


def briscola_match_text(lang: str, options: TableOptions) -> str:
    """R110's match format: "vince chi arriva a 2 smazzate" / "3 smazzate"."""
    kind, n = options.briscola_match_kind, options.briscola_match_n
    return trn(lang, f"opt.briscola_{kind}", n)


def match_end_text(lang: str, options: TableOptions) -> str:
    """When a match of chiamata ends: "si vince a 11 punti" / "2 smazzate"."""
    key = "opt.end_target" if options.match_end_kind == "target" else "opt.end_hands"
    return trn(lang, key, options.match_end_n)


def options_summary(lang: str, prefs: Prefs) -> str:
    o = prefs.options
    timeout = (
        tr(lang, "opt.timeout_off")
        if prefs.turn_timeout == 0
        else tr(lang, "opt.timeout_s", s=prefs.turn_timeout)
    )
    if o.game == "briscola":
        return tr(lang, "opt.summary_briscola", match=briscola_match_text(lang, o),
                  deck=o.deck_style.value, timeout=timeout)
    return _chiamata_summary(lang, prefs, timeout)


def _chiamata_summary(lang: str, prefs: Prefs, timeout: str) -> str:
    o = prefs.options
    on, off = tr(lang, "opt.on"), tr(lang, "opt.off")
    flags = [
        (tr(lang, "opt.chiamata_obbligata"), o.chiamata_obbligata),
        (tr(lang, "opt.a_carichi"), o.a_carichi),
        (tr(lang, "opt.al_buio"), o.al_buio),
        (tr(lang, "opt.monte"), o.monte),
        (tr(lang, "opt.in_mano"), o.in_mano),
        (tr(lang, "opt.follow_suit"), o.follow_suit),
        (tr(lang, "opt.tie_goes_to_caller"), o.tie_goes_to_caller),
    ]
    lines = [", ".join(f"{name}: {on if value else off}" for name, value in flags)]
    lines.append(
        tr(
            lang,
            "opt.summary2",
            end=match_end_text(lang, o),
            cappotto=tr(lang, f"opt.cappotto_{o.cappotto}"),
            winners=tr(lang, f"opt.winners_{o.winners}"),
            deck=o.deck_style.value,
            timeout=timeout,
        )
    )
    return "\n".join(lines)


def lobby_text(
    lang: str, prefs: Prefs, seats: Sequence[str | None], creator: str, state: str = "open",
    *, alone: bool = False,
) -> str:
    """The lobby; ``alone``: a table in a private chat, filled with computers."""
    o = prefs.options
    lines = [tr(lang, "lobby.title", game=game_label(lang, o)), "",
             options_summary(lang, prefs), ""]
    lines.append(tr(lang, "lobby.seats"))
    for i, name in enumerate(seats):
        lines.append(f"{i + 1}. " + (esc(name) if name else "—"))
    if o.game == "briscola" and o.players == 4:
        lines.append(tr(lang, "lobby.pairs"))
    elif o.game == "chiamata" and o.players == 4:
        lines.append(tr(lang, "lobby.morto"))
    lines.append("")
    free = sum(1 for s in seats if not s)
    if state == "open" and alone:
        lines.append(trn(lang, "lobby.free_alone", free) if free else tr(lang, "lobby.full"))
    elif state == "open":
        lines.append(tr(lang, "lobby.creator", name=esc(creator)))
        lines.append(tr(lang, "lobby.free", n=free) if free else tr(lang, "lobby.full"))
    else:
        lines.append(tr(lang, f"lobby.{state}"))
    return clip("\n".join(lines))


# --------------------------------------------------------------------------- table (group)


def recent_tricks_lines(lang: str, names: Sequence[str],
                        tricks: Sequence[TrickView]) -> list[str]:
    """The tricks won since the table message's previous edit, in order, with who took
    each and its points (a spectators' table is redrawn every other trick: they miss
    none). Nothing for none."""
    if not tricks:
        return []
    lines = [trn(lang, "table.recent_tricks", len(tricks))]
    for trick in tricks:
        lines.append(tr(lang, "table.recent_trick", n=trick.trick + 1,
                        name=_name(names, trick.winner),
                        points=trn(lang, "n.points", trick.points or 0)))
    return lines


def _trick_lines(lang: str, style: str, view: View, names: Sequence[str],
                 since: int | None = None) -> list[str]:
    lines: list[str] = []
    if since is not None:
        # every trick won since the previous edit but the one shown in full below
        recent = view.tricks[since:]
        shown_below = not view.current_trick and len(recent) == 1
        lines += [] if shown_below else recent_tricks_lines(lang, names, recent)
    if view.current_trick:
        lines.append(tr(lang, "table.trick", n=view.trick_no + 1, of=_tricks_total(view)))
        plays = view.current_trick
    elif view.tricks:
        last = view.tricks[-1]
        lines.append(tr(lang, "table.last_trick", n=last.trick + 1, name=_name(names, last.winner)))
        plays = last.plays
    else:
        return lines
    # Who played what, in the trick just taken too: the group's edits are paced, so a
    # whole trick may pass between two of them (il morto's automatic plays included).
    for seat, card in plays:
        lines.append(f"  {_name(names, seat)}: {card_label(style, card)}")
    return lines


def _contract_lines(lang: str, style: str, view: View, names: Sequence[str]) -> list[str]:
    lines = [
        tr(
            lang,
            "table.contract",
            name=_name(names, view.chiamante),
            contract=contract_text(lang, style, view),
        )
    ]
    if view.contract == "carichi":
        lines.append(tr(lang, "table.no_trump"))
    elif view.trump is not None and view.called_card is not None and (
        view.trump_public or view.seat is not None
    ):
        lines.append(
            tr(
                lang,
                "table.trump",
                suit=suit_name(style, view.trump),
                card=card_name(lang, style, view.called_card),
            )
        )
        if not view.trump_public:
            lines.append(tr(lang, "table.secret_for_others"))
    elif view.phase == "play":
        lines.append(tr(lang, "table.buio"))
    if view.contract != "carichi" and view.phase == "play":
        if view.partner_revealed and view.solo:
            lines.append(tr(lang, "table.in_mano", name=_name(names, view.chiamante)))
        elif view.partner_revealed:
            lines.append(tr(lang, "table.socio", name=_name(names, view.socio)))
        elif view.seat is not None and view.socio == view.seat:
            lines.append(tr(lang, "private.you_are_socio"))
        elif view.seat is not None and view.seat == view.chiamante and view.solo:
            lines.append(tr(lang, "private.you_are_alone"))
        else:
            lines.append(tr(lang, "table.socio_unknown"))
    return lines


def contract_lines(lang: str, style: str, view: View, names: Sequence[str]) -> list[str]:
    """The contract, the briscola and the socio as a table shows them to ``view``'s seat
    (the Mini App shows the same lines)."""
    return _contract_lines(lang, style, view, names)


def _auction_lines(lang: str, style: str, view: View, names: Sequence[str]) -> list[str]:
    n = view.players
    order = [(view.dealer + 1 + i) % n for i in range(n)]
    lines = [tr(lang, "table.order", order=" → ".join(_name(names, s) for s in order))]
    if view.auction:
        for seat, code in view.auction:
            lines.append(f"  {_name(names, seat)}: {bid_text(lang, style, code)}")
    else:
        lines.append("  " + tr(lang, "table.no_bids"))
    if view.current_bid is not None:
        lines.append(
            tr(
                lang,
                "table.current_bid",
                bid=bid_text(lang, style, view.current_bid),
                name=_name(names, view.current_bidder),
            )
        )
    return lines


def table_text(lang: str, view: View, names: Sequence[str], note: str = "",
               since: int | None = None) -> str:
    """The table message: the group renders ``view(None)``, a player ``view(seat)``.

    ``since``: how many of the smazzata's tricks the message showed when last edited
    (None: not known): the tricks won after them are listed (see
    :func:`recent_tricks_lines`), but a single one just taken, which is shown in full."""
    style = view.options.deck_style.value
    head = tr(
        lang,
        "table.head",
        n=view.smazzata + 1,
        dealer=_name(names, view.dealer),
    )
    lines = [head]
    if view.game == "briscola":
        lines += _briscola_lines(lang, style, view, names, since)
    elif view.phase == "auction":
        lines.append(tr(lang, "table.auction"))
        lines += _auction_lines(lang, style, view, names)
    elif view.phase == "declaration":
        lines.append(
            tr(
                lang,
                "table.declaring_card" if view.contract == "punti" else "table.declaring",
                name=_name(names, view.chiamante),
                contract=contract_text(lang, style, view),
            )
        )
    elif view.phase == "play":
        lines += _contract_lines(lang, style, view, names)
        lines += _trick_lines(lang, style, view, names, since)
    if view.current_seat is not None and view.phase != "over":
        lines.append("")
        if view.seat is not None and view.current_seat == view.seat:
            lines.append(tr(lang, "table.your_turn"))
        else:
            lines.append(tr(lang, "table.turn", name=_name(names, view.current_seat)))
    if note:
        lines += ["", note]
    return clip("\n".join(lines))


def _briscola_lines(lang: str, style: str, view: View, names: Sequence[str],
                    since: int | None = None) -> list[str]:
    """Plain Briscola's table: sides, face-up briscola, stock, the trick (R101–R107).

    No running score: the points taken are counted at the end (R107 gives the pair's to
    the partners only, in their private view)."""
    lines = [game_label(lang, view.options) + " · " + briscola_match_text(lang, view.options)]
    if view.players == 4:
        lines.append(tr(lang, "table.pairs", a=_side(names, view.sides[0]),
                        b=_side(names, view.sides[1])))
    if view.side_wins and any(view.side_wins):
        wins = " · ".join(f"{_side(names, side)} {w}"
                          for side, w in zip(view.sides, view.side_wins, strict=True))
        lines.append(tr(lang, "table.wins", wins=wins))
    if view.face_up is not None:
        lines.append(tr(lang, "table.face_up", card=card_label(style, view.face_up),
                        suit=suit_name(style, view.face_up // 10)))
    if view.stock_count:
        lines.append(trn(lang, "table.stock", view.stock_count))
    elif view.face_up_holder is not None:
        lines.append(tr(lang, "table.stock_empty", name=_name(names, view.face_up_holder)))
    if _just_drew(view):
        lines.append(tr(lang, "table.drawn"))
    lines += _trick_lines(lang, style, view, names, since)
    return lines


def _deck_size(view: View) -> int:
    return sum(view.hand_sizes) + view.stock_count + sum(len(p) for p in view.played)


def _tricks_total(view: View) -> int:
    """Tricks in a smazzata: 8 with 5 seats (il morto's included), 6 with six (R94),
    20, 13 and 10 in plain Briscola for 2, 3 and 4."""
    return _deck_size(view) // view.players


def _just_drew(view: View) -> bool:
    """Plain Briscola: everyone drew a card after the last trick (R105)."""
    if not view.tricks:
        return False
    draw_rounds = (_deck_size(view) - 3 * view.players) // view.players
    return view.tricks[-1].trick < draw_rounds


def _side(names: Sequence[str], side: Sequence[int]) -> str:
    return " + ".join(_name(names, s) for s in side)


def _briscola_private_lines(lang: str, style: str, view: View, names: Sequence[str]) -> list[str]:
    """What one Briscola player alone sees: the card just drawn, R107's partner hand."""
    lines: list[str] = []
    if len(view.hand) == 3 and _just_drew(view):
        lines.append(tr(lang, "private.drew", card=card_label(style, view.hand[-1])))
    if view.partner_hand is not None:
        cards = " ".join(card_label(style, c) for c in view.partner_hand) or "—"
        lines.append(tr(lang, "private.partner_hand", cards=cards))
    if view.side_points is not None:
        lines.append(tr(lang, "private.side_points", points=view.side_points))
    return lines


def hand_text(lang: str, view: View, names: Sequence[str], note: str = "") -> str:
    """A player's private message: their hand plus the table as they may see it."""
    style = view.options.deck_style.value
    cards = " ".join(card_label(style, c) for c in sorted(view.hand)) or "—"
    lines = [tr(lang, "private.hand_head", n=view.smazzata + 1), cards]
    if view.game == "briscola":
        lines += _briscola_private_lines(lang, style, view, names)
    lines.append("")
    lines.append(table_text(lang, view, names))
    if view.phase == "play" and view.current_seat == view.seat and view.legal:
        lines += ["", tr(lang, "private.play_hint")]
    elif view.phase == "declaration" and view.contract == "punti" and view.legal:
        lines += ["", tr(lang, "private.name_card_hint")]
    if note:
        lines += ["", note]
    return clip("\n".join(lines))


def voided_text(
    lang: str, smazzata: int, reason: str, names: Sequence[str], seat: int | None
) -> str:
    if reason == "monte":
        return tr(lang, "table.voided_monte", n=smazzata + 1, name=_name(names, seat))
    return tr(lang, "table.voided_pass", n=smazzata + 1)


def finished_table_text(
    lang: str, style: str, smazzata: int, names: Sequence[str], winner: int, cards: Sequence[int],
    trick: int = 7, recent: Sequence[TrickView] = (),
) -> str:
    """A closed table: its last trick (``recent``: the tricks won before it since the
    message's previous edit, listed first)."""
    return "\n".join(
        [
            tr(lang, "table.finished", n=smazzata + 1),
            *recent_tricks_lines(lang, names, recent),
            tr(lang, "table.last_trick", n=trick + 1, name=_name(names, winner)),
            "  " + "  ".join(card_label(style, c) for c in cards),
        ]
    )


# --------------------------------------------------------------------------- results


def briscola_result_text(
    lang: str, ev: BriscolaScored, names: Sequence[str], over: bool = False
) -> str:
    """Plain Briscola: each side's card points, who won the smazzata, the match so far."""
    lines = [tr(lang, "result.head", n=ev.smazzata + 1)]
    for side, points in zip(ev.sides, ev.points, strict=True):
        lines.append(f"  {_side(names, side)}: <b>{points}</b>")
    if ev.winner is None:
        lines.append(tr(lang, "result.patta"))
    else:
        lines.append(tr(lang, "result.side_won", name=_side(names, ev.sides[ev.winner])))
    wins = " · ".join(f"{_side(names, side)} {w}"
                      for side, w in zip(ev.sides, ev.wins, strict=True))
    lines.append(tr(lang, "table.wins", wins=wins))
    if not over:
        lines += ["", tr(lang, "result.next")]
    return clip("\n".join(lines))


def any_result_text(
    lang: str, style: str, ev: SmazzataScored | BriscolaScored, names: Sequence[str],
    over: bool = False, morto: int | None = None,
) -> str:
    if isinstance(ev, BriscolaScored):
        return briscola_result_text(lang, ev, names, over)
    return result_text(lang, style, ev, names, over, morto)


def scored_contract_text(lang: str, style: str, ev: SmazzataScored) -> str:
    """The contract of a scored smazzata in words ("2 a 70", "Asso")."""
    rank = "" if ev.rank is None else RANK_CODES[ev.rank]
    if ev.contract == "carichi":
        return tr(lang, "bid.carichi")
    if ev.contract == "punti":
        return tr(lang, "bid.points", points=ev.points)
    if ev.contract == "rank":
        return rank_name(style, rank)
    if ev.contract == "two":
        return tr(lang, "bid.two", points=ev.points)
    return tr(lang, "bid.obbligato", rank=rank_name(style, rank), points=ev.points)


def result_text(
    lang: str, style: str, ev: SmazzataScored, names: Sequence[str], over: bool = False,
    morto: int | None = None,
) -> str:
    contract = scored_contract_text(lang, style, ev)
    lines = [tr(lang, "result.head", n=ev.smazzata + 1)]
    lines.append(tr(lang, "result.chiamante", name=_name(names, ev.chiamante), contract=contract))
    if ev.contract == "carichi":
        lines.append(tr(lang, "result.solo_carichi"))
    elif ev.in_mano or ev.socio is None:
        lines.append(tr(lang, "result.solo_in_mano"))
    else:
        lines.append(tr(lang, "result.socio", name=_name(names, ev.socio)))
    if ev.called_card is not None:
        lines.append(tr(lang, "result.called", card=card_name(lang, style, ev.called_card)))
    outcome = tr(lang, "result.won" if ev.won else "result.lost")
    lines.append(
        tr(
            lang,
            "result.points",
            points=ev.caller_points,
            against=120 - ev.caller_points,
            target=ev.target,
            outcome=outcome,
        )
    )
    mult = f"×{ev.multiplier}"
    if ev.cappotto:
        mult += " " + tr(lang, "result.cappotto")
    lines.append(tr(lang, "result.multiplier", mult=mult))
    lines.append("")
    lines.append(tr(lang, "result.changes"))
    for seat, delta in enumerate(ev.deltas):
        if seat == morto:
            continue  # il morto scores nothing (R92)
        total = unsigned(ev.totals[seat])
        lines.append(f"  {_name(names, seat)}: <b>{signed(delta)}</b> → {total}")
    if not over:
        lines.append("")
        lines.append(tr(lang, "result.next"))
    return clip("\n".join(lines))


def final_text(lang: str, final: MatchOver, names: Sequence[str], game: str,
               sides: Sequence[Sequence[int]] = (), *, alone: bool = False) -> str:
    """The final message: chiamata's scores, or plain Briscola's smazzate won per side."""
    if game != "briscola":
        return match_over_text(lang, final.totals, final.positions, final.winners, names,
                               alone=alone)
    lines = [tr(lang, "final.head")]
    for side in sorted(sides, key=lambda side: final.positions[side[0]]):
        crown = " 🏆" if side[0] in final.winners else ""
        wins = trn(lang, "final.smazzate_won", final.totals[side[0]])
        lines.append(f"{final.positions[side[0]]}. {_side(names, side)}: <b>{wins}</b>{crown}")
    lines += ["", tr(lang, "final.winners",
                     names=", ".join(_name(names, s) for s in final.winners)),
              tr(lang, "final.again_alone" if alone else "final.again")]
    return clip("\n".join(lines))


def match_over_text(
    lang: str, totals: Sequence[int], positions: Sequence[int], winners: Sequence[int],
    names: Sequence[str], *, alone: bool = False,
) -> str:
    """The final scores; ``alone`` (a private table): no group scoreboard to point to."""
    lines = [tr(lang, "final.head")]
    for seat in sorted(range(len(totals)), key=lambda s: (positions[s], s)):
        if positions[seat] == 0:
            continue  # il morto is not ranked (R93)
        crown = " 🏆" if seat in winners else ""
        total = signed(totals[seat])
        lines.append(f"{positions[seat]}. {_name(names, seat)}: <b>{total}</b>{crown}")
    lines.append("")
    lines.append(tr(lang, "final.winners", names=", ".join(_name(names, s) for s in winners)))
    lines.append(tr(lang, "final.again_alone" if alone else "final.again"))
    return clip("\n".join(lines))


def briscola_board_text(lang: str, rows: Sequence[BriscolaScoreRow]) -> str:
    """Plain Briscola's standings, one section per table size (rows sorted by the query)."""
    if not rows:
        return tr(lang, "board.briscola_empty")
    lines = [tr(lang, "board.briscola_head")]
    size, position, previous = 0, 0, (-1, -1)
    for index, row in enumerate(rows):
        if row.players != size:
            size, position, previous = row.players, 0, (-1, -1)
            start = index
            lines += ["", tr(lang, "board.briscola_size", n=size)]
        key = (row.matches_won, row.smazzate_won)
        if key != previous:
            position, previous = index - start + 1, key
        lines.append(tr(lang, "board.briscola_line", pos=position, name=esc(row.display_name),
                        won=row.matches_won, matches=trn(lang, "n.matches", row.matches),
                        smazzate_won=row.smazzate_won,
                        smazzate=trn(lang, "n.smazzate", row.smazzate)))
    return clip("\n".join(lines))


def leaderboard_text(
    lang: str, rows: Sequence[tuple[str, int, int, int, int, int]], *, briscola_hint: bool = False
) -> str:
    """Rows: (name, total, matches, smazzate, chiamante_count, chiamante_wins)."""
    hint = ["", tr(lang, "board.briscola_hint")] if briscola_hint else []
    if not rows:
        return "\n".join([tr(lang, "board.empty"), *hint])
    lines = [tr(lang, "board.head")]
    position = 0
    previous: int | None = None
    for index, (name, total, matches, smazzate, calls, call_wins) in enumerate(rows, 1):
        if total != previous:
            position, previous = index, total
        caller = (
            tr(lang, "board.caller", rate=f"{round(100 * call_wins / calls)}%", calls=calls)
            if calls else tr(lang, "board.never_caller")
        )
        lines.append(
            tr(
                lang,
                "board.line",
                pos=position,
                name=esc(name),
                total=signed(total),
                matches=trn(lang, "n.matches", matches),
                smazzate=trn(lang, "n.smazzate", smazzate),
                caller=caller,
            )
        )
    return clip("\n".join(lines + hint))


# --------------------------------------------------------------------------- statistics


def stats_text(lang: str, name: str, stats: PlayerStats) -> str:
    """/statistiche: every chat, this group (if any), alone against the computer."""
    lines = [tr(lang, "stats.head", name=esc(name))]
    sections = [("stats.overall", stats.overall)]
    if stats.here is not None:
        sections.append(("stats.here", stats.here))
    sections.append(("stats.solo", stats.solo))
    for title, record in sections:
        lines += ["", tr(lang, title), *record_lines(lang, record)]
    return clip("\n".join(lines))


def record_lines(lang: str, record: Record) -> list[str]:
    """The lines of one :class:`~bot.stats.Record` (empty records say so in one line)."""
    if not record.smazzate.played:
        return [tr(lang, "stats.none")]

    def won(tally: Tally) -> str:
        return trn(lang, "n.won", tally.won)

    def times(tally: Tally) -> str:
        return trn(lang, "n.times", tally.played)

    lines = [
        tr(lang, "stats.matches", matches=trn(lang, "n.matches", record.matches.played),
           won=won(record.matches)),
        tr(lang, "stats.smazzate", smazzate=trn(lang, "n.smazzate", record.smazzate.played),
           won=won(record.smazzate)),
    ]
    if record.chiamante.played:
        lines.append(tr(lang, "stats.chiamante", times=times(record.chiamante),
                        made=trn(lang, "n.made", record.chiamante.won),
                        failed=trn(lang, "n.failed", record.chiamante.lost)))
        for kind in CONTRACT_KINDS:
            tally = record.contracts.get(kind)
            if tally is not None:
                lines.append(tr(lang, "stats.contract", kind=tr(lang, f"kind.{kind}"),
                                made=trn(lang, "n.made", tally.won),
                                failed=trn(lang, "n.failed", tally.lost)))
    for key, tally in (("stats.in_mano", record.in_mano), ("stats.socio", record.socio),
                       ("stats.compare", record.compare)):
        if tally.played:
            lines.append(tr(lang, key, times=times(tally), won=won(tally)))
    if record.cappotti_made or record.cappotti_suffered:
        lines.append(tr(lang, "stats.cappotti", made=trn(lang, "n.made", record.cappotti_made),
                        suffered=trn(lang, "n.suffered", record.cappotti_suffered)))
    points, cards = record.average_points or 0.0, record.average_card_points or 0.0
    lines.append(tr(lang, "stats.average", points=_signed_decimal(lang, points),
                    cards=_decimal(lang, cards)))
    return lines


def _decimal(lang: str, value: float) -> str:
    text = f"{value:.1f}"
    return text.replace(".", ",") if lang == "it" else text


def _signed_decimal(lang: str, value: float) -> str:
    text = _decimal(lang, abs(value))
    return f"+{text}" if value > 0.05 else (f"−{text}" if value < -0.05 else "±0")
