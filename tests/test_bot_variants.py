"""The bot's pure builders over every variant (issue 12): what the group may see, the
Telegram limits, il morto's seat, plain Briscola's texts and standings, plural forms."""

from __future__ import annotations

import random

import pytest

from bot import callbacks as cb
from bot.i18n import LANGUAGES, plural_catalog, trn
from bot.render import keyboards as kb
from bot.render import texts
from game import Game, TableOptions
from storage import BriscolaScoreRow

VARIANTS = [
    {"players": 4}, {"players": 6}, {"a_punti": True}, {"a_punti": True, "players": 4},
    {"game": "briscola", "players": 2}, {"game": "briscola", "players": 3},
    {"game": "briscola", "players": 4},
]
#: Texts only a player's own private message may hold.
PRIVATE_ONLY = ("Le tue carte", "Hai pescato", "Carte del compagno", "Punti della coppia",
                "Tocca a te")
BIG_ID = 10**17  # the longest game id the callbacks accept


def _names(game: Game) -> list[str]:
    names = [f"<Giocatore {s}> " + "x" * 60 for s in range(game.n)]
    if game.morto is not None:
        names[game.morto] = "💀 il morto"
    return names


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: "-".join(map(str, v.values())))
def test_every_screen_of_a_match_fits_telegram(variant: dict[str, object]) -> None:
    """A whole match: every group and private text ≤ 4096 chars, every callback ≤ 64
    bytes, no hand (or R107 info) in the group's text, buttons only for legal codes."""
    options = TableOptions(match_end="hands:1", briscola_match="rounds:1", **variant)
    game = Game.new(options, rng=random.Random(5))
    rng = random.Random(9)
    names = _names(game)
    morto_shown = 0
    while not game.is_over():
        table = game.view(None)
        group = texts.table_text("it", table, names)
        assert len(group) <= 4096 and not any(m in group for m in PRIVATE_ONLY), group
        # il morto's automatic plays (R90) are on the group's table as its own seat's
        style = table.options.deck_style.value
        for seat, card in table.current_trick:
            if seat == game.morto:
                assert f"💀 il morto: {texts.card_label(style, card)}" in group, group
                morto_shown += 1
        for data in kb.all_callback_data(kb.calls_keyboard("it", BIG_ID, table)):
            assert len(data.encode()) <= cb.MAX_BYTES
        for seat in range(game.n):
            view = game.view(seat)
            assert len(texts.hand_text("en", view, names)) <= 4096
            if seat == game.morto:
                assert view.hand == () and view.legal == ()
                continue
            markup = kb.private_keyboard("it", BIG_ID, view)
            for data in kb.all_callback_data(markup):
                assert len(data.encode()) <= cb.MAX_BYTES
                code = data.split(":")[3] if data.startswith("a:") else None
                if code and code[0] in "sd":  # suits and a punti's cards: legal ones only
                    assert code in view.legal
        seat = game.current_seat()
        assert seat is not None and seat != game.morto
        game.apply(seat, rng.choice(game.legal_actions(seat)))
    assert game.final is not None
    assert morto_shown > 0 or game.morto is None
    final = texts.final_text("it", game.final, names, game.rules.game, game.rules.sides)
    assert len(final) <= 4096 and "💀" not in final  # il morto is not ranked (R93)


def test_a_punti_group_keyboard_offers_point_calls_then_the_card_naming() -> None:
    game = Game.new(TableOptions(a_punti=True), rng=random.Random(2))
    data = kb.all_callback_data(kb.calls_keyboard("it", 7, game.view(None)))
    assert data == ["p:7:0:n:61", "a:7:0:P"]
    picker = kb.picker_keyboard("it", 7, game.view(None), "n", 70)
    assert "a:7:0:n70" in kb.all_callback_data(picker)
    while game.phase.value == "auction":  # the first calls 61, the others pass
        seat = game.current_seat()
        assert seat is not None
        code = "n61" if game.current_bid is None else "P"
        game.apply(seat, next(a for a in game.legal_actions(seat) if a.code == code))
    view = game.view(game.chiamante)
    naming = kb.all_callback_data(kb.private_keyboard("it", 7, view))
    assert sorted(d.split(":")[3] for d in naming) == sorted(view.legal)
    assert "la carta" in texts.table_text("it", game.view(None), _names(game))


def test_briscola_table_shows_face_up_stock_and_match_format_but_no_points() -> None:
    game = Game.new(TableOptions(game="briscola", players=2), rng=random.Random(1))
    names = ["Anna", "Beppe"]
    text = texts.table_text("it", game.view(None), names)
    assert "scoperta sotto il mazzo" in text and "Mazzo: 34 carte da pescare" in text
    assert "vince chi arriva a 2 smazzate" in text
    for _ in range(2):
        seat = game.current_seat()
        assert seat is not None
        game.apply(seat, game.legal_actions(seat)[0])
    text = texts.table_text("it", game.view(None), names)
    assert "Tutti hanno pescato" in text and "Mazzo: 32 carte" in text
    assert "Punti" not in text
    mine = texts.hand_text("it", game.view(0), names)
    assert "Hai pescato: <b>" in mine


def test_plural_forms_per_language() -> None:
    assert trn("it", "table.stock", 1) == "Mazzo: 1 carta da pescare"
    assert trn("it", "table.stock", 2) == "Mazzo: 2 carte da pescare"
    assert trn("en", "final.smazzate_won", 1) == "1 smazzata won"
    assert trn("en", "final.smazzate_won", 0) == "0 smazzate won"
    assert plural_catalog("it").keys() == plural_catalog("en").keys()
    for lang in LANGUAGES:
        assert all(len(forms) == 2 for forms in plural_catalog(lang).values())


def test_briscola_standings_text_ranks_by_table_size() -> None:
    rows = [
        BriscolaScoreRow(1, 2, "1", "Anna", 5, 3, 2, 2),
        BriscolaScoreRow(1, 2, "2", "Beppe", 5, 2, 2, 0),
        BriscolaScoreRow(1, 4, "1+3", "Anna + <Carla>", 3, 3, 1, 1),
        BriscolaScoreRow(1, 4, "2", "Dario", 1, 0, 1, 0),
    ]
    text = texts.briscola_board_text("it", rows)
    assert "Briscola a 2" in text and "Briscola a 4" in text
    assert "1. Anna: <b>2</b> su 2 partite · 3 su 5 smazzate" in text and "2. Beppe" in text
    assert "1. Anna + &lt;Carla&gt;: <b>1</b> su 1 partita · 3 su 3 smazzate" in text
    assert "2. Dario: <b>0</b> su 1 partita · 0 su 1 smazzata" in text
    assert texts.briscola_board_text("en", []) == "No Briscola match in this chat yet."


@pytest.mark.parametrize("morto", [None, 0, 2, 4])
def test_lobby_seats_are_laid_around_il_morto(morto: int | None) -> None:
    from bot.service import game_seats
    from storage import SeatRow

    lobby = [SeatRow.human(3, 13, "D", None), SeatRow.human(0, 10, "A", None),
             SeatRow.computer(1, "🤖", "facile"), SeatRow.human(2, 12, "C", None)]
    seated = game_seats(lobby, morto)
    numbers = [s.seat for s in seated]
    assert [s.display_name for s in seated] == ["A", "🤖", "C", "D"]  # lobby order kept
    assert numbers == [n for n in range(4 + (morto is not None)) if n != morto]
