"""``campione`` as it played before issue 49, beside today's, for the arena.

    python -m game.arena --make game.players.classic:make_player \
        --a campione --b campione-classico --option game=briscola --option players=2

``campione-classico`` is :class:`~game.players.champion.ChampionPlayer` without the
network's kind of opponent in its inference (``net_share`` 0); ``campione-risposte``
is campione with the network's answers to a lead too (``net_answers``); every other
name is :func:`game.players.create_player`'s. No level offers them: they are the
yardsticks of the changes (``docs/strongest.md``).
"""

from __future__ import annotations

from game.players import Player, create_player
from game.players.champion import ChampionPlayer

CLASSIC = "campione-classico"
#: campione with the network's answers to a lead too (``net_answers``; off in campione)
ANSWERS = "campione-risposte"


def make_player(kind: str, seed: int) -> Player:
    """``create_player``'s players, ``CLASSIC`` and ``ANSWERS``."""
    if kind == CLASSIC:
        return ChampionPlayer(seed, name=CLASSIC, net_share=0.0)
    if kind == ANSWERS:
        return ChampionPlayer(seed, name=ANSWERS, net_answers=True)
    return create_player(kind, seed)


__all__ = ["ANSWERS", "CLASSIC", "make_player"]
