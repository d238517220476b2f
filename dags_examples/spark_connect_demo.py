"""Spark Connect with column lineage: an unchanged ``@task.pyspark`` task on a Spark Connect server.

``build_users`` gets its ``SparkSession`` from Airflow's Spark provider, as every ``@task.pyspark`` task
does, runs the demo's seed SQL and one DataFrame write. Nothing here imports the provider: with
``[column_lineage] stock_spark_operators = True`` (``AIRFLOW__COLUMN_LINEAGE__STOCK_SPARK_OPERATORS=True``)
the task reports the column lineage of its writes (XCom ``column_lineage``, OpenLineage, asset events); with
it off it runs exactly as always.

The session comes from the ``spark_connect_demo`` connection, e.g.
``AIRFLOW_CONN_SPARK_CONNECT_DEMO='{"conn_type": "spark_connect", "host": "127.0.0.1", "port": 15002}'``,
a Spark Connect server started with the provider's listener (the line ``airflow-lineage connect-server-conf
--dump /shared/lineage`` prints; ``docs/spark-connect.md``). The same task on a ``spark`` connection
(``{"conn_type": "spark", "host": "local[*]"}``, with the full ``pyspark``) runs on a classic session in
the task's process, and reports the same lineage.
"""

from __future__ import annotations

import pendulum
from airflow.sdk import DAG, task

DB = "connect_demo"
TABLES = [
    f"CREATE DATABASE IF NOT EXISTS {DB}",
    f"DROP TABLE IF EXISTS {DB}.ods_users",
    f"DROP TABLE IF EXISTS {DB}.dim_company",
    f"DROP TABLE IF EXISTS {DB}.dwd_users",
    f"CREATE TABLE {DB}.ods_users (id BIGINT, name STRING, birthday TIMESTAMP, ts TIMESTAMP) USING parquet",
    f"CREATE TABLE {DB}.dim_company (user_id BIGINT, company_name STRING) USING parquet",
    f"CREATE TABLE {DB}.dwd_users (id BIGINT, name STRING, company_name STRING, birthday TIMESTAMP, ts TIMESTAMP, "
    "p STRING) USING parquet PARTITIONED BY (p)",
    f"INSERT INTO {DB}.ods_users VALUES (1, 'Ann', TIMESTAMP '1990-01-02 00:00:00', TIMESTAMP '2026-01-01 08:00:00'), "
    "(2, 'Bob', TIMESTAMP '1985-07-14 00:00:00', TIMESTAMP '2026-01-01 09:30:00')",
    f"INSERT INTO {DB}.dim_company VALUES (1, 'Acme; Inc.'), (2, 'Globex')",
]
# The demo's two seed statements: one table read, then a join.
SEED = [
    f"INSERT INTO {DB}.dwd_users SELECT id, name, name AS company_name, birthday, ts, "
    f"date_format(birthday, 'yyyyMMdd') FROM {DB}.ods_users",
    f"INSERT INTO {DB}.dwd_users SELECT a.id, concat(a.name, b.company_name), b.company_name, a.birthday, a.ts, "
    f"date_format(a.birthday, 'yyyyMMdd') FROM {DB}.ods_users a JOIN {DB}.dim_company b ON a.id = b.user_id",
]

with DAG(
    dag_id="spark_connect_demo",
    schedule=None,
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    tags=["example", "lineage", "spark", "spark-connect"],
) as dag:

    @task.pyspark(conn_id="spark_connect_demo")
    def build_users(spark=None) -> int:
        from pyspark.sql import functions

        for statement in TABLES + SEED:
            spark.sql(statement)
        # A DataFrame write: users per company, with the latest birthday.
        spark.table(f"{DB}.dwd_users").groupBy("company_name") \
            .agg(functions.count("id").alias("users"), functions.max("birthday").alias("youngest")) \
            .write.mode("overwrite").saveAsTable(f"{DB}.company_users")
        return spark.table(f"{DB}.company_users").count()

    build_users()


if __name__ == "__main__":
    dag.test()
