"""No import circle anywhere in ``mcp_actors``: modules and layers build on one another, one way.

A circle — ``a`` imports ``b`` imports ``a`` — means neither module can be read,
tested or replaced alone, and it often hides behind an import that only type
checkers see (``if TYPE_CHECKING:``). So every import counts here: top-level,
inside functions, and type-only, with no exceptions listed. Where a module needs
the type of one that imports it, it types against a Protocol instead (the leaf
:mod:`mcp_actors.server.protocols`, ``context.SessionView``,
``server_session.SessionServer``, ``client.connection.Connection``).

Three views of the same graph: inside each package; across the whole package tree
(a circle ``server -> runtime -> server`` counts, and importing ``a.b.c`` counts as
importing ``a.b``'s ``__init__``); and folded to layers (the subpackages and
top-level modules), which must run one way too. :mod:`import_graph` reads the
modules with :mod:`ast` (nothing is imported).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import mcp_actors

from import_graph import (
    cycles,
    import_cycles,
    import_graph,
    imported_modules,
    layer_edges,
    tree_edges,
)

PACKAGE = Path(mcp_actors.__file__).parent

#: Every package of ``mcp_actors`` (each directory with an ``__init__.py``).
PACKAGES = sorted(path.parent for path in PACKAGE.rglob("__init__.py"))


@pytest.mark.parametrize(
    "package_dir", PACKAGES, ids=lambda path: path.relative_to(PACKAGE.parent).as_posix()
)
def test_no_package_has_an_import_cycle(package_dir: Path) -> None:
    assert import_cycles(package_dir) == []


def test_no_circle_across_the_packages() -> None:
    assert cycles(tree_edges(PACKAGE)) == []


def test_the_layers_run_one_way() -> None:
    layers = layer_edges(PACKAGE)
    assert ("mcp_actors.server", "mcp_actors.runtime") in layers  # the graph sees them
    assert cycles(layers) == []


def test_a_circle_across_packages_is_found(tmp_path: Path) -> None:
    """``pkg.server.a -> pkg.runtime.b -> pkg.server.c -> pkg.server.a`` is no circle inside
    either package, but one across them; and ``pkg.runtime.b`` importing
    ``pkg.server.c`` runs ``pkg.server``'s ``__init__``, which may close one too."""
    package = tmp_path / "pkg"
    for sub in ("server", "runtime"):
        (package / sub).mkdir(parents=True)
        (package / sub / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "server" / "a.py").write_text("from ..runtime import b\n")
    (package / "runtime" / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.server.c import C\n"
    )
    (package / "server" / "c.py").write_text("from .a import x\n")
    assert import_cycles(package / "server") == [] == import_cycles(package / "runtime")
    assert cycles(tree_edges(package)) == [["pkg.runtime.b", "pkg.server.a", "pkg.server.c"]]
    assert cycles(layer_edges(package)) == [["pkg.runtime", "pkg.server"]]
    (package / "server" / "c.py").write_text("")
    (package / "server" / "__init__.py").write_text("from .a import x\n")
    assert cycles(tree_edges(package)) == [["pkg.runtime.b", "pkg.server", "pkg.server.a"]]


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
