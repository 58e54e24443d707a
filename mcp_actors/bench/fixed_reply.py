"""A fixed-reply MCP server over stdio: the bench measured against (almost) nothing.

``python -m mcp_actors.bench.fixed_reply`` answers each request line with a reply
made from a fixed template and the request's id, without decoding the request: a
``tools/call`` gets ``{"content":[{"type":"text","text":"3"}]}``, ``server/discover``
the modern era's discovery (a ``add`` tool is listed), ``initialize`` a legacy
handshake, ``ping`` and anything else an empty result; notifications get nothing.
It reads and writes whole chunks, so it costs a few microseconds a call: what a
bench run against it measures is the load generator itself (``--processes``).

Lines longer than 1 MiB without a newline end it (it is a measuring tool, not a
server to expose).
"""

from __future__ import annotations

import os
import re
import sys

_ID = re.compile(rb'"id":\s*("[^"]*"|-?\d+)')
_METHOD = re.compile(rb'"method":\s*"([^"]+)"')
_MAX_LINE = 1 << 20
_INFO = b'"serverInfo":{"name":"fixed-reply","version":"1"}'
_RESULTS = {
    b"tools/call": b'{"content":[{"type":"text","text":"3"}]}',
    b"server/discover": b'{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},'
    + _INFO
    + b"}",
    b"initialize": b'{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},' + _INFO + b"}",
    b"tools/list": b'{"tools":[{"name":"add","inputSchema":{"type":"object"}}]}',
}


def reply(line: bytes) -> bytes:
    """The answer to one request line (b"" for a notification)."""
    found = _ID.search(line)
    if found is None:
        return b""
    method = _METHOD.search(line)
    result = _RESULTS.get(method.group(1) if method else b"", b"{}")
    return b'{"jsonrpc":"2.0","id":' + found.group(1) + b',"result":' + result + b"}\n"


def serve(read_fd: int = 0, write_fd: int = 1) -> None:
    """Answer every request until end of input."""
    partial = b""
    while chunk := os.read(read_fd, 1 << 16):
        lines = (partial + chunk).split(b"\n")
        partial = lines.pop()
        if len(partial) > _MAX_LINE:
            sys.exit("fixed_reply: a line longer than 1 MiB")
        out = b"".join(reply(line) for line in lines if line)
        while out:
            out = out[os.write(write_fd, out) :]


if __name__ == "__main__":
    serve()
