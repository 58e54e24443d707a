"""OAuth ``scope`` strings: space-separated, case-sensitive, unordered (RFC 6749 §3.3).

A scope set is kept as a tuple in first-seen order, so a request names its scopes
in a stable, readable order (``"files:read files:write"``) and a union adds the new
ones at the end.
"""

from __future__ import annotations

from collections.abc import Iterable

Scopes = tuple[str, ...]


def parse_scope(scope: str | Iterable[str] | None) -> Scopes:
    """The scopes of a ``scope`` string (or of an iterable of them), duplicates dropped."""
    if scope is None:
        return ()
    parts = scope.split() if isinstance(scope, str) else (s for item in scope for s in item.split())
    return tuple(dict.fromkeys(parts))


def format_scope(scopes: Iterable[str]) -> str | None:
    """The ``scope`` string of a set, or None for no scope (then the parameter is omitted)."""
    found = parse_scope(list(scopes))
    return " ".join(found) if found else None


def union(*sets: str | Iterable[str] | None) -> Scopes:
    """Every scope of every set, in first-seen order."""
    merged: dict[str, None] = {}
    for one in sets:
        merged.update(dict.fromkeys(parse_scope(one)))
    return tuple(merged)


def missing(required: str | Iterable[str] | None, granted: str | Iterable[str] | None) -> Scopes:
    """The required scopes not granted (empty when the grant covers the requirement)."""
    have = set(parse_scope(granted))
    return tuple(scope for scope in parse_scope(required) if scope not in have)
