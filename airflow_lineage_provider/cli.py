"""``airflow-lineage``: field lineage of Spark SQL and PySpark from the command line.

``extract`` runs a SQL script (``--sql``/``-e``) or a PySpark application (``--app``)
on the embedded local Spark (or ``--master``) and prints the lineage of its writes;
``show`` prints the lineage a DAG run left in XCom; ``trace`` follows a column across every DAG;
``connect-server-conf`` prints how to start a
Spark Connect server with the capture.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile

from airflow_lineage_provider.lineage.model import DocumentError, LineageReport


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="airflow-lineage", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    ex = sub.add_parser("extract", help="run a Spark SQL script and print its column lineage")
    src = ex.add_mutually_exclusive_group(required=True)
    src.add_argument("--sql", metavar="FILE", help="the SQL script (many statements)")
    src.add_argument("-e", dest="inline", metavar="SQL", help="the SQL script as text")
    src.add_argument("--app", metavar="FILE", help="a PySpark application (.py) or a JVM application (a jar): run "
                                                   "it under the capture and print the lineage of its writes (its own "
                                                   "arguments go after --)")
    ex.add_argument("--method", choices=["plan", "sql", "auto"], default="plan",
                    help="plan: run on Spark and read the analyzed plans; sql: static lineage from the SQL "
                         "text, no JVM; auto: plan, or sql when no Spark can be started")
    ex.add_argument("--ddl", action="append", default=[], metavar="FILE",
                    help="DDL file(s) giving table schemas to the static extractor (--method sql/auto)")
    ex.add_argument("--schema", metavar="FILE.json",
                    help='table schemas for the static extractor: {"db.table": {"column": "type", ...}, ...}')
    ex.add_argument("--database", default="default", help="current database of the static extractor")
    ex.add_argument("--class", dest="java_class", metavar="MAIN",
                    help="a jar's main class (default: the jar manifest's Main-Class)")
    ex.add_argument("--master", default="local[*]", help="Spark master, as in spark-submit (default: embedded local)")
    ex.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="Spark configuration")
    ex.add_argument("--dry-run", action="store_true", help="run DDL in a scratch warehouse; analyze writes only")
    ex.add_argument("--keep-going", action="store_true", help="report a failing statement and go on")
    ex.add_argument("--format", choices=["json", "table"], default="table")

    show = sub.add_parser("show", help="print the lineage a DAG run pushed to XCom")
    show.add_argument("--dag-id", required=True)
    show.add_argument("--run-id", help="default: the latest run with lineage")
    show.add_argument("--task-id", action="append", help="only these tasks")
    show.add_argument("--format", choices=["json", "table"], default="table")

    df = sub.add_parser("diff", help="what changed in the column lineage between two documents or two runs "
                                     "(exit 1 when something did)")
    df.add_argument("documents", nargs="*", metavar="FILE", help="two lineage documents (JSON), old then new")
    df.add_argument("--dag-id", help="or compare a task's XCom in two runs of this DAG")
    df.add_argument("--task-id", help="the task (with --dag-id)")
    df.add_argument("--run-id", action="append", help="the two runs, old then new; default: its last two runs")

    tr = sub.add_parser("trace", help="where a column comes from and what it feeds, across every DAG's latest "
                                      "successful runs")
    tr.add_argument("start", metavar="DATASET[.COLUMN]",
                    help="a table's column (db.table.column), a whole table (db.table) or a path (with --column)")
    tr.add_argument("--column", help="the column, when DATASET is a path")
    way = tr.add_mutually_exclusive_group()
    way.add_argument("--upstream", action="store_true", help="only where it comes from")
    way.add_argument("--downstream", action="store_true", help="only what it feeds (the impact)")
    tr.add_argument("--depth", default="all", help="steps each way: a number or 'all' (default)")
    tr.add_argument("--as-of", metavar="TIME", help="each task's latest successful run at this time (ISO 8601, UTC)")
    out = tr.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="the trace as JSON (what the plugin's API returns)")
    out.add_argument("--csv", action="store_true", help="one row per hop: the impact list to send to owners")

    cs = sub.add_parser("connect-server-conf", help="print the spark-submit line that starts a Spark Connect server "
                                                    "capturing each client's column lineage")
    cs.add_argument("--dump", required=True, metavar="BASE",
                    help="the base dump location (a directory, file://, hdfs://, s3a://): each client key's records "
                         "go under it; Airflow workers must reach it too")
    cs.add_argument("--port", type=int, default=15002, help="the server's gRPC port (default: 15002)")

    argv = list(sys.argv[1:] if argv is None else argv)
    app_args: list[str] = []
    if "--" in argv:  # what follows "--" is the application's own command line
        cut = argv.index("--")
        argv, app_args = argv[:cut], argv[cut + 1:]
    args = parser.parse_args(argv)
    args.app_args = app_args
    if args.command == "extract" and args.app:
        return _extract_app(args)
    if args.command == "extract":
        return _extract(args)
    if args.command == "diff":
        return _diff(args)
    if args.command == "connect-server-conf":
        return _connect_server_conf(args)
    if args.command == "trace":
        return _trace(args)
    return _show(args)


def _connect_server_conf(args: argparse.Namespace) -> int:
    """The admin's one line: the installed package's listener jar and the listener's conf with the base."""
    import shlex

    from airflow_lineage_provider.hooks.jvm_listener import JAR, connect_server_conf, jar_damage, spark_defaults

    why = jar_damage()
    if why:
        print(f"airflow-lineage: the listener jar {JAR} {why}: reinstall airflow-lineage-provider", file=sys.stderr)
        return 2
    # The listeners the site's spark-defaults.conf sets are kept: a --conf replaces the whole list.
    defaults = spark_defaults(os.environ, spark_binary="spark-submit")
    conf = {**connect_server_conf(args.dump, defaults), "spark.connect.grpc.binding.port": str(args.port)}
    cmd = ["spark-submit", "--class", "org.apache.spark.sql.connect.service.SparkConnectServer", "--jars", str(JAR)]
    for key, value in conf.items():
        cmd += ["--conf", f"{key}={value}"]
    print(" ".join(shlex.quote(part) for part in cmd))
    return 0


