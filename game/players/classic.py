"""``campione`` as it played before issue 49, beside today's, for the arena.

    python -m game.arena --make game.players.classic:make_player \
        --a campione --b campione-classico --option game=briscola --option players=2

``campione-classico`` is :class:`~game.players.champion.ChampionPlayer` without the
network's kind of opponent in its inference (``net_share`` 0); every other name is
:func:`game.players.create_player`'s. No level offers it: it is the yardstick of the
change (``docs/strongest.md``).
"""

from __future__ import annotations

from game.players import Player, create_player
from game.players.champion import ChampionPlayer

CLASSIC = "campione-classico"


def make_player(kind: str, seed: int) -> Player:
    """``create_player``'s players, and ``CLASSIC``."""
    if kind == CLASSIC:
        return ChampionPlayer(seed, name=CLASSIC, net_share=0.0)
    return create_player(kind, seed)


__all__ = ["CLASSIC", "make_player"]
