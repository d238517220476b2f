"""Existing DAGs: the stock SparkSubmitOperator and SparkSqlOperator, unchanged, with
``[column_lineage] stock_spark_operators`` off and on (real Airflow, dag.test on SQLite; real local Spark
through a ``spark`` connection whose master is ``local[*]``).

Two runs of the example DAG ``spark_stock_operators_demo`` (option off, then on with OpenLineage's file
transport), shared by the tests below through module-scoped fixtures; then three runs of a small DAG of
stock SQL tasks (one writes, one fails in Spark): off, on, and on with the capture broken on purpose.
"""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
from collections import defaultdict
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

import pytest

from tests.conftest import DAGS, DATA, venv_bin
from tests.integration.test_example_dag import asset_events, load_dag, xcoms
from tests.integration.test_openlineage import openlineage_enabled, read_events, task_event
from tests.openlineage_spec import registry, validate_event
from tests.rowlevel import jvm_app_jar

pytestmark = [pytest.mark.spark, pytest.mark.airflow, pytest.mark.slow]

DEMO = "spark_stock_operators_demo"
REPORT = "spark_stock_city_report"
OUT = os.path.join(os.environ["AIRFLOW_LINEAGE_LOCAL_DIR"], "stock_demo")
ORDERS, TOTALS, BANDS = f"{OUT}/orders", f"{OUT}/city_totals", f"{OUT}/order_bands"
CSV = str(DAGS / "data" / "orders.csv")


@contextmanager
def stock_option(on: bool, **env: str):
    """The example's ``spark_local`` connection, and the option on or off, for the runs inside."""
    mp = pytest.MonkeyPatch()
    mp.setenv("AIRFLOW_CONN_SPARK_LOCAL", '{"conn_type": "spark", "host": "local[*]"}')
    mp.setenv("AIRFLOW__COLUMN_LINEAGE__STOCK_SPARK_OPERATORS", str(on))
    for key, value in env.items():
        mp.setenv(key, value)
    try:
        yield
    finally:
        mp.undo()


def task_states(dag_id: str, run_id: str) -> dict[str, str]:
    from airflow.models.taskinstance import TaskInstance
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        rows = session.execute(select(TaskInstance.task_id, TaskInstance.state).where(
            TaskInstance.dag_id == dag_id, TaskInstance.run_id == run_id)).all()
    return {task_id: str(state) for task_id, state in rows}


def queued_for(dag_id: str) -> list[str]:
    """URIs of the assets whose events wait for ``dag_id`` (AssetDagRunQueue)."""
    from airflow.models.asset import AssetDagRunQueue, AssetModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        return list(session.scalars(select(AssetModel.uri).join(AssetDagRunQueue, AssetDagRunQueue.asset_id == AssetModel.id)
                                    .where(AssetDagRunQueue.target_dag_id == dag_id)))


def rows(spark, path: str) -> list[tuple]:
    """What a job wrote, read back with the shared in-process Spark."""
    return sorted(tuple(str(v) for v in r) for r in spark.read.parquet(path).collect())


def expected_totals() -> list[tuple]:
    """city_totals computed in Python from the CSV the application reads: paid orders per cleaned city."""
    sums: dict[str, list] = defaultdict(lambda: [Decimal(0), 0])
    with open(CSV, newline="") as f:
        for row in csv.DictReader(f):
            if row["status"] == "paid":
                city = row["city"].strip().capitalize()
                sums[city][0] += Decimal(row["amount"]).quantize(Decimal("0.01"))
                sums[city][1] += 1
    return sorted((city, str(total), str(count)) for city, (total, count) in sums.items())


def run_demo(spark, on: bool, **ol) -> dict[str, Any]:
    shutil.rmtree(OUT, ignore_errors=True)
    with stock_option(on):
        run = load_dag(DAGS / "spark_stock_operators_demo.py").test()
    return {"run": run, "states": task_states(DEMO, run.run_id), "xcom": xcoms(DEMO, run.run_id),
            "assets": asset_events(DEMO, run.run_id), "queued": queued_for(REPORT),
            "data": {"orders": rows(spark, ORDERS), "city_totals": rows(spark, TOTALS),
                     "order_bands": rows(spark, BANDS)}}


@pytest.fixture(scope="module")
def off_run(airflow_db, spark):
    return run_demo(spark, on=False)


@pytest.fixture(scope="module")
def on_run(off_run, spark, tmp_path_factory):
    from airflow.models.dag import DagModel
    from airflow.utils.session import create_session

    # The first run synced both DAGs of the file; a user switches the scheduled one on.
    with create_session() as session:
        session.get(DagModel, REPORT).is_paused = False
    log = tmp_path_factory.mktemp("stock-openlineage") / "events.jsonl"
    with openlineage_enabled({"type": "file", "log_file_path": str(log), "append": True}):
        result = run_demo(spark, on=True)
    result["events"] = read_events(log)
    return result


