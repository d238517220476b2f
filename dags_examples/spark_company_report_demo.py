"""Demo, DAG B: a report read from what DAG A (``spark_column_lineage_demo``) writes.

``build_company_report`` reads ``dwd_users`` into ``company_report``. Run it after the first demo; then
**Column lineage** in Airflow's menu (or ``airflow-lineage trace spark_catalog.default.company_report.company_name``)
follows ``company_name`` back through DAG A to ``dim_company``, and ``ods_users.birthday`` forward
through both DAGs. Same connection and conf variables as the first demo.
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
    dag_id="spark_company_report_demo",
    schedule=None,
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    template_searchpath=[str(Path(__file__).parent / "sql")],
    tags=["example", "lineage", "spark"],
) as dag:
    SparkSqlLineageOperator(task_id="build_company_report", sql="company_report.sql", conn_id=CONN_ID,
                            conf=SPARK_CONF or None)

if __name__ == "__main__":
    dag.test()
