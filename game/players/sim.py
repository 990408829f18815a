"""A fast play-phase simulator for the search player's rollouts (a determinisation).

:class:`World` holds one complete deal: every hand, the trump, the called card and who
holds it. It plays the remaining tricks with the same rules as :mod:`game.engine`
(R55–R62, following under ``follow_suit`` or a carichi), but with plain lists and
bitmasks and no events, which makes it about an order of magnitude cheaper than cloning
the engine. In a rollout every seat moves with :func:`game.players.policy.choose_card`,
fed only with what *that* seat would know in this world: its own hand, the cards seen,
the sides as far as they are public (the socio knows it is the socio; the chiamante
knows the socio only once the called card is played; the compari only then), the trump
unless it is still secret under al buio, and the voids revealed by the follow-suit rule.
"""

from __future__ import annotations

from game.cards import CARD_POINTS
from game.players.common import ALL_MASK
from game.players.endgame import split
from game.players.policy import DEFAULT_WEIGHTS, Weights, choose_card
from game.scoring import bid_multiplier

#: What a compare believes of an unknown seat before the socio is revealed: two of the
#: three other non-chiamante seats are its fellow compari.
COMPARE_PRIOR = 0.65
#: What the chiamante believes of each other seat before the reveal: one of four holds
#: the called card.
CHIAMANTE_PRIOR = 0.25


