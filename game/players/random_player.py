"""The baseline: a uniformly random legal action (by kind in the auction, see below)."""

from __future__ import annotations

from itertools import groupby

from game.actions import Action, parse_action
from game.players.common import decision_rng
from game.view import View


def _kind(code: str) -> str:
    return code[0]


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
        if view.phase != "auction" or len(legal) <= 8:
            return parse_action(legal[rng.randrange(len(legal))])
        groups = [list(group) for _, group in groupby(legal, _kind)]
        group = groups[rng.randrange(len(groups))]
        return parse_action(group[rng.randrange(len(group))])
