"""operators/reporting.py: any task reports through it, whatever runs its Spark job.

Here the task is a plain object (as a decorated ``@task.pyspark`` function's task would be to it): the
reporter needs only the task, the context and the job's dump.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from airflow_lineage_provider.job.dump import JobResult
from airflow_lineage_provider.lineage.model import XCOM_KEY, LineageReport
from airflow_lineage_provider.lineage.sql.static import TaskSql
from airflow_lineage_provider.operators.reporting import LineageReporter, ReportsLineage, openlineage_spark_conf
from tests.helpers import PLANS

SQL = "INSERT INTO dwd_users SELECT id, name FROM ods_users"


class FakeTI:
    def __init__(self) -> None:
        self.pushed: dict[str, object] = {}

    def xcom_push(self, key: str, value: object) -> None:
        self.pushed[key] = value


def seed_record() -> dict:
    import json

    return json.loads((PLANS / "seed_join.json").read_text())


def test_a_run_of_any_task_pushes_its_lineage_and_keeps_it_for_openlineage():
    reporter = LineageReporter()
    ti = FakeTI()
    task = SimpleNamespace(dag_id="d", task_id="t", outlets=[])
    reporter.run(task, {"ti": ti}, lambda: JobResult(records=[seed_record()]))
    document = ti.pushed[XCOM_KEY]
    assert [st["target"]["table"] for st in document["statements"]] == ["spark_catalog.demo.dwd_users"]
    assert reporter.lineage is not None and reporter.lineage.to_dict() == document
    complete = reporter.on_complete()
    assert [d.name.rsplit("/", 1)[-1] for d in complete.outputs] == ["dwd_users"]
    assert "columnLineage" in complete.outputs[0].facets


def test_a_failing_job_is_kept_for_the_fail_event_and_raised():
    reporter = LineageReporter(sql=SQL + " -- jdbc:postgresql://u:secretpw@h/db")

    def job() -> JobResult:
        raise RuntimeError("[TABLE_OR_VIEW_NOT_FOUND] ods_users")

    ti = FakeTI()
    with pytest.raises(RuntimeError):
        reporter.run(SimpleNamespace(dag_id="d", task_id="t"), {"ti": ti}, job)
    assert ti.pushed == {} and reporter.lineage is None
    failure = reporter.on_failure()
    assert failure.run_facets["errorMessage"].message == "[TABLE_OR_VIEW_NOT_FOUND] ods_users"
    assert "secretpw" not in failure.job_facets["sql"].query  # the SQL shown has no credential


def test_a_sql_task_with_no_plan_gets_its_static_lineage_saying_why():
    reporter = LineageReporter(sql=SQL, static=TaskSql(SQL))
    report = reporter.extract(JobResult(warnings=["no plan dump at /tmp/x/plans.jsonl"]))
    [st] = report.statements
    assert st.method == "sql" and st.target.table == "spark_catalog.default.dwd_users"
    assert report.warnings[-1] == ("no plan was captured (no plan dump at /tmp/x/plans.jsonl): static lineage "
                                   "from the SQL text")
    assert reporter.on_start().outputs  # START: the same static lineage, before Spark runs


def test_an_application_has_no_sql_and_no_static_lineage():
    reporter = LineageReporter()
    assert reporter.extract(JobResult()) == LineageReport()
    start = reporter.on_start()
    assert start.outputs == [] and "sql" not in start.job_facets


def test_extraction_that_fails_is_a_warning_not_an_exception():
    report = LineageReporter().extract(JobResult(records=[{"index": 0, "plan": "not a plan"}]))
    [st] = report.statements
    assert st.method == "none" and st.warnings[0].startswith("plan extraction failed: AttributeError")


def test_the_mixin_answers_openlineage_from_the_tasks_reporter():
    class Task(ReportsLineage):
        def __init__(self) -> None:
            self.reporter = LineageReporter(sql=SQL, static=TaskSql(SQL))

        @property
        def lineage_reporter(self) -> LineageReporter:
            return self.reporter

    task = Task()
    assert task.lineage is None
    assert task.get_openlineage_facets_on_start().job_facets["sql"].query == SQL
    task.reporter.error = ValueError("boom")
    assert task.get_openlineage_facets_on_failure(None).run_facets["errorMessage"].message == "boom"


def test_openlineage_conf_is_added_only_when_asked():
    assert openlineage_spark_conf({"a": "1"}, {}, parent_job=False, transport=False) is None
