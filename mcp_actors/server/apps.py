"""MCP Apps (``io.modelcontextprotocol/ui``): a tool whose result a host shows in an HTML view.

An app is two ordinary primitives tied together by ``_meta``:

- a **UI resource**: a ``ui://`` resource of mime type ``text/html;profile=mcp-app``
  whose content is an HTML5 document, with its sandbox wishes in ``_meta.ui``
  (``csp`` origins, ``permissions``, ``domain``, ``prefersBorder``);
- a **tool** naming it in ``_meta.ui.resourceUri`` (and who may call it in
  ``_meta.ui.visibility``: ``"model"``, ``"app"``, both by default).

::

    add_ui_resource(server, "ui://weather/dashboard", DASHBOARD_HTML,
                    name="weather_dashboard", csp=UiCsp(connect_domains=["https://api.example"]))

    @server.tool(meta=ui_tool_meta("ui://weather/dashboard"))
    async def get_weather(city: str, ctx: Context) -> str:
        ...   # the text is the fallback a client without the extension shows

Hosts that render apps declare the extension with the mime types they render
(``{"mimeTypes": ["text/html;profile=mcp-app"]}``); :func:`client_renders_apps`
reads that from a request's context, so a tool may adapt what it returns. The
server declares the extension too (``{}``) once it has a UI resource. The views'
own protocol (``ui/*`` over ``postMessage``) runs between the view and the host,
never reaches the server, and is not implemented here.

The specification: ``specification/2026-01-26/apps.mdx`` of modelcontextprotocol/ext-apps.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final, Literal

import msgspec

from ..protocol import types as t
from .extensions import Extension

if TYPE_CHECKING:
    from .app import Server
    from .context import Context

__all__ = [
    "APP_MIME_TYPE",
    "UI_EXTENSION",
    "Permission",
    "UiCsp",
    "Visibility",
    "add_ui_resource",
    "client_renders_apps",
    "ui_resource_meta",
    "ui_tool_meta",
]

#: The Apps extension's identifier.
UI_EXTENSION: Final = "io.modelcontextprotocol/ui"
#: The mime type of an HTML app view.
APP_MIME_TYPE: Final = "text/html;profile=mcp-app"

Visibility = Literal["model", "app"]
Permission = Literal["camera", "microphone", "geolocation", "clipboardWrite"]


class UiCsp(msgspec.Struct, kw_only=True, rename="camel", omit_defaults=True):
    """The origins a view may reach (each empty: none; the host's restrictive default)."""

    connect_domains: list[str] = msgspec.field(default_factory=list)
    resource_domains: list[str] = msgspec.field(default_factory=list)
    frame_domains: list[str] = msgspec.field(default_factory=list)
    base_uri_domains: list[str] = msgspec.field(default_factory=list)
    wasm_unsafe_eval: bool = False


def ui_resource_meta(
    *,
    csp: UiCsp | None = None,
    permissions: Sequence[Permission] = (),
    domain: str | None = None,
    prefers_border: bool | None = None,
) -> dict[str, Any]:
    """The ``_meta`` of a UI resource (and of its contents): ``{"ui": {...}}``."""
    ui: dict[str, Any] = {}
    if csp is not None:
        ui["csp"] = msgspec.to_builtins(csp)
    if permissions:
        ui["permissions"] = {permission: {} for permission in permissions}
    if domain is not None:
        ui["domain"] = domain
    if prefers_border is not None:
        ui["prefersBorder"] = prefers_border
    return {"ui": ui}


def ui_tool_meta(
    resource_uri: str, *, visibility: Sequence[Visibility] = ("model", "app")
) -> dict[str, Any]:
    """A tool's ``_meta`` linking it to the view ``resource_uri`` (a ``ui://`` URI)."""
    _check_ui_uri(resource_uri)
    if not visibility or any(who not in ("model", "app") for who in visibility):
        raise ValueError(f"visibility must be a non-empty subset of model, app: {visibility!r}")
    return {"ui": {"resourceUri": resource_uri, "visibility": list(visibility)}}


def _check_ui_uri(uri: str) -> None:
    if not uri.startswith("ui://") or len(uri) == len("ui://"):
        raise ValueError(f"an app view's URI must use the ui:// scheme, not {uri!r}")


def add_ui_resource(
    server: Server,
    uri: str,
    html: str,
    *,
    name: str,
    description: str | None = None,
    csp: UiCsp | None = None,
    permissions: Sequence[Permission] = (),
    domain: str | None = None,
    prefers_border: bool | None = None,
) -> None:
    """Serve the HTML view ``uri`` (``ui://``) and declare the Apps extension.

    The resource is listed (hosts may also find it through tools' ``_meta``); its
    ``resources/read`` contents carry the same ``_meta.ui`` as its listing.
    """
    _check_ui_uri(uri)
    meta = ui_resource_meta(
        csp=csp, permissions=permissions, domain=domain, prefers_border=prefers_border
    )

    def read() -> t.ResourceContents:
        return t.ResourceContents(uri=uri, mime_type=APP_MIME_TYPE, text=html, meta=meta)

    server.resource(uri, name=name, description=description, mime_type=APP_MIME_TYPE, meta=meta)(
        read
    )
    if UI_EXTENSION not in server.extensions:
        server.add_extension(Extension(UI_EXTENSION))


def client_renders_apps(ctx: Context) -> bool:
    """Whether the client of this request renders HTML app views (it declared the
    extension with ``text/html;profile=mcp-app`` among its ``mimeTypes``)."""
    settings = ctx.client_extension(UI_EXTENSION)
    if settings is None:
        return False
    mime_types = settings.get("mimeTypes")
    return isinstance(mime_types, list) and APP_MIME_TYPE in mime_types
