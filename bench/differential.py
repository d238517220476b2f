"""Both extractors over every statement of every ``.sql`` file of a folder: where does static lineage differ?

The plan extractor is the judge: each file runs as ``airflow-lineage extract --dry-run`` runs it (the
driver's script runner, in process, on one local Spark: DDL, temporary views, functions and
variables are created for real, writes only analyzed), and each plan statement is checked against
the static lineage of the same file by the agreement every task run gets (``lineage/agreement.py``
through ``TaskSql.agreement``). Nothing here compares lineage itself: it sorts the verdicts.

Per statement it prints one of: agree, static differs (the differing edges), static failed (the
reason), plan failed (Spark's error); then a summary, with each difference put in a family by its
shape (generated names, parse failure, crash, static empty, missing or extra edges, ...) and the
first statement of each family as its example; plan warnings (an unknown plan node, a write a real
run would refuse) are tallied by kind beside them. Each file runs in its own session of the one Spark
(temporary objects do not leak into the next file); tables and databases a file created are
dropped after it (persistent functions are not).

    python bench/differential.py DIR [--json OUT.json] [--quiet]
    python bench/differential.py --project [DIR]          # the corpus and TPC-DS, written as .sql files
    python bench/differential.py --prepare SRC DIR [...]  # Spark's SQL test inputs made runnable here
    python bench/differential.py --prepare-sqlglot FIXTURES DIR   # sqlglot's Spark optimizer fixtures

``--prepare`` reads a copy of Spark's ``sql-tests/inputs`` (kept outside this repository) and writes
runnable files: ``--SET`` lines become ``SET`` statements, ``--IMPORT`` lines are inlined, and
views over ``VALUES`` (temporary or not) become parquet tables, so that the statements reading them have
source columns (a view over literals has none); ``--max-statements`` trims long files.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script
    sys.path.insert(0, str(ROOT))

from airflow_lineage_provider.lineage.agreement import edges  # noqa: E402
from airflow_lineage_provider.lineage.model import DIFFERS, SAME, UNAVAILABLE, LineageReport, StatementLineage  # noqa: E402
from airflow_lineage_provider.lineage.sql.extractor import EXTRACTION_FAILED, PARSE_FAILED  # noqa: E402
from airflow_lineage_provider.lineage.statements import split_statements  # noqa: E402

AGREE = "agree"
STATIC_DIFFERS = "static differs"
STATIC_FAILED = "static failed"
PLAN_FAILED = "plan failed"
PLAN_SKIPPED = "plan skipped"  # a dry run does not analyze EXECUTE IMMEDIATE or a scripting block
NO_LINEAGE = "no lineage"  # DDL, SET, SHOW ...: nothing for either extractor to say

# Families of a static difference, by the shape of the difference (the construct is in the example).
NAMES = "generated column names differ"
STATIC_EMPTY = "static empty"
MISSING_DIRECT = "missing direct edges"
MISSING_INDIRECT = "missing indirect edges"
EXTRA_DIRECT = "extra direct edges"
EXTRA_INDIRECT = "extra indirect edges"
SUBTYPE = "subtype differs"
MIXED = "missing and extra edges"
WARNS = "same edges, static warns"
PARSE = "parse failure"
CRASH = "crash"
OTHER_STATEMENT = "static read another statement"
SEVERAL_WRITES = "several writes in one statement"
NOT_READ = "static gave no lineage"
PLAN_CRASH = "plan extraction failed"


@dataclass
class Row:
    """One statement's verdict."""

    file: str
    statement: int  # counted from 1, as the CLI and Spark's messages count
    line: int
    sql: str  # its text on one line, cut at 160 characters
    outcome: str
    family: str = ""
    detail: str = ""  # Spark's error, the static reason
    only_plan: list[str] = field(default_factory=list)
    only_static: list[str] = field(default_factory=list)
    plan_edges: int = 0
    static_edges: int = 0
    plan_warnings: list[str] = field(default_factory=list)  # a plan-side gap: an unknown node, a write it misread
    silent: list[str] = field(default_factory=list)  # target columns static left out at confidence 1


