package airflow_lineage.listener;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerApplicationEnd;

/**
 * A Spark Connect server's capture: one dump per client key, {@code <base>/<key>/}
 * ({@code docs/spark-connect.md}).
 *
 * <p>A Connect server makes each client session with {@code newSession()}, and Spark makes a listener per
 * session, so every client's events reach a listener of this JVM; they share this router by base. The
 * server's admin sets the base (a static conf: no client can change it); a client names only its key
 * ({@code spark.conf.set(KEY_CONF, ...)}, a runtime conf), read from the event's own session. A key that
 * is not safe ({@code Known.isSafeKey}) is refused, never rewritten: rewriting could let two keys share a
 * directory, and the client would look where the server did not write. A statement of a session without
 * a key is not captured: on a shared server nothing would ever read or remove an unkeyed dump.
 *
 * <p>The client cannot reach the server's listener bus, and plans are described later on the key's own
 * thread: so its barrier is {@code SET spark.airflow.lineage.flush=<token>}, a command whose event reaches
 * this listener after the session's earlier ones; the key's {@code result.json}, carrying the token, is
 * then queued behind the plans still being described, and the key's capture ends.
 */
final class Keys {
    private static final Map<String, Keys> BY_BASE = new ConcurrentHashMap<>();

    private final String base;
    private final String application;
    private final String failForTest;
    private final Known known;
    private final Map<String, Capture> captures = new ConcurrentHashMap<>();
    // Keys refused already: said once on the server's stderr, not at every statement.
    private final Set<String> refused = ConcurrentHashMap.newKeySet();
    private volatile boolean watching;

    private Keys(String base, String application, String failForTest, Known known) {
        this.base = base.replaceAll("/+$", "");
        this.application = application;
        this.failForTest = failForTest;
        this.known = known;
    }

    static Keys of(String base, String application, String failForTest, Known known) {
        return BY_BASE.computeIfAbsent(base, b -> new Keys(b, application, failForTest, known));
    }

    void onSuccess(String func, Object qe, String keyConf, String flushConf) {
        Object session = Scala.call(qe, "sparkSession");
        Object key = Scala.option(Scala.call(Scala.call(session, "conf"), "getOption", keyConf));
        if (key == null) {
            return;
        }
        String name = String.valueOf(key);
        if (!known.isSafeKey(name)) {
            if (refused.add(name)) {
                System.err.println("[airflow-lineage] warning: a Spark Connect client's key " + keyConf + "="
                        + name.replaceAll("[^\\x20-\\x7e]", "?") + " is refused (only letters, digits, _.+=- "
                        + "parts joined by /, none starting with a dot): its writes are not captured");
            }
            return;
        }
        Object context = Scala.call(session, "sparkContext");
        watchApplicationEnd(context);
        String barrier = barrier(Describe.unwrap(Scala.call(qe, "analyzed")), flushConf);
        if (barrier != null) {
            // The capture leaves the map first: a later statement of the key starts a new one.
            Capture capture = captures.remove(name);
            if (capture == null) {  // a barrier with no write before it: an empty dump, and a result
                capture = Capture.keyed(base + "/" + name, application, failForTest, known, context);
            }
            capture.flush(barrier);
            return;
        }
        captures.computeIfAbsent(name, k -> Capture.keyed(base + "/" + k, application, failForTest, known, context))
                .onSuccess(func, qe);
    }

    /** The value of a {@code SET <flushConf>=<value>} command; null for any other plan. */
    private static String barrier(Object plan, String flushConf) {
        if (!"SetCommand".equals(Scala.simpleName(plan))) {
            return null;
        }
        Object pair = Scala.option(Scala.call(plan, "kv"));
        if (pair == null || !flushConf.equals(String.valueOf(Scala.call(pair, "_1")))) {
            return null;
        }
        Object value = Scala.option(Scala.call(pair, "_2"));
        return value == null ? "" : String.valueOf(value);
    }

    private void watchApplicationEnd(Object context) {
        if (watching) {
            return;
        }
        synchronized (this) {
            if (watching) {
                return;
            }
            watching = true;
        }
        Scala.call(context, "addSparkListener", new SparkListener() {
            @Override
            public void onApplicationEnd(SparkListenerApplicationEnd end) {
                finishAll();
            }
        });
        System.err.println("[airflow-lineage] the JVM listener captures Spark Connect clients' writes under " + base
                + "/<key>");
    }

    /** The server stops: every key not yet flushed gets its result, saying the barrier never came. */
    private void finishAll() {
        List<Capture> open = new ArrayList<>(captures.values());
        captures.clear();
        for (Capture capture : open) {
            capture.warn("the Spark Connect server stopped before the client's barrier: later writes are missing");
            capture.finish();
        }
        BY_BASE.remove(base, this);
    }
}
