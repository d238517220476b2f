"""Stock Spark tasks for tests/integration/test_stock_operators.py, run with the option off, on, and on with
the capture broken: SparkSqlOperator tasks (one writes, one's second statement fails in Spark) and
SparkSubmitOperator tasks (a PySpark application that writes, one that fails halfway, and a JVM application,
``AIRFLOW_LINEAGE_TEST_JVM_APP``, that writes twice, and fails when given no output)."""

from __future__ import annotations

import os
from pathlib import Path

import pendulum
from airflow.providers.apache.spark.operators.spark_sql import SparkSqlOperator
from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import DAG

HOME = os.environ.get("AIRFLOW_HOME", "/tmp")
OUT = os.path.join(HOME, "stock_faults")
APPS = Path(os.environ.get("AIRFLOW_LINEAGE_TEST_DATA", Path(__file__).parent)) / "apps"
# spark-sql always opens a Hive catalog: keep its Derby files here, not in the working directory.
CONF = {
    "spark.ui.enabled": "false",
    "spark.sql.warehouse.dir": os.path.join(OUT, "warehouse"),
    "spark.hadoop.javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={OUT}/metastore_db;create=true",
    "spark.driver.extraJavaOptions": f"-Dderby.system.home={OUT}",
}

with DAG(dag_id="lineage_stock_sql", schedule=None, start_date=pendulum.datetime(2026, 1, 1, tz="UTC")) as dag:
    SparkSqlOperator(
        task_id="writes", conn_id="spark_local", conf=CONF, retries=0,
        sql=f"INSERT OVERWRITE DIRECTORY '{OUT}/squares' USING parquet SELECT id, id * id AS square FROM range(4)",
    )
    SparkSqlOperator(
        task_id="fails", conn_id="spark_local", conf=CONF, retries=0,
        sql=(f"INSERT OVERWRITE DIRECTORY '{OUT}/first' USING parquet SELECT 1 AS a;\n"
             "SELECT no_such_column FROM range(1);\n"),
    )
    SparkSubmitOperator(task_id="app_writes", conn_id="spark_local", conf=CONF, retries=0,
                        application=str(APPS / "squares.py"), application_args=[f"{OUT}/app_squares"])
    SparkSubmitOperator(task_id="app_fails", conn_id="spark_local", conf=CONF, retries=0,
                        application=str(APPS / "failing.py"))
    SparkSubmitOperator(task_id="jvm_app", conn_id="spark_local", conf=CONF, retries=0,
                        application=os.environ.get("AIRFLOW_LINEAGE_TEST_JVM_APP", "jvm-app.jar"),
                        java_class="lineagetest.WriteRange", application_args=[f"{OUT}/jvm_range", f"{OUT}/jvm_total"])
    SparkSubmitOperator(task_id="jvm_app_fails", conn_id="spark_local", conf=CONF, retries=0,
                        application=os.environ.get("AIRFLOW_LINEAGE_TEST_JVM_APP", "jvm-app.jar"),
                        java_class="lineagetest.WriteRange")  # no output path: main() throws before writing
