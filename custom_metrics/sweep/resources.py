"""What each model x task job asks the cluster for: command-line flags and a small YAML file.

A sweep mixes a 270M model with a 70B one, a two-minute task with an eight-hour one, so
resources are per pair, resolved in this order, later winning key by key: built-in defaults,
the file's ``defaults``, its ``models.<name>``, its ``tasks.<task>``, then the ``--slurm-*`` flags::

    defaults: {partition: gpu, account: my-lab, gpus: 1, cpus: 8, mem: 64G, time: "4:00:00"}
    models:
      llama70b: {gpus: 4, mem: 320G, time: "12:00:00"}
    tasks:
      reg_chaos: {time: "8:00:00"}

``sbatch`` (any other sbatch option) is merged key by key, ``setup`` (shell lines run before the
job) replaced. A bad value is reported with file, line and key.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from custom_metrics.common.errors import DataError

DEFAULT_TIME_MIN = 240
RESOURCE_KEYS = ("gpus", "cpus", "mem", "time", "partition", "account", "sbatch", "setup")
_SECTIONS = ("defaults", "models", "tasks")
_OPTION = re.compile(r"-{0,2}[A-Za-z][A-Za-z0-9_-]*")
_MEM = re.compile(r"^\d+(\.\d+)?[KMGT]$", re.IGNORECASE)
# Slurm's --time forms: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S
_TIME = re.compile(r"^(?:(?P<d>\d+)-)?(?P<a>\d+)(?::(?P<b>\d+))?(?::(?P<c>\d+))?$")


@dataclass(frozen=True)
class Resources:
    """One job's request; ``None`` leaves the value to the cluster's defaults."""

    gpus: int = 0
    cpus: int | None = None
    mem: str | None = None  # as sbatch --mem takes it, with a unit: 64G, 500M
    time_min: int = DEFAULT_TIME_MIN
    partition: str | None = None
    account: str | None = None
    sbatch: Mapping[str, str] = field(default_factory=dict)
    setup: tuple[str, ...] = ()

    def summary(self) -> str:
        """A one-line summary for progress and dry-run output."""
        parts = [f"gpus={self.gpus}"]
        parts += [f"{key}={value}" for key, value in (("cpus", self.cpus), ("mem", self.mem)) if value is not None]
        parts.append(f"time={format_minutes(self.time_min)}")
        parts += [f"{k}={v}" for k, v in (("partition", self.partition), ("account", self.account)) if v]
        parts += [f"{key}={value}" for key, value in sorted(self.sbatch.items())]
        return " ".join(parts)


@dataclass(frozen=True)
class ResourcePlan:
    """Resources per pair: the file's levels plus the command-line flags."""

    defaults: Mapping[str, Any] = field(default_factory=dict)
    models: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    tasks: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    flags: Mapping[str, Any] = field(default_factory=dict)

    def for_pair(self, model: str, task: str) -> Resources:
        resources = Resources()
        for level in (self.defaults, self.models.get(model, {}), self.tasks.get(task, {}), self.flags):
            resources = _apply(resources, level)
        return resources


def parse_minutes(value: object) -> int:
    """Minutes from an int or any of Slurm's ``--time`` forms (``90``, ``1:30:00``, ``2-00:00:00``)."""
    if isinstance(value, int) and not isinstance(value, bool):
        minutes = value
    else:
        match = None if isinstance(value, bool) else _TIME.match(str(value).strip())
        if not match:
            raise ValueError(f"time must be minutes or [D-]HH:MM:SS, got {value!r}")
        days = int(match["d"] or 0)
        numbers = [int(match[g]) for g in "abc" if match[g] is not None]
        if match["d"]:  # D-H, D-H:M, D-H:M:S
            hours, minutes_part, seconds = [*numbers, 0, 0][:3]
        elif len(numbers) == 3:  # H:M:S
            hours, minutes_part, seconds = numbers
        else:  # M or M:S
            hours, (minutes_part, seconds) = 0, [*numbers, 0][:2]
        minutes = days * 1440 + hours * 60 + minutes_part + (1 if seconds else 0)
    if minutes < 1:
        raise ValueError(f"time must be at least one minute, got {value!r}")
    return minutes


def format_minutes(minutes: int) -> str:
    days, rest = divmod(minutes, 1440)
    text = f"{rest // 60}:{rest % 60:02d}:00"
    return f"{days}-{text}" if days else text


def check_values(values: Mapping[str, Any]) -> dict[str, Any]:
    """Validated, normalised resource values; raises ValueError naming the key."""
    checked: dict[str, Any] = {}
    for key, value in values.items():
        if key not in RESOURCE_KEYS:
            raise _KeyProblem(key, f"unknown key (allowed: {', '.join(RESOURCE_KEYS)})")
        try:
            checked[key] = _check(key, value)
        except ValueError as error:
            raise _KeyProblem(key, str(error)) from None
    return checked


