"""Which of the parallel workers runs which tests: whole groups, the costliest first.

A pytest plugin (``tests/conftest.py`` loads it) for ``scripts/test.sh``, which runs the suite on two workers
(``-n 2``, pytest-xdist). A group goes to one worker whole: a test module, so that its module fixtures (a DAG run,
a server, a Spark job) are made once; or one of ``GROUPS``, modules that read what one of them makes once per
worker: the session's runs of the corpus, its row-level writes, TPC-DS and the corpus under the JVM listener
(``tests/integration/conftest.py``), or the example DAG's run in the worker's Airflow home. Groups go out in
collection order, and the collection puts the costliest first (``HEAVY_FIRST``, from the time per module every
run prints), so the last group to start is a short one.
"""

from __future__ import annotations

import pytest

SHARED_RUNS = "shared corpus runs"
DEMO_RUNS = "example DAG run"
GROUPS = {
    SHARED_RUNS: frozenset({"test_corpus.py", "test_agreement.py", "test_coverage.py", "test_tpcds.py",
                            "test_jvm_listener.py", "test_rowlevel.py"}),
    # The example DAG's run with OpenLineage (demo_file_run): test_ui and test_trace_ui find it as the latest.
    DEMO_RUNS: frozenset({"test_example_dag.py", "test_openlineage.py", "test_ui.py", "test_trace_ui.py"}),
}
# The session fixtures each group's modules share: read from a module of another group, they would be made again.
SHARED_FIXTURES = {"corpus_plans": SHARED_RUNS, "rowlevel_plans": SHARED_RUNS, "tpcds_records": SHARED_RUNS,
                   "jvm_corpus": SHARED_RUNS, "demo_file_run": DEMO_RUNS}
HEAVY_FIRST = (SHARED_RUNS, "test_spark_connect.py", "test_faults.py", "test_stock_operators.py", DEMO_RUNS,
               "test_spark_versions.py", "test_connect_soak.py", "test_cli.py", "test_differential.py",
               "test_odd_paths.py", "test_pyspark_range.py", "test_cluster.py", "test_pyspark_app.py", "test_trace.py",
               "test_jdbc.py", "test_jvm_app.py", "test_hidden_writes.py", "test_packaging.py")


INTEGRATION = "tests/integration/"  # the modules named above are there


def group(nodeid: str) -> str:
    """The group of a test: one of ``GROUPS``, or its module's path."""
    module = nodeid.split("::", 1)[0]
    name = module.removeprefix(INTEGRATION)
    return next((title for title, modules in GROUPS.items() if name in modules), module)


def _rank(nodeid: str) -> int:
    name = group(nodeid).removeprefix(INTEGRATION)
    return HEAVY_FIRST.index(name) if name in HEAVY_FIRST else len(HEAVY_FIRST)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    strays = [(item.nodeid, fixture, home) for item in items for fixture, home in SHARED_FIXTURES.items()
              if fixture in item.fixturenames and group(item.nodeid) != home]
    if strays:  # a second worker would make the shared run again, as long as the suite itself
        nodeid, fixture, home = strays[0]
        raise pytest.UsageError(f"tests/workers.py: add the module of {nodeid} to GROUPS[{home!r}]: it reads {fixture}")
    items.sort(key=lambda item: _rank(item.nodeid))  # stable: a module's tests keep their order


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return group(nodeid)

    config.option.loadscopereorder = False  # the collection's order is the plan
    return GroupScheduling(config, log)
