"""Existing DAGs get column lineage: Airflow's own Spark operators, unchanged.

``clean_orders`` is a stock ``SparkSubmitOperator`` running a PySpark application;
``city_totals`` a stock ``SparkSqlOperator`` (``spark-sql``); ``order_bands`` a stock
``SparkSubmitOperator`` running a JVM application (a jar, ``java_class``), which
``build_order_bands_jar`` compiles from ``apps/java`` first (skipped, with ``order_bands``, where
no JDK is installed: a JRE runs jars but cannot build them). Nothing here imports the provider:
with ``[column_lineage] stock_spark_operators = True``
(``AIRFLOW__COLUMN_LINEAGE__STOCK_SPARK_OPERATORS=True``) the three Spark tasks report column lineage
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
ORDER_BANDS_JAR = os.path.join(STATE, "jars", "order_bands.jar")

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

    @task
    def build_order_bands_jar() -> str:
        """Compile ``apps/java`` with the JDK against the installed pyspark's jars, into ORDER_BANDS_JAR."""
        import shutil
        import subprocess
        import tempfile
        import zipfile

        import pyspark
        from airflow.sdk.exceptions import AirflowSkipException

        java_home = os.environ.get("JAVA_HOME")
        javac = shutil.which("javac") or (os.path.join(java_home, "bin", "javac") if java_home else None)
        if not javac or not os.path.exists(javac):
            raise AirflowSkipException("no JDK (javac) on this worker to build the example's jar")
        sources = [str(p) for p in (HERE / "apps" / "java").rglob("*.java")]
        jars = os.path.join(os.path.dirname(pyspark.__file__), "jars", "*")
        os.makedirs(os.path.dirname(ORDER_BANDS_JAR), exist_ok=True)
        with tempfile.TemporaryDirectory() as classes:
            subprocess.run([javac, "-nowarn", "-encoding", "UTF-8", "-d", classes, "-cp", jars, *sources], check=True)
            with zipfile.ZipFile(ORDER_BANDS_JAR + ".tmp", "w") as jar:
                for compiled in Path(classes).rglob("*.class"):
                    jar.write(compiled, compiled.relative_to(classes).as_posix())
        os.replace(ORDER_BANDS_JAR + ".tmp", ORDER_BANDS_JAR)
        return ORDER_BANDS_JAR

    order_bands = SparkSubmitOperator(
        task_id="order_bands",
        conn_id="spark_local",
        application=ORDER_BANDS_JAR,
        java_class="demo.OrderBands",
        application_args=[os.path.join(OUT, "orders"), os.path.join(OUT, "order_bands")],
        conf=SPARK_CONF,
        name="order_bands",
    )
    [build_order_bands_jar(), clean_orders] >> order_bands

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
