"""What a server declares in ``initialize`` (and with every modern request): its capabilities.

They follow what is registered (:meth:`.registry.Registry.offer`) and mounted when
the client connects, the protocol revision it negotiates, and whether the transport
keeps a channel back to it. :class:`DeclaredCapabilities` builds each distinct answer
once and hands out the same object to every session given it (a modern server is
asked for every request).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import attrs
from msgspec import UNSET

from ..protocol import types as t
from ..protocol.versions import Revision

#: What a 2025-11-25 server with task tools declares: list (each requestor its own
#: tasks: see :mod:`.task_methods`), cancel, and task-augmented ``tools/call``.
_LEGACY_TASKS_CAPABILITY: dict[str, Any] = {
    "list": {},
    "cancel": {},
    "requests": {"tools": {"call": {}}},
}


class Offer(NamedTuple):
    """What a registry holds, as far as the capabilities depend on it (a tuple: it is
    made and hashed on every request that asks for the capabilities)."""

    tools: bool
    resources: bool
    prompts: bool
    completions: bool
    #: Whether some tool may run as a task.
    tasks: bool
    #: Changes so far to the extensions offered (a new count: a new declaration).
    extensions_changes: int


@attrs.define
class DeclaredCapabilities:
    """The capabilities declared so far, by everything they depend on: at most ``kept``
    distinct answers (beyond, the table starts over; each is rebuilt when next asked)."""

    kept: int = 64
    _declared: dict[tuple[object, ...], t.ServerCapabilities] = attrs.field(
        init=False, factory=dict
    )

    def get(
        self,
        revision: Revision,
        stateless: bool,
        offer: Offer,
        mounted: frozenset[str],
        extensions: Callable[[], dict[str, dict[str, Any]]],
    ) -> t.ServerCapabilities:
        """What to declare to a client of ``revision`` (see :meth:`.app.Server.capabilities`);
        ``mounted``: the kinds mounted servers offer; ``extensions``: the offered ones."""
        key = (revision.name, stateless, offer, mounted)
        declared = self._declared.get(key)
        if declared is None:
            if len(self._declared) >= self.kept:
                self._declared.clear()
            declared = self._declared[key] = build(
                revision, stateless, offer, mounted, extensions()
            )
        return declared


def build(
    revision: Revision,
    stateless: bool,
    offer: Offer,
    mounted: frozenset[str],
    extensions: dict[str, dict[str, Any]],
) -> t.ServerCapabilities:
    """The capabilities for one answer (``extensions``: a fresh dict, completed here)."""
    # Change notifications need a channel: a legacy session's, or (modern era) a
    # subscriptions/listen stream, which every transport carries.
    sessions = True if not revision.handshake or not stateless else UNSET
    tasks = offer.tasks and not revision.handshake  # the extension: 2026-07-28 on
    legacy_tasks = offer.tasks and revision.name == "2025-11-25" and not stateless
    if tasks:
        extensions[t.TASKS_EXTENSION] = {}
    completions = offer.completions and revision.completions_capability
    return t.ServerCapabilities(
        extensions=extensions or UNSET,
        logging={},
        completions={} if completions else UNSET,
        prompts=t.PromptsCapability(list_changed=sessions)
        if offer.prompts or "prompts" in mounted
        else UNSET,
        resources=(
            t.ResourcesCapability(subscribe=sessions, list_changed=sessions)
            if offer.resources or "resources" in mounted
            else UNSET
        ),
        tools=(
            t.ToolsCapability(list_changed=sessions) if offer.tools or "tools" in mounted else UNSET
        ),
        tasks=_LEGACY_TASKS_CAPABILITY if legacy_tasks else UNSET,
    )
