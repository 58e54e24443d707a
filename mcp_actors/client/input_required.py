"""The client's side of multi round-trip requests (MRTR, 2026-07-28).

A modern server that needs the user, the model or the roots in the middle of
``tools/call``, ``prompts/get`` or ``resources/read`` answers
``resultType: "input_required"`` with ``inputRequests`` (by key) and maybe a
``requestState``. :func:`call_with_input` drives the exchange so that the caller
sees one call:

1. it answers every input request with the client's own handlers (the same
   ``ClientHandlers.sampling``/``elicitation``/``roots`` a legacy session uses),
   concurrently; the first that fails (a refusal, a missing handler) fails the call;
2. it retries the request — a new JSON-RPC id, the original params plus
   ``inputResponses`` and the ``requestState`` echoed byte-exact (left out when the
   server sent none);
3. until the result is complete, for at most :data:`MAX_ROUNDS` rounds (then
   -32603). A result with a ``requestState`` and no requests is retried after a
   short backoff (50 ms, doubling up to 250 ms).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final, Literal

import msgspec
import trio
from msgspec import UNSET

from ..protocol import types as t
from ..protocol.errors import INTERNAL_ERROR, McpError
from ..protocol.methods import METHODS

log = logging.getLogger("mcp_actors.client")

#: The methods whose result may be ``input_required``.
INPUT_REQUIRED_METHODS: Final = frozenset({"tools/call", "prompts/get", "resources/read"})
#: Rounds of one call at most (the first request included).
MAX_ROUNDS: Final = 10
_BACKOFF: Final = (0.05, 0.1, 0.2, 0.25)


class _Kind(msgspec.Struct):
    result_type: str = msgspec.field(default="complete", name="resultType")


_kind: Final = msgspec.json.Decoder(_Kind)
_input_required: Final = msgspec.json.Decoder(t.InputRequiredResult)

#: ``send(params)``: the request sent once more (new id), its raw result.
Send = Callable[[Any], Awaitable[msgspec.Raw]]
#: ``answer(method, params)``: the client's result for one input request.
Answer = Callable[[str, Any], Awaitable[Any]]
#: In place of an :data:`Answer`: return an ``input_required`` result as it is.
RETURN_INPUT_REQUIRED: Final = "return"


async def call_with_input(
    method: str,
    params: msgspec.Struct,
    send: Send,
    answer: Answer | Literal["return"],
    result_type: Any,
) -> Any:
    """Send ``params``; fulfil ``input_required`` rounds; the final result, decoded.

    With ``answer`` :data:`RETURN_INPUT_REQUIRED`, an ``input_required`` result is
    returned (an :class:`~mcp_actors.protocol.types.InputRequiredResult`) instead: a
    gateway passes its upstream's questions on to its own caller that way.
    """
    for round_number in range(MAX_ROUNDS):
        raw = await send(params)
        kind = _kind.decode(raw).result_type
        if kind != "input_required":
            decoder = (
                METHODS[method].result_decoder
                if result_type is None
                else msgspec.json.Decoder(result_type)
            )
            assert decoder is not None
            try:
                return decoder.decode(raw)
            except msgspec.ValidationError as error:
                raise McpError(INTERNAL_ERROR, f"Invalid result of {method}: {error}") from None
        try:
            asked = _input_required.decode(raw)
        except msgspec.ValidationError as error:
            invalid = f"Invalid input_required result of {method}: {error}"
            raise McpError(INTERNAL_ERROR, invalid) from None
        if answer == RETURN_INPUT_REQUIRED:
            return asked
        requests = asked.input_requests if asked.input_requests is not UNSET else {}
        if not requests and asked.request_state is UNSET:
            raise McpError(
                INTERNAL_ERROR, f"{method}: input_required without inputRequests or requestState"
            )
        responses = await fulfil(requests, answer)
        if not requests:
            await trio.sleep(_BACKOFF[min(round_number, len(_BACKOFF) - 1)])
        params = msgspec.structs.replace(
            params,
            input_responses=responses if requests else UNSET,
            request_state=asked.request_state,
        )
        log.debug("%s: input round %d answered (%s)", method, round_number + 1, list(responses))
    raise McpError(
        INTERNAL_ERROR, f"{method}: the server still asks for input after {MAX_ROUNDS} rounds"
    )


async def fulfil(requests: dict[str, t.InputRequest], answer: Answer) -> dict[str, Any]:
    """Every request answered, concurrently, as JSON-ready values by key."""
    responses: dict[str, Any] = {}

    async def one(key: str, request: t.InputRequest) -> None:
        spec = METHODS.get(request.method)
        if spec is None or request.method not in (
            "elicitation/create",
            "sampling/createMessage",
            "roots/list",
        ):
            raise McpError(
                INTERNAL_ERROR, f"the server asks for {request.method!r}, not an input request"
            )
        given = {} if request.params is UNSET or request.params is None else request.params
        try:
            params = msgspec.convert(given, spec.params)
        except msgspec.ValidationError as error:
            raise McpError(
                INTERNAL_ERROR, f"invalid params of input request {key!r}: {error}"
            ) from None
        responses[key] = msgspec.to_builtins(await answer(request.method, params))

    async with trio.open_nursery() as nursery:
        for key, request in requests.items():
            nursery.start_soon(one, key, request)
    return responses
