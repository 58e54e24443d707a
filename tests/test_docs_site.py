"""The documentation site holds together: README.md is short and links into docs/,
every page is in the nav (and every nav entry is a page), every relative link of
README.md and docs/ reaches a file, the API reference covers every public module, and
the exit codes page says what the command says.

The site itself is built by ``mkdocs build --strict`` in ``.ci/test`` (warnings fail
it); these checks are the ones a reader of the Markdown on GitHub relies on too.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from docs_blocks import DOCS, ROOT, pages
from test_exports import PUBLIC

README = ROOT / "README.md"
#: Pages other branches are adding: listed in the nav before they land (the site
#: leaves a missing one out, docs/_hooks/pending_pages.py). Empty once they all have.
PENDING = {
    "install.md",
    "auth-local.md",
    "tool-search.md",
    "openapi.md",
    "opentelemetry.md",
    "realio-benchmark.md",
}
#: A Markdown link or image, inline form: the target up to a blank or the parenthesis.
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCED = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def nav_pages(items: list[Any]) -> list[str]:
    """Every page the nav of mkdocs.yml names, in order."""
    found = []
    for item in items:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        found.extend(nav_pages(value) if isinstance(value, list) else [value])
    return found


def configuration() -> dict[str, Any]:
    # mkdocs.yml is plain YAML (no !!python tags): the safe loader reads it.
    loaded: dict[str, Any] = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    return loaded


def links(path: Path) -> list[str]:
    """The relative link targets of a page, code blocks left out (a link there is code)."""
    text = FENCED.sub("", path.read_text())
    targets = [match.group(1) for match in LINK.finditer(text)]
    return [target for target in targets if not re.match(r"[a-z]+:", target)]


def mcp_actors_help() -> str:
    """What ``mcp-actors --help`` prints (80 columns)."""
    return subprocess.run(
        [sys.executable, "-m", "mcp_actors.cli", "--help"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "80"},
    ).stdout


def test_the_readme_is_at_most_250_lines() -> None:
    assert len(README.read_text().splitlines()) <= 250


def test_the_readme_links_into_every_part_of_the_docs() -> None:
    targets = set(links(README))
    for page in (
        "docs/index.md",
        "docs/tutorial/first-server.md",
        "docs/tutorial/first-client.md",
        "docs/tutorial/first-test.md",
        "docs/deployment.md",
        "docs/oauth.md",
        "docs/gateway.md",
        "docs/benchmark.md",
        "docs/asyncio-sync.md",
        "docs/reference/api/mcp_actors.md",
        "docs/reference/cli.md",
        "docs/reference/exit-codes.md",
        "docs/reference/limits.md",
        "docs/architecture.md",
    ):
        assert page in targets, page


def test_every_relative_link_reaches_a_file() -> None:
    """Of README.md and every page of docs/ (anchors are checked by the strict build)."""
    broken = []
    for path in pages():
        for target in links(path):
            file = target.split("#", 1)[0]
            if file and not (path.parent / file).exists():
                broken.append(f"{path.relative_to(ROOT)}: {target}")
    assert broken == []


def test_the_link_check_sees_a_broken_link(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    fence = "`" * 3
    page.write_text(f"[a](gone.md#x) [b](https://x.org)\n{fence}\n[c](code.md)\n{fence}\n")
    assert links(page) == ["gone.md#x"]


def test_every_page_is_in_the_nav_and_every_entry_is_a_page() -> None:
    named = nav_pages(configuration()["nav"])
    assert len(named) == len(set(named)), "a page listed twice"
    site_pages = {
        str(path.relative_to(DOCS)) for path in DOCS.rglob("*.md") if "_hooks" not in path.parts
    }
    assert site_pages - set(named) == set()  # omitted: the strict build fails on it too
    assert {page for page in named if page not in site_pages} <= PENDING


def test_the_api_reference_documents_every_public_module() -> None:
    reference = "\n".join(path.read_text() for path in (DOCS / "reference" / "api").glob("*.md"))
    documented = set(re.findall(r"^::: ([\w.]+)$", reference, flags=re.MULTILINE))
    assert set(PUBLIC) <= documented


def test_the_exit_codes_page_lists_the_codes_the_command_names() -> None:
    """``mcp-actors --help`` ends with the exit codes: the page's table has the same."""
    page = (DOCS / "reference" / "exit-codes.md").read_text()
    table = set(re.findall(r"^\| (\d+) \|", page, flags=re.MULTILINE))
    epilog = mcp_actors_help().split("exit codes:", 1)[1]
    assert table == set(re.findall(r"\b(\d+) ", epilog))


def test_the_cli_reference_shows_the_help_of_every_command() -> None:
    """Each command ``mcp-actors --help`` lists has its help in docs/reference/cli.md
    (a ``<!-- cli-help: NAME -->`` marker, filled in by docs/_hooks/cli_help.py)."""
    page = (DOCS / "reference" / "cli.md").read_text()
    shown = set(re.findall(r"^<!-- cli-help: (\w+) -->$", page, flags=re.MULTILINE))
    listed = mcp_actors_help().split("positional arguments:", 1)[1].split("options:", 1)[0]
    commands = set(re.findall(r"^    (\w+)\s", listed, flags=re.MULTILINE))
    assert commands and commands == shown
