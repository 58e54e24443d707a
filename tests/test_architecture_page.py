"""docs/architecture.md stays true: every module, test and benchmark it names exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "architecture.md"
PACKAGE = ROOT / "mcp_actors"

#: A path in backquotes: `runtime/session.py`, `tests/test_exports.py`, `auth/server/`.
NAMED = re.compile(r"`([\w/]+(?:\.py|/))`")


def resolves(name: str, context: str | None) -> bool:
    """Whether ``name`` is a file or folder of the repository or of the package (or, for a
    bare module name, of the folder the line names before it)."""
    candidates = [ROOT / name, PACKAGE / name]
    if context is not None:
        candidates.append(PACKAGE / context / name)
    return any(candidate.exists() for candidate in candidates)


def test_every_path_the_page_names_exists() -> None:
    """A bare module name is looked up in the folder named last before it in its section."""
    missing = []
    folder = None
    for line in PAGE.read_text().splitlines():
        if line.startswith("#"):
            folder = None
        for name in NAMED.findall(line):
            if not resolves(name, folder):
                missing.append(name)
            if "/" in name.rstrip("/"):
                folder = name.rsplit("/", 1)[0]
    assert missing == []


def test_the_check_sees_a_missing_path() -> None:
    assert not resolves("runtime/no_such_module.py", None)
    assert resolves("session.py", "runtime")
