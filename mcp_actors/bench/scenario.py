"""``--scenario FILE``: virtual users described in a small TOML file.

A scenario says what each virtual user does, over and over (one *iteration*):

.. code-block:: toml

    name = "mixed"
    session = "long-lived"     # or "per-iteration": open, calls, close each time
    era = "auto"               # auto | modern | legacy
    users = 8                  # virtual users (closed model; --rate: iterations/s)
    calls_per_iteration = 1
    think_time = 0.0           # seconds a user waits between iterations
    seed = 1                   # the picks and generated arguments repeat with it

    [auth]
    bearer = "a token"         # or bearer_env = "VARIABLE": sent as Authorization

    [[stages]]                 # ramp: users go linearly to ``users`` over ``duration``
    duration = 5
    users = 50

    [[mix]]                    # each call picks one entry, by weight
    weight = 3
    tool = "add"
    arguments = { a = { range = [1, 100] }, b = 2 }
    [[mix]]
    weight = 1
    resource = "demo://greeting"
    [[mix]]
    weight = 1
    prompt = "greet"
    arguments = { name = { choice = ["Ada", "Grace"] } }

Argument values are *generators*: a plain value is fixed; ``{choice = [...]}`` picks
one; ``{range = [LOW, HIGH]}`` an integer in it (both included); ``{csv = "FILE",
column = "NAME"}`` the column's values in turn (the file relative to the scenario's,
read once, 100,000 rows at most; a cell that reads as a JSON number, ``true``,
``false`` or ``null`` is that value, any other a string). A ``[[mix]]`` entry names
exactly one of ``tool``, ``resource`` (a URI) or ``prompt``. Anything else in the
file is an error naming it.
"""

from __future__ import annotations

import bisect
import csv
import functools
import itertools
import os
import random
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import attrs
import msgspec

from .wire import ERAS, BenchError

SESSIONS: Final = ("long-lived", "per-iteration")
_GOLDEN: Final = 0.6180339887498949
_SQRT2: Final = 0.41421356237309515
#: Rows of a ``csv`` generator's file read at most.
MAX_CSV_ROWS: Final = 100_000
_TOP_KEYS: Final = {
    "name",
    "session",
    "era",
    "users",
    "calls_per_iteration",
    "think_time",
    "seed",
    "auth",
    "stages",
    "mix",
}


@attrs.frozen
class Generator:
    """One argument's values: ``fixed``, ``choice``, ``range`` or ``csv`` (module docstring)."""

    kind: str
    value: Any = None
    choices: tuple[Any, ...] = ()
    low: int = 0
    high: int = 0
    rows: Iterator[Any] | None = attrs.field(default=None, eq=False)

    def draw(self, rng: random.Random) -> Any:
        if self.kind == "choice":
            return rng.choice(self.choices)
        if self.kind == "range":
            return rng.randint(self.low, self.high)
        if self.kind == "csv":
            assert self.rows is not None
            return next(self.rows)
        return self.value


@attrs.frozen
class Action:
    """One ``[[mix]]`` entry: a tool call, a resource read or a prompt, and its weight."""

    name: str
    method: str
    target: str
    weight: float
    arguments: dict[str, Generator]

    def params(self, rng: random.Random) -> dict[str, Any]:
        if self.method == "resources/read":
            return {"uri": self.target}
        arguments = {key: generator.draw(rng) for key, generator in self.arguments.items()}
        return {"name": self.target, "arguments": arguments}


@attrs.frozen
class Stage:
    """A ramp stage: the user count goes linearly to ``users`` over ``duration`` s."""

    duration: float
    users: int


@attrs.frozen(slots=False)  # the cached cumulative weights need a __dict__
class Scenario:
    """A parsed scenario file (see the module docstring)."""

    name: str
    session: str
    era: str
    users: int
    calls_per_iteration: int
    think_time: float
    seed: int
    bearer: str | None
    mix: tuple[Action, ...]
    stages: tuple[Stage, ...]

    def pick(self, draw: int) -> Action:
        """The entry of the ``draw``-th call: a low-discrepancy (golden ratio) sequence
        through the cumulative weights, so that any run of calls follows the weights
        closely (within a fraction of a percent after a thousand) in a mixed order,
        the same order for the same ``seed``."""
        point = (self.seed * _SQRT2 + draw * _GOLDEN) % 1.0 * self._cumulative[-1]
        return self.mix[bisect.bisect_right(self._cumulative, point)]

    @functools.cached_property
    def _cumulative(self) -> list[float]:
        return list(itertools.accumulate(action.weight for action in self.mix))

    @property
    def max_users(self) -> int:
        return max([self.users, *(stage.users for stage in self.stages)])


def _fail(path: Path, where: str, problem: str) -> BenchError:
    return BenchError(f"{path}: {where}: {problem}")


def _number(path: Path, where: str, value: Any, *, integer: bool = False) -> Any:
    kinds = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds) or value < 0:
        wanted = "a whole number" if integer else "a number"
        raise _fail(path, where, f"must be {wanted} >= 0, not {value!r}")
    return value


def _generator(path: Path, where: str, spec: Any) -> Generator:
    if not isinstance(spec, dict):
        return Generator("fixed", value=spec)
    keys = set(spec)
    if keys == {"choice"} and isinstance(spec["choice"], list) and spec["choice"]:
        return Generator("choice", choices=tuple(spec["choice"]))
    if keys == {"range"}:
        bounds = spec["range"]
        if (
            isinstance(bounds, list)
            and len(bounds) == 2
            and all(isinstance(b, int) and not isinstance(b, bool) for b in bounds)
            and bounds[0] <= bounds[1]
        ):
            return Generator("range", low=bounds[0], high=bounds[1])
        raise _fail(path, where, "range must be [LOW, HIGH], integers, LOW <= HIGH")
    if keys == {"csv", "column"}:
        return Generator("csv", rows=_csv_column(path, where, spec["csv"], spec["column"]))
    if keys & {"choice", "range", "csv"}:
        raise _fail(path, where, f"a generator is {{choice}}, {{range}} or {{csv, column}}: {spec}")
    return Generator("fixed", value=spec)  # an object argument, as it is


