package airflow_lineage.listener;

import org.apache.spark.SparkConf;
import org.apache.spark.sql.streaming.StreamingQueryListener;

/**
 * The streaming queries an application starts: their sinks are writes too, and no query execution
 * event reports them. Registered beside {@link LineageListener} with
 * {@code spark.sql.streaming.streamingQueryListeners}; a query's plan is described when it ends, or when
 * the application does, as the Python driver describes its streams ({@code job/app.py}).
 */
public final class LineageStreamListener extends StreamingQueryListener {
    private final Capture capture;

    public LineageStreamListener(SparkConf conf) {
        // On a Spark Connect server (a base, no dump) streams are not captured yet: no key reaches this event.
        boolean connect = conf != null && !conf.get(LineageListener.CONNECT_BASE_CONF, "").isEmpty();
        this.capture = connect ? null : LineageListener.start(conf);
    }

    @Override
    public void onQueryStarted(QueryStartedEvent event) {
        if (capture != null) {
            try {
                capture.streamStarted(String.valueOf(event.id()));
            } catch (Throwable e) {  // lineage never breaks the job
                capture.warn("streaming query " + event.id() + " not captured: " + e);
            }
        }
    }

    @Override
    public void onQueryProgress(QueryProgressEvent event) {
        // Progress says nothing of where a query reads and writes.
    }

    @Override
    public void onQueryTerminated(QueryTerminatedEvent event) {
        if (capture != null) {
            try {
                capture.streamEnded(String.valueOf(event.id()));
            } catch (Throwable e) {  // lineage never breaks the job
                capture.warn("streaming query " + event.id() + " not captured: " + e);
            }
        }
    }
}