# -- the option ----------------------------------------------------------------------------------


def test_the_option_is_declared_with_its_description_and_off_by_default(airflow_db):
    listed = subprocess.run([venv_bin("airflow"), "config", "list", "--include-descriptions", "--section",
                             "column_lineage"], capture_output=True, text=True, check=True).stdout
    assert "[column_lineage]" in listed and "stock_spark_operators" in listed
    assert "Give column lineage to tasks of the unchanged SparkSubmitOperator" in listed
    value = subprocess.run([venv_bin("airflow"), "config", "get-value", "column_lineage", "stock_spark_operators"],
                           capture_output=True, text=True, check=True).stdout.strip()
    assert value == "False"


# -- off and on: the same outcomes and data ----------------------------------------------------------


def test_both_runs_succeed_and_write_the_same_data(off_run, on_run):
    assert off_run["run"].state == on_run["run"].state == "success"
    assert off_run["states"] == on_run["states"] == {"clean_orders": "success", "city_totals": "success",
                                                     "build_order_bands_jar": "success", "order_bands": "success"}
    assert off_run["data"] == on_run["data"]
    assert on_run["data"]["city_totals"] == expected_totals()
    assert len(on_run["data"]["orders"]) == 4  # the paid orders
    assert on_run["data"]["order_bands"] == [("1", "Berlin", "large"), ("2", "Paris", "large"), ("4", "Lyon", "small"),
                                             ("5", "Paris", "small")]


def test_with_the_option_off_there_is_no_lineage(off_run):
    assert off_run["xcom"] == {}
    assert off_run["assets"] == {}
    assert off_run["queued"] == []


# -- on: XCom -----------------------------------------------------------------------------------------


def edges(statement: dict) -> dict[str, set[tuple[str, str, str]]]:
    return {c: {(i["table"], i["field"], i["subtype"]) for i in inputs} for c, inputs in statement["columns"].items()}


def test_xcom_lineage_of_the_pyspark_application_edge_by_edge(on_run):
    doc = on_run["xcom"]["clean_orders"]
    [write] = doc["statements"]
    assert write["method"] == "plan" and write["confidence"] == 1.0
    assert (write["target"]["namespace"], write["target"]["name"]) == ("file", ORDERS)
    assert edges(write) == {
        "order_id": {(CSV, "order_id", "IDENTITY")},
        "city": {(CSV, "city", "TRANSFORMATION")},
        "amount": {(CSV, "amount", "TRANSFORMATION")},
    }
    assert [(i["table"], i["field"], i["subtype"]) for i in write["indirect"]] == [(CSV, "status", "FILTER")]


def test_xcom_lineage_of_the_sql_edge_by_edge_and_both_extractors_agree(on_run):
    doc = on_run["xcom"]["city_totals"]
    [write] = doc["statements"]
    assert write["method"] == "plan"
    assert (write["target"]["namespace"], write["target"]["name"]) == ("file", TOTALS)
    assert edges(write) == {
        "city": {(ORDERS, "city", "IDENTITY")},
        "total": {(ORDERS, "amount", "AGGREGATION")},
        "orders": {(ORDERS, "order_id", "AGGREGATION")},
    }
    assert [(i["field"], i["subtype"]) for i in write["indirect"]] == [("city", "GROUP_BY")]
    assert write["agreement"]["static"] == "same"


def test_xcom_lineage_of_the_jvm_application_edge_by_edge(on_run):
    doc = on_run["xcom"]["order_bands"]
    [write] = doc["statements"]
    assert write["method"] == "plan" and write["confidence"] == 1.0
    assert (write["target"]["namespace"], write["target"]["name"]) == ("file", BANDS)
    assert edges(write) == BANDS_EDGES
    assert [(i["table"], i["field"], i["subtype"]) for i in write["indirect"]] == BANDS_INDIRECT


BANDS_EDGES = {
    "order_id": {(ORDERS, "order_id", "IDENTITY")},
    "city": {(ORDERS, "city", "IDENTITY")},
    "band": set(),  # a literal, chosen by a condition on amount: an indirect input
}
BANDS_INDIRECT = [(ORDERS, "amount", "CONDITIONAL")]


# -- on: OpenLineage ------------------------------------------------------------------------------------


