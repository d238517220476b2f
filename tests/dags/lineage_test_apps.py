"""Test DAGs running applications with SparkSubmitLineageOperator (embedded Spark): PySpark scripts and a jar."""

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

# A JVM application (tests/java/jvmapp, compiled by the test: AIRFLOW_LINEAGE_TEST_JVM_APP) under the provider's
# JVM listener, beside a query listener of the user's own (MarkListener, in the application's jar) that must
# still run: it appends each action to JAR_MARK.
JAR_OUT = Path(os.environ.get("AIRFLOW_HOME", "/tmp")) / "jar_app"
JAR_MARK = JAR_OUT.parent / "jar_app_mark.txt"

with DAG(dag_id="lineage_test_jar", schedule=None, start_date=START, catchup=False) as jar_app:
    SparkSubmitLineageOperator(
        task_id="write_range", retries=0,
        application=os.environ.get("AIRFLOW_LINEAGE_TEST_JVM_APP", "jvm-app.jar"),
        java_class="lineagetest.WriteRange",
        application_args=[str(JAR_OUT / "range"), str(JAR_OUT / "total")],
        conf={"spark.sql.catalogImplementation": "in-memory", "spark.sql.queryExecutionListeners":
              "lineagetest.MarkListener", "spark.lineagetest.mark": str(JAR_MARK)},
    )
