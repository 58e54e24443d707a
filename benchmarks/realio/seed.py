"""The benchmark's Redis data, as upstream's ``infra/redis/seed.py`` writes it, through coredis.

Keys (the same values, byte for byte: the JSON strings are Python's ``json.dumps``):

- ``bench:cart:user-NNNNN`` (10,000 hashes): ``user_id``, ``items`` (2 or 3
  ``{"product_id", "qty"}``), ``created``, ``expires``, ``total``;
- ``bench:history:user-NNNNN`` (1,000 lists of 20 orders);
- ``bench:popular`` (one sorted set, ``product:ID`` for 100,000 products);
- ``bench:ratelimit:user-NNNNN`` (100 counters at 0).

:func:`reseed` empties the database first: the benchmark reseeds before each server's
round, so that every server starts from the same state (checkout appends to histories
and counts in the rate limiters). Sends are batched (a pipeline per 1,000 commands).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Final

from mcp_actors.shared.redis_client import RedisClient

CARTS: Final = 10_000
HISTORIES: Final = 1_000
HISTORY_LENGTH: Final = 20
POPULAR: Final = 100_000
RATE_LIMITERS: Final = 100
_BATCH: Final = 1_000


def cart(n: int) -> dict[str, str]:
    """User ``n``'s cart hash."""
    items: list[dict[str, int]] = [
        {"product_id": (n * 7) % 100_000 + 1, "qty": 1 + n % 3},
        {"product_id": (n * 13) % 100_000 + 1, "qty": 1 + n % 2},
    ]
    if n % 3 == 0:
        items.append({"product_id": (n * 17) % 100_000 + 1, "qty": 1})
    total = sum(item["qty"] * (((item["product_id"] * 100) % 9_999) + 1) / 100.0 for item in items)
    return {
        "user_id": f"user-{n:05d}",
        "items": json.dumps(items),
        "created": "1740000000",
        "expires": "1740086400",
        "total": f"{total:.2f}",
    }


def history(n: int) -> list[str]:
    """User ``n``'s order history, oldest first."""
    return [
        json.dumps(
            {
                "order_id": f"ORD-{n:05d}-{j:02d}",
                "product_id": (n * j * 7) % 100_000 + 1,
                "qty": 1 + j % 3,
                "price": round(((n * j * 13) % 9_999 + 1) / 100.0, 2),
                "ts": 1_740_000_000 + n * 86_400 + j * 3_600,
            }
        )
        for j in range(1, HISTORY_LENGTH + 1)
    ]


def _commands() -> Iterator[tuple[str, tuple[Any, ...]]]:
    for n in range(1, CARTS + 1):
        yield "hset", (f"bench:cart:user-{n:05d}", cart(n))
    for n in range(1, HISTORIES + 1):
        yield "rpush", (f"bench:history:user-{n:05d}", history(n))
    for first in range(1, POPULAR + 1, _BATCH):
        members = {f"product:{i}": i * 7 % 10_000 for i in range(first, first + _BATCH)}
        yield "zadd", ("bench:popular", members)
    for n in range(1, RATE_LIMITERS + 1):
        yield "set", (f"bench:ratelimit:user-{n:05d}", 0)


async def reseed(redis: RedisClient) -> None:
    """Empty the database and write the benchmark's keys."""
    await redis.client.flushdb()
    batch: list[tuple[str, tuple[Any, ...]]] = []
    for command in _commands():
        batch.append(command)
        if len(batch) == _BATCH:
            await _send(redis, batch)
            batch.clear()
    await _send(redis, batch)


async def _send(redis: RedisClient, batch: list[tuple[str, tuple[Any, ...]]]) -> None:
    async with redis.client.pipeline(transaction=False) as pipe:
        for name, args in batch:
            getattr(pipe, name)(*args)
