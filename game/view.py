"""Views: everything one seat (or a spectator) may know, and nothing more (§9).

A view is built only from the seat's own hand and public facts. Computer players and
the bot render from views; nothing that reads a view can learn another seat's cards, the
socio before the called card is played (R66), or the suit before it is announced (R52).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from game.events import BriscolaScored, MatchOver, SmazzataScored
from game.options import TableOptions

if TYPE_CHECKING:
    from game.engine import Game


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


def build_view(game: Game, seat: int | None) -> View:
    n = game.n
    own = seat is not None
    me = seat if seat is not None else -1
    if seat is not None and seat == game.morto:
        own, me = False, -1  # nobody sees il morto's cards, not even from its seat
    chiamante = game.chiamante
    knows_suit = game.trump_public or (own and seat == chiamante)
    trump = game.trump if knows_suit else None
    called = game.called_card if knows_suit else None
    holder_is_me = (
        own and knows_suit and game.called_card is not None and game.called_card in game.hands[me]
    )
    socio: int | None = None
    solo: bool | None = None
    if game.contract == "carichi":
        solo = True
    elif game.partner_revealed:
        socio, solo = game.socio, game.in_mano
    elif own and seat == chiamante and game.called_card is not None:
        solo = game.in_mano  # the chiamante knows whether they called themselves
        socio = None
    elif holder_is_me:
        socio, solo = seat, False
    partner_hand: tuple[int, ...] | None = None
    side_points: int | None = None
    # R107, R124: with 4 in pairs, partners only, from the last draw to the end.
    last_draw_done = game.face_up is not None and not game.stock
    in_pairs = own and game.n == 4 and bool(game.rules.sides)
    if in_pairs and last_draw_done and game.trick_no < game.rules.tricks:
        partner = (me + 2) % 4
        partner_hand = tuple(game.hands[partner])
        side_points = game.captured[me] + game.captured[partner]
    tricks = tuple(
        TrickView(
            t.trick,
            t.leader,
            tuple(((t.leader + i) % n, c) for i, c in enumerate(t.cards)),
            t.seat,
            t.points,
        )
        for t in game.tricks
    )
    current = tuple(((game.leader + i) % n, c) for i, c in enumerate(game.trick))
    legal: tuple[str, ...] = ()
    if own:
        legal = tuple(a.code for a in game.legal_actions(me))
    return View(
        seat=seat,
        options=game.options,
        players=n,
        phase=game.phase.value,
        version=game.version,
        smazzata=game.smazzata_index,
        scored_smazzate=game.scored_count,
        dealer=game.dealer,
        current_seat=game.current_seat(),
        hand=tuple(game.hands[me]) if own else (),
        hand_sizes=tuple(len(h) for h in game.hands),
        auction=tuple(game.bids),
        passed=tuple(game.passed),
        current_bid=game.current_bid.code if game.current_bid is not None else None,
        current_bidder=game.bidder,
        public_calls=tuple(a.code for a in game.public_calls()),
        min_call_points=game.min_call_points(),
        chiamante=chiamante,
        contract=game.contract,
        contract_rank=game.contract_rank,
        contract_points=game.contract_points if game.contract is not None else None,
        trump=trump,
        trump_public=game.trump_public,
        called_card=called,
        socio=socio,
        solo=solo,
        partner_revealed=game.partner_revealed,
        trick_no=game.trick_no,
        leader=game.leader,
        current_trick=current,
        tricks=tricks,
        played=tuple(tuple(p) for p in game.played_by),
        totals=tuple(game.totals),
        legal=legal,
        last_scored=game.last_score,
        final=game.final,
        game=game.rules.game,
        morto=game.morto,
        sides=game.rules.sides,
        face_up=game.face_up,
        stock_count=len(game.stock),
        face_up_holder=game.face_up_holder,
        partner_hand=partner_hand,
        side_points=side_points,
        side_wins=tuple(game.wins),
        last_briscola=game.last_briscola,
        obbligato_ranks=tuple(game.obbligato_options(me)) if own else (),
    )
