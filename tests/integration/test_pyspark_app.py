"""PySpark applications under the capture, as users run them: `airflow-lineage extract --app` and
SparkSubmitLineageOperator in a DAG. Real spark-submit on the embedded Spark, the scripts unchanged."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.conftest import DATA, venv_bin
from tests.helpers import document_edges
from tests.integration.test_example_dag import xcoms

pytestmark = [pytest.mark.spark, pytest.mark.slow]

APP = "spark_catalog.app."
AGG = {  # city_sales' columns as the cached aggregate makes them
    "city": {(APP + "customers", "city", "IDENTITY")},
    "total": {(APP + "orders", "amount", "AGGREGATION")},
    "n_orders": {(APP + "orders", "order_id", "AGGREGATION")},
}
AGG_INDIRECT = {(APP + "customers", "city", "GROUP_BY"), (APP + "customers", "id", "JOIN"),
                (APP + "orders", "customer_id", "JOIN")}


def load_test_dag(name: str):
    import importlib.util

    from tests.conftest import DAGS

    spec = importlib.util.spec_from_file_location("lineage_test_apps", DAGS / "lineage_test_apps.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)




@pytest.fixture(scope="module")
def city_sales(tmp_path_factory):
    """`airflow-lineage extract --app city_sales.py --format json -- OUT` on the embedded Spark."""
    tmp = tmp_path_factory.mktemp("city_sales")
    out = tmp / "city_sales_parquet"
    env = {**os.environ, "AIRFLOW_LINEAGE_LOCAL_DIR": str(tmp / "state")}
    proc = subprocess.run([venv_bin("airflow-lineage"), "extract", "--app", str(DATA / "apps" / "city_sales.py"),
                           "--format", "json", "--conf", "spark.sql.catalogImplementation=in-memory",  # no Derby: faster
                           "--", str(out)], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout), out, tmp


def test_every_write_of_the_application_appears_once_in_order(city_sales):
    doc, out, tmp = city_sales
    writes = [(s["index"], s["target"]["table"] or s["target"]["name"], s["target"]["mode"]) for s in doc["statements"]]
    assert writes == [
        (0, APP + "orders", "append"),              # spark.sql INSERT ... VALUES
        (1, APP + "customers", "append"),
        (2, APP + "city_sales", "overwrite"),       # saveAsTable: three Spark events, one write
        (3, str(out), "overwrite"),                 # write.parquet(path)
        (4, APP + "city_sales", "append"),          # SQL insert through a temp view
        (5, APP + "city_sales", "append"),          # insertInto
        (6, APP + "city_sales_v2", "create"),       # DataFrameWriterV2 create
    ]
    assert all(s["method"] == "plan" and s["confidence"] == 1.0 and s["warnings"] == [] for s in doc["statements"])
    assert doc["statements"][4]["sql"] == "INSERT INTO app.city_sales SELECT city, total * 2, n_orders FROM sales_v"
    assert doc["statements"][2]["sql"] == "", "a DataFrame write has no SQL text"
    assert (tmp / "state" / "warehouse" / "app.db" / "city_sales").is_dir()


def test_lineage_through_join_aggregate_and_cache_column_by_column(city_sales):
    doc, out, _ = city_sales
    seed_orders, seed_customers, save_as_table, parquet, sql_insert, insert_into, v2 = doc["statements"]
    assert document_edges(seed_orders) == {"order_id": set(), "customer_id": set(), "amount": set()}
    assert document_edges(save_as_table) == AGG
    assert {(i["table"], i["field"], i["subtype"]) for i in save_as_table["indirect"]} == AGG_INDIRECT
    assert document_edges(parquet) == {
        "city_uc": {(APP + "customers", "city", "TRANSFORMATION")},
        "total": {(APP + "orders", "amount", "AGGREGATION")},
    }
    assert parquet["target"] == {"table": None, "namespace": "file", "name": str(out), "mode": "overwrite"}
    assert parquet["columns"]["city_uc"][0]["expression"] == "upper(customers.city)"
    assert document_edges(sql_insert) == AGG and sql_insert["columns"]["total"][0]["expression"] == "(sales_v.total * 2)"
    assert document_edges(insert_into) == AGG
    assert document_edges(v2) == AGG
    assert {d["table"] for d in save_as_table["inputs"]} == {APP + "orders", APP + "customers"}


def test_streaming_query_with_watermark_reports_its_sink_columns(airflow_db):
    from tests.conftest import DAGS

    stream = DAGS.parent / "stream"
    (stream / "in").mkdir(parents=True, exist_ok=True)
    rows = [{"id": i, "name": f"n{i % 2}", "amount": i * 1.5, "ts": f"2024-01-01T00:{i * 3:02d}:00"} for i in range(6)]
    (stream / "in" / "part-0.json").write_text("".join(json.dumps(r) + "\n" for r in rows))
    run = load_test_dag("streaming").test()
    assert run.state == "success"
    [doc] = xcoms("lineage_test_streaming", run.run_id).values()
    [st] = doc["statements"]
    source = str(stream / "in")
    assert st["target"] == {"table": None, "namespace": "file", "name": str(stream / "out"), "mode": "append"}
    assert document_edges(st) == {
        "window_start": {(source, "ts", "TRANSFORMATION")},
        "name_uc": {(source, "name", "TRANSFORMATION")},
        "total": {(source, "amount", "AGGREGATION")},
        "last_id": {(source, "id", "AGGREGATION")},
    }
    assert {(i["field"], i["subtype"]) for i in st["indirect"]} >= {("name", "GROUP_BY"), ("ts", "GROUP_BY")}
    assert st["method"] == "plan" and st["warnings"] == []
    assert [(d["namespace"], d["name"]) for d in st["inputs"]] == [("file", source)]
    assert list((stream / "out").glob("*.parquet")), "the streaming query ran and wrote its sink"


def test_an_exception_in_the_application_fails_the_task_with_its_own_message(airflow_db, capfd):
    run = load_test_dag("failing").test()
    text = "".join(capfd.readouterr())
    assert run.state == "failed"
    assert "The application failing.py failed: AnalysisException: [TABLE_OR_VIEW_NOT_FOUND]" in text
    assert "no_such_table_here" in text
    assert xcoms("lineage_test_app_failure", run.run_id) == {}, "no lineage for a failed application"


def test_a_held_classic_sessions_writes_keep_their_spark_sql_texts(spark):
    """Issue 42: the in-process capture a ``@task.pyspark`` task on a classic session gets (``hooks/session_capture``,
    ``job/app.py``), on the suite's shared session: every write made with ``spark.sql`` keeps its text as
    written (scrubbed), a DataFrame write none."""
    from airflow_lineage_provider.hooks import session_capture
    from tests.integration.test_spark_connect import document, kept_texts, target_of, workload

    capture, why = session_capture.begin(spark, "issue42")
    assert capture is not None, why
    workload.texts(spark, "kt_classic")
    doc = document(capture.end())
    assert [(target_of(s), s["sql"]) for s in doc["statements"]] == kept_texts("kt_classic")
    assert doc.get("warnings", []) == []


ROW_LEVEL_TEXTS = [  # (statement, its writes' targets) on the suite's row-level catalog: DataSource V2 writes
    ("CREATE NAMESPACE IF NOT EXISTS rowcat.kt42", []),
    ("DROP TABLE IF EXISTS rowcat.kt42.acct", []),
    ("DROP TABLE IF EXISTS rowcat.kt42.moves", []),
    ("CREATE TABLE rowcat.kt42.acct (id BIGINT, balance DOUBLE) TBLPROPERTIES ('write.mode' = 'merge-on-read')", []),
    ("CREATE TABLE rowcat.kt42.moves (id BIGINT, balance DOUBLE)", []),
    ("INSERT INTO rowcat.kt42.acct VALUES (1, 10.0), (2, 20.0)", ["acct"]),
    ("INSERT INTO rowcat.kt42.moves SELECT id, balance * 2 FROM rowcat.kt42.acct", ["moves"]),
    ("-- the day's moves\nMERGE INTO rowcat.kt42.acct t\nUSING rowcat.kt42.moves c ON t.id = c.id\n"
     "WHEN MATCHED THEN UPDATE SET balance = t.balance + c.balance", ["acct"]),
    ("UPDATE rowcat.kt42.acct SET balance = 0 WHERE id = 2", ["acct"]),
    ("DELETE FROM rowcat.kt42.acct WHERE balance = 0", ["acct"]),
]


def test_a_held_classic_sessions_row_level_and_v2_writes_keep_their_spark_sql_texts(spark):
    """Issue 42: MERGE, UPDATE and DELETE (rewritten by Spark) and V2 inserts keep their texts too."""
    from airflow_lineage_provider.hooks import session_capture
    from tests.integration.test_spark_connect import document, target_of

    capture, why = session_capture.begin(spark, "issue42-rowlevel")
    assert capture is not None, why
    for statement, _ in ROW_LEVEL_TEXTS:
        spark.sql(statement)
    doc = document(capture.end())
    assert [(target_of(s), s["sql"]) for s in doc["statements"]] == [
        (f"rowcat.kt42.{t}", statement) for statement, targets in ROW_LEVEL_TEXTS for t in targets]
    assert doc.get("warnings", []) == []
