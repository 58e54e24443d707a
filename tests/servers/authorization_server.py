"""A real OAuth authorization server for the auth tests: oidc-provider under Node.

:func:`start_authorization_server` runs ``tests/oauth_server/server.mjs`` (see its header
for the issuers, clients and test-only routes) and returns an
:class:`AuthorizationServer` that mints tokens the way a client acting on its own
behalf does (client credentials, RFC 8707 ``resource``), and can rotate an issuer's key.

The Node packages (oidc-provider, and Node 22 itself) are installed by ``.ci/test``
(``npm install`` in tests/oauth_server).
Without Node or the package, the tests that need the server are skipped locally and
fail in CI (``CI=true``), where it must be there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import attrs
import httpx
import pytest

HERE = Path(__file__).resolve().parent.parent / "oauth_server"
REPO = HERE.parent.parent
SECRET = "svc-secret"


def node_command() -> str | None:
    """The Node 22 installed beside the server (its package.json depends on it), else the
    one .ci/conformance installs, else PATH's."""
    for pinned in (
        HERE / "node_modules" / ".bin" / "node",
        REPO / ".ci" / "node" / "node_modules" / ".bin" / "node",
    ):
        if pinned.exists():
            return str(pinned)
    return shutil.which("node")


@attrs.define
class AuthorizationServer:
    process: subprocess.Popen[bytes]
    origin: str

    def issuer(self, tenant: str = "main") -> str:
        return f"{self.origin}/{tenant}"

    def jwks_url(self, tenant: str = "main") -> str:
        return f"{self.issuer(tenant)}/jwks"

    def introspection_url(self, tenant: str = "main") -> str:
        return f"{self.issuer(tenant)}/token/introspection"

    async def token(
        self,
        resource: str,
        scope: str = "notes:read",
        *,
        client_id: str = "svc",
        tenant: str = "main",
    ) -> str:
        """An access token from the client credentials grant, for ``resource``."""
        async with httpx.AsyncClient() as client:
            response = await client.post(
                f"{self.issuer(tenant)}/token",
                data={"grant_type": "client_credentials", "resource": resource, "scope": scope},
                auth=(client_id, SECRET),
            )
        response.raise_for_status()
        token: str = response.json()["access_token"]
        return token

    async def rotate(self, tenant: str) -> str:
        """Replace ``tenant``'s signing key; returns the new key's id."""
        async with httpx.AsyncClient() as client:
            response = await client.post(f"{self.origin}/admin/rotate/{tenant}")
        response.raise_for_status()
        kid: str = response.json()["kid"]
        return kid

    def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()  # the server exits when its stdin ends
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        finally:
            assert self.process.stdout is not None
            self.process.stdout.close()


def start_authorization_server() -> AuthorizationServer:
    node = node_command()
    installed = (HERE / "node_modules" / "oidc-provider").is_dir()
    if node is None or not installed:
        reason = "Node or oidc-provider missing: run `npm install` in tests/oauth_server"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    process = subprocess.Popen(
        [node, str(HERE / "server.mjs")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=HERE,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line:
        process.wait(timeout=10)
        process.stdout.close()
        pytest.fail(f"the authorization server did not start (exit {process.returncode})")
    port = json.loads(line)["port"]
    return AuthorizationServer(process, f"http://127.0.0.1:{port}")
