"""The ``skills`` plugin: a directory of Agent Skills served by name, settings from the
environment, and a malformed skill stopping the server with its reason."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import pytest
import trio

from mcp_actors.protocol.skills import SKILLS_EXTENSION, SkillResource

from conftest import connect


@pytest.fixture
def library(tmp_path: Path) -> Path:
    skill = tmp_path / "team" / "release-notes"
    (skill / "examples").mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: release-notes\ndescription: Write release notes from merged changes\n"
        "metadata:\n  owner: docs\n---\n\nGroup changes by kind; see examples/short.md.\n"
    )
    (skill / "examples" / "short.md").write_bytes(b"## 1.2.0\n- Faster start-up\n")
    return tmp_path


async def test_the_plugin_serves_the_directory_named_by_the_environment(library: Path) -> None:
    env = {"MCP_ACTORS_SKILLS_ROOT": str(library), "MCP_ACTORS_SKILLS_DIRECTORY_READ": "false"}
    async with connect("stdio", "skills", env=env, era="modern") as client:
        assert client.server_extension(SKILLS_EXTENSION) == {}  # no directoryRead
        (skill,) = await client.list_skills()
        assert skill.uri == "skill://team/release-notes/SKILL.md"
        assert skill.frontmatter == {
            "name": "release-notes",
            "description": "Write release notes from merged changes",
            "metadata": {"owner": "docs"},
        }
        example = library / "team/release-notes/examples/short.md"
        assert (
            SkillResource(
                uri="skill://team/release-notes/examples/short.md",
                digest="sha256:" + hashlib.sha256(example.read_bytes()).hexdigest(),
                size=example.stat().st_size,
            )
            in skill.resources
        )
        data = await client.read_skill_file(skill, "skill://team/release-notes/examples/short.md")
        assert data == example.read_bytes()


async def test_a_malformed_skill_stops_the_server_with_its_reason(library: Path) -> None:
    (library / "team" / "release-notes" / "SKILL.md").write_text(
        "---\nname: notes\ndescription: d\n---\n"
    )
    with trio.fail_after(60):
        result = await trio.run_process(
            [sys.executable, "-m", "mcp_actors.cli", "run", "skills"],
            env={**os.environ, "MCP_ACTORS_SKILLS_ROOT": str(library)},
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    assert result.returncode == 2
    assert (
        b"skill://team/release-notes/SKILL.md: frontmatter name 'notes' must equal its"
        b" directory 'release-notes'" in result.stderr
    )


_PEAK_MEMORY = """
import sys, tracemalloc
from mcp_actors.server.skills import SkillError
from mcp_actors_skills import Settings, create
tracemalloc.start()
try:
    create(Settings(root=sys.argv[1]))
except SkillError as error:
    print(error)
print(tracemalloc.get_traced_memory()[1])
"""


async def test_a_file_past_max_bytes_is_refused_before_it_is_read(library: Path) -> None:
    """A 700 MiB file (sparse: no disk) is refused by its size, never read into memory."""
    big = library / "team" / "release-notes" / "examples" / "big.bin"
    with big.open("wb") as file:
        file.truncate(700 * 1024 * 1024)
    with trio.fail_after(60):
        result = await trio.run_process(
            [sys.executable, "-c", _PEAK_MEMORY, str(library)],
            capture_stdout=True,
            capture_stderr=True,
        )
    message, peak = result.stdout.decode().splitlines()
    assert message == (
        f"skill://team/release-notes/examples/big.bin: {700 * 1024 * 1024} bytes would take"
        f" the skills under {library} past max_bytes={256 * 1024 * 1024}"
    )
    assert int(peak) < 16 * 1024 * 1024  # bytes allocated at the worst moment
