"""The official JSON Schemas of the protocol revisions, loaded once and indexed by method.

Each revision's ``schema.json`` is packaged under ``SCHEMA_DIR/<revision>/`` as
published (draft-07 ``definitions`` up to 2025-06-18, 2020-12 ``$defs`` from
2025-11-25); :func:`schema_of` loads one, checks it against its own dialect and
indexes its definitions by the ``method`` they fix (``tools/call`` ->
``CallToolRequest``). The tasks extension's schema (``extensions/tasks``) is loaded
the same way and applies from 2026-07-28 on (:func:`tasks_extension`). Validators
are built once per definition and kept.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jsonschema.validators

__all__ = [
    "REVISIONS",
    "SCHEMA_DIR",
    "TASKS_SCHEMA",
    "RevisionSchema",
    "definition_for_method",
    "methods",
    "schema_of",
    "tasks_extension",
]

SCHEMA_DIR = Path(__file__).parent / "schemas"
REVISIONS: tuple[str, ...] = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")

# Union definitions that happen to carry a ``method`` const in some revisions
# (2026-07-28's ``ClientNotification`` is a single-member union): never "the"
# definition of a method.
_UNION_NAMES = frozenset(
    {
        "ClientRequest",
        "ServerRequest",
        "ClientNotification",
        "ServerNotification",
        "Request",
        "Notification",
    }
)


class RevisionSchema:
    """One revision's schema document and lazily built, cached validators."""

    def __init__(self, revision: str) -> None:
        path = SCHEMA_DIR / revision / "schema.json"
        if not path.is_file():
            raise AssertionError(f"no schema for revision {revision!r} at {path}")
        self.revision = revision
        self.root: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        self.defs_key = "$defs" if "$defs" in self.root else "definitions"
        self.defs: dict[str, Any] = self.root[self.defs_key]
        self.cls = jsonschema.validators.validator_for(self.root)
        self.cls.check_schema(self.root)
        by_method: dict[str, list[str]] = {}
        for name, definition in self.defs.items():
            const = _method_const(definition)
            if (
                isinstance(const, str)
                and name not in _UNION_NAMES
                and not name.startswith("JSONRPC")
            ):
                by_method.setdefault(const, []).append(name)
        self.by_method = {m: tuple(sorted(names)) for m, names in by_method.items()}
        self._validators: dict[str, Any] = {}

    def has(self, name: str) -> bool:
        return name in self.defs

    def first(self, *names: str) -> str:
        for name in names:
            if name in self.defs:
                return name
        raise AssertionError(f"[{self.revision}] schema defines none of {names}")

    def validator(self, name: str) -> Any:
        validator = self._validators.get(name)
        if validator is None:
            if name not in self.defs:
                raise AssertionError(f"[{self.revision}] schema has no definition {name!r}")
            # The root document carries only ``$schema`` and the definitions, so adding a
            # ``$ref`` makes it "validate as <name>" in both draft-07 and 2020-12, with all
            # local references resolving against the same document.
            schema = {**self.root, "$ref": f"#/{self.defs_key}/{name}"}
            validator = self._validators[name] = self.cls(schema)
        return validator


def _method_const(definition: Mapping[str, Any]) -> Any:
    """The ``method`` a definition fixes: in its properties, or (the tasks extension's
    style) in one of its ``allOf`` parts."""
    parts = [definition, *definition.get("allOf", ())]
    for part in parts:
        const = part.get("properties", {}).get("method", {}).get("const")
        if const is not None:
            return const
    return None


@functools.cache
def schema_of(revision: str) -> RevisionSchema:
    return RevisionSchema(revision)


#: Where the tasks extension's schema is (relative to :data:`SCHEMA_DIR`), and from which
#: revision on it applies.
TASKS_SCHEMA = "extensions/tasks"
_TASKS_SINCE = "2026-07-28"


def tasks_extension(rev: RevisionSchema) -> RevisionSchema | None:
    """The tasks extension's schema, for a revision that has the extension."""
    return schema_of(TASKS_SCHEMA) if rev.revision >= _TASKS_SINCE else None


def methods(revision: str) -> frozenset[str]:
    """Every method name the revision defines a request or notification for."""
    return frozenset(schema_of(revision).by_method)


def definition_for_method(revision: str, method: str) -> tuple[str, ...]:
    """Definition name(s) whose ``properties.method.const`` is ``method`` (empty if unknown)."""
    return schema_of(revision).by_method.get(method, ())
