"""Draw JSON values that fit (or nearly fit) a JSON Schema, from a seeded random source.

:class:`SchemaValues` walks the subset of JSON Schema the MCP schemas and tool
input schemas use (``$ref``, ``const``, ``enum``, ``anyOf``/``oneOf``/``allOf``,
``type`` with ``properties``/``required``/``items``/``additionalProperties``,
numeric and length bounds) and returns a value of the right shape. Optional
properties appear half the time; depth is bounded so recursive definitions end.

Strings come from :data:`SAFE_TEXT`: letters, digits and a little non-ASCII,
never upper case, quotes or colons, so nothing the fuzzer sends can be mistaken for a Python
traceback when a server echoes it back (:mod:`.checks` looks for those).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any, Final

SAFE_TEXT: Final = "abcdefghijklmnopqrstuvwxyz0123456789 -_./é漢😀"
_MAX_DEPTH: Final = 8


def safe_text(rng: random.Random, low: int = 0, high: int = 12) -> str:
    """A short string that cannot spell an exception name or a file path with a line."""
    return "".join(rng.choice(SAFE_TEXT) for _ in range(rng.randint(low, high)))


class SchemaValues:
    """Values for the definitions of one schema document (``definitions`` or ``$defs``)."""

    def __init__(self, root: Mapping[str, Any], rng: random.Random) -> None:
        self.root = root
        self.rng = rng

    def resolve(self, schema: Mapping[str, Any]) -> Mapping[str, Any]:
        """Follow local ``$ref`` pointers (``#/$defs/X``, ``#/definitions/X``)."""
        seen = 0
        while "$ref" in schema and seen < 32:
            target: Any = self.root
            for part in str(schema["$ref"]).lstrip("#/").split("/"):
                target = target.get(part, {}) if isinstance(target, Mapping) else {}
            schema = target if isinstance(target, Mapping) else {}
            seen += 1
        return schema

    def value(self, schema: Mapping[str, Any] | bool, depth: int = 0) -> Any:
        """One value of the shape ``schema`` describes."""
        rng = self.rng
        if not isinstance(schema, Mapping):
            return self.scalar()
        schema = self.resolve(schema)
        if "const" in schema:
            return schema["const"]
        if schema.get("enum"):
            return rng.choice(schema["enum"])
        for key in ("anyOf", "oneOf"):
            if schema.get(key):
                return self.value(rng.choice(schema[key]), depth + 1)
        if schema.get("allOf"):
            merged: dict[str, Any] = {}
            for part in schema["allOf"]:
                part_value = self.value(part, depth + 1)
                if isinstance(part_value, dict):
                    merged.update(part_value)
            return merged
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = rng.choice(kind) if kind else None
        if kind is None:
            kind = "object" if "properties" in schema else None
        if kind == "object":
            return self.object(schema, depth)
        if kind == "array":
            if depth >= _MAX_DEPTH:
                return []
            low = int(schema.get("minItems", 0))
            high = max(low, min(int(schema.get("maxItems", 3)), 3))
            items = schema.get("items", {})
            return [self.value(items, depth + 1) for _ in range(rng.randint(low, high))]
        if kind == "string":
            return self.string(schema)
        if kind == "integer":
            low = int(schema.get("minimum", 0))
            return rng.randint(low, max(low, min(int(schema.get("maximum", low + 3)), low + 3)))
        if kind == "number":
            start = float(schema.get("minimum", 0))
            return round(rng.uniform(start, start + 0.05), 3)
        if kind == "boolean":
            return rng.random() < 0.5
        if kind == "null":
            return None
        return self.scalar()

    def object(self, schema: Mapping[str, Any], depth: int) -> dict[str, Any]:
        rng = self.rng
        properties: Mapping[str, Any] = schema.get("properties", {})
        required = set(schema.get("required", ()))
        out: dict[str, Any] = {}
        for name, sub in properties.items():
            if name in required or (depth < _MAX_DEPTH and rng.random() < 0.5):
                out[name] = self.value(sub, depth + 1)
        extra = schema.get("additionalProperties")
        if extra not in (None, False) and depth < _MAX_DEPTH and rng.random() < 0.2:
            out[safe_text(rng, 1, 6)] = self.value(extra if isinstance(extra, Mapping) else {})
        return out

    def string(self, schema: Mapping[str, Any]) -> str:
        rng = self.rng
        fmt = schema.get("format")
        if fmt in ("uri", "uri-reference", "iri"):
            return rng.choice(["test://static-text", "file:///tmp/x", "https://example.com/a"])
        if fmt == "email":
            return "a@example.com"
        if fmt in ("date-time", "date"):
            return "2025-01-01T00:00:00Z" if fmt == "date-time" else "2025-01-01"
        low = int(schema.get("minLength", 0))
        high = max(low, min(int(schema.get("maxLength", low + 12)), low + 12))
        return safe_text(rng, low, high)

    def scalar(self) -> Any:
        """A value of no particular type."""
        rng = self.rng
        return rng.choice(
            [None, True, False, 0, -1, rng.randint(0, 10**6), 0.5, safe_text(rng), [], {}]
        )
