package lineagetest;

import org.apache.spark.sql.SparkSession;

/** A JVM Spark application (no Python side to capture plans in): writes three rows as parquet to args[0]. */
public final class WriteRange {
    private WriteRange() {
    }

    public static void main(String[] args) {
        SparkSession spark = SparkSession.builder().appName("write-range").getOrCreate();
        try {
            spark.range(3).selectExpr("id", "id * 10 AS tens").write().mode("overwrite").parquet(args[0]);
        } finally {
            spark.stop();
        }
    }
}
