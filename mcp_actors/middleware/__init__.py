"""Middleware shipped with mcp_actors: timing and logging, a per-caller rate limit, an allow-list.

Give them to a server (``Server(..., middleware=[...])`` or ``server.add_middleware``)
or a client (``open_client(..., middleware=[...])``); write your own by subclassing
:class:`~mcp_actors.runtime.middleware.Middleware`.
"""

from ..runtime.middleware import Call, CallNext, Middleware, NotifyNext
from .allow_list import ToolAllowList
from .rate_limit import RateLimit
from .timing import MethodTiming, Timing

__all__ = [
    "Call",
    "CallNext",
    "MethodTiming",
    "Middleware",
    "NotifyNext",
    "RateLimit",
    "Timing",
    "ToolAllowList",
]
