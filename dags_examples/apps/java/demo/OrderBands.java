package demo;

import org.apache.spark.sql.SparkSession;

/**
 * A JVM application (Java, the DataFrame API) as a stock SparkSubmitOperator runs it: each paid order's size band.
 *
 * <p>Usage: {@code demo.OrderBands ORDERS_DIR OUT_DIR}: reads the orders clean_orders wrote (parquet), writes
 * OUT_DIR as parquet.
 */
public final class OrderBands {
    private OrderBands() {
    }

    public static void main(String[] args) {
        SparkSession spark = SparkSession.builder().appName("order_bands").getOrCreate();
        try {
            spark.read().parquet(args[0])
                    .selectExpr("order_id", "city", "CASE WHEN amount >= 10 THEN 'large' ELSE 'small' END AS band")
                    .write().mode("overwrite").parquet(args[1]);
        } finally {
            spark.stop();
        }
    }
}
