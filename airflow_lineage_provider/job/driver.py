"""The Spark job's entry point: ``spark-submit driver.py --dump DIR [--sql-file F | --app SCRIPT.py]``.

Runs a SQL script (``job/script.py``) or a user's PySpark application
(``job/app.py``) under the plan capture and leaves the dump for the hook.
``DIR`` may be a URI on any Hadoop-compatible file system (``file:///shared/x``,
``hdfs://nn/x``, ``s3a://bucket/x``): the dump is then written, and the script
read, through Spark's Hadoop FileSystem API. It imports only pyspark and the
standard library (never Airflow): it runs wherever Spark runs.
"""

from __future__ import annotations

import os
import sys
import traceback
from typing import Any


def _import_spark_submits_pyspark() -> None:
    """Import the pyspark of the ``spark-submit`` running this file, from its compiled modules when it has them.

    spark-submit puts its SPARK_HOME's ``python/lib/pyspark.zip`` first on PYTHONPATH. The directory put first
    below may be a worker's site-packages holding its own pyspark, of another release than the cluster's
    spark-submit (a Spark 3.5 cluster, a 4.2 worker), whose Python half does not speak to that Spark's JVM: so
    pyspark is imported first. A pip-installed Spark's SPARK_HOME is the pyspark package itself, the zip's own
    release: its modules are taken from there, compiled once by pip, where Python would compile the zip's again
    in every job (0.7 CPU-s, docs/benchmarks.md).
    """
    import importlib.util

    home = os.environ.get("SPARK_HOME", "")
    package = os.path.join(home, "__init__.py")
    zipped = os.path.join(home, "python", "lib", "pyspark.zip")
    led = any(os.path.realpath(entry) == os.path.realpath(zipped) for entry in sys.path if entry.endswith(".zip"))
    if home and os.path.isfile(package) and led and "pyspark" not in sys.modules:
        spec = importlib.util.spec_from_file_location("pyspark", package, submodule_search_locations=[home])
        if spec is not None and spec.loader is not None:
            sys.modules["pyspark"] = importlib.util.module_from_spec(spec)
            try:
                spec.loader.exec_module(sys.modules["pyspark"])
                return
            except Exception:  # noqa: BLE001 - the zip's pyspark below, as spark-submit meant
                for name in [n for n in sys.modules if n == "pyspark" or n.startswith("pyspark.")]:
                    del sys.modules[name]
    try:
        import pyspark  # noqa: F401
    except ImportError:  # not under spark-submit: the import below says what is missing
        pass


if __package__ in (None, ""):  # run as a file by spark-submit
    _import_spark_submits_pyspark()
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from airflow_lineage_provider.job import command, errors  # noqa: E402
from airflow_lineage_provider.job.dump import SCRIPT, DumpWriter, HadoopFiles, JobResult  # noqa: E402
from airflow_lineage_provider.lineage.naming import is_uri  # noqa: E402

# The runners bring the plan capture. Should it fail to load, the user's job still runs, without it:
# lineage never stops Spark.
try:
    from airflow_lineage_provider.job.app import ApplicationRunner
    from airflow_lineage_provider.job.script import ScriptRunner
    CAPTURE_UNAVAILABLE: str | None = None
except Exception as _error:  # noqa: BLE001 - any import failure of the capture
    ApplicationRunner = ScriptRunner = None  # type: ignore[assignment,misc]
    CAPTURE_UNAVAILABLE = f"{errors.CAPTURE_UNAVAILABLE} ({type(_error).__name__}: {_error}): " \
                          "the job ran without it, and no plan lineage was captured"


