"""The HTTP status of a JSON-RPC error answered over Streamable HTTP in the 2026-07-28 era.

In that era an HTTP server answers a request whose reply is one JSON body with
a status chosen by the error's code, so that intermediaries (and a client
probing for the era) can tell the failures apart without reading the body:
the envelope, parameter and header failures of the validation ladder are
``400 Bad Request``, an unknown method is ``404 Not Found``
(``streamable-http.mdx`` "Request Metadata"), and everything else — a result,
or an error a handler raised — is ``200``. A reply that has already
committed to an event stream is ``200`` whatever follows; the legacy era
keeps its own statuses (see :mod:`mcp_actors.transports.http.endpoint`).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Final

from .errors import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_CLIENT_CAPABILITY,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
)

_STATUS: Final = MappingProxyType(
    {
        PARSE_ERROR: 400,
        INVALID_REQUEST: 400,
        INVALID_PARAMS: 400,
        HEADER_MISMATCH: 400,
        MISSING_CLIENT_CAPABILITY: 400,
        UNSUPPORTED_PROTOCOL_VERSION: 400,
        METHOD_NOT_FOUND: 404,
    }
)


def status_for_error(code: int | None) -> int:
    """The status of a modern-era JSON reply whose error has ``code`` (None: a result)."""
    return 200 if code is None else _STATUS.get(code, 200)
