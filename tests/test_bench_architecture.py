"""The bench's modules import one way, and only each other's public names.

``bench.http`` builds on ``bench.wire``, so ``bench.wire`` must not reach back for
the HTTP wire (``bench.targets`` picks a wire for a target); and no module imports
an underscored name from another, bench or not.
"""

from __future__ import annotations

import ast
from pathlib import Path

from test_architecture import PACKAGE, our_imports

BENCH = PACKAGE / "bench"


def _private_imports(module: Path) -> list[str]:
    return [
        f"{node.module}.{alias.name}"
        for node in ast.walk(ast.parse(module.read_text()))
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.name.startswith("_")
    ]


def test_the_bench_modules_import_no_private_names() -> None:
    found = {path.name: _private_imports(path) for path in BENCH.glob("*.py")}
    assert {name: names for name, names in found.items() if names} == {}


def test_the_bench_modules_import_each_other_without_a_cycle() -> None:
    graph = {
        f"mcp_actors.bench.{path.stem}": {
            name for name in our_imports(path) if name.startswith("mcp_actors.bench.")
        }
        for path in BENCH.glob("*.py")
        if path.stem != "__init__"
    }

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for name in graph.get(start, set()) - seen:
            seen.add(name)
            if name == goal or reaches(name, goal, seen):
                return True
        return False

    cycles = sorted(module for module in graph if reaches(module, module, set()))
    assert cycles == []