# -- running one file ------------------------------------------------------------------------------------


def _objects(spark: Any) -> set[tuple[str, str]]:
    """(database, table) of every database and persistent table: what a file may leave behind."""
    out: set[tuple[str, str]] = set()
    for db in spark.catalog.listDatabases():
        out.add((db.name, ""))
        for t in spark.sql(f"SHOW TABLES IN `{db.name}`").collect():
            if not t.isTemporary:
                out.add((db.name, t.tableName))
    return out


def _drop_new(spark: Any, before: set[tuple[str, str]]) -> None:
    """Drop what a file created, so that the next file starts from the same catalog."""
    after = _objects(spark)
    new_dbs = {db for db, t in after - before if not t}
    for db in new_dbs:
        spark.sql(f"DROP DATABASE IF EXISTS `{db}` CASCADE")
    for db, t in after - before:
        if t and db not in new_dbs:
            with contextlib.suppress(Exception):
                spark.sql(f"DROP TABLE IF EXISTS `{db}`.`{t}`")


def run_script(spark: Any, name: str, script: str, setup: Callable[[Any], None] | None = None) -> list[Row]:
    """Every statement of ``script`` with its verdict: a dry run in a new session of ``spark``, then each
    plan statement's agreement with the static lineage of the same script."""
    from airflow_lineage_provider.job.dump import read_dump
    from airflow_lineage_provider.job.script import ScriptRunner
    from airflow_lineage_provider.lineage.extract import from_records
    from airflow_lineage_provider.lineage.sql.static import TaskSql, static_as_seen

    session = spark.newSession()
    if setup is not None:
        setup(session)
    before = _objects(spark)
    with tempfile.TemporaryDirectory(prefix="differential-") as dump:
        quiet = io.StringIO()
        try:
            with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
                ScriptRunner(session, dump, dry_run=True, keep_going=True).run(script)
        finally:
            _drop_new(spark, before)
        result = read_dump(dump)
    report = TaskSql(script).agreement(from_records(result.records, result.warnings), result.records)
    quiet_gaps = silent_writes(report, static_as_seen(script, result.records))
    whole = [w for w in report.warnings if "static" in w]  # the static side failed on the whole script
    by_index: dict[int, list[StatementLineage]] = {}
    for st in report.statements:
        by_index.setdefault(st.index, []).append(st)
    texts = {stmt.index: " ".join(stmt.sql.split()) for stmt in split_statements(script)}
    rows = []
    for status in result.statements:
        index = status["index"]
        row = Row(file=name, statement=index + 1, line=status.get("line", 0),
                  sql=texts.get(index, str(status.get("first_line", "")))[:160], outcome=NO_LINEAGE)
        found = by_index.get(index, [])
        if status.get("status") == "failed":
            row.outcome = PLAN_FAILED
            message = str((status.get("error") or {}).get("spark_message") or "")
            row.detail = message.strip().splitlines()[0][:300] if message.strip() else ""
            row.family = _spark_error_class(message)
        elif status.get("kind") in ("script", "skipped"):
            row.outcome, row.family = PLAN_SKIPPED, str(status.get("kind"))
        elif found:
            _judge(row, found, whole)
            row.silent = quiet_gaps.get(index, [])
        rows.append(row)
    return rows


def silent_writes(plans: LineageReport, static: LineageReport) -> dict[int, list[str]]:
    """Per statement, the target columns of a plan write that the static lineage of the same write
    leaves out while saying confidence 1: a gap no warning tells a user about (issue 27: none may be)."""
    mine: dict[tuple[int, str], list[StatementLineage]] = {}
    for st in static.statements:
        if st.target is not None:
            mine.setdefault((st.index, st.target.label), []).append(st)
    out: dict[int, list[str]] = {}
    for st in plans.statements:
        if st.method != "plan" or st.target is None:
            continue
        for other in mine.get((st.index, st.target.label), []):
            # By count: a CTAS's generated names may differ (another family); a column left out may not.
            theirs = {n.lower() for n, _ in other.columns}
            left_out = [name for name, _ in st.columns if name.lower() not in theirs]
            if len(other.columns) < len(st.columns) and other.confidence >= 1.0:
                out.setdefault(st.index, []).extend(f"{st.target.label}.{name}" for name in left_out)
    return out


