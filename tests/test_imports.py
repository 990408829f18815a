"""Imports run one way in the whole tree: no two modules of the project depend on each
other, directly or through others (every package: game, bot, storage, sandbox, bench, train,
tests).

Every import statement counts, wherever it is: at the top, inside a function (a function
that imports at call time hides the circle from Python's import machinery, not from the
design), in ``try``/``if`` blocks, and under ``if TYPE_CHECKING:`` (a type that names a
module is a dependency on it: the type checker reads both together, and the two modules
cannot be understood or moved apart). ``from package import name`` depends on the module
``package.name`` when there is one, else on the package's ``__init__``.

Not counted: the implicit import of the parent packages (``import a.b.c`` first runs
``a/__init__`` and ``a/b/__init__``). Python initializes a package before its modules
whatever they import, so a module's use of its own package's ``__init__`` is only a circle
when the module names the package itself (``from a.b import x`` inside ``a/b/``), which is
counted.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The packages the tree must at least have (a package that vanished from the scan, or a
#: scan that finds nothing, must not pass as "no cycles").
PACKAGES = {"game", "bot", "storage", "sandbox", "bench", "train", "tests"}
#: Circles known and accepted: none.
KNOWN_CYCLES: tuple[frozenset[str], ...] = ()


def project_modules(root: Path) -> dict[str, tuple[Path, bool]]:
    """Every module of the top-level packages under ``root``: dotted name -> (file, is a
    package's ``__init__``)."""
    modules: dict[str, tuple[Path, bool]] = {}
    for init in sorted(root.glob("*/__init__.py")):
        for path in init.parent.rglob("*.py"):
            parts = list(path.relative_to(root).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            modules[".".join(parts)] = (path, is_package)
    return modules


def import_graph(modules: dict[str, tuple[Path, bool]]) -> dict[str, set[str]]:
    """Module -> the project modules it imports (every import statement in the file)."""

    def known(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, (path, is_package) in modules.items():
        targets: set[str | None] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets |= {known(alias.name) for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from the module's own package, then up
                    package = module.split(".") if is_package else module.split(".")[:-1]
                    package = package[: len(package) - node.level + 1]
                    base = ".".join([*package, *([node.module] if node.module else [])])
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    targets.add(full if full in modules else known(base))
        graph[module] = {t for t in targets if t is not None and t != module}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The circles: each set of modules that all reach one another (Tarjan's strongly
    connected components with more than one module)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[frozenset[str]] = []

    def visit(start: str) -> None:  # iterative: no recursion limit on a deep tree
        work: list[tuple[str, Iterable[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        while work:
            node, children = work[-1]
            child = next(iter(children), None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def test_imports_run_one_way() -> None:
    modules = project_modules(ROOT)
    assert {name.split(".")[0] for name in modules} >= PACKAGES
    graph = import_graph(modules)
    assert len(graph) > 120 and sum(map(len, graph.values())) > 400  # the scan found them
    found = cycles(graph)
    unknown = [sorted(c) for c in found if not any(c <= known for known in KNOWN_CYCLES)]
    assert not unknown, f"modules that import one another: {unknown}"
    gone = [sorted(k) for k in KNOWN_CYCLES if not any(c <= k for c in found)]
    assert not gone, f"no circle any more: remove it from KNOWN_CYCLES: {gone}"


def test_every_kind_of_import_makes_a_circle(tmp_path: Path) -> None:
    """The scan sees a circle through a function's import, a TYPE_CHECKING import, a
    relative import and ``from package import module``; and a one-way tree has none."""
    files = {
        "p/__init__.py": "",
        "p/a.py": "def f():\n    from p.b import g\n",
        "p/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .c import C\n",
        "p/c.py": "from p import a\nimport os\n",
        "q/__init__.py": "from q.x import y\n",
        "q/x.py": "import p.a\ny = 1\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    graph = import_graph(project_modules(tmp_path))
    assert graph["p.a"] == {"p.b"} and graph["p.b"] == {"p.c"} and graph["p.c"] == {"p.a"}
    assert graph["q"] == {"q.x"} and graph["q.x"] == {"p.a"}
    assert cycles(graph) == [frozenset({"p.a", "p.b", "p.c"})]
    (tmp_path / "p/a.py").write_text("import os\n")
    assert cycles(import_graph(project_modules(tmp_path))) == []
