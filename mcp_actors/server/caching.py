"""Caching hints of the modern era (2026-07-28): how long a client may keep a result.

``server/discover``, ``tools/list``, ``prompts/list``, ``resources/list``,
``resources/templates/list`` and ``resources/read`` results carry ``ttlMs`` (how many
milliseconds the client may reuse the result before asking again; 0: it is stale at
once) and ``cacheScope`` (``"public"``: any client or shared cache may reuse it;
``"private"``: only within the same authorization context). Legacy sessions never
see them.

A :class:`CacheHint` says both. A server has one default (``Server(cache=...)``,
``ttl_ms=0, scope="private"`` unless told otherwise, the safe choice: nothing is
reused, nothing shared), may override it per method
(``server.set_cache_hint("tools/list", CacheHint(60_000, "public"))``) and per
resource (``@server.resource(uri, cache=CacheHint(...))``, for its
``resources/read``). One list has one hint: every page of it gets the same.
"""

from __future__ import annotations

from typing import Final, Literal

import attrs

#: The methods whose results carry caching hints.
CACHEABLE_METHODS: Final = frozenset(
    {
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        # the Skills extension (io.modelcontextprotocol/skills)
        "skills/list",
        "skills/get",
    }
)


def _non_negative(instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"ttl_ms must be an integer >= 0, not {value!r}")


def _scope(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if value not in ("public", "private"):
        raise ValueError(f"scope must be 'public' or 'private', not {value!r}")


@attrs.frozen
class CacheHint:
    """``ttlMs`` and ``cacheScope`` of a cacheable result."""

    ttl_ms: int = attrs.field(default=0, validator=_non_negative)
    scope: Literal["public", "private"] = attrs.field(default="private", validator=_scope)


def check_cacheable(method: str) -> None:
    """Raise ValueError unless ``method``'s results carry caching hints."""
    if method not in CACHEABLE_METHODS:
        raise ValueError(
            f"{method!r} results carry no caching hints; these do: "
            + ", ".join(sorted(CACHEABLE_METHODS))
        )
