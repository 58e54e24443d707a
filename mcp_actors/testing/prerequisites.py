"""What the plugin's fixtures need, checked before any test runs.

``mcp_client``, ``mcp_wire`` and ``mcp_connection`` are Trio fixtures: they need
the ``testing`` extra (pytest-trio runs them, jsonschema validates the wire) and a
test run by pytest-trio, which is an ``async def`` test under ``trio_mode = true`` (or
marked ``@pytest.mark.trio``). Without that, pytest says only "requested an async
fixture ... with no plugin or hook that handled it", and then fails the following
tests with its own internal AssertionErrors. :func:`check_items` looks at the collected
tests instead and stops the run with one :class:`pytest.UsageError` saying what to
add. A project whose tests do not use these fixtures is not looked at: the plugin is
loaded into every pytest run of an environment where mcp-actors is installed.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Sequence

import pytest

#: The plugin's Trio fixtures, in the order a message names the one a test uses.
TRIO_FIXTURES = ("mcp_client", "mcp_wire", "mcp_connection")
#: The ``testing`` extra's packages the fixtures import: module name, package name.
REQUIRED = (("pytest_trio", "pytest-trio"), ("jsonschema", "jsonschema"))
_EXTRA = "pip install 'mcp-actors[testing]'"
_TRIO_MODE = (
    "add 'trio_mode = true' to your pytest configuration ([pytest] in pytest.ini,"
    " [tool.pytest.ini_options] in pyproject.toml), or mark each such test @pytest.mark.trio"
)


def check_items(config: pytest.Config, items: Sequence[pytest.Item]) -> None:
    """Raise :class:`pytest.UsageError` naming the first test that uses a Trio fixture
    of the plugin and cannot (see the module docstring); run after pytest-trio marked
    the tests of trio mode."""
    for item in items:
        used = [name for name in TRIO_FIXTURES if name in getattr(item, "fixturenames", ())]
        if not used:
            continue
        problem = _problem(config, item)
        if problem is not None:
            raise pytest.UsageError(f"mcp_actors.testing: {item.nodeid} uses {used[0]}, {problem}")


def _problem(config: pytest.Config, item: pytest.Item) -> str | None:
    missing = [package for module, package in REQUIRED if not _importable(module)]
    if missing:
        return f"which needs {', '.join(missing)}, not installed: {_EXTRA}"
    if not config.pluginmanager.hasplugin("trio"):
        return "which runs under pytest-trio, installed but not loaded (disabled with -p no:trio?)"
    if item.get_closest_marker("trio") is not None:
        return None
    if not inspect.iscoroutinefunction(getattr(item, "obj", None)):
        return "a Trio fixture: the test must be 'async def' (and run by pytest-trio)"
    return f"which runs under pytest-trio's trio mode: {_TRIO_MODE}"


def _importable(module: str) -> bool:
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True
