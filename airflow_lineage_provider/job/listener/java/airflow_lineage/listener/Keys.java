package airflow_lineage.listener;

import java.lang.ref.WeakReference;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerApplicationEnd;

/**
 * A Spark Connect server's capture: one dump per client key, {@code <base>/<key>/}
 * ({@code docs/spark-connect.md}), each key bound to the session that first used it.
 *
 * <p>A Connect server makes each client session with {@code newSession()}, and Spark makes a listener per
 * session, so every client's events reach a listener of this JVM; they share this router by base. The
 * server's admin sets the base (a static conf: no client can change it); a client names only its key
 * ({@code SET spark.airflow.lineage.key=...}), and its secret ({@code spark.airflow.lineage.secret}, a
 * runtime conf no other session reads) with which the key's files are sealed. A key that is not safe
 * ({@code Known.isSafeKey}) is refused, never rewritten: rewriting could let two keys share a directory.
 * A statement of a session without a key is not captured: on a shared server nothing would ever read or
 * remove an unkeyed dump.
 *
 * <p>Tenancy: the first session that uses a key owns it until the key's barrier, and for as long after as
 * the server remembers ended keys; another session's statements under it are refused and said (once a key
 * in the server's log, and in the key's own result). A session keeps its key when its conf loses it (a
 * {@code RESET}): its writes and its barrier still reach the capture it opened.
 *
 * <p>Bounds, each the admin's ({@code docs/spark-connect.md}): a key with no statement for
 * {@code spark.airflow.lineage.connect.idleTimeout} seconds expires, and at most
 * {@code spark.airflow.lineage.connect.maxKeys} keys are open (the least recently used is expired to
 * make room): an expired key's files are removed and its barrier, if it ever comes, says why. No key holds
 * a thread or an open file while it waits; a bound reached never fails a statement.
 *
 * <p>The client cannot reach the server's listener bus, and plans are described later on the key's own
 * thread: so its barrier is {@code SET spark.airflow.lineage.flush=<token>}, a command whose event reaches
 * this listener after the session's earlier ones; the key's {@code result.json}, carrying the token, is
 * then queued behind the plans still being described, and the key's capture ends.
 */
final class Keys {
    static final long DEFAULT_IDLE_SECONDS = 6 * 3600;
    static final int DEFAULT_MAX_KEYS = 1000;
    /** Lines the server's log gets about refused keys and sessions: a client cannot flood it. */
    private static final int MAX_LOG_LINES = 100;
    private static final int SHOWN_KEY_CHARS = 80;
    private static final int REFUSALS_REMEMBERED = 1024;
    private static final Map<String, Keys> BY_BASE = new ConcurrentHashMap<>();

    private final String base;
    private final Path localBase;  // null for a URI base (nothing is written there before a barrier)
    private final String application;
    private final String failForTest;
    private final Known known;
    private final long idleMillis;
    private final int maxKeys;
    private final String keyConf;
    private final String secretConf;
    private final String flushConf;

    // All under `this`. Open keys, least recently used first; each session's key; keys ended lately.
    private final LinkedHashMap<String, Claim> open = new LinkedHashMap<>(16, 0.75f, true);
    private final Map<Object, String> sessions = new WeakHashMap<>();
    private final LinkedHashMap<String, Ended> ended;
    private int logLines;
    private final java.util.Set<Integer> refusedKeys = new java.util.HashSet<>();  // hashes: a key may be 1 MB
    private volatile boolean watching;
    private final ScheduledExecutorService sweeper;

    /** A key in use: the session that owns it and its capture. */
    private static final class Claim {
        final WeakReference<Object> owner;
        final Capture capture;
        long lastUsed = System.nanoTime();
        boolean foreignSaid;
        boolean renameSaid;

        Claim(Object owner, Capture capture) {
            this.owner = new WeakReference<>(owner);
            this.capture = capture;
        }
    }

    /** A key whose capture ended: who owned it, and why it ended when that was not its barrier. */
    private static final class Ended {
        final WeakReference<Object> owner;
        final String why;
        boolean foreignSaid;

        Ended(WeakReference<Object> owner, String why) {
            this.owner = owner;
            this.why = why;
        }
    }

