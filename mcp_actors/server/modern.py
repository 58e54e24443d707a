"""What a server adds to a modern (2026-07-28) result, and the errors that era renames.

The handlers of :mod:`.handlers` serve both eras alike: they read the revision
from ``server_session.state`` and never ask which era they serve. What differs is
done here, around them, once per modern request:

- every result gets ``resultType: "complete"`` and the server's identity in
  ``_meta["io.modelcontextprotocol/serverInfo"]`` (unless the handler set its own);
- cacheable results (see :mod:`.caching`) get ``ttlMs`` and ``cacheScope``;
- a resource the server does not know is -32602 with ``data.uri`` in this era,
  not the legacy -32002.

The result is copied, never changed in place: a tool may return the same
``CallToolResult`` object to a legacy session next, which must not see these fields.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ..protocol import errors
from ..protocol import types as t
from ..protocol.errors import McpError
from ..protocol.modern import SERVER_INFO_KEY
from ..protocol.versions import Revision
from .caching import CacheHint


def finish_result(
    result: Any, *, server_info: t.Implementation, cache_hint: CacheHint | None
) -> Any:
    """A copy of ``result`` with the modern era's fields (see the module docstring)."""
    if not isinstance(result, t.Result):
        return result
    meta = dict(result.meta) if isinstance(result.meta, dict) else {}
    meta.setdefault(SERVER_INFO_KEY, msgspec.to_builtins(server_info))
    changes: dict[str, Any] = {"meta": meta}
    if result.result_type is msgspec.UNSET:
        changes["result_type"] = "complete"
    if isinstance(result, t.CacheableResult) and cache_hint is not None:
        if result.ttl_ms is msgspec.UNSET:
            changes["ttl_ms"] = cache_hint.ttl_ms
        if result.cache_scope is msgspec.UNSET:
            changes["cache_scope"] = cache_hint.scope
    return msgspec.structs.replace(result, **changes)


def era_error(error: McpError, revision: Revision) -> McpError:
    """``error`` as ``revision`` spells it: an unknown resource is -32602 from 2026-07-28 on."""
    if error.code == errors.RESOURCE_NOT_FOUND and revision.resource_not_found != error.code:
        return McpError(revision.resource_not_found, error.message, error.data)
    return error
