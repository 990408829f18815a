"""How well the two-player inference places the opponent's hidden cards (issue 49).

    python -m game.players.inferlook --games 40 --seed 4990 --shares 0,0.25,0.5,1

Two-player Briscola games of ``esperto`` against ``esperto`` (game ``g`` dealt from
``seed + g``, the players seeded ``10 × that + seat``). At each middle-game decision of
seat 0 (more than ``champion.EXACT_STOCK`` cards to draw, at least two tricks played)
``campione``'s candidate deals are drawn (``WORLDS × CANDIDATES`` of them, its decision
seed) and weighted as :func:`game.players.champion.likelihoods` weighs them, with the
network's kind of opponent at each ``--shares`` (0: today's opponent model alone). For
every card seat 0 cannot place, the weighted chance that the opponent holds it is
scored against where it is: the mean binary cross-entropy over those cards (lower is
better; the uniform deals' figure beside), and the chance given to the opponent's real
hand (the product over its cards, as a mean log).

With ``--plays``: instead, how likely each kind of opponent finds ``esperto``'s own
plays in those games, from the hand it really held (the mean log-likelihood a play with
more than one card in hand, leading and following apart): the network (with
``netinfer.EPSILON`` of the uniform chance mixed in, as the inference reads it), the
play model, the rule-based card (``MATCH``), and the half-half mix of the last two that
the opponent model starts from (and the answers to a lead read).

A look to choose the share, not a measurement of play: the figure of play is the arena's.
"""

from __future__ import annotations

import argparse
import math
import random
import time
from collections.abc import Iterator

from game.actions import PlayCard
from game.engine import Game
from game.options import TableOptions
from game.players import briscola, champion, create_player, playmodel
from game.players.common import decision_rng
from game.players.net import default_network, masked_policy
from game.players.netinfer import EPSILON, NetOpponent
from game.players.opponent import MATCH, OpponentModel
from game.view import View

ALL = (1 << 40) - 1


def decisions(games: int, seed: int) -> Iterator[tuple[Game, int, View, PlayCard]]:
    """Every decision of ``games`` smazzate of esperto against esperto (module doc):
    the game before it, the seat, its view and the card it played."""
    options = TableOptions.model_validate(
        {"game": "briscola", "players": 2, "match_end": "hands:1"}
    )
    for g in range(games):
        deal = seed + g
        game = Game.new(options, random.Random(deal))
        players = [create_player("esperto", 10 * deal + s) for s in range(2)]
        while not game.is_over() and game.scored_count == 0:
            seat = game.current_seat()
            assert seat is not None
            view = game.view(seat)
            action = players[seat].choose(view)
            assert isinstance(action, PlayCard)
            yield game, seat, view, action
            game.apply(seat, action)


def positions(games: int, seed: int) -> list[tuple[View, list[int]]]:
    """(seat 0's view, the opponent's real hand) at seat 0's middle-game decisions."""
    return [
        (view, sorted(game.hands[1]))
        for game, seat, view, _ in decisions(games, seed)
        if seat == 0
        and view.stock_count > champion.EXACT_STOCK
        and len(view.tricks) >= 2
        and len(view.legal) > 1
    ]


def plays(games: int, seed: int) -> None:
    """Print the mean log-likelihood of esperto's plays under each kind (``--plays``)."""
    network = default_network()
    sums = {"lead": [0.0] * 5, "follow": [0.0] * 5}
    for _game, seat, view, action in decisions(games, seed):
        hand = list(view.hand)
        assert view.face_up is not None
        if len(hand) <= 1:
            continue
        card = action.card
        trump = view.face_up // 10
        legal, probs, _ = masked_policy(network, view)
        chance = float(probs[[a.code for a in legal].index(action.code)])
        net = (1.0 - EPSILON) * chance + EPSILON / len(hand)
        trick = [c for _, c in view.current_trick]
        seen = 1 << view.face_up
        for c in [c for t in view.tricks for _, c in t.plays] + trick + hand:
            seen |= 1 << c
        model = playmodel.probabilities(
            hand, trick, trump, ALL & ~seen, view.stock_count, playmodel.THETA
        )[hand.index(card)]
        pick = briscola.choose_card(hand, trick, seat, view.leader, 2, trump, None)
        rule = MATCH if pick == card else (1 - MATCH) / (len(hand) - 1)
        row = sums["follow" if trick else "lead"]
        row[0] += 1
        row[1] += math.log(net)
        row[2] += math.log(model)
        row[3] += math.log(rule)
        row[4] += math.log(0.5 * model + 0.5 * rule)
    for kind, row in sums.items():
        n = max(1.0, row[0])
        print(
            f"{kind}: {row[0]:.0f} plays; mean log-likelihood a play: network "
            f"{row[1] / n:.3f}, play model {row[2] / n:.3f}, rule-based {row[3] / n:.3f}, "
            f"half-half mix {row[4] / n:.3f}"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--seed", type=int, default=4990)
    parser.add_argument("--shares", default="0,0.25,0.5,1")
    parser.add_argument("--depth", type=int, default=champion.NET_DEPTH)
    parser.add_argument("--plays", action="store_true", help="esperto's plays (module doc)")
    args = parser.parse_args(argv)
    if args.plays:
        plays(args.games, args.seed)
        return
    shares = [float(s) for s in args.shares.split(",")]
    found = positions(args.games, args.seed)
    print(f"{len(found)} positions from {args.games} games, seed {args.seed}")
    loss = {s: 0.0 for s in [-1.0, *shares]}
    hand = dict.fromkeys(loss, 0.0)
    cells = 0
    spent = 0.0
    for view, real in found:
        rng = decision_rng(0, view.smazzata, view.version, 0)
        deals = [
            briscola.sample_world(view, rng) for _ in range(champion.WORLDS * champion.CANDIDATES)
        ]
        hands = [h[1] for h, _ in deals]
        model = OpponentModel(view, champion.INFERENCE_DEPTH)
        start = time.process_time()
        net = NetOpponent(view, args.depth)
        net.likelihoods(hands)
        spent += time.process_time() - start
        unseen = champion.unseen_cards(view)
        cells += len(unseen)
        for share in loss:
            if share < 0:
                weights = [1.0] * len(hands)
            else:
                weights = champion.likelihoods(model, hands, net, share)
            total = sum(weights)
            chance = dict.fromkeys(unseen, 1e-9)
            for h, w in zip(hands, weights, strict=True):
                for c in h:
                    chance[c] += w / total
            for c in unseen:
                p = min(max(chance[c], 1e-6), 1 - 1e-6)
                loss[share] -= math.log(p) if c in real else math.log(1 - p)
            hand[share] += sum(math.log(min(max(chance[c], 1e-6), 1.0)) for c in real)
    n = max(1, len(found))
    print(f"network likelihoods: {1000 * spent / n:.1f} ms of CPU a position (mean)")
    for share in loss:
        name = "uniform" if share < 0 else f"share {share:g}"
        print(
            f"{name:<10} cross-entropy a card {loss[share] / max(1, cells):.4f}, "
            f"log chance of the real hand's cards {hand[share] / n:+.3f}"
        )


if __name__ == "__main__":
    main()
