"""The Spark job: run a SQL script statement by statement and dump every write's plan.

Submitted with ``spark-submit driver.py --sql-file F --dump DIR``, or with
``--app SCRIPT.py [-- ARGS...]`` to run a PySpark application under the capture
(``job/app.py``). ``DIR`` may be a URI on any Hadoop-compatible file system
(``file:///shared/x``, ``hdfs://nn/x``, ``s3a://bucket/x``): the dump is then written,
and the script read, through Spark's Hadoop FileSystem API. It imports only
pyspark and the standard library (never Airflow): it runs wherever Spark runs.
The whole script is parsed before anything runs, so a syntax error in statement
3 fails the job before statements 1 and 2 have written anything.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from typing import Any

if __package__ in (None, ""):  # run as a file by spark-submit
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from airflow_lineage_provider.job.capture import PlanCapture, digested, is_write, simple_name  # noqa: E402
from airflow_lineage_provider.job.dump import SCRIPT, DumpWriter, HadoopFiles, is_uri  # noqa: E402
from airflow_lineage_provider.job.statements import Statement, split_statements  # noqa: E402

# Parsed plans that are writes: in a dry run they are analyzed, never executed.
WRITE_STATEMENTS = frozenset({
    "InsertIntoStatement", "CreateTableAsSelect", "ReplaceTableAsSelect", "InsertIntoDir",
    "OverwriteByExpression", "OverwritePartitionsDynamic", "AppendData", "MergeIntoTable",
    "UpdateTable", "DeleteFromTable", "CreateTableAsSelectStatement",
})
SHOW_ROWS = 20


class StatementError(Exception):
    """A statement failed: says which one, at which line of the script, and Spark's own message."""

    def __init__(self, stmt: Statement, total: int, phase: str, message: str) -> None:
        self.stmt = stmt
        self.phase = phase
        self.spark_message = message
        offset = parse_line_offset(message) if phase == "parse" else None
        self.line = stmt.line + (offset - 1 if offset else 0)
        what = "has a syntax error" if phase == "parse" else "failed"
        super().__init__(
            f"Statement {stmt.index + 1} of {total} {what} at line {self.line} of the script "
            f"({stmt.first_line[:80]!r}): {message}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "statement": self.stmt.index + 1,
            "index": self.stmt.index,
            "line": self.line,
            "first_line": self.stmt.first_line,
            "phase": self.phase,
            "spark_message": self.spark_message,
            "message": str(self),
        }


def spark_message(exc: BaseException) -> str:
    """Spark's own error text (with its line/position and SQL excerpt), without Java stacks."""
    text = str(exc).strip()
    if not text:
        getter = getattr(exc, "getMessage", None)
        text = str(getter()).strip() if callable(getter) else ""
    return text.split("\n\nJVM stacktrace:")[0] or exc.__class__.__name__


def parse_line_offset(message: str) -> int | None:
    """The 1-based line inside the statement that a Spark ParseException names."""
    m = re.search(r"\(line (\d+), pos \d+\)", message)
    return int(m.group(1)) if m else None


