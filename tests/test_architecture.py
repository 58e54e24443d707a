"""The layering contract of DESIGN.md, held by a test: imports flow one way.

protocol/ imports nothing else of ours; transports/ see protocol/ only; runtime/
sees transports only through ``transports.abc``; and ``import mcp_actors`` loads no
heavy transport dependency.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import mcp_actors

from import_graph import file_imports

PACKAGE = Path(mcp_actors.__file__).parent


def our_imports(module: Path) -> set[str]:
    """The ``mcp_actors`` modules a file imports (``from`` imports: the module imported
    from), as dotted names."""
    return {found.module for found in file_imports(module) if found.module.startswith("mcp_actors")}


def imports_of_layer(layer: str, *, subpackages: bool = False) -> dict[str, set[str]]:
    """The imports of each module of ``layer`` (and of its subpackages' if asked)."""
    folder = PACKAGE / layer
    paths = folder.rglob("*.py") if subpackages else folder.glob("*.py")
    return {str(path.relative_to(PACKAGE)): our_imports(path) for path in paths}


def test_protocol_imports_nothing_else_of_ours() -> None:
    for module, imports in imports_of_layer("protocol").items():
        outside = {name for name in imports if not name.startswith("mcp_actors.protocol")}
        assert not outside, f"protocol/{module} imports {outside}"


def test_transports_see_only_the_protocol() -> None:
    allowed = ("mcp_actors.protocol", "mcp_actors.transports")
    for module, imports in imports_of_layer("transports", subpackages=True).items():
        outside = {name for name in imports if not name.startswith(allowed)}
        assert not outside, f"transports/{module} imports {outside}"


def test_runtime_sees_transports_only_through_their_interface() -> None:
    for module, imports in imports_of_layer("runtime").items():
        transports = {name for name in imports if name.startswith("mcp_actors.transports")}
        assert transports <= {"mcp_actors.transports.abc"}, f"runtime/{module}: {transports}"
        upward = {
            name for name in imports if name.startswith(("mcp_actors.server", "mcp_actors.client"))
        }
        assert not upward, f"runtime/{module} imports {upward}"


def test_shared_state_sits_beside_the_runtime() -> None:
    """shared/ implements runtime and transport interfaces on Redis: it may see
    protocol/, runtime/, transports/ and the settings parser, never server/ or client/;
    only server/ (serving) uses it."""
    allowed = (
        "mcp_actors.protocol", "mcp_actors.runtime", "mcp_actors.transports",
        "mcp_actors.config", "mcp_actors.shared",
    )  # fmt: skip
    for module, imports in imports_of_layer("shared").items():
        outside = {name for name in imports if not name.startswith(allowed)}
        assert not outside, f"shared/{module} imports {outside}"
    for layer in ("protocol", "runtime", "transports", "client"):
        for module, imports in imports_of_layer(layer).items():
            shared = {name for name in imports if name.startswith("mcp_actors.shared")}
            assert not shared, f"{layer}/{module} imports {shared}"


def test_the_resource_server_sees_the_protocol_shared_auth_and_the_hook_contract() -> None:
    """``auth/server/`` (the OAuth resource server) may import the shared ``auth/`` modules,
    ``protocol/`` and the one transport module naming the HTTP auth hook; nothing of the
    runtime, the server or the client (they call it, not the other way round)."""
    allowed = ("mcp_actors.protocol", "mcp_actors.transports.http.auth", "mcp_actors.auth")
    for module, imports in imports_of_layer("auth/server").items():
        outside = {name for name in imports if not name.startswith(allowed)}
        assert not outside, f"auth/server/{module} imports {outside}"
        client = {name for name in imports if name.startswith("mcp_actors.auth.client")}
        assert not client, f"auth/server/{module} imports {client}"


def test_importing_the_package_loads_no_heavy_transport() -> None:
    heavy = (
        "hypercorn",
        "h11",
        "httpx",
        "trio_websocket",
        "mcp",
        "pytest",
        "jsonschema",
        "asyncio",
        "opentelemetry",
        "redis",
    )
    probe = f"import sys, mcp_actors; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    output = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert output.stdout.strip() == "[]"


def test_network_transports_are_exported_lazily() -> None:
    """``serve_http`` loads the lean front end (httptools) when first named; hypercorn only
    loads when it is the front end that serves."""
    probe = (
        "import sys, mcp_actors; before = 'httptools' in sys.modules; "
        "from mcp_actors import serve_http, HttpConfig, open_streamable_http; "
        "print(before, 'httptools' in sys.modules, 'hypercorn' in sys.modules, "
        "serve_http.__module__)"
    )
    output = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert output.stdout.split() == ["False", "True", "False", "mcp_actors.server.serve_http"]


def test_the_trio_thread_and_held_blocks_know_nothing_of_mcp() -> None:
    """The thread machinery under the asyncio and sync fronts is generic."""
    assert our_imports(PACKAGE / "trio_thread.py") == set()
    assert our_imports(PACKAGE / "held.py") == {"mcp_actors.trio_thread"}


def test_shipped_middleware_sees_only_the_runtime_and_the_protocol() -> None:
    allowed = ("mcp_actors.protocol", "mcp_actors.runtime", "mcp_actors.middleware")
    for module, imports in imports_of_layer("middleware").items():
        outside = {name for name in imports if not name.startswith(allowed)}
        assert not outside, f"middleware/{module} imports {outside}"


def test_the_server_knows_nothing_of_clients_and_gateways() -> None:
    """A gateway is a server built on a client: it sits above both."""
    for module, imports in imports_of_layer("server").items():
        upward = {
            name
            for name in imports
            if name.startswith(("mcp_actors.client", "mcp_actors.gateway", "mcp_actors.otel"))
        }
        assert not upward, f"server/{module} imports {upward}"


def test_only_the_otel_module_imports_opentelemetry() -> None:
    for path in PACKAGE.rglob("*.py"):
        if path.name == "otel.py" and path.parent == PACKAGE:
            continue
        text = path.read_text()
        assert "import opentelemetry" not in text and "from opentelemetry" not in text, path


def test_auth_shared_modules_import_nothing_else_of_ours() -> None:
    """``mcp_actors/auth/*.py`` (what a protected server and its client share) is sans-IO
    and self-contained, like protocol/; its client half (auth/client/) may see only
    auth/ itself; and no transport imports auth/ (they take an ``httpx.Auth``)."""
    for module, imports in imports_of_layer("auth").items():
        outside = {name for name in imports if not name.startswith("mcp_actors.auth")}
        assert not outside, f"auth/{module} imports {outside}"
        below = {name for name in imports if name.startswith("mcp_actors.auth.")}
        assert not {name for name in below if name.startswith("mcp_actors.auth.client")}, module
    for module, imports in imports_of_layer("auth/client").items():
        outside = {name for name in imports if not name.startswith("mcp_actors.auth")}
        assert not outside, f"auth/client/{module} imports {outside}"
    for module, imports in imports_of_layer("transports", subpackages=True).items():
        auth = {name for name in imports if name.startswith("mcp_actors.auth")}
        assert not auth, f"transports/{module} imports {auth}"