class World:
    """One determinised deal in the play phase; mutable, cheap to copy."""

    __slots__ = (
        "al_buio",
        "called",
        "cappotto",
        "captured",
        "carichi",
        "chiamante",
        "exact",
        "follow",
        "hands",
        "in_mano",
        "kind",
        "leader",
        "masks",
        "morto",
        "n",
        "own",
        "own_weights",
        "played",
        "points",
        "pp_cache",
        "revealed",
        "socio",
        "tie",
        "trick",
        "trick_no",
        "tricks_total",
        "trump",
        "trump_public",
        "voids",
        "weights",
    )

    def __init__(
        self,
        *,
        hands: list[list[int]],
        trump: int | None,
        trump_public: bool,
        al_buio: bool,
        chiamante: int,
        socio: int | None,
        called: int | None,
        revealed: bool,
        kind: str,
        points: int,
        follow_suit: bool,
        tie: bool,
        cappotto: bool,
        leader: int,
        trick: list[int],
        trick_no: int,
        captured: list[int],
        played: int,
        voids: list[int],
        tricks_total: int = 8,
        weights: Weights = DEFAULT_WEIGHTS,
        morto: int | None = None,
    ) -> None:
        self.n = len(hands)
        self.hands = hands
        self.masks = [sum(1 << c for c in h) for h in hands]
        self.trump = trump
        self.trump_public = trump_public
        self.al_buio = al_buio
        self.chiamante = chiamante
        self.socio = socio
        self.called = called
        self.revealed = revealed
        self.kind = kind
        self.carichi = kind == "carichi"
        self.in_mano = socio is None and not self.carichi
        self.points = points
        self.follow = follow_suit or self.carichi
        self.tie = tie
        self.cappotto = cappotto
        self.leader = leader
        self.trick = trick
        self.trick_no = trick_no
        self.captured = captured
        self.played = played
        self.voids = voids
        self.tricks_total = tricks_total
        #: the rollout policy's weights (every seat's but ``own``'s)
        self.weights = weights
        #: the searching seat, whose own later moves follow ``own_weights`` (-1: none)
        self.own = -1
        self.own_weights = weights
        #: partner_p per seat and revealed (index 2·seat + revealed): the roles never
        #: change, so copies share it
        self.pp_cache: list[list[float] | None] = [None] * (2 * self.n)
        #: il morto's seat (-1: none); its hand is in deal order, and it plays the first
        #: card of it (R90), exempt from following suit
        self.morto = -1 if morto is None else morto
        #: a rollout plays the last this many tricks exactly (:meth:`rollout`; 0: none)
        self.exact = 0

    def copy(self) -> World:
        """An independent copy (the lists that play changes are copied; the rest, the
        weights and ``pp_cache`` included, is shared). Every attribute is written out,
        so that mypyc (setup.py) compiles it."""
        other = World(
            hands=[list(h) for h in self.hands],
            trump=self.trump,
            trump_public=self.trump_public,
            al_buio=self.al_buio,
            chiamante=self.chiamante,
            socio=self.socio,
            called=self.called,
            revealed=self.revealed,
            kind=self.kind,
            points=self.points,
            follow_suit=self.follow,
            tie=self.tie,
            cappotto=self.cappotto,
            leader=self.leader,
            trick=list(self.trick),
            trick_no=self.trick_no,
            captured=list(self.captured),
            played=self.played,
            voids=list(self.voids),
            tricks_total=self.tricks_total,
            weights=self.weights,
        )
        # what __init__ derives, as it stands in this world now
        other.n = self.n
        other.masks = list(self.masks)
        other.carichi = self.carichi
        other.in_mano = self.in_mano
        other.follow = self.follow
        other.own = self.own
        other.own_weights = self.own_weights
        other.pp_cache = self.pp_cache
        other.morto = self.morto
        other.exact = self.exact
        return other

    # ------------------------------------------------------------------ rules

    def current(self) -> int:
        return (self.leader + len(self.trick)) % self.n

    def is_over(self) -> bool:
        return self.trick_no >= self.tricks_total

    def legal(self, seat: int) -> list[int]:
        hand = self.hands[seat]
        if seat == self.morto:
            return hand[:1]
        if self.trick and self.follow:
            led = self.trick[0] // 10
            follow = [c for c in hand if c // 10 == led]
            if follow:
                return follow
        return list(hand)

    def play(self, card: int) -> None:
        """The current seat plays ``card`` (assumed legal)."""
        trick = self.trick
        n = self.n
        seat = (self.leader + len(trick)) % n
        self.hands[seat].remove(card)
        self.masks[seat] ^= 1 << card
        if trick and self.follow and seat != self.morto:
            led = trick[0] // 10
            if card // 10 != led:
                self.voids[seat] |= 1 << led
        trick.append(card)
        self.played |= 1 << card
        called = self.called
        if called is not None and card == called and not (self.al_buio and not self.trump_public):
            self.revealed = True
        if len(trick) < n:
            return
        if not self.trump_public:
            self.trump_public = True
            if self.called is not None and self.called in trick:
                self.revealed = True
        trump = self.trump
        trump_suit = -1 if trump is None else trump  # a plain int: compared natively
        card_points = CARD_POINTS
        win_i = 0
        best = trick[0]
        total = card_points[best]
        for i in range(1, n):
            c = trick[i]
            total += card_points[c]
            if c // 10 == best // 10:
                if c % 10 < best % 10:
                    best, win_i = c, i
            elif c // 10 == trump_suit:
                best, win_i = c, i
        winner = (self.leader + win_i) % n
        self.captured[winner] += total
        self.leader = winner
        self.trick = []
        self.trick_no += 1

    # ------------------------------------------------------------------ knowledge

    def partner_p(self, seat: int) -> list[float]:
        """What ``seat`` believes about the sides in this world (see the module doc)."""
        key = 2 * seat + 1 if self.revealed else 2 * seat
        cached = self.pp_cache[key]
        if cached is None:
            cached = self._partner_p(seat)
            self.pp_cache[key] = cached
        return cached

    def _partner_p(self, seat: int) -> list[float]:
        n = self.n
        c = self.chiamante
        socio = self.socio
        if self.carichi or self.revealed or seat == socio or (seat == c and socio is None):
            mine = seat in (c, socio)
            return [1.0 if (s in (c, socio)) == mine else 0.0 for s in range(n)]
        if seat == c:
            return [1.0 if s == c else CHIAMANTE_PRIOR for s in range(n)]
        return [0.0 if s == c else (1.0 if s == seat else COMPARE_PRIOR) for s in range(n)]

    def policy_card(self, values: list[float] | None = None) -> int:
        """The heuristic policy's card for the seat on turn, from that seat's knowledge
        (with ``values``, the policy's value of each legal card is appended to it)."""
        trick = self.trick
        seat = (self.leader + len(trick)) % self.n
        legal = self.legal(seat)
        if len(legal) == 1 and values is None:
            return legal[0]
        revealed = self.revealed
        partner_p = self.partner_p(seat)
        trump = self.trump if (self.trump_public or seat == self.chiamante) else None
        socio = self.socio
        hidden = self.called if (socio is not None and seat == socio and not revealed) else -1
        return choose_card(
            seat,
            legal,
            trick,
            self.leader,
            trump,
            partner_p,
            ALL_MASK & ~(self.masks[seat] | self.played),
            self.voids,
            [len(hand) for hand in self.hands],
            self.follow,
            self.tricks_total - self.trick_no,
            hidden if hidden is not None else -1,
            self.n,
            values,
            self.own_weights if seat == self.own else self.weights,
        )

    def rollout(self) -> None:
        """Play to the end with the heuristic policy for every seat; with ``exact``, the
        last ``exact`` tricks (from the first of them with no card on the table) as the
        two sides' best play for their card points (:func:`game.players.endgame.split`:
        every hand known, as a strong player nearly knows them by then), where no seat's
        card is forced (no following suit, no il morto) and there is a trump."""
        exact = self.exact
        solvable = exact > 0 and not self.follow and self.morto < 0 and self.trump is not None
        while self.trick_no < self.tricks_total:
            if solvable and not self.trick and self.tricks_total - self.trick_no <= exact:
                self._solve_rest()
                return
            self.play(self.policy_card())

    def _solve_rest(self) -> None:
        """The rest of the smazzata, from a trick's start, by exact play (:meth:`rollout`);
        the caller side's points go to the chiamante, the rest to another seat (only
        :meth:`caller_points` reads them)."""
        trump = self.trump
        assert trump is not None
        chiamante, socio = self.chiamante, self.socio
        side_of = [1 if s in (chiamante, socio) else 0 for s in range(self.n)]
        taken, rest = split(self.hands, self.leader, trump, side_of, 1)
        self.captured[chiamante] += taken
        other = next(s for s in range(self.n) if side_of[s] == 0)
        self.captured[other] += rest
        for seat in range(self.n):
            for card in self.hands[seat]:
                self.played |= 1 << card
            self.hands[seat] = []
            self.masks[seat] = 0
        self.trick_no = self.tricks_total

    # ------------------------------------------------------------------ outcome

    def caller_points(self) -> int:
        pts = self.captured[self.chiamante]
        if self.socio is not None:
            pts += self.captured[self.socio]
        return pts

    def seat_score(self, seat: int) -> float:
        """The score change of ``seat`` (R68–R76; il morto's share is discarded, R92)
        for the finished smazzata."""
        if seat == self.morto:
            return 0.0
        p = self.caller_points()
        n_target = 61 if self.kind in ("rank", "carichi") else self.points
        target = 60 if self.tie and n_target == 61 else n_target
        unit = 1 if p >= target else -1
        mult = bid_multiplier(n_target)
        if self.cappotto and p in (0, 120):
            mult *= 2
        unit *= mult
        if seat == self.chiamante:
            return float(unit * (self.n - 1 if self.socio is None else self.n - 3))
        if seat == self.socio:
            return float(unit)
        return float(-unit)

    def side_points(self, seat: int) -> int:
        p = self.caller_points()
        return p if seat == self.chiamante or seat == self.socio else 120 - p