class Driver:
    def __init__(self, spark: Any, dump_dir: str, *, dry_run: bool, keep_going: bool,
                 capture: bool = True, files: HadoopFiles | None = None) -> None:
        self.spark = spark
        self.writer = DumpWriter(dump_dir, files)
        self.dry_run = dry_run
        self.keep_going = keep_going
        self.capture_plans = capture
        self.capture = PlanCapture(spark)
        self.status: list[dict[str, Any]] = []
        self.errors: list[dict[str, Any]] = []
        # One worker describes plans (JVM toJSON, catalog look-ups) while Spark runs on.
        self._describer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lineage-describe")

    def run(self, script: str) -> int:
        started = time.perf_counter()
        statements = split_statements(script)
        parsed = self._parse_all(statements)
        if not self.dry_run and self.capture_plans:
            self.capture.install()
        for stmt in statements:
            entry: dict[str, Any] = {"index": stmt.index, "line": stmt.line, "first_line": stmt.first_line}
            self.status.append(entry)
            if stmt.index in parsed.errors:
                entry.update(status="failed", error=parsed.errors[stmt.index].to_dict())
                continue
            try:
                kind = self._run_one(stmt, parsed.plans[stmt.index], len(statements))
                entry.update(status="ok", kind=kind)
            except StatementError as e:
                entry.update(status="failed", error=e.to_dict())
                self.errors.append(e.to_dict())
                print(str(e), file=sys.stderr, flush=True)
                if not self.keep_going:
                    break
        for rest in statements[len(self.status):]:
            self.status.append({"index": rest.index, "line": rest.line, "first_line": rest.first_line,
                                "status": "skipped"})
        self.capture.uninstall()
        self._describer.shutdown(wait=True)
        error = self.errors[0] if self.errors else None
        self.writer.finish({
            "statements": self.status,
            "error": error,
            "errors": self.errors,
            "warnings": self.capture.warnings,
            "spark_version": self.spark.version,
            "dry_run": self.dry_run,
            "elapsed_s": round(time.perf_counter() - started, 3),
        })
        return 1 if self.errors else 0

    def _parse_all(self, statements: list[Statement]) -> "_Parsed":
        parser = self.spark._jsparkSession.sessionState().sqlParser()
        out = _Parsed()
        for stmt in statements:
            try:
                out.plans[stmt.index] = parser.parsePlan(stmt.sql)
            except Exception as exc:
                err = StatementError(stmt, len(statements), "parse", spark_message(exc))
                out.errors[stmt.index] = err
                self.errors.append(err.to_dict())
                print(str(err), file=sys.stderr, flush=True)
        if out.errors and not self.keep_going:
            # Nothing runs when the script does not parse: no half-written results.
            for stmt in statements:
                self.status.append({"index": stmt.index, "line": stmt.line, "first_line": stmt.first_line,
                                    "status": "failed" if stmt.index in out.errors else "skipped"})
            self.writer.finish({"statements": self.status, "error": self.errors[0], "errors": self.errors,
                                "warnings": [], "spark_version": self.spark.version, "dry_run": self.dry_run})
            raise SystemExit(1)
        return out

    def _run_one(self, stmt: Statement, parsed: Any, total: int) -> str:
        kind = simple_name(parsed)
        is_command = self.spark._jvm.java.lang.Class.forName(
            "org.apache.spark.sql.catalyst.plans.logical.Command"
        ).isInstance(parsed) or kind in WRITE_STATEMENTS
        print(f"[airflow-lineage] statement {stmt.index + 1}/{total} (line {stmt.line}): {stmt.first_line[:100]}",
              flush=True)
        try:
            if self.dry_run and kind in WRITE_STATEMENTS:
                self._analyze_only(stmt, parsed)
                return "write"
            if self.dry_run and is_command:
                analyzed = self._analyzed(parsed)
                if is_write(analyzed):  # CREATE VIEW: record it, then create it for real
                    self._emit_later(stmt, [analyzed])
            df = self.spark.sql(stmt.sql)
            if is_command:
                if self.capture_plans:
                    self._emit_later(stmt, self.capture.flush())
                return "write" if kind in WRITE_STATEMENTS else "command"
            if self.capture_plans:
                self._emit_later(stmt, [df._jdf.queryExecution().analyzed()])
            if not self.dry_run:
                rows = df.limit(SHOW_ROWS + 1).collect()
                if self.capture_plans:
                    self.capture.flush()  # the query's own event is not a write
                for row in rows[:SHOW_ROWS]:
                    print("  ", tuple(row), flush=True)
                if len(rows) > SHOW_ROWS:
                    print(f"   ... (first {SHOW_ROWS} rows shown)", flush=True)
            return "query"
        except StatementError:
            raise
        except Exception as exc:
            raise StatementError(stmt, total, "run", spark_message(exc)) from exc

    def _analyze_only(self, stmt: Statement, parsed: Any) -> None:
        """Analyze a write without executing it; a CTAS still creates its (empty) table."""
        analyzed = self._analyzed(parsed)
        self._emit_later(stmt, [analyzed])
        if simple_name(analyzed) in ("CreateDataSourceTableAsSelectCommand", "CreateHiveTableAsSelectCommand"):
            from pyspark.sql.types import StructType
            import json

            schema = StructType.fromJson(json.loads(analyzed.query().schema().json()))
            ident = analyzed.table().identifier() if simple_name(analyzed).startswith("CreateData") \
                else analyzed.tableDesc().identifier()
            name = ident.unquotedString()
            if not self.spark.catalog.tableExists(name):
                self.spark.catalog.createTable(name, schema=schema, source="parquet")

    def _analyzed(self, parsed: Any) -> Any:
        """Analyze a parsed plan without executing it (CommandExecutionMode.SKIP)."""
        state = self.spark._jsparkSession.sessionState()
        module = getattr(self.spark._jvm.org.apache.spark.sql.execution, "CommandExecutionMode$")
        return state.executePlan(parsed, getattr(module, "MODULE$").SKIP()).analyzed()

    def _emit_later(self, stmt: Statement, plans: list[Any]) -> None:
        """Describe a statement's plans on the worker and write their records, in statement order."""
        if plans:
            self._describer.submit(self._emit, stmt, plans)

    def _emit(self, stmt: Statement, plans: list[Any]) -> None:
        for record in self.capture.describe_all(plans):
            record.update(index=stmt.index, sql=stmt.sql, line=stmt.line)
            self.writer.record(digested(record, self.capture.warnings))


