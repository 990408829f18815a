"""bot/stats.py: a player's record folded from stored smazzata results (pure), and its text."""

from __future__ import annotations

import json

from bot.prefs import Prefs
from bot.render import texts
from bot.stats import player_stats
from game import TableOptions
from storage import PlayedSmazzataRow

GROUP, OTHER, PRIVATE = -100, -200, 42


def result(chiamante: int, socio: int | None, won: bool, caller_points: int, deltas: list[int],
           totals: list[int], contract: str = "rank", in_mano: bool = False) -> str:
    return json.dumps({
        "smazzata": 0, "chiamante": chiamante, "socio": socio, "contract": contract,
        "rank": 0, "points": 61, "called_card": 0, "trump": 0, "in_mano": in_mano,
        "caller_points": caller_points, "target": 61, "won": won, "multiplier": 1,
        "cappotto": caller_points in (0, 120), "deltas": deltas, "totals": totals,
        "kind": "scored",
    })


def row(game: int, chat: int, status: str, seat: int, index: int, text: str,
        winners: str = "top", players: int = 5) -> PlayedSmazzataRow:
    prefs = Prefs(options=TableOptions(winners=winners, players=players))  # type: ignore[arg-type]
    return PlayedSmazzataRow(game, chat, status, prefs.to_json(), seat, index,  # type: ignore[arg-type]
                             text)


def test_record_by_role_contract_scope_and_match() -> None:
    rows = [
        # game 1 in GROUP, finished, the player (seat 0) is chiamante then socio
        row(1, GROUP, "finished", 0, 0, result(0, 2, True, 80, [2, -1, 1, -1, -1],
                                               [2, -1, 1, -1, -1])),
        row(1, GROUP, "finished", 0, 1, result(3, 0, False, 0, [-2, 1, 1, -4, 1],
                                               [0, 0, 2, -5, 0], contract="two")),
        # game 2 in OTHER, still playing: compare with a cappotto made by the compari
        row(2, OTHER, "playing", 1, 0, result(0, 2, False, 0, [-4, 2, -2, 2, 2],
                                              [-4, 2, -2, 2, 2])),
        # game 3 alone in a private chat, finished: in mano a carichi, won with 120
        row(3, PRIVATE, "finished", 4, 0, result(4, None, True, 120, [-2, -2, -2, -2, 8],
                                                 [-2, -2, -2, -2, 8], contract="carichi",
                                                 in_mano=True)),
    ]
    stats = player_stats(rows, GROUP)
    overall, here, solo = stats.overall, stats.here, stats.solo
    assert here is not None
    assert (overall.matches.played, overall.matches.won) == (2, 1)  # game 1 lost: 0 < 2
    assert (overall.smazzate.played, overall.smazzate.won) == (4, 3)
    assert (overall.chiamante.played, overall.chiamante.won) == (2, 2)
    assert {k: (t.played, t.won) for k, t in overall.contracts.items()} == {
        "rank": (1, 1), "carichi": (1, 1)}
    assert (overall.in_mano.played, overall.socio.played, overall.compare.played) == (1, 1, 1)
    assert (overall.socio.won, overall.compare.won) == (0, 1)
    assert (overall.cappotti_made, overall.cappotti_suffered) == (2, 1)
    assert overall.points == 2 - 2 + 2 + 8
    assert overall.card_points == 80 + 0 + 120 + 120
    assert (here.smazzate.played, here.matches.played, here.points) == (2, 1, 0)
    assert (solo.smazzate.played, solo.matches.won, solo.points) == (1, 1, 8)
    assert player_stats(rows, None).here is None

    text = texts.stats_text("it", "Ada & <co>", stats)
    assert "Ada &amp; &lt;co&gt;" in text
    assert "Partite: 2 partite, 1 vinta" in text and "Smazzate: 4 smazzate, 3 vinte" in text
    assert "Da chiamante: 2 volte, 2 fatti, 0 falliti" in text
    assert "a carichi: 1 fatto, 0 falliti" in text and "Da socio: 1 volta, 0 vinte" in text
    assert "Cappotti: 2 fatti, 1 subito" in text and "<b>+2,5</b> punti" in text
    english = texts.stats_text("en", "Ada", player_stats(rows[:1], OTHER))
    assert "In this group</b>\nno deals yet" in english
    assert "Matches: 1 match, 1 won" in english and "As caller: 1 time, 1 made" in english


def test_seed000_winners_rule_decides_the_match() -> None:
    # totals 3, 2, -1, -2, -2: under seed000 the second is a winner too (R84)
    text = result(0, 1, True, 70, [3, 2, -1, -2, -2], [3, 2, -1, -2, -2])
    assert player_stats([row(1, GROUP, "finished", 1, 0, text)], None).overall.matches.won == 0
    seed000 = [row(1, GROUP, "finished", 1, 0, text, winners="seed000")]
    assert player_stats(seed000, None).overall.matches.won == 1


def test_il_morto_ranks_nowhere_in_the_match_winners() -> None:
    # chiamata with four, il morto at seat 2 (its share discarded: R92, R93). Every person
    # ends below il morto's 0: the best person (seat 0, -1) still wins the match.
    text = result(3, 1, True, 70, [-1, 1, 0, 2, -1], [-1, -3, 0, -2, -4])
    assert player_stats([row(1, GROUP, "finished", 0, 0, text, players=4)],
                        None).overall.matches.won == 1
    assert player_stats([row(1, GROUP, "finished", 1, 0, text, players=4)],
                        None).overall.matches.won == 0
    # the same totals with five people: seat 2's 0 is the best score
    assert player_stats([row(1, GROUP, "finished", 0, 0, text)], None).overall.matches.won == 0
