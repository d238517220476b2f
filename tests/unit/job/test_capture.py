"""job/capture.py: the py4j producer keeps the records the reader would keep of every event, and
dumps the lineage it resolves beside each lean plan."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from airflow_lineage_provider.job import app, script
from airflow_lineage_provider.job.capture import PlanCapture
from airflow_lineage_provider.lineage.plan import events
from airflow_lineage_provider.lineage.plan import record as raw
from airflow_lineage_provider.lineage.statements import Statement

CMD = "org.apache.spark.sql.execution.command."
DS = "org.apache.spark.sql.execution.datasources."
FSW = "file source write"  # the listener's funcName of the insert a CTAS runs
INSERT = "InsertIntoHadoopFsRelationCommand"
CTAS = "CreateDataSourceTableAsSelectCommand"
SAVE = "SaveAsV1TableCommand"
DIRECTORY = "InsertIntoDataSourceDirCommand"

# Every write event of each action, as Spark 4.2 reports them to a listener (measured with this
# capture): (execution id, funcName, root command, what the JVM adds as the record's "write").
STATEMENTS: list[tuple[str, bool, list[tuple[int, str, str, dict[str, Any] | None]]]] = [
    ("CREATE TABLE t1 USING parquet AS SELECT * FROM src", False,
     [(6, FSW, INSERT, {"path": "file:/wh/t1"}), (5, raw.COMMAND_FUNC, CTAS, {"location": "file:/wh/t1"})]),
    ("INSERT INTO t1 SELECT * FROM src", False, [(9, raw.COMMAND_FUNC, INSERT, {"path": "file:/wh/t1"})]),
    ("BEGIN INSERT INTO t1 SELECT * FROM src; INSERT INTO t1 SELECT * FROM src; END", True,
     [(13, raw.COMMAND_FUNC, INSERT, {"path": "file:/wh/t1"}), (15, raw.COMMAND_FUNC, INSERT, {"path": "file:/wh/t1"})]),
    ("INSERT OVERWRITE DIRECTORY '/tmp/d' USING parquet SELECT * FROM src", False,
     [(18, raw.COMMAND_FUNC, INSERT, {"path": "file:///tmp/d"}),
      (17, raw.COMMAND_FUNC, DIRECTORY, {"path": "file:/tmp/d", "mode": "overwrite"})]),
]
APPLICATION: list[tuple[int, str, str, dict[str, Any] | None]] = [
    # df.write.saveAsTable("t2"): the wrapper, the CTAS it runs, the insert the CTAS runs
    (21, FSW, INSERT, {"path": "file:/wh/t2"}), (20, raw.COMMAND_FUNC, CTAS, {"location": "file:/wh/t2"}),
    (18, raw.COMMAND_FUNC, SAVE, None),
    # df.write.insertInto("t2") twice: two writes of one table
    (31, raw.COMMAND_FUNC, INSERT, {"path": "file:/wh/t2"}), (34, raw.COMMAND_FUNC, INSERT, {"path": "file:/wh/t2"}),
    # df.write.parquet(path)
    (37, raw.COMMAND_FUNC, INSERT, {"path": "file:/tmp/p", "mode": "overwrite"}),
    # df.write.mode("append").saveAsTable("t2")
    (42, FSW, INSERT, {"path": "file:/wh/t2"}), (41, raw.COMMAND_FUNC, CTAS, {"location": "file:/wh/t2"}),
    (40, raw.COMMAND_FUNC, SAVE, None),
]


def plan(command: str, write: dict[str, Any] | None) -> dict[str, Any]:
    """A stand-in for a JVM plan: what describing it gives (its JSON's root, its extras)."""
    package = DS if command == INSERT else CMD
    return {"plan": [{"class": package + command, "num-children": 0}], "extras": {"write": write} if write else {}}


class _Capture(PlanCapture):
    """The capture without Spark: events are put in by hand, plans describe to what they stand for."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending = []
        self.warnings = []
        self._listener = None

    def _take(self):
        pending, self._pending = self._pending, []
        return pending

    def report(self, reported: list[tuple[int, str, str, dict[str, Any] | None]]) -> None:
        self._pending += [(raw.event(qid, func, command), plan(command, write)) for qid, func, command, write in reported]

    def describe(self, stand_in: Any, head: dict[str, Any] | None = None) -> dict[str, Any]:
        return raw.make(raw.WRITE_KIND, stand_in["plan"], stand_in["extras"], head)


class _Writer:
    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    def record(self, record: dict[str, Any]) -> None:
        self.records.append(record)


def every_event(reported, place) -> list[dict[str, Any]]:
    """What a producer that keeps every event dumps (a JVM listener): each event described."""
    out = []
    for qid, func, command, write in reported:
        stand_in = plan(command, write)
        record = raw.make(raw.WRITE_KIND, stand_in["plan"], stand_in["extras"], raw.event(qid, func, command))
        place(record)
        out.append(record)
    return out


def lean(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records as the digest leaves them: no plan, no extras, what the rules read kept."""
    return [{**{k: v for k, v in r.items() if k not in (raw.PLAN, raw.EXTRAS)}, **events.lean_keys(r),
             raw.FORMAT: "lean/2"} for r in records]


def test_a_script_keeps_what_the_reader_keeps_of_every_event(monkeypatch):
    monkeypatch.setattr(script, "digested", lambda record, warnings: record)
    runner = script.ScriptRunner.__new__(script.ScriptRunner)
    runner.capture, runner.writer = _Capture(), _Writer()
    dumped: list[dict[str, Any]] = []
    for index, (sql, block, reported) in enumerate(STATEMENTS):
        stmt = Statement(index=index, sql=sql, line=index + 1)
        runner.capture.report(reported)
        runner._emit(stmt, runner.capture.drain() if block else runner.capture.flush(), block)
        dumped += every_event(reported, lambda r, stmt=stmt, block=block: raw.place(
            r, index=stmt.index, sql=stmt.sql, line=stmt.line, statement=stmt.index, block=block))
    kept = runner.writer.records
    assert [(r[raw.INDEX], raw.command(r)) for r in kept] == [(0, CTAS), (1, INSERT), (2, INSERT), (2, INSERT),
                                                             (3, DIRECTORY)]
    assert events.reduce(dumped) == kept
    assert events.reduce(kept) == kept  # the reader's pass leaves the py4j producer's records as they are
    assert events.reduce(lean(dumped)) == lean(kept)


def test_an_application_keeps_what_the_reader_keeps_of_every_event(monkeypatch):
    monkeypatch.setattr(app, "digested", lambda record, warnings: record)
    runner = app.ApplicationRunner.__new__(app.ApplicationRunner)
    runner.capture, runner.writer = _Capture(), _Writer()
    runner._streams, runner._lock, runner._collected, runner._records = [], threading.Lock(), False, 0
    runner.capture.report(APPLICATION)
    runner.collect()
    count = iter(range(len(APPLICATION)))
    dumped = every_event(APPLICATION, lambda r: raw.place(r, index=next(count), sql="", line=None))
    kept = runner.writer.records
    assert [(r[raw.INDEX], raw.command(r)) for r in kept] == [(0, CTAS), (1, INSERT), (2, INSERT), (3, INSERT),
                                                             (4, CTAS)]
    assert events.reduce(dumped) == kept
    assert events.reduce(kept) == kept
    assert events.reduce(lean(dumped)) == lean(kept)


@pytest.mark.parametrize("name", ["seed_join", "seed_single_table", "ctas_upper"])
def test_the_lineage_the_driver_resolves_is_the_one_the_hook_would(name):
    """The driver dumps each record's lineage beside its lean plan; the hook reads it instead of
    resolving again, and must read the very document it would have resolved."""
    from airflow_lineage_provider.job.capture import digested
    from airflow_lineage_provider.lineage.plan import resolve
    from airflow_lineage_provider.lineage.plan.digest import digest
    from tests.helpers import plan_record

    warnings: list[str] = []
    dumped = digested(plan_record(name), warnings)
    assert warnings == [] and resolve.RESOLVED in dumped and "sql" not in dumped[resolve.RESOLVED]
    plan_only = {k: v for k, v in digest(plan_record(name)).items() if k != resolve.RESOLVED}
    assert resolve.extract(dumped) == resolve.extract(plan_only)
    assert resolve.extract(dumped).to_dict() == resolve.extract(plan_record(name)).to_dict()
