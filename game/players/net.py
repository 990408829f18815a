"""The network player (level ``rapido``): a small MLP that reads the view and decides.

*Features* (:func:`features`) come from the seat's :class:`~game.view.View` alone, like
every player's input, so they cannot hold a hidden card. They are written in a frame
that the game does not care about:

- *relative seats*: seat ``r`` of the features is the viewer's ``r``-th next seat in
  seat order (up to six seats);
- *canonical suits* (:func:`suit_order`): the briscola, once this seat knows it, is suit
  0; the other suits (every suit before the briscola is known) follow by the strength
  of the seat's own hand in them (count, then card points, then the suit's number). A
  decision about Coppe and the same decision about Spade are one situation to learn.

Every variant uses the same network (a one-hot of the variant is an input): one card
play is much like another across table sizes, so the small variants learn from the
large ones' data, and one file ships. The *policy head* scores every action of
:data:`game.actions.ACTIONS` in the canonical frame (cards and suits renamed); the
legal actions of the view (``view.legal``, the core's) are the only ones it may pick
(:func:`masked_policy`). The *value head* estimates the seat's result of the smazzata
(score points in chiamata, card points over an even share in plain Briscola, scaled by
:data:`VALUE_SCALE`).

The weights (``net_weights.npz``, float16, beside this module) are read once, lazily:
the only file the game package reads, its data shipped with it (their digest and the
command that made them: ``NET-MANIFEST.md``). Inference is numpy: three matrix-vector
products.
"""

from __future__ import annotations

import hashlib
from functools import cache
from importlib import resources
from io import BytesIO
from typing import Final

import numpy as np
import numpy.typing as npt

from game.actions import (
    ACTIONS,
    DECLARE,
    DECLARE_CARD,
    PLAY,
    Action,
    BidCarichi,
    BidObbligato,
    BidPoints,
    BidRank,
    BidTwo,
    DeclareCard,
    DeclareSuit,
    PlayCard,
    parse_action,
)
from game.cards import CARD_POINTS, RANK_CODES
from game.players.common import decision_rng
from game.players.knowledge import captured_points, known_voids, my_role, partner_probabilities
from game.view import View

FloatArray = npt.NDArray[np.float32]

#: The variants, in the order of the one-hot input.
VARIANTS: Final[tuple[tuple[str, int, bool], ...]] = (
    ("chiamata", 5, False),
    ("chiamata", 4, False),
    ("chiamata", 6, False),
    ("chiamata", 5, True),
    ("briscola", 2, False),
    ("briscola", 3, False),
    ("briscola", 4, False),
)
#: Value head's unit: a smazzata's score points (chiamata) or card points (Briscola).
VALUE_SCALE: Final[dict[str, float]] = {"chiamata": 4.0, "briscola": 30.0}
N_ACTIONS: Final = len(ACTIONS)
#: Bumped whenever :func:`features` changes meaning (training caches are keyed by it).
FEATURES_VERSION: Final = 1
WEIGHTS_FILE: Final = "net_weights.npz"
#: sha256 of ``net_weights.npz`` as committed (tests/test_players_net.py checks it).
WEIGHTS_SHA256: Final = "72977b3311c58c1419c1183fab25b0c9348a7030d284d91729393012e9d23748"

_SEATS: Final = 6
_PHASES: Final = ("auction", "declaration", "play")
_ROLES: Final = ("chiamante", "socio", "compare", "unknown")
_CONTRACTS: Final = ("rank", "two", "obbligato", "carichi", "punti")
#: The on/off table options, an input each (listed here, not read from TableOptions:
#: an option added later must not shift the inputs the shipped weights were trained on).
_OPTION_FLAGS: Final = (
    "monte",
    "chiamata_obbligata",
    "a_carichi",
    "al_buio",
    "in_mano",
    "follow_suit",
    "tie_goes_to_caller",
)