def _spark_error_class(message: str) -> str:
    m = re.search(r"\[([A-Z_]+(?:\.[A-Z_]+)?)\]", message)
    return m.group(1) if m else (message.strip().splitlines() or ["?"])[0][:60]


def _judge(row: Row, found: list[StatementLineage], whole: list[str]) -> None:
    """Sort a statement's agreement into an outcome and a family (several writes: the first that differs)."""
    plans = [st for st in found if st.method == "plan"]
    if not plans:
        row.outcome, row.family = PLAN_FAILED, PLAN_CRASH
        row.detail = "; ".join(w for st in found for w in st.warnings)[:300]
        return
    st = next((s for s in plans if s.agreement is None or s.agreement.static != SAME), plans[0])
    row.plan_warnings = [w for s in plans for w in s.warnings]
    mine = edges(st)
    row.plan_edges = len(mine)
    note = st.agreement
    if note is None:  # the agreement check itself did not run
        row.outcome, row.family, row.detail = STATIC_FAILED, CRASH, "; ".join(whole)[:300]
        return
    if note.static == SAME:
        row.outcome, row.static_edges = AGREE, len(mine)
        return
    row.only_plan, row.only_static, row.detail = list(note.only_plan), list(note.only_static), note.reason[:300]
    if note.static == UNAVAILABLE:
        row.outcome = STATIC_FAILED
        reason = note.reason
        row.family = (CRASH if EXTRACTION_FAILED in reason or "static lineage failed" in reason
                      else PARSE if PARSE_FAILED in reason
                      else SEVERAL_WRITES if "several writes" in reason
                      else OTHER_STATEMENT if "another statement" in reason
                      else NOT_READ)
        if row.family in (PARSE, NOT_READ) and mine:
            row.family = f"{STATIC_EMPTY}: {row.family}"
        return
    assert note.static == DIFFERS
    row.outcome = STATIC_DIFFERS
    theirs = (mine - set(note.only_plan)) | set(note.only_static)
    row.static_edges = len(theirs)
    row.family = family(mine, theirs) or WARNS


def _by_column(edge_set: Iterable[str]) -> dict[str, frozenset[str]]:
    out: dict[str, set[str]] = {}
    for e in edge_set:
        column, _, source = e.partition(" <- ")
        out.setdefault(column, set()).add(source)
    return {c: frozenset(s) for c, s in out.items()}


def family(plan: set[str], static: set[str]) -> str:
    """The shape of a difference between two edge sets (the notation of ``agreement.edges``); ``""``: none."""
    if plan == static:
        return ""
    if plan and not static:
        return STATIC_EMPTY
    p, s = _by_column(plan), _by_column(static)
    only_p = {c for c in p if c not in s}
    only_s = {c for c in s if c not in p}
    shared_equal = all(p[c] == s[c] for c in p.keys() & s.keys())
    if only_p and shared_equal and Counter(p[c] for c in only_p) == Counter(s[c] for c in only_s):
        return NAMES
    missing, extra = plan - static, static - plan
    if missing and extra and {e.rsplit(" ", 1)[0] for e in missing} == {e.rsplit(" ", 1)[0] for e in extra}:
        return SUBTYPE
    if missing and extra:
        return MIXED
    side = missing or extra
    indirect = all(e.startswith("(indirect) <- ") for e in side)
    if missing:
        return MISSING_INDIRECT if indirect else MISSING_DIRECT
    return EXTRA_INDIRECT if indirect else EXTRA_DIRECT


