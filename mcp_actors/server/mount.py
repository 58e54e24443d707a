"""Mounting: another server's tools, resources and prompts served by this one, under a prefix.

``server.mount(other, prefix="weather")`` makes ``other``'s offer part of
``server``'s, namespaced so that several mounted servers cannot collide:

- a tool or prompt ``forecast`` is listed and called as ``weather_forecast``;
- a resource ``data://today`` (or template ``data://{day}``) is listed and read as
  ``data://weather/today`` (``data://weather/{day}``): the prefix becomes the first
  segment after the scheme, as FastMCP does; a URI without ``://`` gets
  ``weather+`` in front of it.

Without a prefix, names and URIs pass unchanged. What the mounting server
registers itself wins over a mounted item of the same name. A mounted server's
list changes reach the mounting server's clients (``notifications/*/list_changed``).

What can be mounted is a :class:`Mountable`: an in-process :class:`~.app.Server`
(its handlers run in the caller's request, so progress, logging, questions to the
client and cancellation are the request's own, at the cost of a function call), or
a remote server behind a client (``mcp_actors.gateway.Upstream``). Mounted
resources cannot be subscribed to (``resources/subscribe`` answers -32002), and
completions are not forwarded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import attrs
import msgspec

from ..protocol import types as t
from ..runtime.request import InboundRequest

if TYPE_CHECKING:
    from .app import Server, ServerSession

#: The methods a mounted server answers for its mounting server.
MOUNTED_METHODS = (
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
)
#: A list method and the field of its result holding the items.
LIST_FIELDS = {
    "tools/list": "tools",
    "resources/list": "resources",
    "resources/templates/list": "resource_templates",
    "prompts/list": "prompts",
}


class Mountable(Protocol):
    """What :meth:`~.app.Server.mount` accepts besides a Server."""

    async def handle(
        self, method: str, params: Any, view: ServerSession, request: InboundRequest
    ) -> Any:
        """Answer one of :data:`MOUNTED_METHODS` (names and URIs already un-prefixed) for
        ``request``, served by the mounting server's ``view``. A list method returns
        every item (one result, no ``nextCursor``)."""

    def watch(self, on_change: Callable[[str], None]) -> None:
        """Call ``on_change(method)`` for each ``notifications/*/list_changed`` it has."""

    def passes_input_through(self) -> bool:
        """Whether a modern (2026-07-28) call's questions go back to the caller inside
        the result :meth:`handle` returns (``input_required``, whose retry it forwards
        as it is) rather than through the request's Context. Such a call needs no actor
        that can park (see :mod:`.mrtr`): it is served in the request's own task."""


@attrs.define(eq=False)
class MountedServer:
    """An in-process server mounted in another: its handlers serve the caller's request."""

    server: Server

    async def handle(
        self, method: str, params: Any, view: ServerSession, request: InboundRequest
    ) -> Any:
        inner = view.serving(self.server)
        field = LIST_FIELDS.get(method)
        if field is None:
            return await inner.serve_method(method, params, request)
        items: list[Any] = []
        cursor: str | msgspec.UnsetType = msgspec.UNSET
        while True:  # every page of it (the mounting server pages the merged list)
            page = await inner.serve_method(method, t.PaginatedParams(cursor=cursor), request)
            items.extend(getattr(page, field))
            cursor = page.next_cursor
            if not cursor:
                return msgspec.structs.replace(page, **{field: items})

    def passes_input_through(self) -> bool:
        return False  # its handlers ask through their Context

    def watch(self, on_change: Callable[[str], None]) -> None:
        def receive(change: Any) -> int:
            if change.method.endswith("/list_changed"):
                on_change(change.method)
                return 1
            return 0

        self.server.bus.subscribe(receive)


@attrs.frozen
class Namespace:
    """How a mount's names and URIs are prefixed (see the module docstring)."""

    prefix: str | None

    def name(self, name: str) -> str:
        return name if self.prefix is None else f"{self.prefix}_{name}"

    def strip_name(self, name: str) -> str | None:
        if self.prefix is None:
            return name
        head = f"{self.prefix}_"
        return name[len(head) :] if name.startswith(head) else None

    def uri(self, uri: str) -> str:
        if self.prefix is None:
            return uri
        scheme, separator, rest = uri.partition("://")
        if not separator:
            return f"{self.prefix}+{uri}"
        return f"{scheme}://{self.prefix}/{rest}"

    def strip_uri(self, uri: str) -> str | None:
        if self.prefix is None:
            return uri
        scheme, separator, rest = uri.partition("://")
        if not separator:
            head = f"{self.prefix}+"
            return uri[len(head) :] if uri.startswith(head) else None
        head = f"{self.prefix}/"
        return f"{scheme}://{rest[len(head) :]}" if rest.startswith(head) else None


@attrs.frozen
class Mount:
    """One mounted server and its namespace."""

    namespace: Namespace
    target: Mountable


def _check_prefix(prefix: str | None) -> None:
    if prefix is not None and not prefix.replace("-", "").replace("_", "").isalnum():
        raise ValueError(f"mount prefix must be letters, digits, '-' and '_', not {prefix!r}")


@attrs.define(eq=False)
class Mounts:
    """The servers mounted in one server, and how a request finds its way to one."""

    _mounts: list[Mount] = attrs.field(init=False, factory=list)

    def __bool__(self) -> bool:
        return bool(self._mounts)

    def add(self, target: Mountable, prefix: str | None) -> Mount:
        _check_prefix(prefix)
        if any(mount.namespace.prefix == prefix for mount in self._mounts):
            raise ValueError(f"a server is already mounted with prefix {prefix!r}")
        mount = Mount(Namespace(prefix), target)
        self._mounts.append(mount)
        return mount

    async def list(self, method: str, view: ServerSession, request: InboundRequest) -> list[Any]:
        """Every mounted server's items of list ``method``, named in its namespace."""
        field = LIST_FIELDS[method]
        found: list[Any] = []
        for mount in self._mounts:
            result = await mount.target.handle(method, t.PaginatedParams(), view, request)
            found.extend(_renamed(item, mount.namespace) for item in getattr(result, field))
        return found

    def route_name(self, name: str) -> tuple[Mount, str] | None:
        """The mount whose namespace holds tool or prompt ``name``, and its own name for it."""
        return _first(self._mounts, lambda namespace: namespace.strip_name(name))

    def route_uri(self, uri: str) -> tuple[Mount, str] | None:
        """The mount whose namespace holds ``uri``, and its own URI for it."""
        return _first(self._mounts, lambda namespace: namespace.strip_uri(uri))

    async def read(
        self, mount: Mount, uri: str, view: ServerSession, request: InboundRequest
    ) -> t.ReadResourceResult:
        """Read ``uri`` of ``mount``; the contents carry their namespaced URIs."""
        result: t.ReadResourceResult = await mount.target.handle(
            "resources/read", t.ReadResourceParams(uri=uri), view, request
        )
        namespace = mount.namespace
        result.contents = [
            msgspec.structs.replace(item, uri=namespace.uri(item.uri)) for item in result.contents
        ]
        return result


def _first(
    mounts: Sequence[Mount], strip: Callable[[Namespace], str | None]
) -> tuple[Mount, str] | None:
    for mount in mounts:
        inner = strip(mount.namespace)
        if inner is not None:
            return mount, inner
    return None


def _renamed(item: Any, namespace: Namespace) -> Any:
    if isinstance(item, (t.Tool, t.Prompt)):
        return msgspec.structs.replace(item, name=namespace.name(item.name))
    if isinstance(item, t.Resource):
        return msgspec.structs.replace(item, uri=namespace.uri(item.uri))
    if isinstance(item, t.ResourceTemplate):
        return msgspec.structs.replace(item, uri_template=namespace.uri(item.uri_template))
    return item
