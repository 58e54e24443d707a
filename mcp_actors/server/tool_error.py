"""A tool's refusal of a call that is the caller's fault.

A tool raises :class:`ToolError` when what it was asked cannot be done because of
the caller (a path outside its directory, a file that is not there, an answer to
its question that does not fit): the message, written for the caller, becomes the
``isError`` result as it is (never masked), and the server logs one DEBUG line
without a traceback (see :mod:`.tools`) — the caller's mistake is not the
server's error, and a caller repeating it cannot flood the log.
"""

from __future__ import annotations


class ToolError(Exception):
    """Raised by a tool to refuse a call for the caller's fault: the message (written for
    the caller) becomes the ``isError`` result; logged at DEBUG only, in one line."""
