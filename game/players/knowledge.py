"""What a seat can deduce from its :class:`~game.view.View`, and nothing more.

A good player keeps count: which cards have fallen (so which are still out), which seat
has shown a void (only meaningful when following suit is compulsory, R58/R42), how many
points each side has taken (tricks and their winners are public, R65), and who is likely
the socio from how the others played. Everything here is a pure function of the view.
"""

from __future__ import annotations

from dataclasses import dataclass

from game.cards import CARD_POINTS
from game.players.common import ALL_MASK, mask_of
from game.players.sim import CHIAMANTE_PRIOR
from game.view import View

#: Prior probability, for a compare, that the chiamante called in mano (plays alone).
IN_MANO_PRIOR = 0.1


def follow_in_force(view: View) -> bool:
    """Is following the led suit compulsory (R58 with follow_suit, R42 under a carichi)?"""
    return view.options.follow_suit or view.contract == "carichi"


def trump_known(view: View) -> int | None:
    """The briscola if this seat knows it (public, or own declaration under al buio)."""
    if view.contract == "carichi":
        return None
    return view.trump


def all_tricks(view: View) -> list[tuple[tuple[int, int], ...]]:
    """Every trick with cards on it, completed ones first, as ``(seat, card)`` plays."""
    result = [t.plays for t in view.tricks]
    if view.current_trick:
        result.append(view.current_trick)
    return result


def known_voids(view: View) -> list[int]:
    """Suits (bit s) each seat has shown it does not hold.

    Only when following is compulsory does a discard prove a void; without the
    obligation a player may keep cards of the led suit and play another one. Il morto
    is exempt (R90: it plays its first card in deal order), so its discards prove nothing.
    """
    voids = [0] * view.players
    if not follow_in_force(view):
        return voids
    for plays in all_tricks(view):
        led = plays[0][1] // 10
        for seat, card in plays[1:]:
            if card // 10 != led and seat != view.morto:
                voids[seat] |= 1 << led
    return voids


def played_mask(view: View) -> int:
    mask = 0
    for cards in view.played:
        mask |= mask_of(cards)
    return mask


def unseen_mask(view: View) -> int:
    """Cards this seat has not seen: in some other seat's hand."""
    return ALL_MASK & ~(played_mask(view) | mask_of(view.hand) | absent_mask(view))


def absent_mask(view: View) -> int:
    """Cards not in the deck in play: the four 4s with six players (R94)."""
    if view.game == "chiamata" and view.players == 6:
        return sum(1 << (suit * 10 + 8) for suit in range(4))
    return 0


def tricks_total(view: View) -> int:
    """Tricks of a chiamata smazzata: 8, or 6 with six players (R94)."""
    return 6 if view.players == 6 else 8


def captured_points(view: View) -> list[int]:
    """Card points taken so far by each seat (from the public tricks)."""
    points = [0] * view.players
    for trick in view.tricks:
        if trick.winner is not None and trick.points is not None:
            points[trick.winner] += trick.points
    return points


def holds_hidden_called(view: View) -> bool:
    """True for the socio while the called card is still in its hand.

    Under al buio the suit is secret until trick 1 is complete (R52), so a seat cannot
    know that it holds the called card before then, whatever the view may say.
    """
    return (
        view.seat is not None
        and view.called_card is not None
        and view.called_card in view.hand
        and view.seat != view.chiamante
        and not view.partner_revealed
    )


def my_role(view: View) -> str:
    """``chiamante``, ``socio``, ``compare``, or ``unknown`` (before the auction ends)."""
    me = view.seat
    if view.chiamante is None:
        return "unknown"
    if me == view.chiamante:
        return "chiamante"
    if view.contract == "carichi":
        return "compare"
    if view.called_card is not None and view.trump is not None:
        if view.called_card in view.hand:
            return "socio"
        if view.partner_revealed:
            return "socio" if view.socio == me else "compare"
        return "compare"
    if view.partner_revealed:
        return "socio" if view.socio == me else "compare"
    return "unknown"