def run_files(spark: Any, files: Iterable[Path], setup: Callable[[Any], None] | None = None,
              progress: bool = False) -> list[Row]:
    rows: list[Row] = []
    for path in files:
        start = time.perf_counter()
        got = run_script(spark, path.name, path.read_text(encoding="utf-8", errors="replace"), setup)
        rows += got
        if progress:
            print(f"  {path.name}: {len(got)} statements, {time.perf_counter() - start:.1f} s", file=sys.stderr,
                  flush=True)
    return rows


# -- the summary --------------------------------------------------------------------------------------------


def summary(rows: list[Row]) -> dict[str, Any]:
    """The figures of docs/accuracy.md: statements, plan-resolved, agree, agree but names, crashes,
    static empty, and each family with its count and first example."""
    resolved = [r for r in rows if r.outcome in (AGREE, STATIC_DIFFERS, STATIC_FAILED)]
    agree = sum(r.outcome == AGREE for r in rows)
    names = sum(r.family == NAMES for r in rows)
    families: dict[str, dict[str, Any]] = {}
    for r in rows:
        if r.outcome in (AGREE, NO_LINEAGE):
            continue
        key = f"{r.outcome}: {r.family}" if r.family else r.outcome
        entry = families.setdefault(key, {"count": 0, "example": f"{r.file}:{r.line}: {r.sql}",
                                          "only_plan": r.only_plan[:3], "only_static": r.only_static[:3],
                                          "detail": r.detail[:200]})
        entry["count"] += 1
    for r in rows:
        for w in r.plan_warnings:
            kind = re.sub(r"`[^`]*`|'[^']*'|\d+", "_", w)[:70]
            entry = families.setdefault(f"plan warns: {kind}", {"count": 0, "example": f"{r.file}:{r.line}: {r.sql}",
                                                                "only_plan": [], "only_static": [], "detail": w[:200]})
            entry["count"] += 1
    return {
        "files": len({r.file for r in rows}),
        "statements": len(rows),
        "plan_resolved": len(resolved),
        "agree": agree,
        "agree_but_names": agree + names,
        "static_crashed": sum(r.family == CRASH for r in rows),
        "static_empty": sum(r.family.startswith(STATIC_EMPTY) for r in rows),
        "parse_failures": sum(r.family.endswith(PARSE) for r in rows),
        "plan_failed": sum(r.outcome == PLAN_FAILED for r in rows),
        "plan_crashed": sum(r.family == PLAN_CRASH for r in rows),
        "plan_warned": sum(bool(r.plan_warnings) for r in rows),
        "static_silent": sum(bool(r.silent) for r in rows),
        "outcomes": dict(Counter(r.outcome for r in rows)),
        "families": dict(sorted(families.items(), key=lambda kv: -kv[1]["count"])),
    }