def test_openlineage_complete_events_are_valid_and_carry_the_column_lineage(on_run):
    events = on_run["events"]
    schemas = registry()
    for event in events:
        validate_event(event, schemas)
    outputs = {}
    for task in ("clean_orders", "city_totals", "order_bands"):
        complete = task_event(events, f"{DEMO}.{task}", "COMPLETE")
        [output] = complete["outputs"]
        lineage = output["facets"]["columnLineage"]["fields"]
        outputs[task] = (output["namespace"], output["name"], {
            column: {(f["name"], f["field"], t["subtype"]) for f in entry["inputFields"] for t in f["transformations"]}
            for column, entry in lineage.items()})
    assert outputs["clean_orders"] == ("file", ORDERS, {
        "order_id": {(CSV, "order_id", "IDENTITY")},
        "city": {(CSV, "city", "TRANSFORMATION")},
        "amount": {(CSV, "amount", "TRANSFORMATION")},
    })
    assert outputs["city_totals"] == ("file", TOTALS, {
        "city": {(ORDERS, "city", "IDENTITY")},
        "total": {(ORDERS, "amount", "AGGREGATION")},
        "orders": {(ORDERS, "order_id", "AGGREGATION")},
    })
    # A column with no direct input has no entry in the facet (band's condition is dataset-level, indirect).
    assert outputs["order_bands"] == ("file", BANDS, {c: inputs for c, inputs in BANDS_EDGES.items() if inputs})
    sql_start = task_event(events, f"{DEMO}.city_totals", "START")
    assert "GROUP BY city" in sql_start["job"]["facets"]["sql"]["query"]  # the stock task's rendered SQL


# -- on: assets ------------------------------------------------------------------------------------------


def test_each_write_is_an_asset_event_named_as_the_openlineage_dataset(on_run):
    assets = on_run["assets"]
    assert set(assets) == {("clean_orders", f"file://{ORDERS}"), ("city_totals", f"file://{TOTALS}"),
                           ("order_bands", f"file://{BANDS}")}
    orders = assets["clean_orders", f"file://{ORDERS}"]
    totals = assets["city_totals", f"file://{TOTALS}"]
    bands = assets["order_bands", f"file://{BANDS}"]
    assert orders["inputs"] == [f"file://{CSV}"] and orders["columns"] == ["order_id", "city", "amount"]
    assert totals["inputs"] == [f"file://{ORDERS}"] and totals["columns"] == ["city", "total", "orders"]
    assert bands["inputs"] == [f"file://{ORDERS}"] and bands["columns"] == ["order_id", "city", "band"]
    for task, uri in assets:  # the same name as the OpenLineage output
        [output] = task_event(on_run["events"], f"{DEMO}.{task}", "COMPLETE")["outputs"]
        assert uri == f"file://{output['name']}"


def test_the_dag_scheduled_on_the_written_asset_is_triggered(on_run):
    from airflow.jobs.job import Job
    from airflow.jobs.scheduler_job_runner import SchedulerJobRunner
    from airflow.models.dagrun import DagRun
    from airflow.utils.session import create_session
    from airflow.utils.sqlalchemy import prohibit_commit
    from sqlalchemy import select

    assert on_run["queued"] == [f"file://{TOTALS}"]
    # The scheduler's own step that turns queued asset events into DAG runs.
    runner = SchedulerJobRunner(job=Job())
    with create_session() as session, prohibit_commit(session) as guard:
        runner._create_dagruns_for_dags(guard, session)
    with create_session() as session:
        runs = session.scalars(select(DagRun).where(DagRun.dag_id == REPORT)).all()
        assert [r.run_type for r in runs] == ["asset_triggered"]
        consumed = {(e.source_dag_id, e.source_task_id, e.asset.uri) for e in runs[0].consumed_asset_events}
    assert consumed == {(DEMO, "city_totals", f"file://{TOTALS}")}


# -- stock SQL: failures, and the capture broken on purpose ---------------------------------------------


SQL_OUT = os.path.join(os.environ["AIRFLOW_HOME"], "stock_faults")


def run_sql_dag(spark, capfd, on: bool, **env: str) -> dict[str, Any]:
    shutil.rmtree(SQL_OUT, ignore_errors=True)
    capfd.readouterr()
    with stock_option(on, **env):
        dag = load_dag(DAGS / "lineage_test_stock.py")
        run = dag.test()
    out = capfd.readouterr()
    return {"states": task_states(dag.dag_id, run.run_id), "xcom": xcoms(dag.dag_id, run.run_id),
            "log": out.out + out.err, "squares": rows(spark, f"{SQL_OUT}/squares"),
            "first": rows(spark, f"{SQL_OUT}/first"), "app_squares": rows(spark, f"{SQL_OUT}/app_squares"),
            "jvm_range": rows(spark, f"{SQL_OUT}/jvm_range"), "jvm_total": rows(spark, f"{SQL_OUT}/jvm_total")}