def main(argv: list[str] | None = None) -> int:
    args = command.parse(sys.argv[1:] if argv is None else argv, __doc__)

    from pyspark import SparkConf, SparkContext
    from pyspark.sql import SparkSession

    SparkContext._ensure_initialized()  # the gateway, so that SparkConf() sees spark-submit's settings
    builder = SparkSession.builder
    if not SparkConf().contains("spark.app.name"):  # spark-submit --name wins (the task's name)
        builder = builder.appName("airflow-lineage")
    if os.environ.get("AIRFLOW_LINEAGE_HIVE") == "1":
        builder = builder.enableHiveSupport()
    spark = builder.getOrCreate()
    files = HadoopFiles(spark, args.dump) if is_uri(args.dump) else None
    if args.app:
        return _run_application(spark, args, files)
    try:
        if args.sql_file:
            script = files.read_uri(args.sql_file) if files and is_uri(args.sql_file) else _read(args.sql_file)
        else:
            script = files.read_text(SCRIPT) if files else _read(os.path.join(args.dump, SCRIPT))
        if ScriptRunner is None:
            return _run_without_capture(spark, script, DumpWriter(args.dump, files))
        return ScriptRunner(spark, args.dump, dry_run=args.dry_run, keep_going=args.keep_going,
                            capture=not args.no_capture, files=files).run(script)
    except SystemExit as e:
        return int(e.code or 0)
    except Exception:  # noqa: BLE001 - the traceback goes to the log, the exit code to the hook
        traceback.print_exc()
        return 2
    finally:
        spark.stop()


def _run_without_capture(spark: Any, script: str, writer: DumpWriter) -> int:
    """The script's statements, one by one, as Spark runs them, with no capture: what the job does
    when the capture cannot be loaded. A failing statement fails the job with Spark's message."""
    from airflow_lineage_provider.job.errors import StatementError, spark_message
    from airflow_lineage_provider.lineage.statements import split_statements

    print(f"[airflow-lineage] warning: {CAPTURE_UNAVAILABLE}", file=sys.stderr, flush=True)
    statements = split_statements(script)
    status: list[dict[str, Any]] = []
    for stmt in statements:
        try:
            spark.sql(stmt.sql).collect()
            status.append({"index": stmt.index, "line": stmt.line, "status": "ok"})
        except Exception as exc:  # noqa: BLE001 - reported with its statement, as the runner does
            error = StatementError(stmt, len(statements), "run", spark_message(exc))
            print(str(error), file=sys.stderr, flush=True)
            status.append({"index": stmt.index, "line": stmt.line, "status": "failed", "error": error.to_dict()})
            writer.finish(JobResult(statements=status, error=error.to_dict(), errors=[error.to_dict()],
                                    warnings=[CAPTURE_UNAVAILABLE], spark_version=spark.version))
            return 1
    writer.finish(JobResult(statements=status, warnings=[CAPTURE_UNAVAILABLE], spark_version=spark.version))
    return 0


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def _run_application(spark: Any, args: command.DriverArgs, files: HadoopFiles | None) -> int:
    app = args.app
    if not os.path.exists(app) and is_uri(app):
        # The application lives on a shared file system (cluster deploy mode): fetch it.
        import tempfile

        reader = files or HadoopFiles(spark, os.path.dirname(app))
        local_dir = tempfile.mkdtemp(prefix="airflow-lineage-app-")
        local = os.path.join(local_dir, os.path.basename(app.rstrip("/")))
        with open(local, "w", encoding="utf-8") as f:
            f.write(reader.read_uri(app))
        app = local
    writer = DumpWriter(args.dump, files)
    if not os.path.isfile(app):
        message = f"The application {args.app} does not exist (or is not a file) where the Spark driver runs"
        print(message, file=sys.stderr, flush=True)
        writer.finish(JobResult(error={"message": message}, errors=[{"message": message}],
                                spark_version=spark.version, application=args.app))
        spark.stop()
        return 1
    if ApplicationRunner is None:  # the capture cannot be loaded: the application runs as spark-submit would
        import runpy

        print(f"[airflow-lineage] warning: {CAPTURE_UNAVAILABLE}", file=sys.stderr, flush=True)
        sys.argv = [app, *args.app_args]
        runpy.run_path(app, run_name="__main__")
        writer.finish(JobResult(warnings=[CAPTURE_UNAVAILABLE], spark_version=spark.version, application=args.app))
        return 0
    try:
        return ApplicationRunner(spark, writer, capture=not args.no_capture).run(app, list(args.app_args))
    finally:
        try:
            spark.stop()
        except Exception:  # noqa: BLE001 - the application stopped it already
            pass


if __name__ == "__main__":
    sys.exit(main())
