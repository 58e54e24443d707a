"""Gateways: servers fronting other servers — proxies, mounted upstreams, a TOML config.

``proxy(target)`` is a Server that serves what a remote server offers, over one
long-lived client (:class:`Upstream`); ``server.mount(Upstream(target), prefix=...)``
puts several behind one endpoint; :mod:`.config` builds such a gateway from a TOML
file (``mcp-actors run gateway.toml``).

(``Server`` cannot hold this itself: ``server/`` sits below ``client/`` in the
layering, and a proxy is a server built on a client.)
"""

from __future__ import annotations

from typing import Any

from ..client.targets import Target
from ..server.app import Server
from .upstream import Upstream, UpstreamUnavailable

__all__ = ["Upstream", "UpstreamUnavailable", "proxy"]


def proxy(target: Target | Upstream, *, name: str = "proxy", **options: Any) -> Server:
    """A Server serving ``target``'s tools, resources and prompts, unprefixed, over one
    long-lived client (see :class:`Upstream` for what crosses the hop). ``options`` are
    the Server's (``version``, ``middleware``...)."""
    upstream = target if isinstance(target, Upstream) else Upstream(target)
    server = Server(name, **options)
    server.mount(upstream)
    return server
