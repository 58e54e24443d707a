"""``mcp-actors install TARGET --client NAME``: add a server to an MCP client's configuration file.

Where ``mcp-actors config`` prints the entry to paste, ``install`` writes it — into the
file the client reads (:mod:`.cli_clients`: Claude Desktop, Claude Code, Cursor, VS
Code, Windsurf, Gemini CLI; ``--config-path FILE`` for another one of the same shape):

- the target is loaded first, so a server that cannot start is not installed;
- the file's other content (other servers, other settings) is kept as it is, in its
  order; a file that is not a JSON object (VS Code's comments included) is refused,
  never overwritten;
- installing what is already there changes nothing — no write, no backup (run it
  again at will); an entry of the same name that launches something else is refused
  unless ``--force`` replaces it;
- before the file changes, its previous content is copied to ``FILE.bak`` (one backup:
  the state before the last change), and the new content replaces it atomically (a
  temporary file renamed over it, its permissions kept);
- ``--dry-run`` prints the file as it would be, and writes nothing.

The entry is named after the server (``--name`` to choose: letters, digits, ``-``,
``_`` and ``.``, at most 64). A configuration file larger than :data:`MAX_CONFIG_BYTES` is
refused (no client's is).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import attrs

from .cli_clients import CLIENTS, McpClient, launch_entry
from .cli_errors import EXIT_FAILURE, CliFailure
from .cli_targets import SERVED_METAVAR, load_served

#: The largest configuration file read.
MAX_CONFIG_BYTES = 10 * 1024 * 1024
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")


@attrs.frozen
class Change:
    """What installing does to a configuration file."""

    path: Path
    before: str | None  # None: no file yet
    after: str

    @property
    def changed(self) -> bool:
        return self.before != self.after


def add_parser(commands: Any) -> argparse.ArgumentParser:
    """Add the ``install`` sub-command to the CLI's sub-parsers."""
    install: argparse.ArgumentParser = commands.add_parser(
        "install", help="add a server to an MCP client's configuration file"
    )
    install.add_argument("target", metavar=SERVED_METAVAR)
    install.add_argument("--client", choices=sorted(CLIENTS), required=True)
    install.add_argument("--name", default=None, help="the entry's name (default: server name)")
    install.add_argument(
        "--config-path", type=Path, default=None, metavar="FILE", help="the file to write"
    )
    install.add_argument(
        "--dry-run", action="store_true", help="print the file as it would be; write nothing"
    )
    install.add_argument("--force", action="store_true", help="replace an entry of the same name")
    install.set_defaults(action=run)
    return install


def run(options: argparse.Namespace) -> int:
    client = CLIENTS[options.client]
    server = load_served(options.target)
    name = options.name or server.name
    if not _NAME.fullmatch(name):
        raise CliFailure(
            EXIT_FAILURE,
            f"{name!r} cannot name an entry (letters, digits, '-', '_', '.'; at most 64):"
            " choose one with --name",
        )
    path = options.config_path or client.default_path(Path.home(), Path.cwd())
    change = planned(path, client, name, launch_entry(options.target, client), options.force)
    if options.dry_run:
        sys.stdout.write(change.after)
        verb = "would change" if change.changed else "would leave unchanged"
        print(f"mcp-actors: {verb} {path} (dry run: nothing written)", file=sys.stderr)
    elif not change.changed:
        print(f"mcp-actors: {name!r} is already in {path}: nothing changed", file=sys.stderr)
    else:
        backup = write(change)
        kept = f"; the previous file is {backup}" if backup else ""
        print(
            f"mcp-actors: added {name!r} to {path} ({client.label}){kept}; {client.reload_hint}",
            file=sys.stderr,
        )
    return 0


def planned(path: Path, client: McpClient, name: str, entry: dict[str, Any], force: bool) -> Change:
    """The file's content before and after ``entry`` is added as ``name`` (module docstring);
    a :class:`CliFailure` when the file cannot be read as the client's configuration."""
    before = _read(path)
    config = _parsed(path, before) if before is not None else {}
    servers = config.setdefault(client.servers_key, {})
    if not isinstance(servers, dict):
        raise CliFailure(
            EXIT_FAILURE, f"{path}: {client.servers_key!r} is not an object; fix the file first"
        )
    if name in servers and servers[name] != entry and not force:
        raise CliFailure(
            EXIT_FAILURE,
            f"{path} has an entry {name!r} that launches something else: --force replaces it"
            " (the file is backed up first), --name installs this one beside it",
        )
    if servers.get(name) == entry and before is not None:
        return Change(path, before, before)  # already there: the file as it is
    servers[name] = entry
    return Change(path, before, json.dumps(config, indent=2, ensure_ascii=False) + "\n")


def write(change: Change) -> Path | None:
    """Back the file up (``FILE.bak``) and replace it atomically; the backup, if any."""
    path = change.path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        backup = None
        if change.before is not None:
            backup = path.with_name(path.name + ".bak")
            shutil.copy2(path, backup)
        descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as file:
                file.write(change.after)
            if backup is not None:
                shutil.copymode(backup, temporary)
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError as error:
        raise CliFailure(EXIT_FAILURE, f"cannot write {path}: {error.strerror}") from None
    return backup


def _read(path: Path) -> str | None:
    try:
        with path.open("rb") as file:
            data = file.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise CliFailure(EXIT_FAILURE, f"cannot read {path}: {error.strerror}") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise CliFailure(EXIT_FAILURE, f"{path} is larger than {MAX_CONFIG_BYTES} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise CliFailure(EXIT_FAILURE, f"{path} is not UTF-8 text") from None


def _parsed(path: Path, text: str) -> dict[str, Any]:
    if not text.strip():
        return {}
    try:
        config = json.loads(text)
    except json.JSONDecodeError as error:
        raise CliFailure(
            EXIT_FAILURE,
            f"{path} is not JSON ({error.msg}, line {error.lineno}): it is left as it is;"
            " fix it (comments included), or choose another file with --config-path",
        ) from None
    if not isinstance(config, dict):
        raise CliFailure(EXIT_FAILURE, f"{path} does not hold a JSON object")
    return config
