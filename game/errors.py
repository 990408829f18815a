"""Typed errors of the game core. Every refusal carries a stable ``code`` for the UI."""

from __future__ import annotations

from typing import Final

#: Every reason code the engine may raise, with an English explanation for logs.
#: The bot localises by code; these strings are never shown to players.
REASONS: Final[dict[str, str]] = {
    "unknown_action": "this is not an action code of the game",
    "game_over": "the match is over",
    "wrong_phase": "this action does not belong to the current phase",
    "not_your_turn": "it is not this seat's turn",
    "bad_seat": "no such seat at this table",
    "already_passed": "this seat has already passed in this auction",
    "option_disabled": "this call is not allowed by the table options",
    "monte_after_bid": "monte is possible only before the first bid",
    "monte_hand_has_points": "monte needs a hand worth 0 points",
    "rank_not_lower": "a rank call must be lower than the current rank call",
    "rank_at_two_level": "rank calls are over once the auction is at the 2",
    "rank_not_in_game": "this rank cannot be called with this number of players",
    "holds_all_four": "without in mano you cannot call a rank whose four cards you hold",
    "points_out_of_range": "points must be between 61 and 120",
    "points_too_low": "the points must exceed the current call",
    "not_obbligato_rank": "you hold no 2 whose obbligato rank is this one",
    "suit_not_allowed": "this suit cannot be named for this contract",
    "in_mano_disabled": "calling in mano is not allowed at this table",
    "card_not_in_hand": "this card is not in the seat's hand",
    "must_follow_suit": "the led suit must be followed",
    "morto_plays_itself": "il morto's seat never acts: its cards play by themselves",
    "name_a_card": "a punti: the chiamante names a whole card, not a suit",
    "name_a_suit": "this contract names a suit, not a whole card",
    "card_not_in_game": "this card is not in the deck of this game",
}


class GameError(Exception):
    """Base class of the errors raised by the game core."""


class IllegalAction(GameError):
    """An action refused by the rules; the game state is unchanged.

    ``code`` is one of :data:`REASONS` and never changes meaning between releases.
    """

    def __init__(self, code: str, detail: str = "") -> None:
        assert code in REASONS, code
        self.code = code
        self.detail = detail
        super().__init__(f"{code}: {REASONS[code]}" + (f" ({detail})" if detail else ""))


class UnsupportedOption(GameError, ValueError):
    """An option value that the engine knows of but does not implement yet."""
