"""Extensions: optional additions to MCP, negotiated under ``capabilities.extensions``.

An extension has an identifier ``{vendor-prefix}/{name}`` (``io.modelcontextprotocol/
skills``; a third party uses a reversed domain it owns: ``com.example/audit``) and a
settings object (``{}``: supported, no optional features). Each side declares the
extensions it supports in its capabilities — in both eras: a legacy session in
``initialize`` (params and result), a modern client in every request's
``_meta["io.modelcontextprotocol/clientCapabilities"]`` and a modern server in
``server/discover``. An extension is used only when both sides declare it; the side
that needs it and finds the other without it falls back to core behaviour, or
refuses (e.g. -32021 naming the missing capability).

A server offers one with :meth:`Server.add_extension <mcp_actors.server.app.Server.add_extension>`::

    server.add_extension(Extension("com.example/audit", {"retention": "30d"},
                                   handlers={"audit/list": list_audit}))

``handlers`` are the extension's own request methods, called like the built-in
ones with ``(server_session, request, params)``. A method the core protocol does
not know needs a row in the method table first (its params/result types and the
capability that gates it): :func:`~mcp_actors.protocol.methods.register_method`.
A request for it is refused with -32601 by a server that does not declare the
extension. Whether the *client* declared an extension is
``ctx.client_extension(identifier)`` (its settings, or None) — None as well on stateless
legacy HTTP, where each request is a session that never saw the ``initialize``.

The tasks extension (``io.modelcontextprotocol/tasks``) is the one the server declares
by itself, when a tool may run as a task (see :mod:`.tasks`); it cannot be added here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Container, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from ..protocol.extensions import check_identifier

if TYPE_CHECKING:
    from ..runtime.request import InboundRequest
    from .server_session import ServerSession

#: ``handler(server_session, request, params)``: answers one request of an extension's method.
ExtensionHandler = Callable[["ServerSession", "InboundRequest", Any], Awaitable[Any]]


def _identifier(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    check_identifier(value)


def _settings(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, Mapping) or not all(isinstance(key, str) for key in value):
        raise TypeError(f"extension settings must be a mapping with str keys, not {value!r}")


@attrs.frozen
class Extension:
    """One extension a server offers: its identifier, settings, and request methods."""

    identifier: str = attrs.field(validator=_identifier)
    settings: Mapping[str, Any] = attrs.field(factory=dict, validator=_settings)
    handlers: Mapping[str, ExtensionHandler] = attrs.field(factory=dict)


@attrs.define
class ExtensionRegistry:
    """The extensions a server offers, by identifier, and their methods' handlers."""

    _extensions: dict[str, Extension] = attrs.field(init=False, factory=dict)
    _handlers: dict[str, ExtensionHandler] = attrs.field(init=False, factory=dict)
    #: How many times the offer changed (what is declared may have).
    changes: int = attrs.field(init=False, default=0)

    def add(
        self, extension: Extension, *, replace: bool = False, core: Container[str] = ()
    ) -> None:
        """Offer ``extension``. ValueError if its identifier is offered already (unless
        ``replace``), or a method it handles is one of ``core`` or another extension's."""
        identifier = extension.identifier
        previous = self._extensions.get(identifier)
        if previous is not None and not replace:
            raise ValueError(
                f"extension {identifier!r} is already offered (remove it first, or add it"
                " with replace=True)"
            )
        for method in extension.handlers:
            owner = self._owner(method)
            if method in core or (owner is not None and owner != identifier):
                raise ValueError(
                    f"extension {identifier!r} cannot handle {method!r}: it is already"
                    f" handled by {owner or 'the core protocol'}"
                )
        if previous is not None:
            self.remove(identifier)
        self._extensions[identifier] = extension
        self._handlers.update(extension.handlers)
        self.changes += 1

    def remove(self, identifier: str) -> None:
        """Stop offering the extension ``identifier`` (KeyError if not offered)."""
        extension = self._extensions.pop(identifier)
        for method in extension.handlers:
            self._handlers.pop(method, None)
        self.changes += 1

    def _owner(self, method: str) -> str | None:
        for identifier, extension in self._extensions.items():
            if method in extension.handlers:
                return identifier
        return None

    def handler(self, method: str) -> ExtensionHandler | None:
        """The handler of an extension's ``method`` (None: no extension handles it)."""
        return self._handlers.get(method)

    def declared(self) -> dict[str, dict[str, Any]]:
        """``capabilities.extensions``: each identifier and its settings."""
        return {
            identifier: dict(extension.settings)
            for identifier, extension in self._extensions.items()
        }

    def __contains__(self, identifier: object) -> bool:
        return identifier in self._extensions

    def __getitem__(self, identifier: str) -> Extension:
        return self._extensions[identifier]
