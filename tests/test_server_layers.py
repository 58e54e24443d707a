"""The server package's shape, held by tests that read its source (``ast``), not run it.

- Imports among ``mcp_actors/server/`` modules run one way: no circle, counting every
  import (at module level, inside functions, and under ``if TYPE_CHECKING:``). The
  hub's public attributes are typed against Protocols (:mod:`~mcp_actors.server.protocols`,
  ``context.SessionView``, ``server_session.SessionServer``), not the classes that
  import their helpers.
- No module of ``mcp_actors/`` reaches into another object's private names (``x._name``
  where ``x`` is not ``self``/``cls``) or imports another module's: it asks for a
  public method instead.
- ``server/app.py`` stays a facade (at most 500 lines), no server module over 600.
"""

from __future__ import annotations

from pathlib import Path

import mcp_actors

from import_graph import cycles, import_edges, private_access

PACKAGE = Path(mcp_actors.__file__).parent
SERVER = PACKAGE / "server"


def short(name: str) -> str:
    """``mcp_actors.server.app`` -> ``app``."""
    return name.removeprefix("mcp_actors.server.")


def server_modules() -> dict[str, Path]:
    return {path.stem: path for path in SERVER.glob("*.py") if path.name != "__init__.py"}


def server_edges() -> dict[tuple[str, str], bool]:
    """(importer, imported) among server modules -> whether every such import is type-only."""
    return {
        (short(source), short(target)): type_only
        for (source, target), type_only in import_edges(SERVER).items()
        if "mcp_actors.server" not in (source, target)  # the package's __init__
    }


def test_the_graph_sees_every_kind_of_import() -> None:
    edges = server_edges()
    assert edges["app", "registry"] is False  # module level
    assert edges["app", "hosting"] is False  # inside a function (Server.run)
    assert edges["task_methods", "server_session"] is True  # under TYPE_CHECKING only
    assert cycles({("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")}) == [["a", "b", "c"]]


def test_no_import_circle_not_even_through_type_only_imports() -> None:
    edges = server_edges()
    assert cycles(set(edges)) == []
    # the hub's own back-references are gone, not merely type-only
    assert ("context", "server_session") not in edges
    assert ("server_session", "app") not in edges


def test_the_protocols_are_a_leaf() -> None:
    """What helpers type against imports nothing else of the server package."""
    assert "protocols" in server_modules()
    assert {target for source, target in server_edges() if source == "protocols"} == set()


def test_hosting_is_not_imported_by_the_server_at_module_level() -> None:
    """``Server.run`` reaches the hosting modules only when called; they see the server
    through :class:`~mcp_actors.server.protocols.HostedServer`."""
    edges = server_edges()
    hosting = {"hosting", "serve", "serve_http", "serve_websocket", "workers"}
    for module in hosting:
        assert "app" not in {target for source, target in edges if source == module}, module
        assert (module, "server_session") not in edges


def test_the_private_access_check_finds_reach_ins(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from .x import _hidden, shown\n"
        "def f(self, other):\n"
        "    return self._own, other._theirs, cls._also_own, other.__class__\n"
    )
    assert private_access(sample) == ["1: from x import _hidden", "3: other._theirs"]


def test_no_private_reach_ins_anywhere_in_the_package() -> None:
    found = {
        path.relative_to(PACKAGE).as_posix(): access
        for path in sorted(PACKAGE.rglob("*.py"))
        if (access := private_access(path))
    }
    assert found == {}


def test_the_server_modules_stay_small() -> None:
    lines = {name: len(path.read_text().splitlines()) for name, path in server_modules().items()}
    assert lines["app"] <= 500
    assert {name: count for name, count in lines.items() if count > 600} == {}
