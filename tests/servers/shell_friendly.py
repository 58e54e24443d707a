"""Tools with every kind of parameter a shell user types (``call ... a=1 b=two``), a
``pathlib.Path`` one among them, and results of every content kind."""

from __future__ import annotations

import base64
from pathlib import Path

from mcp_actors import Server
from mcp_actors.protocol import types as t

server = Server("shell-friendly")


@server.tool
def describe(
    name: str,
    count: int,
    ratio: float,
    loud: bool,
    tags: list[str],
    where: Path,
    note: str | None = None,
) -> str:
    """Say what was received, with the Python type of each value."""
    values = [name, count, ratio, loud, tags, where, note]
    return " ".join(f"{type(value).__name__}:{value}" for value in values)


@server.tool
def read_text(path: Path) -> str:
    """Read a text file."""
    return path.read_text()


@server.tool
def gallery() -> list[t.ContentBlock]:
    """One block of each kind."""
    png = base64.b64encode(b"\x89PNG" + bytes(2044)).decode()
    return [
        t.TextContent(text="a picture:"),
        t.ImageContent(data=png, mime_type="image/png"),
        t.ResourceLink(uri="file:///notes/a.txt", name="a.txt"),
        t.EmbeddedResource(resource=t.ResourceContents(uri="mem://x", text="embedded text")),
    ]
