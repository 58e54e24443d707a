"""``requestState``: what a server seals into an ``input_required`` result and reads back.

In a multi round-trip request (MRTR, 2026-07-28) the server answers ``tools/call``,
``prompts/get`` or ``resources/read`` with ``resultType: "input_required"`` and an
opaque ``requestState``; the client echoes it on its retry. The string passes
through the client, so it is *attacker input* (``basic/patterns/mrtr.mdx``,
"Security Considerations"). Here it is a JWE (compact serialization, ``alg: dir``,
``enc: A256GCM``: encrypted and integrity-protected with a server key, never
home-made crypto) whose protected header names the key (``kid``), so that keys can
be rotated: :class:`StateKeys` holds several, the first seals, any of them opens.

The sealed payload (:class:`RequestState`) binds the state to the request it came
from — method, target (tool or prompt name, resource URI), a digest of the
arguments — and to an expiry; it carries the continuation id (to find a parked
handler) and the input responses given so far (to replay the handler when the
continuation is gone). :func:`open_state` refuses, with -32602 and a reason, a
state that does not decrypt under any key, is malformed, has expired, or is bound
to another request. Nothing here does I/O: the caller passes the clock.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from typing import Any, Final

import attrs
import msgspec
from joserfc import jwe
from joserfc.errors import JoseError
from joserfc.jwk import KeySet, OctKey

from .errors import INVALID_PARAMS, McpError

#: The key length of ``A256GCM``: 32 bytes.
KEY_BYTES: Final = 32
_PROTECTED: Final = {"alg": "dir", "enc": "A256GCM"}
#: Longest ``requestState`` accepted (a bigger one is refused before any decryption).
MAX_STATE_CHARS: Final = 256 * 1024


class RequestState(msgspec.Struct, forbid_unknown_fields=True):
    """What a ``requestState`` carries (sealed; the client never sees it)."""

    #: The method (``tools/call``...), and its target: tool or prompt name, resource URI.
    method: str
    target: str
    #: SHA-256 (hex) of the canonical JSON of the request's arguments.
    digest: str
    #: When it stops being accepted (seconds since the epoch).
    expires: float
    #: The parked continuation that waits for the answers ("" for none).
    continuation: str
    #: Every input response given so far, by key (replayed if the continuation is gone).
    answers: dict[str, Any]
    #: Who it was issued to, on a server that authenticates its callers (see
    #: ``server.authorization.caller_key``; "" for none): another caller cannot use it.
    caller: str = ""


_decode: Final = msgspec.json.Decoder(RequestState)
_encode: Final = msgspec.json.Encoder(order="sorted").encode


def key_id(key: bytes) -> str:
    """The ``kid`` of a key: the start of its SHA-256, which says nothing of the key."""
    return hashlib.sha256(b"mcp-actors request-state kid:" + key).hexdigest()[:16]


def _check_keys(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, tuple) or not value:
        raise ValueError("request-state keys: give a non-empty tuple of 32-byte keys")
    for key in value:
        if not isinstance(key, bytes) or len(key) != KEY_BYTES:
            raise ValueError(
                f"request-state keys must be {KEY_BYTES} bytes each (A256GCM), not {key!r:.20}"
            )


@attrs.frozen
class StateKeys:
    """The keys ``requestState`` is sealed with: the first seals, every one opens.

    Give every worker of a deployment the same keys so that any of them accepts a
    state another one sealed; to rotate, put the new key first and keep the old one
    until the states it sealed have expired. :meth:`random` makes a per-process key
    (states then die with the process: a retry after a restart gets -32602).
    """

    keys: tuple[bytes, ...] = attrs.field(validator=_check_keys)
    _set: KeySet = attrs.field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        jwks: list[Any] = [OctKey.import_key(key, {"kid": key_id(key)}) for key in self.keys]
        object.__setattr__(self, "_set", KeySet(jwks))

    @classmethod
    def random(cls) -> StateKeys:
        return cls((secrets.token_bytes(KEY_BYTES),))

    def seal(self, state: RequestState) -> str:
        """``state`` encrypted under the first key, as a compact JWE."""
        key = self.keys[0]
        header = {**_PROTECTED, "kid": key_id(key)}
        return jwe.encrypt_compact(header, _encode(state), OctKey.import_key(key))

    def open(self, token: object) -> RequestState:
        """The state ``token`` seals; -32602 if it is not one of ours, intact."""
        if not isinstance(token, str) or not token or len(token) > MAX_STATE_CHARS:
            raise invalid_state("it is not a requestState this server issued")
        try:
            plaintext = jwe.decrypt_compact(token, self._set, algorithms=["dir", "A256GCM"])
            return _decode.decode(plaintext.plaintext or b"")
        except (JoseError, ValueError, TypeError, KeyError, msgspec.DecodeError):
            reason = "it does not verify (tampered, or sealed with another key)"
            raise invalid_state(reason) from None


def invalid_state(reason: str) -> McpError:
    return McpError(INVALID_PARAMS, f"Invalid params: requestState refused: {reason}")


def arguments_digest(arguments: Any) -> str:
    """SHA-256 (hex) of ``arguments`` as canonical JSON (keys sorted)."""
    return hashlib.sha256(_encode(arguments)).hexdigest()


def check_binding(
    state: RequestState, *, method: str, target: str, digest: str, now: float, caller: str = ""
) -> None:
    """Refuse (-32602) a state that has expired or was issued for another request
    (or to another caller)."""
    if state.caller != caller:
        raise invalid_state("it was issued to another caller")
    if now > state.expires:
        raise invalid_state("it has expired; send the request again without it")
    if (state.method, state.target) != (method, target):
        raise invalid_state(f"it was issued for {state.method} {state.target!r}")
    if state.digest != digest:
        raise invalid_state("it was issued for other arguments")


def make_keys(keys: Sequence[bytes] | None) -> StateKeys:
    """:class:`StateKeys` from configured keys, or a random per-process key."""
    return StateKeys.random() if keys is None else StateKeys(tuple(keys))
