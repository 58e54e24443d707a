"""Which era a client speaks with its server, and what a modern request carries.

MCP has two eras. The *legacy* one (2024-11-05 … 2025-11-25) opens a session with
an ``initialize`` handshake. The *modern* one (2026-07-28 on) has no handshake:
every request carries the protocol version, the client's capabilities and its
name in ``params._meta``, and ``server/discover`` tells what the server offers.

A client that speaks both finds out which one its server speaks by probing
(``basic/versioning.mdx``, "Backward Compatibility"), and :func:`probe` does it:

- it sends ``server/discover`` at its preferred modern version;
- a ``DiscoverResult`` naming a modern version we speak, or an error only a modern
  server gives (-32022 unsupported version, which names the versions it does
  speak: one retry at one of ours), means *modern*;
- any other error, a result without a modern version of ours, or no answer within
  the probe timeout means *legacy*: the caller goes on with ``initialize`` (on
  HTTP the transport falls back further to HTTP+SSE if the POST is refused). The
  fallback is never keyed on one error code: legacy servers answer an unknown
  method before ``initialize`` in many ways, or not at all.

:func:`initialize` is the legacy era's handshake.

:class:`EraChoice` is what the caller asked for (``era="auto"|"modern"|"legacy"``,
or a pinned ``protocol_version``); :class:`ModernRequests` stamps the ``_meta`` on
each request and decides the one retry a -32022 earns.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

import attrs
import msgspec
from msgspec import UNSET, UnsetType

from ..protocol import types as t
from ..protocol.errors import (
    INTERNAL_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
    McpError,
)
from ..protocol.modern import MODERN_ERRORS, SERVER_INFO_KEY, request_meta
from ..protocol.versions import MODERN, REVISIONS, SUPPORTED, is_modern
from ..runtime.outbound import ConnectionClosed, RequestTimeout
from ..runtime.session import Session

log = logging.getLogger("mcp_actors.client")

Era = Literal["auto", "modern", "legacy"]
_ERAS: tuple[Era, ...] = ("auto", "modern", "legacy")


@attrs.frozen
class EraChoice:
    """The era (and version) a client is to speak, as its caller asked."""

    era: Era
    #: The modern version to try first (None when pinned legacy).
    modern_version: str | None
    #: The legacy version to offer in ``initialize`` (None when pinned modern).
    legacy_version: str | None

    @classmethod
    def of(
        cls,
        era: str,
        protocol_version: str | None,
        supported_versions: tuple[str, ...] = SUPPORTED,
    ) -> EraChoice:
        """Check ``open_client``'s ``era`` and ``protocol_version``; raises ValueError.

        A ``protocol_version`` pins its own era (``"2026-07-28"`` modern,
        ``"2025-11-25"`` and older legacy); ``era`` may then be left ``"auto"`` or
        name the same era.
        """
        if era not in _ERAS:
            raise ValueError(f"era must be one of {', '.join(_ERAS)}, not {era!r}")
        if protocol_version is None:
            return cls(
                era,
                None if era == "legacy" else MODERN[0],
                None if era == "modern" else supported_versions[0],
            )
        if protocol_version not in MODERN and protocol_version not in supported_versions:
            known = ", ".join((*MODERN, *supported_versions))
            raise ValueError(f"protocol_version {protocol_version!r} is none of ours: {known}")
        pinned: Era = "modern" if is_modern(protocol_version) else "legacy"
        if era not in ("auto", pinned):
            raise ValueError(
                f"protocol_version {protocol_version} is of the {pinned} era, not {era}"
            )
        if pinned == "modern":
            return cls("modern", protocol_version, None)
        return cls("legacy", None, protocol_version)


class Discovered(t.DiscoverResult, kw_only=True):
    """A ``server/discover`` result as a client reads it: ``serverInfo`` may also be in
    the body, where servers written before the spec moved it to ``_meta`` put it."""

    server_info: t.Implementation | UnsetType = UNSET

    def implementation(self) -> t.Implementation | None:
        """Who the server says it is: ``_meta`` first, then the body; None if neither."""
        meta = self.meta if self.meta is not UNSET else {}
        try:
            return msgspec.convert(meta[SERVER_INFO_KEY], t.Implementation)
        except (KeyError, msgspec.ValidationError):
            return None if self.server_info is UNSET else self.server_info


@attrs.define
class ModernRequests:
    """What every request of a modern client carries, and the one retry -32022 earns."""

    version: str
    capabilities: t.ClientCapabilities
    client_info: t.Implementation
    #: The lowest ``notifications/message`` level wanted (None: none at all).
    log_level: t.LoggingLevel | None = None

    def stamp(self, params: Any) -> Any:
        """``params`` (a Struct with ``meta``, a dict, or None) with the ``_meta`` keys
        added; the caller's own ``_meta`` entries are kept."""
        meta = request_meta(self.version, self.capabilities, self.client_info, self.log_level)
        if params is None:
            return t.EmptyParams(meta=meta)
        if isinstance(params, msgspec.Struct) and hasattr(params, "meta"):
            own = params.meta
            return msgspec.structs.replace(
                params, meta={**(own if isinstance(own, dict) else {}), **meta}
            )
        values = params if isinstance(params, dict) else msgspec.to_builtins(params)
        if not isinstance(values, dict):
            raise TypeError(f"request params must encode to a JSON object, not {params!r}")
        given = values.get("_meta")
        return {**values, "_meta": {**(given if isinstance(given, dict) else {}), **meta}}

    def retry_version(self, error: McpError) -> str | None:
        """The version to retry with after ``error``, or None if it earns no retry.

        Only -32022 does, and only when its ``data.supported`` lists a modern version
        we speak (the one we sent included: the server may have been updated).
        """
        if error.code != UNSUPPORTED_PROTOCOL_VERSION:
            return None
        return _ours(_supported(error), MODERN)

    def adopt(self, version: str, session: Session) -> None:
        """Speak ``version`` from now on (a retry found it works)."""
        self.version = version
        session.state.revision = REVISIONS[version]


