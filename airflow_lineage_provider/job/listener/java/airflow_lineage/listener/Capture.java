package airflow_lineage.listener;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerApplicationEnd;

/**
 * One application's capture into one dump: every session's listener of this JVM that names the same
 * dump shares it (Spark makes a listener per session).
 *
 * <p>The listener only keeps the event and its analyzed plan; describing a plan ({@code toJSON}, the
 * catalog's locations: tens of milliseconds) happens on one background thread, in the order Spark
 * reported the events, which the reader's reduction relies on ({@code lineage/plan/events.py}). It
 * writes every write event: which of a write's several events stands for it is the reader's to decide.
 * When the application ends, the thread is given time to finish and {@code result.json} is written.
 */
final class Capture {
    /** How long the end of the application waits for plans still being described. */
    private static final long DRAIN_SECONDS = 120;
    private static final Map<String, Capture> BY_DUMP = new ConcurrentHashMap<>();

    private final String dump;
    private final String application;
    private final String failForTest;
    private final Known known;
    private final ObjectMapper mapper = new ObjectMapper();
    // One thread, in order, that ends when idle: a Spark Connect key waiting for its barrier holds none.
    private final ThreadPoolExecutor worker = new ThreadPoolExecutor(1, 1, 2, TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(), r -> {
                Thread t = new Thread(r, "airflow-lineage-capture");
                t.setDaemon(true);  // never keeps a JVM alive
                return t;
            });
    private final List<String> warnings = Collections.synchronizedList(new ArrayList<>());
    private volatile DumpFiles files;
    private volatile boolean finished;
    private volatile Object sparkContext;
    private int written;
    // A Spark Connect client's capture (Keys): no end-of-application watch of its own, the router's finishes it.
    private final boolean keyed;
    // Keyed only: the base (its files are removed up to it when the key expires) and the client's secret.
    private java.nio.file.Path root;
    private String secret;
    // Streaming queries started and not yet described, by id, in the order they started.
    private final Map<String, Object> streams = new java.util.LinkedHashMap<>();

    private Capture(String dump, String application, String failForTest, Known known, boolean keyed) {
        this.dump = dump;
        this.keyed = keyed;
        this.application = application;
        this.failForTest = failForTest;
        this.known = known;
        worker.allowCoreThreadTimeOut(true);
    }

    /** The capture of the dump {@code dump} in this JVM, made on first use. */
    static Capture of(String dump, String application, String failForTest, Known known) {
        return BY_DUMP.computeIfAbsent(dump, d -> new Capture(d, application, failForTest, known, false));
    }

    /** The capture of one Spark Connect client's key, in {@code dump} (its directory under the base
     * {@code root}, null for a URI base), sealed with the client's {@code secret} (null: unsealed). */
    static Capture keyed(String dump, java.nio.file.Path root, String application, String failForTest, Known known,
                         Object sparkContext, String secret) {
        Capture capture = new Capture(dump, application, failForTest, known, true);
        capture.sparkContext = sparkContext;  // for a URI's Hadoop conf; the router watches the application's end
        capture.root = root;
        capture.secret = secret;
        return capture;
    }

    // -- on Spark's listener thread: keep the event, nothing more ----------------------------------

    void onSuccess(String func, Object qe) {
        if (finished) {
            return;
        }
        Object plan = Scala.call(qe, "analyzed");
        List<Object> commands = writes(Describe.unwrap(plan));
        if (commands.isEmpty()) {
            return;
        }
        Object session = Scala.call(qe, "sparkSession");
        if (!keyed) {
            watchApplicationEnd(Scala.call(session, "sparkContext"));
        }
        long id = ((Number) Scala.call(qe, "id")).longValue();
        String sql = sqlText(plan);
        for (Object command : commands) {
            ObjectNode head = mapper.createObjectNode();
            head.put("format", Describe.RAW);
            head.put("execution_id", id);
            head.put("func", func);
            head.put("command", Scala.simpleName(command));
            worker.execute(() -> describe(session, command, head, sql));
        }
    }

    /** The writes an analyzed plan makes, each its own: the plan itself, or each insert of a multi-insert
     * ({@code FROM s INSERT INTO a ... INSERT INTO b ...}: one event, "multi-commands", for a Union of write
     * commands), as {@code job/capture.write_plans} reads them. */
    private List<Object> writes(Object plan) {
        List<Object> out = new ArrayList<>();
        if ("Union".equals(Scala.simpleName(plan))) {
            for (Object child : Scala.seq(Scala.call(plan, "children"))) {
                if (!known.isWrite(Scala.simpleName(child), child)) {
                    return Collections.emptyList();
                }
                out.add(child);
            }
            return out;
        }
        if (known.isWrite(Scala.simpleName(plan), plan)) {
            out.add(plan);
        }
        return out;
    }

    // -- streaming queries ------------------------------------------------------------------------------

    void streamStarted(String id) {
        Object query = null;
        for (String which : new String[] {"getActiveSession", "getDefaultSession"}) {
            try {
                Object session = Scala.option(Scala.call(Scala.module("org.apache.spark.sql.SparkSession"), which));
                query = session == null ? null : Scala.call(Scala.call(session, "streams"), "get", id);
            } catch (ReflectiveOperationException | RuntimeException e) {
                query = null;
            }
            if (query != null) {
                watchApplicationEnd(Scala.call(Scala.call(query, "sparkSession"), "sparkContext"));
                synchronized (streams) {
                    streams.put(id, query);
                }
                return;
            }
        }
        warn("streaming query " + id + " not captured: no session holds it");
    }

