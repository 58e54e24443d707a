"""Plugins found through entry points: the three forms, settings, and broken plugins.

Each test installs small distributions into a temporary site directory (a
``*.dist-info`` with ``entry_points.txt`` beside the plugin module), exactly what
``pip install`` leaves behind, and runs ``mcp-actors`` with that directory on
``PYTHONPATH``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import trio

from mcp_actors import plugins


def install(site: Path, name: str, module_source: str) -> None:
    """Install a one-module distribution ``name`` whose entry point is ``<module>:plugin``."""
    module = f"mcpa_test_{name.replace('-', '_')}"
    (site / f"{module}.py").write_text(textwrap.dedent(module_source))
    info = site / f"{module}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[mcp_actors.plugins]\n{name} = {module}:plugin\n")


FULL = """
    import attrs
    from mcp_actors import Server
    from mcp_actors.plugins import Plugin

    @attrs.frozen
    class Settings:
        greeting: str = "hello"
        repeat: int = 1

    def create(settings: Settings) -> Server:
        server = Server("greeter", "2.0")

        @server.tool
        async def greet(name: str) -> str:
            return " ".join([f"{settings.greeting} {name}"] * settings.repeat)

        return server

    plugin = Plugin(create=create, description="Greets people.", settings=Settings)
"""

SERVER = """
    from mcp_actors import Server
    plugin = Server("plain-server")

    @plugin.tool
    async def ping_me() -> str:
        return "pong"
"""

EXTENDER = """
    def plugin(server):
        '''Adds a double tool.'''
        @server.tool
        async def double(x: int) -> int:
            return 2 * x
"""

BROKEN_IMPORT = """
    import no_such_dependency_for_tests
"""


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    install(site, "greeter", FULL)
    install(site, "plain", SERVER)
    install(site, "doubler", EXTENDER)
    install(site, "broken", BROKEN_IMPORT)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]))
    return site


async def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    with trio.fail_after(60):
        return await trio.run_process(
            [sys.executable, "-m", "mcp_actors.cli", *args],
            capture_stdout=True,
            capture_stderr=True,
            check=False,
            env={**os.environ, **(env or {})},
        )


def test_all_three_forms_build_and_a_broken_plugin_says_why(site: Path) -> None:
    found = plugins.installed()
    assert {"greeter", "plain", "doubler", "broken"} <= found.keys()
    assert found["greeter"].version == "1.0"
    assert set(found["greeter"].build().tools) == {"greet"}
    assert set(found["plain"].build().tools) == {"ping_me"}
    doubler = found["doubler"].build()
    assert doubler.name == "doubler" and set(doubler.tools) == {"double"}
    with pytest.raises(plugins.PluginError, match="failed to import: ModuleNotFoundError"):
        found["broken"].build()


async def test_list_shows_every_plugin_and_survives_a_broken_one(site: Path) -> None:
    result = await cli("list")
    assert result.returncode == 0, result.stderr
    lines = {line.split()[0]: line for line in result.stdout.decode().splitlines()}
    assert "(mcpa_test_greeter 1.0)" in lines["greeter"]
    assert "tools: greet" in lines["greeter"]
    assert "tools: double" in lines["doubler"]
    assert "BROKEN" in lines["broken"] and "no_such_dependency_for_tests" in lines["broken"]


async def test_run_a_plugin_by_name_with_settings_from_env_and_toml(
    site: Path, tmp_path: Path
) -> None:
    config = tmp_path / "settings.toml"
    config.write_text('[plugins.greeter]\ngreeting = "hi"\nrepeat = 1\n')
    target = f"stdio:{sys.executable} -m mcp_actors.cli run greeter --config {config}"
    env = {"MCP_ACTORS_GREETER_REPEAT": "2"}  # the environment overrides the file
    result = await cli("call", target, "greet", '{"name": "Ada"}', env=env)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["content"][0]["text"] == "hi Ada hi Ada"


async def test_bad_settings_are_named_with_their_source(site: Path) -> None:
    result = await cli("run", "greeter", env={"MCP_ACTORS_GREETER_REPEAT": "many"})
    assert result.returncode == 2
    assert b"bad settings for plugin 'greeter'" in result.stderr
    assert b"expected int @ .repeat (from $MCP_ACTORS_GREETER_REPEAT)" in result.stderr


async def test_an_unknown_plugin_lists_the_installed_ones(site: Path) -> None:
    result = await cli("run", "nope")
    assert result.returncode == 2
    assert b"no plugin named 'nope' is installed" in result.stderr
    assert b"greeter" in result.stderr
