"""The rating model, pure: units, sides, the Weng-Lin update and the number shown.

**Families.** A rating belongs to a player in one chat for one family of games (see
:func:`family_of`): ``chiamata`` (4 with il morto, 5 and 6 players together),
``briscola`` (plain Briscola with 2, and with 4 in two fixed pairs: two sides each time)
and ``briscola3`` (three players, each for themselves).

**Units.** Chiamata is rated per smazzata (voided deals are not scored, so not rated):
the calling side, the chiamante with the socio (alone when in mano or a carichi, R69),
against all the others, as the rules make the sides; with four players il morto sits on
the side its cards count for (R91) and is rated as its own player (``morto``), like each
computer level (``cpu:<level>``), so that the levels anchor the scale. Plain Briscola is
rated per match, by the smazzate each side won (R110, R123: a match always ends with one
side ahead; with three players the other two are ranked by their wins).

**Model.** openskill's Plackett-Luce (Weng and Lin, 2011, algorithm 4). Every unit here
has two sides except Briscola with three, where it is the one model of the library whose
update is linear in the number of sides and which ranks several sides natively (the
"full pairing" models compare every pair; with two sides they give the same update).
Teammates get their own change, weighted by their own uncertainty, which is what an Elo
averaged over a team does not do.

**Sides of different sizes.** openskill sums a side's skills, so three equal players
would be favourites against two (about 78% in chiamata's two-against-three): a caller
would gain far more by winning than they lose by failing, and a frequent bidder would
drift up. The smaller side is padded with :data:`PAD`, a fixed average player (the
prior's mean, a tiny deviation) that is never stored: equal players then meet at even
odds, and a solo chiamante takes the whole change of their side.

**The same player twice.** Two seats of one computer level (or both sides of it) are one
player: its mean moves by the sum of its seats' changes, its deviation takes the smallest
of theirs.

**The number shown** is conservative: ``1000 + 40 × (μ − 3σ)`` rounded (1000 for a new
player; it rises as the rating becomes certain).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from openskill.models import PlackettLuce, PlackettLuceRating

Family = Literal["chiamata", "briscola", "briscola3"]
FAMILIES: tuple[Family, ...] = ("chiamata", "briscola", "briscola3")

#: The player key of il morto (chiamata with four, §12).
MORTO = "morto"
#: The defaults of the Weng-Lin paper and of openskill (μ = 25, σ = 25/3, β = σ/2,
#: τ = σ/100: the deviation never settles to zero, so a rating can still move).
MU = 25.0
SIGMA = 25.0 / 3.0
#: The padding player's deviation: fixed, it carries no uncertainty of its own.
PAD_SIGMA = 1e-3
#: The number shown: OFFSET + SCALE × (μ − 3σ).
OFFSET = 1000
SCALE = 40

MODEL = PlackettLuce(mu=MU, sigma=SIGMA)


def user_key(user_id: int) -> str:
    return f"u:{user_id}"


def computer_key(level: str | None) -> str:
    return f"cpu:{level or 'normale'}"


def user_of(key: str) -> int | None:
    """The Telegram user id of a person's key, None for a computer or il morto."""
    kind, _, rest = key.partition(":")
    return int(rest) if kind == "u" and rest.lstrip("-").isdigit() else None


def family_of(game: str, players: int) -> Family:
    if game != "briscola":
        return "chiamata"
    return "briscola3" if players == 3 else "briscola"


@dataclass(frozen=True, slots=True)
class Rating:
    mu: float = MU
    sigma: float = SIGMA

    @property
    def shown(self) -> int:
        """The conservative number shown to people."""
        return shown(self.mu, self.sigma)


def shown(mu: float, sigma: float) -> int:
    return OFFSET + round(SCALE * (mu - 3 * sigma))


@dataclass(frozen=True, slots=True)
class Unit:
    """One rated unit: the sides (seat numbers, best rank 1) as the result makes them."""

    sides: tuple[tuple[int, ...], ...]
    ranks: tuple[int, ...]


def chiamata_unit(result: Mapping[str, object], seats: Sequence[int]) -> Unit:
    """A scored smazzata of chiamata (the stored ``SmazzataScored``): the calling side
    against the others, among ``seats`` (every seat of the game, il morto's too)."""
    chiamante, socio = result["chiamante"], result["socio"]
    calling = tuple(s for s in seats if s in (chiamante, socio))
    others = tuple(s for s in seats if s not in calling)
    won = bool(result["won"])
    return Unit((calling, others), (1, 2) if won else (2, 1))


def briscola_unit(result: Mapping[str, object]) -> Unit:
    """The last smazzata of a plain Briscola match (the stored ``BriscolaScored``): its
    ``wins`` rank the sides (R110, R123)."""
    sides = tuple(tuple(int(s) for s in side) for side in result["sides"])  # type: ignore[attr-defined]
    wins = [int(w) for w in result["wins"]]  # type: ignore[attr-defined]
    ranks = tuple(1 + sum(1 for other in wins if other > mine) for mine in wins)
    return Unit(sides, ranks)


def unit_of(family: Family, result: Mapping[str, object], seats: Sequence[int]) -> Unit:
    """The unit a stored result decides, among ``seats``; ValueError if it cannot be one
    (a side without players, a player at no seat)."""
    unit = chiamata_unit(result, seats) if family == "chiamata" else briscola_unit(result)
    playing = [seat for side in unit.sides for seat in side]
    if len(unit.sides) < 2 or not all(unit.sides) or not set(playing) <= set(seats):
        raise ValueError(f"not a rated unit: sides {unit.sides} among seats {list(seats)}")
    return unit


def rate(
    unit: Unit, players: Mapping[int, str], ratings: Mapping[str, Rating]
) -> dict[str, Rating]:
    """The new rating of every player of ``unit`` (``players``: seat -> player key;
    ``ratings``: their ratings before, a missing one is a new player)."""
    size = max(len(side) for side in unit.sides)
    teams: list[list[PlackettLuceRating]] = []
    for side in unit.sides:
        team = [MODEL.rating(*_pair(ratings.get(players[s]))) for s in side]
        team += [MODEL.rating(mu=MU, sigma=PAD_SIGMA) for _ in range(size - len(side))]
        teams.append(team)
    rated = MODEL.rate(teams, ranks=[float(r) for r in unit.ranks])
    moves: dict[str, float] = {}
    sigmas: dict[str, float] = {}
    for side, team in zip(unit.sides, rated, strict=True):
        for seat, after in zip(side, team, strict=False):  # (the padding is dropped)
            key = players[seat]
            before = ratings.get(key, Rating())
            moves[key] = moves.get(key, 0.0) + (after.mu - before.mu)
            sigmas[key] = min(sigmas.get(key, math.inf), after.sigma)
    return {
        key: Rating(ratings.get(key, Rating()).mu + move, sigmas[key])
        for key, move in moves.items()
    }


def _pair(rating: Rating | None) -> tuple[float, float]:
    rating = rating or Rating()
    return rating.mu, rating.sigma
