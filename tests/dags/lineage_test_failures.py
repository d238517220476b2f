"""DAGs that must fail: used by the tests, copied into the test session's dags folder."""

from __future__ import annotations

import os

import pendulum
from airflow.sdk import DAG

from airflow_lineage_provider.operators.spark_lineage import SparkSqlLineageOperator

MARKER = os.path.join(os.environ.get("AIRFLOW_HOME", "/tmp"), "syntax_error_marker")

with DAG(dag_id="lineage_syntax_error", schedule=None, start_date=pendulum.datetime(2026, 1, 1, tz="UTC")) as dag:
    SparkSqlLineageOperator(
        task_id="bad_sql",
        retries=0,
        sql=(
            "CREATE TABLE IF NOT EXISTS syntax_t (a INT) USING parquet;\n"
            f"INSERT OVERWRITE DIRECTORY '{MARKER}' USING parquet SELECT 1 AS a;\n"
            "INSERT INTO syntax_t\n  SELEC a FROM syntax_t;\n"
            "INSERT INTO syntax_t SELECT 2;\n"
        ),
    )
