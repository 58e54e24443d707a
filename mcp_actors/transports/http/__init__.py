"""HTTP transports: Streamable HTTP (both eras) and legacy HTTP+SSE, server and client.

Each module does one job:

Front ends (bytes on sockets to :mod:`.asgi` calls):
    :mod:`.lean` — our HTTP/1.1 server, parsing with :mod:`.wire` (httptools);
    :mod:`.hypercorn_front` — the same app under hypercorn (HTTP/1.1 and HTTP/2);
    :mod:`.listen_socket` — the listening socket, shared by workers;
    :mod:`.connection_gate` — connection caps, reservations and send timeouts.

The application (an ASGI callable, see :mod:`.app`):
    :mod:`.asgi` — the request/response vocabulary every handler speaks;
    :mod:`.endpoint` — the Streamable HTTP endpoint, sessions of the handshake era;
    :mod:`.modern` — the 2026-07-28 per-request era on the same endpoint;
    :mod:`.exchange` — one request served in the POST's own task (stateless, modern);
    :mod:`.session_stream` — a session's message stream and the POST/GET streams it feeds;
    :mod:`.sessions` — the session table, its bounds and its ids;
    :mod:`.event_store` — what a resumable event stream replays;
    :mod:`.inbox` — the bounded queue from the POSTs to a session;
    :mod:`.legacy_sse` — the 2024-11-05 HTTP+SSE transport;
    :mod:`.auth` — bearer tokens and scopes per request;
    :mod:`.security` — Origin and Host checks (DNS rebinding);
    :mod:`.config` — :class:`~.config.HttpConfig`, every HTTP setting and bound;
    :mod:`.sse` — the ``text/event-stream`` codec (server and client).

Clients:
    :mod:`.client` — the Streamable HTTP client; :mod:`.sse_client` — the legacy
    HTTP+SSE client; :mod:`.client_base` — what both share (httpx, request bodies).
"""
