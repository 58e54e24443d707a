"""Protocol revisions: which ones we speak, how one is chosen, and what each one has.

A revision is data (:class:`Revision`): the runtime asks ``revision.batches`` or
``revision.elicitation`` instead of comparing date strings all over the code.

Two eras share one endpoint. The *legacy* revisions (:data:`SUPPORTED`, 2024-11-05 to
2025-11-25) open a session with an ``initialize`` handshake. The *modern* ones
(:data:`MODERN`, 2026-07-28 on) have no handshake: the version and the client's
capabilities ride in every request's ``_meta`` (see :mod:`.modern`), and each
request is served on its own. A server lists the versions it serves, of either era,
in one tuple (default :data:`ALL`); :func:`negotiate` picks among its legacy ones.
"""

from __future__ import annotations

from typing import Final

import attrs

from .errors import INVALID_PARAMS, RESOURCE_NOT_FOUND, McpError, unsupported_protocol_version


@attrs.frozen
class Revision:
    """What one protocol revision offers, as flags the runtime can test."""

    name: str
    #: the session is opened by an ``initialize`` handshake (False from 2026-07-28 on).
    handshake: bool = True
    #: JSON-RPC batches are allowed (2025-03-26 only).
    batches: bool = False
    audio_content: bool = True
    tool_annotations: bool = True
    completions_capability: bool = True
    #: ``outputSchema`` / ``structuredContent``, resource links in tool results, titles.
    structured_output: bool = True
    elicitation: bool = True
    completion_context: bool = True
    #: 2025-11-25: icons, URL-mode elicitation, tools in sampling, tasks.
    icons: bool = True
    url_elicitation: bool = True
    sampling_tools: bool = True
    #: HTTP transports must send ``MCP-Protocol-Version`` after initialization.
    version_header: bool = True
    #: Streamable HTTP SSE polling (2025-11-25): a priming event (an ``id`` with empty
    #: ``data``) opens each response stream, and the server may close the connection
    #: early with a ``retry`` hint; older clients would choke on the empty event.
    sse_polling: bool = True
    #: An error answering no identifiable request omits ``id`` (2025-11-25 on);
    #: before, JSON-RPC 2.0's ``"id": null`` (which those schemas cannot express).
    anonymous_error_omits_id: bool = True
    #: Every result carries ``resultType`` and ``_meta["io.modelcontextprotocol/serverInfo"]``;
    #: discover, the list results and ``resources/read`` carry ``ttlMs`` and ``cacheScope``
    #: (2026-07-28 on).
    result_type: bool = False
    #: The server may send the client requests (sampling, elicitation, roots) on a back
    #: channel; from 2026-07-28 on it asks for input inside a result instead (MRTR).
    server_requests: bool = True
    #: The log level comes with each request (``_meta["io.modelcontextprotocol/logLevel"]``);
    #: a request without one gets no ``notifications/message`` (2026-07-28 on).
    log_level_per_request: bool = False
    #: ``structuredContent`` may be any JSON value, not only an object (2026-07-28 on).
    structured_content_any: bool = False
    #: The error code for a resource URI the server does not know: -32002 before
    #: 2026-07-28, -32602 (with ``data.uri``) from then on.
    resource_not_found: int = RESOURCE_NOT_FOUND

    def __str__(self) -> str:
        return self.name


