"""Where a test run's time went: its slowest tests and the time of each module, printed at the end of every run.

A pytest plugin (``tests/conftest.py`` loads it). A test's time is its setup, call and teardown together, so the
module fixture a test sets up (a Spark run, a DAG run, a server) is counted where it is first used; a module's
time is the sum of its tests'. With parallel workers (``-n``) the figures are the workers' own, added up: the
run's wall time is printed beside them. ``docs/testing.md`` keeps the table and the budget.
"""

from __future__ import annotations

import time
from collections import defaultdict

import pytest

SLOWEST = 25  # tests listed; every module is listed

_spent: dict[str, float] = defaultdict(float)  # nodeid -> seconds (setup + call + teardown)
_started = time.monotonic()


def module_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _spent[report.nodeid] += report.duration


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter, exitstatus, config):
    # Outermost wrapper: printed after pytest's own summary (the failures and -ra's lines), before its last line.
    result = yield
    if config.getoption("collectonly", False) or not _spent or hasattr(config, "workerinput"):
        return result
    write = terminalreporter.write_line
    terminalreporter.section(f"slowest {min(SLOWEST, len(_spent))} tests (setup + call + teardown)", sep="=")
    for nodeid, seconds in sorted(_spent.items(), key=lambda kv: -kv[1])[:SLOWEST]:
        write(f"{seconds:8.1f}s  {nodeid}")
    modules: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
    for nodeid, seconds in _spent.items():
        modules[module_of(nodeid)][0] += seconds
        modules[module_of(nodeid)][1] += 1
    terminalreporter.section("time per module", sep="=")
    rest = [0.0, 0, 0]  # seconds, tests, modules under a second each: one line
    for module, (seconds, count) in sorted(modules.items(), key=lambda kv: -kv[1][0]):
        if seconds >= 1.0:
            write(f"{seconds:8.1f}s  {int(count):5d} tests  {module}")
        else:
            rest = [rest[0] + seconds, rest[1] + count, rest[2] + 1]
    if rest[2]:
        write(f"{rest[0]:8.1f}s  {int(rest[1]):5d} tests  in {rest[2]} modules of under a second each")
    total = sum(_spent.values())
    write(f"{total:8.1f}s  {len(_spent):5d} tests  in all; wall time {time.monotonic() - _started:.1f}s")
    return result
