package airflow_lineage.listener;

import org.apache.spark.SparkConf;
import org.apache.spark.sql.execution.QueryExecution;
import org.apache.spark.sql.util.QueryExecutionListener;

/**
 * Captures every write's analyzed plan inside the Spark driver's JVM, for applications with no Python
 * driver of ours: a Scala or Java jar, a Spark Connect server.
 *
 * <p>Added by the hook with {@code --conf spark.sql.queryExecutionListeners=airflow_lineage.listener.LineageListener}
 * and {@code --conf spark.airflow.lineage.dump=DIR} (a local directory or a Hadoop URI). It writes the
 * dump the Python driver writes ({@code job/dump.py}): one raw record a write event
 * ({@code lineage/plan/record.py}) and, when the application ends, {@code result.json}.
 *
 * <p>On a Spark Connect server, {@code spark.airflow.lineage.connect.base} takes the place of the dump: each
 * client session that sets its key gets its own dump under that base ({@link Keys}).
 *
 * <p>Spark creates it when a session is made, and a listener that throws there fails the session: so
 * nothing here throws, ever. Without a dump location it does nothing.
 */
public final class LineageListener implements QueryExecutionListener {
    /** Where the dump goes: a local directory or a Hadoop URI. */
    public static final String DUMP_CONF = "spark.airflow.lineage.dump";
    /** A Spark Connect server's base: each client's records go to {@code <base>/<key>/} ({@link Keys}). */
    public static final String CONNECT_BASE_CONF = "spark.airflow.lineage.connect.base";
    /** A Connect client's runtime conf: its key under the base. */
    public static final String KEY_CONF = "spark.airflow.lineage.key";
    /** A Connect client's barrier: {@code SET} it, and the key's {@code result.json} follows its plans. */
    public static final String FLUSH_CONF = "spark.airflow.lineage.flush";
    /** A Connect client's runtime conf: the secret its key's files are sealed with (no other session reads it;
     * Spark's redaction hides a conf whose name says "secret"). */
    public static final String SECRET_CONF = "spark.airflow.lineage.secret";
    /** A Connect server's: seconds a key may go without a statement before its capture expires. */
    public static final String IDLE_TIMEOUT_CONF = "spark.airflow.lineage.connect.idleTimeout";
    /** A Connect server's: how many keys may be open at once (the least recently used expires first). */
    public static final String MAX_KEYS_CONF = "spark.airflow.lineage.connect.maxKeys";
    /** The application's name in {@code result.json} (default: {@code spark.app.name}). */
    public static final String APPLICATION_CONF = "spark.airflow.lineage.application";
    /** Tests only: {@code describe} makes describing every plan throw (the fault tests). */
    public static final String FAIL_FOR_TEST_CONF = "spark.airflow.lineage.failForTest";

    private final Capture capture;
    private final Keys keys;

    /** Spark makes a listener with this constructor when it has one (it tries it before a no-argument one). */
    public LineageListener(SparkConf conf) {
        this.keys = connect(conf);
        this.capture = keys == null ? start(conf) : null;
    }

    /** A Spark Connect server's router of client keys, when {@code conf} names a base; else null. Never throws. */
    static Keys connect(SparkConf conf) {
        try {
            String base = conf == null ? null : conf.get(CONNECT_BASE_CONF, null);
            if (base == null || base.isEmpty()) {
                return null;
            }
            return Keys.of(base, conf.get(APPLICATION_CONF, conf.get("spark.app.name", "")),
                    conf.get(FAIL_FOR_TEST_CONF, ""), Known.load(),
                    number(conf, IDLE_TIMEOUT_CONF, Keys.DEFAULT_IDLE_SECONDS),
                    (int) Math.min(Integer.MAX_VALUE, number(conf, MAX_KEYS_CONF, Keys.DEFAULT_MAX_KEYS)),
                    KEY_CONF, SECRET_CONF, FLUSH_CONF);
        } catch (Throwable e) {  // never fail the session for lineage
            System.err.println("[airflow-lineage] warning: the JVM listener could not start for Spark Connect, "
                    + "no plan is captured: " + e);
            return null;
        }
    }

    /** A positive whole number the admin set, else {@code fallback} (said on stderr): a typo never turns the
     * capture off. */
    private static long number(SparkConf conf, String name, long fallback) {
        String text = conf.get(name, null);
        if (text == null) {
            return fallback;
        }
        try {
            long value = Long.parseLong(text.trim());
            if (value > 0) {
                return value;
            }
        } catch (NumberFormatException e) {
            // said below
        }
        System.err.println("[airflow-lineage] warning: " + name + "=" + text + " is not a positive whole number: "
                + fallback + " is used");
        return fallback;
    }

    /** The capture {@code conf} names, or null (said on stderr) when there is none: never throws. */
    static Capture start(SparkConf conf) {
        try {
            String dump = conf == null ? null : conf.get(DUMP_CONF, null);
            if (dump == null || dump.isEmpty()) {
                System.err.println("[airflow-lineage] warning: the JVM listener is installed without " + DUMP_CONF
                        + ": no plan is captured");
                return null;
            }
            String application = conf.get(APPLICATION_CONF, conf.get("spark.app.name", ""));
            Capture capture = Capture.of(dump, application, conf.get(FAIL_FOR_TEST_CONF, ""), Known.load());
            try {
                capture.watchApplicationEnd(Scala.option(Scala.call(Scala.module("org.apache.spark.SparkContext"),
                        "getActive")));
            } catch (Throwable e) {  // the first write registers it instead
                // nothing to do
            }
            return capture;
        } catch (Throwable e) {  // never fail the session for lineage
            System.err.println("[airflow-lineage] warning: the JVM listener could not start, no plan is captured: " + e);
            return null;
        }
    }

    @Override
    public void onSuccess(String funcName, QueryExecution qe, long durationNs) {
        if (keys != null) {
            try {
                keys.onSuccess(funcName, qe);
            } catch (Throwable e) {  // lineage never breaks the job
                System.err.println("[airflow-lineage] warning: a Spark Connect client's write was not captured: " + e);
            }
            return;
        }
        if (capture == null) {
            return;
        }
        try {
            capture.onSuccess(funcName, qe);
        } catch (Throwable e) {  // lineage never breaks the job
            capture.warn("a write was not captured: " + e);
        }
    }

    @Override
    public void onFailure(String funcName, QueryExecution qe, Exception exception) {
        // A failed command wrote nothing that lineage reports.
    }
}
