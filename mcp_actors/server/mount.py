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

What the mounting server declares (``capabilities.tools``, ``resources``,
``prompts``) is what its mounts really offer. An in-process server's offer is
known; a remote one's once its upstream has answered the handshake, so the serving
functions (``serve_session`` and those built on it, ``serve_http``,
``serve_websocket``) connect every mount (:meth:`Mounts.connect`) before the first
client arrives. One that has never been reached may offer anything: every kind is
declared, and it is left out of lists until it connects (its clients are then told
its lists changed). Declarations only grow: a kind once declared stays declared,
so a client's earlier answer stays true (the legacy era fixes them per session).
A mount answers an empty list of a kind it does not offer; one that cannot be
reached is left out of a list (the others answer) unless every mount failed.

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
import trio

from ..protocol import types as t
from ..protocol.errors import McpError
from ..protocol.versions import Revision
from ..runtime.actors import ActorHost
from ..runtime.bus import Bus
from ..runtime.request import InboundRequest

if TYPE_CHECKING:
    from .context import SessionView

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
#: What a server may offer, as named in its capabilities.
KINDS = frozenset({"tools", "resources", "prompts"})


def kind_of(method: str) -> str:
    """The kind of offering a method of :data:`MOUNTED_METHODS` is about ("tools"...)."""
    return method.split("/", 1)[0]


def offered_kinds(capabilities: t.ServerCapabilities) -> frozenset[str]:
    """The kinds a server's ``capabilities`` declare."""
    return frozenset(kind for kind in KINDS if getattr(capabilities, kind) is not msgspec.UNSET)


class Mountable(Protocol):
    """What :meth:`~.app.Server.mount` accepts besides a Server."""

    async def handle(
        self, method: str, params: Any, view: SessionView, request: InboundRequest
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

    def offers(self) -> frozenset[str] | None:
        """The kinds (:data:`KINDS`) it serves; None while that is not known (a remote
        server never reached yet)."""

    async def connect(self, host: ActorHost) -> None:
        """Get ready to serve, its connections kept as actors of ``host`` (the serving
        supervisor), so that :meth:`offers` is known. Never raises for a server that
        cannot be reached (it is logged, and tried again at the next request)."""


class InProcess(Protocol):
    """A server mounted in process, as its mount uses it (:class:`~.app.Server` is one)."""

    @property
    def bus(self) -> Bus: ...

    @property
    def mounts(self) -> Mounts: ...

    def capabilities(
        self, revision: Revision | None = None, *, stateless: bool = False
    ) -> t.ServerCapabilities: ...

    def view_of(self, view: SessionView) -> SessionView:
        """``view`` (the mounting server's side of a request) answering from this server."""
        ...


@attrs.define(eq=False)
class MountedServer:
    """An in-process server mounted in another: its handlers serve the caller's request."""

    server: InProcess

    async def handle(
        self, method: str, params: Any, view: SessionView, request: InboundRequest
    ) -> Any:
        inner = self.server.view_of(view)
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

    def offers(self) -> frozenset[str]:
        return offered_kinds(self.server.capabilities())

    async def connect(self, host: ActorHost) -> None:
        await self.server.mounts.connect(host)  # what it mounts itself

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
    #: Every kind declared so far for the mounts (declarations only grow).
    _declared: frozenset[str] = attrs.field(init=False, default=frozenset())

    def __bool__(self) -> bool:
        return bool(self._mounts)

    def kinds(self) -> frozenset[str]:
        """The kinds to declare for the mounts: what each offers (every kind for one
        not known yet), and whatever was declared before (see the module docstring)."""
        declared = self._declared
        for mount in self._mounts:
            offered = mount.target.offers()
            declared |= KINDS if offered is None else offered
        self._declared = declared
        return declared

    async def connect(self, host: ActorHost) -> None:
        """Connect every mount at once (each within its own time limit), so that what
        they offer is known before clients are told (see the module docstring)."""
        async with trio.open_nursery() as nursery:
            for mount in self._mounts:
                nursery.start_soon(mount.target.connect, host)

    def add(self, target: Mountable, prefix: str | None) -> Mount:
        _check_prefix(prefix)
        if any(mount.namespace.prefix == prefix for mount in self._mounts):
            raise ValueError(f"a server is already mounted with prefix {prefix!r}")
        mount = Mount(Namespace(prefix), target)
        self._mounts.append(mount)
        return mount

    async def list(self, method: str, view: SessionView, request: InboundRequest) -> list[Any]:
        """Every mounted server's items of list ``method``, named in its namespace,
        leaving out a mount that fails unless all of them do (then the first failure is
        raised). Each is asked, even one offering nothing of the kind when last known: an
        upstream that could not be reached is tried again that way."""
        field = LIST_FIELDS[method]
        found: list[Any] = []
        failures: list[McpError] = []
        answered = 0
        for mount in self._mounts:
            try:
                result = await mount.target.handle(method, t.PaginatedParams(), view, request)
            except McpError as failure:  # e.g. an upstream that cannot be reached
                failures.append(failure)
                continue
            answered += 1
            found.extend(_renamed(item, mount.namespace) for item in getattr(result, field))
        if failures and not answered:
            raise failures[0]
        return found

    def route_name(self, name: str) -> tuple[Mount, str] | None:
        """The mount whose namespace holds tool or prompt ``name``, and its own name for it."""
        return _first(self._mounts, lambda namespace: namespace.strip_name(name))

    def route_uri(self, uri: str) -> tuple[Mount, str] | None:
        """The mount whose namespace holds ``uri``, and its own URI for it."""
        return _first(self._mounts, lambda namespace: namespace.strip_uri(uri))

    def passes_input_through(
        self, name: str | None = None, *, uri: str | None = None
    ) -> bool | None:
        """Whether the mount serving tool or prompt ``name`` (or resource ``uri``) passes
        its upstream's questions through (:meth:`Mountable.passes_input_through`); None:
        no mount serves it."""
        routed = self.route_name(name) if name is not None else self.route_uri(uri or "")
        return None if routed is None else routed[0].target.passes_input_through()

    async def read(
        self, mount: Mount, uri: str, view: SessionView, request: InboundRequest
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
