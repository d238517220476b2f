"""tests/java/jvmapp's lineagetest.WriteRange in PySpark, write for write: its lineage through our Python
driver is what the JVM listener must give for the jar (tests/integration/test_jvm_app.py)."""

import sys

from pyspark.sql import SparkSession

spark = SparkSession.builder.getOrCreate()
spark.range(3).selectExpr("id", "id * 10 AS tens").write.mode("overwrite").parquet(sys.argv[1])
if len(sys.argv) > 2:
    (spark.read.parquet(sys.argv[1]).where("tens > 0").selectExpr("id", "tens + id AS total")
     .write.mode("overwrite").parquet(sys.argv[2]))
