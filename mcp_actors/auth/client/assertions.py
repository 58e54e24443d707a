"""Signed JWTs a client presents: ``private_key_jwt`` client authentication (RFC 7523
§2.2) and DPoP proofs (RFC 9449), signed through joserfc (no crypto of our own).

- :class:`PrivateKeyJwt` signs, for each token request, an assertion whose ``iss``
  and ``sub`` are the client id and whose ``aud`` is the authorization server's
  issuer, short-lived (``exp``) and unique (``jti``);
- :class:`DPoPKey` holds a key pair (P-256 by default) and signs a proof per HTTP
  request: header ``typ=dpop+jwt`` with the public ``jwk``; claims ``htm``, ``htu``
  (no query, no fragment), ``iat``, ``jti``, the ``nonce`` the server asked for,
  and ``ath`` (the access token's hash) on requests to the resource. It remembers
  the last nonce each server (origin) sent, at most ``max_nonces`` of them.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from collections import OrderedDict
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from joserfc import jwt
from joserfc.jwk import ECKey, OKPKey, RSAKey, import_key

_KeyType = Literal["EC", "RSA", "OKP"]
SigningKey = ECKey | RSAKey | OKPKey


def key_type_of(algorithm: str) -> _KeyType:
    """The JWK key type an algorithm signs with (``ES256`` → ``EC``...)."""
    if algorithm.startswith("ES"):
        return "EC"
    if algorithm.startswith(("RS", "PS")):
        return "RSA"
    if algorithm in ("EdDSA", "Ed25519"):
        return "OKP"
    raise ValueError(f"not an asymmetric JWS algorithm: {algorithm!r}")


def load_private_key(pem: str | bytes, algorithm: str) -> SigningKey:
    """A PEM private key, for signing with ``algorithm``."""
    key = import_key(pem, key_type_of(algorithm))
    if not isinstance(key, ECKey | RSAKey | OKPKey) or not key.is_private:
        raise ValueError("expected an asymmetric private key")
    return key


class PrivateKeyJwt:
    """Signs ``private_key_jwt`` client assertions (the module docstring)."""

    def __init__(
        self, key: SigningKey | str | bytes, algorithm: str = "ES256", lifetime: float = 300.0
    ) -> None:
        self.key = (
            key if isinstance(key, ECKey | RSAKey | OKPKey) else load_private_key(key, algorithm)
        )
        self.algorithm = algorithm
        self.lifetime = lifetime

    def __call__(self, client_id: str, audience: str) -> str:
        now = int(time.time())
        claims = {
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": now,
            "exp": now + int(self.lifetime),
            "jti": secrets.token_urlsafe(16),
        }
        return jwt.encode(
            {"alg": self.algorithm, "typ": "JWT"}, claims, self.key, algorithms=[self.algorithm]
        )


def _htu(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


class DPoPKey:
    """A DPoP key pair and the proofs it signs (the module docstring)."""

    algorithm = "ES256"

    def __init__(self, key: ECKey | None = None, max_nonces: int = 64) -> None:
        self.key = key or ECKey.generate_key("P-256", private=True)
        self.public_jwk = self.key.as_dict(private=False)
        self.max_nonces = max_nonces
        self._nonces: OrderedDict[str, str] = OrderedDict()

    def remember_nonce(self, url: str, nonce: str | None) -> bool:
        """Keep the ``DPoP-Nonce`` a server sent; True if it is new."""
        if not nonce:
            return False
        origin = _origin(url)
        known = self._nonces.get(origin)
        self._nonces[origin] = nonce
        self._nonces.move_to_end(origin)
        while len(self._nonces) > self.max_nonces:
            self._nonces.popitem(last=False)
        return known != nonce

    def proof(self, method: str, url: str, access_token: str | None = None) -> str:
        """A fresh proof for one request (with ``ath`` when it carries ``access_token``)."""
        claims: dict[str, object] = {
            "htm": method.upper(),
            "htu": _htu(url),
            "iat": int(time.time()),
            "jti": secrets.token_urlsafe(16),
        }
        nonce = self._nonces.get(_origin(url))
        if nonce is not None:
            claims["nonce"] = nonce
        if access_token is not None:
            digest = hashlib.sha256(access_token.encode("ascii")).digest()
            claims["ath"] = base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")
        header = {"typ": "dpop+jwt", "alg": self.algorithm, "jwk": self.public_jwk}
        return jwt.encode(header, claims, self.key, algorithms=[self.algorithm])
