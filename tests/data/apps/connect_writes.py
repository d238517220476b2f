"""The writes of the Spark Connect capture's comparison (``tests/integration/test_spark_connect.py``): a
CTAS, inserts and a DataFrame ``saveAsTable`` into one database. ``writes(spark, db)`` runs them on any
session (a Spark Connect client's, a classic one); run as a PySpark application (``DB`` as its argument)
it makes them under our Python driver, whose lineage the Connect server's must equal edge for edge.
``texts(spark, db)`` makes writes of every kind through ``spark.sql`` and two DataFrame writes: each write's
document keeps the text it was made with (``TEXTS``), the DataFrame writes none (issue 42).
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


# Issue 42: (the statement, the targets of its writes), run in order by ``texts``; {db} is the database.
TEXTS = [
    ("CREATE TABLE {db}.src (id INT, name STRING, amount DOUBLE) USING parquet", []),
    ("CREATE TABLE {db}.other (id INT, amount DOUBLE) USING parquet", []),
    ("INSERT INTO {db}.src VALUES (1, 'a', 10.0), (2, 'b', 20.0), (3, 'a', 5.0)", ["src"]),
    ("CREATE TABLE {db}.ctas USING parquet AS SELECT id, upper(name) AS name FROM {db}.src", ["ctas"]),
    ("INSERT INTO {db}.ctas SELECT id + 10, name FROM {db}.src", ["ctas"]),
    ("INSERT OVERWRITE TABLE {db}.ctas SELECT id, lower(name) FROM {db}.src WHERE id > 1", ["ctas"]),
    ("FROM {db}.src\nINSERT INTO {db}.ctas SELECT id, name\nINSERT INTO {db}.other SELECT id, amount",
     ["ctas", "other"]),
    ("CREATE VIEW {db}.big AS SELECT id, name FROM {db}.src WHERE amount > 6", ["big"]),
    ("/* nightly load; token: s3cr3t-Tok */\n-- second line\ncreate table {db}.commented\n  using parquet\n"
     "  as select id,\n     amount * 2 as twice\n  from {db}.src", ["commented"]),
    ("EXECUTE IMMEDIATE 'INSERT INTO {db}.other SELECT id, amount FROM {db}.src'", ["other"]),
]
# The DataFrame writes ``texts`` makes last: no text of their own, though one's query came from spark.sql.
DATAFRAME_TARGETS = ["df_plain", "df_of_sql"]


def texts(spark, db: str) -> None:
    spark.sql(f"DROP DATABASE IF EXISTS {db} CASCADE")
    spark.sql(f"CREATE DATABASE {db}")
    for statement, _ in TEXTS:
        spark.sql(statement.format(db=db))
    spark.table(f"{db}.src").write.mode("overwrite").saveAsTable(f"{db}.df_plain")
    spark.sql(f"SELECT id, name FROM {db}.src ORDER BY id").write.mode("overwrite").saveAsTable(f"{db}.df_of_sql")


def writes(spark, db: str) -> None:
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {db}")
    for statement in SQL:
        spark.sql(statement.format(db=db))
    spark.table(f"{db}.src").selectExpr("id", "concat(name, '!') AS tagged").write.mode("overwrite") \
        .saveAsTable(f"{db}.by_api")


if __name__ == "__main__":
    from pyspark.sql import SparkSession

    writes(SparkSession.builder.getOrCreate(), sys.argv[1])
