"""The fenced code blocks of README.md and docs/, read as the docs tests run them.

A block's fate is explicit in the Markdown source: its language, and an optional
*directive*, an HTML comment on the line just before the fence (invisible once
rendered, on GitHub and on the site):

- ``<!-- file: NAME -->``: the block is also saved as NAME in the project folder every
  snippet runs in (``my_server.py``, ``gateway.toml``...); a NAME given on several pages
  must carry the same text there.
- ``<!-- run: sh -->`` (a ``bash`` block): each command line is run by ``sh`` in the
  project folder and must exit 0.
- ``<!-- tested-by: tests/test_x.py::test_name -->``: that test runs the block as
  written; it must exist.
- ``<!-- not-run: REASON -->``: shown, not run, and the reason says why.

Without a directive, a ``python`` block runs by what it is (:func:`kind`); a ``json``
or ``toml`` block is parsed; a ``text`` block is a diagram or an output, not code.
Any other block — a ``bash`` one, a fence without a language — needs a directive:
:func:`problems` lists every block that has none, so nothing is skipped silently.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

#: A fence at the start of a line, its language, its text, and its closing fence.
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
DIRECTIVE = re.compile(r"<!-- (file|run|tested-by|not-run): (.*?) -->[ \t]*\n\Z")
#: Languages whose blocks need no directive (see :func:`default_check`).
CHECKED_BY_DEFAULT = {"python", "json", "toml", "text"}


@dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its language, its directive, its text."""

    page: str  # the path from the repository's root
    line: int  # the line of its opening fence
    language: str
    directive: str | None
    argument: str
    text: str

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def pages() -> list[Path]:
    """README.md, then every Markdown page under docs/."""
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def blocks_of(path: Path) -> Iterator[Block]:
    source = path.read_text()
    for match in FENCE.finditer(source):
        before = source[: match.start()]
        directive = DIRECTIVE.search(before[-300:]) if before else None
        yield Block(
            page=str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name,
            line=before.count("\n") + 1,
            language=match.group(1).strip(),
            directive=directive.group(1) if directive else None,
            argument=directive.group(2).strip() if directive else "",
            text=match.group(2),
        )


def all_blocks() -> list[Block]:
    return [block for path in pages() for block in blocks_of(path)]


def kind(block: Block) -> str:
    """What a ``python`` block is: a pytest file (``def test_``), a module defining a
    ``server`` (imported: it must be a Server), or a program (run: it must exit 0 and
    print something)."""
    if "def test_" in block.text:
        return "test"
    if re.search(r"^server = Server\(", block.text, flags=re.MULTILINE):
        return "server"
    return "program"


def runs_by_default(block: Block, language: str) -> bool:
    """Whether a block of ``language`` is run (or parsed) by its default check."""
    return block.language == language and block.directive in (None, "file")


def problems(blocks: list[Block]) -> list[str]:
    """Every block whose fate is not explicit, or whose directive is wrong."""
    found = []
    files: dict[str, Block] = {}
    for block in blocks:
        where = f"{block.id} ({block.language or 'no language'})"
        if not block.language:
            found.append(f"{where}: a fence needs a language (`text` for a diagram or output)")
        elif block.directive is None and block.language not in CHECKED_BY_DEFAULT:
            found.append(f"{where}: needs a directive (run, tested-by, not-run or file)")
        if block.directive in ("not-run", "file") and not block.argument:
            found.append(f"{where}: {block.directive} needs an argument")
        if block.directive == "run" and (block.argument, block.language) != ("sh", "bash"):
            found.append(f"{where}: only `run: sh` on a bash block is known")
        if block.directive == "tested-by" and not names_a_test(block.argument):
            found.append(f"{where}: no such test {block.argument!r}")
        if block.directive == "file":
            earlier = files.setdefault(block.argument, block)
            if earlier.text != block.text:
                found.append(f"{where}: {block.argument} differs from {earlier.id}'s")
    return found


def names_a_test(node_id: str) -> bool:
    """Whether ``tests/test_x.py::test_name`` names a test function of that file."""
    path, _, name = node_id.partition("::")
    file = ROOT / path
    return (
        bool(name)
        and file.is_file()
        and re.search(rf"^(async )?def {re.escape(name)}\(", file.read_text(), re.MULTILINE)
        is not None
    )


def project_files(blocks: list[Block]) -> dict[str, str]:
    """NAME -> text for every ``file:`` block (one text per name: :func:`problems`)."""
    return {block.argument: block.text for block in blocks if block.directive == "file"}


def commands(block: Block) -> list[str]:
    """A shell block's command lines: comments (``  # ...``) and blank lines left out."""
    lines = [line.split("  #", 1)[0].strip() for line in block.text.splitlines()]
    return [line for line in lines if line and not line.startswith("#")]
