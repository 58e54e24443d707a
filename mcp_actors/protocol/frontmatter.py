"""The YAML frontmatter of a ``SKILL.md``, read into a JSON object.

A ``SKILL.md`` begins with a block between two ``---`` lines::

    ---
    name: pdf-processing
    description: Extract, fill, and assemble PDF documents
    license: Apache-2.0
    metadata:
      version: "2.1.0"
    ---

The Agent Skills format keeps that block small and flat: string fields, a
``metadata`` map of strings. :func:`parse_frontmatter` reads the part of YAML such
blocks use — block mappings (nested by indentation), block sequences (``- item``),
plain, single- and double-quoted scalars, literal and folded block scalars
(``|``, ``>``, with ``-``/``+`` chomping), ``#`` comments — with YAML 1.2 core-schema
scalars (``null``, ``true``/``false``, integers, floats; everything else a string).
Anything else (anchors, tags, flow collections, multi-document streams...) is
refused with a :class:`FrontmatterError` naming the line, never guessed at: a
skill's entry must carry its frontmatter verbatim, and a host compares the two.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

import attrs

_OPEN: Final = re.compile(r"\A\ufeff?---[ \t]*\r?\n")
_CLOSE: Final = re.compile(r"^---[ \t]*$", re.MULTILINE)
_KEY: Final = re.compile(
    r"(?P<key>[^\s#'\"\[\]{}&*!|>%@`,?:-][^:#]*?|\"[^\"]*\"|'[^']*')\s*:(?:\s+|$)"
)
_INT: Final = re.compile(r"[-+]?(?:0|[1-9][0-9]*)|0o[0-7]+|0x[0-9a-fA-F]+")
_FLOAT: Final = re.compile(
    r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)"
)
_UNSUPPORTED: Final = ("&", "*", "!", "{", "[", "%", "@", "`")


@attrs.frozen
class FrontmatterError(ValueError):
    """A ``SKILL.md`` whose frontmatter is missing or outside the YAML this module reads."""

    detail: str
    line: int | None = None

    def __str__(self) -> str:
        return self.detail if self.line is None else f"line {self.line}: {self.detail}"


def split_frontmatter(text: str) -> tuple[str, int]:
    """The frontmatter block of ``text`` (without its ``---`` lines) and the line number
    its first line has in the file; FrontmatterError when there is none."""
    opening = _OPEN.match(text)
    if opening is None:
        raise FrontmatterError("SKILL.md must begin with a '---' line opening the frontmatter")
    closing = _CLOSE.search(text, opening.end())
    if closing is None:
        raise FrontmatterError("the frontmatter has no closing '---' line")
    return text[opening.end() : closing.start()], 2


def parse_frontmatter(text: str) -> dict[str, Any]:
    """The frontmatter of a ``SKILL.md`` (its whole text) as a JSON object."""
    block, first_line = split_frontmatter(text)
    lines = [
        _Line(first_line + index, raw.rstrip("\r")) for index, raw in enumerate(block.split("\n"))
    ]
    parser = _Parser([line for line in lines if not line.blank])
    if not parser.lines:
        return {}
    if parser.lines[0].indent != 0:
        raise FrontmatterError("the frontmatter must start at column 0", parser.lines[0].number)
    value = parser.node(0, lines)
    if parser.position < len(parser.lines):
        raise FrontmatterError("unexpected indentation", parser.lines[parser.position].number)
    if not isinstance(value, dict):
        raise FrontmatterError("the frontmatter must be a mapping of fields", first_line)
    return value


@attrs.frozen
class _Line:
    number: int
    text: str

    @property
    def blank(self) -> bool:
        stripped = self.text.strip()
        return not stripped or stripped.startswith("#")

    @property
    def indent(self) -> int:
        return len(self.text) - len(self.text.lstrip(" "))

    @property
    def content(self) -> str:
        return self.text.strip(" ")


@attrs.define
class _Parser:
    """Block structure by indentation over the non-blank lines (``position``: the next one)."""

    lines: list[_Line]
    position: int = 0

    def node(self, indent: int, all_lines: list[_Line]) -> Any:
        line = self.lines[self.position]
        if "\t" in line.text[: line.indent + 1]:
            raise FrontmatterError("tabs cannot indent YAML", line.number)
        if line.content.startswith("- ") or line.content == "-":
            return self.sequence(line.indent, all_lines)
        return self.mapping(line.indent, all_lines)

    def mapping(self, indent: int, all_lines: list[_Line]) -> dict[str, Any]:
        result: dict[str, Any] = {}
        while self.position < len(self.lines):
            line = self.lines[self.position]
            if line.indent < indent:
                break
            if line.indent > indent:
                raise FrontmatterError("unexpected indentation", line.number)
            match = _KEY.match(line.content)
            if match is None:
                raise FrontmatterError(
                    f"expected 'key: value', found {line.content!r}", line.number
                )
            key = _scalar_key(match.group("key"), line.number)
            if key in result:
                raise FrontmatterError(f"duplicate key {key!r}", line.number)
            rest = line.content[match.end() :]
            self.position += 1
            result[key] = self.value(rest, indent, line, all_lines)
        return result

    def sequence(self, indent: int, all_lines: list[_Line]) -> list[Any]:
        result: list[Any] = []
        while self.position < len(self.lines):
            line = self.lines[self.position]
            if line.indent < indent or not (line.content.startswith("- ") or line.content == "-"):
                if line.indent > indent:
                    raise FrontmatterError("unexpected indentation", line.number)
                break
            if line.indent > indent:
                raise FrontmatterError("unexpected indentation", line.number)
            rest = line.content[1:].strip(" ")
            self.position += 1
            if _KEY.match(rest):
                raise FrontmatterError("mappings inside sequences are not supported", line.number)
            result.append(self.value(rest, indent, line, all_lines))
        return result

    def value(self, rest: str, indent: int, line: _Line, all_lines: list[_Line]) -> Any:
        """The value after ``key:`` or ``-``: inline, a block scalar, or a nested node."""
        if rest[:1] in ("|", ">"):
            return self.block_scalar(rest, indent, line, all_lines)
        if _strip_comment(rest) == "":
            if self.position < len(self.lines) and self.lines[self.position].indent > indent:
                return self.node(self.lines[self.position].indent, all_lines)
            if (
                self.position < len(self.lines)
                and self.lines[self.position].indent == indent
                and self.lines[self.position].content.startswith("- ")
                and line.content[:1] != "-"
            ):
                return self.sequence(indent, all_lines)  # a sequence may sit at its key's indent
            return None
        return _scalar(rest, line.number)

    def block_scalar(self, header: str, indent: int, line: _Line, all_lines: list[_Line]) -> str:
        """A ``|`` (literal) or ``>`` (folded) block after ``line``, with its chomping
        indicator (``-`` strip, ``+`` keep, none: clip); the lines it takes are consumed."""
        style, chomping = header[0], _strip_comment(header[1:].strip())
        if chomping not in ("", "-", "+"):
            raise FrontmatterError(f"unsupported block scalar header {header!r}", line.number)
        body = _block_body(all_lines, line, indent)
        while self.position < len(self.lines) and self.lines[self.position] in body:
            self.position += 1
        return _block_text(body, indent, style, chomping)


def _block_body(all_lines: list[_Line], line: _Line, indent: int) -> list[_Line]:
    """A block scalar's lines: every raw line after ``line``, blank ones included,
    until one at or under the key's indentation."""
    start = next(i for i, raw in enumerate(all_lines) if raw.number == line.number) + 1
    body: list[_Line] = []
    for raw in all_lines[start:]:
        if raw.text.strip() and raw.indent <= indent:
            break
        body.append(raw)
    return body