def _pct(part: int, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "-"


def format_rows(rows: list[Row]) -> str:
    lines = []
    for r in rows:
        if r.outcome == NO_LINEAGE:
            continue
        head = f"{r.file}:{r.line} [{r.statement}] {r.outcome}" + (f" ({r.family})" if r.family else "")
        lines.append(f"{head}: {r.sql[:100]}")
        if r.outcome != AGREE:
            if r.detail:
                lines.append(f"    {r.detail[:200]}")
            lines += [f"    plan warns:  {w[:200]}" for w in r.plan_warnings]
            lines += [f"    only plan:   {e}" for e in r.only_plan[:12]]
            lines += [f"    only static: {e}" for e in r.only_static[:12]]
        if r.silent:
            lines.append(f"    static left out at confidence 1: {', '.join(r.silent[:12])}")
    return "\n".join(lines)


def format_summary(s: dict[str, Any]) -> str:
    n = s["plan_resolved"]
    refused = Counter({k.split(": ", 1)[1]: f["count"] for k, f in s["families"].items()
                       if k.startswith(PLAN_FAILED + ": ") and k != f"{PLAN_FAILED}: {PLAN_CRASH}"})
    lines = [
        f"{s['files']} files, {s['statements']} statements; the plan resolves {n}, Spark refused {s['plan_failed']}"
        f" (plan extraction failed on {s['plan_crashed']}, warned on {s['plan_warned']})",
        f"static agrees on {s['agree']} ({_pct(s['agree'], n)}); {s['agree_but_names']} "
        f"({_pct(s['agree_but_names'], n)}) if only generated names differ",
        f"static crashed on {s['static_crashed']}, gave nothing on {s['static_empty']} "
        f"({s['parse_failures']} parse failures in all); left target columns out at confidence 1 on "
        f"{s['static_silent']} writes",
        "families:",
    ]
    for key, f in s["families"].items():
        if key.startswith(PLAN_FAILED + ": ") and key != f"{PLAN_FAILED}: {PLAN_CRASH}":
            continue  # Spark's own refusals (the inputs' negative tests, mostly): one line below
        lines.append(f"  {f['count']:5d}  {key}")
        lines.append(f"         e.g. {f['example'][:140]}")
    if refused:
        top = ", ".join(f"{k} {v}" for k, v in refused.most_common(8))
        lines.append(f"  {sum(refused.values()):5d}  {PLAN_FAILED} (Spark's errors, most common: {top})")
    return "\n".join(lines)


# -- the project's own SQL as files ----------------------------------------------------------------------------


def project_files(directory: Path) -> list[Path]:
    """The corpus (its schema, then each case's setup and statement) and TPC-DS (its schema, then the
    103 queries as bare SELECTs) written as two scripts in ``directory``. Each has a database of its own
    (``diff_corpus``, ``diff_tpcds``): in the test suite's shared session other modules leave ``corpus``
    and ``tpcds`` behind, and a file must start from an empty database to run as a user's does."""
    from tests.helpers import DATA, TPCDS, tpcds_queries
    from tests.integration.corpus import CASES

    directory.mkdir(parents=True, exist_ok=True)
    schema = (DATA / "corpus_schema.sql").read_text().strip().rstrip(";") + ";"
    head = "CREATE DATABASE IF NOT EXISTS corpus;\nUSE corpus;"
    assert schema.startswith(head), "tests/data/corpus_schema.sql no longer starts with its database"
    corpus = ["CREATE DATABASE IF NOT EXISTS diff_corpus;\nUSE diff_corpus;" + schema[len(head):]]
    for case in CASES:
        corpus.append(f"-- case {case.name}")
        corpus += [_own_database(s.sql) + ";" for s in split_statements(case.setup)]
        corpus.append(_own_database(case.sql.strip().rstrip(";")) + ";")
    tpcds = ["CREATE DATABASE IF NOT EXISTS diff_tpcds;", "USE diff_tpcds;",
             (TPCDS / "schema.sql").read_text().strip().rstrip(";") + ";"]
    tpcds += [f"-- {name}\n{sql};" for name, sql in tpcds_queries()]
    out = [directory / "corpus.sql", directory / "tpcds.sql"]
    out[0].write_text("\n".join(corpus) + "\n")
    out[1].write_text("\n".join(tpcds) + "\n")
    return out


def _own_database(sql: str) -> str:
    """A case that names the corpus's database (`` `corpus`.`f`(3) ``) names the script's own: in the suite's
    shared session ``corpus`` is another module's, with objects this script never created."""
    return _CORPUS_DB.sub(lambda m: m.group(0).replace("corpus", "diff_corpus"), sql)


_CORPUS_DB = re.compile(r"(?<![\w`])(?:`corpus`|corpus)\.", re.I)


def project_setup(session: Any) -> None:
    """What the corpus reads that SQL cannot create: the Python UDF ``py_upper``."""
    session.udf.register("py_upper", lambda s: s.upper() if s else s)


# -- Spark's SQL test inputs, made runnable ---------------------------------------------------------------------

_VALUES_VIEW = re.compile(
    r"^\s*CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMP(?:ORARY)?\s+)?VIEW\s+(?:IF\s+NOT\s+EXISTS\s+)?([`\w]+)\s*"
    r"(?:\(([^()]*)\))?\s*AS\s+(.*)$", re.IGNORECASE | re.DOTALL)
_VALUES_BODY = re.compile(r"^\(?\s*(?:SELECT\s+\*\s+FROM\s+)?\(?\s*VALUES\b", re.IGNORECASE)
_DROP_VIEW = re.compile(r"^\s*DROP\s+VIEW\s+(?:IF\s+EXISTS\s+)?([`\w]+)\s*$", re.IGNORECASE)


def _directives(text: str, base: Path) -> tuple[list[str], list[str]]:
    """(SET statements, lines) of a test input, its ``--SET`` lines applied and ``--IMPORT`` lines inlined."""
    sets: list[str] = []
    body: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("--SET "):
            sets += [f"SET {conf.strip()};" for conf in re.split(r",(?=\s*spark\.)", stripped[len("--SET "):])]
        elif stripped.startswith("--IMPORT "):
            imported = base / stripped[len("--IMPORT "):].strip()
            if imported.exists():
                more_sets, more = _directives(imported.read_text(errors="replace"), imported.parent)
                sets += more_sets
                body += more
        else:
            body.append(line)
    return sets, body


def prepare_script(text: str, base: Path, max_statements: int | None = None) -> str:
    """One of Spark's test inputs as a script this harness runs: directives applied, views over
    VALUES made parquet tables (their statements then have sources), at most ``max_statements``."""
    out, body = _directives(text, base)
    tables: set[str] = set()
    statements = split_statements("\n".join(body))
    if max_statements is not None:
        statements = statements[:max_statements]
    for stmt in statements:
        sql = stmt.sql.strip()
        view = _VALUES_VIEW.match(sql)
        dropped = _DROP_VIEW.match(sql)
        if view and _VALUES_BODY.match(view.group(3).strip()):
            name, columns, query = view.group(1), view.group(2), view.group(3).strip()
            tables.add(name.strip("`").lower())
            if columns:
                query = f"SELECT * FROM ({query}) AS prepared_values({columns})"
            elif re.match(r"VALUES\b", query, re.IGNORECASE):  # a CTAS of a bare VALUES is another construct
                query = f"SELECT * FROM {query}"
            out.append(f"DROP TABLE IF EXISTS {name};")
            out.append(f"CREATE TABLE {name} USING parquet AS {query};")
        elif dropped and dropped.group(1).strip("`").lower() in tables:
            out.append(f"DROP TABLE IF EXISTS {dropped.group(1)};")
        else:
            out.append(sql + ";")
    return "\n".join(out) + "\n"


def prepare(source: Path, directory: Path, max_statements: int | None = None) -> list[Path]:
    """Every ``.sql`` file under ``source`` (a copy of Spark's ``sql-tests/inputs``) prepared into
    ``directory``, named by its path (``ansi/array.sql`` -> ``ansi__array.sql``). A file that only
    imports another (the same statements under other settings) is left out."""
    directory.mkdir(parents=True, exist_ok=True)
    out = []
    for path in sorted(source.rglob("*.sql")):
        text = path.read_text(errors="replace")
        code = [ln for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("--")]
        if not code:
            continue
        target = directory / "__".join(path.relative_to(source).parts)
        target.write_text(prepare_script(text, path.parent, max_statements))
        out.append(target)
    return out


# -- sqlglot's Spark fixtures, made runnable -------------------------------------------------------------------

# The tables sqlglot's optimizer tests read (tests/test_optimizer.py), in types Spark has.
SQLGLOT_TABLES = (
    "CREATE TABLE tbl (bin_col BINARY, str_col STRING, date_col DATE, float_col FLOAT, timestamp_col TIMESTAMP, "
    "double_col DOUBLE, bigint_col BIGINT, int_col INT, bool_col BOOLEAN, array_col ARRAY<STRING>) USING parquet;\n"
    "CREATE TABLE x (a INT, b INT) USING parquet;\nCREATE TABLE y (b INT, c INT) USING parquet;\n"
    "CREATE TABLE z (b INT, c INT) USING parquet;\nCREATE TABLE w (d STRING, e STRING) USING parquet;\n"
)
# fixture file -> how its statement becomes a query (annotate_functions holds bare expressions over ``tbl``)
SQLGLOT_FIXTURES = {"annotate_functions.sql": "SELECT {} FROM tbl", "optimizer.sql": "{}",
                    "merge_subqueries.sql": "{}", "qualify_columns.sql": "{}"}


def prepare_sqlglot(fixtures: Path, directory: Path) -> list[Path]:
    """The statements of sqlglot's optimizer fixtures (``tests/fixtures/optimizer`` of a copy kept
    outside this repository) whose ``# dialect:`` names spark, one file per fixture file, after the
    tables those tests read. Pairs are read as sqlglot's ``load_sql_fixture_pairs`` reads them."""
    directory.mkdir(parents=True, exist_ok=True)
    out = []
    for name, shape in SQLGLOT_FIXTURES.items():
        path = fixtures / name
        if not path.exists():
            continue
        text = "\n".join(ln for ln in path.read_text().splitlines() if ln and not ln.startswith("--"))
        parts = text.split(";")
        queries = []
        for i in range(0, len(parts) - 1, 2):
            lines = parts[i].strip().split("\n")
            meta = {}
            while lines and lines[0].startswith("#"):
                key, _, value = lines.pop(0).partition(":")
                meta[key.lstrip("#").strip()] = value.strip()
            dialects = [d.strip() for d in meta.get("dialect", "").split(",")]
            if "spark" in dialects and lines:
                queries.append(shape.format("\n".join(lines)) + ";")
        if queries:
            target = directory / f"sqlglot__{name}"
            target.write_text(SQLGLOT_TABLES + "\n".join(queries) + "\n")
            out.append(target)
    return out


# -- command line ------------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", nargs="?", help="a folder of .sql files (with --prepare: where the prepared files go)")
    ap.add_argument("--project", action="store_true", help="run the project's corpus and TPC-DS")
    ap.add_argument("--prepare", metavar="SRC", help="prepare Spark's sql-tests/inputs copy SRC into DIR first")
    ap.add_argument("--prepare-sqlglot", metavar="FIXTURES", help="prepare sqlglot's tests/fixtures/optimizer copy "
                                                                    "FIXTURES (its Spark statements) into DIR first")
    ap.add_argument("--max-statements", type=int, help="with --prepare: keep the first N statements of a file")
    ap.add_argument("--files", help="only the files whose name contains this")
    ap.add_argument("--json", metavar="OUT", help="write every row and the summary as JSON")
    ap.add_argument("--quiet", action="store_true", help="print the summary only")
    args = ap.parse_args(argv)
    directory = Path(args.dir or tempfile.mkdtemp(prefix="differential-files-"))
    setup = None
    if args.project:
        files, setup = project_files(directory), project_setup
    elif args.prepare or args.prepare_sqlglot:
        files = prepare(Path(args.prepare), directory, args.max_statements) if args.prepare else []
        files += prepare_sqlglot(Path(args.prepare_sqlglot), directory) if args.prepare_sqlglot else []
    elif args.dir:
        files = sorted(directory.glob("*.sql"))
    else:
        ap.error("give DIR, --project or --prepare SRC DIR")
    if args.files:
        files = [f for f in files if args.files in f.name]
    from bench.common import spark_session, stop_spark

    spark = spark_session()
    spark.sparkContext.setLogLevel("ERROR")
    try:
        rows = run_files(spark, files, setup, progress=not args.quiet)
    finally:
        stop_spark(spark)
    s = summary(rows)
    if not args.quiet:
        print(format_rows(rows))
    print(format_summary(s))
    if args.json:
        import datetime
        import subprocess

        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
        measured = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                    "commit": commit}
        Path(args.json).write_text(json.dumps({"measured": measured, "summary": s,
                                               "rows": [asdict(r) for r in rows]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
