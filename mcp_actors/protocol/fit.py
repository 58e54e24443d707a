"""Fit an outgoing object to an older revision: leave out the fields it does not have.

The types of :mod:`.types` cover every revision, so a ``Tool`` may hold an ``icons``
list (2025-11-25) that a 2024-11-05 client's schema does not know. Unknown fields
are harmless to a lenient peer, but strict ones validate against their revision's
schema; so what a session sends holds only what its revision defines.

:data:`_LACKING` says, per type, which field needs which :class:`.versions.Revision`
flag (read off the official schemas: item ``_meta`` and ``title`` came with
2025-06-18, ``icons`` with 2025-11-25, tool ``annotations`` with 2025-03-26).
:func:`fit` applies it to an object and everything nested in it; for a revision that
has every field it returns the object itself, untouched and uncopied.
"""

from __future__ import annotations

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


def lacks_fields(revision: Revision) -> bool:
    """Whether ``revision`` lacks any field the types can hold (so :func:`fit` has work)."""
    return bool(_CLEARED[revision.name])


def fit(value: T, revision: Revision) -> T:
    """``value`` without the fields ``revision`` lacks, at any depth (a copy where needed)."""
    cleared = _CLEARED[revision.name]
    if not cleared:
        return value
    return _fit(value, cleared)  # type: ignore[no-any-return]


def _fit(value: Any, cleared: dict[type[msgspec.Struct], tuple[str, ...]]) -> Any:
    if isinstance(value, list):
        return [_fit(item, cleared) for item in value]
    if not isinstance(value, msgspec.Struct):
        return value
    changes: dict[str, Any] = {
        field: UNSET for field in cleared.get(type(value), ()) if getattr(value, field) is not UNSET
    }
    for field in value.__struct_fields__:
        if field in changes:
            continue
        inner = getattr(value, field)
        if isinstance(inner, (msgspec.Struct, list)):
            fitted = _fit(inner, cleared)
            if fitted != inner:
                changes[field] = fitted
    return msgspec.structs.replace(value, **changes) if changes else value
