"""No import cycle inside a package: modules build on one another, one way.

A cycle — ``a`` imports ``b`` imports ``a`` — means neither module can be read,
tested or replaced alone, and it often hides behind an import that only type
checkers see (``if TYPE_CHECKING:``). So every import counts here: top-level,
inside functions, and type-only. :func:`import_graph.import_cycles` reads a
package's modules with :mod:`ast` (nothing is imported) and returns each cycle it
finds; point it at any package directory.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_server_layers import TYPE_ONLY_EDGES

import mcp_actors

from import_graph import cycles, import_cycles, import_edges, import_graph, imported_modules

PACKAGE = Path(mcp_actors.__file__).parent

#: Every package of ``mcp_actors`` (each directory with an ``__init__.py``).
PACKAGES = sorted(path.parent for path in PACKAGE.rglob("__init__.py"))

#: Type-only imports (``if TYPE_CHECKING:``) that still close a circle, by package
#: (relative to ``mcp_actors/``): a public attribute typed with the concrete class
#: that makes its owner. Remove an entry when its import goes; never add.
TYPE_ONLY_CYCLE_EDGES: dict[str, set[tuple[str, str]]] = {
    # held (and explained) by test_server_layers
    "server": {(f"mcp_actors.server.{a}", f"mcp_actors.server.{b}") for a, b in TYPE_ONLY_EDGES},
}


def test_runtime_has_no_import_cycle() -> None:
    assert import_cycles(PACKAGE / "runtime") == []


@pytest.mark.parametrize(
    "package_dir", PACKAGES, ids=lambda path: path.relative_to(PACKAGE.parent).as_posix()
)
def test_no_package_has_an_import_cycle_but_the_listed_type_only_imports(
    package_dir: Path,
) -> None:
    listed = TYPE_ONLY_CYCLE_EDGES.get(package_dir.relative_to(PACKAGE).as_posix(), set())
    edges = import_edges(package_dir)
    assert cycles(set(edges) - listed) == []
    not_type_only = {edge for edge in listed if edges.get(edge) is not True}
    assert not not_type_only, f"gone or imported at run time now: {sorted(not_type_only)}"
    rest = set(edges) - listed
    free = {edge for edge in listed if not cycles(rest | {edge})}
    assert not free, f"close no circle any more: drop {sorted(free)}"


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


def test_a_sibling_submodule_is_imported_from_it_and_a_name_from_the_package(
    tmp_path: Path,
) -> None:
    """``from . import b`` needs ``b`` (the package's ``__init__`` runs first anyway);
    ``from . import name`` needs the ``__init__`` that defines ``name``."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("from .a import name\n")
    (package / "a.py").write_text("from . import b\nname = 1\n")
    (package / "b.py").write_text("")
    assert import_cycles(package) == []
    (package / "b.py").write_text("from . import name\n")
    assert import_cycles(package) == [["pkg", "pkg.a", "pkg.b"]]


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