def _block_text(body: list[_Line], indent: int, style: str, chomping: str) -> str:
    """A block scalar's text: its lines less their common indentation, kept (``|``) or
    folded (``>``), then its final line breaks as ``chomping`` says."""
    content_indent = min((raw.indent for raw in body if raw.text.strip()), default=indent + 1)
    texts = [raw.text[content_indent:] if raw.text.strip() else "" for raw in body]
    trailing = len(texts) - len(list(_rstrip_blank(texts)))
    texts = texts[: len(texts) - trailing]
    text = "\n".join(texts) if style == "|" else _fold(texts)
    if chomping == "-":
        return text
    if chomping == "+":
        return text + "\n" * (trailing + 1) if texts else "\n" * trailing
    return text + "\n" if texts else ""


def _rstrip_blank(texts: list[str]) -> list[str]:
    end = len(texts)
    while end and texts[end - 1] == "":
        end -= 1
    return texts[:end]


def _fold(texts: list[str]) -> str:
    """Folded style: a line break between two text lines becomes a space, each blank
    line a newline; more-indented lines keep their breaks."""
    out: list[str] = []
    blanks = 0
    previous = ""
    for text in texts:
        if text == "":
            blanks += 1
            continue
        if out:
            if blanks:
                out.append("\n" * blanks)
            elif text.startswith(" ") or previous.startswith(" "):
                out.append("\n")
            else:
                out.append(" ")
        elif blanks:
            out.append("\n" * blanks)
        out.append(text)
        previous, blanks = text, 0
    return "".join(out)


def _strip_comment(text: str) -> str:
    """A plain scalar without its trailing `` # comment``."""
    match = re.search(r"(?:^|\s)#", text)
    return (text[: match.start()] if match else text).strip()


def _scalar_key(text: str, number: int) -> str:
    value = _scalar(text, number)
    if not isinstance(value, str):
        return text  # YAML would key by a number or boolean; JSON objects key by text
    return value


def _scalar(text: str, number: int) -> Any:
    """A flow scalar: quoted (a string) or plain (YAML 1.2 core schema)."""
    if text.startswith('"'):
        end = _closing_double_quote(text)
        if end is None or _strip_comment(text[end + 1 :]) != "":
            raise FrontmatterError(f"unterminated or trailing text after {text!r}", number)
        try:
            value: str = json.loads(text[: end + 1])
        except json.JSONDecodeError:
            raise FrontmatterError(f"unsupported escape in {text!r}", number) from None
        return value
    if text.startswith("'"):
        match = re.match(r"'((?:[^']|'')*)'", text)
        if match is None or _strip_comment(text[match.end() :]) != "":
            raise FrontmatterError(f"unterminated or trailing text after {text!r}", number)
        return match.group(1).replace("''", "'")
    plain = _strip_comment(text)
    if plain[:1] in _UNSUPPORTED:
        raise FrontmatterError(
            f"{plain!r}: anchors, aliases, tags and flow collections are not supported", number
        )
    if ": " in plain:
        raise FrontmatterError(f"{plain!r}: a plain value cannot contain ': ' (quote it)", number)
    return _resolve(plain)


def _closing_double_quote(text: str) -> int | None:
    index = 1
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == '"':
            return index
        index += 1
    return None


def _resolve(plain: str) -> Any:
    if plain in ("", "~", "null", "Null", "NULL"):
        return None
    if plain in ("true", "True", "TRUE"):
        return True
    if plain in ("false", "False", "FALSE"):
        return False
    if _INT.fullmatch(plain):
        return int(plain, 0) if plain[:2] in ("0o", "0x") else int(plain)
    if _FLOAT.fullmatch(plain):
        lowered = plain.lower()
        if lowered.endswith("inf") or lowered.endswith("nan"):
            return plain  # no JSON spelling: kept as written
        return float(plain)
    return plain
