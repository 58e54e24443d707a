"""The driver's ceiling: the same loop against nginx answering one fixed reply to everything.

A load generator that is the bottleneck measures itself. nginx (Debian's; C, one worker
process) answers every request of the loop with one canned JSON-RPC reply that
passes all of k6's checks, in microseconds: what the driver reaches against it is the
most it can measure, and its CPU share there is what it takes from the machine per
session. A server measured well below that ceiling is measured, not the driver.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Final

from . import processes
from .driver import Driver, Tally
from .references import Launch

#: One reply that passes every check of the loop (initialize, each tool, tools/list).
_TEXT: Final = json.dumps(
    {
        "total_found": 2251,
        "products": list(range(10)),
        "top10_popular_ids": list(range(10)),
        "user_id": "user-00001",
        "cart": {"items": [1]},
        "recent_history": list(range(5)),
        "status": "confirmed",
        "total": 1,
        "items_count": 2,
    }
)
REPLY: Final = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"tools": [{}], "content": [{"type": "text", "text": _TEXT}]},
    }
)
CONFIG: Final = """
worker_processes 1;
daemon off;
pid {directory}/nginx.pid;
error_log stderr warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {directory};
    keepalive_requests 100000000;
    server {{
        listen 127.0.0.1:{port};
        location / {{ default_type application/json; return 200 '{reply}'; }}
    }}
}}
"""


def nginx(port: int, directory: Path) -> Launch:
    """nginx serving :data:`REPLY` on ``port`` (its files in ``directory``)."""
    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    reply = REPLY.replace("\\", "\\\\").replace("'", "\\'")
    config = directory / "nginx.conf"
    config.write_text(CONFIG.format(directory=directory, port=port, reply=reply))
    return Launch([binary, "-p", str(directory), "-e", "stderr", "-c", str(config)], directory, {})


def check_driver(
    *, sessions: int, vus: int = 50, think: float = 0.05, warmup: float = 1.0
) -> Tally:
    """The driver's loop against nginx: its tally (req/s, its own CPU)."""
    with tempfile.TemporaryDirectory() as directory:
        port = processes.free_port()
        with processes.started(nginx(port, Path(directory)), port):
            return Driver("127.0.0.1", port, vus=vus, think=think).run(
                warmup=warmup, sessions=sessions
            )