def _layout() -> dict[str, tuple[int, int]]:
    sizes = [
        ("variant", len(VARIANTS)),
        ("flags", len(_OPTION_FLAGS)),
        ("phase", len(_PHASES)),
        ("role", len(_ROLES)),
        ("hand", 40),
        ("hand_suits", 8),
        ("played", _SEATS * 40),
        ("trick", _SEATS * 40),
        ("unseen", 40),
        ("wins_now", 40),
        ("trick_winner", _SEATS),
        ("trick_count", _SEATS + 1),
        ("trick_points", 1),
        ("trump", 2),
        ("called", 40),
        ("chiamante", _SEATS),
        ("socio", _SEATS),
        ("partner_p", _SEATS),
        ("solo", 2),
        ("contract", len(_CONTRACTS)),
        ("contract_points", 1),
        ("contract_rank", 10),
        ("captured", _SEATS),
        ("voids", _SEATS * 4),
        ("hand_sizes", _SEATS),
        ("trick_no", 1),
        ("morto", _SEATS),
        ("face_up", 40),
        ("stock", 1),
        ("face_up_holder", _SEATS),
        ("partner_hand", 40),
        ("side_points", 1),
        ("side", _SEATS),
        ("passed", _SEATS),
        ("bidder", _SEATS),
        ("bid_kind", len(_CONTRACTS)),
        ("bid_rank", 10),
        ("bid_points", 1),
        ("min_call", 1),
        ("obbligato", 10),
        ("bids", 1),
    ]
    layout = {}
    offset = 0
    for name, size in sizes:
        layout[name] = (offset, size)
        offset += size
    return layout


LAYOUT: Final = _layout()
N_FEATURES: Final = sum(size for _, size in LAYOUT.values())
_RANK_OF_CODE: Final = {code: index for index, code in enumerate(RANK_CODES)}


def variant_index(view: View) -> int:
    a_punti = view.game == "chiamata" and view.options.a_punti
    return VARIANTS.index((view.game, view.players, a_punti))


def _known_trump(view: View) -> int | None:
    if view.game == "briscola":
        return None if view.face_up is None else view.face_up // 10
    if view.contract == "carichi":
        return None
    return view.trump


