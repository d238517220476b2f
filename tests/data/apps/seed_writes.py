"""The seed writes of the JVM listener's comparison, as a PySpark application: ``seed_writes.sql``
through ``spark.sql``, then the DataFrame API's writes. ``tests/java/jvmapp/lineagetest/SeedWrites.java``
does the same in Java; their lineage must be equal edge for edge.

Usage: seed_writes.py SEED_SQL OUT_DIR [JDBC_URL USER PASSWORD]
"""

import sys

from pyspark.sql import SparkSession

spark = SparkSession.builder.getOrCreate()
seed, out = sys.argv[1], sys.argv[2]
with open(seed, encoding="utf-8") as f:
    for statement in f.read().replace("${out}", out).split(";\n"):
        if statement.strip():
            spark.sql(statement)

orders = spark.table("seed.orders")
orders.selectExpr("id", "amount * 2 AS doubled").write.mode("overwrite").saveAsTable("seed.by_api")
orders.selectExpr("id + 100 AS id", "amount / 2 AS doubled").write.insertInto("seed.by_api")
orders.join(spark.table("seed.custs"), orders.cust == spark.table("seed.custs").cid) \
    .selectExpr("region", "qty").write.mode("overwrite").format("parquet").save(out + "/saved")
if len(sys.argv) > 5:
    url, user, password = sys.argv[3:6]
    props = {"user": user, "password": password, "driver": "org.postgresql.Driver"}
    spark.table("seed.totals").selectExpr("region", "round(total, 1) AS total").write.jdbc(
        url, "public.seed_totals", mode="overwrite", properties=props)
