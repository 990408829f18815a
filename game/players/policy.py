"""The card-play policy of the heuristic player, also used in the search player's rollouts.

It works on plain ints and bitmasks (no :class:`~game.view.View`) so that the search can
call it tens of thousands of times per decision. The caller supplies what the seat knows:

* its hand and legal cards, the cards on the table, the trump *as known to the seat*
  (``None`` under al buio in trick 1 for everyone but the chiamante, or under a carichi);
* ``partner_p[s]``: the probability that seat s is on the seat's side (1 for itself).
  Before the called card is played nobody but the socio knows the sides, so a compare
  gives each unknown seat a probability, sharpened by what the seat saw (see
  :func:`game.players.heuristic.partner_probabilities`);
* ``unseen``: the cards it has not seen (not in its hand, not played): the cards that the
  players still to act may hold; ``voids[s]``: suits seat s is known not to hold (revealed
  only when the follow-suit obligation is in force);
* ``hidden_called``: the called card if the seat is the still-hidden socio.

How a good player thinks, and how the policy encodes it
-------------------------------------------------------

Every legal card is scored by the expected card-point *difference* it brings to the
seat's side, minus the value of what it spends::

    value = (2·P(side wins trick) − 1) · (points on the table + the card's points)
            + expected points the later players will add (partners load, opponents dump)
            − trump power spent − cost of revealing the socio − cost of having to lead

``P(side wins)`` comes from the current winner, who is on which side (``partner_p``), and
for each later seat the chance that it holds a card beating the winner (counted from the
unseen cards, the seat's hand size and its known voids) and plays it.

This single formula reproduces the classic rules of the table:

* *non dare carichi agli avversari*: on a trick the opponents are winning, ``P`` is near
  0, so an Asso or a 3 scores −11/−10 while a liscio scores 0: the liscio goes;
* *caricare il compagno*: on a trick the (presumed) partner wins safely, ``P`` is near 1,
  so the card with the most points scores best; a trump Asso is not "loaded" because
  its trump power costs more than its points;
* *strozzo* and *taglio*: taking an opponent's carico with a stronger card of the suit or
  with a small trump wins ``2·T``, minus the small power of a low trump; a big trump is
  only spent on a big trick;
* *contare le carte*: ``unseen`` shrinks as cards fall, so a 3 becomes a sure winner
  once the Asso of its suit has been seen, and a trump becomes master once the stronger
  ones are out; on the last trick nothing is worth keeping, so power costs vanish.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final, NamedTuple

from game.cards import CARD_POINTS
from game.players.common import STRONGER, SUIT_MASK

#: Future value of a trump by rank index (Asso … 2): what spending it costs in tricks to
#: come. Scaled down as the smazzata ends (a trump kept for the last trick is worth 0).
TRUMP_POWER: Final[tuple[float, ...]] = (10.0, 8.5, 6.5, 5.5, 4.5, 3.5, 3.0, 2.5, 2.2, 2.0)
#: Expected points a later player adds: LOAD when it helps its own side win, DUMP when not.
LOAD: Final = 5.0
DUMP: Final = 0.6
#: Winning a trick obliges to lead the next one, a small disadvantage in briscola.
LEAD_COST: Final = 1.2
#: Cost of playing the called card while still hidden, early in the smazzata.
REVEAL_COST: Final = 4.0


class Weights(NamedTuple):
    """The policy's weights (the defaults are the constants above; other weights are
    measured with :mod:`game.players.tune`)."""

    #: scale of ``TRUMP_POWER``
    power: float = 1.0
    #: tricks over which trump power fades to 0 at the end of the smazzata
    horizon: float = 3.0
    load: float = LOAD
    dump: float = DUMP
    lead: float = LEAD_COST
    reveal: float = REVEAL_COST
    #: chance a later seat able to beat the winner does, by the stake (≥10, ≥3, less)
    will_high: float = 0.9
    will_mid: float = 0.7
    will_low: float = 0.4


DEFAULT_WEIGHTS: Final = Weights()
#: What :mod:`game.players.tune` found (3 rounds from the defaults, 2000 deals, seed 7):
#: trumps kept about three times dearer, less loading expected from the later seats.
TUNED_WEIGHTS: Final = Weights(power=2.9, horizon=2.3, load=3.85)


#: The tie-break subtracted from every card's value: fewer points, then the weaker card.
#: Precomputed per card with the same float operations the formula would do.
_TIE_BREAK: Final[tuple[float, ...]] = tuple(
    CARD_POINTS[c] * 1e-6 + (9 - c % 10) * 1e-7 for c in range(len(CARD_POINTS))
)
#: _POPCOUNT[m]: the set bits of a 16-bit ``m``. ``int.bit_count`` is a method call on a
#: boxed int in the compiled module; three lookups count a 40-bit card mask natively.
_POPCOUNT: Final[tuple[int, ...]] = tuple(m.bit_count() for m in range(1 << 16))


def _count(mask: int) -> int:
    """The cards of a card mask (below 2**48), as ``mask.bit_count()``."""
    return _POPCOUNT[mask & 0xFFFF] + _POPCOUNT[(mask >> 16) & 0xFFFF] + _POPCOUNT[mask >> 32]


def choose_card(
    me: int,
    legal: Sequence[int],
    trick: Sequence[int],
    leader: int,
    trump: int | None,
    partner_p: Sequence[float],
    unseen: int,
    voids: Sequence[int],
    sizes: Sequence[int],
    follow: bool,
    tricks_left: int,
    hidden_called: int = -1,
    n: int = 5,
    values: list[float] | None = None,
    weights: Weights = DEFAULT_WEIGHTS,
) -> int:
    """The card a good player plays here (see the module docstring for the reasoning).

    ``trick`` holds the cards already on the table, led by ``leader``; ``tricks_left``
    counts the current trick. Deterministic: ties go to the card with fewer points, then
    to the weaker card.

    The chance that a later seat beats the winning card ``x`` is estimated as if the
    unseen cards were spread at random: with ``h`` cards in that seat's hand out of ``U``
    unseen, it holds one of ``k`` beating cards with probability ``1 − (1 − h/U)^k``. A
    trump over a card of another suit needs the seat not to be void in trumps and, when
    following is compulsory, to be void in the led suit (probability ``(1 − h/U)^m``
    with ``m`` unseen cards of the led suit, or 1 if the void is known).

    If ``values`` is given, the value of each legal card (in ``legal``'s order) is
    appended to it: the inference of :mod:`game.players.inference` reads how far a
    card played was from the policy's choice.

    This is the hot loop of the search player's rollouts, hence the local names for
    globals, the tables built once and the work skipped when no seat plays after ``me``.
    """
    if len(legal) == 1 and values is None:
        return legal[0]
    power, horizon, load, dump, lead, reveal, will_high, will_mid, will_low = weights
    # the trump as a plain int (-1: none; a suit is 0..3), so that the compiled module
    # compares suits natively
    trump_suit = -1 if trump is None else trump
    card_points = CARD_POINTS
    stronger_masks = STRONGER
    played = len(trick)
    # the seats still to play after ``me``: (me + k) % n for k in 1 .. later_count
    later_count = n - played - 1
    power_scale = 0.0 if tricks_left <= 1 else power * min(1.0, (tricks_left - 1) / horizon)
    lead_cost = lead if tricks_left > 1 else 0.0
    table = 0
    if played:
        led = trick[0] // 10
        win_i = 0
        best = trick[0]
        table = card_points[best]
        for i in range(1, played):
            card = trick[i]
            table += card_points[card]
            if card // 10 == best // 10:
                if card % 10 < best % 10:
                    best, win_i = card, i
            elif card // 10 == trump_suit:
                best, win_i = card, i
        base_p = partner_p[(leader + win_i) % n]
        best_suit = best // 10
        best_rank = best % 10
    else:
        led = -1
        best = best_suit = best_rank = -1
        base_p = 0.0

    # per later seat that may hold an unseen card (the others cannot change who wins):
    # the chance of missing any given unseen card, its voids, its side (p_l)
    may_miss: list[float] = []
    may_void: list[int] = []
    may_p: list[float] = []
    may_q: list[float] = []
    suit_counts: list[int] = [0, 0, 0, 0]
    trump_count = 0
    load_mine = 0.0
    load_theirs = 0.0
    # the winning card x → (chance to beat x, p_l, 1 − p_l) of each later seat with a
    # chance above 0 (a 0 leaves the trick's outcome as it is), flattened
    beat_cache: dict[int, list[float]] = {}
    if later_count > 0:
        n_unseen = _count(unseen)
        # what the later seats add: partners load a trick their side takes, dump
        # otherwise
        for k in range(1, later_count + 1):
            seat = (me + k) % n
            p_l = partner_p[seat]
            load_mine += p_l * load + (1.0 - p_l) * dump
            load_theirs += p_l * dump + (1.0 - p_l) * load
            size = sizes[seat]
            if size > 0 and n_unseen > 0:
                frac = size / n_unseen
                may_miss.append(1.0 - (frac if frac < 0.999 else 0.999))  # < 1: frac ≥ 1/40
                may_void.append(voids[seat])
                may_p.append(p_l)
                may_q.append(1.0 - p_l)
        suit_masks = SUIT_MASK
        suit_counts = [
            _count(unseen & suit_masks[0]),
            _count(unseen & suit_masks[1]),
            _count(unseen & suit_masks[2]),
            _count(unseen & suit_masks[3]),
        ]
        trump_count = suit_counts[trump_suit] if trump_suit >= 0 else 0
    n_may = len(may_miss)

    best_value = -1e9
    choice = legal[0]
    for card in legal:
        points = card_points[card]
        suit = card // 10
        if played:
            if (suit == best_suit and card % 10 < best_rank) or (
                suit == trump_suit and trump_suit != best_suit
            ):
                x, s = card, 1.0
                mine = True
            else:
                x, s = best, base_p
                mine = False
            lead_suit = led
        else:
            x, s = card, 1.0
            mine = True
            lead_suit = suit
        if later_count > 0:
            chances = beat_cache.get(x)
            if chances is None:
                chances = []
                x_suit = x // 10
                stronger = _count(unseen & stronger_masks[x])
                for j in range(n_may):
                    miss = may_miss[j]
                    void = may_void[j]
                    p_same = (
                        0.0
                        if (void >> x_suit & 1 or not stronger)
                        else 1.0 - math.pow(miss, float(stronger))
                    )
                    if x_suit == trump_suit:
                        if (
                            follow
                            and lead_suit != trump_suit
                            and p_same
                            and not void >> lead_suit & 1
                        ):
                            p_same *= math.pow(miss, float(suit_counts[lead_suit]))
                        b = p_same
                    elif trump_suit < 0 or not trump_count or void >> trump_suit & 1:
                        b = p_same
                    else:
                        p_trump = 1.0 - math.pow(miss, float(trump_count))
                        if follow and not void >> lead_suit & 1:
                            p_trump *= math.pow(miss, float(suit_counts[lead_suit]))
                        b = 1.0 - (1.0 - p_same) * (1.0 - p_trump)
                    if b:
                        chances.append(b)
                        chances.append(may_p[j])
                        chances.append(may_q[j])
                beat_cache[x] = chances
            stake = table + points
            will = will_high if stake >= 10 else (will_mid if stake >= 3 else will_low)
            for j in range(0, len(chances), 3):
                b = chances[j] * will
                p_l = chances[j + 1]
                q_l = chances[j + 2]
                s = s * (1.0 - q_l * b) + (1.0 - s) * p_l * b
            value = (2.0 * s - 1.0) * (table + points) + s * load_mine - (1.0 - s) * load_theirs
        else:
            value = (2.0 * s - 1.0) * (table + points)
        if mine:
            value -= lead_cost * s
        if suit == trump_suit:
            value -= TRUMP_POWER[card % 10] * power_scale
        if card == hidden_called and tricks_left > 3:
            value -= reveal
        # deterministic tie-break: fewer points, then the weaker card
        value -= _TIE_BREAK[card]
        if values is not None:
            values.append(value)
        if value > best_value:
            best_value = value
            choice = card
    return choice
