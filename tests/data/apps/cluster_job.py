"""A PySpark application for the cluster test: a Python UDF runs on the executors.

Usage: cluster_job.py OUTPUT_DIR
"""

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

spark = SparkSession.builder.getOrCreate()
users = spark.table("ods_users")
initials = F.udf(lambda name: name[:1].upper() if name else None, "string")
(users.select("id", initials("name").alias("initial"), F.year("birthday").alias("born"))
 .write.mode("overwrite").parquet(sys.argv[1]))
