"""A PySpark application that writes and reads paths whose names hold a space, "#", "%" and letters
beyond ASCII: argv[1] is written with write.parquet, then read back and written to argv[2]."""

import sys

from pyspark.sql import SparkSession

spark = SparkSession.builder.getOrCreate()
first, second = sys.argv[1], sys.argv[2]
spark.range(3).withColumnRenamed("id", "b").write.mode("overwrite").parquet(first)
spark.read.parquet(first).selectExpr("b * 2 AS b").write.mode("overwrite").parquet(second)
