"""Compiles the computer players' hot loop with mypyc, when it can; pure Python otherwise.

Everything else about the package is in pyproject.toml. ``game/players/policy.py`` (the
rollout policy), ``sim.py`` (the rollouts' simulator), ``sampling.py`` and
``inference.py`` (the deals sampled and weighted), ``bidding.py`` and ``heuristic.py``
(the hand model the inference reads the auction with), ``game/tricks.py`` (who takes
a trick, asked in every rollout), ``briscola.py`` and
``endgame.py`` (plain Briscola's rollouts and exact endgames), ``playmodel.py`` and
``opponent.py`` (two-player ``campione``'s opponent model) are compiled by mypyc into C
extensions with the same behaviour (tests/test_players_compiled.py checks each compiled
module against its source). The compiled modules call one another natively. The
extensions are optional: without a C compiler, or with BRISCOLA_PURE_PYTHON=1, the
package installs as plain Python and plays the same moves, more slowly."""

from __future__ import annotations

import os

from setuptools import Extension, setup

#: The modules mypyc compiles (pure, fully typed, hot). The modules they import are
#: read for their types only, and the build does not need the package's dependencies.
COMPILED = [
    "game/players/policy.py",
    "game/players/bidding.py",
    "game/players/heuristic.py",
    "game/players/sim.py",
    "game/players/sampling.py",
    "game/players/inference.py",
    "game/players/briscola.py",
    "game/players/endgame.py",
    "game/players/playmodel.py",
    "game/players/opponent.py",
    "game/players/draws.py",
    "game/tricks.py",
]
MYPY_FLAGS = ["--follow-imports=silent", "--ignore-missing-imports"]


def compiled_extensions() -> list[Extension]:
    if os.environ.get("BRISCOLA_PURE_PYTHON"):
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        return []
    try:
        extensions = mypycify(
            [*MYPY_FLAGS, *COMPILED], opt_level="3", group_name="game._compiled"
        )
    except (Exception, SystemExit) as error:  # mypyc refuses: the pure-Python module
        print(f"mypyc: not compiling ({error!r}); the package stays pure Python")
        return []
    for extension in extensions:
        extension.optional = True  # no compiler: the pure-Python module is used
    return extensions


setup(ext_modules=compiled_extensions())
