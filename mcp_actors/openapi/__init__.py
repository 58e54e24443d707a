"""OpenAPI import: a Server whose tools are the operations of an OpenAPI 3 document.

``server_from(spec, client=httpx.AsyncClient(...))`` (see :mod:`.server`) reads the
document (:mod:`.document`), turns each operation into a tool (:mod:`.operations`) and
calls the API with the client. Needs the extra ``mcp-actors[openapi]`` (PyYAML, httpx).
"""

from __future__ import annotations

from .document import OpenApiError
from .server import server_from

__all__ = ["OpenApiError", "server_from"]
