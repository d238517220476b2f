"""Static lineage where the operator uses it: START events, and when a job leaves no plan."""

from __future__ import annotations

from airflow_lineage_provider.job.dump import JobResult
from airflow_lineage_provider.lineage.report import static

SQL = (
    "CREATE TABLE src (id BIGINT, name STRING) USING parquet;\n"
    "CREATE TABLE dst (id BIGINT, label STRING) USING parquet;\n"
    "INSERT INTO dst SELECT id, upper(name) FROM src"
)


def test_embedded_names_tables_by_their_warehouse_location(monkeypatch, tmp_path):
    monkeypatch.setenv("AIRFLOW_LINEAGE_LOCAL_DIR", str(tmp_path))
    [st] = static(SQL, embedded=True).statements
    assert (st.target.namespace, st.target.name, st.target.table) == (
        "file", str(tmp_path / "warehouse" / "dst"), "spark_catalog.default.dst")
    assert [(d.namespace, d.name) for d in st.inputs] == [("file", str(tmp_path / "warehouse" / "src"))]
    assert {c: [(i.field, i.subtype) for i in ins] for c, ins in st.columns} == {
        "id": [("id", "IDENTITY")], "label": [("name", "TRANSFORMATION")]}


def test_elsewhere_tables_keep_their_catalog_names():
    [st] = static(SQL).statements
    assert (st.target.namespace, st.target.name) == ("spark_catalog", "spark_catalog.default.dst")


def test_operator_falls_back_to_static_lineage_when_the_job_left_no_plan(monkeypatch, tmp_path):
    from airflow_lineage_provider.operators.spark_lineage import SparkSqlLineageOperator

    monkeypatch.setenv("AIRFLOW_LINEAGE_LOCAL_DIR", str(tmp_path))
    op = SparkSqlLineageOperator(task_id="t", sql=SQL)
    report = op._extract(JobResult(warnings=["no plan dump at /tmp/x/plans.jsonl"]))
    assert [s.method for s in report.statements] == ["sql"]
    assert report.warnings[-1].startswith("no plan was captured (no plan dump at /tmp/x/plans.jsonl)")


def test_operator_uses_the_plan_when_there_is_one(monkeypatch, tmp_path):
    import json

    from airflow_lineage_provider.operators.spark_lineage import SparkSqlLineageOperator
    from tests.conftest import DATA

    record = json.loads((DATA / "plans" / "seed_join.json").read_text())
    op = SparkSqlLineageOperator(task_id="t", sql=SQL)
    report = op._extract(JobResult(records=[record], statements=[{"index": 0, "status": "ok"}]))
    assert [s.method for s in report.statements] == ["plan"]
