"""DAGs of the fault suite (tests/integration/test_faults.py): what a user gets wrong, the task's outcome."""

from __future__ import annotations

import os

import pendulum
from airflow.sdk import DAG

from airflow_lineage_provider.operators.spark_lineage import SparkSqlLineageOperator

HOME = os.environ.get("AIRFLOW_HOME", "/tmp")
DUMP_URI_OUT = os.path.join(HOME, "fault_dump_uri_out")
START = pendulum.datetime(2026, 1, 1, tz="UTC")

with DAG(dag_id="lineage_fault_dump_uri", schedule=None, start_date=START) as dump_uri:
    # /proc cannot hold a directory: the dump cannot be written there, the job must still run.
    SparkSqlLineageOperator(
        task_id="unwritable_dump_uri", retries=0, dump_uri="file:///proc/airflow-lineage-forbidden",
        sql=f"INSERT OVERWRITE DIRECTORY '{DUMP_URI_OUT}' USING parquet SELECT 1 AS a;\n",
    )

with DAG(dag_id="lineage_fault_empty", schedule=None, start_date=START) as empty:
    SparkSqlLineageOperator(task_id="comments_only", retries=0, sql="-- nothing to run yet\n/* TODO */\n")

with DAG(dag_id="lineage_fault_capture", schedule=None, start_date=START) as capture_broken:
    # The test breaks the driver's capture import (PYTHONPATH): the SQL must run all the same.
    SparkSqlLineageOperator(
        task_id="capture_cannot_load", retries=0,
        sql=f"INSERT OVERWRITE DIRECTORY '{DUMP_URI_OUT}_capture' USING parquet SELECT 1 AS a;\n",
    )

with DAG(dag_id="lineage_fault_kill", schedule=None, start_date=START) as kill:
    # Long enough to be killed mid-statement: the test stops the task while Spark counts.
    SparkSqlLineageOperator(
        task_id="long_statement", retries=0,
        sql="SELECT sum(a.id * b.id) AS s FROM range(0, 400000) a CROSS JOIN range(0, 400000) b;\n",
    )

RETRY_OUT = os.path.join(HOME, "fault_retry_out")

with DAG(dag_id="lineage_fault_retry", schedule=None, start_date=START) as retry:
    # Try 1 writes, then fails on its second statement; try 2 runs it all: only try 2's lineage counts.
    SparkSqlLineageOperator(
        task_id="partial_then_whole", retries=1, retry_delay=pendulum.duration(seconds=0),
        sql=(
            f"INSERT OVERWRITE DIRECTORY '{RETRY_OUT}_1' USING parquet SELECT 1 AS a;\n"
            f"INSERT OVERWRITE DIRECTORY '{RETRY_OUT}_2' USING parquet "
            "SELECT {{ 'no_such_column' if ti.try_number == 1 else '2' }} AS b;\n"
        ),
    )