class _Parsed:
    def __init__(self) -> None:
        self.plans: dict[int, Any] = {}
        self.errors: dict[int, StatementError] = {}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    app_args: list[str] = []
    if "--" in argv:  # everything after "--" belongs to the application
        cut = argv.index("--")
        argv, app_args = argv[:cut], argv[cut + 1:]
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sql-file", help="the script; default DIR/script.sql")
    ap.add_argument("--app", metavar="SCRIPT.py", help="run this PySpark application instead of SQL")
    ap.add_argument("--dump", required=True, help="directory (or Hadoop file system URI) for plans.jsonl and result.json")
    ap.add_argument("--dry-run", action="store_true", help="run DDL, only analyze writes")
    ap.add_argument("--keep-going", action="store_true", help="report a failing statement and go on")
    ap.add_argument("--no-capture", action="store_true", help="run the SQL without capturing plans (benchmarks)")
    args = ap.parse_args(argv)

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
        return _run_application(spark, args, app_args, files)
    try:
        if args.sql_file:
            script = files.read_uri(args.sql_file) if files and is_uri(args.sql_file) else _read(args.sql_file)
        else:
            script = files.read_text(SCRIPT) if files else _read(os.path.join(args.dump, SCRIPT))
        return Driver(spark, args.dump, dry_run=args.dry_run, keep_going=args.keep_going,
                      capture=not args.no_capture, files=files).run(script)
    except SystemExit as e:
        return int(e.code or 0)
    except Exception:
        traceback.print_exc()
        return 2
    finally:
        spark.stop()


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def _run_application(spark: Any, args: argparse.Namespace, app_args: list[str], files: HadoopFiles | None) -> int:
    from airflow_lineage_provider.job.app import ApplicationRunner

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
        writer.finish({"statements": [], "error": {"message": message}, "errors": [{"message": message}],
                       "warnings": [], "spark_version": spark.version, "application": args.app})
        spark.stop()
        return 1
    try:
        return ApplicationRunner(spark, writer, capture=not args.no_capture).run(app, app_args)
    finally:
        try:
            spark.stop()
        except Exception:  # noqa: BLE001 - the application stopped it already
            pass


if __name__ == "__main__":
    sys.exit(main())
