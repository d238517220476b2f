"""Existing DAGs get column lineage: Airflow's own Spark operators, unchanged.

``clean_orders`` is a stock ``SparkSubmitOperator`` running a PySpark application;
``city_totals`` a stock ``SparkSqlOperator`` (``spark-sql``). Nothing here imports the
provider: with ``[column_lineage] stock_spark_operators = True``
(``AIRFLOW__COLUMN_LINEAGE__STOCK_SPARK_OPERATORS=True``) both tasks report column lineage
(XCom ``column_lineage``, OpenLineage, asset events); with it off they run exactly as always.

Both run on the ``spark_local`` connection, e.g.
``AIRFLOW_CONN_SPARK_LOCAL='{"conn_type": "spark", "host": "local[*]"}'``.
``spark_stock_city_report`` (below) is scheduled on the asset ``city_totals`` writes.
"""

from __future__ import annotations

import os
from pathlib import Path

import pendulum
from airflow.providers.apache.spark.operators.spark_sql import SparkSqlOperator
from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import DAG, Asset, task

HERE = Path(__file__).parent
HOME = os.environ.get("AIRFLOW_HOME") or os.path.expanduser("~/airflow")
STATE = os.environ.get("AIRFLOW_LINEAGE_LOCAL_DIR") or os.path.join(HOME, "spark_local")
OUT = os.path.join(STATE, "stock_demo")  # where the jobs write (parquet directories)
# The Spark settings a user gives a local master: the catalog and warehouse under STATE (so spark-sql
# leaves no metastore_db in the working directory), no UI (Airflow's api-server owns 8080).
SPARK_CONF = {
    "spark.ui.enabled": "false",
    "spark.sql.warehouse.dir": os.path.join(STATE, "warehouse"),
    "spark.hadoop.javax.jdo.option.ConnectionURL": (
        f"jdbc:derby:;databaseName={os.path.join(STATE, 'metastore_db')};create=true"
    ),
    "spark.driver.extraJavaOptions": f"-Dderby.system.home={STATE}",
    "spark.sql.shuffle.partitions": "2",
}
START = pendulum.datetime(2026, 1, 1, tz="UTC")

with DAG(
    dag_id="spark_stock_operators_demo",
    schedule=None,
    start_date=START,
    catchup=False,
    template_searchpath=[str(HERE / "sql")],
    tags=["example", "lineage", "spark"],
) as dag:
    clean_orders = SparkSubmitOperator(
        task_id="clean_orders",
        conn_id="spark_local",
        application=str(HERE / "apps" / "clean_orders.py"),
        application_args=[str(HERE / "data" / "orders.csv"), OUT],
        conf=SPARK_CONF,
        name="clean_orders",
    )
    city_totals = SparkSqlOperator(
        task_id="city_totals",
        conn_id="spark_local",
        sql="city_totals.sql",
        conf=SPARK_CONF,
        name="city_totals",
        params={"out": OUT},
    )
    clean_orders >> city_totals

# Runs after city_totals writes its directory: scheduled on the asset the lineage names.
CITY_TOTALS = Asset(f"file://{OUT}/city_totals")

with DAG(dag_id="spark_stock_city_report", schedule=[CITY_TOTALS], start_date=START, catchup=False,
         tags=["example", "lineage"]) as report_dag:

    @task(inlets=[CITY_TOTALS])
    def report(*, inlet_events=None):
        events = inlet_events[CITY_TOTALS]
        print(f"city_totals written {len(events)} time(s); last by {events[-1].source_task_id}")

    report()

if __name__ == "__main__":
    dag.test()
