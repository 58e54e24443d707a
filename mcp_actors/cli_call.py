"""``mcp-actors call``: arguments ``a=1 b=2`` typed by the tool's schema; the content shown.

Arguments are either one JSON object (``'{"a": 1, "b": 2}'``) or ``NAME=VALUE`` words
(``a=1 b=two``). A ``NAME=VALUE`` value is read as the tool's input schema types the
parameter — ``integer``: ``42``; ``number``: ``4.2``; ``boolean``: ``true``/``false``;
``string``: the text as it is (``name=42`` is the string ``"42"``); ``array``,
``object`` and anything else: JSON (``tags='["a", "b"]'``); a parameter the schema does
not name is refused with the names it does. A value that does not read as its type is
refused with the parameter, the type and the value, before the tool is called.

The result is shown as its content: each text block as it is, other blocks as one line
naming them (``[image image/png, 2.1 kB]``, ``[resource_link file:///a.txt]``), the
structured content as JSON when there is no other content; ``--raw`` prints the result
as it came over the wire (JSON, with ``resultType`` and ``_meta`` in the 2026-07-28
era).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import msgspec

from .cli_errors import EXIT_FAILURE, CliFailure
from .protocol import types as t


class ArgumentError(CliFailure):
    """Arguments that cannot be made into the tool's; the message says which and why."""

    def __init__(self, message: str) -> None:
        super().__init__(EXIT_FAILURE, message)


def parse_words(words: Sequence[str]) -> dict[str, Any] | list[tuple[str, str]] | None:
    """The arguments as given: a JSON object, ``NAME=VALUE`` pairs still untyped, or
    None (no arguments)."""
    if not words:
        return None
    if len(words) == 1 and words[0].lstrip().startswith("{"):
        try:
            arguments = json.loads(words[0])
        except json.JSONDecodeError as error:
            raise ArgumentError(f"arguments are not valid JSON: {error}") from None
        if not isinstance(arguments, dict):
            raise ArgumentError("arguments must be a JSON object")
        return arguments
    pairs: list[tuple[str, str]] = []
    for word in words:
        name, equals, value = word.partition("=")
        if not equals or not name:
            raise ArgumentError(f"expected NAME=VALUE (or one JSON object), got {word!r}")
        if name in dict(pairs):
            raise ArgumentError(f"argument {name!r} is given twice")
        pairs.append((name, value))
    return pairs


def typed(pairs: Sequence[tuple[str, str]], tool: t.Tool) -> dict[str, Any]:
    """``NAME=VALUE`` pairs read as ``tool``'s input schema types each (module docstring)."""
    properties = tool.input_schema.get("properties", {})
    if not isinstance(properties, Mapping):
        properties = {}
    arguments: dict[str, Any] = {}
    for name, value in pairs:
        if name not in properties:
            known = ", ".join(sorted(properties)) or "none"
            raise ArgumentError(f"tool {tool.name!r} has no parameter {name!r} (it has: {known})")
        schema = properties[name]
        arguments[name] = _read(name, value, schema if isinstance(schema, Mapping) else {})
    return arguments


def _read(name: str, value: str, schema: Mapping[str, Any]) -> Any:
    kinds = _kinds(schema)
    try:
        decoded, readable = json.loads(value), True
    except json.JSONDecodeError:
        decoded, readable = None, False
    if not kinds:  # untyped: JSON if it reads as JSON, else the text
        return decoded if readable else value
    for kind in kinds:
        if readable and kind in _TYPES and _TYPES[kind](decoded):
            return decoded
    if "string" in kinds:
        return value
    raise ArgumentError(f"argument {name!r} must be {' or '.join(kinds)}, not {value!r}")


def _kinds(schema: Mapping[str, Any]) -> list[str]:
    """The JSON types a parameter's schema allows (``type``, or its ``anyOf``/``oneOf``
    branches' types), in order; empty: any."""
    kind = schema.get("type")
    if isinstance(kind, str):
        return [kind]
    if isinstance(kind, list):
        return [k for k in kind if isinstance(k, str)]
    branches = schema.get("anyOf", schema.get("oneOf"))
    if not isinstance(branches, list):
        return []
    found = [_kinds(branch) if isinstance(branch, Mapping) else [] for branch in branches]
    return [] if not all(found) else [kind for kinds in found for kind in kinds]


def _is_integer(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


#: Whether a decoded JSON value is of a JSON Schema type (``string`` is taken as written).
_TYPES: dict[str, Callable[[object], bool]] = {
    "integer": _is_integer,
    "number": lambda v: _is_integer(v) or isinstance(v, float),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}


def shown(result: t.CallToolResult) -> str:
    """The result as a person reads it (module docstring)."""
    lines = [_block(block) for block in result.content]
    if not lines and result.structured_content is not msgspec.UNSET:
        lines.append(json.dumps(result.structured_content, indent=2))
    return "\n".join(lines)


def _block(block: t.ContentBlock) -> str:
    if isinstance(block, t.TextContent):
        return block.text
    if isinstance(block, t.ImageContent | t.AudioContent):
        kind = "image" if isinstance(block, t.ImageContent) else "audio"
        return f"[{kind} {block.mime_type}, {_size(len(block.data) * 3 // 4)}]"
    if isinstance(block, t.ResourceLink):
        return f"[resource_link {block.uri}]"
    contents = block.resource
    if isinstance(contents.text, str):
        return contents.text
    size = _size(len(contents.blob) * 3 // 4) if isinstance(contents.blob, str) else "empty"
    return f"[resource {contents.uri}, {size}]"


def _size(count: int) -> str:
    return f"{count} bytes" if count < 1000 else f"{count / 1000:.1f} kB"
