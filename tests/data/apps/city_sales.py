"""A user's PySpark application, written with no thought of lineage (tests run it unchanged).

Reads two tables, joins and aggregates with the DataFrame API, caches the result, and writes it
with saveAsTable, write.parquet(path), a SQL insert through a temp view, insertInto and
DataFrameWriterV2; then stops Spark itself. Usage: city_sales.py OUTPUT_PARQUET_DIR
"""

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

spark = SparkSession.builder.appName("city-sales").getOrCreate()
out_dir = sys.argv[1]

spark.sql("CREATE DATABASE IF NOT EXISTS app")
for table in ("orders", "customers", "city_sales", "city_sales_v2"):
    spark.sql(f"DROP TABLE IF EXISTS app.{table}")
spark.sql("CREATE TABLE app.orders (order_id INT, customer_id INT, amount DOUBLE) USING parquet")
spark.sql("CREATE TABLE app.customers (id INT, name STRING, city STRING) USING parquet")
spark.sql("INSERT INTO app.orders VALUES (1, 10, 5.0), (2, 10, 7.5), (3, 20, 1.0)")
spark.sql("INSERT INTO app.customers VALUES (10, 'Ann', 'Oslo'), (20, 'Bob', 'Rome')")

orders = spark.table("app.orders")
customers = spark.table("app.customers")
sales = (
    orders.join(customers, orders.customer_id == customers.id)
    .groupBy(customers.city)
    .agg(F.sum("amount").alias("total"), F.count("order_id").alias("n_orders"))
    .cache()
)
print("cities:", sales.count())

sales.write.mode("overwrite").saveAsTable("app.city_sales")
sales.select(F.upper("city").alias("city_uc"), "total").write.mode("overwrite").parquet(out_dir)
sales.createOrReplaceTempView("sales_v")
spark.sql("INSERT INTO app.city_sales SELECT city, total * 2, n_orders FROM sales_v")
sales.select("city", F.round("total", 1).alias("total"), "n_orders").write.insertInto("app.city_sales")
sales.writeTo("app.city_sales_v2").using("parquet").create()
spark.stop()