def _trace(args: argparse.Namespace) -> int:
    """A column's trace over every DAG, from Airflow's database (the CLI sees every DAG, as ``show`` does)."""
    import csv

    from airflow_lineage_provider.lineage.extract import printable, spreadsheet_text
    from airflow_lineage_provider.lineage.trace import ROW_FIELDS, TraceQuery
    from airflow_lineage_provider.runs import TraceFollower

    try:
        query = TraceQuery.parse(args.start, column=args.column, depth=args.depth, as_of=args.as_of,
                                 upstream=not args.downstream, downstream=not args.upstream)
    except ValueError as e:
        print(f"airflow-lineage trace: {printable(str(e))}", file=sys.stderr)
        return 2
    follower = TraceFollower()
    index = follower.index_at(query.as_of)
    for problem in follower.problems:
        print(f"airflow-lineage: skipped {printable(problem)}", file=sys.stderr)
    answer = query.run(index)
    if isinstance(answer, str):
        print(f"airflow-lineage trace: {printable(answer)}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(answer.to_dict(), indent=2))
    elif args.csv:
        writer = csv.DictWriter(sys.stdout, fieldnames=ROW_FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: spreadsheet_text(v) for k, v in row.items()} for row in answer.rows())
    else:
        print("\n".join(map(printable, answer.lines())))
    return 0


def _diff(args: argparse.Namespace) -> int:
    from airflow_lineage_provider.lineage.diff import diff
    from airflow_lineage_provider.lineage.extract import printable

    if len(args.documents) == 2 and not args.dag_id:
        docs = []
        for path in args.documents:
            doc = _read_document(path)
            if isinstance(doc, str):
                print(f"airflow-lineage: {printable(doc)}", file=sys.stderr)
                return 2
            docs.append(doc)
        labels = args.documents
    elif args.dag_id and args.task_id and not args.documents:
        from airflow_lineage_provider.runs import task_documents

        found, problems = task_documents(args.dag_id, args.task_id, args.run_id)
        for problem in problems:
            print(f"airflow-lineage: skipped {printable(problem)}", file=sys.stderr)
        if isinstance(found, str):
            print(f"airflow-lineage: {printable(found)}", file=sys.stderr)
            return 2
        labels, docs = [run for run, _ in found], [doc for _, doc in found]
    else:
        print("airflow-lineage diff: give two document files, or --dag-id and --task-id (and two --run-id)",
              file=sys.stderr)
        return 2
    result = diff(docs[0], docs[1])
    print(printable(f"column lineage: {labels[0]} -> {labels[1]}"))
    print("\n".join(map(printable, result.lines())))
    return 0 if result.same else 1


