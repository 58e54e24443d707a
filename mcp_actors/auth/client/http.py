"""The HTTP client of the OAuth exchanges (discovery, registration, tokens, the headless
user agent): short-lived, no redirects followed, and sharing one TLS context —
building one loads the CA bundle, which costs more than the exchanges themselves."""

from __future__ import annotations

import functools
import ssl

import httpx


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The default verifying TLS context, built once per process."""
    return httpx.create_ssl_context()


def oauth_http_client(
    timeout: float, transport: httpx.AsyncBaseTransport | None = None
) -> httpx.AsyncClient:
    """A client for one OAuth exchange (close it after: ``async with``)."""
    return httpx.AsyncClient(
        timeout=timeout, follow_redirects=False, verify=tls_context(), transport=transport
    )
