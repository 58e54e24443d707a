"""The Streamable HTTP endpoint's decisions, as pure functions: no sockets, no awaiting.

The endpoint (:mod:`.endpoint`) does the I/O — reads a body, opens a session,
writes a reply — around these; each takes what a request said (its method, its
headers, the facts of its decoded body, see :mod:`~mcp_actors.protocol.received`)
and returns what to do, so that every status code and error message the
endpoint can answer is decided here and tested without a server.
"""

from __future__ import annotations

from ...protocol.versions import REVISIONS


def is_handshake_version(version: str) -> bool:
    """Whether ``version`` names a revision opened by ``initialize`` (2024-11-05 …
    2025-11-25). Any other value — 2026-07-28, or one we have never heard of — asks
    for the per-request era, whose ladder then accepts it or says which versions it
    serves."""
    revision = REVISIONS.get(version)
    return revision is not None and revision.handshake
