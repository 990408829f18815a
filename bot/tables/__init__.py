"""Running tables, as a small package whose imports run one way::

    driver (moves, computer turns, redraws, restarts)
      -> seats (seats changing hands, chats gone; calls the driver back)
           -> clock, render, outages
      -> outages (storage outages as the groups see them)   -> state
      -> render (what each chat shows)   -> layout, state
      -> clock (turn timers; calls the driver back)   -> layout, state
      -> delivery (which version reached Telegram)    -> state
      -> pacing (the outbox's pacing, kept across restarts)
    state: the typed UI state of a game (which messages show it)
"""

from bot.tables.driver import Tables
from bot.tables.layout import ChatLayout
from bot.tables.state import UiState, prefs_of, seat_language, ui_of, ui_patch

__all__ = ["ChatLayout", "Tables", "UiState", "prefs_of", "seat_language", "ui_of", "ui_patch"]
