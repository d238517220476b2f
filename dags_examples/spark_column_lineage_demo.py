"""Demo: Spark SQL with column lineage on the embedded local Spark (no connection needed).

``prepare_tables`` creates and fills the seed tables; ``build_dwd_users`` runs the
two seed statements. After the run, each task's XCom ``column_lineage`` holds its
lineage document; ``airflow-lineage show`` prints it.

The same DAG runs on a Spark cluster: set ``AIRFLOW_LINEAGE_DEMO_CONN_ID`` to a ``spark``
connection (e.g. ``AIRFLOW_CONN_SPARK_CLUSTER='{"conn_type": "spark", "host":
"spark://10.0.0.5", "port": 7077}'``) and, if the cluster needs them, Spark properties as
JSON in ``AIRFLOW_LINEAGE_DEMO_CONF`` (e.g. the Hive metastore both tasks share).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pendulum
from airflow.sdk import DAG

from airflow_lineage_provider.operators.spark_lineage import SparkSqlLineageOperator

CONN_ID = os.environ.get("AIRFLOW_LINEAGE_DEMO_CONN_ID") or None  # None: the embedded local Spark
SPARK_CONF = json.loads(os.environ.get("AIRFLOW_LINEAGE_DEMO_CONF") or "{}")

with DAG(
    dag_id="spark_column_lineage_demo",
    schedule=None,
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    template_searchpath=[str(Path(__file__).parent / "sql")],
    tags=["example", "lineage", "spark"],
) as dag:
    prepare_tables = SparkSqlLineageOperator(task_id="prepare_tables", sql="prepare_tables.sql",
                                             conn_id=CONN_ID, conf=SPARK_CONF or None)
    build_dwd_users = SparkSqlLineageOperator(task_id="build_dwd_users", sql="build_dwd_users.sql",
                                              conn_id=CONN_ID, conf=SPARK_CONF or None)
    prepare_tables >> build_dwd_users

if __name__ == "__main__":
    dag.test()
