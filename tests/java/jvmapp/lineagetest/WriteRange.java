package lineagetest;

import org.apache.spark.sql.SparkSession;

/**
 * A JVM Spark application, written with the DataFrame API alone (no Python side): writes three rows as parquet
 * to args[0]; given args[1] too, reads args[0] back and writes the rows with tens above 0 to args[1], so its
 * second write has input columns for lineage to name.
 */
public final class WriteRange {
    private WriteRange() {
    }

    public static void main(String[] args) {
        SparkSession spark = SparkSession.builder().appName("write-range").getOrCreate();
        try {
            spark.range(3).selectExpr("id", "id * 10 AS tens").write().mode("overwrite").parquet(args[0]);
            if (args.length > 1) {
                spark.read().parquet(args[0]).where("tens > 0").selectExpr("id", "tens + id AS total")
                        .write().mode("overwrite").parquet(args[1]);
            }
        } finally {
            spark.stop();
        }
    }
}
