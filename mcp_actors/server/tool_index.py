"""Ranking tools against a query in words: BM25 over each tool's name, description and schema.

A model facing hundreds of tools does better asking "which tool sends an email?" than
reading every schema. :class:`ToolIndex` answers that question for a fixed list of tool
definitions. Each tool becomes one document made of

- its name, split into words (``create_issue``, ``createIssue`` -> "create issue") and
  counted four times: the name is the strongest hint of what a tool does;
- its title and description;
- its input schema's property names and their descriptions (one level of nesting
  deep), so that "by zip code" finds the tool taking ``zip_code``.

Words are lower-cased, a few English stop words dropped and a plural ``s`` trimmed
("files" matches "file"). The ranking is Okapi BM25 from the ``bm25s`` library (the
extra ``mcp-actors[search]``): a word counts more the rarer it is among the tools, and
less the longer a tool's text (less so than usual: see ``_LENGTH_WEIGHT``). A tool
that shares no word with the query scores 0 and is never returned.

Building an index costs time proportional to the tools' text (tens of milliseconds for
500 tools); :class:`~.tool_search.ToolSearch` keeps the last one and builds a new one
only when the list of tools changes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import attrs
import msgspec

from ..protocol import types as t

__all__ = ["ToolIndex", "words"]

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_STOP_WORDS = frozenset(
    {
        *("a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "how", "i", "in"),
        *("into", "is", "it", "me", "my", "of", "on", "or", "please", "that", "the", "this"),
        *("to", "use", "using", "via", "what", "when", "which", "with"),
    }
)
#: How many times a tool's name counts among its words.
_NAME_WEIGHT = 4
#: BM25's length normalisation: a long schema makes a tool's text long without making
#: it less relevant, so length counts less than the usual 0.75.
_LENGTH_WEIGHT = 0.4


def words(text: str) -> list[str]:
    """``text`` as the words the index compares: identifiers split, lower-cased, stop
    words dropped, a plural ``s`` trimmed."""
    found = []
    for word in _WORD.findall(text):
        word = word.lower()
        if word in _STOP_WORDS:
            continue
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        found.append(word)
    return found


def _schema_text(schema: Any, depth: int = 2) -> Iterator[str]:
    """The property names and descriptions of a JSON Schema object, and of its
    properties' own properties (``depth`` levels in all)."""
    if depth == 0 or not isinstance(schema, dict):
        return
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return
    for name, prop in properties.items():
        yield str(name)
        if isinstance(prop, dict):
            description = prop.get("description")
            if isinstance(description, str):
                yield description
            yield from _schema_text(prop.get("items", prop), depth - 1)


def document(tool: t.Tool) -> list[str]:
    """The words standing for ``tool`` in the index (see the module docstring)."""
    parts = [tool.name] * _NAME_WEIGHT
    for text in (tool.title, tool.description):
        if isinstance(text, str):
            parts.append(text)
    parts.extend(_schema_text(tool.input_schema))
    return words(" ".join(parts))


@attrs.define(eq=False)
class ToolIndex:
    """A BM25 index of ``tools`` (see the module docstring)."""

    tools: Sequence[t.Tool]
    _bm25: Any = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        try:
            import bm25s
        except ImportError:  # pragma: no cover - the extra is part of the test install
            raise ImportError(
                "tool search ranks with bm25s: pip install 'mcp-actors[search]'"
            ) from None
        self._bm25 = bm25s.BM25(b=_LENGTH_WEIGHT)
        # bm25s cannot index nothing: an empty list gets one empty document, never returned
        corpus = [document(tool) for tool in self.tools] or [[]]
        self._bm25.index(corpus, show_progress=False)

    def search(
        self, query: str, limit: int, permitted: Callable[[t.Tool], bool] = lambda _: True
    ) -> list[t.Tool]:
        """At most ``limit`` tools that ``permitted`` lets through, best first; none
        sharing no word with ``query``."""
        terms = words(query)
        if not terms or not self.tools:
            return []
        scores = self._bm25.get_scores(terms)
        ranked = sorted(range(len(self.tools)), key=lambda i: -float(scores[i]))
        found: list[t.Tool] = []
        for i in ranked:
            if float(scores[i]) <= 0.0 or len(found) == limit:
                break
            if permitted(self.tools[i]):
                found.append(self.tools[i])
        return found


def catalog_key(tools: Sequence[t.Tool]) -> bytes:
    """What identifies a list of tools for the index: their definitions, encoded."""
    return msgspec.json.encode(tools)
