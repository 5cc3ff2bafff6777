"""How ``make test`` shares the tests between its pytest-xdist workers (``--dist loadfile``).

A test module is one unit of work, so its module fixtures are built once. A session fixture that
starts a server or runs ``lm_eval`` (``SHARED``) would be built again by every worker whose tests
use it, so the modules using one (a parameter of that name, in a test or a fixture) make one
unit, run by one worker. Units with more ``e2e`` and ``slow`` tests go first: the workers then end
together on short tests, where a long test taken last kept one worker busy minutes after the
other had finished.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from functools import cache
from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parent
# Each such fixture and the unit of its users; a fixture built on another is in that one's unit.
SHARED = {"served_model": "served", "rejudged_reg_run": "served", "geese_run": "geese_run", "dummy_runs": "dummy_runs"}
SLOWER = ("e2e", "slow", "fulldata")


@cache
def units() -> dict[str, str]:
    """The unit of each test module (its path as pytest names it) that uses a fixture of ``SHARED``;
    modules using fixtures of two units join the units into one."""
    uses: dict[str, set[str]] = {}
    for path in sorted(TESTS.rglob("test_*.py")):
        names = {getattr(node, "arg", None) for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))}
        if "fixtures" not in path.parts and names & SHARED.keys():
            uses[path.relative_to(TESTS.parent).as_posix()] = {SHARED[name] for name in names & SHARED.keys()}
    joined: list[tuple[set[str], list[str]]] = []
    for module, unit_names in uses.items():
        members = [module]
        for unit in [unit for unit in joined if unit[0] & unit_names]:
            joined.remove(unit)
            unit_names, members = unit_names | unit[0], unit[1] + members
        joined.append((unit_names, members))
    return {module: "+".join(sorted(unit_names)) for unit_names, members in joined for module in members}


def unit_of(nodeid: str) -> str:
    module = nodeid.split("::", 1)[0]
    return units().get(module, module)


def order_into_units(items: list[pytest.Item]) -> None:
    """Reorder a worker's ``items`` in place: the units with more e2e and slow tests first, then
    those with full-data tests, each unit's tests together in their own order (the scheduler hands
    units out in this order)."""
    by_unit: dict[str, list[pytest.Item]] = defaultdict(list)
    for item in items:
        by_unit[unit_of(item.nodeid)].append(item)

    def cost(tests: list[pytest.Item]) -> tuple[bool, int]:
        heavy = sum(any(item.get_closest_marker(name) for name in SLOWER[:2]) for item in tests)
        return not any(item.get_closest_marker(name) for item in tests for name in SLOWER), -heavy

    items[:] = [item for tests in sorted(by_unit.values(), key=cost) for item in tests]


def scheduler(config: pytest.Config, log: Any) -> Any:
    """pytest-xdist's ``loadfile`` scheduler with a unit (``unit_of``) where it had a file, handing
    the units out in the workers' order (``order_into_units``), not by their number of tests."""
    from xdist.scheduler import LoadScopeScheduling

    class UnitScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid)

    config.option.loadscopereorder = False
    return UnitScheduling(config, log)
