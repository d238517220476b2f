"""A Structured Streaming application: JSON files in, a watermark, windowed aggregates, parquet out.

Usage: stream_events.py INPUT_DIR OUTPUT_DIR CHECKPOINT_DIR
"""

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

spark = SparkSession.builder.getOrCreate()
source, sink, checkpoint = sys.argv[1:4]

events = (
    spark.readStream.schema("id BIGINT, name STRING, amount DOUBLE, ts TIMESTAMP").json(source)
    .withWatermark("ts", "10 minutes")
)
per_window = (
    events.groupBy(F.window("ts", "5 minutes").alias("w"), "name")
    .agg(F.sum("amount").alias("total"), F.max("id").alias("last_id"))
    .select(F.col("w.start").alias("window_start"), F.upper("name").alias("name_uc"), "total", "last_id")
)
query = (
    per_window.writeStream.format("parquet").option("path", sink).option("checkpointLocation", checkpoint)
    .outputMode("append").trigger(availableNow=True).start()
)
query.awaitTermination()
print("batches:", len(query.recentProgress))