def _csv_column(path: Path, where: str, file: Any, column: Any) -> Iterator[Any]:
    source = path.parent / str(file)
    try:
        with source.open(newline="") as handle:
            rows = list(itertools.islice(csv.DictReader(handle), MAX_CSV_ROWS))
    except OSError as error:
        raise _fail(path, where, f"cannot read {source}: {error}") from None
    cells = [row.get(str(column)) for row in rows]
    if not cells or any(cell is None for cell in cells):
        raise _fail(path, where, f"{source} has no column {column!r} in every row (or no rows)")
    return itertools.cycle([_cell(cell) for cell in cells if cell is not None])


def _cell(text: str) -> Any:
    """A CSV cell's value: a number, ``true``/``false`` or ``null`` as JSON reads it,
    else the text itself."""
    try:
        value = msgspec.json.decode(text)
    except msgspec.DecodeError:
        return text
    return value if isinstance(value, (int, float, bool)) or value is None else text


def _action(path: Path, index: int, entry: Any) -> Action:
    where = f"mix[{index}]"
    if not isinstance(entry, dict):
        raise _fail(path, where, "must be a table")
    unknown = set(entry) - {"weight", "tool", "resource", "prompt", "arguments", "name"}
    if unknown:
        raise _fail(path, where, f"unknown keys {sorted(unknown)}")
    kinds = [key for key in ("tool", "resource", "prompt") if key in entry]
    if len(kinds) != 1 or not isinstance(entry[kinds[0]], str):
        raise _fail(path, where, "names exactly one of tool, resource, prompt (a string)")
    kind = kinds[0]
    weight = _number(path, f"{where}.weight", entry.get("weight", 1))
    arguments = entry.get("arguments", {})
    if not isinstance(arguments, dict) or (kind == "resource" and arguments):
        raise _fail(path, where, "arguments must be a table (and a resource takes none)")
    method = {"tool": "tools/call", "resource": "resources/read", "prompt": "prompts/get"}[kind]
    return Action(
        name=str(entry.get("name", f"{kind}:{entry[kind]}")),
        method=method,
        target=entry[kind],
        weight=float(weight),
        arguments={
            key: _generator(path, f"{where}.arguments.{key}", spec)
            for key, spec in arguments.items()
        },
    )


def _stages(path: Path, stages: Any) -> tuple[Stage, ...]:
    if not isinstance(stages, list):
        raise _fail(path, "stages", "must be an array of tables")
    found = []
    for index, stage in enumerate(stages):
        where = f"stages[{index}]"
        if not isinstance(stage, dict) or set(stage) != {"duration", "users"}:
            raise _fail(path, where, "must be a table of duration and users, nothing else")
        found.append(
            Stage(
                float(_number(path, f"{where}.duration", stage["duration"])),
                _number(path, f"{where}.users", stage["users"], integer=True),
            )
        )
    return tuple(found)


def _bearer(path: Path, auth: Any) -> str | None:
    if auth is None:
        return None
    if not isinstance(auth, dict) or len(auth) != 1 or not set(auth) <= {"bearer", "bearer_env"}:
        raise _fail(path, "auth", "must be a table of bearer or bearer_env, one of them")
    if "bearer" in auth:
        return str(auth["bearer"])
    token = os.environ.get(str(auth["bearer_env"]))
    if not token:
        raise _fail(path, "auth.bearer_env", f"the variable {auth['bearer_env']} is not set")
    return token


def load_scenario(file: str | os.PathLike[str]) -> Scenario:
    """Read and check a scenario file; :class:`BenchError` naming the file and key."""
    path = Path(file)
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise BenchError(f"{path}: cannot read the scenario: {error}") from None
    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise _fail(path, "top level", f"unknown keys {sorted(unknown)}")
    session, era = data.get("session", "long-lived"), data.get("era", "auto")
    if session not in SESSIONS:
        raise _fail(path, "session", f"must be one of {', '.join(SESSIONS)}, not {session!r}")
    if era not in ERAS:
        raise _fail(path, "era", f"must be one of {', '.join(ERAS)}, not {era!r}")
    mix = data.get("mix")
    if not isinstance(mix, list) or not mix:
        raise _fail(path, "mix", "give at least one [[mix]] entry")
    actions = tuple(_action(path, index, entry) for index, entry in enumerate(mix))
    if not sum(action.weight for action in actions) > 0:
        raise _fail(path, "mix", "the weights add up to nothing")
    scenario = Scenario(
        name=str(data.get("name", path.stem)),
        session=session,
        era=era,
        users=_number(path, "users", data.get("users", 1), integer=True),
        calls_per_iteration=_number(
            path, "calls_per_iteration", data.get("calls_per_iteration", 1), integer=True
        ),
        think_time=float(_number(path, "think_time", data.get("think_time", 0.0))),
        seed=_number(path, "seed", data.get("seed", 1), integer=True),
        bearer=_bearer(path, data.get("auth")),
        mix=actions,
        stages=_stages(path, data.get("stages", [])),
    )
    if scenario.max_users < 1 or scenario.calls_per_iteration < 1:
        raise _fail(path, "users", "at least one user making at least one call per iteration")
    return scenario
