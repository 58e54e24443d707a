"""``mcp-actors list`` from an ordinary folder: a plugin waiting for a setting (the skills
plugin's folder) says what to set, rather than looking broken; named, it lists what it
serves; ``run`` of the unconfigured plugin fails with the same line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def cli(
    folder: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MCP_ACTORS_SKILLS_")}
    return subprocess.run(
        [sys.executable, "-m", "mcp_actors.cli", *args],
        cwd=str(folder),
        env={**clean, **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


NEEDS_ROOT = (
    'set the folder of skills to serve: MCP_ACTORS_SKILLS_ROOT=DIR, or root = "DIR" under'
    " [plugins.skills] in the --config file"
)


def test_an_unconfigured_plugin_is_not_broken(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("an ordinary folder")
    (tmp_path / "deep" / "stray-skill").mkdir(parents=True)  # never scanned unless named
    (tmp_path / "deep" / "stray-skill" / "SKILL.md").write_text("not even frontmatter")
    listed = cli(tmp_path, "list")
    assert listed.returncode == 0, listed.stderr
    (skills,) = [line for line in listed.stdout.splitlines() if line.startswith("skills ")]
    assert skills.endswith(f"needs settings: {NEEDS_ROOT}")
    assert "BROKEN" not in listed.stdout
    run = cli(tmp_path, "run", "skills")
    assert (run.returncode, run.stderr) == (2, f"mcp-actors: {NEEDS_ROOT}\n")


def test_a_configured_plugin_lists_what_it_serves(tmp_path: Path) -> None:
    skill = tmp_path / "library" / "release-notes"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: release-notes\ndescription: Notes\n---\nBody\n")
    config = tmp_path / "settings.toml"
    config.write_text(f'[plugins.skills]\nroot = "{tmp_path / "library"}"\n')
    for listed in (
        cli(tmp_path, "list", env={"MCP_ACTORS_SKILLS_ROOT": str(tmp_path / "library")}),
        cli(tmp_path, "list", "--config", str(config)),
    ):
        (skills,) = [line for line in listed.stdout.splitlines() if line.startswith("skills ")]
        assert skills.endswith("tools: none; capabilities: extensions, logging, resources"), skills
    broken = cli(tmp_path, "list", env={"MCP_ACTORS_SKILLS_ROOT": str(tmp_path / "deep")})
    assert "skills  (mcp-actors-skills 0.1.0)  BROKEN: " in broken.stdout  # a real problem
