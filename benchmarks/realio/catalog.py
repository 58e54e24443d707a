"""The product catalog of the public benchmark's API service, and its JSON as Go writes it.

The benchmark's API service (``api-service/main.go`` upstream) builds 100,000 products
from a formula at start-up and serves them as JSON. The MCP servers under test pass
some of those numbers on to their clients, so an API service standing in for it must
write the *same bytes*, not just the same values: Go writes a whole ``float64`` as
``1`` where Python writes ``1.0``, and a ``float32`` with the shortest digits that
read back as that ``float32`` (``1.3``, not ``1.2999999523162842``). This module
computes the catalog the way Go does (``float32`` arithmetic rounded at each step,
``math.Round`` halves away from zero) and encodes it the way ``encoding/json`` does.
It does no I/O: :mod:`.api_service` serves it.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence
from typing import Final

PRODUCTS: Final = 100_000
CATEGORIES: Final = (
    "Electronics", "Books", "Clothing", "Sports", "Home",
    "Garden", "Toys", "Food", "Beauty", "Automotive",
    "Music", "Movies", "Games", "Office", "Health",
    "Pets", "Travel", "Tools", "Jewelry", "Baby",
)  # fmt: skip
BRANDS: Final = (
    "Alpha", "Beta", "Gamma", "Delta", "Epsilon", "Zeta", "Eta", "Theta", "Iota", "Kappa",
    "Lambda", "Mu", "Nu", "Xi", "Omicron", "Pi", "Rho", "Sigma", "Tau", "Upsilon",
    "Phi", "Chi", "Psi", "Omega", "Apex", "Nexus", "Vertex", "Zenith", "Nadir", "Flux",
    "Forge", "Craft", "Build", "Make", "Create", "Design", "Style", "Form", "Shape", "Mold",
    "Cast", "Weld", "Fuse", "Bond", "Link", "Chain", "Wire", "Mesh", "Weave", "Knit",
)  # fmt: skip
TAGS: Final = (
    "sale",
    "new",
    "featured",
    "bestseller",
    "clearance",
    "limited",
    "popular",
    "exclusive",
)
_F32: Final = struct.Struct("<f")


def float32(value: float) -> float:
    """``value`` rounded to the nearest ``float32`` (as Go stores a ``float32``)."""
    result: float = _F32.unpack(_F32.pack(value))[0]
    return result


def go_round(value: float) -> float:
    """Go's ``math.Round``: to the nearest integer, halves away from zero."""
    whole = math.trunc(value)
    if abs(value - whole) >= 0.5:
        whole += int(math.copysign(1, value))
    return float(whole)


def round2(value: float) -> float:
    """The upstream service's ``r2``: ``math.Round(f*100) / 100``."""
    return go_round(value * 100) / 100


def go_float64(value: float) -> str:
    """A ``float64`` as ``encoding/json`` writes it (shortest digits, no ``.0``)."""
    text = repr(value)
    return text[:-2] if text.endswith(".0") else text


def go_float32(value: float) -> str:
    """A ``float32`` as ``encoding/json`` writes it: the fewest significant digits that
    read back as the same ``float32``."""
    for digits in range(1, 10):
        text = f"{value:.{digits}g}"
        if float32(float(text)) == value:
            return text
    return repr(value)  # unreachable: 9 digits always round-trip a float32


def price_of(index: int) -> float:
    """Product ``index + 1``'s price."""
    return 1.0 + (index % 99_900) / 100.0


def category_of(index: int) -> str:
    """Product ``index + 1``'s category."""
    return CATEGORIES[index % 20]


def _json_string(text: str) -> str:
    # The catalog's strings are ASCII letters, digits, spaces, '-' and '.': no escapes.
    return f'"{text}"'


def product_json(index: int) -> bytes:
    """Product ``index + 1`` (``0 <= index < PRODUCTS``) as the upstream service writes it
    (fields in its order, no newline)."""
    category = category_of(index)
    brand = BRANDS[index % 50]
    number = index + 1
    rating = float32(1.0 + float32(float32(index % 40) / 10.0))
    tags = ",".join(_json_string(TAGS[(index + j) % 8]) for j in range(2 + index % 3))
    return (
        f'{{"id":{number},"sku":"SKU-{number:06d}","name":"{brand} {category} Item {number}",'
        f'"category":"{category}","brand":"{brand}","price":{go_float64(price_of(index))},'
        f'"stock":{index % 501},"rating":{go_float32(rating)},"tags":[{tags}],'
        f'"weight":{go_float64(round2((1 + index % 100) * 0.1))},'
        f'"description":"Quality {category} by {brand}. SKU {number:06d}."}}'
    ).encode()


def search(category: str, min_price: float, max_price: float, limit: int) -> tuple[int, list[int]]:
    """The products of ``category`` priced within ``[min_price, max_price]``: how many,
    and the indexes of the first ``limit`` by ascending price (ties by id; upstream's
    unstable sort leaves their order open, and only prices under 2.00 tie)."""
    if category not in CATEGORIES:
        return 0, []
    first = CATEGORIES.index(category)
    matching = [
        index for index in range(first, PRODUCTS, 20) if min_price <= price_of(index) <= max_price
    ]
    matching.sort(key=lambda index: (price_of(index), index))
    return len(matching), matching[:limit]


def search_json(category: str, total: int, indexes: Sequence[int], known: bool) -> bytes:
    """A search's answer as upstream writes it: ``products`` is ``null`` when nothing
    matched in a known category (Go's nil slice), ``[]`` for an unknown category."""
    if indexes:
        products = b"[" + b",".join(product_json(index) for index in indexes) + b"]"
    else:
        products = b"null" if known else b"[]"
    head = f'{{"category":{_go_string(category)},"total_found":{total},"products":'.encode()
    return head + products + b"}"


def _go_string(text: str) -> str:
    """A string as ``encoding/json`` writes it (HTML-safe: ``<``, ``>``, ``&`` escaped)."""
    out = []
    for char in text:
        code = ord(char)
        if char in '"\\':
            out.append("\\" + char)
        elif char in "<>&" or code < 0x20 or code in (0x2028, 0x2029):
            named = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(char)
            out.append(named or f"\\u{code:04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def cart_json(user_id: str, items: Sequence[tuple[int, int]]) -> bytes:
    """``POST /cart/calculate``'s answer for ``items`` (``(product_id, quantity)`` pairs;
    unknown products count nothing), with upstream's tax, shipping and discount."""
    subtotal = 0.0
    for product_id, quantity in items:
        if 1 <= product_id <= PRODUCTS:
            subtotal += price_of(product_id - 1) * float(quantity)
    subtotal = round2(subtotal)
    tax = round2(subtotal * 0.085)
    shipping, discount = 5.99, 0.0
    if subtotal >= 100.0:
        discount = round2(subtotal * 0.10)
        shipping = 0.0
    total = round2(subtotal + tax + shipping - discount)
    order_id = f"ORD-{user_id.replace('-', '')}-{len(items)}"
    return (
        f'{{"order_id":{_go_string(order_id)},"user_id":{_go_string(user_id)},'
        f'"subtotal":{go_float64(subtotal)},"tax":{go_float64(tax)},'
        f'"shipping":{go_float64(shipping)},"discount":{go_float64(discount)},'
        f'"total":{go_float64(total)},"items_count":{len(items)}}}'
    ).encode()
