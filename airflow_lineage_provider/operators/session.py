"""Column lineage of a ``SparkSession`` a task holds: ``@task.pyspark`` and ``PySparkOperator`` tasks (through
``operators/stock.py``) and a session a task builds by hand, e.g. in a ``PythonOperator``:

    from airflow_lineage_provider.operators.session import column_lineage

    def load(**context):
        spark = SparkSession.builder.remote("sc://spark-connect:15002").create()
        with column_lineage(spark, context):
            spark.sql("INSERT INTO dwd.users SELECT ...")
            spark.table("dwd.users").write.saveAsTable("dws.users")

A Spark Connect session's writes are captured by the server's JVM listener (its admin starts it with what
``airflow-lineage connect-server-conf`` prints); a classic session's in this process
(``hooks/session_capture.py``). On entering, the capture begins under this task try's key; on a clean exit
the records are read and reported as every task of ours reports them (``operators/reporting.py``: log,
XCom ``column_lineage``, asset events, OpenLineage through the task's reporter). An exception in the block
is the task's, untouched: nothing is reported. Lineage never fails the task: a server without the
listener, or records out of reach, is one warning line, and the XCom document says why it is empty.
"""

from __future__ import annotations

import logging
import uuid
from contextlib import contextmanager
from typing import Any, Iterator

from airflow_lineage_provider.hooks import session_capture, spark_connect
from airflow_lineage_provider.hooks.jvm_listener import connect_key
from airflow_lineage_provider.job.dump import JobResult
from airflow_lineage_provider.lineage.model import LineageReport
from airflow_lineage_provider.operators.reporting import LineageReporter

log = logging.getLogger(__name__)


def task_key(context: Any) -> str:
    """The key of this task try: ``<dag>/<task>/<run>/<try>-<nonce>``. The try keeps a retry's lineage its
    own; the nonce keeps a key fresh when a try number comes again (a cleared task, a test run), so no
    run ever reads another's records."""
    ti = context["ti"]
    return connect_key(ti.dag_id, ti.task_id, ti.run_id, f"{ti.try_number}-{uuid.uuid4().hex[:8]}")


@contextmanager
def column_lineage(spark: Any, context: Any, *, dump_base: str | None = None,
                   timeout: float = spark_connect.DEFAULT_TIMEOUT_S,
                   reporter: LineageReporter | None = None) -> Iterator[LineageReporter]:
    """Capture the writes ``spark`` makes in the block, then report them for the running task of
    ``context``. ``dump_base``: where this worker reads a Connect server's records (default:
    ``[column_lineage] connect_dump_base``, else where the server writes them). Yields the task's
    ``LineageReporter`` (its ``lineage`` is set on exit)."""
    reporter = reporter or LineageReporter()
    capture, why = None, ""
    try:
        if dump_base is None:
            from airflow_lineage_provider import conf

            dump_base = conf.connect_dump_base()
        capture, why = session_capture.begin(spark, task_key(context), dump_base=dump_base, timeout=timeout)
    except Exception as e:  # noqa: BLE001 - lineage never breaks the job
        why = f"the capture could not start ({type(e).__name__}: {e})"
    if capture is None:
        log.warning("No plan column lineage for this task: %s", why)
    texts = SqlTexts(spark)
    try:
        yield reporter
    except BaseException as e:
        reporter.error = e  # the FAIL event's; the records of a failed block are not reported
        texts.restore()
        if capture is not None:
            _quietly(capture.abandon)
        raise
    texts.restore()
    try:
        result = capture.end() if capture is not None else JobResult(warnings=[f"no plan lineage: {why}"])
        reporter.report(context.get("task"), context, _lineage(reporter, result, texts.texts, context))
    except Exception as e:  # noqa: BLE001 - lineage never breaks the job
        log.warning("Column lineage of the Spark session could not be reported: %s", e, exc_info=True)


class SqlTexts:
    """The text of every ``spark.sql(...)`` the block runs: where no plan is captured (a Connect server
    without the listener, records out of reach) its static lineage stands in, saying why."""

    def __init__(self, spark: Any) -> None:
        self.texts: list[str] = []
        self._spark: Any = None
        try:
            run = spark.sql

            def sql(query: Any, *args: Any, **kwargs: Any) -> Any:
                if isinstance(query, str):
                    self.texts.append(query.strip().rstrip(";"))
                return run(query, *args, **kwargs)

            spark.sql = sql  # this session object only, for the block
            self._spark = spark
        except Exception as e:  # noqa: BLE001 - lineage never breaks the job
            log.debug("spark.sql cannot be watched: %s", e)

    def restore(self) -> None:
        if self._spark is not None:
            _quietly(lambda: delattr(self._spark, "sql"))
            self._spark = None


def _lineage(reporter: LineageReporter, result: JobResult, texts: list[str], context: Any) -> LineageReport:
    """The plan's lineage; where no plan was captured and the block ran SQL, the SQL's static lineage."""
    from airflow_lineage_provider.lineage.redact import scrub
    from airflow_lineage_provider.lineage.sql.static import TaskSql, default_cache_path

    ti = context["ti"]
    static = TaskSql(";\n".join(texts), cache_path=default_cache_path(ti.dag_id, ti.task_id)) if texts else None
    if static is not None and not result.records and result.warnings:
        reporter.sql = scrub(static.sql)  # the SQL job facet of the events
        try:
            return static.fallback("; ".join(w.removeprefix("no plan lineage: ") for w in result.warnings))
        except Exception as e:  # noqa: BLE001 - lineage never breaks the job
            log.warning("The static lineage of the task's SQL failed: %s", e, exc_info=True)
    if static is not None and result.records:
        static.remember(result.records)  # a later run without a plan reads these schemas
    return reporter.extract(result)


def _quietly(step: Any) -> None:
    try:
        step()
    except Exception as e:  # noqa: BLE001 - lineage never breaks the job
        log.debug("The lineage capture could not be stopped: %s", e)
