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


SEED_INSERT = (
    "INSERT INTO demo.dwd_users SELECT a.id, concat(a.name, b.company_name), b.company_name, a.birthday, a.ts, "
    "date_format(a.birthday, 'yyyyMMdd') FROM demo.ods_users a JOIN demo.dim_company b ON a.id = b.user_id"
)


def test_a_run_fills_the_schema_cache_that_the_next_start_reads(monkeypatch, tmp_path):
    """Run 1 knows no schema before Spark runs; its plans fill the task's cache; run 2's START lineage is whole."""
    import json

    from airflow.sdk import DAG

    from airflow_lineage_provider.operators.spark_lineage import SparkSqlLineageOperator, default_schema_cache
    from tests.conftest import DATA

    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path))
    with DAG("cache_dag", schedule=None):
        op = SparkSqlLineageOperator(task_id="build", sql=SEED_INSERT)
    [before] = op._static_lineage().statements
    assert before.confidence < 1.0 and any("dwd_users" in w for w in before.warnings)

    record = json.loads((DATA / "plans" / "seed_join.json").read_text())
    op._extract(JobResult(records=[record], statements=[{"index": 0, "status": "ok"}]))
    path = tmp_path / "lineage" / "schema_cache" / "cache_dag" / "build.json"
    assert default_schema_cache("cache_dag", "build") == str(path)
    tables = json.loads(path.read_text())["tables"]
    assert tables["spark_catalog.demo.ods_users"] == [["id", "BIGINT"], ["name", "STRING"], ["birthday", "TIMESTAMP"],
                                                      ["ts", "TIMESTAMP"]]
    assert [c for c, _ in tables["spark_catalog.demo.dwd_users"]] == ["id", "name", "company_name", "birthday", "ts",
                                                                       "p"]

    [after] = op._static_lineage().statements
    assert after.warnings == () and after.confidence == 1.0
    columns = {c: {(i.table.rsplit(".", 1)[-1], i.field, i.subtype) for i in ins} for c, ins in after.columns}
    assert columns["name"] == {("ods_users", "name", "TRANSFORMATION"), ("dim_company", "company_name", "TRANSFORMATION")}
    assert columns["p"] == {("ods_users", "birthday", "TRANSFORMATION")}


def test_schema_cache_can_be_switched_off_or_placed(monkeypatch, tmp_path):
    import json

    from airflow_lineage_provider.operators.spark_lineage import SparkSqlLineageOperator
    from tests.conftest import DATA

    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "home"))
    record = json.loads((DATA / "plans" / "seed_join.json").read_text())
    result = JobResult(records=[record], statements=[{"index": 0, "status": "ok"}])
    SparkSqlLineageOperator(task_id="off", sql=SEED_INSERT, schema_cache=False)._extract(result)
    assert not (tmp_path / "home").exists()
    placed = tmp_path / "shared" / "cache.json"
    SparkSqlLineageOperator(task_id="placed", sql=SEED_INSERT, schema_cache=str(placed))._extract(result)
    assert "spark_catalog.demo.dim_company" in json.loads(placed.read_text())["tables"]
