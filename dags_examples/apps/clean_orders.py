"""A PySpark application as a stock SparkSubmitOperator runs it: paid orders, city names cleaned.

Usage: clean_orders.py ORDERS_CSV OUT_DIR  (writes OUT_DIR/orders as parquet)
"""

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F  # noqa: N812 - PySpark's own convention

source, out = sys.argv[1], sys.argv[2]
spark = SparkSession.builder.appName("clean_orders").getOrCreate()
orders = spark.read.option("header", True).schema("order_id INT, city STRING, amount DOUBLE, status STRING").csv(source)
paid = orders.where(F.col("status") == "paid").select(
    "order_id", F.initcap(F.trim("city")).alias("city"), F.col("amount").cast("decimal(10,2)").alias("amount")
)
paid.write.mode("overwrite").parquet(f"{out}/orders")
spark.stop()
