"""A small PySpark application for the stock-operator tests: squares written as parquet to argv[1]."""

import sys

from pyspark.sql import SparkSession

spark = SparkSession.builder.getOrCreate()
spark.range(4).selectExpr("id", "id * id AS square").write.mode("overwrite").parquet(sys.argv[1])
