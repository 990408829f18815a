"""Which chat shows what of a game.

Today: the table (lobby, the auction as it goes, tricks, results) in the group the game
was opened in, each human's hand in their private chat, where they bid and play. A
layout where the table and the hand are the same chat (a person alone against
computers, in private) is a different :class:`ChatLayout`; the renderer and the turn
clock ask it instead of assuming.
"""

from __future__ import annotations

from storage import GameRow, SeatRow


class ChatLayout:
    """The group layout: table in the game's chat, hands in private chats."""

    def table_chat(self, row: GameRow) -> int:
        return row.chat_id

    def hand_chat(self, seat: SeatRow) -> int | None:
        """The chat of a seat's hand (None: nobody to show it to, e.g. a computer)."""
        return seat.user_id if seat.is_human else None

    def buttons_chat(self, row: GameRow, seat: SeatRow) -> int | None:
        """Where the seat in turn presses: their hand (bids and cards alike)."""
        return self.hand_chat(seat)

    def chats(self, row: GameRow) -> set[int]:
        """Every chat showing something of the game."""
        hands = {self.hand_chat(s) for s in row.seats}
        return {self.table_chat(row)} | {c for c in hands if c is not None}