def test_stock_tasks_off_on_and_with_the_capture_broken_end_alike(airflow_db, spark, capfd, monkeypatch):
    """Three runs of stock SparkSqlOperator tasks (one writes, one's second statement fails in Spark) and
    SparkSubmitOperator tasks (an application that writes, one that fails halfway, a JVM application that writes
    twice, one that fails): the option off (spark-sql, spark-submit), on, and on with the driver's capture import
    broken on purpose (the JVM listener does not import it: its lineage stays)."""
    monkeypatch.setenv("AIRFLOW_LINEAGE_TEST_JVM_APP", jvm_app_jar())
    runs = {
        "off": run_sql_dag(spark, capfd, on=False),
        "on": run_sql_dag(spark, capfd, on=True),
        "broken": run_sql_dag(spark, capfd, on=True, PYTHONPATH=str(DATA / "faults" / "capture_import")),
    }
    expected = {"writes": "success", "fails": "failed", "app_writes": "success", "app_fails": "failed",
                "jvm_app": "success", "jvm_app_fails": "failed"}
    assert {mode: r["states"] for mode, r in runs.items()} == {mode: expected for mode in runs}
    squares = [(str(i), str(i * i)) for i in range(4)]
    assert {mode: r["squares"] for mode, r in runs.items()} == {mode: squares for mode in runs}
    assert {mode: r["app_squares"] for mode, r in runs.items()} == {mode: squares for mode in runs}
    # The JVM application writes the same rows in every mode.
    tens = [(str(i), str(i * 10)) for i in range(3)]
    assert {mode: r["jvm_range"] for mode, r in runs.items()} == {mode: tens for mode in runs}
    totals = [(str(i), str(i * 11)) for i in (1, 2)]
    assert {mode: r["jvm_total"] for mode, r in runs.items()} == {mode: totals for mode in runs}
    assert all("ArrayIndexOutOfBoundsException" in r["log"] for r in runs.values())  # its failure, its own words
    assert "No plan column lineage for this SparkSubmitOperator" not in runs["on"]["log"]
    # The failing script's first statement ran before the second failed, as spark-sql runs it.
    assert {mode: r["first"] for mode, r in runs.items()} == {mode: [("1",)] for mode in runs}
    for mode, r in runs.items():  # Spark's own error in the task log
        assert "UNRESOLVED_COLUMN" in r["log"] and "TABLE_OR_VIEW_NOT_FOUND" in r["log"], mode
    assert "Statement 2 of 2 failed at line 2 of the script" in runs["on"]["log"]

    assert runs["off"]["xcom"] == {}
    [on] = runs["on"]["xcom"]["writes"]["statements"]
    assert on["method"] == "plan" and on["target"]["name"] == f"{SQL_OUT}/squares"
    broken = runs["broken"]["xcom"]["writes"]
    assert [s["method"] for s in broken["statements"]] == ["sql"]
    assert any("the plan capture could not be loaded (ImportError: injected: the capture is broken)" in w
               for w in broken["warnings"])
    assert "the plan capture could not be loaded (ImportError: injected" in runs["broken"]["log"]
    [app] = runs["on"]["xcom"]["app_writes"]["statements"]
    assert app["method"] == "plan" and app["target"]["name"] == f"{SQL_OUT}/app_squares"
    assert runs["broken"]["xcom"]["app_writes"]["statements"] == []
    assert any("the plan capture could not be loaded" in w for w in runs["broken"]["xcom"]["app_writes"]["warnings"])
    for mode in ("on", "broken"):  # the jar's two writes, edge by edge, from the JVM listener
        first, second = runs[mode]["xcom"]["jvm_app"]["statements"]
        assert [(s["method"], s["target"]["name"]) for s in (first, second)] == [
            ("plan", f"{SQL_OUT}/jvm_range"), ("plan", f"{SQL_OUT}/jvm_total")], mode
        assert edges(first) == {"id": set(), "tens": set()}
        source = f"{SQL_OUT}/jvm_range"
        assert edges(second) == {"id": {(source, "id", "IDENTITY")},
                                 "total": {(source, "id", "TRANSFORMATION"), (source, "tens", "TRANSFORMATION")}}
        assert [(i["table"], i["field"], i["subtype"]) for i in second["indirect"]] == [(source, "tens", "FILTER")]
    for mode in ("on", "broken"):  # a failed task pushes no lineage
        assert set(runs[mode]["xcom"]) == {"writes", "app_writes", "jvm_app"}, mode
