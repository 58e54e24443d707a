"""Complexity held by a test: no function of ``mcp_actors/`` branches more than 20 ways.

radon's cyclomatic complexity counts the paths through a function (each ``if``,
loop, ``except``, boolean operator and comprehension adds one). Above 20 a function
is read by simulation rather than by reading; a long if-chain becomes a table of
rules, a branchy body becomes functions with one job each. Functions of grade C
(11-20) are allowed where the problem itself branches that much (the note of issue
24 lists them with the reason).
"""

from __future__ import annotations

from pathlib import Path

from radon.complexity import cc_visit

import mcp_actors

PACKAGE = Path(mcp_actors.__file__).parent
LIMIT = 20


def test_no_function_above_the_limit() -> None:
    over = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        for block in cc_visit(path.read_text(encoding="utf-8")):
            if block.complexity > LIMIT:
                over.append(f"{module}:{block.lineno} {block.fullname} ({block.complexity})")
    assert not over, f"functions above complexity {LIMIT}:\n" + "\n".join(over)
