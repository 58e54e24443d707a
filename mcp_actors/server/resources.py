"""Resources: fixed URIs and URI templates, read by calling a function, and what it returns.

A **fixed resource** is one URI (``config://app``); its function takes no
arguments (except, optionally, the request's ``Context``). A **resource template**
is a family (``users://{id}/profile``); its function's parameters *are* the
template's variables, typed by their hints and decoded like tool arguments::

    @server.resource("users://{id}/profile", mime_type="application/json")
    async def profile(id: int) -> dict[str, str]:       # "users://42/profile" -> id=42
        ...

What the function returns becomes the ``resources/read`` contents:

========================================  ==========================================
return value                              contents
========================================  ==========================================
``str``                                   one text item (``mime_type`` or text/plain)
``bytes``                                 one ``blob`` item (base64)
``ResourceContents`` / a list of them     as is
``ReadResourceResult``                    as is
anything else (dict, Struct, list...)     JSON text, ``application/json``
========================================  ==========================================

A URI that no resource and no template matches is answered with -32002
(``Resource not found``, ``data = {"uri": ...}``); a URI that matches a template
but whose values do not decode (``users://abc/profile`` for an ``int`` id) is
answered with -32602 naming the variable.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs
import msgspec
from msgspec import UNSET

from ..protocol import errors
from ..protocol import types as t
from ..protocol.errors import McpError
from .authorization import scope_set
from .caching import CacheHint
from .calling import call_refusable, is_async
from .signature import ToolSignature
from .uri_template import UriTemplate

if TYPE_CHECKING:
    from .context import Context

_to_json = msgspec.json.Encoder().encode


def resource_not_found(uri: str) -> McpError:
    """The -32002 error the spec prescribes for an unknown resource URI (legacy era; a
    modern request gets -32602 with the same ``data.uri``, see :mod:`.modern`)."""
    return McpError(errors.RESOURCE_NOT_FOUND, f"Resource not found: {uri}", {"uri": uri})


@attrs.define(eq=False)
class RegisteredResource:
    """A fixed resource or a resource template, and the function that reads it.

    ``definition`` is the ``Resource`` (fixed) or ``ResourceTemplate`` (template)
    listed to clients.
    """

    definition: t.Resource | t.ResourceTemplate
    template: UriTemplate
    function: Callable[..., Any]
    signature: ToolSignature
    #: The caching hint of its ``resources/read`` results (modern era); None: the server's.
    cache: CacheHint | None = None
    #: OAuth scopes a caller's token must carry to use it (see :mod:`.authorization`).
    scopes: frozenset[str] = attrs.field(default=frozenset(), converter=scope_set, kw_only=True)
    is_async: bool = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self.is_async = is_async(self.function)
        names = set(self.signature.argument_names)
        if names != set(self.template.variables):
            where = self.template.template
            if not self.template.is_template:
                raise TypeError(
                    f"resource {where!r} has no {{variables}}, so its function may take only a"
                    f" Context; it takes {sorted(names)}"
                )
            raise TypeError(
                f"resource template {where!r} has variables {sorted(self.template.variables)}"
                f" but its function takes {sorted(names)}: they must be the same"
            )

    @property
    def key(self) -> str:
        """The URI (fixed) or URI template (template) the resource is registered under."""
        return self.template.template

    @property
    def is_template(self) -> bool:
        return self.template.is_template

    @property
    def mime_type(self) -> str | None:
        mime_type = self.definition.mime_type
        return None if mime_type is UNSET else mime_type

    def match(self, uri: str) -> dict[str, str] | None:
        """Template variables if ``uri`` is this resource (``{}`` for a fixed one), else None."""
        return self.template.match(uri)

    async def read(
        self, uri: str, variables: Mapping[str, str], context: Context
    ) -> list[t.ResourceContents]:
        """Decode ``variables`` into the function's parameters, call it, convert its value."""
        signature = self.signature
        kwargs: dict[str, Any] = {}
        if signature.argument_names:
            try:
                decoded = msgspec.convert(dict(variables), signature.arguments, strict=False)
            except msgspec.ValidationError as invalid:
                raise errors.invalid_params(
                    f"{uri!r} does not fit resource template {self.key!r}: {invalid}"
                ) from None
            kwargs = {name: getattr(decoded, name) for name in signature.argument_names}
        if signature.context_parameter is not None:
            kwargs[signature.context_parameter] = context
        value = await call_refusable(f"resource {uri!r}", self.function, kwargs, self.is_async)
        return to_contents(value, uri, self.mime_type)


def to_contents(value: Any, uri: str, mime_type: str | None = None) -> list[t.ResourceContents]:
    """The ``resources/read`` contents for what a resource function returned (see the table)."""
    if isinstance(value, t.ReadResourceResult):
        return value.contents
    if isinstance(value, t.ResourceContents):
        return [value]
    if (
        isinstance(value, (list, tuple))
        and value
        and all(isinstance(item, (t.ResourceContents, str, bytes)) for item in value)
    ):
        return [item for element in value for item in to_contents(element, uri, mime_type)]
    if isinstance(value, str):
        return [t.ResourceContents(uri=uri, mime_type=mime_type or "text/plain", text=value)]
    if isinstance(value, (bytes, bytearray, memoryview)):
        return [
            t.ResourceContents(
                uri=uri,
                mime_type=mime_type or "application/octet-stream",
                blob=base64.b64encode(value).decode("ascii"),
            )
        ]
    text = _to_json(msgspec.to_builtins(value)).decode()
    return [t.ResourceContents(uri=uri, mime_type=mime_type or "application/json", text=text)]


@attrs.define(eq=False)
class ResourceRegistry:
    """Fixed resources by URI and templates by template string, in registration order."""

    fixed: dict[str, RegisteredResource] = attrs.field(factory=dict)
    templates: dict[str, RegisteredResource] = attrs.field(factory=dict)

    def add(self, resource: RegisteredResource) -> None:
        table = self.templates if resource.is_template else self.fixed
        table[resource.key] = resource

    def remove(self, key: str) -> None:
        """Remove the fixed resource with URI ``key``, or else the template ``key``."""
        if key in self.fixed:
            del self.fixed[key]
        elif key in self.templates:
            del self.templates[key]
        else:
            raise KeyError(key)

    def __len__(self) -> int:
        return len(self.fixed) + len(self.templates)

    def __contains__(self, key: object) -> bool:
        """Whether a fixed resource with URI ``key``, or a template ``key``, is registered."""
        return key in self.fixed or key in self.templates

    def knows(self, uri: str) -> bool:
        """Whether a fixed resource or a template serves ``uri``."""
        return uri in self.fixed or any(t.match(uri) is not None for t in self.templates.values())

    def resolve(self, uri: str) -> tuple[RegisteredResource, dict[str, str]]:
        """The resource serving ``uri`` and its variables; -32002 if there is none.

        A fixed resource wins over templates; templates are tried in registration order.
        """
        fixed = self.fixed.get(uri)
        if fixed is not None:
            return fixed, {}
        for template in self.templates.values():
            variables = template.match(uri)
            if variables is not None:
                return template, variables
        raise resource_not_found(uri)

    def definitions(self) -> list[t.Resource]:
        return [r.definition for r in self.fixed.values()]  # type: ignore[misc]

    def template_definitions(self) -> list[t.ResourceTemplate]:
        return [r.definition for r in self.templates.values()]  # type: ignore[misc]
