"""Two weight files of the network player against each other in the duplicate arena.

    python -m train.compare --a data/new.npz --b game/players/net_weights.npz \\
        --deals 300 --seed 4760 --option game=briscola --option players=2

The candidate ``--a`` sits in one unit (a seat; a side in plain Briscola), ``--b`` in
the others, every deal once per unit, as in :mod:`game.arena` (which it runs, with a
player factory that loads each file as a ``rapido``): the figure is ``a``'s score a
smazzata against ``b``'s field, with its 95% interval over deals. Both play greedily
(temperature 0), so the figure is the difference of the two networks, luck cancelled.
"""

from __future__ import annotations

import argparse
import functools
from pathlib import Path

from game.arena import candidate_report, report, run
from game.options import TableOptions
from game.players import Player
from game.players.net import NetPlayer, Network, load_network
from game.simulate import parse_options


def make_player(networks: dict[str, Network], name: str, seed: int) -> Player:
    return NetPlayer(seed, networks[name], name=name)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--a", type=Path, required=True, help="the candidate's weights")
    parser.add_argument("--b", type=Path, required=True, help="the field's weights")
    parser.add_argument("--deals", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--option", action="append", default=[], help="name=value, repeatable")
    args = parser.parse_args(argv)
    a, b = "a:" + args.a.stem, "b:" + args.b.stem
    networks = {a: load_network(args.a.read_bytes()), b: load_network(args.b.read_bytes())}
    make = functools.partial(make_player, networks)
    options = TableOptions.model_validate(parse_options(args.option))
    stats = run(args.deals, args.seed, a, b, options=options, make=make)
    print(f"{a} vs {b}; {args.deals} deals, seed {args.seed}, options {args.option}")
    print(report(stats, [a, b]))
    print(candidate_report(stats, a, b, options, args.seed))


if __name__ == "__main__":
    main()
