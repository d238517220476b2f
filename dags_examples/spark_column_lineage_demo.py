"""Demo: Spark SQL with column lineage on the embedded local Spark (no connection needed).

``prepare_tables`` creates and fills the seed tables; ``build_dwd_users`` runs the
two seed statements. After the run, each task's XCom ``column_lineage`` holds its
lineage document; ``airflow-lineage show`` prints it.
"""

from __future__ import annotations

from pathlib import Path

import pendulum
from airflow.sdk import DAG

from airflow_lineage_provider.operators.spark_lineage import SparkSqlLineageOperator

with DAG(
    dag_id="spark_column_lineage_demo",
    schedule=None,
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    template_searchpath=[str(Path(__file__).parent / "sql")],
    tags=["example", "lineage", "spark"],
) as dag:
    prepare_tables = SparkSqlLineageOperator(task_id="prepare_tables", sql="prepare_tables.sql")
    build_dwd_users = SparkSqlLineageOperator(task_id="build_dwd_users", sql="build_dwd_users.sql")
    prepare_tables >> build_dwd_users

if __name__ == "__main__":
    dag.test()