def suit_order(view: View) -> tuple[int, ...]:
    """``order[s]``: the canonical number of suit ``s`` (see the module docstring)."""
    trump = _known_trump(view)
    count = [0, 0, 0, 0]
    points = [0, 0, 0, 0]
    for card in view.hand:
        count[card // 10] += 1
        points[card // 10] += CARD_POINTS[card]
    others = sorted((s for s in range(4) if s != trump), key=lambda s: (-count[s], -points[s], s))
    ranked = ([trump] if trump is not None else []) + others
    order = [0, 0, 0, 0]
    for position, suit in enumerate(ranked):
        order[suit] = position
    return tuple(order)


def _card(order: tuple[int, ...], card: int) -> int:
    return order[card // 10] * 10 + card % 10


def canonical_action(order: tuple[int, ...], action: Action) -> int:
    """The id of ``action`` renamed into the canonical suits."""
    if isinstance(action, PlayCard):
        return PLAY[_card(order, action.card)].id
    if isinstance(action, DeclareCard):
        return DECLARE_CARD[_card(order, action.card)].id
    if isinstance(action, DeclareSuit):
        return DECLARE[order[action.suit]].id
    return action.id


def _contract_kind(contract: str | None) -> int | None:
    """Index in ``_CONTRACTS`` of a contract kind (``view.contract``)."""
    if contract is None:
        return None
    return _CONTRACTS.index(contract)


def _bid_kind(bid: Action) -> int | None:
    """Index in ``_CONTRACTS`` of the kind of a call."""
    for index, kind in enumerate((BidRank, BidTwo, BidObbligato, BidCarichi, BidPoints)):
        if isinstance(bid, kind):
            return index
    return None


def features(view: View) -> FloatArray:
    """The input vector of the network for the seat of ``view`` (see LAYOUT)."""
    me = view.seat
    assert me is not None
    n = view.players if view.morto is None else view.players + 1
    x = np.zeros(N_FEATURES, dtype=np.float32)
    order = suit_order(view)

    def put(name: str, index: int, value: float = 1.0) -> None:
        x[LAYOUT[name][0] + index] = value

    def rel(seat: int) -> int:
        return (seat - me) % n

    put("variant", variant_index(view))
    options = view.options
    for index, flag in enumerate(_OPTION_FLAGS):
        if getattr(options, flag):
            put("flags", index)
    phase = str(view.phase)
    if phase in _PHASES:
        put("phase", _PHASES.index(phase))
    chiamata = view.game == "chiamata"
    if chiamata:
        put("role", _ROLES.index(my_role(view)))
    held = 0
    count = [0, 0, 0, 0]
    points = [0, 0, 0, 0]
    for card in view.hand:
        c = _card(order, card)
        put("hand", c)
        held |= 1 << c
        count[c // 10] += 1
        points[c // 10] += CARD_POINTS[card]
    for suit in range(4):
        put("hand_suits", suit, count[suit] / 4.0)
        put("hand_suits", 4 + suit, points[suit] / 30.0)
    seen = held
    for seat, cards in enumerate(view.played):
        base = rel(seat) * 40
        for card in cards:
            c = _card(order, card)
            put("played", base + c)
            seen |= 1 << c
    if view.partner_hand is not None:
        for card in view.partner_hand:
            c = _card(order, card)
            put("partner_hand", c)
            seen |= 1 << c
    face_up = view.face_up
    if face_up is not None:
        put("face_up", _card(order, face_up))
        put("stock", 0, view.stock_count / 40.0)
        if view.face_up_holder is None and view.stock_count > 0:
            seen |= 1 << _card(order, face_up)
        elif view.face_up_holder is not None:
            put("face_up_holder", rel(view.face_up_holder))
    absent = 0
    if chiamata and view.players == 6:
        absent = sum(1 << (s * 10 + 8) for s in range(4))
    elif view.game == "briscola" and view.players == 3:
        absent = 1 << _card(order, 39)
    for c in range(40):
        if not (seen | absent) >> c & 1:
            put("unseen", c)
    trump = _known_trump(view)
    # the current trick: who has played what, who is winning, and which own cards win it
    trick = view.current_trick
    best_seat, best = -1, -1
    trick_points = 0
    for seat, card in trick:
        put("trick", rel(seat) * 40 + _card(order, card))
        trick_points += CARD_POINTS[card]
        if best < 0 or (card // 10 == best // 10 and card % 10 < best % 10) or (
            trump is not None and card // 10 == trump and best // 10 != trump
        ):
            best_seat, best = seat, card
    put("trick_count", len(trick))
    put("trick_points", 0, trick_points / 30.0)
    if best_seat >= 0:
        put("trick_winner", rel(best_seat))
    if phase == "play":
        for card in view.hand:
            wins = best < 0 or (card // 10 == best // 10 and card % 10 < best % 10) or (
                trump is not None and card // 10 == trump and best // 10 != trump
            )
            if wins:
                put("wins_now", _card(order, card))
    if trump is not None:
        put("trump", 0)
    if view.trump_public:
        put("trump", 1)
    if view.called_card is not None:
        put("called", _card(order, view.called_card))
    if view.chiamante is not None:
        put("chiamante", rel(view.chiamante))
    if view.socio is not None:
        put("socio", rel(view.socio))
    if chiamata and phase == "play":
        for seat, p in enumerate(partner_probabilities(view)):
            if seat < n:
                put("partner_p", rel(seat), p)
    if view.solo is not None:
        put("solo", 0 if view.solo else 1)
    kind = _contract_kind(view.contract)
    if kind is not None:
        put("contract", kind)
    if view.contract_points is not None:
        put("contract_points", 0, view.contract_points / 120.0)
    if view.contract_rank is not None:
        put("contract_rank", view.contract_rank)
    for seat, taken in enumerate(captured_points(view)):
        put("captured", rel(seat), taken / 60.0)
    for seat, voids in enumerate(known_voids(view)):
        for suit in range(4):
            if voids >> suit & 1:
                put("voids", rel(seat) * 4 + order[suit])
    for seat, size in enumerate(view.hand_sizes):
        put("hand_sizes", rel(seat), size / 10.0)
    put("trick_no", 0, view.trick_no / 10.0)
    if view.morto is not None:
        put("morto", rel(view.morto))
    if view.side_points is not None:
        put("side_points", 0, view.side_points / 120.0)
    for side in view.sides:
        if me in side:
            for seat in side:
                put("side", rel(seat))
    # the auction
    for seat, passed in enumerate(view.passed):
        if passed:
            put("passed", rel(seat))
    if view.current_bidder is not None:
        put("bidder", rel(view.current_bidder))
    if view.current_bid is not None:
        bid = parse_action(view.current_bid)
        bid_kind = _bid_kind(bid)
        if bid_kind is not None:
            put("bid_kind", bid_kind)
        if isinstance(bid, BidRank | BidObbligato):
            put("bid_rank", int(bid.rank))
        if isinstance(bid, BidTwo | BidObbligato | BidPoints):
            put("bid_points", 0, bid.points / 120.0)
    if view.min_call_points is not None:
        put("min_call", 0, view.min_call_points / 120.0)
    for code in view.obbligato_ranks:
        put("obbligato", _RANK_OF_CODE[code])
    put("bids", 0, len(view.auction) / 10.0)
    return x


class Network:
    """The MLP: ``features -> relu(W1) -> relu(W2) -> (policy logits, value)``."""

    def __init__(self, arrays: dict[str, npt.NDArray[np.generic]]) -> None:
        self.w1 = np.asarray(arrays["w1"], dtype=np.float32)
        self.b1 = np.asarray(arrays["b1"], dtype=np.float32)
        self.w2 = np.asarray(arrays["w2"], dtype=np.float32)
        self.b2 = np.asarray(arrays["b2"], dtype=np.float32)
        self.wp = np.asarray(arrays["wp"], dtype=np.float32)
        self.bp = np.asarray(arrays["bp"], dtype=np.float32)
        self.wv = np.asarray(arrays["wv"], dtype=np.float32)
        self.bv = np.asarray(arrays["bv"], dtype=np.float32)
        if self.w1.shape[0] != N_FEATURES or self.wp.shape[1] != N_ACTIONS:
            raise ValueError(
                f"weights for {self.w1.shape[0]} features / {self.wp.shape[1]} actions, "
                f"this code has {N_FEATURES} / {N_ACTIONS}"
            )

    def forward(self, x: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Policy logits (``N_ACTIONS`` a row) and values for a batch or one vector."""
        h = np.maximum(x @ self.w1 + self.b1, 0.0)
        h = np.maximum(h @ self.w2 + self.b2, 0.0)
        return h @ self.wp + self.bp, (h @ self.wv + self.bv)[..., 0]


def load_network(data: bytes) -> Network:
    with np.load(BytesIO(data)) as arrays:
        return Network({name: arrays[name] for name in arrays.files})


def weights_bytes() -> bytes:
    return resources.files("game.players").joinpath(WEIGHTS_FILE).read_bytes()


def weights_digest() -> str:
    return hashlib.sha256(weights_bytes()).hexdigest()


@cache
def default_network() -> Network:
    """The shipped network (read once per process)."""
    return load_network(weights_bytes())


def masked_policy(
    network: Network, view: View
) -> tuple[list[Action], FloatArray, float]:
    """The legal actions, their probabilities under the network, and the value."""
    legal = [parse_action(code) for code in view.legal]
    order = suit_order(view)
    logits, value = network.forward(features(view))
    ids = [canonical_action(order, action) for action in legal]
    chosen = logits[ids].astype(np.float64)
    chosen -= chosen.max()
    probs = np.exp(chosen)
    probs /= probs.sum()
    return legal, probs.astype(np.float32), float(value)


class NetPlayer:
    """Plays the network's most likely legal action (``temperature`` 0), or samples
    from its policy at that temperature with a per-decision RNG of the seed."""

    def __init__(
        self,
        seed: int = 0,
        network: Network | None = None,
        temperature: float = 0.0,
        name: str = "rapido",
    ) -> None:
        self.seed = seed
        self.network = network
        self.temperature = temperature
        self.name = name

    def choose(self, view: View) -> Action:
        if len(view.legal) == 1:
            return parse_action(view.legal[0])
        network = self.network or default_network()
        legal, probs, _ = masked_policy(network, view)
        if self.temperature <= 0:
            return legal[int(np.argmax(probs))]
        weights = np.power(probs.astype(np.float64), 1.0 / self.temperature)
        rng = decision_rng(self.seed, view.smazzata, view.version, view.seat or 0)
        pick = rng.random() * float(weights.sum())
        for action, weight in zip(legal, weights, strict=True):
            pick -= float(weight)
            if pick <= 0:
                return action
        return legal[-1]
