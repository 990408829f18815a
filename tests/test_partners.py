"""Partner statistics (issue 48), pure: the partner you win most with (at least five
smazzate together), who called you, a head-to-head line; plain Briscola left out."""

from __future__ import annotations

import json

from bot.partners import MIN_TOGETHER, partner_lines, partners
from storage import PlayedSmazzataRow
from storage.partners import Mate

ME = 0  # my seat in every game below


def smazzata(
    game: int, index: int, chiamante: int, socio: int | None, won: bool
) -> PlayedSmazzataRow:
    result = {"kind": "scored", "chiamante": chiamante, "socio": socio, "won": won}
    return PlayedSmazzataRow(game, -1, "finished", "{}", ME, index, json.dumps(result))


MATES = [Mate(1, 1, 11, "Bea"), Mate(1, 2, 12, "Cleo"), Mate(1, 3, 13, "Dino")]


def test_best_partner_needs_five_smazzate_together() -> None:
    rows = [smazzata(1, i, ME, 1, won=i < 3) for i in range(4)]  # Bea: 3 of 4
    rows += [smazzata(1, 10 + i, 2, ME, won=i < 3) for i in range(MIN_TOGETHER)]  # Cleo: 3/5
    found = partners(rows, MATES)
    best = found.best_partner()
    assert best is not None and best.name == "Cleo"
    assert (best.together, best.together_won) == (5, 3)
    rows.append(smazzata(1, 20, 1, ME, won=True))  # Bea: 4 of 5 now
    best = partners(rows, MATES).best_partner()
    assert best is not None and best.name == "Bea" and best.called_you == 1
    assert best.you_called == 4


def test_callers_and_head_to_head() -> None:
    rows = [
        smazzata(1, 0, 2, ME, won=True),   # Cleo called me, we won
        smazzata(1, 1, 2, ME, won=False),  # again, lost
        smazzata(1, 2, 1, ME, won=True),   # Bea called me
        smazzata(1, 3, 1, 3, won=True),    # Bea and Dino won against me (and Cleo)
        smazzata(1, 4, ME, ME, won=False),  # in mano, lost: against everyone, nobody with me
        PlayedSmazzataRow(1, -1, "finished", "{}", ME, 5, json.dumps(
            {"kind": "briscola_scored", "sides": [[0, 2], [1, 3]], "wins": [1, 0]})),
    ]
    found = partners(rows, MATES)
    assert [(p.name, p.called_you) for p in found.callers()] == [("Cleo", 2), ("Bea", 1)]
    bea = found.against(11)
    # against Bea when Cleo called me (won, lost), when she called Dino, when I was alone
    assert bea is not None and (bea.against, bea.against_won, bea.together) == (4, 1, 1)
    dino = found.against(13)  # never on my side: against in all five, two won by me
    assert dino is not None and (dino.against, dino.against_won, dino.together) == (5, 2, 0)
    assert found.best_partner() is None
    lines = partner_lines("it", found, (13, "Dino"))
    assert lines[0].startswith("<b>Compagni</b>")
    assert "Ti hanno chiamato: Cleo (2 volte), Bea (1 volta)" in lines
    assert "Contro Dino: 5 smazzate da avversari, 2 vinte da te; insieme 0 smazzate, 0 vinte" \
        in lines
    english = partner_lines("en", found, (99, "<Zed>"))  # never met: zeros, name escaped
    assert english[-1] == ("Against &lt;Zed&gt;: 0 deals as opponents, 0 won by you; "
                           "together 0 deals, 0 won")
    assert partner_lines("it", partners([], []), None) == []
