"""Run a user's PySpark application, unchanged, under the lineage listener.

The driver makes the SparkSession, installs the capture, then runs the user's script
with ``runpy`` as ``__main__`` (``sys.argv`` = the script and its arguments). The
script's own ``SparkSession.builder.getOrCreate()`` returns that session, so every
DataFrame write (``saveAsTable``, ``insertInto``, ``write.parquet``, ``write.jdbc``,
``writeTo``), every SQL write and every streaming query is seen. Captured writes are
described when the script ends, or earlier when it calls ``spark.stop()`` itself (the
JVM must still be up). Imports only pyspark, the standard library and the job package.
"""

from __future__ import annotations

import os
import runpy
import sys
import threading
import traceback
from typing import Any, Callable

from airflow_lineage_provider.job.capture import PlanCapture, digested
from airflow_lineage_provider.job.dump import DumpWriter, JobResult
from airflow_lineage_provider.job.errors import spark_message
from airflow_lineage_provider.lineage.plan import record as raw


class _StreamListener:
    """Remembers every streaming query the application starts (its plan is read at the end)."""

    def __init__(self, runner: ApplicationRunner) -> None:
        self.runner = runner

    def started(self, query_id: str) -> None:
        try:
            query = self.runner.spark._jsparkSession.streams().get(query_id)
            if query is not None:
                self.runner.remember_stream(query)
        except Exception as e:  # noqa: BLE001 - lineage never breaks the job
            self.runner.capture.warnings.append(f"streaming query {query_id} not captured: {e}")


def _python_stream_listener(target: _StreamListener) -> Any:
    from pyspark.sql.streaming.listener import StreamingQueryListener

    class Listener(StreamingQueryListener):
        def onQueryStarted(self, event: Any) -> None:  # noqa: N802
            target.started(str(event.id))

        def onQueryProgress(self, event: Any) -> None:  # noqa: N802
            pass

        def onQueryIdle(self, event: Any) -> None:  # noqa: N802
            pass

        def onQueryTerminated(self, event: Any) -> None:  # noqa: N802
            pass

    return Listener()


class ApplicationRunner:
    """Runs one PySpark script and writes the dump of its writes."""

    def __init__(self, spark: Any, writer: DumpWriter, *, capture: bool = True) -> None:
        self.spark = spark
        self.writer = writer
        self.capture_plans = capture
        self.capture = PlanCapture(spark)
        self._streams: list[Any] = []
        self._streams_seen: set[str] = set()
        self._records = 0
        self._collected = False
        self._lock = threading.Lock()
        self._restore: list[Callable[[], None]] = []

    def remember_stream(self, query: Any) -> None:
        key = str(query.id().toString())
        with self._lock:
            if key not in self._streams_seen:
                self._streams_seen.add(key)
                self._streams.append(query)

    # -- running -------------------------------------------------------------------

    def run(self, app: str, args: list[str]) -> int:
        """Run ``app`` as ``__main__``; 0 on success. The error, if any, goes to the dump."""
        error: dict[str, Any] | None = None
        self.start()
        saved_argv, saved_path = sys.argv[:], sys.path[:]
        sys.argv = [app, *args]
        sys.path.insert(0, os.path.dirname(os.path.abspath(app)))
        print(f"[airflow-lineage] running application {app} {' '.join(args)}".rstrip(), flush=True)
        try:
            runpy.run_path(app, run_name="__main__")
        except SystemExit as e:
            if e.code not in (None, 0):
                error = {"message": f"The application {os.path.basename(app)} exited with code {e.code}",
                         "exit_code": e.code if isinstance(e.code, int) else 1}
        except BaseException as e:  # noqa: BLE001 - the user's own error, reported as such
            text = traceback.format_exc()
            print(text, file=sys.stderr, flush=True)
            error = {"message": f"The application {os.path.basename(app)} failed: {type(e).__name__}: "
                                f"{spark_message(e)}",
                     "exception": type(e).__name__, "traceback": text[-8000:]}
        finally:
            sys.argv, sys.path[:] = saved_argv, saved_path
        self.finish(app, error)
        return 1 if error else 0

    # -- a session held by its caller ----------------------------------------------------

    def start(self) -> None:
        """Capture the session's writes from now on (an application's run, or a task's own function on a
        session it holds: ``hooks/session_capture.py``)."""
        if self.capture_plans:
            self._install()

    def finish(self, application: str, error: dict[str, Any] | None = None) -> JobResult:
        """Describe what was captured (unless the run failed), stop capturing and write the dump's result."""
        if self.capture_plans and error is None:
            self.collect()
        self._uninstall()
        result = JobResult(error=error, errors=[error] if error else [], warnings=self.capture.warnings,
                           spark_version=self._version(), application=application, writes=self._records)
        self.writer.finish(result)
        return result

    def abandon(self) -> None:
        """Stop capturing without describing anything (the caller's function failed: nothing is reported)."""
        self._uninstall()
        self.capture.uninstall()

    def _version(self) -> str | None:
        try:
            return self.spark.version
        except Exception:  # noqa: BLE001 - stopped by the application
            return None

    def collect(self) -> None:
        """Describe every captured write and streaming query (the JVM must be up)."""
        with self._lock:
            if self._collected:
                return
            self._collected = True
        try:
            writes = self.capture.drain()
            # Nested events are already folded, and two writes of one table are two writes: one record each.
            records = self.capture.describe_each(writes, sql_text=True) if writes else []
            for query in self._streams:
                try:
                    records += self.capture.describe_each([(None, query.streamingQuery().logicalPlan())],
                                                          sql_text=True)
                except Exception as e:  # noqa: BLE001 - lineage never breaks the job
                    self.capture.warnings.append(f"streaming query {query.name()} not captured: {e}")
        except Exception as e:  # noqa: BLE001 - lineage never breaks the job
            self.capture.warnings.append(f"capture failed: {e}")
            return
        finally:
            self.capture.uninstall()
        for record in records:
            try:
                # The SQL of a write made with spark.sql, else "" (its credentials are removed where it is read).
                raw.place(record, index=self._records, sql=str(record.get(raw.SQL) or ""), line=None)
                self.writer.record(digested(record, self.capture.warnings))
            except Exception as e:  # noqa: BLE001 - lineage never breaks the job
                self.capture.warnings.append(f"a captured write could not be dumped: {e.__class__.__name__}: {e}")
            self._records += 1

    # -- hooks ---------------------------------------------------------------------

    def _install(self) -> None:
        from pyspark import SparkContext
        from pyspark.sql import SparkSession

        self.capture.install()
        try:
            listener = _python_stream_listener(_StreamListener(self))
            self.spark.streams.addListener(listener)
            # A session that outlives the run (a task's own) keeps no listener of ours.
            self._restore.append(lambda: self.spark.streams.removeListener(listener))
        except Exception as e:  # noqa: BLE001 - lineage never breaks the job
            self.capture.warnings.append(f"streaming queries will not be captured: {e}")
        runner = self

        # The application may stop Spark itself: describe what it wrote while the JVM is up.
        for cls in (SparkSession, SparkContext):
            original = cls.stop

            def stop(this: Any, *a: Any, _original: Any = original, **k: Any) -> Any:
                if not runner._collected:
                    runner.collect()
                return _original(this, *a, **k)

            cls.stop = stop  # type: ignore[method-assign]
            self._restore.append(lambda cls=cls, original=original: setattr(cls, "stop", original))

    def _uninstall(self) -> None:
        for restore in self._restore:
            try:
                restore()
            except Exception:  # noqa: BLE001 - the session is stopped already: nothing left to remove
                pass
        self._restore.clear()
