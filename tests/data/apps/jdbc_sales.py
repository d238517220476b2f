"""Reads two PostgreSQL tables over JDBC (credentials in properties, and in the URL), joins and
aggregates, and writes the result back with write.jdbc and to parquet.

Usage: jdbc_sales.py JDBC_URL USER PASSWORD OUTPUT_DIR
"""

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

spark = SparkSession.builder.getOrCreate()
url, user, password, out_dir = sys.argv[1:5]
props = {"user": user, "password": password, "driver": "org.postgresql.Driver"}

customers = spark.read.jdbc(url, "public.customers", properties=props)
orders = (spark.read.format("jdbc").option("driver", "org.postgresql.Driver")
          .option("url", f"{url}?user={user}&password={password}").option("dbtable", "orders").load())
totals = (orders.join(customers, orders.customer_id == customers.id)
          .groupBy("city").agg(F.sum("amount").alias("total")))
totals.write.jdbc(url, "public.city_totals", mode="overwrite", properties=props)
totals.select(F.lower("city").alias("city"), "total").write.mode("overwrite").parquet(out_dir)
