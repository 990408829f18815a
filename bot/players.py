"""Computer players for empty, abandoned or timed-out seats (``game.players``).

The bot only ever asks for one decision at a time through :func:`choose`, which guards
the table against a misbehaving player: an exception or an illegal choice is logged and
replaced by the first legal action, so a bug in a player never stops a match.
"""

from __future__ import annotations

import logging

from game import Action, View, parse_action
from game.players import LEVELS, create_player

log = logging.getLogger(__name__)

__all__ = ["LEVELS", "choose"]


def choose(level: str, seed: int, view: View) -> Action:
    """One decision of a ``level`` player (deterministic given seed and view)."""
    try:
        action = create_player(level if level in LEVELS else "normale", seed).choose(view)
        if action.code in view.legal:
            return action
        log.error("computer player %s chose illegal %s", level, action.code)
    except Exception:
        log.exception("computer player %s failed", level)
    return parse_action(view.legal[0])
