"""Computer players: they see a seat's :class:`~game.view.View`, never the game.

The bot calls ``player.choose(game.view(seat))`` for a computer seat or on behalf of an
absent player, in every phase (auction with monte, declaration, play). A player gets the
view only, so it *cannot* read hidden state: the view holds the seat's own hand and the
public facts (§9 of the rules), and the legal action codes in ``view.legal``.

Levels for the bot's settings::

    facile   heuristic play with some noise (a casual player)
    normale  the rule-based player (:mod:`game.players.heuristic`)
    rapido   a small neural network trained on the search's play, alone: no search,
             about a millisecond a decision (:mod:`game.players.net`)
    forte    determinised search (:mod:`game.players.search`)
    esperto  determinised search over deals weighted by inference
             (:mod:`game.players.expert`)
    campione esperto with exact endgames and a deeper plain-Briscola search
             (:mod:`game.players.champion`; in two-player Briscola it also reads
             the opponent's plays by the network, :mod:`game.players.netinfer`:
             ``champion.NET_INFERENCE``)

``create_player(level, seed)`` also accepts ``random`` and the aliases ``heuristic``,
``network``, ``search``, ``expert`` and ``champion``. Every player is deterministic given
its seed and the view.
"""

from __future__ import annotations

from typing import Final, Literal, Protocol, get_args

from game.actions import Action
from game.view import View


class Player(Protocol):
    """A computer player. ``choose`` must return one of the actions in ``view.legal``."""

    name: str

    def choose(self, view: View) -> Action: ...


#: The levels the bot offers, weakest first.
Level = Literal["facile", "normale", "rapido", "forte", "esperto", "campione"]
LEVELS: Final[tuple[str, ...]] = get_args(Level)
ALL_KINDS: Final[tuple[str, ...]] = (
    "random", "heuristic", "network", "search", "expert", "champion"
)
_ALIASES: Final[dict[str, str]] = {
    "random": "random",
    "facile": "facile",
    "easy": "facile",
    "normale": "normale",
    "heuristic": "normale",
    "rapido": "rapido",
    "network": "rapido",
    "forte": "forte",
    "search": "forte",
    "esperto": "esperto",
    "expert": "esperto",
    "campione": "campione",
    "champion": "campione",
}
#: Probability that ``facile`` plays a random card instead of the heuristic one.
FACILE_NOISE: Final = 0.25


def create_player(level: str, seed: int, max_seconds: float | None = None) -> Player:
    """A player of the given level (``facile``/``normale``/``rapido``/``forte``/
    ``esperto``/``campione``, or
    ``random``, ``heuristic``, ``network``, ``search``, ``expert``); raises ``ValueError`` for an
    unknown level. ``max_seconds`` adds a wall-clock cap to the search levels' counted
    budget (the decision is then reproducible only when the cap does not trigger)."""
    kind = _ALIASES.get(level.lower())
    if kind is None:
        raise ValueError(f"unknown player level: {level!r}")
    if kind == "random":
        from game.players.random_player import RandomPlayer

        return RandomPlayer(seed)
    if kind in ("facile", "normale"):
        from game.players.heuristic import HeuristicPlayer

        if kind == "facile":
            return HeuristicPlayer(seed, noise=FACILE_NOISE, name="facile")
        return HeuristicPlayer(seed, name="normale")
    if kind == "rapido":
        from game.players.net import NetPlayer

        return NetPlayer(seed)
    if kind == "campione":
        from game.players.champion import ChampionPlayer

        return ChampionPlayer(seed, max_seconds=max_seconds)
    if kind == "esperto":
        from game.players.expert import ExpertPlayer

        return ExpertPlayer(seed, max_seconds=max_seconds)
    from game.players.search import SearchPlayer

    return SearchPlayer(seed, max_seconds=max_seconds)


__all__ = ["ALL_KINDS", "LEVELS", "Level", "Player", "create_player"]
