"""DAG of the Spark Connect isolation test (tests/integration/test_spark_connect.py): two unchanged
``@task.pyspark`` tasks that write at the same time on one Connect server, and a task whose first try writes
and then fails. The test sets the ``spark_connect_test`` connection and a meeting directory."""

from __future__ import annotations

import importlib.util
import os
import time
from datetime import timedelta

import pendulum
from airflow.sdk import DAG, task

MEET_ENV = "AIRFLOW_LINEAGE_TEST_MEET_DIR"


def _workload():
    path = os.path.join(os.environ["AIRFLOW_LINEAGE_TEST_DATA"], "apps", "connect_writes.py")
    spec = importlib.util.spec_from_file_location("connect_writes", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _meet(me: str, other: str) -> None:
    """Wait (at most 180 s) until the other task has its session too: both then write at once."""
    directory = os.environ[MEET_ENV]
    open(os.path.join(directory, me), "w").close()
    deadline = time.monotonic() + 180
    while not os.path.exists(os.path.join(directory, other)):
        if time.monotonic() > deadline:
            raise RuntimeError(f"task {other} never started: the two tasks did not run at once")
        time.sleep(0.2)


with DAG(dag_id="lineage_test_connect_tasks", schedule=None,
         start_date=pendulum.datetime(2026, 1, 1, tz="UTC")) as dag:

    @task.pyspark(conn_id="spark_connect_test")
    def load_a(spark=None) -> None:
        _meet("a", "b")
        _workload().writes(spark, "ta")

    @task.pyspark(conn_id="spark_connect_test")
    def load_b(spark=None) -> None:
        _meet("b", "a")
        _workload().writes(spark, "tb")

    @task.pyspark(conn_id="spark_connect_test", retries=1, retry_delay=timedelta(seconds=1))
    def flaky(spark=None, ti=None) -> None:
        db = f"try{ti.try_number}"
        spark.sql(f"CREATE DATABASE IF NOT EXISTS {db}")
        spark.sql(f"DROP TABLE IF EXISTS {db}.one")
        spark.sql(f"CREATE TABLE {db}.one USING parquet AS SELECT 1 AS one")
        if ti.try_number == 1:
            raise RuntimeError("the first try fails after its write")

    [load_a(), load_b()] >> flaky()