    void streamEnded(String id) {
        Object query;
        synchronized (streams) {
            query = streams.remove(id);
        }
        if (query != null && !finished) {
            worker.execute(() -> describeStream(query));
        }
    }

    private void describeStream(Object query) {
        Object plan;
        try {
            plan = Scala.call(Scala.call(query, "streamingQuery"), "logicalPlan");
        } catch (RuntimeException e) {
            warn("streaming query " + Scala.call(query, "id") + " not captured: " + e);
            return;
        }
        // No execution id: a stream's plan is no listener event, and the reader keeps it as it is.
        ObjectNode head = mapper.createObjectNode();
        head.put("format", Describe.RAW);
        describe(Scala.call(query, "sparkSession"), plan, head, "");
    }

    /** The text of the {@code spark.sql} call that made the plan; "" for a DataFrame write. */
    private static String sqlText(Object plan) {
        return Describe.sqlText(plan);  // read as job/jvm.sql_text reads it: the write's origin, else its query's
    }

    // -- on the capture's own thread -----------------------------------------------------------------

    private void describe(Object session, Object plan, ObjectNode head, String sql) {
        try {
            if ("describe".equals(failForTest)) {
                throw new IllegalStateException("forced by spark.airflow.lineage.failForTest");
            }
            List<String> found = new ArrayList<>();
            ObjectNode record = new Describe(mapper, session, known).record(plan, head, found);
            warnings.addAll(found);
            synchronized (this) {
                record.put("index", written);
                record.put("sql", sql);
                record.putNull("line");
                files().record(mapper.writeValueAsString(record));
                written++;
            }
        } catch (Throwable e) {  // lineage never breaks the job: the write is a warning
            warn("a write's plan was not captured (" + head.path("command").asText("a stream") + "): " + e);
        }
    }

    private DumpFiles files() throws java.io.IOException {
        if (files == null) {
            Object hadoopConf = sparkContext == null ? null : Scala.call(sparkContext, "hadoopConfiguration");
            files = DumpFiles.open(dump, known.isUri(dump), hadoopConf, secret);
        }
        return files;
    }

    // -- the end of the application -----------------------------------------------------------------

    void watchApplicationEnd(Object context) {
        if (sparkContext != null || context == null) {
            return;
        }
        synchronized (this) {
            if (sparkContext != null) {
                return;
            }
            sparkContext = context;
        }
        Scala.call(context, "addSparkListener", new SparkListener() {
            @Override
            public void onApplicationEnd(SparkListenerApplicationEnd end) {
                finish();
            }
        });
        System.err.println("[airflow-lineage] the JVM listener captures this application's writes into " + dump);
    }

    /**
     * A Spark Connect client's completion barrier: {@code result.json} (with {@code barrier}, the value the
     * client set) is written on the capture's thread after every plan of the key reported before it, and
     * the capture ends. Called on Spark's listener thread, so it queues and never waits.
     */
    void flush(String barrier) {
        if (finished) {
            return;
        }
        finished = true;
        worker.execute(() -> writeResult(barrier));
        worker.shutdown();
    }

    /** A Spark Connect key that expired: nothing more is written, and what was is removed (never waits). */
    void discard() {
        if (finished) {
            return;
        }
        finished = true;
        worker.execute(() -> {
            try {
                if (files != null) {
                    files.discard(root);
                }
            } catch (Throwable e) {  // best effort: the base is the admin's to prune
                System.err.println("[airflow-lineage] warning: an expired Spark Connect key's files could not be "
                        + "removed: " + e);
            }
        });
        worker.shutdown();
    }

    void finish() {
        if (finished) {
            return;
        }
        finished = true;
        synchronized (streams) {  // still running when the application ends: described now
            for (Object query : streams.values()) {
                worker.execute(() -> describeStream(query));
            }
            streams.clear();
        }
        worker.shutdown();
        try {
            if (!worker.awaitTermination(DRAIN_SECONDS, TimeUnit.SECONDS)) {
                warn("the application ended before every write's plan was described (waited "
                        + DRAIN_SECONDS + " s): later writes are missing");
                worker.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        writeResult(null);
        if (!keyed) {
            BY_DUMP.remove(dump, this);
        }
    }

    private void writeResult(String barrier) {
        try {
            ObjectNode result = mapper.createObjectNode();
            result.putArray("statements");
            result.putNull("error");
            result.put("spark_version", sparkVersion());
            result.put("application", application);
            if (barrier != null) {
                result.put("barrier", barrier);
            }
            synchronized (this) {
                result.put("writes", written);
            }
            ArrayNode list = result.putArray("warnings");
            synchronized (warnings) {
                warnings.forEach(list::add);
            }
            files().finish(mapper.writeValueAsString(result));
        } catch (Throwable e) {  // an unwritable dump: the worker says "no result file", the job goes on
            System.err.println("[airflow-lineage] warning: the plan dump " + dump + " could not be written: " + e);
        }
    }

    private String sparkVersion() {
        try {
            return String.valueOf(Scala.call(sparkContext, "version"));
        } catch (RuntimeException e) {
            return null;
        }
    }

    /** A warning for the lineage document; the driver's log gets the first only, so that a capture failing
     * on every write says so in one line, not one per write. */
    void warn(String message) {
        boolean first;
        synchronized (warnings) {
            first = warnings.isEmpty();
            warnings.add(message);
        }
        if (first) {
            System.err.println("[airflow-lineage] warning: " + message + " (any further warning is in the lineage)");
        }
    }
}
