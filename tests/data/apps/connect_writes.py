"""The writes of the Spark Connect capture's comparison (``tests/integration/test_spark_connect.py``): a
CTAS, inserts and a DataFrame ``saveAsTable`` into one database. ``writes(spark, db)`` runs them on any
session (a Spark Connect client's, a classic one); run as a PySpark application (``DB`` as its argument)
it makes them under our Python driver, whose lineage the Connect server's must equal edge for edge.
"""

import sys

SQL = [
    "CREATE TABLE {db}.src (id INT, name STRING, amount DOUBLE) USING parquet",
    "INSERT INTO {db}.src VALUES (1, 'a', 10.0), (2, 'b', 20.0), (3, 'a', 5.0)",
    "CREATE TABLE {db}.totals USING parquet AS SELECT name, sum(amount) AS total FROM {db}.src GROUP BY name",
    "INSERT INTO {db}.totals SELECT upper(name), amount * 2 FROM {db}.src WHERE id > 1",
]
# Each write's target, in order: the four statements' (less the first, a CREATE TABLE), then the API's.
TARGETS = ["src", "totals", "totals", "by_api"]


def writes(spark, db: str) -> None:
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {db}")
    for statement in SQL:
        spark.sql(statement.format(db=db))
    spark.table(f"{db}.src").selectExpr("id", "concat(name, '!') AS tagged").write.mode("overwrite") \
        .saveAsTable(f"{db}.by_api")


if __name__ == "__main__":
    from pyspark.sql import SparkSession

    writes(SparkSession.builder.getOrCreate(), sys.argv[1])
