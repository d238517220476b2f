"""The operators without a JVM: static lineage where they use it (START events, a job that leaves
no plan), the schema cache, and the application operator's surface."""

from __future__ import annotations

import pytest

from airflow_lineage_provider.job.dump import JobResult
from tests.helpers import SRC_DST as SQL
from tests.helpers import plan_record


def test_operator_falls_back_to_static_lineage_when_the_job_left_no_plan(monkeypatch, tmp_path):
    from airflow_lineage_provider.operators.spark_lineage import SparkSqlLineageOperator

    monkeypatch.setenv("AIRFLOW_LINEAGE_LOCAL_DIR", str(tmp_path))
    op = SparkSqlLineageOperator(task_id="t", sql=SQL)
    report = op.lineage_reporter.extract(JobResult(warnings=["no plan dump at /tmp/x/plans.jsonl"]))
    assert [s.method for s in report.statements] == ["sql"]
    assert report.warnings[-1].startswith("no plan was captured (no plan dump at /tmp/x/plans.jsonl)")


def test_operator_uses_the_plan_when_there_is_one(monkeypatch, tmp_path):

    from airflow_lineage_provider.operators.spark_lineage import SparkSqlLineageOperator

    record = plan_record("seed_join")
    op = SparkSqlLineageOperator(task_id="t", sql=SQL)
    report = op.lineage_reporter.extract(JobResult(records=[record], statements=[{"index": 0, "status": "ok"}]))
    assert [s.method for s in report.statements] == ["plan"]


SEED_INSERT = (
    "INSERT INTO demo.dwd_users SELECT a.id, concat(a.name, b.company_name), b.company_name, a.birthday, a.ts, "
    "date_format(a.birthday, 'yyyyMMdd') FROM demo.ods_users a JOIN demo.dim_company b ON a.id = b.user_id"
)


def test_a_run_fills_the_schema_cache_that_the_next_start_reads(monkeypatch, tmp_path):
    """Run 1 knows no schema before Spark runs; its plans fill the task's cache; run 2's START lineage is whole."""
    import json

    from airflow.sdk import DAG

    from airflow_lineage_provider.lineage.sql.static import default_cache_path
    from airflow_lineage_provider.operators.spark_lineage import SparkSqlLineageOperator

    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path))
    with DAG("cache_dag", schedule=None):
        op = SparkSqlLineageOperator(task_id="build", sql=SEED_INSERT)
    [before] = op.lineage_reporter.static.lineage().statements
    assert before.confidence < 1.0 and any("dwd_users" in w for w in before.warnings)

    record = plan_record("seed_join")
    op.lineage_reporter.extract(JobResult(records=[record], statements=[{"index": 0, "status": "ok"}]))
    path = tmp_path / "lineage" / "schema_cache" / "cache_dag" / "build.json"
    assert default_cache_path("cache_dag", "build") == str(path)
    tables = json.loads(path.read_text())["tables"]
    assert tables["spark_catalog.demo.ods_users"] == [["id", "BIGINT"], ["name", "STRING"], ["birthday", "TIMESTAMP"],
                                                      ["ts", "TIMESTAMP"]]
    assert [c for c, _ in tables["spark_catalog.demo.dwd_users"]] == ["id", "name", "company_name", "birthday", "ts",
                                                                       "p"]

    [after] = op.lineage_reporter.static.lineage().statements
    assert after.warnings == () and after.confidence == 1.0
    columns = {c: {(i.table.rsplit(".", 1)[-1], i.field, i.subtype) for i in ins} for c, ins in after.columns}
    assert columns["name"] == {("ods_users", "name", "TRANSFORMATION"), ("dim_company", "company_name", "TRANSFORMATION")}
    assert columns["p"] == {("ods_users", "birthday", "TRANSFORMATION")}


def test_schema_cache_can_be_switched_off_or_placed(monkeypatch, tmp_path):
    import json

    from airflow_lineage_provider.operators.spark_lineage import SparkSqlLineageOperator

    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "home"))
    record = plan_record("seed_join")
    result = JobResult(records=[record], statements=[{"index": 0, "status": "ok"}])
    SparkSqlLineageOperator(task_id="off", sql=SEED_INSERT, schema_cache=False).lineage_reporter.extract(result)
    assert not (tmp_path / "home").exists()
    placed = tmp_path / "shared" / "cache.json"
    SparkSqlLineageOperator(task_id="placed", sql=SEED_INSERT, schema_cache=str(placed)).lineage_reporter.extract(result)
    assert "spark_catalog.demo.dim_company" in json.loads(placed.read_text())["tables"]


def test_application_operator_surface():
    from airflow_lineage_provider.operators.spark_lineage import SparkSubmitLineageOperator

    op = SparkSubmitLineageOperator(task_id="t", application="/apps/job.py", application_args=["{{ ds }}"],
                                    conn_id="spark_default", py_files="deps.zip", dump_uri="s3a://b/lineage")
    assert {"application", "application_args", "conf", "py_files", "dump_uri"} <= set(op.template_fields)
    assert op.template_ext == ()
    assert op.get_openlineage_facets_on_start().job_facets == {}
    with pytest.raises(TypeError, match="takes no 'sql'"):
        SparkSubmitLineageOperator(task_id="u", application="a.py", sql="SELECT 1")
    with pytest.raises(TypeError):
        SparkSubmitLineageOperator(task_id="v", application="a.py", conf={}, some_unknown=1)


def test_a_jar_application_takes_its_main_class_keyword_only_and_templated(monkeypatch):
    from airflow_lineage_provider.operators.spark_lineage import SparkSubmitLineageOperator

    monkeypatch.setenv("AIRFLOW_CONN_SPARK_LOCAL", '{"conn_type": "spark", "host": "local[*]"}')
    op = SparkSubmitLineageOperator(task_id="jar", application="/jobs/etl.jar", java_class="com.example.Etl",
                                    jars="/jobs/dep.jar", conn_id="spark_local")
    assert {"application", "java_class", "jars"} <= set(op.template_fields)
    assert (op.hook._java_class, op.hook._jars) == ("com.example.Etl", "/jobs/dep.jar")
    with pytest.raises(TypeError):
        SparkSubmitLineageOperator("/jobs/etl.jar", "com.example.Etl", task_id="positional")


@pytest.mark.parametrize("sql", ["", "  \n", "-- nothing here\n/* nor here */\n"])
def test_an_empty_script_starts_no_spark_and_the_document_says_why(sql, monkeypatch):
    from airflow_lineage_provider.operators.spark_lineage import SparkSqlLineageOperator

    op = SparkSqlLineageOperator(task_id="t", sql=sql)
    monkeypatch.setattr(type(op), "hook", property(lambda self: pytest.fail("Spark must not be started")))
    result = op._run_job()
    assert result.records == [] and result.error is None
    report = op.lineage_reporter.extract(result)
    assert report.statements == ()
    assert report.warnings == ("the SQL has no statement (it is empty or holds only comments): Spark was not started",)
