"""Extension identifiers, and reading which extensions a peer declared.

Extensions are negotiated under ``capabilities.extensions``: a map from an
identifier (``{vendor-prefix}/{name}``, e.g. ``io.modelcontextprotocol/skills``) to
that extension's settings object (``{}``: supported, no optional features). Both
sides declare theirs, in both eras (see :mod:`mcp_actors.server.extensions`).
"""

from __future__ import annotations

import re
from typing import Any, Final

#: ``{vendor-prefix}/{name}``: a dotted prefix (reversed domain) and a name, as ``_meta`` keys.
_IDENTIFIER: Final = re.compile(
    r"[a-zA-Z](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)+"
    r"/[a-zA-Z0-9](?:[a-zA-Z0-9._-]*[a-zA-Z0-9])?"
)


def check_identifier(identifier: str) -> str:
    """``identifier`` if it has the form ``{vendor-prefix}/{name}``, else ValueError."""
    if not isinstance(identifier, str) or _IDENTIFIER.fullmatch(identifier) is None:
        raise ValueError(
            f"extension identifier {identifier!r} must be '{{vendor-prefix}}/{{name}}' with a"
            " dotted vendor prefix, e.g. 'com.example/my-extension'"
        )
    return identifier


def declared_settings(capabilities: object, identifier: str) -> dict[str, Any] | None:
    """The settings a peer declared for extension ``identifier`` in its ``capabilities``
    (a capabilities Struct), or None when it did not declare it."""
    extensions = getattr(capabilities, "extensions", None)
    if not isinstance(extensions, dict):
        return None
    settings = extensions.get(identifier)
    return settings if isinstance(settings, dict) else None
