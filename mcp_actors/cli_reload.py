"""``mcp-actors run TARGET --transport http --reload``: restart the server when its source changes.

For development: this process serves nothing itself. It runs the same command without
``--reload`` as a child process, watches the target's folder (a file's or a gateway
file's folder; the current folder for a module or plugin) and its subfolders for
changed ``.py`` and ``.toml`` files, and on a change stops the child (SIGINT: a graceful
shutdown, SIGKILL after 5 seconds) and starts it again — so the new code is imported
afresh, and a target that fails to load is tried again on the next change. Ctrl-C or
SIGTERM stops both.

The watching is `watchfiles <https://watchfiles.helpmanual.io>`_'s (``run_process``, its
synchronous API: no event loop here), installed with ``pip install
'mcp-actors[reload]'``. Network transports only: a stdio server belongs to the client
that launched it (restart it there). With ``--port 0`` each start picks a new port (the
URL is announced again).
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from .cli_errors import EXIT_FAILURE, CliFailure
from .cli_targets import is_gateway_file

#: Files whose change restarts the server.
WATCHED_EXTENSIONS = (".py", ".toml")


def watched_folder(target: str) -> Path:
    """The folder to watch for ``target``'s source."""
    source = target.rpartition(":")[0] if target.count(":") else target
    if source.endswith(".py") or is_gateway_file(source):
        return Path(source).resolve().parent
    return Path.cwd()


def run_reloading(target: str, transport: str, argv: Sequence[str]) -> int:
    """Serve ``argv`` (``mcp-actors`` arguments, ``--reload`` among them) in a child
    process restarted on each change of the target's source; 0 once interrupted."""
    if transport == "stdio":
        raise CliFailure(
            EXIT_FAILURE,
            "--reload serves over the network only (--transport http, sse or ws): a stdio"
            " server is restarted by the client that launched it",
        )
    from watchfiles import Change, PythonFilter, run_process  # extra "reload"

    command = [sys.executable, "-m", "mcp_actors.cli", *(a for a in argv if a != "--reload")]
    folder = watched_folder(target)
    print(f"mcp-actors: watching {folder} for changes (--reload)", file=sys.stderr, flush=True)

    def restarting(changes: set[tuple[Change, str]]) -> None:
        changed = sorted({Path(path).name for _, path in changes})
        print(f"mcp-actors: {', '.join(changed)} changed: restarting", file=sys.stderr, flush=True)

    run_process(
        folder,
        target=shlex.join(command),
        target_type="command",
        watch_filter=PythonFilter(extra_extensions=WATCHED_EXTENSIONS),
        callback=restarting,
    )
    return 0
