"""Unit tests of the bot's pure parts: callback data, catalogs, texts, keyboards, config."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from bot import callbacks as cb
from bot.config import ConfigError, load_settings
from bot.features.rules import rules_text
from bot.i18n import LANGUAGES, catalog, plural_catalog, tr, trn
from bot.prefs import MENU, Prefs, cycle, with_value
from bot.render import keyboards as kb
from bot.render import texts
from bot.service import Refused
from game import Game, TableOptions

BOT_DIR = Path(__file__).resolve().parent.parent / "bot"
PLACEHOLDER = re.compile(r"{(\w+)}")


# --------------------------------------------------------------------------- i18n


def test_catalogs_have_the_same_keys_and_placeholders() -> None:
    it, en = catalog("it"), catalog("en")
    assert set(it) == set(en)
    for key in it:
        assert set(PLACEHOLDER.findall(it[key])) == set(PLACEHOLDER.findall(en[key])), key
        assert it[key].strip() and en[key].strip(), key
    plural_it, plural_en = plural_catalog("it"), plural_catalog("en")
    assert set(plural_it) == set(plural_en) and plural_it
    for key, forms in plural_it.items():
        assert len(forms) == len(plural_en[key]) == 2, key
        for form in (*forms, *plural_en[key]):
            assert "{n}" in form, key
    assert not set(plural_it) & set(it)


def test_counts_use_the_plural_forms_of_each_language() -> None:
    assert [trn("it", "n.smazzate", n) for n in (0, 1, 2)] == [
        "0 smazzate", "1 smazzata", "2 smazzate"]
    assert [trn("en", "n.matches", n) for n in (0, 1, 2)] == ["0 matches", "1 match", "2 matches"]
    assert trn("xx", "n.times", 1) == "1 volta"
    assert [Refused("alert.need_players", n).text("it").split(":")[0] for n in (1, 2)] == [
        "Manca 1 giocatore", "Mancano 2 giocatori"]
    assert Refused("alert.need_players", 1).text("en").startswith("1 player missing")
    assert "2 devono uscire" in Refused("alert.too_many_players", 2).text("it")
    assert Refused("alert.bad_button").text("en") == tr("en", "alert.bad_button")
    one = with_value(Prefs(), "match_end", "hands:1")
    assert "Partita: 1 smazzata;" in texts.options_summary("it", one)
    assert "Match: 1 deal;" in texts.options_summary("en", one)
    assert "La partita dura 1 smazzata." in rules_text("it", one)
    eleven = with_value(Prefs(), "match_end", "target:11")
    assert "si vince a 11 punti" in texts.options_summary("it", eleven)
    assert "reaches 11 points." in rules_text("en", eleven)
    menu = kb.settings_keyboard("it", eleven)
    assert menu is not None
    labels = [b.text for row in menu.inline_keyboard for b in row]
    assert any(label.endswith(": si vince a 11 punti") for label in labels), labels
    assert not [label for label in labels if "target:" in label]
    assert "Cappotto: cappotto doppio" in labels and "Vincitori: vince chi ha più punti" in labels
    rows = [("Ada", 3, 1, 1, 0, 0), ("Bea", -3, 2, 1, 1, 1)]
    it = texts.leaderboard_text("it", rows)
    assert "1 partita · 1 smazzata · mai chiamante" in it
    assert "2 partite · 1 smazzata · chiamante 100% su 1" in it
    en = texts.leaderboard_text("en", rows)
    assert "1 match · 1 deal · never caller" in en and "2 matches" in en


def test_every_key_used_in_the_code_exists() -> None:
    keys: set[str] = set()
    plurals: set[str] = set()
    for path in BOT_DIR.rglob("*.py"):
        keys |= set(re.findall(r'tr\(\s*[\w.()]+,\s*"([a-z_]+\.[a-z_0-9.]+)"', path.read_text()))
        # Refused("key") is a message, Refused("key", count) one with plural forms
        for key, count in re.findall(r'Refused\("([a-z_]+\.[a-z_0-9.]+)"(,\s*(?!\w+=)\S)?',
                                     path.read_text()):
            (plurals if count else keys).add(key)
        plurals |= set(
            re.findall(r'trn\(\s*[\w.()]+,\s*"([a-z_]+\.[a-z_0-9.]+)"', path.read_text())
        )
    assert len(keys) > 100
    dynamic = {f"set.{o.key}" for o in MENU} | {"val.on", "val.off", "lobby.started",
               "lobby.cancelled", "seat.left", "seat.blocked",
               "rules.winners_top", "rules.winners_seed000",
               "opt.cappotto_double", "opt.cappotto_off", "opt.winners_top",
               "opt.winners_seed000"}
    from game import REASONS
    dynamic |= {f"reason.{code}" for code in REASONS}
    from bot.features.help import GROUP_COMMANDS, PRIVATE_COMMANDS
    dynamic |= {f"cmd.{it}" for it, _ in GROUP_COMMANDS + PRIVATE_COMMANDS}
    dynamic |= {"kind.rank", "kind.two", "kind.obbligato", "kind.carichi"}
    for lang in LANGUAGES:
        missing = (keys | dynamic) - set(catalog(lang))
        assert not missing, (lang, sorted(missing))
        assert {"alert.need_players", "alert.too_many_players"} <= plurals
        dynamic_plurals = {"rules.end_target", "rules.end_hands"}
        assert plurals and not (plurals | dynamic_plurals) - set(plural_catalog(lang)), lang


def test_tr_falls_back_and_formats() -> None:
    assert tr("en", "bid.two", points=70) == "2 at 70"
    assert tr("xx", "bid.two", points=70) == "2 a 70"
    assert tr("it", "no.such.key") == "no.such.key"


# --------------------------------------------------------------------------- callbacks


def test_callback_round_trip_and_rejections() -> None:
    data = cb.action(123456789012, 99999, "o5.120")
    assert len(data.encode()) <= 64
    parsed = cb.parse(data)
    assert (parsed.kind, parsed.game_id, parsed.version, parsed.parts) == (
        "a", 123456789012, 99999, ("o5.120",)
    )
    assert cb.parse(cb.picker(5, 7, "t", 65)).parts == ("t", "65")
    assert cb.parse(cb.lobby(3, "join")).parts == ("join",)
    assert cb.parse(cb.settings("c", "3")).parts == ("c", "3")
    for bad in ["", "zzz", "a:1", "a:x:1:P", "a:1:x:P", "a:1:1", "a:0:1:P", "l:1",
                "a:1:1:P:extra", "s", "a:1:1:<b>", "x" * 65, "a:1:1:è"]:
        with pytest.raises(cb.BadCallback):
            cb.parse(bad)


def _views_of_a_random_game(seed: int) -> list:
    game = Game.new(TableOptions(a_carichi=True, monte=True), rng=random.Random(seed))
    rng = random.Random(seed)
    views = []
    while not game.is_over() and len(views) < 400:
        seat = game.current_seat()
        assert seat is not None
        views.append(game.view(seat))
        views.append(game.view(None))
        legal = game.legal_actions(seat)
        passes = [a for a in legal if a.code == "P"]
        action = passes[0] if passes and rng.random() < 0.6 and game.bids else rng.choice(legal)
        game.apply(seat, action)
    return views


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_keyboard_fits_telegram(seed: int) -> None:
    gid = 10**12
    for view in _views_of_a_random_game(seed):
        boards = [kb.lobby_keyboard("it", gid), kb.cancel_keyboard("en", gid),
                  kb.settings_keyboard("it", Prefs())]
        if view.seat is None:
            boards.append(kb.calls_keyboard("it", gid, view))
            if view.phase == "auction":
                boards.append(kb.picker_keyboard("it", gid, view, "t", 120))
                boards.append(kb.confirm_keyboard("en", gid, view, "K"))
        else:
            boards.append(kb.private_keyboard("en", gid, view))
        for board in boards:
            for data in kb.all_callback_data(board):
                assert len(data.encode()) <= 64, data
                cb.parse(data)
            if board is not None:
                assert sum(len(r) for r in board.inline_keyboard) <= 100
                assert all(len(r) <= 8 for r in board.inline_keyboard)


def test_group_keyboard_reveals_nothing_of_hands() -> None:
    """Different hands, same public state: exactly the same group keyboard."""
    boards = set()
    for seed in range(20):
        view = Game.new(TableOptions(), rng=random.Random(seed)).view(None)
        data = kb.all_callback_data(kb.calls_keyboard("it", 1, view))
        boards.add(tuple(data))
        assert not [d for d in data if d.split(":")[-1].startswith(("o", "M", "c", "s"))]
    assert len(boards) == 1


# --------------------------------------------------------------------------- texts


def test_names_are_escaped_everywhere() -> None:
    names = ["<b>x</b>", "a & b", "Дима", "李", "e"]
    game = Game.new(TableOptions(), rng=random.Random(3))
    for seat in (None, 0, 1):
        text = texts.table_text("it", game.view(seat), names)
        assert "<b>x</b>" not in text and "&lt;b&gt;x&lt;/b&gt;" in text
        assert "a &amp; b" in text or "a & b" not in text
    board = texts.leaderboard_text("en", [("<i>", 3, 1, 2, 1, 1), ("&", -3, 1, 2, 0, 0)])
    assert "&lt;i&gt;" in board and "+3" in board and "−3" in board and "100%" in board


def test_group_table_never_shows_a_hand() -> None:
    game = Game.new(TableOptions(), rng=random.Random(5))
    group = texts.table_text("it", game.view(None), ["a"] * 5)
    private = texts.hand_text("it", game.view(0), ["a"] * 5)
    assert "Le tue carte" in private and "Le tue carte" not in group
    labels = [texts.card_label("napoletane", c) for c in game.view(0).hand]
    assert all(label in private for label in labels)


def test_texts_are_clipped() -> None:
    assert len(texts.clip("x\n" * 5000)) <= 4096


# --------------------------------------------------------------------------- prefs & config


def test_settings_menu_cycles_every_option() -> None:
    prefs = Prefs()
    for index, option in enumerate(MENU):
        seen = set()
        for _ in option.values:
            prefs = cycle(prefs, index)
            seen.add(Prefs.model_validate_json(prefs.to_json()).to_json())
        # players: only the table sizes of the chosen game (chiamata: 5, 4, 6)
        assert len(seen) == (3 if option.key == "players" else len(option.values)), option.key


def test_settings_players_follow_the_game() -> None:
    from bot.prefs import seat_count

    players = next(i for i, o in enumerate(MENU) if o.key == "players")
    game = next(i for i, o in enumerate(MENU) if o.key == "game")
    prefs = Prefs()
    sizes = []
    for _ in range(3):
        prefs = cycle(prefs, players)
        sizes.append((prefs.options.players, seat_count(prefs.options)))
    assert sizes == [(4, 4), (6, 6), (5, 5)]  # with 4, il morto's fifth seat is nobody's
    prefs = cycle(prefs, game)
    assert (prefs.options.game, prefs.options.players) == ("briscola", 2)
    seen = []
    for _ in range(3):
        prefs = cycle(prefs, players)
        seen.append(prefs.options.players)
    assert seen == [3, 4, 2]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ([], ("chiamata", 5, False)),
        (["briscola"], ("briscola", 2, False)),
        (["briscola", "2"], ("briscola", 2, False)),
        (["Briscola", "a", "4"], ("briscola", 4, False)),
        (["chiamata", "4"], ("chiamata", 4, False)),
        (["morto"], ("chiamata", 4, False)),
        (["chiamata", "a", "6"], ("chiamata", 6, False)),
        (["a", "punti"], ("chiamata", 5, True)),
        (["points", "6"], ("chiamata", 6, True)),
        (["briscola", "5"], None),
        (["chiamata", "3"], None),
        (["poker"], None),
    ],
)
def test_new_command_arguments(args: list[str], expected: tuple[str, int, bool] | None) -> None:
    from bot.prefs import new_game_prefs

    prefs = new_game_prefs(Prefs(), args)
    got = None if prefs is None else (
        prefs.options.game, prefs.options.players, prefs.options.a_punti
    )
    assert got == expected


def test_config_errors_are_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("BOT_TOKEN", raising=False)
    with pytest.raises(ConfigError) as err:
        load_settings()
    assert "\n" not in str(err.value) and "BOT_TOKEN" in str(err.value)
    monkeypatch.setenv("BOT_TOKEN", "123:abc")
    monkeypatch.setenv("TURN_TIMEOUT_SECONDS", "soon")
    with pytest.raises(ConfigError) as err:
        load_settings()
    assert "TURN_TIMEOUT_SECONDS" in str(err.value) and "\n" not in str(err.value)
    monkeypatch.setenv("TURN_TIMEOUT_SECONDS", "0")
    monkeypatch.setenv("DEFAULT_LANGUAGE", "en")
    settings = load_settings()
    assert settings.turn_timeout_seconds == 0 and settings.default_language == "en"


def test_main_prints_one_line_without_token(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "BOT_TOKEN"}
    env["PYTHONPATH"] = str(BOT_DIR.parent)
    out = subprocess.run([sys.executable, "-m", "bot"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert out.stderr.strip().count("\n") == 0 and "BOT_TOKEN" in out.stderr


def test_in_a_group_auction_only_the_bidder_in_turns_hand_is_urgent() -> None:
    """The seat in turn bids from its hand: its message carries the auction's calls of
    this version above its own stable calls, and its edit is a turn's (urgent). The other
    hands' private-only calls (obbligato ranks) are buttons drawn for the smazzata: shown
    out of turn too, the same bid after bid, so they are not urgent. Alone against
    computers, at a declaration and in play the hand in turn is urgent."""
    from telegram import InlineKeyboardMarkup

    from bot.budget import Priority
    from bot.tables.render import hand_pressable, hand_urgency
    from game import View

    def urgency(view: View, markup: InlineKeyboardMarkup | None, *,
                solo: bool = False) -> tuple[Priority, float]:
        pressable = hand_pressable(view, markup, away=False, solo=solo)
        return hand_urgency(view.phase, pressable=pressable, solo=solo, just_moved=False,
                            trick_over=False, lazy=4.0)

    seen = {"obbligato in turn": 0, "obbligato out of turn": 0, "play": 0}
    for seed in range(12):
        game = Game.new(TableOptions(), rng=random.Random(seed))
        rng = random.Random(seed)
        first: dict[int, list[str]] = {}
        while not game.is_over() and game.view(None).phase != "play":
            seat = game.current_seat()
            assert seat is not None
            view = game.view(seat)
            if view.phase == "auction":
                assert urgency(view, kb.solo_keyboard("it", 1, view), solo=True)[0] \
                    == Priority.TURN
                bids = kb.all_callback_data(kb.solo_keyboard("it", 1, view, stable=True))
                public = kb.all_callback_data(kb.calls_keyboard("it", 1, view))
                assert public and bids[: len(public)] == public  # the bids, in the hand
                assert all(d.startswith("h:1:0:") for d in bids[len(public):]), bids
                assert urgency(view, kb.solo_keyboard("it", 1, view, stable=True)) \
                    == (Priority.TURN, 0.0)
                for other in range(game.n):
                    oview = game.view(other)
                    markup = kb.private_keyboard("it", 1, oview)
                    data = kb.all_callback_data(markup)
                    assert all(d.startswith("h:1:0:") for d in data), data
                    if other != seat:
                        assert urgency(oview, markup) == (Priority.IDLE, 4.0)
                    if oview.passed[other]:
                        assert not data
                        continue
                    # the same buttons from the deal on (no call at points is lost here)
                    assert data == first.setdefault(other, data)
                    if data:
                        seen["obbligato in turn" if other == seat
                             else "obbligato out of turn"] += 1
                        ranks = {c[1:].split(".")[0] for c in oview.legal if c[0] == "o"}
                        assert other != seat or {d[-1] for d in data} == ranks
            else:  # the declaration: its buttons are in the hand
                markup = kb.private_keyboard("it", 1, view)
                assert markup is not None and urgency(view, markup) == (Priority.TURN, 0.0)
            legal = game.legal_actions(seat)
            passes = [a for a in legal if a.code == "P"]
            ranks = [a for a in legal if a.code.startswith("r")]
            game.apply(seat, passes[0] if passes and game.bids else rng.choice(ranks or legal))
        if not game.is_over():
            seat = game.current_seat()
            assert seat is not None
            view = game.view(seat)
            seen["play"] += 1
            assert urgency(view, kb.private_keyboard("it", 1, view)) == (Priority.TURN, 0.0)
            other = game.view((seat + 1) % game.n)
            assert urgency(other, kb.private_keyboard("it", 1, other)) \
                == (Priority.IDLE, 4.0 * 15)
    assert all(seen.values()), seen


def test_the_pressed_message_goes_before_every_turn_whatever_it_shows() -> None:
    """Showing the presser their own move is part of answering the press: the pressed
    message's edit is the most urgent call, in every phase, whether it still has
    something to press or not, alone or in a group, and it is never held."""
    from bot.budget import Priority
    from bot.tables.render import hand_urgency

    for phase in ("auction", "declaration", "play"):
        for pressable in (False, True):
            for solo in (False, True):
                assert hand_urgency(phase, pressable=pressable, solo=solo, just_moved=True,
                                    trick_over=False, lazy=4.0, pressed_here=True) \
                    == (Priority.PRESSED, 0.0)
                assert hand_urgency(phase, pressable=pressable, solo=solo, just_moved=True,
                                    trick_over=False, lazy=4.0)[0] > Priority.PRESSED


def test_result_totals_use_the_same_minus_sign_as_the_changes() -> None:
    from game.events import SmazzataScored

    ev = SmazzataScored(0, 0, 1, "rank", 0, 61, 0, 0, False, 91, 61, True, 1, False,
                        (2, 1, -1, -1, -1), (2, 1, -1, -1, -4))
    text = texts.result_text("it", "napoletane", ev, ["A", "B", "C", "D", "E"])
    assert "E: <b>−1</b> → −4" in text and "A: <b>+2</b> → 2" in text
    assert "-" not in text.split("Punteggi")[1]


def test_settings_and_levels_show_their_words_in_the_players_language() -> None:
    """The stored values stay Italian (``antiorario``, ``facile``); what is shown is
    translated through ``val.<value>`` / ``level.<name>``, a name without a translation
    (a level added later) shows as it is."""
    from bot.i18n import tr_word
    from bot.prefs import Prefs, with_value
    from bot.render.keyboards import settings_keyboard, solo_lobby_keyboard

    def labels(markup: object) -> list[str]:
        return [b.text for row in markup.inline_keyboard for b in row]  # type: ignore[attr-defined]

    prefs = with_value(Prefs(), "direction", "orario")
    english = labels(settings_keyboard("en", prefs))
    assert any(t.endswith(": clockwise") for t in english), english
    assert not any("orario" in t for t in english)
    assert any(t.endswith(": orario") for t in labels(settings_keyboard("it", prefs)))
    lobby_en = labels(solo_lobby_keyboard("en", 7))
    assert {"🤖 Computers: easy", "🤖 Computers: normal", "🤖 Computers: fast",
            "🤖 Computers: strong", "🤖 Computers: expert",
            "🤖 Computers: champion"} <= set(lobby_en), lobby_en
    assert "🤖 Computer campione" in labels(solo_lobby_keyboard("it", 7))
    assert "🤖 Computer esperto" in labels(solo_lobby_keyboard("it", 7))
    assert "🤖 Computer rapido" in labels(solo_lobby_keyboard("it", 7))
    assert tr_word("en", "level.unknown", "unknown") == "unknown"


def test_a_bid_on_an_old_group_keyboard_is_said_in_the_answer_while_the_group_waits() -> None:
    """Bids are drawn in the hands only (issue 32), but a group message drawn before an
    upgrade may still carry the current version's bids: pressed there while the group's
    pace holds its redraw, the answer says the bid; pressed in private, or when the group
    can be redrawn at once, a plain answer (the redraw shows it)."""
    from types import SimpleNamespace

    from bot.features.play import shown_soon
    from bot.prefs import Prefs
    from storage import GameRow

    class Box:
        wait = 0.0

        def wait_for(self, chat_id: int) -> float:
            return self.wait

        def private_interval(self) -> float:
            return 1.25

    row = GameRow(1, -100, 0, "playing", 10, Prefs().to_json(), 4, 3, None, "{}", None, 0, 0,
                  None, ())
    applied = SimpleNamespace(row=row, code="rR")
    box = Box()
    assert shown_soon(box, applied, (-100, 5)) is None  # type: ignore[arg-type]
    box.wait = 3.0
    said = shown_soon(box, applied, (-100, 5))  # type: ignore[arg-type]
    assert said is not None and said.startswith("✓ Hai detto:")
    assert shown_soon(box, applied, (10, 5)) is None  # type: ignore[arg-type]
    assert shown_soon(box, applied, None) is None  # type: ignore[arg-type]


# --------------------------------------------------------------------------- issue 48


def test_the_final_message_sums_the_matchs_rating_changes() -> None:
    from bot.ratings import model
    from bot.ratings.texts import with_match_changes
    from storage.ratings import RatingSeat

    def seat(n: int, player: str, before: float, after: float) -> RatingSeat:
        # sigma fixed: each point of mu is SCALE shown points
        return RatingSeat(n, player, before, 1.0, after, 1.0)

    step = 1 / model.SCALE  # mu for one shown point
    units = [  # two units; one computer level on seats 1 and 2: one player, once per unit
        [seat(0, "u:1", 30, 30 + 5 * step), seat(1, "cpu:normale", 30, 30 - 5 * step),
         seat(2, "cpu:normale", 30, 30 - 5 * step)],
        [seat(0, "u:1", 30 + 5 * step, 30 + 2 * step),
         seat(1, "cpu:normale", 30 - 5 * step, 30 - 2 * step),
         seat(2, "cpu:normale", 30 - 5 * step, 30 - 2 * step)],
    ]
    final = "🏁 <b>Partita finita!</b>\n1. Ada: <b>+3</b>\n\nVince: Ada\n🔁 Rivincita: …"
    text = with_match_changes("it", final, units, ["Ada", "Cpu", "Cpu"])
    lines = text.splitlines()
    start = model.shown(30, 1.0)
    assert lines[-1] == "🔁 Rivincita: …"  # what next stays last
    assert lines[lines.index("📈 <b>Rating</b> dopo la partita") + 1:][:2] == [
        f"  Ada: <b>{start + 2}</b> (+2)", f"  🤖 normale: <b>{start - 2}</b> (−2)"]
    assert text.count("🤖 normale") == 1
    assert with_match_changes("it", final, [], ["Ada"]) == final  # nothing rated


def test_the_admin_report_names_the_error() -> None:
    from telegram import Update

    from bot.app import error_report

    update = Update(7)
    died = error_report(update, None)
    assert "ProcessDied" in died and "None" not in died.split("\n", 1)[0]
    bare = error_report(update, KeyError())
    assert bare.split("\n", 1)[0] == "<b>Errore</b>: KeyError"
    said = error_report(update, RuntimeError("a <b> & c"))
    assert said.split("\n", 1)[0] == "<b>Errore</b>: RuntimeError: a &lt;b&gt; &amp; c"
