"""The benchmark's three tools, as plain async functions over Redis and the product API.

Their semantics are those of the public benchmark's reference servers (the FastMCP one,
``python-server/main.py``; where the Node one differs, noted): each does its Redis
commands and its API call *at the same time* and merges the replies:

- :meth:`Shop.search_products`: ``GET /products/search`` and ``ZREVRANGE bench:popular
  0 9``; each product found gets its rank among the ten most popular (0: not among
  them); a null ``products`` from the API counts as none (as in the Node server);
- :meth:`Shop.get_user_cart`: ``HGETALL bench:cart:USER`` and ``LRANGE
  bench:history:USER 0 4`` together, then ``GET /products/{first item}`` (fetched
  and not used, as upstream); a history entry that is not JSON is given as ``{"raw":
  entry}``. Upstream sends the ``LRANGE`` beside the API call instead: the answer is the
  same, in the same two round trips, and one Redis round trip is saved;
- :meth:`Shop.checkout`: ``POST /cart/calculate`` and, at the same time, ``INCR`` the
  user's rate-limit counter, ``RPUSH`` the order to the history, ``ZINCRBY`` the first
  product's popularity (upstream: one pipeline of the three).

Where a tool sends Redis several commands, one Redis Function (:data:`FUNCTIONS`, Redis
7+: loaded by :func:`load_functions` when a worker starts) runs them, in one command and
one round trip: a client spends about as much CPU on each command of a pipeline as on a
command sent alone, so two or three pipelined commands cost the calling process twice or
three times one; a function costs one. The commands are the same and so are the
answers; Redis runs a function's commands with nothing in between, which the pipelines
did not promise and nothing here notices.

What makes them cheap (the idioms ``docs/realio-benchmark.md`` recommends): each backend
through a small keep-alive client that does the call in the caller's task
(:mod:`.kept_connections`): Redis through :class:`~.resp_client.RespClient` (RESP
written, hiredis parsing), the API through :class:`~.api_client.ApiClient` (httptools
parsing), whose ``*_alongside`` calls write the API request, await the Redis side in the
same task, then read the API's answer: both backends at work at once, with no second
task and no nursery; the commands of a call in one function; JSON decoded by msgspec
into Structs that keep the numbers passed on as :class:`msgspec.Raw` (copied, never
converted), and the answer encoded once.
"""

from __future__ import annotations

import os
import time
from typing import Any, Final
from urllib.parse import quote

import attrs
import msgspec

from .api_client import ApiClient
from .resp_client import Argument, RedisError, RespClient

SERVER_TYPE: Final = os.environ.get("SERVER_TYPE", "mcp-actors")
POPULAR: Final = "bench:popular"

#: The Redis Functions of the tools that send Redis more than one command (see the
#: module docstring): ``realio_cart`` (read-only) gives the cart hash as Redis's flat
#: field-value list and the first five history entries; ``realio_checkout`` counts the
#: order against the rate limit, records it and the product's popularity, and gives
#: the count.
FUNCTIONS: Final = """#!lua name=mcp_actors_realio
redis.register_function{
  function_name = 'realio_cart',
  flags = {'no-writes'},
  callback = function(keys)
    return {redis.call('HGETALL', keys[1]), redis.call('LRANGE', keys[2], 0, 4)}
  end,
}
redis.register_function('realio_checkout', function(keys, args)
  local count = redis.call('INCR', keys[1])
  redis.call('RPUSH', keys[2], args[1])
  redis.call('ZINCRBY', keys[3], 1, args[2])
  return count
end)
"""


async def load_functions(redis: RespClient) -> None:
    """Load (or replace) :data:`FUNCTIONS` in Redis: done by each worker as it starts."""
    await redis.call("FUNCTION", "LOAD", "REPLACE", FUNCTIONS)


class Item(msgspec.Struct, frozen=True):
    """One line of an order."""

    product_id: int
    quantity: int


DEFAULT_ITEMS: Final = (Item(42, 2), Item(1337, 1))


class _Product(msgspec.Struct):
    id: int
    sku: str
    name: str
    price: msgspec.Raw
    rating: msgspec.Raw


class _Search(msgspec.Struct):
    total_found: int = 0
    products: list[_Product] | None = None


class _Cart(msgspec.Struct):
    order_id: str | None = None
    total: msgspec.Raw = msgspec.field(default_factory=lambda: msgspec.Raw(b"0"))


