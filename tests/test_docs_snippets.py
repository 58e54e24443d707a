"""Every code block of README.md and docs/ runs as written, or says in the page why not.

What is done with each block is decided by its language and its directive
(``tests/docs_blocks.py`` says how): ``python`` blocks are imported (a ``server``),
run as programs, or run by pytest (a ``def test_``), next to the project folder's
files (``my_server.py``...) with this environment's ``python`` first on PATH; ``bash``
blocks marked ``run: sh`` are run line by line there; ``json`` and ``toml`` blocks are
parsed. A few checks go further than "it runs": the outputs the README's client
comments on, the README's first command, the plugin guide's plugin, the gateway file.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from mcp_actors import Server
from mcp_actors.client.targets import load_server
from mcp_actors.plugins import InstalledPlugin

from docs_blocks import (
    ROOT,
    Block,
    all_blocks,
    blocks_of,
    commands,
    kind,
    problems,
    project_files,
    runs_by_default,
)

BLOCKS = all_blocks()
PYTHON = [block for block in BLOCKS if runs_by_default(block, "python")]
SERVERS = [block for block in PYTHON if kind(block) == "server"]
PROGRAMS = [block for block in PYTHON if kind(block) == "program"]
TESTS_IN_DOCS = [block for block in PYTHON if kind(block) == "test"]
SHELL = [block for block in BLOCKS if block.directive == "run"]
README = (ROOT / "README.md").read_text()


def ids(blocks: list[Block]) -> list[str]:
    return [block.id for block in blocks]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The folder every snippet runs in: each ``file:`` block saved under its name."""
    for name, text in project_files(BLOCKS).items():
        (tmp_path / name).write_text(text)
    return tmp_path


def run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(
        command, cwd=str(cwd), env=env, capture_output=True, text=True, timeout=120, check=False
    )


def test_every_block_runs_or_says_why() -> None:
    assert problems(BLOCKS) == []


def test_a_block_without_a_directive_is_found(tmp_path: Path) -> None:
    """The check above sees what it must refuse: a bash block nobody runs, a bare fence,
    a test that does not exist, and one file name with two texts."""
    fence = "`" * 3
    page = tmp_path / "probe.md"
    source = (
        f"{fence}bash\nrm -rf /\n{fence}\n\n{fence}\nplain\n{fence}\n\n"
        f"<!-- tested-by: tests/test_docs_snippets.py::test_nonesuch -->\n"
        f"{fence}python\nx = 1\n{fence}\n\n"
        f"<!-- file: a.py -->\n{fence}python\nx = 1\n{fence}\n"
        f"<!-- file: a.py -->\n{fence}python\nx = 2\n{fence}\n"
    )
    page.write_text(source)
    found = problems(list(blocks_of(page)))
    assert [problem.split(": ", 1)[1] for problem in found] == [
        "needs a directive (run, tested-by, not-run or file)",
        "a fence needs a language (`text` for a diagram or output)",
        "no such test 'tests/test_docs_snippets.py::test_nonesuch'",
        "a.py differs from probe.md:15's",
    ]


def test_the_docs_have_every_kind_of_snippet() -> None:
    assert len(SERVERS) >= 4 and len(PROGRAMS) >= 10 and len(TESTS_IN_DOCS) >= 1
    assert len(SHELL) >= 2


@pytest.mark.parametrize("block", SERVERS, ids=ids(SERVERS))
def test_a_server_snippet_defines_a_server(project: Path, block: Block) -> None:
    path = project / f"snippet_{Path(block.page).stem.replace('-', '_')}_{block.line}.py"
    path.write_text(block.text)
    assert isinstance(load_server(str(path)), Server)


@pytest.mark.parametrize("block", PROGRAMS, ids=ids(PROGRAMS))
def test_a_program_snippet_runs(project: Path, block: Block) -> None:
    (project / "program.py").write_text(block.text)
    result = run([sys.executable, "program.py"], project)
    assert result.returncode == 0, result.stderr
    assert result.stdout  # every program shows something


@pytest.mark.parametrize("block", TESTS_IN_DOCS, ids=ids(TESTS_IN_DOCS))
def test_a_test_snippet_passes_under_pytest(project: Path, block: Block) -> None:
    (project / "test_docs_snippet.py").write_text(block.text)
    result = run(
        [
            *(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"),
            *("-o", "trio_mode=true", "test_docs_snippet.py"),
        ],
        project,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"\b\d+ passed\b", result.stdout), result.stdout


@pytest.mark.parametrize("block", SHELL, ids=ids(SHELL))
def test_a_shell_block_runs_line_by_line(project: Path, block: Block) -> None:
    assert commands(block)
    for command in commands(block):
        result = run(["sh", "-c", command], project)
        assert result.returncode == 0, (command, result.stdout, result.stderr)


@pytest.mark.parametrize(
    "block",
    [block for block in BLOCKS if runs_by_default(block, "json")],
    ids=lambda block: block.id,
)
def test_a_json_block_parses(block: Block) -> None:
    json.loads(block.text)


@pytest.mark.parametrize(
    "block",
    [block for block in BLOCKS if runs_by_default(block, "toml")],
    ids=lambda block: block.id,
)
def test_a_toml_block_parses(block: Block) -> None:
    tomllib.loads(block.text)


def test_the_client_outputs_are_what_the_comments_say(project: Path) -> None:
    """The README's Trio client tells in comments what it prints: check them."""
    (client,) = [block for block in PROGRAMS if block.page == "README.md"]
    (project / "program.py").write_text(client.text)
    lines = run([sys.executable, "program.py"], project).stdout.splitlines()
    assert lines[0] == "weather modern 2026-07-28"
    assert lines[2] == "{'result': 3}"
    assert lines[-1] == "[TextContent(text='lift-off')]"


def test_the_first_command_serves_a_real_server() -> None:
    """README's first block (and the pages showing it again) sets up and serves the demo."""
    shown = [
        block
        for block in BLOCKS
        if block.argument.endswith("::test_the_first_command_serves_a_real_server")
    ]
    assert shown[0].page == "README.md" and shown[0] == next(
        block for block in BLOCKS if block.page == "README.md"
    )
    for block in shown:
        target = re.search(r"mcp-actors run (\S+)", block.text)
        assert target is not None and target.group(1) == "mcp_actors.examples.demo:server"
    assert load_server("mcp_actors.examples.demo:server").tools  # tests/test_cli.py serves it


def test_the_plugin_guides_plugin_installs_serves_and_passes_its_test(tmp_path: Path) -> None:
    """docs/plugins.md: its module, entry point and test, as a plugin author would use them."""
    guide = (ROOT / "docs" / "plugins.md").read_text()
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


def test_the_gateway_toml_is_inspected(project: Path) -> None:
    """The gateway page's gateway.toml, exactly, next to my_server.py: ``mcp-actors
    inspect`` reads it as ``run`` does and reports the upstream it can reach (the
    ``files`` one at 127.0.0.1:8001 is left out of the lists while it cannot be reached)."""
    assert (project / "gateway.toml").is_file()
    for era in ("modern", "legacy"):
        result = run(["mcp-actors", "inspect", "--era", era, "gateway.toml"], project)
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith("{")
        assert '"weather_add"' in result.stdout
