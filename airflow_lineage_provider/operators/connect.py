"""Column lineage of a Spark Connect session a task builds by hand (a ``PythonOperator``, ``SparkConnectHook``).

    from airflow_lineage_provider.operators.connect import column_lineage

    def load(**context):
        spark = SparkSession.builder.remote("sc://spark-connect:15002").create()
        with column_lineage(spark, context, dump_base="/shared/lineage"):
            spark.sql("INSERT INTO dwd.users SELECT ...")
            spark.table("dwd.users").write.saveAsTable("dws.users")

The Connect server runs the provider's JVM listener with ``spark.airflow.lineage.connect.base`` (what
``airflow-lineage connect-server-conf`` prints); ``dump_base`` is that base as this worker reaches it.
On entering, the session gets this task try's key; on a clean exit the barrier runs, the server's
records are read and reported as every task of ours reports them (``operators/reporting.py``: log,
XCom ``column_lineage``, asset events). An exception in the block is the task's, untouched: nothing is
reported. Lineage never fails the task: a server without the listener, or records out of reach, is one
warning line and an empty document saying why (``docs/spark-connect.md``).
"""

from __future__ import annotations

import logging
import uuid
from contextlib import contextmanager
from typing import Any, Iterator

from airflow_lineage_provider.hooks import spark_connect
from airflow_lineage_provider.hooks.jvm_listener import connect_key
from airflow_lineage_provider.operators.reporting import LineageReporter

log = logging.getLogger(__name__)


def task_key(context: Any) -> str:
    """The key of this task try: ``<dag>/<task>/<run>/<try>-<nonce>``. The try keeps a retry's lineage its
    own; the nonce keeps a key fresh when a try number comes again (a cleared task, a test run), so no
    run ever reads another's records."""
    ti = context["ti"]
    return connect_key(ti.dag_id, ti.task_id, ti.run_id, f"{ti.try_number}-{uuid.uuid4().hex[:8]}")


@contextmanager
def column_lineage(spark: Any, context: Any, *, dump_base: str,
                   timeout: float = spark_connect.DEFAULT_TIMEOUT_S) -> Iterator[LineageReporter]:
    """Capture the writes ``spark`` (a Spark Connect session) makes in the block, then report them for the
    running task of ``context``. Yields the task's ``LineageReporter`` (its ``lineage`` is set on exit)."""
    reporter = LineageReporter()
    try:
        key: str | None = task_key(context)
        spark_connect.start(spark, key)
    except Exception as e:  # noqa: BLE001 - lineage never breaks the job
        log.warning("No plan column lineage: the Spark Connect session's lineage key could not be set: %s", e)
        key = None
    try:
        yield reporter
    except BaseException as e:
        reporter.error = e  # the FAIL event's; the records of a failed block are not reported
        if key is not None:
            spark_connect.stop(spark)
        raise
    if key is None:
        return
    try:
        result = spark_connect.finish(spark, dump_base, key, timeout=timeout)
        reporter.report(context.get("task"), context, reporter.extract(result))
    except Exception as e:  # noqa: BLE001 - lineage never breaks the job
        log.warning("Column lineage of the Spark Connect session could not be reported: %s", e, exc_info=True)
