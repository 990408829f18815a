"""Pure Briscola chiamata core: no Telegram, no I/O, no asyncio.

See :mod:`game.engine` for the API. Everything here is deterministic given the injected
``random.Random``.
"""

from game.actions import ACTIONS, Action, action_from_id, parse_action
from game.cards import Card, Rank, Suit, card_code, parse_card
from game.decks import DeckStyle, deck_face
from game.engine import Game, Phase
from game.errors import REASONS, GameError, IllegalAction, UnsupportedOption
from game.options import TableOptions
from game.view import TrickView, View

__all__ = [
    "ACTIONS",
    "REASONS",
    "Action",
    "Card",
    "DeckStyle",
    "Game",
    "GameError",
    "IllegalAction",
    "Phase",
    "Rank",
    "Suit",
    "TableOptions",
    "TrickView",
    "UnsupportedOption",
    "View",
    "action_from_id",
    "card_code",
    "deck_face",
    "parse_action",
    "parse_card",
]
