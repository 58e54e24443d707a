"""Small constructors for content blocks and prompt messages, so handlers read like prose.

Tools, prompts and sampling all speak in content blocks. These helpers take the
Python values you have (``bytes`` for an image, a URI and text for a resource) and
do the wire chores (base64, the ``type`` tag, ``UNSET`` for what you leave out)::

    @server.prompt
    def describe(picture: str) -> list[types.PromptMessage]:
        return [
            user("What is in this picture?"),
            user(image(load(picture), "image/png")),
            assistant("A cat."),
        ]
"""

from __future__ import annotations

import base64
from typing import Any

from msgspec import UNSET

from ..protocol import types as t

__all__ = [
    "assistant",
    "audio",
    "blob_contents",
    "embedded",
    "image",
    "link",
    "text",
    "text_contents",
    "user",
]


def unset(value: Any) -> Any:
    """``UNSET`` for None: an optional field left out of the wire form."""
    return UNSET if value is None else value


def _b64(data: bytes | str) -> str:
    return data if isinstance(data, str) else base64.b64encode(data).decode("ascii")


def text(value: str, *, annotations: t.Annotations | None = None) -> t.TextContent:
    """A text content block."""
    return t.TextContent(text=value, annotations=annotations or UNSET)


def image(
    data: bytes | str, mime_type: str, *, annotations: t.Annotations | None = None
) -> t.ImageContent:
    """An image block; ``data`` is raw bytes (base64-encoded here) or already base64 text."""
    return t.ImageContent(data=_b64(data), mime_type=mime_type, annotations=annotations or UNSET)


def audio(
    data: bytes | str, mime_type: str, *, annotations: t.Annotations | None = None
) -> t.AudioContent:
    """An audio block (2025-03-26+); ``data`` is raw bytes or base64 text."""
    return t.AudioContent(data=_b64(data), mime_type=mime_type, annotations=annotations or UNSET)


def text_contents(uri: str, value: str, mime_type: str | None = None) -> t.ResourceContents:
    """Text contents of a resource."""
    return t.ResourceContents(uri=uri, text=value, mime_type=mime_type or UNSET)


def blob_contents(uri: str, data: bytes, mime_type: str | None = None) -> t.ResourceContents:
    """Binary contents of a resource (base64 ``blob``)."""
    return t.ResourceContents(uri=uri, blob=_b64(data), mime_type=mime_type or UNSET)


def embedded(
    uri: str,
    value: str | bytes,
    mime_type: str | None = None,
    *,
    annotations: t.Annotations | None = None,
) -> t.EmbeddedResource:
    """A resource embedded in a tool result or prompt: text for ``str``, a blob for ``bytes``."""
    contents = (
        text_contents(uri, value, mime_type)
        if isinstance(value, str)
        else blob_contents(uri, value, mime_type)
    )
    return t.EmbeddedResource(resource=contents, annotations=annotations or UNSET)


def link(uri: str, name: str, **fields: Any) -> t.ResourceLink:
    """A link to a resource (2025-06-18+); ``fields`` are ResourceLink's (``mime_type``...)."""
    return t.ResourceLink(uri=uri, name=name, **fields)


def _block(content: str | t.ContentBlock) -> t.ContentBlock:
    return t.TextContent(text=content) if isinstance(content, str) else content


def user(content: str | t.ContentBlock) -> t.PromptMessage:
    """A prompt message from the user (a ``str`` becomes text)."""
    return t.PromptMessage(role="user", content=_block(content))


def assistant(content: str | t.ContentBlock) -> t.PromptMessage:
    """A prompt message from the assistant (a ``str`` becomes text)."""
    return t.PromptMessage(role="assistant", content=_block(content))
