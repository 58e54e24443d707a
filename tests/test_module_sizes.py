"""No module of ``mcp_actors`` over :data:`MAX_LINES` lines: one that grows past it is
doing more than one job, and is split by job (as ``protocol/types/`` is, by concern).
"""

from __future__ import annotations

from pathlib import Path

import mcp_actors

PACKAGE = Path(mcp_actors.__file__).parent
MAX_LINES = 600


def test_no_module_is_over_the_limit() -> None:
    sizes = {
        path.relative_to(PACKAGE).as_posix(): len(path.read_text().splitlines())
        for path in PACKAGE.rglob("*.py")
    }
    over = {name: lines for name, lines in sizes.items() if lines > MAX_LINES}
    assert over == {}
