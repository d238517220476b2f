"""The capture of a ``SparkSession`` a task holds in its own process: ``@task.pyspark``, ``PySparkOperator``,
a session built by hand (``operators/session.py``).

Two kinds of session, two producers of the same dump (``docs/spark-connect.md``):

- a **Spark Connect** session has no JVM here: the server's JVM listener writes the records under the base
  its admin set, in this task's key (``spark_connect``);
- a **classic** session (``local[*]``, ``spark://``, YARN, with the full pyspark) has this process as its
  driver: our driver's py4j capture (``job/app.py``) runs here, around the task's function, into a
  temporary directory.

Either way the caller gets a ``JobResult`` to report like every other task's. No Airflow import: the
operator side reads the options and the task's context.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from typing import Any, Protocol

from airflow_lineage_provider.hooks import spark_connect
from airflow_lineage_provider.job.dump import JobResult, read_dump

log = logging.getLogger(__name__)

_ABANDON_S = 10.0


class SessionCapture(Protocol):
    def end(self) -> JobResult:
        """What the session wrote since the capture began (the session must still be up)."""

    def abandon(self) -> None:
        """Stop capturing; nothing is read (the task's function failed: nothing is reported)."""


def is_connect(spark: Any) -> bool:
    """Whether ``spark`` is a Spark Connect client's session (``pyspark.sql.connect``), without importing
    the Connect client (it needs grpc, which a classic-only install may lack)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def begin(spark: Any, key: str, *, dump_base: str | None = None,
          timeout: float = spark_connect.DEFAULT_TIMEOUT_S) -> tuple[SessionCapture | None, str]:
    """Capture ``spark``'s writes from now on, or ``(None, why)`` when they cannot be. ``key``: the task
    try's name on a Connect server; ``dump_base``: where this worker reads that server's records (default:
    where the server says it writes them). Never raises."""
    try:
        if is_connect(spark):
            base, why = spark_connect.server_base(spark, timeout=timeout)
            if base is None:
                return None, why
            capture: SessionCapture = _ConnectCapture(spark, key, dump_base or base, timeout)
        elif hasattr(spark, "_jsparkSession"):
            capture = _InProcessCapture(spark, key)
        else:
            return None, f"{type(spark).__module__}.{type(spark).__name__} is not a SparkSession"
        return capture, ""
    except Exception as e:  # noqa: BLE001 - lineage never breaks the job
        return None, f"the capture could not start ({type(e).__name__}: {e})"


class _ConnectCapture:
    def __init__(self, spark: Any, key: str, base: str, timeout: float) -> None:
        self.spark, self.key, self.base, self.timeout = spark, key, base, timeout
        self.secret = spark_connect.start(spark, key, timeout=timeout)
        log.info("Column lineage: the Spark Connect server captures this task's writes under key %s (read from %s)",
                 spark_connect.shown_key(key), base)

    def end(self) -> JobResult:
        return spark_connect.finish(self.spark, self.base, self.key, secret=self.secret, timeout=self.timeout)

    def abandon(self) -> None:
        # The barrier still runs: the server ends the key's capture (its files are not left to expire) and
        # the records it writes are removed unread. Bounded: a failing task is not kept waiting for lineage.
        spark_connect.finish(self.spark, self.base, self.key, secret=self.secret,
                             timeout=min(self.timeout, _ABANDON_S))


class _InProcessCapture:
    """Our Python driver's capture, on a session whose driver is this process."""

    def __init__(self, spark: Any, label: str) -> None:
        from airflow_lineage_provider.job.app import ApplicationRunner
        from airflow_lineage_provider.job.dump import DumpWriter

        self.label = label
        self.directory = tempfile.mkdtemp(prefix="airflow-lineage-session-")
        self.runner = ApplicationRunner(spark, DumpWriter(self.directory))
        try:
            self.runner.start()
        except BaseException:
            self.runner.writer.close()
            shutil.rmtree(self.directory, ignore_errors=True)
            raise

    def end(self) -> JobResult:
        try:
            self.runner.finish(self.label)
            return read_dump(self.directory)
        finally:
            shutil.rmtree(self.directory, ignore_errors=True)

    def abandon(self) -> None:
        try:
            self.runner.abandon()
            self.runner.writer.close()
        finally:
            shutil.rmtree(self.directory, ignore_errors=True)
