"""Every ```python snippet in README.md runs as written (and docs/plugins.md's plugin works).

Snippets that define a ``server`` are imported (the first is saved as
``my_server.py``, which the others talk to); a snippet with ``def test_`` is run
by pytest (with the plugin, as a user's test file); every other snippet is run as
a program, next to ``my_server.py``, with this environment's ``python`` first on
PATH. The README's first command is checked to name a server that loads.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from mcp_actors import Server
from mcp_actors.client.targets import load_server
from mcp_actors.plugins import InstalledPlugin

from conftest import TESTS

README = (TESTS.parent / "README.md").read_text()
SNIPPETS = re.findall(r"^```python\n(.*?)^```$", README, flags=re.MULTILINE | re.DOTALL)


def kind(snippet: str) -> str:
    if "def test_" in snippet:
        return "test"
    if re.search(r"^server = Server\(", snippet, flags=re.MULTILINE):
        return "server"
    return "program"


SERVERS = [snippet for snippet in SNIPPETS if kind(snippet) == "server"]
PROGRAMS = [snippet for snippet in SNIPPETS if kind(snippet) == "program"]
TESTS_IN_README = [snippet for snippet in SNIPPETS if kind(snippet) == "test"]


def first_line(snippets: list[str]) -> list[str]:
    return [
        next(line for line in s.splitlines() if line and "import" not in line) for s in snippets
    ]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A folder holding the README's servers, ``my_server.py`` first."""
    (tmp_path / "my_server.py").write_text(SERVERS[0])
    for index, snippet in enumerate(SERVERS[1:], start=1):
        (tmp_path / f"readme_server_{index}.py").write_text(snippet)
    return tmp_path


def run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(
        command, cwd=str(cwd), env=env, capture_output=True, text=True, timeout=120, check=False
    )


def test_the_readme_has_every_kind_of_snippet() -> None:
    assert len(SERVERS) >= 2 and len(PROGRAMS) >= 4 and len(TESTS_IN_README) >= 1


@pytest.mark.parametrize("index", range(len(SERVERS)))
def test_a_server_snippet_defines_a_server(project: Path, index: int) -> None:
    path = project / ("my_server.py" if index == 0 else f"readme_server_{index}.py")
    assert isinstance(load_server(str(path)), Server)


@pytest.mark.parametrize("snippet", PROGRAMS, ids=first_line(PROGRAMS))
def test_a_program_snippet_runs(project: Path, snippet: str) -> None:
    (project / "program.py").write_text(snippet)
    result = run([sys.executable, "program.py"], project)
    assert result.returncode == 0, result.stderr
    assert result.stdout  # every program shows something


def test_the_program_outputs_are_what_the_comments_say(project: Path) -> None:
    """The trio snippet's comments tell what it prints: check them."""
    trio_snippet = next(s for s in PROGRAMS if "trio.run(main)" in s)
    (project / "program.py").write_text(trio_snippet)
    lines = run([sys.executable, "program.py"], project).stdout.splitlines()
    assert lines[0] == "weather modern 2026-07-28"
    assert lines[2] == "{'result': 3}"
    assert lines[-1] == "[TextContent(text='lift-off')]"


@pytest.mark.parametrize("snippet", TESTS_IN_README)
def test_a_test_snippet_passes_under_pytest(project: Path, snippet: str) -> None:
    (project / "test_readme_snippet.py").write_text(snippet)
    result = run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "trio_mode=true"],
        project,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"\b3 passed\b", result.stdout), result.stdout


def test_the_first_command_serves_a_real_server() -> None:
    first_bash = re.search(r"^```bash\n(.*?)^```$", README, flags=re.MULTILINE | re.DOTALL)
    assert first_bash is not None
    target = re.search(r"mcp-actors run (\S+)", first_bash.group(1))
    assert target is not None and target.group(1) == "mcp_actors.examples.demo:server"
    assert load_server(target.group(1)).tools  # and tests/test_cli.py serves it over stdio


def test_the_plugin_guides_plugin_installs_serves_and_passes_its_test(tmp_path: Path) -> None:
    """docs/plugins.md: its module, entry point and test, as a plugin author would use them."""
    guide = (TESTS.parent / "docs" / "plugins.md").read_text()
    module, test = re.findall(r"^```python\n(.*?)^```$", guide, flags=re.MULTILINE | re.DOTALL)
    entry_point = re.search(r'^notes = "notes_plugin:plugin"$', guide, flags=re.MULTILINE)
    assert entry_point is not None
    package = tmp_path / "notes_plugin"
    package.mkdir()
    (package / "__init__.py").write_text(module)
    (tmp_path / "test_notes.py").write_text(test)
    result = run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "trio_mode=true"],
        tmp_path,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    # served by name through the entry point group, as `pip install` would register it
    sys.path.insert(0, str(tmp_path))
    try:
        installed = InstalledPlugin("notes", EntryPoint("notes", "notes_plugin:plugin", "x"))
        server = installed.build()
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("notes_plugin", None)
    assert server.name == "notes" and "add_note" in server.tools


def test_the_shell_commands_run_against_my_server(project: Path) -> None:
    """The "From the shell" block, next to my_server.py (``dev`` needs Node: tested apart)."""
    block = README.split("## From the shell", 1)[1]
    match = re.search(r"^```bash\n(.*?)^```$", block, flags=re.MULTILINE | re.DOTALL)
    assert match is not None
    commands = [line.split("  #", 1)[0].strip() for line in match.group(1).splitlines()]
    run_here = [command for command in commands if command and " dev " not in command]
    assert len(run_here) == 3
    for command in run_here:
        result = run(["sh", "-c", command], project)
        assert result.returncode == 0, (command, result.stderr)
        if command.startswith("mcp-actors call"):
            assert result.stdout == "3\n"  # the result's content
        else:
            assert result.stdout.startswith("{"), command  # JSON on stdout


def test_the_gateway_toml_is_inspected(project: Path) -> None:
    """The gateway section's gateway.toml, exactly, next to my_server.py: ``mcp-actors
    inspect`` reads it as ``run`` does and reports the upstream it can reach (the
    ``files`` one at 127.0.0.1:8001 is left out of the lists while it cannot be reached)."""
    section = README.split("## Gateways", 1)[1]
    match = re.search(r"^```toml\n(.*?)^```$", section, flags=re.MULTILINE | re.DOTALL)
    assert match is not None
    (project / "gateway.toml").write_text(match.group(1))
    for era in ("modern", "legacy"):
        result = run(["mcp-actors", "inspect", "--era", era, "gateway.toml"], project)
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith("{")
        assert '"weather_add"' in result.stdout
