"""The game engine: one match (partita) as an event-sourced state machine.

One engine plays every game of RULES.md: Briscola chiamata with 5, 6 or 4 players (il
morto) and plain Briscola with 2, 3 or 4 players. What differs between them is data
(:class:`game.options.Ruleset`: seats, deck, deal pattern, sides, scoring), not code.

Public API, in the spirit of OpenSpiel / PokerKit::

    game = Game.new(TableOptions(), rng=random.Random(seed))
    seat = game.current_seat()
    actions = game.legal_actions(seat)
    events = game.apply(seat, actions[0])      # check-then-do: verify() first
    game.view(seat); game.view(None)           # what a seat / a spectator may know
    game.is_over(); game.totals; game.to_json(); Game.from_json(text)

Every change of state goes through an event: ``apply`` computes the events of an action
(``_emit`` folds each one into the state as it is produced) and appends them to
``history``. The phase is derived from the history: only the fold of ``Dealt``,
``AuctionWon``, ``SuitDeclared`` and ``MatchOver`` sets it, never the action code, and
restoring a game is folding its history again. The only randomness is the first
dealer, il morto's seat and the shuffles, drawn from the injected ``random.Random`` and
recorded in the ``MatchStarted``, ``MortoSeated``, ``Dealt`` and ``StockLaid`` events.

Il morto (``players=4``) is never asked for an action: whenever its turn comes in the
play, the engine plays its first card by itself (R90, R113) within the same ``apply``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from enum import StrEnum
from operator import add
from typing import Any, cast

from game.actions import (
    CARICHI,
    DECLARE,
    DECLARE_CARD,
    MAX_POINTS,
    MIN_POINTS,
    MONTE,
    OBBLIGATO_BIDS,
    PASS,
    PLAY,
    POINT_BIDS,
    RANK_BIDS,
    TWO_BIDS,
    Action,
    BidCarichi,
    BidObbligato,
    BidPoints,
    BidRank,
    BidTwo,
    DeclareCard,
    DeclareSuit,
    Monte,
    Pass,
    PlayCard,
    canonical,
    parse_action,
)
from game.cards import CARD_POINTS, RANK_CODES, Card, Rank, trick_winner_index
from game.errors import IllegalAction
from game.events import (
    AuctionWon,
    BidMade,
    BriscolaScored,
    CardPlayed,
    CardsDrawn,
    Dealt,
    DealVoided,
    Event,
    MatchOver,
    MatchStarted,
    MonteDeclared,
    MortoSeated,
    PartnerRevealed,
    Passed,
    SmazzataScored,
    StockLaid,
    SuitDeclared,
    TrickWon,
    TrumpRevealed,
)
from game.options import Ruleset, TableOptions
from game.scoring import (
    ContractKind,
    briscola_match_over,
    briscola_smazzata_winner,
    competition_positions,
    match_winners,
    score_contract,
    seat_deltas,
)
from game.serialize import dump_snapshot, load_snapshot
from game.view import TrickView, View

_DUE = int(Rank.DUE)
_new_tuple = tuple.__new__  # builds a NamedTuple event without its Python-level __new__
#: Calls that put the auction "at points" (R21, R44): the next call must name more.
_AT_POINTS = frozenset({BidTwo, BidObbligato, BidPoints})
_POINT_CALL_TYPES = (BidTwo, BidObbligato, BidPoints)
#: Every call of the auction (R20, R44): pass and the bids.
_CALLS = frozenset({Pass, BidRank, BidTwo, BidObbligato, BidCarichi, BidPoints})


class Phase(StrEnum):
    AUCTION = "auction"
    DECLARATION = "declaration"
    PLAY = "play"
    OVER = "over"


# Module constants: the hot paths compare phases many times a smazzata.
_AUCTION, _DECLARATION, _PLAY, _OVER = Phase.AUCTION, Phase.DECLARATION, Phase.PLAY, Phase.OVER


def obbligato_ranks(hand: Sequence[Card], order: Sequence[Rank]) -> dict[int, list[int]]:
    """R34: for each suit whose 2 is in ``hand``, the lowest rank of that suit not held.

    Returns ``{rank: [suits]}`` so both the bid (R35) and the declaration (R48) use it.
    """
    held = set(hand)
    result: dict[int, list[int]] = {}
    for suit in range(4):
        if suit * 10 + _DUE not in held:
            continue
        for rank in order:
            if suit * 10 + int(rank) not in held:
                result.setdefault(int(rank), []).append(suit)
                break
    return result


class Game:
    """A match of any game of the rules. Build with :meth:`new` or :meth:`from_json`."""

    # Slots: the engine reads and writes its ~50 attributes at every step, and an instance
    # dict that large loses CPython's fast attribute access (shared keys stop at 30).
    __slots__ = (
        "_low_points",
        "_match_end",
        "_obbligato_cache",
        "_obbligato_rows",
        "_open_ranks",
        "_phase",
        "_ranks_below",
        "_to_play",
        "actions",
        "any_bid",
        "bidder",
        "bids",
        "called_card",
        "captured",
        "chiamante",
        "contract",
        "contract_points",
        "contract_rank",
        "current_bid",
        "dealer",
        "dealt_hands",
        "face_up",
        "face_up_holder",
        "final",
        "hand_plays",
        "hands",
        "history",
        "in_mano",
        "last_briscola",
        "last_score",
        "leader",
        "morto",
        "must_follow",
        "n",
        "options",
        "partner_revealed",
        "passed",
        "played_by",
        "rng",
        "rules",
        "scored_count",
        "scored_tricks",
        "side_of",
        "smazzata_index",
        "socio",
        "stock",
        "totals",
        "trick",
        "trick_no",
        "tricks",
        "trump",
        "trump_public",
        "turn",
        "wins",
    )

    # ------------------------------------------------------------------ construction

    def __init__(self, options: TableOptions, rng: random.Random) -> None:
        self.options = options
        self.rules = Ruleset.for_options(options)
        self.rng = rng
        self.history: list[Event] = []
        #: (seat, action code) of every applied action, in order; len() is the version.
        self.actions: list[tuple[int, str]] = []
        n = self.rules.seats
        self.n = n
        # match state
        #: Il morto's seat with ``players=4`` of chiamata (R86), else None.
        self.morto: int | None = None
        #: Plain Briscola: the side index of each seat, and each side's smazzate won.
        self.side_of = [0] * n
        for index, side in enumerate(self.rules.sides):
            for member in side:
                self.side_of[member] = index
        self.wins = [0] * len(self.rules.sides)
        #: _ranks_below[w + 1]: the rank calls weaker than rank w (w = -1: all of them).
        self._ranks_below: tuple[tuple[Action, ...], ...] = tuple(
            tuple(
                action
                for rank in self.rules.bid_ranks
                if int(rank) > weakest and (action := RANK_BIDS[rank]) is not None
            )
            for weakest in range(-1, 10)
        )
        self.last_briscola: BriscolaScored | None = None
        self.totals = [0] * n
        self.smazzata_index = -1
        self.scored_count = 0
        self.dealer = 0
        self._phase = _AUCTION
        self.last_score: SmazzataScored | None = None
        #: The tricks of the last smazzata scored (public: every card was played face
        #: up), kept through the next smazzata: the last trick taken and the review.
        self.scored_tricks: list[TrickWon] = []
        self.final: MatchOver | None = None
        #: R80/R81 parsed once (the options are fixed for the match).
        self._match_end = (options.match_end_kind, options.match_end_n)
        self._reset_smazzata()

    def _reset_smazzata(self) -> None:
        n = self.n
        self.hands: list[list[Card]] = [[] for _ in range(n)]
        #: ``PLAY[c]`` for each card of ``hands[s]``, in the same order, kept by the fold:
        #: the legal plays are a copy of it (the play asks for them ~40 times a smazzata).
        self.hand_plays: list[list[Action]] = [[] for _ in range(n)]
        self.dealt_hands: tuple[tuple[Card, ...], ...] = ()
        self.passed = [False] * n
        self.bids: list[tuple[int, str]] = []  # public auction log: (seat, code), "P" for pass
        self.current_bid: Action | None = None
        self.bidder: int | None = None
        self.turn = 0
        self.any_bid = False
        self.contract: ContractKind | None = None
        self.contract_rank: int | None = None
        self.contract_points = 0
        self.chiamante: int | None = None
        self.trump: int | None = None
        self.called_card: Card | None = None
        self.socio: int | None = None  # holder of the called card if not the chiamante
        self.in_mano = False
        self.trump_public = False
        self.partner_revealed = False
        self.trick_no = 0
        self.leader = 0
        self.trick: list[Card] = []
        #: The seat whose card is due in the play, ``(leader + len(trick)) % n``, kept by
        #: the fold (every action of the play asks for it several times).
        self._to_play = 0
        #: R58 with follow_suit=on, R42 under a carichi (never in plain Briscola, R103).
        self.must_follow = False
        self.tricks: list[TrickWon] = []
        self.captured = [0] * n
        self.played_by: list[list[Card]] = [[] for _ in range(n)]
        self._obbligato_cache: dict[int, dict[int, list[int]]] = {}
        self._obbligato_rows: dict[int, tuple[tuple[Action, ...], ...]] = {}
        #: The lowest N a point call may name (R21, R44) and the rank calls still open
        #: (R20 b: below the current call, before R30; none once at "2 a N", and never
        #: under a punti, R44): both follow from the current call, kept by the fold of
        #: BidMade.
        self._low_points = MIN_POINTS
        self._open_ranks: tuple[Action, ...] = () if self.options.a_punti else self._ranks_below[0]
        # plain Briscola
        self.stock: list[Card] = []
        self.face_up: Card | None = None
        self.face_up_holder: int | None = None

    @classmethod
    def new(cls, options: TableOptions | None = None, rng: random.Random | None = None) -> Game:
        """Start a match: draw the first dealer (R11, R100) and il morto's seat (R86, R88),
        then deal the first smazzata."""
        game = cls(options or TableOptions(), rng or random.Random())
        if game.rules.has_morto:
            morto = game.rng.randrange(game.n)
            humans = [s for s in range(game.n) if s != morto]
            game._emit(MatchStarted(game.options, humans[game.rng.randrange(len(humans))]))
            game._emit(MortoSeated(morto))
        else:
            game._emit(MatchStarted(game.options, game.rng.randrange(game.n)))
        game._deal(game.dealer)
        return game

    # ------------------------------------------------------------------ queries

    @property
    def version(self) -> int:
        """Number of actions applied so far; changes with every successful ``apply``."""
        return len(self.actions)

    @property
    def phase(self) -> Phase:
        """Derived from the history by the fold (Dealt, AuctionWon, SuitDeclared, MatchOver)."""
        return self._phase

    def is_over(self) -> bool:
        return self._phase is _OVER

    def current_seat(self) -> int | None:
        """The seat that must act now (monte is out of turn, R17), or None when over."""
        phase = self._phase
        if phase is _PLAY:
            return self._to_play
        if phase is _AUCTION:
            return self.turn
        if phase is _DECLARATION:
            return self.chiamante
        return None

    def legal_actions(self, seat: int) -> list[Action]:
        """Every action ``seat`` may take now (possibly none if it is not its turn).

        In the auction and the declaration they come in :data:`~game.actions.ACTIONS`
        order (ascending ``id``, as OpenSpiel lists them), so each kind of call is one
        contiguous run; in the play, in the order of the hand.
        """
        phase = self._phase
        if phase is _PLAY:
            if seat != self._to_play:
                return []
            hand = self.hands[seat]
            if self.must_follow and self.trick:
                led = self.trick[0] // 10
                follow = [PLAY[c] for c in hand if c // 10 == led]
                if follow:
                    return follow
            return self.hand_plays[seat].copy()
        if phase is _AUCTION:
            return self._auction_actions(seat)
        if phase is _DECLARATION:
            if seat != self.chiamante:
                return []
            if self.contract == "punti":
                return [DECLARE_CARD[c] for c in self._declarable_cards()]
            return [DECLARE[s] for s in self._declarable_suits()]
        return []

    def _monte_allowed(self, seat: int) -> bool:
        return (
            self.options.monte
            and seat != self.morto
            and not self.any_bid
            and not any(CARD_POINTS[c] for c in self.hands[seat])
        )

    def min_call_points(self) -> int | None:
        """The lowest N a "2 a N" (or obbligato) call may name now; None when none may.

        Public: it depends on the current call only, not on anyone's hand.
        """
        if self._phase is not _AUCTION:
            return None
        low = self._low_points
        return low if low <= MAX_POINTS else None

    def public_calls(self) -> list[Action]:
        """The calls the seat on turn may make as far as the table knows.

        Pass, the ranks below the current call and "a carichi" (if played); "2 a N" from
        :meth:`min_call_points`. What depends on the hand is not here: R30 may forbid a
        rank the caller holds four of, obbligato and monte need the hand, so a press of a
        public call can still be refused by :meth:`verify`.
        """
        if self._phase is not _AUCTION:
            return []
        result: list[Action] = [PASS]
        result.extend(self._open_ranks)
        if self.options.a_carichi:
            result.append(CARICHI)
        return result

    def _obbligato_of(self, seat: int) -> dict[int, list[int]]:
        """R34 for ``seat``'s hand, computed once a deal: hands do not change before
        the play (R48)."""
        cached = self._obbligato_cache.get(seat)
        if cached is None:
            cached = obbligato_ranks(self.hands[seat], self.rules.obbligato_order)
            self._obbligato_cache[seat] = cached
        return cached

    def _obbligato_calls(self, seat: int) -> tuple[tuple[Action, ...], ...]:
        """The rows of :data:`OBBLIGATO_BIDS` ``seat`` may call (R35), weakest rank
        first, once a deal like :meth:`_obbligato_of`."""
        cached = self._obbligato_rows.get(seat)
        if cached is None:
            cached = tuple(OBBLIGATO_BIDS[rank] for rank in sorted(self._obbligato_of(seat)))
            self._obbligato_rows[seat] = cached
        return cached

    def _auction_actions(self, seat: int) -> list[Action]:
        """The calls of ``seat`` now, in :data:`~game.actions.ACTIONS` order (as OpenSpiel
        lists legal actions): pass, monte, a carichi, ranks, "2 a N", obbligato (or a
        punti's point calls)."""
        monte = self._monte_allowed(seat)
        if seat != self.turn:
            return [MONTE] if monte else []
        options = self.options
        low = self._low_points
        result: list[Action] = [PASS, MONTE] if monte else [PASS]
        if options.a_carichi:
            result.append(CARICHI)
        if options.a_punti:
            if low <= MAX_POINTS:
                result += POINT_BIDS[low:]
            return result
        in_mano = options.in_mano
        if in_mano:
            result += self._open_ranks
        else:
            for action in self._open_ranks:
                if self._may_call_rank(seat, int(cast(BidRank, action).rank)):
                    result.append(action)
        if low <= MAX_POINTS:
            if in_mano or self._may_call_rank(seat, _DUE):
                result += TWO_BIDS[low:]
            if self._obbligato_open():
                for row in self._obbligato_calls(seat):
                    result += row[low:]
        return result

    def _obbligato_open(self) -> bool:
        """Whether obbligato calls exist now: the option (R39), not a punti (R44), and a
        call at points left (R35 (i))."""
        options = self.options
        return options.chiamata_obbligata and not options.a_punti and self._low_points <= MAX_POINTS

    def obbligato_options(self, seat: int) -> list[str]:
        """The ranks (codes: ``"4"``, ``"F"``…) of the obbligato calls ``seat`` may make
        at its turns for the rest of this auction, as far as is known now (R34, R35):
        its hand's obbligato ranks while it has not passed and calls at points are left;
        empty outside the auction. Out of turn too, so that a UI may offer them ahead;
        at its turn :meth:`legal_actions` lists the calls themselves (with N)."""
        if self._phase is not _AUCTION or self.passed[seat] or not self._obbligato_open():
            return []
        return [RANK_CODES[rank] for rank in sorted(self._obbligato_of(seat))]

    def _may_call_rank(self, seat: int, rank: int) -> bool:
        """R30: without in mano, no call of a rank whose four cards the seat holds."""
        if self.options.in_mano:
            return True
        return sum(1 for c in self.hands[seat] if c % 10 == rank) < 4

    def _declarable_suits(self) -> list[int]:
        assert self.chiamante is not None and self.contract_rank is not None
        hand = self.hands[self.chiamante]
        if self.contract == "obbligato":
            return self._obbligato_of(self.chiamante).get(self.contract_rank, [])
        if self.options.in_mano:
            return [0, 1, 2, 3]
        return [s for s in range(4) if s * 10 + self.contract_rank not in hand]

    def _declarable_cards(self) -> list[Card]:
        """R45, R118: any card of the deck in play; without in mano, one not held."""
        assert self.chiamante is not None
        if self.options.in_mano:
            return list(self.rules.deck)
        hand = self.hands[self.chiamante]
        return [c for c in self.rules.deck if c not in hand]

    # ------------------------------------------------------------------ check-then-do

    def verify(self, seat: int, action: Action) -> Action:
        """Raise :class:`IllegalAction` unless ``seat`` may take ``action`` now.

        Returns the canonical (interned) action. Never changes the state.
        """
        if not 0 <= seat < self.n:
            raise IllegalAction("bad_seat", str(seat))
        try:
            action = canonical(action)
        except (KeyError, TypeError):
            raise IllegalAction("unknown_action", repr(action)[:40]) from None
        reason = self._refusal(seat, action)
        if reason is not None:
            raise IllegalAction(reason, action.code)
        return action

    def _refusal(self, seat: int, action: Action) -> str | None:
        phase = self._phase
        if phase is _OVER:
            return "game_over"
        if seat == self.morto:
            return "morto_plays_itself"
        if type(action) in _CALLS:
            if phase is not _AUCTION:
                return "wrong_phase"
            if self.passed[seat]:
                return "already_passed"
            if seat != self.turn:
                return "not_your_turn"
            return self._bid_refusal(seat, action)
        if isinstance(action, PlayCard):
            if phase is not _PLAY:
                return "wrong_phase"
            return self._play_refusal(seat, action.card)
        if isinstance(action, Monte):
            if phase is not _AUCTION:
                return "wrong_phase"
            if not self.options.monte:
                return "option_disabled"
            if self.any_bid:
                return "monte_after_bid"
            if any(CARD_POINTS[c] for c in self.hands[seat]):
                return "monte_hand_has_points"
            return None
        if isinstance(action, DeclareSuit):
            if phase is not _DECLARATION:
                return "wrong_phase"
            if seat != self.chiamante:
                return "not_your_turn"
            if self.contract == "punti":
                return "name_a_card"
            if int(action.suit) in self._declarable_suits():
                return None
            return "suit_not_allowed" if self.contract == "obbligato" else "in_mano_disabled"
        if isinstance(action, DeclareCard):
            if phase is not _DECLARATION:
                return "wrong_phase"
            if seat != self.chiamante:
                return "not_your_turn"
            if self.contract != "punti":
                return "name_a_suit"
            if action.card not in self.rules.deck:
                return "card_not_in_game"
            if not self.options.in_mano and action.card in self.hands[seat]:
                return "in_mano_disabled"
            return None
        return "unknown_action"

    def _play_refusal(self, seat: int, card: Card) -> str | None:
        """R55, R58, R42 (and R103: plain Briscola never follows suit), in the play."""
        trick = self.trick
        if seat != self._to_play:
            return "morto_plays_itself" if seat == self.morto else "not_your_turn"
        hand = self.hands[seat]
        if card not in hand:
            return "card_not_in_hand"
        if self.must_follow and trick:
            led = trick[0] // 10
            if card // 10 != led and any(c // 10 == led for c in hand):
                return "must_follow_suit"
        return None

    def _bid_refusal(self, seat: int, action: Action) -> str | None:
        kind = type(action)
        if kind is Pass:
            return None
        if kind is BidCarichi:
            return None if self.options.a_carichi else "option_disabled"
        if (kind is BidPoints) != self.options.a_punti:
            return "option_disabled"  # R44: a punti has point calls and nothing else
        if kind is BidRank:
            assert isinstance(action, BidRank)
            if action.rank not in self.rules.bid_ranks:
                return "rank_not_in_game"
            current = self.current_bid
            if type(current) in _AT_POINTS:
                return "rank_at_two_level"
            if isinstance(current, BidRank) and int(action.rank) <= int(current.rank):
                return "rank_not_lower"
            return None if self._may_call_rank(seat, int(action.rank)) else "holds_all_four"
        # A point call: "2 a N", "R obbligato a N" (R21) or a punti's "N" (R44).
        assert isinstance(action, _POINT_CALL_TYPES)
        if kind is BidObbligato and not self.options.chiamata_obbligata:
            return "option_disabled"
        if not MIN_POINTS <= action.points <= MAX_POINTS:
            return "points_out_of_range"
        if action.points < self._low_points:
            return "points_too_low"
        if kind is BidTwo:
            return None if self._may_call_rank(seat, _DUE) else "holds_all_four"
        if kind is BidPoints:
            return None
        assert isinstance(action, BidObbligato)
        return None if int(action.rank) in self._obbligato_of(seat) else "not_obbligato_rank"

    def apply(self, seat: int, action: Action) -> list[Event]:
        """Verify, then apply ``action`` for ``seat``; return the events it produced.

        On :class:`IllegalAction` the state is unchanged.
        """
        if type(action) is PlayCard and self._phase is _PLAY and seat == self._to_play:
            # The hot path (40 of ~50 actions a smazzata): the same checks, fewer calls.
            # Any other play (wrong seat, …) is refused by the generic path below.
            card = action.card
            reason = self._play_refusal(seat, card)
            if reason is not None:
                raise IllegalAction(reason, action.code)
            history = self.history
            start = len(history)
            self.actions.append((seat, action.code))
            self._play(seat, card)
            if self._to_play == self.morto:
                self._morto_plays()
            return history[start:]
        if action.id < 0 or not 0 <= seat < self.n:
            action = self.verify(seat, action)
        else:
            reason = self._refusal(seat, action)
            if reason is not None:
                raise IllegalAction(reason, action.code)
        start = len(self.history)
        self.actions.append((seat, action.code))
        _TRANSITIONS[type(action)](self, seat, action)
        if self._to_play == self.morto:
            self._morto_plays()
        return self.history[start:]

    def _morto_plays(self) -> None:
        """R90, R113: while it is il morto's turn, it plays its first card in deal order."""
        morto = self.morto
        while self._phase is _PLAY and self._to_play == morto:
            self._play(morto, self.hands[morto][0], automatic=True)

    # ------------------------------------------------------------------ transitions

    def _play_action(self, seat: int, action: Action) -> None:
        assert isinstance(action, PlayCard)
        self._play(seat, action.card)

    def _declare_action(self, seat: int, action: Action) -> None:
        if isinstance(action, DeclareCard):
            self._declare(seat, action.card // 10, action.card)
        else:
            assert isinstance(action, DeclareSuit)
            self._declare(seat, int(action.suit))

    def _monte_action(self, seat: int, action: Action) -> None:
        self._emit(MonteDeclared(seat))
        self._void("monte")

    def _deal(self, dealer: int) -> None:
        deck = list(self.rules.deck)
        self.rng.shuffle(deck)
        self._deal_deck(dealer, deck)

    def _deal_deck(self, dealer: int, deck: Sequence[Card]) -> None:
        """The deterministic mapping from a shuffled deck to the hands (R13, R94, R119)."""
        n = self.n
        first = (dealer + 1) % n
        if self.rules.deal == "all":
            hands = tuple(tuple(deck[(s - first) % n :: n]) for s in range(n))
            self._emit(Dealt(self.smazzata_index + 1, dealer, hands))
            return
        dealt = 3 * n
        hands = tuple(tuple(deck[(s - first) % n : dealt : n]) for s in range(n))
        self._emit(Dealt(self.smazzata_index + 1, dealer, hands))
        face_up = deck[dealt]
        self._emit(StockLaid(face_up, (*deck[dealt + 1 :], face_up)))

    def next_dealer(self) -> int:
        """R12, R100; with il morto the next human seat (R88)."""
        dealer = (self.dealer + 1) % self.n
        return (dealer + 1) % self.n if dealer == self.morto else dealer

    def _void(self, reason: str) -> None:
        self._emit(DealVoided("monte" if reason == "monte" else "all_passed"))
        self._deal(self.next_dealer())

    def _pass(self, seat: int, action: Action = PASS) -> None:
        self._emit(Passed(seat))
        active = self.passed.count(False)
        if not active:
            self._void("all_passed")  # R32 (R89: il morto has passed already)
        elif active == 1 and self.bidder is not None and not self.passed[self.bidder]:
            self._win_auction()  # R31

    def _bid(self, seat: int, action: Action) -> None:
        self._emit(BidMade(seat, action.code))
        # R40, R31: the bidder is the only seat that has not passed
        if type(action) is BidCarichi or self.passed.count(False) == 1:
            self._win_auction()

    def _win_auction(self) -> None:
        bid = self.current_bid
        assert self.bidder is not None and bid is not None
        if isinstance(bid, BidCarichi):
            self._emit(AuctionWon(self.bidder, "carichi", None, 61))
        elif isinstance(bid, BidPoints):
            self._emit(AuctionWon(self.bidder, "punti", None, bid.points))
        elif isinstance(bid, BidRank):
            self._emit(AuctionWon(self.bidder, "rank", int(bid.rank), 61))
        elif isinstance(bid, BidTwo):
            self._emit(AuctionWon(self.bidder, "two", _DUE, bid.points))
        else:
            assert isinstance(bid, BidObbligato)
            self._emit(AuctionWon(self.bidder, "obbligato", int(bid.rank), bid.points))

    def _declare(self, seat: int, suit: int, card: Card | None = None) -> None:
        if card is None:
            assert self.contract_rank is not None
            card = suit * 10 + self.contract_rank
        secret = self.options.al_buio
        self._emit(SuitDeclared(seat, suit, card, secret))
        if not secret:
            self._emit(TrumpRevealed(suit, card))

    def _buio_first_trick(self) -> bool:
        """R53: the first trick of an al buio smazzata, before the suit is revealed."""
        return self.trick_no == 0 and self.options.al_buio and not self.trump_public

    def _play(self, seat: int, card: Card, automatic: bool = False) -> None:
        played = _new_tuple(CardPlayed, (seat, card, self.trick_no, automatic, "card_played"))
        self._fold_card_played(played)  # what _emit does, without the table look-up
        self.history.append(played)
        if card == self.called_card and not self._buio_first_trick():
            self._emit(PartnerRevealed(seat, seat == self.chiamante))
        if len(self.trick) == self.n:
            self._end_trick()

    def _end_trick(self) -> None:
        """The last card of a trick is down: R53's reveals, the winner (R59), the draws
        of plain Briscola (R105) and, after the last trick, the score."""
        if self._buio_first_trick() and self.trump is not None and self.called_card is not None:
            # R53: suit first, then the socio, then the winner of trick 1.
            self._emit(TrumpRevealed(self.trump, self.called_card))
            if self.called_card in self.trick:
                holder = self.socio if self.socio is not None else self.chiamante
                assert holder is not None
                self._emit(PartnerRevealed(holder, holder == self.chiamante))
        leader = self.leader
        cards = tuple(self.trick)
        winner = (leader + trick_winner_index(cards, self.trump)) % self.n
        points = sum(map(CARD_POINTS.__getitem__, cards))
        won = _new_tuple(TrickWon, (self.trick_no, winner, leader, cards, points, "trick_won"))
        self._fold_trick_won(won)  # what _emit does, as for CardPlayed in _play
        self.history.append(won)
        if self.stock:
            # R105, R120: the winner draws first, then the others in turn order.
            n = self.n
            draws = tuple(((winner + k) % n, self.stock[k]) for k in range(n))
            self._emit(CardsDrawn(self.trick_no - 1, draws))
        if self.trick_no == self.rules.tricks:
            if self.rules.scoring == "contract":
                self._score()
            else:
                self._score_briscola()

    def _score(self) -> None:
        chiamante = self.chiamante
        assert chiamante is not None and self.contract is not None
        socio = self.socio
        caller_points = self.captured[chiamante] + (
            self.captured[socio] if socio is not None else 0
        )
        result = score_contract(
            kind=self.contract,
            points=self.contract_points,
            in_mano=self.in_mano,
            caller_points=caller_points,
            players=self.n,
            tie_goes_to_caller=self.options.tie_goes_to_caller,
            cappotto=self.options.cappotto,
        )
        deltas = seat_deltas(result, self.n, chiamante, socio, self.morto)
        totals = tuple(map(add, self.totals, deltas))  # both have a value per seat
        self._emit(
            SmazzataScored(
                smazzata=self.smazzata_index,
                chiamante=chiamante,
                socio=socio,
                contract=self.contract,
                rank=self.contract_rank,
                points=self.contract_points,
                called_card=self.called_card,
                trump=self.trump,
                in_mano=self.in_mano,
                caller_points=caller_points,
                target=result.target,
                won=result.won,
                multiplier=result.multiplier,
                cappotto=result.cappotto,
                deltas=deltas,
                totals=totals,
            )
        )
        if self._match_should_end():
            positions = competition_positions(self.totals, self.morto)
            winners = match_winners(self.totals, self.options.winners, self.morto)
            self._emit(MatchOver(tuple(self.totals), positions, winners))
        else:
            self._deal(self.next_dealer())

    def _score_briscola(self) -> None:
        """R108–R110: the side with the most card points (by the rule of the table size)
        wins the smazzata; the match counts smazzate won."""
        sides = self.rules.sides
        points = tuple(sum(self.captured[s] for s in side) for side in sides)
        winner = briscola_smazzata_winner(points, self.rules.smazzata_winner)
        wins = list(self.wins)
        if winner is not None:
            wins[winner] += 1
        self._emit(BriscolaScored(self.smazzata_index, sides, points, winner, tuple(wins)))
        options = self.options
        if briscola_match_over(
            self.wins, self.scored_count, options.briscola_match_kind, options.briscola_match_n
        ):
            best = max(self.wins)
            winners = tuple(s for s in range(self.n) if self.wins[self.side_of[s]] == best)
            side_positions = competition_positions(self.wins)
            positions = tuple(side_positions[side] for side in self.side_of)
            self._emit(MatchOver(tuple(self.totals), positions, winners))
        else:
            self._deal(self.next_dealer())

    def _match_should_end(self) -> bool:
        kind, limit = self._match_end
        if kind == "hands":
            return self.scored_count >= limit
        return max(self.totals) >= limit

    # ------------------------------------------------------------------ the fold

    def _emit(self, event: Event) -> None:
        _FOLDS[type(event)](self, event)  # self._fold(event), one call fewer
        self.history.append(event)

    def _fold(self, event: Event) -> None:
        """Apply one event to the state: the only place where the state changes."""
        _FOLDS[type(event)](self, event)

    def _fold_morto_seated(self, event: MortoSeated) -> None:
        self.morto = event.seat

    def _fold_stock_laid(self, event: StockLaid) -> None:
        self.face_up = event.face_up
        self.stock = list(event.stock)
        self.trump = event.face_up // 10
        self.trump_public = True
        self._phase = _PLAY

    def _fold_cards_drawn(self, event: CardsDrawn) -> None:
        hands = self.hands
        plays = self.hand_plays
        for seat, card in event.draws:
            hands[seat].append(card)
            plays[seat].append(PLAY[card])
            if card == self.face_up:
                self.face_up_holder = seat
        del self.stock[: len(event.draws)]

    def _fold_briscola_scored(self, event: BriscolaScored) -> None:
        self.wins = list(event.wins)
        self.totals = [event.wins[side] for side in self.side_of]
        self.scored_count += 1
        self.last_briscola = event
        self.scored_tricks = list(self.tricks)

    def _fold_card_played(self, event: CardPlayed) -> None:
        seat, card = event.seat, event.card
        hand = self.hands[seat]
        index = hand.index(card)
        del hand[index]
        del self.hand_plays[seat][index]
        self.played_by[seat].append(card)
        self.trick.append(card)
        self._to_play = (seat + 1) % self.n

    def _fold_trick_won(self, event: TrickWon) -> None:
        self.tricks.append(event)
        self.captured[event.seat] += event.points
        self.leader = self._to_play = event.seat
        self.trick = []
        self.trick_no += 1

    def _fold_bid(self, event: BidMade) -> None:
        self.bids.append((event.seat, event.code))
        self.current_bid = bid = parse_action(event.code)
        bid_type = type(bid)
        if bid_type is BidRank:
            self._open_ranks = self._ranks_below[int(cast(BidRank, bid).rank) + 1]
        elif bid_type in _AT_POINTS:
            self._low_points = cast(BidTwo, bid).points + 1
            self._open_ranks = ()
        self.bidder = event.seat
        self.any_bid = True
        self._advance_turn(event.seat)

    def _fold_passed(self, event: Passed) -> None:
        self.bids.append((event.seat, "P"))
        self.passed[event.seat] = True
        self._advance_turn(event.seat)

    def _fold_dealt(self, event: Dealt) -> None:
        self._reset_smazzata()
        self.smazzata_index = event.smazzata
        self.dealer = event.dealer
        self.dealt_hands = event.hands
        self.hands = [list(h) for h in event.hands]
        self.hand_plays = [[PLAY[c] for c in h] for h in event.hands]
        self.leader = self._to_play = (event.dealer + 1) % self.n
        if self.morto is not None:
            # R89, R114: il morto has passed before the auction; the first human after
            # the dealer speaks first.
            self.passed[self.morto] = True
            self._advance_turn(event.dealer)
        else:
            self.turn = self.leader
        self._phase = _AUCTION

    def _fold_auction_won(self, event: AuctionWon) -> None:
        self.chiamante = event.seat
        self.contract = event.contract
        self.contract_rank = event.rank
        self.contract_points = event.points
        self.leader = self._to_play = (self.dealer + 1) % self.n
        self.must_follow = self.rules.follow_suit or event.contract == "carichi"
        self._phase = _PLAY if event.contract == "carichi" else _DECLARATION

    def _fold_suit_declared(self, event: SuitDeclared) -> None:
        self.trump = event.suit
        self.called_card = event.called_card
        if self.contract_rank is None:  # a punti: the rank comes with the card (R45)
            self.contract_rank = event.called_card % 10
        holder = next(s for s in range(self.n) if event.called_card in self.hands[s])
        self.in_mano = holder == event.seat
        self.socio = None if self.in_mano else holder
        self._phase = _PLAY

    def _fold_trump_revealed(self, event: TrumpRevealed) -> None:
        self.trump_public = True

    def _fold_partner_revealed(self, event: PartnerRevealed) -> None:
        self.partner_revealed = True

    def _fold_scored(self, event: SmazzataScored) -> None:
        self.totals = list(event.totals)
        self.scored_count += 1
        self.last_score = event
        self.scored_tricks = list(self.tricks)

    def _fold_match_over(self, event: MatchOver) -> None:
        self.final = event
        self._phase = _OVER

    def _fold_match_started(self, event: MatchStarted) -> None:
        self.dealer = event.first_dealer
        self.smazzata_index = -1

    def _fold_nothing(self, event: Event) -> None:
        """MonteDeclared and DealVoided change nothing by themselves: a Dealt follows."""

    def _advance_turn(self, seat: int) -> None:
        for step in range(1, self.n + 1):
            candidate = (seat + step) % self.n
            if not self.passed[candidate]:
                self.turn = candidate
                return

    # ------------------------------------------------------------------ views & I/O

    def view(self, seat: int | None) -> View:
        """What ``seat`` may know (``None``: a spectator, e.g. the group chat)."""
        return build_view(self, seat)

    def standings(self) -> tuple[int, ...]:
        return competition_positions(self.totals, self.morto)

    def winners(self) -> tuple[int, ...]:
        if self.rules.scoring == "card_points":
            best = max(self.wins)
            return tuple(s for s in range(self.n) if self.wins[self.side_of[s]] == best)
        return match_winners(self.totals, self.options.winners, self.morto)

    def to_json(self) -> str:
        """The game as JSON (:mod:`game.serialize`): its options, history, actions, RNG."""
        return dump_snapshot(self.options, self.rng.getstate(), self.history, self.actions)

    @classmethod
    def from_json(cls, text: str) -> Game:
        """The game :meth:`to_json` wrote, folded again from its history (``ValueError``
        on a snapshot that is not one)."""
        options, rng, events, actions = load_snapshot(text)
        return cls.from_history(options, events, actions, rng)

    @classmethod
    def from_history(
        cls,
        options: TableOptions,
        history: Sequence[Event],
        actions: Sequence[tuple[int, str]],
        rng: random.Random,
    ) -> Game:
        """Rebuild a game by folding a recorded history (no rule checks, no randomness).

        Il morto's automatic plays are in the history, so nothing is played again."""
        game = cls(options, rng)
        for event in history:
            game._emit(event)
        game.actions = list(actions)
        return game

    @classmethod
    def with_deal(
        cls,
        options: TableOptions,
        dealer: int,
        hands: Sequence[Sequence[Card]],
        rng: random.Random | None = None,
        *,
        morto: int | None = None,
        stock: Sequence[Card] = (),
    ) -> Game:
        """A match whose first smazzata has exactly these hands (tests, search players).

        With il morto, ``morto`` is its seat (default: the seat before the dealer's, or
        the one after it). In plain Briscola ``stock`` is the draw order, the face-up card
        last (R119). Later deals draw from ``rng`` as usual.
        """
        game = cls(options, rng or random.Random(0))
        cards = sorted([c for hand in hands for c in hand] + list(stock))
        if len(hands) != game.n or cards != sorted(game.rules.deck):
            raise ValueError("hands (and stock) must split the whole deck among the seats")
        if any(len(hand) != game.rules.hand_size for hand in hands):
            raise ValueError(f"every hand must have {game.rules.hand_size} cards")
        game._start_fixed(options, dealer, morto)
        game._emit(Dealt(0, dealer, tuple(tuple(hand) for hand in hands)))
        if game.rules.deal == "stock":
            game._emit(StockLaid(stock[-1], tuple(stock)))
        return game

    def _start_fixed(self, options: TableOptions, dealer: int, morto: int | None) -> None:
        self._emit(MatchStarted(options, dealer))
        if self.rules.has_morto:
            if morto is None:
                morto = (dealer - 1) % self.n if dealer != 0 else 1
            if morto == dealer or not 0 <= morto < self.n:
                raise ValueError("il morto never deals (R88)")
            self._emit(MortoSeated(morto))

    @classmethod
    def with_deck(
        cls,
        options: TableOptions,
        dealer: int,
        deck: Sequence[Card],
        rng: random.Random | None = None,
        *,
        morto: int | None = None,
    ) -> Game:
        """A match whose first smazzata deals this deck order (R13, R94, R119)."""
        game = cls(options, rng or random.Random(0))
        if sorted(deck) != sorted(game.rules.deck):
            raise ValueError("deck must be a permutation of the cards in play")
        game._start_fixed(options, dealer, morto)
        game._deal_deck(dealer, deck)
        return game

    @classmethod
    def replay(cls, options: TableOptions, seed: int, actions: Sequence[tuple[int, str]]) -> Game:
        """Seed + action log -> the same game, every action re-verified."""
        game = cls.new(options, random.Random(seed))
        for seat, code in actions:
            game.apply(seat, parse_action(code))
        return game

    def clone(self) -> Game:
        """An independent copy (sharing the immutable events), e.g. for search players."""
        other = Game.__new__(Game)
        for name in Game.__slots__:
            setattr(other, name, getattr(self, name))
        other.rng = random.Random()
        other.rng.setstate(self.rng.getstate())
        other.history = list(self.history)
        other.actions = list(self.actions)
        other.totals = list(self.totals)
        other.hands = [list(h) for h in self.hands]
        other.hand_plays = [list(h) for h in self.hand_plays]
        other.passed = list(self.passed)
        other.bids = list(self.bids)
        other.trick = list(self.trick)
        other.tricks = list(self.tricks)
        other.captured = list(self.captured)
        other.played_by = [list(p) for p in self.played_by]
        other.stock = list(self.stock)
        other.wins = list(self.wins)
        return other


def seat_of_card(hands: Sequence[Sequence[Card]], card: Card) -> int | None:
    for seat, hand in enumerate(hands):
        if card in hand:
            return seat
    return None


_FOLDS: dict[type, Callable[[Game, Any], None]] = {
    CardPlayed: Game._fold_card_played,
    TrickWon: Game._fold_trick_won,
    BidMade: Game._fold_bid,
    Passed: Game._fold_passed,
    Dealt: Game._fold_dealt,
    AuctionWon: Game._fold_auction_won,
    SuitDeclared: Game._fold_suit_declared,
    TrumpRevealed: Game._fold_trump_revealed,
    PartnerRevealed: Game._fold_partner_revealed,
    SmazzataScored: Game._fold_scored,
    MatchOver: Game._fold_match_over,
    MatchStarted: Game._fold_match_started,
    MonteDeclared: Game._fold_nothing,
    DealVoided: Game._fold_nothing,
    MortoSeated: Game._fold_morto_seated,
    StockLaid: Game._fold_stock_laid,
    CardsDrawn: Game._fold_cards_drawn,
    BriscolaScored: Game._fold_briscola_scored,
}

_TRANSITIONS: dict[type, Callable[[Game, int, Action], None]] = {
    PlayCard: Game._play_action,
    DeclareSuit: Game._declare_action,
    DeclareCard: Game._declare_action,
    BidPoints: Game._bid,
    Monte: Game._monte_action,
    Pass: Game._pass,
    BidRank: Game._bid,
    BidTwo: Game._bid,
    BidObbligato: Game._bid,
    BidCarichi: Game._bid,
}


def _trick_views(tricks: Sequence[TrickWon], n: int) -> tuple[TrickView, ...]:
    """Tricks taken as the table saw them: who played what, in order, and who took it."""
    return tuple(
        TrickView(
            t.trick,
            t.leader,
            tuple(((t.leader + i) % n, c) for i, c in enumerate(t.cards)),
            t.seat,
            t.points,
        )
        for t in tricks
    )


def build_view(game: Game, seat: int | None) -> View:
    """What ``seat`` may know of ``game`` (``None``: a spectator); see :mod:`game.view`."""
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
    tricks = _trick_views(game.tricks, n)
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
        scored_tricks=_trick_views(game.scored_tricks, n) if game.scored_tricks else (),
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
