"""DAG of the Spark Connect test (tests/integration/test_spark_connect.py): a PythonOperator that builds its
Connect session by hand and reports through ``column_lineage``. The test sets the server's URL and base."""

from __future__ import annotations

import importlib.util
import os

import pendulum
from airflow.providers.standard.operators.python import PythonOperator
from airflow.sdk import DAG

URL_ENV, BASE_ENV = "AIRFLOW_LINEAGE_TEST_CONNECT_URL", "AIRFLOW_LINEAGE_TEST_CONNECT_BASE"


def load_by_hand(**context) -> None:
    from pyspark.sql import SparkSession

    from airflow_lineage_provider.operators.session import column_lineage

    path = os.path.join(os.environ["AIRFLOW_LINEAGE_TEST_DATA"], "apps", "connect_writes.py")
    spec = importlib.util.spec_from_file_location("connect_writes", path)
    workload = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(workload)
    spark = SparkSession.builder.remote(os.environ[URL_ENV]).create()
    try:
        with column_lineage(spark, context, dump_base=os.environ[BASE_ENV]):
            workload.writes(spark, "ke")
    finally:
        spark.stop()


with DAG(dag_id="lineage_test_connect", schedule=None, start_date=pendulum.datetime(2026, 1, 1, tz="UTC")) as dag:
    PythonOperator(task_id="load", python_callable=load_by_hand, retries=0)
