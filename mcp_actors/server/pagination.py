"""Opaque cursors for list methods: a page of items and where the next page starts."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import TypeVar

from msgspec import UNSET, UnsetType

from ..protocol.errors import invalid_params

T = TypeVar("T")

_PREFIX = "mcpa1:"


def encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"{_PREFIX}{offset}".encode()).decode()


def decode_cursor(cursor: str) -> int:
    """The offset a cursor stands for; -32602 for a cursor we did not make."""
    try:
        text = base64.urlsafe_b64decode(cursor.encode()).decode()
        if text.startswith(_PREFIX):
            offset = int(text[len(_PREFIX) :])
            if offset >= 0:
                return offset
    except (binascii.Error, UnicodeDecodeError, ValueError):
        pass
    raise invalid_params(f"invalid cursor {cursor!r}")


def paginate(
    items: Sequence[T], cursor: str | UnsetType, page_size: int | None
) -> tuple[list[T], str | UnsetType]:
    """One page of ``items`` starting at ``cursor``, and the cursor of the next page (if any)."""
    start = 0 if cursor is UNSET else decode_cursor(cursor)
    if start > len(items):
        raise invalid_params(f"cursor {cursor!r} is past the end of the list")
    if page_size is None:
        return list(items[start:]), UNSET
    end = start + page_size
    next_cursor = encode_cursor(end) if end < len(items) else UNSET
    return list(items[start:end]), next_cursor
