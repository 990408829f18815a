"""The storage package's modules import one way: no module imports, directly or through
others, one that imports it back (imports inside functions count too)."""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "storage"


def _imports(path: Path) -> set[str]:
    """The storage modules ``path`` imports, anywhere in it."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1:  # from .x import y / from . import x
                if node.module:
                    found.add(node.module.split(".")[0])
                else:
                    found |= {a.name for a in node.names}
            elif node.module and node.module.startswith("storage."):
                found.add(node.module.split(".")[1])
            elif node.module == "storage":
                found |= {a.name for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[1] for a in node.names if a.name.startswith("storage.")}
    modules = {p.stem for p in PACKAGE.glob("*.py")}
    return found & modules - {path.stem}


def test_storage_imports_run_one_way() -> None:
    graph = {p.stem: _imports(p) for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    try:
        order = list(TopologicalSorter(graph).static_order())
    except CycleError as e:
        raise AssertionError(f"storage modules import each other: {e.args[1]}") from None
    # the interface is below its backends and the migrations; the factory above them all
    assert order.index("db") < order.index("postgres") < order.index("connect")
    assert order.index("sqlite") < order.index("connect")
    assert order.index("migrations") < order.index("connect")
    assert "connect" not in graph["db"] | graph["migrations"] | graph["repo"]
