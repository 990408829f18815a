"""The baseline: a uniformly random legal action (by kind in the auction, see below)."""

from __future__ import annotations

from game.actions import Action, parse_action
from game.players.common import decision_rng
from game.simulate import pick
from game.view import View


class RandomPlayer:
    """Uniform over the legal actions, except in the auction.

    In the auction there is one rank call for up to hundreds of 2- and obbligato calls,
    so a uniform choice would almost always jump to a random "2 a N". As in
    :func:`game.simulate.pick`, it first picks a kind of call uniformly, then a call of
    that kind. Cards, suits and monte are uniform.
    """

    def __init__(self, seed: int = 0, name: str = "random") -> None:
        self.seed = seed
        self.name = name

    def choose(self, view: View) -> Action:
        legal = view.legal
        if not legal:
            raise ValueError("no legal action for this view")
        rng = decision_rng(self.seed, view.smazzata, view.version, view.seat or 0)
        return pick(rng, [parse_action(code) for code in legal])