    private Keys(String base, String application, String failForTest, Known known, long idleSeconds, int maxKeys,
                 String keyConf, String secretConf, String flushConf) {
        this.base = base.replaceAll("/+$", "");
        this.localBase = known.isUri(this.base) ? null : Paths.get(this.base);
        this.application = application;
        this.failForTest = failForTest;
        this.known = known;
        this.idleMillis = TimeUnit.SECONDS.toMillis(Math.max(1, idleSeconds));
        this.maxKeys = Math.max(1, maxKeys);
        this.keyConf = keyConf;
        this.secretConf = secretConf;
        this.flushConf = flushConf;
        int remembered = this.maxKeys;
        this.ended = new LinkedHashMap<>(16, 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Ended> eldest) {
                return size() > remembered;
            }
        };
        this.sweeper = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "airflow-lineage-keys");
            t.setDaemon(true);  // never keeps a JVM alive
            return t;
        });
        long period = Math.max(100, Math.min(idleMillis / 4, 60_000));
        sweeper.scheduleWithFixedDelay(this::expireIdle, period, period, TimeUnit.MILLISECONDS);
    }

    static Keys of(String base, String application, String failForTest, Known known, long idleSeconds, int maxKeys,
                   String keyConf, String secretConf, String flushConf) {
        return BY_BASE.computeIfAbsent(base, b -> new Keys(b, application, failForTest, known, idleSeconds, maxKeys,
                keyConf, secretConf, flushConf));
    }

    void onSuccess(String func, Object qe) {
        Object session = Scala.call(qe, "sparkSession");
        Object plan = Describe.unwrap(Scala.call(qe, "analyzed"));
        // The key from the plan when the statement sets it (the conf may already have changed: events come
        // later, on the listener's thread), else from the session's conf, else the one the session holds.
        String named = setValue(plan, keyConf);
        if (named == null) {
            named = confValue(session, keyConf);
        }
        String barrier = setValue(plan, flushConf);
        String key;
        boolean renamed;
        synchronized (this) {
            // A session keeps the key it opened until its barrier: a RESET or a later SET of another key
            // neither drops its capture nor sends its barrier elsewhere.
            String held = sessions.get(session);
            key = held != null ? held : named;
            renamed = held != null && named != null && !named.equals(held);
        }
        if (key == null) {
            return;
        }
        if (!known.isSafeKey(key)) {
            if (!firstRefusal(key)) {
                return;
            }
            say("a Spark Connect client's key " + keyConf + "=" + shown(key) + " is refused (only letters, digits, "
                    + "_.+=- parts joined by /, none starting with a dot): its writes are not captured");
            return;
        }
        Object context = Scala.call(session, "sparkContext");
        watchApplicationEnd(context);
        Claim claim;
        String endedWhy = null;
        synchronized (this) {
            claim = open.get(key);
            if (claim != null && claim.owner.get() != session) {
                refuseForeign(claim, key);
                return;
            }
            if (claim == null) {
                Ended end = ended.get(key);
                if (end != null && end.owner.get() != session) {
                    if (!end.foreignSaid) {
                        end.foreignSaid = true;
                        say("a statement of another Spark Connect session under the ended key " + shown(key)
                                + " is refused: a key belongs to the session that first used it");
                    }
                    return;
                }
                String unsafe = unsafeDirectory(key);
                if (unsafe != null) {
                    say("the Spark Connect key " + shown(key) + " is refused: " + unsafe);
                    return;
                }
                endedWhy = end == null ? null : end.why;
                makeRoom();
                claim = new Claim(session, Capture.keyed(base + "/" + key, localBase, application, failForTest, known,
                        context, confValue(session, secretConf)));
                open.put(key, claim);
            }
            claim.lastUsed = System.nanoTime();
            sessions.put(session, key);
            if (renamed && !claim.renameSaid) {
                claim.renameSaid = true;
                claim.capture.warn("this session set " + keyConf + " to another key before its barrier: its "
                        + "statements stay under the key it opened");
            }
            if (barrier != null) {
                // The capture leaves the map first: a later statement of the key starts a new one, its owner's.
                open.remove(key);
                sessions.remove(session);
                ended.put(key, new Ended(claim.owner, null));
            }
        }
        if (endedWhy != null) {
            claim.capture.warn(endedWhy);
        }
        if (barrier != null) {
            claim.capture.flush(barrier);
        } else {
            claim.capture.onSuccess(func, qe);
        }
    }

    /** Another session's statement under an open key: refused, said once in the log and in the key's result. */
    private void refuseForeign(Claim claim, String key) {
        if (claim.foreignSaid) {
            return;
        }
        claim.foreignSaid = true;
        say("a statement of another Spark Connect session under the key " + shown(key) + " is refused: a key "
                + "belongs to the session that first used it");
        claim.capture.warn("another Spark Connect session ran statements under this key: they were refused, "
                + "not captured (a key belongs to the session that first used it)");
    }

    /** Why the key's directory under a local base cannot be written safely; null when it can. */
    private String unsafeDirectory(String key) {
        if (localBase == null) {
            return null;
        }
        Path path = localBase;
        for (String part : key.split("/")) {
            path = path.resolve(part);
            if (Files.isSymbolicLink(path)) {
                return "its directory under the base holds a symbolic link (" + localBase.relativize(path)
                        + "): the server writes only inside the base";
            }
        }
        return null;
    }

    /** At the cap, the least recently used key is expired (its files removed) before a new one opens. */
    private void makeRoom() {
        while (open.size() >= maxKeys) {
            Iterator<Map.Entry<String, Claim>> eldest = open.entrySet().iterator();
            Map.Entry<String, Claim> entry = eldest.next();
            eldest.remove();
            end(entry.getKey(), entry.getValue(), "the capture of this key was expired: the Spark Connect server "
                    + "holds at most " + maxKeys + " open keys (spark.airflow.lineage.connect.maxKeys) and this one "
                    + "was the least recently used: earlier writes are missing");
        }
    }

    /** Keys with no statement for the idle timeout: expired, their files removed. */
    private void expireIdle() {
        try {
            long now = System.nanoTime();
            List<Map.Entry<String, Claim>> idle = new ArrayList<>();
            synchronized (this) {
                Iterator<Map.Entry<String, Claim>> it = open.entrySet().iterator();
                while (it.hasNext()) {
                    Map.Entry<String, Claim> entry = it.next();
                    if (TimeUnit.NANOSECONDS.toMillis(now - entry.getValue().lastUsed) >= idleMillis) {
                        it.remove();
                        idle.add(entry);
                    }
                }
                for (Map.Entry<String, Claim> entry : idle) {
                    end(entry.getKey(), entry.getValue(), "the capture of this key expired after "
                            + TimeUnit.MILLISECONDS.toSeconds(idleMillis) + " s without a statement "
                            + "(spark.airflow.lineage.connect.idleTimeout): earlier writes are missing");
                }
            }
        } catch (Throwable e) {  // the sweeper must keep running
            System.err.println("[airflow-lineage] warning: expiring idle Spark Connect keys failed: " + e);
        }
    }

    /** Under {@code this}: the key's capture is dropped with its files; its barrier, if it comes, says why. */
    private void end(String key, Claim claim, String why) {
        sessions.values().removeIf(key::equals);
        ended.put(key, new Ended(claim.owner, why));
        claim.capture.discard();
    }

    /** The value of a {@code SET <conf>=<value>} command; null for any other plan. */
    private static String setValue(Object plan, String conf) {
        if (!"SetCommand".equals(Scala.simpleName(plan))) {
            return null;
        }
        Object pair = Scala.option(Scala.call(plan, "kv"));
        if (pair == null || !conf.equals(String.valueOf(Scala.call(pair, "_1")))) {
            return null;
        }
        Object value = Scala.option(Scala.call(pair, "_2"));
        return value == null ? "" : String.valueOf(value);
    }

    private static String confValue(Object session, String conf) {
        Object value = Scala.option(Scala.call(Scala.call(session, "conf"), "getOption", conf));
        return value == null ? null : String.valueOf(value);
    }

    /** A client's key as the log shows it: printable, and cut (a key may be a megabyte long). */
    private static String shown(String key) {
        String printable = key.replaceAll("[^\\x20-\\x7e]", "?");
        if (printable.length() <= SHOWN_KEY_CHARS) {
            return printable;
        }
        return printable.substring(0, SHOWN_KEY_CHARS) + "... (" + key.length() + " characters)";
    }

    /** Whether {@code key} is refused for the first time (as far as a bounded memory of them goes). */
    private synchronized boolean firstRefusal(String key) {
        if (refusedKeys.size() >= REFUSALS_REMEMBERED) {
            refusedKeys.clear();
        }
        return refusedKeys.add(key.hashCode());
    }

    /** One line on the server's stderr, at most {@code MAX_LOG_LINES} in the server's life. */
    private void say(String message) {
        synchronized (this) {
            if (logLines > MAX_LOG_LINES) {
                return;
            }
            logLines++;
            if (logLines > MAX_LOG_LINES) {
                message = "further refused Spark Connect keys and sessions are not logged";
            }
        }
        System.err.println("[airflow-lineage] warning: " + message);
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
        List<Capture> left;
        synchronized (this) {
            left = new ArrayList<>();
            for (Claim claim : open.values()) {
                left.add(claim.capture);
            }
            open.clear();
            sessions.clear();
        }
        sweeper.shutdownNow();
        for (Capture capture : left) {
            capture.warn("the Spark Connect server stopped before the client's barrier: later writes are missing");
            capture.finish();
        }
        BY_BASE.remove(base, this);
    }
}
