"""Test DAGs running PySpark applications with SparkSubmitLineageOperator (embedded Spark)."""

from __future__ import annotations

import os
from pathlib import Path

import pendulum
from airflow.sdk import DAG

from airflow_lineage_provider.operators.spark_lineage import SparkSubmitLineageOperator

APPS = Path(os.environ.get("AIRFLOW_LINEAGE_TEST_DATA", Path(__file__).parent)) / "apps"
STREAM = Path(os.environ.get("AIRFLOW_HOME", "/tmp")) / "stream"
START = pendulum.datetime(2026, 1, 1, tz="UTC")

with DAG(dag_id="lineage_test_streaming", schedule=None, start_date=START, catchup=False) as streaming:
    SparkSubmitLineageOperator(
        task_id="events_per_window",
        application=str(APPS / "stream_events.py"),
        conf={"spark.sql.catalogImplementation": "in-memory"},  # no Hive catalog needed: starts faster
        application_args=[str(STREAM / "in"), str(STREAM / "out"), str(STREAM / "checkpoint")],
    )

with DAG(dag_id="lineage_test_app_failure", schedule=None, start_date=START, catchup=False) as failing:
    SparkSubmitLineageOperator(task_id="failing_app", retries=0, application=str(APPS / "failing.py"),
                               conf={"spark.sql.catalogImplementation": "in-memory"})
