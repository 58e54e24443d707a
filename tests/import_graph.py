"""Who imports whom, and who reaches into whose private names, read from source.

The architecture tests hold the package's shape by reading its modules with
:mod:`ast` (nothing is imported, so nothing runs). This module is the one place
that reading is done:

- :func:`module_name` names a file from its top-level package (the highest
  directory up that has an ``__init__.py``), as ``import`` would;
- :func:`file_imports` lists every import statement of a file, wherever it is (module
  level, inside a function, under ``if TYPE_CHECKING:``), resolved to absolute
  names, each flagged *type-only* when only type checkers see it;
- :func:`import_edges` / :func:`import_graph` give the imports among the modules
  of one package directory, and :func:`cycles` / :func:`import_cycles` the
  circles in them (Tarjan's strongly connected components, in a stable order);
- :func:`tree_edges` gives the imports among every module of a package and its
  subpackages (so a circle through several of them shows), and :func:`layer_edges`
  the same folded to the package's layers (its subpackages and top-level modules);
- :func:`private_access` finds reach-ins: ``x._name`` where ``x`` is not
  ``self``/``cls``, and ``from m import _name``.

A helper for the tests, not a test file: they import it as ``from import_graph
import ...`` (``tests/`` is on ``sys.path``, as for ``conftest``).
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Import:
    """One import of a module: ``import module`` or ``from module import names``."""

    line: int
    #: The absolute dotted name imported (``from`` imports: the module imported from).
    module: str
    #: The names a ``from`` import takes (empty for ``import module``).
    names: tuple[str, ...]
    #: Whether only type checkers see it (it sits under ``if TYPE_CHECKING:``).
    type_only: bool

    def targets(self) -> set[str]:
        """The modules this may load: ``from x import y`` counts ``x`` and ``x.y``,
        since ``y`` may be a submodule."""
        return {self.module} | {f"{self.module}.{name}" for name in self.names}

    def needs(self, modules: Collection[str]) -> set[str]:
        """Which of ``modules`` this import runs: ``from x import y`` runs ``x.y`` when that
        is one of them, else ``x``. So ``from . import wire`` needs ``wire``, not the
        package's ``__init__`` (which importing a submodule runs first anyway), while
        ``from . import run_bench`` takes a name the ``__init__`` must have defined."""
        if not self.names:
            return {self.module} & set(modules)
        submodules = {f"{self.module}.{name}" for name in self.names}
        return {
            submodule if submodule in modules else self.module for submodule in submodules
        } & set(modules)


def module_name(path: Path, package_dir: Path) -> str:
    """The dotted name of the module at ``path`` in the package at ``package_dir``: from
    its top-level package (the highest directory up with an ``__init__.py``)."""
    root = package_dir.parent
    while (root / "__init__.py").exists():
        root = root.parent
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_type_checking(test: ast.expr) -> bool:
    """Whether an ``if`` tests ``TYPE_CHECKING`` (or ``typing.TYPE_CHECKING``)."""
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def import_statements(
    tree: ast.AST, type_only: bool = False
) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import statement under ``tree``, and whether it is type-only."""
    for node in ast.iter_child_nodes(tree):
        yield from _statements_in(node, type_only)


def _statements_in(
    node: ast.AST, type_only: bool
) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    if isinstance(node, ast.Import | ast.ImportFrom):
        yield node, type_only
    elif isinstance(node, ast.If) and is_type_checking(node.test):
        for child in node.body:
            yield from _statements_in(child, True)
        for child in node.orelse:
            yield from _statements_in(child, type_only)
    else:
        yield from import_statements(node, type_only)