_2024_11_05 = Revision(
    "2024-11-05",
    audio_content=False,
    tool_annotations=False,
    completions_capability=False,
    structured_output=False,
    elicitation=False,
    completion_context=False,
    icons=False,
    url_elicitation=False,
    sampling_tools=False,
    version_header=False,
    anonymous_error_omits_id=False,
    sse_polling=False,
)
_2025_03_26 = attrs.evolve(
    _2024_11_05,
    name="2025-03-26",
    batches=True,
    audio_content=True,
    tool_annotations=True,
    completions_capability=True,
)
_2025_06_18 = attrs.evolve(
    _2025_03_26,
    name="2025-06-18",
    batches=False,
    structured_output=True,
    elicitation=True,
    completion_context=True,
    version_header=True,
)
_2025_11_25 = attrs.evolve(
    _2025_06_18,
    name="2025-11-25",
    icons=True,
    url_elicitation=True,
    sampling_tools=True,
    anonymous_error_omits_id=True,
    sse_polling=True,
)
_2026_07_28 = attrs.evolve(
    _2025_11_25,
    name="2026-07-28",
    handshake=False,
    sse_polling=False,
    result_type=True,
    server_requests=False,
    log_level_per_request=True,
    structured_content_any=True,
    resource_not_found=INVALID_PARAMS,
)

#: Every revision we know about, newest first (including ones we do not speak yet).
REVISIONS: Final[dict[str, Revision]] = {
    r.name: r for r in (_2026_07_28, _2025_11_25, _2025_06_18, _2025_03_26, _2024_11_05)
}

#: The legacy revisions this runtime speaks (opened by ``initialize``), newest first.
SUPPORTED: Final[tuple[str, ...]] = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
LATEST: Final = SUPPORTED[0]
#: The modern revisions this runtime speaks (no handshake; per-request ``_meta``), newest first.
MODERN: Final[tuple[str, ...]] = ("2026-07-28",)
#: Every revision this runtime speaks, of both eras, newest first.
ALL: Final[tuple[str, ...]] = MODERN + SUPPORTED


def is_modern(version: str) -> bool:
    """Whether ``version`` is a revision of the modern era (one we know, without handshake)."""
    revision = REVISIONS.get(version)
    return revision is not None and not revision.handshake


def legacy_versions(supported: tuple[str, ...]) -> tuple[str, ...]:
    """The handshake revisions among ``supported``, in its order."""
    return tuple(version for version in supported if not is_modern(version))


def modern_versions(supported: tuple[str, ...]) -> tuple[str, ...]:
    """The modern revisions among ``supported``, in its order."""
    return tuple(version for version in supported if is_modern(version))


#: What an HTTP peer that sends no ``MCP-Protocol-Version`` header is assumed to speak.
HTTP_DEFAULT: Final = "2025-03-26"


def http_revision(header: str | None) -> Revision:
    """The revision an HTTP request speaks: its ``MCP-Protocol-Version`` header, or
    :data:`HTTP_DEFAULT` when the header is absent or names no revision we know."""
    revision = REVISIONS.get(header) if header is not None else None
    return revision if revision is not None else REVISIONS[HTTP_DEFAULT]


def negotiate(requested: str, supported: tuple[str, ...] = SUPPORTED) -> Revision:
    """The server's answer to a client's ``protocolVersion``, as the lifecycle page says.

    The same revision if we support it, otherwise our latest legacy one. A server
    that speaks only modern revisions has nothing to negotiate: it answers -32022
    naming the versions it does speak (``basic/versioning.mdx``: a modern-only
    server names its versions in any error to ``initialize``).
    """
    legacy = legacy_versions(supported)
    if not legacy:
        raise unsupported_protocol_version(
            requested,
            supported,
            detail=f"this server speaks only {', '.join(supported)}, without initialize:"
            " send each request with _meta io.modelcontextprotocol/protocolVersion",
        )
    return REVISIONS[requested if requested in legacy else legacy[0]]


def accept(offered: str, supported: tuple[str, ...] = SUPPORTED) -> Revision:
    """The client's check of the server's answer: a revision we support, or the error.

    The error carries the ``supported``/``requested`` data the lifecycle page shows.
    """
    if offered not in supported:
        raise unsupported_version(offered, supported)
    return REVISIONS[offered]


def unsupported_version(requested: str, supported: tuple[str, ...] = SUPPORTED) -> McpError:
    return McpError(
        INVALID_PARAMS,
        "Unsupported protocol version",
        {"supported": list(supported), "requested": requested},
    )
