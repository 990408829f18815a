"""Computer players for empty, abandoned or timed-out seats.

Uses ``game.players.create_player`` when the computer-players package is available and
falls back to the simplest legal player behind the same interface otherwise. This is the
only module of the bot that knows which one is in use.
"""

from __future__ import annotations

import logging
import random
from typing import Any, Protocol

from game import Action, View, parse_action

log = logging.getLogger(__name__)


class Player(Protocol):
    def choose(self, view: View) -> Action: ...


class SimplestPlayer:
    """Passes in the auction when it can, else a random legal action (seeded)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def choose(self, view: View) -> Action:
        legal = list(view.legal)
        if not legal:
            raise ValueError("no legal action for this view")
        if view.phase == "auction" and "P" in legal:
            # bid now and then so that contracts and scoring happen
            bids = [c for c in legal if c[0] in "rt" and c != "M"]
            if bids and self.rng.random() < 0.3:
                return parse_action(bids[0])
            return parse_action("P")
        return parse_action(self.rng.choice(legal))


try:  # pragma: no cover - depends on the computer-players package
    from game.players import LEVELS as _LEVELS
    from game.players import create_player as _create_player

    AVAILABLE = True
except ImportError:  # pragma: no cover
    _LEVELS: Any = ("facile", "normale", "forte")  # type: ignore[no-redef]
    _create_player: Any = None  # type: ignore[no-redef]
    AVAILABLE = False

LEVELS: tuple[str, ...] = tuple(_LEVELS)


def make_player(level: str, seed: int) -> Player:
    """A computer player of ``level`` (unknown levels fall back to the simplest)."""
    if _create_player is not None and level in LEVELS:
        try:
            player: Player = _create_player(level, seed)
            return player
        except Exception:  # a player package bug must not stop a table
            log.exception("create_player(%r) failed; using the simplest player", level)
    return SimplestPlayer(seed)


def choose(level: str, seed: int, view: View) -> Action:
    """One decision; falls back to the first legal action if the player misbehaves."""
    try:
        action = make_player(level, seed).choose(view)
        if action.code in view.legal:
            return action
        log.error("computer player %s chose illegal %s", level, action.code)
    except Exception:
        log.exception("computer player %s failed", level)
    return parse_action(view.legal[0])
