"""docs/tool-search.md as written: each ```python block runs as a program and prints the
```text block after it; its gateway file (the ```toml block) parses."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import trio

from mcp_actors.gateway.config import parse_gateway

DOC = Path(__file__).parent.parent / "docs" / "tool-search.md"


def examples(doc: Path) -> list[tuple[str, str]]:
    """Each ```python block of ``doc`` and the ```text block that shows its output."""
    found = re.findall(
        r"```python\n(.*?)```\n\nIt prints:\n\n```text\n(.*?)```", doc.read_text(), re.DOTALL
    )
    assert found, f"{doc} has no example with its output"
    return found


async def run_program(source: str, cwd: Path, env: dict[str, str] | None = None) -> str:
    """What ``source`` prints, run as ``python -c`` in ``cwd``."""
    done = await trio.run_process(
        [sys.executable, "-c", source],
        cwd=cwd,
        capture_stdout=True,
        env={**os.environ, **(env or {})},
    )
    return done.stdout.decode()


async def test_every_example_prints_what_the_page_says(tmp_path: Path) -> None:
    for source, printed in examples(DOC):
        assert await run_program(source, tmp_path) == printed


def test_the_gateway_file_parses_with_tool_search_on() -> None:
    [toml] = re.findall(r"```toml\n(.*?)```", DOC.read_text(), re.DOTALL)
    config = parse_gateway(toml, str(DOC))
    assert config.tool_search is not None and config.tool_search.max_results == 5
    assert set(config.upstreams) == {"weather", "files"}
