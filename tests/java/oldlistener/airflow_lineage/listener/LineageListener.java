package airflow_lineage.listener;

/** An old copy of the listener class, as a user's fat jar once shaded it in: no QueryExecutionListener, so Spark
 * refuses it when it is loaded instead of the shipped one. */
public class LineageListener {
}
