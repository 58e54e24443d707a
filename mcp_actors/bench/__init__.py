"""The benchmark harness: ``mcp-actors bench TARGET`` against any MCP server (stdio or URL).

:func:`run_bench` takes a *connector* (a function opening one session's wire), so
any transport that yields a :class:`~mcp_actors.transports.abc.MessageStream` can
be measured; :func:`connector_for` makes one from ``stdio:CMD ARGS`` or a URL.

Besides the closed-loop workloads (:mod:`.runner`), a :class:`BenchConfig` may ask
for open-model load (``rates``, :mod:`.openloop`; ``find_max_p99_ms``, :mod:`.search`)
or virtual users from a scenario file (``scenario``, :mod:`.scenario` and
:mod:`.scenario_run`); :mod:`.processes` runs several load processes, :mod:`.html`
and :mod:`.compare` turn reports into pages and comparisons.
"""

from .runner import DEFAULT_WORKLOADS, BenchConfig, Workload, parse_workloads, run_bench
from .stdio import stdio_connector
from .targets import connector_for
from .wire import BenchError, Connector, stream_connector

__all__ = [
    "DEFAULT_WORKLOADS",
    "BenchConfig",
    "BenchError",
    "Connector",
    "Workload",
    "connector_for",
    "parse_workloads",
    "run_bench",
    "stdio_connector",
    "stream_connector",
]
