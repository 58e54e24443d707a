"""What the requests in a message act on: the method and the tool, prompt or resource named.

An authorization check before a message reaches its session (a token's scopes against
what a ``tools/call`` of one tool needs) must know, for each request in a POST body,
its method and its target: ``params.name`` (tools, prompts) or ``params.uri``
(resources). :func:`request_targets` answers that with one light decode, without
decoding the arguments.
"""

from __future__ import annotations

from typing import Any

import attrs
import msgspec


class _TargetParams(msgspec.Struct):
    name: Any = None
    uri: Any = None


_NO_PARAMS = msgspec.Raw(b"null")


class _Message(msgspec.Struct):
    id: Any = None
    method: Any = None
    params: msgspec.Raw = msgspec.field(default_factory=lambda: _NO_PARAMS)


_decode_batch = msgspec.json.Decoder(list[msgspec.Raw]).decode
_decode_message = msgspec.json.Decoder(_Message).decode
_decode_params = msgspec.json.Decoder(_TargetParams | None).decode


@attrs.frozen
class Target:
    """One request's method and the name or URI it acts on (None: it names none)."""

    method: str
    name: str | None = None
    #: Whether the message is a request (has an id) rather than a notification.
    request: bool = True


def request_targets(body: bytes) -> list[Target] | None:
    """The targets of the messages in ``body`` (one message or a batch), responses
    left out; None if ``body`` is not JSON at all.

    Lenient by design: an item that is not a JSON object is skipped (no session can
    act on it either), and params of the wrong shape give a target without a name.
    """
    items: list[msgspec.Raw] | list[bytes]
    try:
        items = _decode_batch(body) if body.lstrip()[:1] == b"[" else [body]
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    targets = []
    for item in items:
        try:
            message = _decode_message(item)
        except msgspec.ValidationError:
            continue
        except msgspec.DecodeError:
            return None
        if not isinstance(message.method, str):
            continue  # a response
        targets.append(Target(message.method, _name(message.params), message.id is not None))
    return targets


def _name(raw: msgspec.Raw) -> str | None:
    try:
        params = _decode_params(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if params is None:
        return None
    if isinstance(params.name, str):
        return params.name
    return params.uri if isinstance(params.uri, str) else None