@dataclass(frozen=True, slots=True)
class SocioEvidence:
    """Per-seat likelihood factor of being the socio, read from the play so far."""

    factor: tuple[float, ...]


def socio_evidence(view: View) -> SocioEvidence:
    """How the others' plays around the chiamante's cards hint at the socio.

    * Loading a carico (Asso or 3) on a trick the chiamante is winning, when the seat
      did not need to, is what the socio does ("carica il compagno"): factor 3.
    * Taking a trick with points away from the chiamante is what a compare does: 1/3.
    * Giving a carico to a trick that a non-chiamante wins against the chiamante hints
      at a compare helping its side: 1/2.
    """
    n = view.players
    factor = [1.0] * n
    chiamante = view.chiamante
    if chiamante is None:
        return SocioEvidence(tuple(factor))
    trump = view.trump
    for plays in all_tricks(view):
        best_seat, best = plays[0]
        for seat, card in plays[1:]:
            beat = (card // 10 == best // 10 and card % 10 < best % 10) or (
                trump is not None and card // 10 == trump and best // 10 != trump
            )
            if seat != chiamante:
                if best_seat == chiamante and not beat and CARD_POINTS[card] >= 10:
                    factor[seat] *= 3.0
                elif best_seat == chiamante and beat and CARD_POINTS[best] + CARD_POINTS[card] >= 4:
                    factor[seat] /= 3.0
                elif best_seat != chiamante and not beat and CARD_POINTS[card] >= 10:
                    factor[seat] /= 2.0
            if beat:
                best_seat, best = seat, card
    return SocioEvidence(tuple(factor))


def partner_probabilities(view: View) -> list[float]:
    """``p[s]``: probability that seat s plays on this seat's side (1 for itself).

    Exact once the sides are public, for the socio itself, and under a carichi. The
    chiamante spreads the called card over the seats that can still hold it; a compare
    weighs each other seat's chance of being the socio by the evidence of play (and the
    chance that the chiamante called in mano, when the options and contract allow it).
    """
    n = view.players
    me = view.seat
    assert me is not None
    chiamante = view.chiamante
    if chiamante is None:
        return [1.0 if s == me else 0.5 for s in range(n)]
    socio = view.socio
    role = my_role(view)
    if view.contract == "carichi" or view.partner_revealed or role == "socio":
        if role == "socio" and not view.partner_revealed:
            socio = me
        mine = me in (chiamante, socio)
        return [1.0 if (s in (chiamante, socio)) == mine else 0.0 for s in range(n)]
    voids = known_voids(view)
    trump = view.trump
    candidates = [
        s
        for s in range(n)
        if s not in (me, chiamante)
        and view.hand_sizes[s] > 0
        and not (trump is not None and voids[s] >> trump & 1)
    ]
    evidence = socio_evidence(view).factor
    if me == chiamante:
        if view.solo:
            return [1.0 if s == me else 0.0 for s in range(n)]
        weights = {s: evidence[s] for s in candidates}
        total = sum(weights.values())
        if total <= 0:
            return [1.0 if s == me else CHIAMANTE_PRIOR for s in range(n)]
        return [1.0 if s == me else weights.get(s, 0.0) / total for s in range(n)]
    # a compare: the socio is one of the candidates, or nobody if the chiamante is alone
    may_be_in_mano = view.options.in_mano and view.contract != "obbligato"
    in_mano = IN_MANO_PRIOR if may_be_in_mano else 0.0
    weights = {s: evidence[s] for s in candidates}
    total = sum(weights.values())
    result = []
    for s in range(n):
        if s == me:
            result.append(1.0)
        elif s == chiamante:
            result.append(0.0)
        elif total <= 0:
            result.append(1.0)
        else:
            result.append(1.0 - (1.0 - in_mano) * weights.get(s, 0.0) / total)
    return result


__all__ = [
    "SocioEvidence",
    "all_tricks",
    "captured_points",
    "follow_in_force",
    "holds_hidden_called",
    "known_voids",
    "my_role",
    "partner_probabilities",
    "played_mask",
    "socio_evidence",
    "trump_known",
    "unseen_mask",
]
