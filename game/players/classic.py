"""``campione`` with and without issue 49's network, for the arena.

    python -m game.arena --make game.players.classic:make_player \
        --a campione-rete --b campione-classico --option game=briscola --option players=2

``campione-classico`` is :class:`~game.players.champion.ChampionPlayer` without the
network's kind of opponent in its inference (``net_share`` 0: ``campione`` before issue
49); ``campione-rete`` reads it (``NET_SHARE``: today's ``campione``,
:data:`game.players.champion.NET_INFERENCE` being on); ``campione-risposte`` is
``campione-rete`` with the network's answers to a lead too (``net_answers``). Whether or
not ``campione`` does, ``campione-tre`` searches three-player Briscola itself
(``three``), ``campione-quattro`` rolls out four-player Briscola with the policy
(``four_weights``), ``campione-quattro-esatto`` ends its four-player rollouts with the
two sides' exact last tricks (``four_exact``), and ``campione-ultime`` plays the last two
tricks of chiamata's rollouts exactly (``exact_tricks``). Every other name is
:func:`game.players.create_player`'s. No level offers them: they are the yardsticks of
the changes (``docs/strongest.md``).
"""

from __future__ import annotations

from game.players import Player, create_player
from game.players.champion import NET_SHARE, ROLLOUT_WEIGHTS, ChampionPlayer

CLASSIC = "campione-classico"
#: campione with the network's kind of opponent in its inference
NETWORK = "campione-rete"
#: ... and with the network's answers to a lead too (``net_answers``)
ANSWERS = "campione-risposte"
#: campione with its own search in three-player Briscola
THREE = "campione-tre"
#: campione with the policy's rollouts in four-player Briscola
FOUR = "campione-quattro"
#: campione with chiamata's rollouts' last two tricks played exactly
LAST = "campione-ultime"
#: campione with four-player rollouts' last tricks played exactly by the two sides
FOUR_EXACT = "campione-quattro-esatto"


def make_player(kind: str, seed: int) -> Player:
    """``create_player``'s players, ``CLASSIC``, ``NETWORK``, ``ANSWERS``, ``THREE``,
    ``FOUR``, ``LAST`` and ``FOUR_EXACT``."""
    if kind == CLASSIC:
        return ChampionPlayer(seed, name=CLASSIC, net_share=0.0)
    if kind == NETWORK:
        return ChampionPlayer(seed, name=NETWORK, net_share=NET_SHARE)
    if kind == ANSWERS:
        return ChampionPlayer(seed, name=ANSWERS, net_share=NET_SHARE, net_answers=True)
    if kind == THREE:
        return ChampionPlayer(seed, name=THREE, three=True)
    if kind == FOUR:
        return ChampionPlayer(seed, name=FOUR, four_weights=ROLLOUT_WEIGHTS)
    if kind == LAST:
        return ChampionPlayer(seed, name=LAST, exact_tricks=2)
    if kind == FOUR_EXACT:
        return ChampionPlayer(seed, name=FOUR_EXACT, four_exact=True)
    return create_player(kind, seed)


__all__ = ["ANSWERS", "CLASSIC", "FOUR", "FOUR_EXACT", "LAST", "NETWORK", "THREE", "make_player"]
