"""A raw stdio MCP server of the legacy era only, to test how clients detect the era.

It answers ``initialize`` (2025-11-25), ``tools/list`` (one tool, ``echo``) and
``tools/call``. What it does with anything else before ``initialize`` — the
modern client's ``server/discover`` probe — is chosen by the first argument:

- ``method-not-found``: a -32601 error (what most legacy servers send);
- ``invalid-params``: a -32602 error (what some send instead);
- ``silent``: no answer at all.

Every line it reads is appended to the file named by ``$LEGACY_PEER_LOG`` (if set).
Run: ``python tests/peers/legacy_stdio_server.py method-not-found``.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

ERRORS = {"method-not-found": -32601, "invalid-params": -32602}

ECHO = {
    "name": "echo",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
}


def answer(message: dict[str, Any], initialized: bool, mode: str) -> dict[str, Any] | None:
    method, request_id = message.get("method"), message.get("id")
    if request_id is None:
        return None  # a notification
    if method == "initialize":
        result: Any = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "legacy-peer", "version": "0.1"},
        }
    elif not initialized:
        if mode == "silent":
            return None
        error = {"code": ERRORS[mode], "message": f"{method} before initialize"}
        return {"jsonrpc": "2.0", "id": request_id, "error": error}
    elif method == "tools/list":
        result = {"tools": [ECHO]}
    elif method == "tools/call":
        text = message["params"]["arguments"]["text"]
        result = {"content": [{"type": "text", "text": text}]}
    else:
        error = {"code": -32601, "message": f"Method not found: {method}"}
        return {"jsonrpc": "2.0", "id": request_id, "error": error}
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def main() -> None:
    mode = sys.argv[1]
    log = os.environ.get("LEGACY_PEER_LOG")
    initialized = False
    for line in sys.stdin:
        if log:
            with open(log, "a", encoding="utf-8") as file:
                file.write(line)
        message = json.loads(line)
        reply = answer(message, initialized, mode)
        initialized = initialized or message.get("method") == "initialize"
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
