"""What a list method returns: every item, and how long the server says it stays fresh."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from msgspec import UNSET

from ..protocol import types as t

T = TypeVar("T")


class Listing(list[T]):
    """The items of a paginated list (``list_tools()``...), plus the server's caching hints.

    A plain list to use as one. From the 2026-07-28 era on, servers say how long a
    result may be reused (``ttl_ms``, milliseconds, 0: not at all) and by whom
    (``cache_scope``: ``"public"``, anyone; ``"private"``, this user only). Over several
    pages the shortest ``ttl_ms`` counts, and ``"private"`` wins over ``"public"``.
    Both are None when the server gave none (the legacy era).
    """

    ttl_ms: int | None
    cache_scope: t.CacheScope | None

    def __init__(self, items: Iterable[T] = ()) -> None:
        super().__init__(items)
        self.ttl_ms = None
        self.cache_scope = None

    def add_page(self, items: Iterable[T], page: t.CacheableResult) -> None:
        """Append one page's items and fold its hints into the listing's."""
        self.extend(items)
        if page.ttl_ms is not UNSET:
            ttl = max(page.ttl_ms, 0)  # a negative ttl reads as 0 (do not reuse)
            self.ttl_ms = ttl if self.ttl_ms is None else min(self.ttl_ms, ttl)
        if page.cache_scope is not UNSET and self.cache_scope != "private":
            self.cache_scope = page.cache_scope
