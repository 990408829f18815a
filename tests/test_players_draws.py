"""``game.players.draws`` draws what ``random.Random`` draws: the same permutations and
numbers from the same seed, and leaves the generator in the same state, compiled or not
(so a seed gives the computer players the same deals and decisions as the library's
``shuffle`` and ``randrange`` did)."""

from __future__ import annotations

import random
from types import ModuleType

import pytest

from game.players import draws
from tests.core.compiled import is_compiled, pure

MODULES = [pytest.param(draws, id="installed"), pytest.param(None, id="source")]


def _module(module: ModuleType | None) -> ModuleType:
    """The installed module (compiled where a compiler was), or its source."""
    return module if module is not None else pure(draws)


@pytest.mark.parametrize("module", MODULES)
def test_shuffle_gives_the_library_permutation_and_the_same_state(
    module: ModuleType | None,
) -> None:
    shuffle = _module(module).shuffle
    for seed in range(300):
        length = seed % 41
        ours, theirs = random.Random(seed), random.Random(seed)
        mine, library = list(range(length)), list(range(length))
        shuffle(ours, mine)
        theirs.shuffle(library)
        assert mine == library
        assert ours.getstate() == theirs.getstate()


@pytest.mark.parametrize("module", MODULES)
def test_below_gives_randrange_and_leaves_the_same_state(module: ModuleType | None) -> None:
    below = _module(module).below
    ours, theirs = random.Random(5), random.Random(5)
    for n in [*range(1, 200), 2**31 - 1, 2**31, 2**40 + 3, 3**50]:
        for _ in range(5):
            assert below(ours, n) == theirs.randrange(n)
    assert ours.getstate() == theirs.getstate()
    with pytest.raises(ValueError):
        below(ours, 0)


def test_the_installed_module_is_compiled_where_the_hot_loop_is() -> None:
    """Compiled with the modules that call it, or none is (a pure-Python install)."""
    from game.players import sampling

    assert is_compiled(draws) == is_compiled(sampling)