def _read_document(path: str) -> LineageReport | str:
    """The lineage document in the file ``path``, or a sentence naming the file and what is wrong."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        return f"cannot read {path}: {e.strerror or e}"
    try:
        value = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        return f"{path} is not UTF-8 text: byte {e.start} (0x{data[e.start]:02x}) cannot be decoded"
    except ValueError as e:
        return f"{path} is not JSON: {e}"
    except RecursionError:
        return f"{path} is not a lineage document: its JSON is nested too deep to read"
    try:
        return LineageReport.from_dict(value)
    except DocumentError as e:
        return f"{path} is not a lineage document: {e}"


def _extract(args: argparse.Namespace) -> int:
    if args.sql:
        try:
            with open(args.sql, encoding="utf-8") as f:
                script = f.read()
        except OSError as e:
            print(f"airflow-lineage: cannot read {args.sql}: {e.strerror}", file=sys.stderr)
            return 2
        except UnicodeDecodeError as e:
            print(f"airflow-lineage: {args.sql} is not UTF-8 text: byte {e.start} (0x{e.object[e.start]:02x}) "
                  f"cannot be decoded; save the file as UTF-8", file=sys.stderr)
            return 2
    else:
        script = args.inline
    from airflow_lineage_provider.lineage.statements import split_statements

    if not split_statements(script):
        # Nothing to run: no Spark is started, and the user learns why nothing came out.
        print(f"airflow-lineage: {args.sql or 'the SQL given with -e'} has no SQL statement (it is empty or "
              "holds only comments): nothing to extract", file=sys.stderr)
        return 2
    if args.method == "sql":
        return _extract_static(args, script)
    if args.method == "auto" and not _spark_available():
        print("airflow-lineage: no Spark can be started here: static lineage from the SQL text (--method sql)",
              file=sys.stderr)
        return _extract_static(args, script)
    return _extract_plan(args, script)


def _spark_available() -> bool:
    """Whether a Spark job can be started: spark-submit from pyspark, and a Java runtime."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return False
    return bool(os.environ.get("JAVA_HOME") or shutil.which("java"))


def _extract_static(args: argparse.Namespace, script: str) -> int:
    from airflow_lineage_provider.lineage.extract import printable
    from airflow_lineage_provider.lineage.sql import extract_script, read_ddl_files
    from airflow_lineage_provider.lineage.sql.extractor import EXTRACTION_FAILED, PARSE_FAILED

    try:
        ddl = read_ddl_files(args.ddl)
        schema = None
        if args.schema:
            with open(args.schema, encoding="utf-8") as f:
                schema = json.load(f)
    except (OSError, ValueError, RecursionError) as e:
        print(f"airflow-lineage: cannot read a schema file: {e}", file=sys.stderr)
        return 2
    wrong = _schema_problem(schema)
    if wrong:
        print(f"airflow-lineage: {args.schema} is not a table schema file: {printable(wrong)} (expected "
              '{"db.table": {"column": "type", ...}, ...}, or a list of column names for a table)', file=sys.stderr)
        return 2
    report = extract_script(script, schema=schema, ddl=ddl, database=args.database)
    _print(report, args.format)
    # A statement not read, for a syntax error or one the extractor cannot handle: no lineage, exit 1.
    unparsed = [w for st in report.statements for w in st.warnings if PARSE_FAILED in w or EXTRACTION_FAILED in w]
    for warning in unparsed:
        print(f"error: {printable(warning, newlines=True)}", file=sys.stderr)
    return 1 if unparsed else 0


def _schema_problem(schema: object) -> str | None:
    """What is wrong with a ``--schema`` file's JSON, or None: each table's columns are an object of
    column names and types, a list of column names, or a list of [name, type] pairs."""
    if schema is None:
        return None
    if not isinstance(schema, dict):
        kind = {list: "a list", str: "a string", bool: "a boolean"}.get(type(schema), "a number")
        return f"it is {kind}, not an object"
    for table, columns in schema.items():
        if isinstance(columns, dict):
            bad = [c for c, t in columns.items() if t is not None and not isinstance(t, str)]
            if bad:
                return f"table {table!r}: the type of column {bad[0]!r} is not a string"
        elif isinstance(columns, list):
            for n, c in enumerate(columns, 1):
                if not (isinstance(c, str) or (isinstance(c, list) and 1 <= len(c) <= 2
                                               and all(isinstance(x, str) for x in c))):
                    return f"table {table!r}: column {n} is neither a name nor a [name, type] pair"
        else:
            return f"table {table!r}: its columns are neither an object nor a list"
    return None


