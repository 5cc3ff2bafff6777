"""What the leaderboard says of a paper's tasks and metrics in words, read from the paper's one
data file (``custom_metrics/<key>/words.yaml``), so its ``leaderboard.py`` holds logic only.

Each task gets a label, each metric a label and a definition (the column header's tooltip, in
the task README's words); a ``task/metric`` entry gives that task's metric its own definition::

    tasks:
      rule_main: main questions
    metrics:
      mainq_acc:
        label: MainQ accuracy
        definition: Accuracy on the ReClor main questions ...
      rule_main/mainq_acc:
        definition: ...
"""

from __future__ import annotations

from pathlib import Path
from typing import TypedDict, cast

import yaml

from custom_metrics.common.errors import DataError

METRIC_FIELDS = {"label": "metric_labels", "definition": "definitions"}


class BoardWords(TypedDict, total=False):
    """The ``Board`` fields a words file fills (only those it gives)."""

    task_labels: dict[str, str]
    metric_labels: dict[str, str]
    definitions: dict[str, str]


def read_words(path: Path) -> BoardWords:
    """The labels and definitions of ``path``; a malformed entry is one error naming its line."""
    try:
        root = yaml.compose(path.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    except (OSError, UnicodeDecodeError) as error:
        raise DataError(f"{path}: cannot read these words: {error}") from None
    except yaml.MarkedYAMLError as error:
        line = error.problem_mark.line + 1 if error.problem_mark else 1
        raise DataError(f"{path}:{line}: not YAML: {error.problem}") from None
    found: dict[str, dict[str, str]] = {}
    for key, value in _mapping(path, root, "the file"):
        if key.value == "tasks":
            found["task_labels"] = {
                task.value: _text(path, text, task.value) for task, text in _mapping(path, value, "tasks")
            }
        elif key.value == "metrics":
            for metric, fields in _mapping(path, value, "metrics"):
                for name, text in _mapping(path, fields, metric.value):
                    if name.value not in METRIC_FIELDS or (name.value == "label" and "/" in metric.value):
                        allowed = "definition" if "/" in metric.value else " or ".join(METRIC_FIELDS)
                        raise _error(path, name, f"field {metric.value}.{name.value}: a metric has {allowed} only")
                    target = found.setdefault(METRIC_FIELDS[name.value], {})
                    target[metric.value] = _text(path, text, f"{metric.value}.{name.value}")
        else:
            raise _error(path, key, f"field {key.value!r}: the file has 'tasks' and 'metrics' only")
    return cast(BoardWords, found)


def _mapping(path: Path, node: yaml.Node | None, where: str) -> list[tuple[yaml.ScalarNode, yaml.Node]]:
    """A mapping's entries, its keys plain names given once."""
    if not isinstance(node, yaml.MappingNode):
        raise _error(path, node, f"field {where}: expected a mapping")
    seen: set[str] = set()
    for key, _ in node.value:
        if not isinstance(key, yaml.ScalarNode) or not key.value or key.value in seen:
            raise _error(path, key, f"field {where}: a name given twice, empty or not text")
        seen.add(key.value)
    return node.value


def _text(path: Path, node: yaml.Node, where: str) -> str:
    if not isinstance(node, yaml.ScalarNode) or not node.value.strip():
        raise _error(path, node, f"field {where}: expected text")
    return node.value


def _error(path: Path, node: yaml.Node | None, problem: str) -> DataError:
    line = node.start_mark.line + 1 if node is not None else 1
    return DataError(f"{path}:{line}: {problem}")