def _check(key: str, value: Any) -> Any:
    if key in ("gpus", "cpus"):
        if isinstance(value, bool) or not isinstance(value, int) or value < (0 if key == "gpus" else 1):
            raise ValueError(f"must be an integer >= {0 if key == 'gpus' else 1}, got {value!r}")
        return value
    if key == "mem":
        if not _MEM.fullmatch(str(value)):
            raise ValueError(f"must be a size with a unit as sbatch --mem takes it (64G, 500M), got {value!r}")
        return str(value).upper()
    if key == "time":
        return parse_minutes(value)
    if key in ("partition", "account"):
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"must be a non-empty string, got {value!r}")
        return _one_line(value.strip())
    if key == "sbatch":
        if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
            raise ValueError(f"must map sbatch option names to values (qos: high), got {value!r}")
        for option, text in value.items():
            if not _OPTION.fullmatch(option):
                raise ValueError(f"{option!r} is not an sbatch option name (letters, digits, '-' and '_')")
            _one_line(str(text), f"option {option!r}")
        return {k.lstrip("-"): str(v) for k, v in value.items()}
    # setup
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(line, str) for line in value):
        raise ValueError(f"must be a list of shell lines, got {value!r}")
    return tuple(value)


def _one_line(text: str, what: str = "the value") -> str:
    """``text`` unless it holds a control character: each value becomes part of a ``#SBATCH``
    line of the job script, and a newline there would start a shell line of its own."""
    bad = next((char for char in text if unicodedata.category(char) == "Cc"), None)
    if bad is not None:
        raise ValueError(
            f"{what} holds the control character U+{ord(bad):04X} ({text!r}); it would break out of its "
            "#SBATCH line into the job script"
        )
    return text


def _apply(resources: Resources, values: Mapping[str, Any]) -> Resources:
    changes = {("time_min" if key == "time" else key): value for key, value in values.items()}
    if "sbatch" in changes:
        changes["sbatch"] = {**resources.sbatch, **changes["sbatch"]}
    return replace(resources, **changes)


class _KeyProblem(ValueError):
    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}")
        self.key = key


def load_plan(path: Path | None, flags: Mapping[str, Any]) -> ResourcePlan:
    """The plan from the optional YAML file and the flags that were given (``None`` = not given)."""
    given = {key: value for key, value in flags.items() if value is not None}
    try:
        checked_flags = check_values(given)
    except _KeyProblem as error:
        raise DataError(f"--slurm-{error.key}: {str(error).split(': ', 1)[1]}") from None
    if path is None:
        return ResourcePlan(flags=checked_flags)
    data, lines = _read_yaml(path)

    def where(*keys: str) -> str:
        return f"{path}:{lines.get(keys, lines.get(keys[:-1], lines.get((), 1)))}"

    if not isinstance(data, dict):
        raise DataError(f"{where()}: expected a mapping with {', '.join(_SECTIONS)}")
    unknown = [key for key in data if key not in _SECTIONS]
    if unknown:
        raise DataError(f"{where(str(unknown[0]))}: unknown section {unknown[0]!r} (allowed: {', '.join(_SECTIONS)})")

    def level(*keys: str) -> dict[str, Any]:
        value = data
        for key in keys:
            value = value.get(key) if isinstance(value, dict) else None
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise DataError(f"{where(*keys)}: {'.'.join(keys)} must be a mapping of resources")
        try:
            return check_values(value)
        except _KeyProblem as error:
            raise DataError(f"{where(*keys, error.key)}: {'.'.join(keys)}.{error}") from None

    def named(section: str) -> dict[str, dict[str, Any]]:
        entries = data.get(section) or {}
        if not isinstance(entries, dict):
            raise DataError(f"{where(section)}: {section} must map names to resources")
        return {str(name): level(section, str(name)) for name in entries}

    return ResourcePlan(level("defaults"), named("models"), named("tasks"), checked_flags)


def _read_yaml(path: Path) -> tuple[Any, dict[tuple[str, ...], int]]:
    """The file's data and the line of every mapping key, for messages that point at it."""
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
        data = yaml.safe_load(text)
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except OSError as error:
        raise DataError(f"{path}: cannot be read ({error.strerror or error})") from error
    except UnicodeDecodeError as error:
        raise DataError(f"{path}: not UTF-8 text ({error})") from error
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise DataError(f"{path}{line}: not valid YAML ({getattr(error, 'problem', None) or error})") from error
    lines: dict[tuple[str, ...], int] = {}

    def walk(node: Any, keys: tuple[str, ...]) -> None:
        lines[keys] = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                walk(value_node, (*keys, str(key_node.value)))
                lines[(*keys, str(key_node.value))] = key_node.start_mark.line + 1

    if root is not None:
        walk(root, ())
    return data, lines
