"""Partner statistics (/statistiche, issue 48), pure: who you win with, who calls you,
and how you fare against one player.

Folded from the player's stored smazzate of chiamata (:func:`storage.repo.played_smazzate`)
and the other people at those tables (:func:`storage.partners.table_mates`), in every
chat. Plain Briscola is left out: its pairs are fixed by the seats, not chosen.

* a *partner* is the other person on your calling side: you called them (they were your
  socio) or they called you. :func:`best_partner` is the one you won most often with,
  among those with at least :data:`MIN_TOGETHER` smazzate together (by share of wins,
  then by smazzate together);
* *called by*: how many times each person, as chiamante, called your card;
* *head to head* against one person: the smazzate where you were on opposite sides and
  who won them, and those on the same side.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field

from bot.i18n import tr, trn
from bot.render.texts import esc
from storage import PlayedSmazzataRow
from storage.partners import Mate

#: Smazzate together before a partner can be "the one you win most with".
MIN_TOGETHER = 5


@dataclass
class Pairing:
    """You and one other person over the smazzate you both played."""

    user_id: int
    name: str
    together: int = 0
    together_won: int = 0
    #: smazzate in which they were the chiamante and called you
    called_you: int = 0
    #: smazzate in which you were the chiamante and called them
    you_called: int = 0
    against: int = 0
    against_won: int = 0  # won by you

    @property
    def share(self) -> float:
        return self.together_won / self.together if self.together else 0.0


@dataclass
class Partners:
    pairings: dict[int, Pairing] = field(default_factory=dict)

    def best_partner(self) -> Pairing | None:
        fit = [p for p in self.pairings.values() if p.together >= MIN_TOGETHER]
        if not fit:
            return None
        return max(fit, key=lambda p: (p.share, p.together, -p.user_id))

    def callers(self) -> list[Pairing]:
        """Who called you, most often first."""
        return sorted((p for p in self.pairings.values() if p.called_you),
                      key=lambda p: (-p.called_you, p.name.lower(), p.user_id))

    def against(self, user_id: int) -> Pairing | None:
        return self.pairings.get(user_id)


def partners(rows: Iterable[PlayedSmazzataRow], mates: Iterable[Mate]) -> Partners:
    """Fold the player's smazzate with the people at each of their tables."""
    at: dict[int, dict[int, Mate]] = {}
    for mate in mates:
        at.setdefault(mate.game_id, {})[mate.seat] = mate
    found = Partners()
    for row in rows:
        result = json.loads(row.result_json)
        if result.get("kind") != "scored":
            continue  # plain Briscola's pairs are fixed by the seats
        chiamante, socio, won = result["chiamante"], result["socio"], bool(result["won"])
        calling = {chiamante} | ({socio} if socio is not None else set())
        mine = row.seat in calling
        for seat, mate in at.get(row.game_id, {}).items():
            pairing = found.pairings.setdefault(
                mate.user_id, Pairing(mate.user_id, mate.display_name))
            pairing.name = mate.display_name or pairing.name
            if (seat in calling) == mine:
                if mine:  # partners are the calling side (compari are not chosen)
                    pairing.together += 1
                    pairing.together_won += int(won)
                    pairing.called_you += int(seat == chiamante and row.seat == socio)
                    pairing.you_called += int(row.seat == chiamante and seat == socio)
            else:
                pairing.against += 1
                pairing.against_won += int(won == mine)
    return found


#: Callers listed by name at most (the others are counted).
MAX_CALLERS = 5


def partner_lines(lang: str, found: Partners, rival: tuple[int, str] | None) -> list[str]:
    """/statistiche's partner section; ``rival``: (user id, name) for a head-to-head."""
    lines: list[str] = []
    best = found.best_partner()
    if best is not None:
        lines.append(tr(lang, "partners.best", name=esc(best.name),
                        won=trn(lang, "n.won", best.together_won),
                        together=trn(lang, "n.smazzate", best.together)))
    callers = found.callers()
    if callers:
        named = ", ".join(tr(lang, "partners.caller", name=esc(p.name),
                             times=trn(lang, "n.times", p.called_you))
                          for p in callers[:MAX_CALLERS])
        more = len(callers) - MAX_CALLERS
        if more > 0:
            named += " " + trn(lang, "partners.more", more)
        lines.append(tr(lang, "partners.called_by", callers=named))
    if rival is not None:
        user_id, name = rival
        pairing = found.against(user_id) or Pairing(user_id, name)
        lines.append(tr(lang, "partners.versus", name=esc(pairing.name or name),
                        against=trn(lang, "n.smazzate", pairing.against),
                        won=trn(lang, "n.won", pairing.against_won),
                        together=trn(lang, "n.smazzate", pairing.together),
                        together_won=trn(lang, "n.won", pairing.together_won)))
    return [tr(lang, "partners.head"), *lines] if lines else []