def file_imports(path: Path, package_dir: Path | None = None) -> list[Import]:
    """Every import of the file at ``path`` (in the package at ``package_dir``, by default
    its own directory), relative ones resolved to absolute names, in source order."""
    name = module_name(path, package_dir or path.parent)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node, type_only in import_statements(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [Import(node.lineno, alias.name, (), type_only) for alias in node.names]
        else:
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join([*base, node.module] if node.module else base)
            else:
                source = node.module or ""
            names = tuple(alias.name for alias in node.names)
            found.append(Import(node.lineno, source, names, type_only))
    return sorted(found, key=lambda found_import: found_import.line)


def imported_modules(path: Path, package_dir: Path) -> set[str]:
    """Every module ``path`` may load by its imports (see :meth:`Import.targets`)."""
    return {target for found in file_imports(path, package_dir) for target in found.targets()}


def package_modules(package_dir: Path) -> dict[str, Path]:
    """The modules of a package (the ``*.py`` directly in ``package_dir``), by name."""
    return {module_name(path, package_dir): path for path in sorted(package_dir.glob("*.py"))}


def import_edges(package_dir: Path) -> dict[tuple[str, str], bool]:
    """(importer, imported) among the package's modules -> whether every such import is
    type-only (see :meth:`Import.needs` for which modules an import counts)."""
    modules = package_modules(package_dir)
    edges: dict[tuple[str, str], bool] = {}
    for name, path in modules.items():
        for found in file_imports(path, package_dir):
            for target in found.needs(modules.keys()) - {name}:
                edges[name, target] = edges.get((name, target), True) and found.type_only
    return edges


def import_graph(package_dir: Path) -> dict[str, set[str]]:
    """Which modules of the package each of its modules imports (type-only or not)."""
    graph: dict[str, set[str]] = {name: set() for name in package_modules(package_dir)}
    for source, target in import_edges(package_dir):
        graph[source].add(target)
    return graph


def cycles(edges: Iterable[tuple[str, str]]) -> list[list[str]]:
    """The circles of a directed graph given by its edges: one sorted list of nodes per
    strongly connected group of more than one node (Tarjan's algorithm), the groups
    sorted; empty when the edges flow one way."""
    graph: dict[str, list[str]] = {}
    for source, target in sorted(set(edges)):
        graph.setdefault(source, []).append(target)
        graph.setdefault(target, [])
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in graph[node]:
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def import_cycles(package_dir: Path) -> list[list[str]]:
    """The import cycles among the modules of the package at ``package_dir``, counting
    every import (see :func:`cycles`)."""
    return cycles(import_edges(package_dir))


def tree_modules(package_dir: Path) -> dict[str, Path]:
    """Every module of the package at ``package_dir`` and of its subpackages, by name."""
    return {module_name(path, package_dir): path for path in sorted(package_dir.rglob("*.py"))}


def tree_edges(package_dir: Path) -> dict[tuple[str, str], bool]:
    """(importer, imported) among every module of the package and its subpackages ->
    whether every such import is type-only.

    Importing ``a.b.c`` runs the ``__init__`` of ``a.b`` first, so that counts as an
    import of ``a.b`` too, unless the importer is inside ``a.b`` (its ``__init__`` has
    run already by then).
    """
    modules = tree_modules(package_dir)
    edges: dict[tuple[str, str], bool] = {}

    def add(source: str, target: str, type_only: bool) -> None:
        edges[source, target] = edges.get((source, target), True) and type_only

    for name, path in modules.items():
        for found in file_imports(path, package_dir):
            for target in found.needs(modules.keys()) - {name}:
                add(name, target, found.type_only)
                parts = target.split(".")
                for depth in range(1, len(parts)):
                    parent = ".".join(parts[:depth])
                    if parent in modules and not name.startswith(parent + "."):
                        add(name, parent, found.type_only)
    return {edge: type_only for edge, type_only in edges.items() if edge[0] != edge[1]}


def layer_of(module: str, package: str) -> str:
    """The layer of ``module`` in ``package``: the subpackage (or top-level module) directly
    under it that holds it (``pkg.server.app`` -> ``pkg.server``); the package's own
    ``__init__`` is a layer of its own."""
    parts = module.split(".")
    depth = len(package.split("."))
    return ".".join(parts[: depth + 1])


def layer_edges(package_dir: Path) -> set[tuple[str, str]]:
    """Which layer of the package imports which (see :func:`layer_of`), from
    :func:`tree_edges`; the layers run one way when this has no circle."""
    package = module_name(package_dir / "__init__.py", package_dir)
    return {
        (layer_of(source, package), layer_of(target, package))
        for source, target in tree_edges(package_dir)
        if layer_of(source, package) != layer_of(target, package)
    }


def is_private(name: str) -> bool:
    """``_name`` is private; ``__name__`` (a dunder) is not."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_imports(path: Path) -> list[tuple[int, str | None, str]]:
    """Each ``from m import _name`` in the file at ``path``: line, ``m`` as written, name."""
    return [
        (node.lineno, node.module, alias.name)
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if is_private(alias.name)
    ]


def private_access(path: Path) -> list[str]:
    """``x._name`` (``x`` not ``self``/``cls``) and ``from m import _name``, by line."""
    found = [
        (node.lineno, ast.unparse(node))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute)
        and is_private(node.attr)
        and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
    ]
    found += [
        (line, f"from {module} import {name}") for line, module, name in private_imports(path)
    ]
    return [f"{line}: {text}" for line, text in sorted(found, key=lambda item: item[0])]
