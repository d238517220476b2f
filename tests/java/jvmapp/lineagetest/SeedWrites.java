package lineagetest;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Properties;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * The seed writes of the JVM listener's comparison, as a Java application: the same as
 * {@code tests/data/apps/seed_writes.py}, whose lineage under the Python driver it must equal.
 *
 * <p>Usage: SeedWrites SEED_SQL OUT_DIR [JDBC_URL USER PASSWORD]
 */
public final class SeedWrites {
    private SeedWrites() {
    }

    public static void main(String[] args) throws Exception {
        SparkSession spark = SparkSession.builder().getOrCreate();
        String out = args[1];
        String seed = new String(Files.readAllBytes(Paths.get(args[0])), StandardCharsets.UTF_8);
        for (String statement : seed.replace("${out}", out).split(";\n")) {
            if (!statement.trim().isEmpty()) {
                spark.sql(statement);
            }
        }
        Dataset<Row> orders = spark.table("seed.orders");
        Dataset<Row> custs = spark.table("seed.custs");
        orders.selectExpr("id", "amount * 2 AS doubled").write().mode("overwrite").saveAsTable("seed.by_api");
        orders.selectExpr("id + 100 AS id", "amount / 2 AS doubled").write().insertInto("seed.by_api");
        orders.join(custs, orders.col("cust").equalTo(custs.col("cid")))
                .selectExpr("region", "qty").write().mode("overwrite").format("parquet").save(out + "/saved");
        if (args.length > 4) {
            Properties props = new Properties();
            props.setProperty("user", args[3]);
            props.setProperty("password", args[4]);
            props.setProperty("driver", "org.postgresql.Driver");
            spark.table("seed.totals").selectExpr("region", "round(total, 1) AS total").write()
                    .mode("overwrite").jdbc(args[2], "public.seed_totals", props);
        }
        spark.stop();
    }
}
