"""Fit an outgoing object to an older revision: leave out the fields it does not have.

The types of :mod:`.types` cover every revision, so a ``Tool`` may hold an ``icons``
list (2025-11-25) that a 2024-11-05 client's schema does not know. Unknown fields
are harmless to a lenient peer, but strict ones validate against their revision's
schema; so what a session sends holds only what its revision defines.

:data:`_LACKING` says, per type, which field needs which :class:`.versions.Revision`
flag (read off the official schemas: item ``_meta`` and ``title`` came with
2025-06-18, ``icons`` with 2025-11-25, tool ``annotations`` with 2025-03-26).
:func:`fit` applies it to an object and everything nested in it; for a revision that
has every field it returns the object itself, untouched and uncopied. What to look at in
an object of each type is worked out once per revision (:func:`_plan`): a result is
walked only where something can change.
"""

from __future__ import annotations

import types
import typing
from typing import Any, Final, TypeVar

import msgspec
from msgspec import UNSET

from . import types as t
from .versions import REVISIONS, Revision

T = TypeVar("T")

_ITEM = (("title", "structured_output"), ("meta", "structured_output"), ("icons", "icons"))
_CONTENT_META = (("meta", "structured_output"),)

#: type -> ((field, the Revision flag the field needs), ...)
_LACKING: Final[dict[type[msgspec.Struct], tuple[tuple[str, str], ...]]] = {
    t.Tool: (
        ("annotations", "tool_annotations"),
        ("output_schema", "structured_output"),
        *_ITEM,
    ),
    t.Resource: _ITEM,
    t.ResourceTemplate: _ITEM,
    t.Prompt: _ITEM,
    t.PromptArgument: (("title", "structured_output"),),
    t.Implementation: (
        ("title", "structured_output"),
        ("description", "icons"),
        ("website_url", "icons"),
        ("icons", "icons"),
    ),
    t.Annotations: (("last_modified", "structured_output"),),
    t.CallToolResult: (("structured_content", "structured_output"),),
    t.TextContent: _CONTENT_META,
    t.ImageContent: _CONTENT_META,
    t.AudioContent: _CONTENT_META,
    t.EmbeddedResource: _CONTENT_META,
    t.ResourceContents: _CONTENT_META,
}

#: revision name -> type -> the fields to leave out (only types that lose some)
_CLEARED: Final[dict[str, dict[type[msgspec.Struct], tuple[str, ...]]]] = {
    name: {
        kind: cleared
        for kind, fields in _LACKING.items()
        if (cleared := tuple(field for field, flag in fields if not getattr(revision, flag)))
    }
    for name, revision in REVISIONS.items()
}


#: The names of the revisions that lack some field the types can hold (:func:`fit` has
#: work to do for them; for the others it returns its argument).
LACKING_REVISIONS: Final = frozenset(name for name, cleared in _CLEARED.items() if cleared)


def fit(value: T, revision: Revision) -> T:
    """``value`` without the fields ``revision`` lacks, at any depth (a copy where needed)."""
    cleared = _CLEARED[revision.name]
    if not cleared:
        return value
    return _fit(value, revision.name, cleared)  # type: ignore[no-any-return]


#: (type, revision name) -> (its fields the revision lacks, its fields worth walking into)
_Plan = tuple[tuple[str, ...], tuple[str, ...]]
_PLANS: Final[dict[tuple[type, str], _Plan]] = {}


def _fit(value: Any, name: str, cleared: dict[type[msgspec.Struct], tuple[str, ...]]) -> Any:
    """``value`` fitted; the very object when nothing in it changes."""
    if isinstance(value, list):
        fitted = [_fit(item, name, cleared) for item in value]
        return value if all(a is b for a, b in zip(fitted, value, strict=True)) else fitted
    if not isinstance(value, msgspec.Struct):
        return value
    kind = type(value)
    plan = _PLANS.get((kind, name))
    if plan is None:
        plan = _PLANS[kind, name] = _plan(kind, cleared)
    dropped, walked = plan
    changes: dict[str, Any] = {
        field: UNSET for field in dropped if getattr(value, field) is not UNSET
    }
    for field in walked:
        inner = getattr(value, field)
        if isinstance(inner, (msgspec.Struct, list)):
            fitted = _fit(inner, name, cleared)
            if fitted is not inner:
                changes[field] = fitted
    return msgspec.structs.replace(value, **changes) if changes else value


def _plan(
    kind: type[msgspec.Struct], cleared: dict[type[msgspec.Struct], tuple[str, ...]]
) -> _Plan:
    """What fitting an object of ``kind`` involves: the fields to leave out, and those whose
    declared type may hold something to fit (a type that loses fields, at any depth, or
    ``Any``: looked at when met). Worked out once per type and revision, so that a
    result is walked only where it can change."""
    dropped = cleared.get(kind, ())
    walked = tuple(
        field.name
        for field in msgspec.structs.fields(kind)
        if field.name not in dropped and _may_hold(field.type, cleared, set())
    )
    return dropped, walked


def _may_hold(
    annotation: Any, cleared: dict[type[msgspec.Struct], tuple[str, ...]], seen: set[type]
) -> bool:
    """Whether a value declared as ``annotation`` may hold an object that fitting changes
    (walked as :func:`_fit` walks: into Structs and lists, not dicts or tuples)."""
    if annotation is Any or annotation is object:
        return True
    if isinstance(annotation, type) and issubclass(annotation, msgspec.Struct):
        if annotation in cleared:
            return True
        if annotation in seen:
            return False
        seen.add(annotation)
        return any(_may_hold(f.type, cleared, seen) for f in msgspec.structs.fields(annotation))
    origin = typing.get_origin(annotation)
    if origin is list or origin is typing.Union or origin is types.UnionType:
        return any(_may_hold(argument, cleared, seen) for argument in typing.get_args(annotation))
    return False
