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
    """
    if len(legal) == 1 and values is None:
        return legal[0]
    power, horizon, load, dump, lead, reveal, will_high, will_mid, will_low = weights
    n_unseen = unseen.bit_count()
    played = len(trick)
    later = [(me + k) % n for k in range(1, n - played)]
    power_scale = 0.0 if tricks_left <= 1 else power * min(1.0, (tricks_left - 1) / horizon)
    lead_cost = lead if tricks_left > 1 else 0.0
    # per later seat: the chance of missing any given unseen card, its voids, its side
    misses = []
    for seat in later:
        size = sizes[seat]
        if size <= 0 or n_unseen <= 0:
            misses.append(1.0)
        else:
            frac = size / n_unseen
            misses.append(1.0 - (frac if frac < 0.999 else 0.999))
    suit_counts = [(unseen & SUIT_MASK[s]).bit_count() for s in range(4)]
    trump_count = suit_counts[trump] if trump is not None else 0
    # what the later seats add: partners load a trick their side takes, dump otherwise
    load_mine = 0.0
    load_theirs = 0.0
    for seat in later:
        p_l = partner_p[seat]
        load_mine += p_l * load + (1.0 - p_l) * dump
        load_theirs += p_l * dump + (1.0 - p_l) * load
    table = 0
    if played:
        led = trick[0] // 10
        win_i = 0
        best = trick[0]
        table = CARD_POINTS[best]
        for i in range(1, played):
            card = trick[i]
            table += CARD_POINTS[card]
            if card // 10 == best // 10:
                if card % 10 < best % 10:
                    best, win_i = card, i
            elif card // 10 == trump:
                best, win_i = card, i
        base_p = partner_p[(leader + win_i) % n]
    else:
        led = -1
        best = -1
        base_p = 0.0

    best_value = -1e9
    choice = legal[0]
    beat_cache: dict[int, list[float]] = {}
    for card in legal:
        points = CARD_POINTS[card]
        if played:
            bs = best // 10
            if (card // 10 == bs and card % 10 < best % 10) or (card // 10 == trump != bs):
                x, s = card, 1.0
                mine = True
            else:
                x, s = best, base_p
                mine = False
            lead_suit = led
        else:
            x, s = card, 1.0
            mine = True
            lead_suit = card // 10
        if later:
            chances = beat_cache.get(x)
            if chances is None:
                chances = []
                x_suit = x // 10
                stronger = (unseen & STRONGER[x]).bit_count()
                for i, seat in enumerate(later):
                    miss = misses[i]
                    if miss == 1.0:
                        chances.append(0.0)
                        continue
                    void = voids[seat]
                    p_same = 0.0 if (void >> x_suit & 1 or not stronger) else 1.0 - miss**stronger
                    if x_suit == trump:
                        if follow and lead_suit != trump and p_same and not void >> lead_suit & 1:
                            p_same *= miss ** suit_counts[lead_suit]
                        chances.append(p_same)
                        continue
                    if trump is None or not trump_count or void >> trump & 1:
                        chances.append(p_same)
                        continue
                    p_trump = 1.0 - miss**trump_count
                    if follow and not void >> lead_suit & 1:
                        p_trump *= miss ** suit_counts[lead_suit]
                    chances.append(1.0 - (1.0 - p_same) * (1.0 - p_trump))
                beat_cache[x] = chances
            stake = table + points
            will = will_high if stake >= 10 else (will_mid if stake >= 3 else will_low)
            for i, seat in enumerate(later):
                b = chances[i]
                if b:
                    p_l = partner_p[seat]
                    b *= will
                    s = s * (1.0 - (1.0 - p_l) * b) + (1.0 - s) * p_l * b
            value = (2.0 * s - 1.0) * (table + points) + s * load_mine - (1.0 - s) * load_theirs
        else:
            value = (2.0 * s - 1.0) * (table + points)
        if mine:
            value -= lead_cost * s
        if card // 10 == trump:
            value -= TRUMP_POWER[card % 10] * power_scale
        if card == hidden_called and tricks_left > 3:
            value -= reveal
        # deterministic tie-break: fewer points, then the weaker card
        value -= points * 1e-6 + (9 - card % 10) * 1e-7
        if values is not None:
            values.append(value)
        if value > best_value:
            best_value = value
            choice = card
    return choice
