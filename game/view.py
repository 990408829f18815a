"""Views: everything one seat (or a spectator) may know, and nothing more (§9).

A view is built (by :func:`game.engine.build_view`, where the state it reads lives) only
from the seat's own hand and public facts. Computer players and
the bot render from views; nothing that reads a view can learn another seat's cards, the
socio before the called card is played (R66), or the suit before it is announced (R52).
"""

from __future__ import annotations

from dataclasses import dataclass

from game.events import BriscolaScored, MatchOver, SmazzataScored
from game.options import TableOptions


@dataclass(frozen=True, slots=True)
class TrickView:
    trick: int
    leader: int
    #: (seat, card) in the order played.
    plays: tuple[tuple[int, int], ...]
    winner: int | None
    points: int | None


@dataclass(frozen=True, slots=True)
class View:
    seat: int | None
    options: TableOptions
    players: int
    phase: str
    version: int
    smazzata: int
    scored_smazzate: int
    dealer: int
    current_seat: int | None
    #: The viewer's own hand in deal order (empty for a spectator).
    hand: tuple[int, ...]
    hand_sizes: tuple[int, ...]
    #: Public auction log: (seat, code) with "P" for a pass.
    auction: tuple[tuple[int, str], ...]
    passed: tuple[bool, ...]
    current_bid: str | None
    current_bidder: int | None
    #: Calls the seat on turn may make as far as the table knows (pass, ranks, "K"):
    #: :meth:`Game.public_calls`. The seat's own ``legal`` may be narrower (R30).
    public_calls: tuple[str, ...]
    #: Lowest N for "2 a N" now, None when no call at points is left (or not auction).
    min_call_points: int | None
    chiamante: int | None
    contract: str | None
    contract_rank: int | None
    contract_points: int | None
    #: The briscola if this viewer knows it (public, or the chiamante under al buio).
    trump: int | None
    trump_public: bool
    called_card: int | None
    #: The socio if this viewer knows it: after the reveal, or the socio itself.
    socio: int | None
    #: True when the viewer knows the chiamante is alone (in mano revealed / own in mano).
    solo: bool | None
    partner_revealed: bool
    trick_no: int
    leader: int
    current_trick: tuple[tuple[int, int], ...]
    tricks: tuple[TrickView, ...]
    #: Cards each seat has played in this smazzata, in order.
    played: tuple[tuple[int, ...], ...]
    totals: tuple[int, ...]
    legal: tuple[str, ...]
    last_scored: SmazzataScored | None
    final: MatchOver | None
    # ---- the variants (issue 12). Defaults keep the five-player fields unchanged.
    #: ``"chiamata"`` or ``"briscola"`` (same as ``options.game``).
    game: str = "chiamata"
    #: Il morto's seat with ``players=4`` of chiamata (R86), else None. Its hand is in
    #: no view (R87, R125); ``hand_sizes`` still counts its cards.
    morto: int | None = None
    #: Plain Briscola: the fixed sides, each a tuple of seats ((0, 2), (1, 3) with 4
    #: players; one seat each with 2 or 3). Empty in chiamata.
    sides: tuple[tuple[int, ...], ...] = ()
    #: Plain Briscola: the face-up briscola under the stock (R101), shown for the whole
    #: smazzata, even after it has been drawn; None in chiamata.
    face_up: int | None = None
    #: Plain Briscola: cards left to draw, the face-up card included (0 in chiamata).
    stock_count: int = 0
    #: Plain Briscola: the seat that drew the face-up card (public), None before.
    face_up_holder: int | None = None
    #: Plain Briscola with 4 (R107, R124): the partner's hand, shown to the two
    #: partners only, from the last draw to the end of the smazzata; else None.
    partner_hand: tuple[int, ...] | None = None
    #: Same condition: the card points the viewer's pair has taken so far; else None.
    side_points: int | None = None
    #: Plain Briscola: smazzate won by each side in this match (R110).
    side_wins: tuple[int, ...] = ()
    #: Plain Briscola: the last smazzata's result, like ``last_scored`` for chiamata.
    last_briscola: BriscolaScored | None = None
    #: The viewer's obbligato ranks it may call at its turns for the rest of this
    #: auction (:meth:`Game.obbligato_options`), known out of turn too; else empty.
    obbligato_ranks: tuple[str, ...] = ()
    #: The tricks of the last smazzata scored (``last_scored``/``last_briscola``), as
    #: everyone saw them played; kept through the next smazzata, empty before the first
    #: score. Public: every card of a trick is played face up.
    scored_tricks: tuple[TrickView, ...] = ()
