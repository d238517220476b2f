"""A PySpark application that fails halfway: reads a table that does not exist."""

from pyspark.sql import SparkSession

spark = SparkSession.builder.getOrCreate()
spark.range(3).write.mode("overwrite").saveAsTable("failing_before")
spark.table("no_such_table_here").show()