_decode_search = msgspec.json.Decoder(_Search).decode
_decode_cart = msgspec.json.Decoder(_Cart).decode
_decode_any = msgspec.json.Decoder().decode
_encode = msgspec.json.Encoder().encode


def _history_entry(raw: bytes) -> Any:
    try:
        return _decode_any(raw)
    except msgspec.DecodeError:
        return {"raw": raw.decode(errors="replace")}


def _user_number(user_id: str) -> int:
    """The number in ``user-NNNNN`` (42 without a ``-``, as upstream)."""
    return int(user_id.split("-")[1]) if "-" in user_id else 42


@attrs.frozen
class Shop:
    """The three tools over one Redis client and one API client."""

    redis: RespClient
    api: ApiClient

    async def search_products(
        self, category: str, min_price: float, max_price: float, limit: int
    ) -> bytes:
        """Products of a category within a price range, with their popularity rank (JSON)."""
        target = (
            f"/products/search?category={quote(category, safe='')}"
            f"&min_price={min_price}&max_price={max_price}&limit={limit}"
        )

        async def popular() -> Any:
            return await self.redis.call("ZREVRANGE", POPULAR, 0, 9)

        body, members = await self.api.get_alongside(target, popular)
        found = _decode_search(body)
        top10 = [int(member.split(b":")[1]) for member in members]
        rank = {product_id: place for place, product_id in enumerate(top10, 1)}
        products = [
            {
                "id": product.id,
                "sku": product.sku,
                "name": product.name,
                "price": product.price,
                "rating": product.rating,
                "popularity_rank": rank.get(product.id, 0),
            }
            for product in found.products or ()
        ]
        return _encode(
            {
                "category": category,
                "total_found": found.total_found,
                "products": products,
                "top10_popular_ids": top10,
                "server_type": SERVER_TYPE,
            }
        )

    async def get_user_cart(self, user_id: str) -> bytes:
        """A user's cart and the first five orders of their history (JSON)."""
        keys = (f"bench:cart:{user_id}", f"bench:history:{user_id}")
        fields, history = await self._call("realio_cart", keys, (), readonly=True)
        cart = dict(zip(fields[::2], fields[1::2], strict=True))
        items = _decode_any(cart.get(b"items", b"[]"))
        first_product = items[0]["product_id"] if items else 1
        await self.api.get(f"/products/{first_product}")
        return _encode(
            {
                "user_id": user_id,
                "cart": {
                    "items": items,
                    "item_count": len(items),
                    "estimated_total": float(cart.get(b"total", 0)),
                },
                "recent_history": [_history_entry(entry) for entry in history],
                "server_type": SERVER_TYPE,
            }
        )

    async def checkout(self, user_id: str, items: tuple[Item, ...] | list[Item]) -> bytes:
        """Price an order, count it against the user's rate limit, record it (JSON)."""
        rate_key = f"bench:ratelimit:user-{_user_number(user_id) % 100:05d}"
        product_id = items[0].product_id if items else 1
        now = int(time.time())
        order = _encode({"order_id": f"ORD-{user_id}-{now}", "items": items, "ts": now})
        calculation = _encode({"user_id": user_id, "items": items})

        async def record() -> Any:
            keys = (rate_key, f"bench:history:{user_id}", POPULAR)
            return await self._call("realio_checkout", keys, (order, f"product:{product_id}"))

        body, rate_count = await self.api.post_json_alongside(
            "/cart/calculate", calculation, record
        )
        priced = _decode_cart(body)
        return _encode(
            {
                "order_id": priced.order_id or f"ORD-{user_id}-{now}",
                "user_id": user_id,
                "total": priced.total,
                "items_count": len(items),
                "rate_limit_count": rate_count,
                "status": "confirmed",
                "server_type": SERVER_TYPE,
            }
        )

    async def _call(
        self,
        function: str,
        keys: tuple[str, ...],
        args: tuple[Argument, ...],
        *,
        readonly: bool = False,
    ) -> Any:
        """Call one of :data:`FUNCTIONS`; loaded again once if Redis lost them (a restart
        without persistence, ``FUNCTION FLUSH``)."""
        command = ("FCALL_RO" if readonly else "FCALL", function, len(keys), *keys, *args)
        try:
            return await self.redis.call(*command)
        except RedisError as error:
            if "function not found" not in str(error).lower():
                raise
        await load_functions(self.redis)
        return await self.redis.call(*command)
