"""No import cycle inside a package: modules build on one another, one way.

A cycle — ``a`` imports ``b`` imports ``a`` — means neither module can be read,
tested or replaced alone, and it often hides behind an import that only type
checkers see (``if TYPE_CHECKING:``). So every import counts here: top-level,
inside functions, and type-only. :func:`import_cycles` reads a package's modules
with :mod:`ast` (nothing is imported) and returns each cycle it finds; point it at
any package directory.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import mcp_actors

PACKAGE = Path(mcp_actors.__file__).parent


def module_name(path: Path, package_dir: Path) -> str:
    """The dotted name of the module at ``path`` in the package at ``package_dir``: from
    its top-level package (the highest directory up with an ``__init__.py``)."""
    root = package_dir.parent
    while (root / "__init__.py").exists():
        root = root.parent
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, package_dir: Path) -> set[str]:
    """Every module ``path`` imports (absolute names; ``from x import y`` counts both
    ``x`` and ``x.y``, since ``y`` may be a submodule), wherever the import statement is."""
    name = module_name(path, package_dir)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join([*base, node.module] if node.module else base)
            else:
                source = node.module or ""
            found.add(source)
            found |= {f"{source}.{alias.name}" for alias in node.names}
    return found


def import_graph(package_dir: Path) -> dict[str, set[str]]:
    """Which modules of the package (the ``*.py`` directly in ``package_dir``) each imports."""
    paths = sorted(package_dir.glob("*.py"))
    modules = {module_name(path, package_dir): path for path in paths}
    return {
        name: {target for target in imported_modules(path, package_dir) if target in modules}
        - {name}
        for name, path in modules.items()
    }


def import_cycles(package_dir: Path) -> list[list[str]]:
    """The import cycles among the modules of the package at ``package_dir``: one list of
    module names per strongly connected group of more than one module (Tarjan's
    algorithm), each sorted; empty when imports flow one way."""
    graph = import_graph(package_dir)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in sorted(graph[module]):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                cycles.append(sorted(group))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(cycles)


def test_runtime_has_no_import_cycle() -> None:
    assert import_cycles(PACKAGE / "runtime") == []


def test_a_subpackage_s_modules_are_named_from_the_top_package() -> None:
    graph = import_graph(PACKAGE / "runtime")
    assert "mcp_actors.runtime.config" in graph["mcp_actors.runtime.session"]


def test_a_type_only_import_closes_a_cycle(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from . import b\n")
    (package / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .c import C\n"
    )
    (package / "c.py").write_text("def f():\n    from pkg.a import x\n")  # absolute
    (package / "d.py").write_text("from .a import b\nimport pkg.c\n")
    assert import_cycles(package) == [["pkg.a", "pkg.b", "pkg.c"]]


@pytest.mark.parametrize(
    ("source", "imports"),
    [
        ("from . import b", {"pkg", "pkg.b"}),
        ("from .b import name", {"pkg.b", "pkg.b.name"}),
        ("import pkg.b as other", {"pkg.b"}),
    ],
)
def test_imports_are_resolved_to_absolute_names(
    tmp_path: Path, source: str, imports: set[str]
) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "a.py").write_text(source + "\n")
    assert imported_modules(package / "a.py", package) == imports
