"""The few HTTP exchanges a resource server has with its authorization server, on trio.

Fetching a JWKS, its metadata, or an introspection answer: each is one request through
httpx with a timeout, whose body is read up to a size limit (a misbehaving server cannot
make us buffer without bound) and decoded as a JSON object.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx
import msgspec

#: The largest JSON document we read from an authorization server.
MAX_DOCUMENT_BYTES = 512 * 1024
#: Seconds one exchange with the authorization server may take.
FETCH_TIMEOUT = 10.0


class FetchFailed(Exception):
    """The authorization server did not give a usable JSON object; the message says why."""


async def fetch_json(
    url: str,
    *,
    form: Mapping[str, str] | None = None,
    auth: tuple[str, str] | None = None,
    client: httpx.AsyncClient | None = None,
    max_bytes: int = MAX_DOCUMENT_BYTES,
) -> dict[str, Any]:
    """GET ``url`` (POST ``form`` when given) and decode its JSON object body."""
    if client is None:
        async with httpx.AsyncClient(timeout=FETCH_TIMEOUT) as own:
            return await fetch_json(url, form=form, auth=auth, client=own, max_bytes=max_bytes)
    method = "GET" if form is None else "POST"
    headers = {"accept": "application/json"}
    try:
        async with client.stream(
            method, url, data=form, auth=auth, headers=headers, timeout=FETCH_TIMEOUT
        ) as response:
            if response.status_code != 200:
                raise FetchFailed(f"{method} {url}: HTTP {response.status_code}")
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > max_bytes:
                    raise FetchFailed(f"{method} {url}: more than {max_bytes} bytes")
    except httpx.HTTPError as error:
        raise FetchFailed(f"{method} {url}: {error}") from error
    try:
        document = msgspec.json.decode(bytes(body))
    except msgspec.DecodeError as error:
        raise FetchFailed(f"{method} {url}: not JSON") from error
    if not isinstance(document, dict):
        raise FetchFailed(f"{method} {url}: not a JSON object")
    return document
