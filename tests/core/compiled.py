"""The computer players' compiled modules (setup.py: mypyc) and their sources.

``pip install -e .`` compiles the modules of :data:`COMPILED` into C extensions that
shadow their ``.py`` files. A compiled module calls the other compiled modules natively,
so patching one of their names from a test changes nothing inside them. The tests that
must watch or replace what the search does inside its rollouts run the *sources*
instead: :func:`pure` imports a module's source under another name, and
:func:`use_sources` points the (plain Python) search players at them.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from game.players import expert, heuristic, inference, sampling, search, sim

#: This source tree (absolute: a test may change directory).
ROOT = Path(__file__).resolve().parent.parent.parent


def _compiled_by_setup() -> tuple[ModuleType, ...]:
    """The modules of setup.py's ``COMPILED`` list (read, not run: one list of what
    mypyc compiles, so that a module added there is checked here too)."""
    tree = ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))
    paths = next(ast.literal_eval(node.value) for node in tree.body
                 if isinstance(node, ast.Assign)
                 and any(isinstance(t, ast.Name) and t.id == "COMPILED" for t in node.targets))
    return tuple(importlib.import_module(path.removesuffix(".py").replace("/", "."))
                 for path in paths)


COMPILED = _compiled_by_setup()


def is_compiled(module: ModuleType) -> bool:
    return not (module.__file__ or "").endswith(".py")


def source_of(module: ModuleType) -> Path:
    return ROOT / (module.__name__.replace(".", "/") + ".py")


def extension_of(module: ModuleType) -> Path:
    return source_of(module).parent / Path(module.__file__ or "").name


needs_compiled = pytest.mark.skipif(
    not all(map(is_compiled, COMPILED)), reason="a pure-Python install: nothing compiled"
)


def pure(module: ModuleType) -> ModuleType:
    """The module's source, imported as plain Python under another name; what it imports
    from the other compiled modules is their source too."""
    name = "pure_" + module.__name__.replace(".", "_")
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, source_of(module))
    assert spec is not None and spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[name] = loaded
    spec.loader.exec_module(loaded)
    assert loaded.__file__ and loaded.__file__.endswith(".py")
    for other in COMPILED:
        if other is module:
            continue
        for attribute, value in list(vars(loaded).items()):
            if callable(value) and getattr(value, "__module__", None) == other.__name__:
                setattr(loaded, attribute, getattr(pure(other), attribute))
    return loaded


def use_sources(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``forte``'s and ``esperto``'s play decisions run on the sources of the
    compiled modules: the sampler, the worlds and their rollouts, the inference and the
    tie-break. Patch the sources' names (``pure(sim).choose_card``…) to watch them."""
    source_sampling, source_inference = pure(sampling), pure(inference)
    monkeypatch.setattr(search, "Sampler", source_sampling.Sampler)
    monkeypatch.setattr(search, "World", pure(sim).World)
    monkeypatch.setattr(search, "heuristic_card", pure(heuristic).heuristic_card)
    monkeypatch.setattr(expert, "Inference", source_inference.Inference)
    monkeypatch.setattr(expert, "weighted_deals", source_inference.weighted_deals)
