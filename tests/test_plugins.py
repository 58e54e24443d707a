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

TYPED = """
    import json
    import attrs
    from mcp_actors import Server
    from mcp_actors.plugins import Plugin

    @attrs.frozen
    class Settings:
        flag: bool = False
        count: int = 1
        ratio: float = 0.5
        name: str = "n"
        tags: list[str] = attrs.Factory(list)

    def create(settings: Settings) -> Server:
        return Server("typed", instructions=json.dumps(attrs.asdict(settings)))

    plugin = Plugin(create=create, settings=Settings)
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
    install(site, "typed", TYPED)
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
    result = await cli("call", target, "greet", '{"name": "Ada"}', "--raw", env=env)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["content"][0]["text"] == "hi Ada hi Ada"


async def test_bad_settings_are_named_with_their_source(site: Path) -> None:
    result = await cli("run", "greeter", env={"MCP_ACTORS_GREETER_REPEAT": "many"})
    assert result.returncode == 2
    assert b"bad settings for plugin 'greeter'" in result.stderr
    assert b"repeat: expected an integer, got 'many' (from $MCP_ACTORS_GREETER_REPEAT)" in (
        result.stderr
    )


async def test_an_unknown_plugin_lists_the_installed_ones(site: Path) -> None:
    result = await cli("run", "nope")
    assert result.returncode == 2
    assert b"no plugin named 'nope' is installed" in result.stderr
    assert b"greeter" in result.stderr


# -- strict settings -----------------------------------------------------------------------


def typed_settings(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], config: Path | None = None
) -> dict[str, object]:
    """The settings the ``typed`` plugin is built with, as a user's environment gives them."""
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    server = plugins.find("typed").build(config_file=config)
    settings: dict[str, object] = json.loads(server.instructions or "")
    return settings


def build_error(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], config: Path | None = None
) -> str:
    with pytest.raises(plugins.PluginError) as error:
        typed_settings(monkeypatch, env, config)
    return str(error.value)


@pytest.mark.parametrize(
    ("text", "value"),
    [(word, False) for word in ("false", "False", "FALSE", "0", "no", "No", "off", "OFF")]
    + [(word, True) for word in ("true", "True", "1", "yes", "YES", "on", "On")],
)
def test_an_environment_bool_is_read_from_its_words(
    site: Path, monkeypatch: pytest.MonkeyPatch, text: str, value: bool
) -> None:
    assert typed_settings(monkeypatch, {"MCP_ACTORS_TYPED_FLAG": text})["flag"] is value


@pytest.mark.parametrize(
    ("variable", "text", "expected"),
    [
        ("FLAG", "maybe", "flag: expected a bool (true/false, 1/0, yes/no or on/off), got 'maybe'"),
        ("FLAG", "", "flag: expected a bool"),
        ("FLAG", "2", "flag: expected a bool"),
        ("FLAG", "t", "flag: expected a bool"),
        ("COUNT", "1.5", "count: expected an integer, got '1.5'"),
        ("COUNT", "true", "count: expected an integer, got 'true'"),
        ("COUNT", "0x10", "count: expected an integer"),
        ("COUNT", " 3", "count: expected an integer"),
        ("RATIO", "fast", "ratio: expected a number, got 'fast'"),
        ("RATIO", "nan", "ratio: expected a number"),
        ("TAGS", "a,b", "tags: expected JSON for a list[str], got 'a,b'"),
        ("TAGS", "[1]", "tags[0]: expected a string, got int 1"),
    ],
)
def test_a_bad_environment_value_is_named_with_its_variable(
    site: Path, monkeypatch: pytest.MonkeyPatch, variable: str, text: str, expected: str
) -> None:
    message = build_error(monkeypatch, {f"MCP_ACTORS_TYPED_{variable}": text})
    assert f"{expected}" in message
    assert f"(from $MCP_ACTORS_TYPED_{variable})" in message


def test_environment_values_keep_their_field_type(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {
        "MCP_ACTORS_TYPED_COUNT": "-1_000",
        "MCP_ACTORS_TYPED_RATIO": "2e-3",
        "MCP_ACTORS_TYPED_NAME": "123",  # a string stays a string, even when it looks like JSON
        "MCP_ACTORS_TYPED_TAGS": '["x", "y"]',
    }
    settings = typed_settings(monkeypatch, env)
    assert settings == {
        "flag": False,
        "count": -1000,
        "ratio": 0.002,
        "name": "123",
        "tags": ["x", "y"],
    }


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            'flag = "false"',
            "flag: expected a bool (true or false, unquoted), got the string 'false'",
        ),
        ("flag = 1", "flag: expected a bool (true or false, unquoted), got int 1"),
        ("count = 1.5", "count: expected an integer, got float 1.5"),
        ("count = true", "count: expected an integer, got true"),
        ('count = "3"', "count: expected an integer, got the string '3'"),
        ("ratio = false", "ratio: expected a number, got false"),
        ("name = 5", "name: expected a string, got int 5"),
        ("tags = [1]", "tags[0]: expected a string, got int 1"),
        ("flags = true", "unknown setting 'flags'"),
    ],
)
def test_a_bad_toml_value_is_named_with_its_file_and_key(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, line: str, expected: str
) -> None:
    config = tmp_path / "settings.toml"
    config.write_text(f"[plugins.typed]\n{line}\n")
    key = line.split(" =")[0]
    message = build_error(monkeypatch, {}, config)
    assert expected in message
    assert f"from {config} [plugins.typed] {key}" in message


def test_good_toml_values_and_every_problem_at_once(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "settings.toml"
    config.write_text('[plugins.typed]\nflag = true\ncount = 3\nratio = 1\nname = "x"\n')
    assert typed_settings(monkeypatch, {}, config) == {
        "flag": True,
        "count": 3,
        "ratio": 1.0,
        "name": "x",
        "tags": [],
    }
    message = build_error(
        monkeypatch, {"MCP_ACTORS_TYPED_FLAG": "nope", "MCP_ACTORS_TYPED_COUNT": "many"}, config
    )
    assert "flag: expected a bool" in message and "count: expected an integer" in message