def _extract_plan(args: argparse.Namespace, script: str) -> int:
    from airflow_lineage_provider.hooks import local_spark
    from airflow_lineage_provider.job.dump import SCRIPT, read_dump
    from airflow_lineage_provider.lineage.extract import from_records, printable
    from airflow_lineage_provider.lineage.sql.static import TaskSql

    conf = dict(kv.split("=", 1) for kv in args.conf if "=" in kv)
    dump = tempfile.mkdtemp(prefix="airflow-lineage-cli-")
    scratch = None
    try:
        if args.dry_run and args.master.startswith("local"):
            # DDL of a dry run goes to a scratch catalog and warehouse, never the real one.
            scratch = tempfile.mkdtemp(prefix="airflow-lineage-scratch-")
            conf = {**local_spark.local_conf(scratch), **conf}
        with open(os.path.join(dump, SCRIPT), "w", encoding="utf-8") as f:
            f.write(script)
        code, stderr_tail = local_spark.run_driver(dump, master=args.master, conf=conf, dry_run=args.dry_run,
                                      keep_going=args.keep_going, quiet=True)
        result = read_dump(dump)
    finally:
        shutil.rmtree(dump, ignore_errors=True)
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)
    report = TaskSql(script).agreement(from_records(result.records, result.warnings), result.records)
    errors = [s["error"] for s in result.statements if s.get("error")]
    if result.error and not errors:
        errors = [result.error]
    _print(report, args.format, errors)
    for err in errors:
        print(f"error: {printable(str(err.get('message')), newlines=True)}", file=sys.stderr)
    if code and not errors:
        print(f"{printable(stderr_tail, newlines=True)}\nerror: the Spark job failed (exit code {code})",
              file=sys.stderr)
    return 1 if (errors or code) else 0


def _extract_app(args: argparse.Namespace) -> int:
    """Run a PySpark script under the driver (embedded Spark, or --master) and print its writes' lineage."""
    from airflow_lineage_provider.hooks import local_spark
    from airflow_lineage_provider.job.dump import read_dump
    from airflow_lineage_provider.lineage.extract import from_records, printable

    if not os.path.isfile(args.app):
        print(f"airflow-lineage: cannot read {args.app}: no such file", file=sys.stderr)
        return 2
    if args.method == "sql" or args.dry_run:
        print("airflow-lineage: --app runs the application on Spark: --method sql and --dry-run do not apply",
              file=sys.stderr)
        return 2
    from airflow_lineage_provider.hooks.jvm_listener import is_jvm_application

    conf = dict(kv.split("=", 1) for kv in args.conf if "=" in kv)
    dump = tempfile.mkdtemp(prefix="airflow-lineage-cli-")
    no_listener = ""
    try:
        if is_jvm_application(args.app, args.java_class):
            code, stderr_tail, no_listener = local_spark.run_jvm_application(
                dump, args.app, java_class=args.java_class, master=args.master, conf=conf, quiet=True,
                app_args=args.app_args)
        else:
            code, stderr_tail = local_spark.run_driver(dump, master=args.master, conf=conf, quiet=True,
                                                       app=args.app, app_args=args.app_args)
        result = read_dump(dump)
    finally:
        shutil.rmtree(dump, ignore_errors=True)
    if no_listener:
        print(f"airflow-lineage: no plan lineage: {printable(no_listener)}: the application ran without the "
              "listener", file=sys.stderr)
        result.records, result.warnings = [], [f"no plan lineage: {no_listener}"]
    if result.error:
        # The application failed: its own error, and no lineage printed as if it had succeeded.
        print(f"{printable(stderr_tail, newlines=True)}\nerror: {printable(result.error.get('message') or '')}",
              file=sys.stderr)
        return 1
    if code:
        print(f"{printable(stderr_tail, newlines=True)}\nerror: the Spark job failed (exit code {code})",
              file=sys.stderr)
        return 1
    _print(from_records(result.records, result.warnings), args.format)
    return 0


def _print(report: LineageReport, fmt: str, errors: list[dict] | None = None) -> None:
    from airflow_lineage_provider.lineage.extract import format_table

    if fmt == "json":
        doc = report.to_dict()
        if errors:
            doc["errors"] = errors
        print(json.dumps(doc, indent=2))
    else:
        print(format_table(report))


def _show(args: argparse.Namespace) -> int:
    from airflow_lineage_provider.runs import latest_run, run_documents

    run_id = args.run_id or latest_run(args.dag_id, args.task_id)
    documents, problems = run_documents(args.dag_id, run_id, args.task_id) if run_id else ([], [])
    from airflow_lineage_provider.lineage.extract import printable

    for problem in problems:  # skipped, as the UI's API skips them
        print(f"airflow-lineage: skipped {printable(problem)}", file=sys.stderr)
    if not documents:
        print(f"no column lineage in XCom for DAG {args.dag_id}" + (f", run {run_id}" if run_id else ""),
              file=sys.stderr)
        return 1
    if args.format == "json":
        tasks = {p.task_id: report.to_dict() for p, report in documents}
        print(json.dumps({"dag_id": args.dag_id, "run_id": run_id, "tasks": tasks}, indent=2))
        return 0
    print(f"DAG {args.dag_id}, run {run_id}")
    for pushed, report in documents:
        print(f"\n== task {pushed.task_id}")
        _print(report, "table")
    return 0


if __name__ == "__main__":
    sys.exit(main())