def check_result_type(method: str, result: Any) -> None:
    """Raise unless ``result`` is complete: its ``resultType`` absent (a server that
    predates the field: complete) or ``"complete"``."""
    if isinstance(result, dict):
        kind = result.get("resultType", "complete")
    else:
        kind = getattr(result, "result_type", UNSET)
        kind = "complete" if kind is UNSET else kind
    if kind == "complete":
        return
    if kind == "input_required":
        raise McpError(
            INTERNAL_ERROR,
            f"{method}: the server asks for more input (resultType input_required), which"
            " only tools/call, prompts/get and resources/read may do",
        )
    raise McpError(INTERNAL_ERROR, f"Invalid result of {method}: unknown resultType {kind!r}")


async def probe(
    session: Session, modern: ModernRequests, timeout: float | None, *, may_fall_back: bool
) -> Discovered | None:
    """Send ``server/discover``: its result if the server is modern, None if legacy.

    Adopts (``modern.version``) the modern version the server and we share. Raises
    :class:`McpError` when the server is modern but refuses us (no version in
    common, a header mismatch...), or, unless ``may_fall_back``, when it is legacy.
    """
    state = session.state
    proposed = state.revision
    for attempt in range(2):
        state.revision = REVISIONS[modern.version]  # what we propose until one is agreed
        try:
            result: Discovered = await session.request(
                "server/discover",
                modern.stamp(t.DiscoverParams()),
                result_type=Discovered,
                timeout=timeout,
            )
        except RequestTimeout:
            outcome = f"no answer to server/discover within {timeout:g} s"
        except ConnectionClosed:
            raise
        except McpError as error:
            retry = modern.retry_version(error)
            if retry is not None and attempt == 0:
                log.info("server/discover: the server asks for %s; asking again", retry)
                modern.version = retry
                continue
            if error.code == UNSUPPORTED_PROTOCOL_VERSION:
                if may_fall_back and _ours(_supported(error), SUPPORTED) is not None:
                    state.revision = proposed
                    return None  # a server of the legacy era that knows the probe
                raise McpError(
                    error.code,
                    f"the server speaks none of our versions: it offers {_supported(error)},"
                    f" we speak {', '.join((*MODERN, *SUPPORTED))}",
                    error.data,
                ) from None
            if error.code in MODERN_ERRORS:
                raise
            outcome = f"server/discover failed: {error}"
        else:
            shared = _ours(result.supported_versions, (modern.version, *MODERN))
            if shared is not None:
                modern.version = shared
                state.revision = REVISIONS[shared]
                check_result_type("server/discover", result)
                return result
            outcome = f"server/discover lists no version of ours: {result.supported_versions}"
        break
    state.revision = proposed
    if not may_fall_back:
        raise McpError(INTERNAL_ERROR, f"the server does not speak the modern era ({outcome})")
    log.info("the server speaks the legacy era (%s); falling back to initialize", outcome)
    return None


def _supported(error: McpError) -> list[str]:
    data = error.data
    listed = data.get("supported") if isinstance(data, dict) else None
    return [v for v in listed if isinstance(v, str)] if isinstance(listed, list) else []


def _ours(offered: list[str], ours: tuple[str, ...]) -> str | None:
    """The first of ``ours`` (our preference order) that ``offered`` lists."""
    return next((version for version in ours if version in offered), None)


async def initialize(
    session: Session, protocol_version: str, client_info: t.Implementation, timeout: float | None
) -> t.InitializeResult:
    """The legacy era's handshake: ``initialize``, then ``notifications/initialized``; the
    server's answer (which the engine records in the session's state as it decodes it)."""
    params = t.InitializeParams(
        protocol_version=protocol_version,
        capabilities=session.state.local_capabilities,  # type: ignore[arg-type]  # a client's
        client_info=client_info,
    )
    result: t.InitializeResult = await session.request("initialize", params, timeout=timeout)
    await session.notify("notifications/initialized")
    return result
