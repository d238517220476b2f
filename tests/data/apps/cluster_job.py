"""A PySpark application for the cluster test: DataFrame API and SQL functions on the executors.

Usage: cluster_job.py OUTPUT_DIR
"""

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

spark = SparkSession.builder.getOrCreate()
spark.sql("CREATE TABLE IF NOT EXISTS ods_users (id BIGINT, name STRING, birthday TIMESTAMP, ts TIMESTAMP) "
          "USING parquet")  # the example DAG fills it when it ran first
users = spark.table("ods_users")
(users.select("id", F.upper(F.substring("name", 1, 1)).alias("initial"), F.year("birthday").alias("born"))
 .write.mode("overwrite").parquet(sys.argv[1]))
