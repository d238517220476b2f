"""Run a SQL script statement by statement, and dump every write's plan.

The whole script is parsed before anything runs, so a syntax error in statement
3 fails the job before statements 1 and 2 have written anything. Each write's
plan is described on a worker thread while Spark goes on with the next
statement. In a dry run, writes are analyzed and never executed; DDL runs.
Imports only pyspark and the standard library (never Airflow).
"""

from __future__ import annotations

import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from airflow_lineage_provider.job.capture import Plan, PlanCapture, digested, is_write, write_plans
from airflow_lineage_provider.job.dump import DumpWriter, HadoopFiles, JobResult
from airflow_lineage_provider.job.errors import StatementError, shown_line, spark_message
from airflow_lineage_provider.job.jvm import analyze_only, is_multi_insert, plan_only, simple_name, statement_kind
from airflow_lineage_provider.lineage.plan import record as raw
from airflow_lineage_provider.lineage.plan.writes import PARSED_WRITES
from airflow_lineage_provider.lineage.statements import Statement, split_statements

SHOW_ROWS = 20
# Row-level writes as parsed: Spark refuses one into a table that cannot run it when planning, not analyzing.
_ROW_LEVEL = frozenset({"MergeIntoTable", "UpdateTable", "DeleteFromTable"})


class ScriptRunner:
    """Runs one SQL script statement by statement and writes the dump of its writes."""

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
            entry: dict[str, Any] = {"index": stmt.index, "line": stmt.line, "first_line": shown_line(stmt, 200)}
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
            self.status.append({"index": rest.index, "line": rest.line, "first_line": shown_line(rest, 200),
                                "status": "skipped"})
        self.capture.uninstall()
        self._describer.shutdown(wait=True)
        error = self.errors[0] if self.errors else None
        self.writer.finish(JobResult(
            statements=self.status, error=error, errors=self.errors, warnings=self.capture.warnings,
            spark_version=self.spark.version, dry_run=self.dry_run,
            elapsed_s=round(time.perf_counter() - started, 3),
        ))
        return 1 if self.errors else 0

    def _parse_all(self, statements: list[Statement]) -> _Parsed:
        parser = self.spark._jsparkSession.sessionState().sqlParser()
        out = _Parsed()
        for stmt in statements:
            try:
                out.plans[stmt.index] = parser.parsePlan(stmt.sql)
            except Exception as exc:  # noqa: BLE001 - every parse error is reported with its statement
                err = StatementError(stmt, len(statements), "parse", spark_message(exc))
                out.errors[stmt.index] = err
                self.errors.append(err.to_dict())
                print(str(err), file=sys.stderr, flush=True)
        if out.errors and not self.keep_going:
            # Nothing runs when the script does not parse: no half-written results.
            for stmt in statements:
                self.status.append({"index": stmt.index, "line": stmt.line, "first_line": shown_line(stmt, 200),
                                    "status": "failed" if stmt.index in out.errors else "skipped"})
            self.writer.finish(JobResult(statements=self.status, error=self.errors[0], errors=self.errors,
                                         spark_version=self.spark.version, dry_run=self.dry_run))
            raise SystemExit(1)
        return out

    def _run_one(self, stmt: Statement, parsed: Any, total: int) -> str:
        kind = statement_kind(parsed)
        command_class = self.spark._jvm.java.lang.Class.forName("org.apache.spark.sql.catalyst.plans.logical.Command")
        is_command = command_class.isInstance(parsed) or kind in PARSED_WRITES
        print(f"[airflow-lineage] statement {stmt.index + 1}/{total} (line {stmt.line}): {shown_line(stmt, 100)}",
              flush=True)
        try:
            if kind == "PlanWithUnresolvedIdentifier":
                # ``CREATE TABLE IDENTIFIER(var) (...)``: which command it is, only analysis tells (it runs nothing).
                hidden = analyze_only(self.spark, parsed)
                kind, is_command = simple_name(hidden), command_class.isInstance(hidden)
            if self.dry_run and kind == "CompoundBody":
                # A scripting block's statements depend on its variables and control flow: they can
                # only be known by running it, and a dry run writes nothing.
                self.capture.warnings.append(f"statement {stmt.index + 1} (line {stmt.line}): a SQL scripting block "
                                             "is not analyzed in a dry run; its writes are captured when it runs")
                return "script"
            if self.dry_run and kind == "UnresolvedExecuteImmediate":
                # Spark runs the statement EXECUTE IMMEDIATE names while it analyzes it: a dry run
                # cannot look at it without running it.
                self.capture.warnings.append(f"statement {stmt.index + 1} (line {stmt.line}): EXECUTE IMMEDIATE is "
                                             "not analyzed in a dry run (Spark runs its statement to analyze it); "
                                             "its lineage is captured when it runs")
                return "skipped"
            if self.dry_run and kind in PARSED_WRITES:
                self._analyze_only(stmt, parsed, kind)
                return "write"
            if self.dry_run and is_command:
                analyzed = analyze_only(self.spark, parsed)
                if is_write(analyzed):  # CREATE VIEW: record it, then create it for real
                    self._emit_later(stmt, [(None, analyzed)])
            df = self.spark.sql(stmt.sql)
            if is_command:
                if self.capture_plans and (kind == "CompoundBody" or is_multi_insert(parsed)):
                    # A scripting block runs many statements, a multi-insert many inserts: each write is its
                    # own, even two into one table.
                    self._emit_later(stmt, self.capture.drain(), each=True)
                elif self.capture_plans:
                    self._emit_later(stmt, self.capture.flush())
                return "write" if kind in PARSED_WRITES else "command"
            if self.capture_plans:
                self._emit_later(stmt, [(None, df._jdf.queryExecution().analyzed())])
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

    def _analyze_only(self, stmt: Statement, parsed: Any, kind: str) -> None:
        """Analyze a write without executing it; a CTAS still creates its (empty) table. A row-level write
        is planned too (never run): Spark refuses one into a table whose format cannot run it only when
        it plans it, and the dry run says so in the statement's warnings. A multi-insert's inserts are
        each a write of their own, as when it runs."""
        analyzed = analyze_only(self.spark, parsed)
        refused = None
        if kind in _ROW_LEVEL:
            try:
                plan_only(self.spark, parsed)
            except Exception as exc:  # noqa: BLE001 - Spark's refusal is the warning
                refused = spark_message(exc).splitlines()[0].split(". ", 1)[0]  # its first sentence
        self._emit_later(stmt, [(None, plan) for plan in write_plans(analyzed) or [analyzed]], refused=refused)
        if simple_name(analyzed) in ("CreateDataSourceTableAsSelectCommand", "CreateHiveTableAsSelectCommand"):
            import json

            from pyspark.sql.types import StructType

            schema = StructType.fromJson(json.loads(analyzed.query().schema().json()))
            ident = analyzed.table().identifier() if simple_name(analyzed).startswith("CreateData") \
                else analyzed.tableDesc().identifier()
            name = ident.unquotedString()
            if not self.spark.catalog.tableExists(name):
                self.spark.catalog.createTable(name, schema=schema, source="parquet")

    def _emit_later(self, stmt: Statement, plans: list[Plan], *, each: bool = False,
                    refused: str | None = None) -> None:
        """Describe a statement's plans on the worker and write their records, in statement order;
        ``each``: every plan is a write of its own (a scripting block's), named by its own SQL;
        ``refused``: why a real run of the dry run's write would be refused."""
        if plans:
            self._describer.submit(self._emit, stmt, plans, each, refused)

    def _emit(self, stmt: Statement, plans: list[Plan], each: bool, refused: str | None = None) -> None:
        records = self.capture.describe_each(plans, sql_text=True) if each else self.capture.describe_all(plans)
        for record in records:
            raw.place(record, index=stmt.index, sql=record.get(raw.SQL) or stmt.sql, line=stmt.line,
                      statement=stmt.index, block=each)
            if refused:
                record[raw.REFUSED] = refused
            self.writer.record(digested(record, self.capture.warnings))


class _Parsed:
    def __init__(self) -> None:
        self.plans: dict[int, Any] = {}
        self.errors: dict[int, StatementError] = {}
