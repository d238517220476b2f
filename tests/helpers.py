"""What the tests (and the benchmarks) share: test data, plan records, edges, the seed SQL and TPC-DS.

Imports nothing of Airflow and sets nothing up, so benchmarks can use it too.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from airflow_lineage_provider.lineage.model import IDENTITY, TRANSFORMATION, StatementLineage

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"
PLANS = DATA / "plans"  # analyzed plans captured from Spark (records as the driver describes them)
TPCDS = DATA / "tpcds"
TPCDS_SUMMARY = ROOT / "docs" / "tpcds_lineage.md"
# What the tests build once and keep across runs and clones, outside the checkout (scripts/env.sh sets the same).
CACHE = Path(os.environ.get("AIRFLOW_LINEAGE_CACHE")
             or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "airflow-lineage-provider")


# -- jars ----------------------------------------------------------------------------------------------


def damage_crc(jar: Path, entry: str) -> None:
    """Rewrite ``jar`` uncompressed with one byte of ``entry`` flipped: the archive still opens, the entry
    fails its CRC check (a disk or download error)."""
    import zipfile

    with zipfile.ZipFile(jar) as archive:
        entries = {name: archive.read(name) for name in archive.namelist()}
    with zipfile.ZipFile(jar, "w", zipfile.ZIP_STORED) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    data = bytearray(jar.read_bytes())
    data[bytes(data).index(entries[entry]) + len(entries[entry]) // 2] ^= 0xFF
    jar.write_bytes(bytes(data))


# -- plan records ------------------------------------------------------------------------------------


def plan_record(name: str) -> dict[str, Any]:
    """A captured plan record of ``tests/data/plans``: Spark's JSON and what the capture read beside it."""
    return json.loads((PLANS / f"{name}.json").read_text())


_CAPTURES: dict[int, Any] = {}  # one capture per session: it remembers table locations


def analyzed_record(spark: Any, sql: str, index: int = 0, write: int = 0) -> dict[str, Any]:
    """The record the driver's capture makes of ``sql``, analyzed (never executed) in ``spark``; of a
    statement that makes several writes (a multi-insert), the record of its write ``write``."""
    from airflow_lineage_provider.job.capture import PlanCapture, write_plans
    from airflow_lineage_provider.job.jvm import analyze_only

    capture = _CAPTURES.get(id(spark))
    if capture is None:
        capture = _CAPTURES[id(spark)] = PlanCapture(spark)
    analyzed = analyze_only(spark, sql)
    writes = write_plans(analyzed)
    record = capture.describe(writes[write] if len(writes) > 1 else analyzed)
    record.update(index=index, sql=sql)
    return record


# -- edges ---------------------------------------------------------------------------------------------

Edge = tuple[str | None, str, str, str, str]


def edge_set(st: StatementLineage) -> set[Edge]:
    """Every edge of a statement: (target column, source table, field, type, subtype); indirect
    edges have no target column."""
    out: set[Edge] = {(column, i.table, i.field, i.type, i.subtype) for column, inputs in st.columns for i in inputs}
    out |= {(None, i.table, i.field, i.type, i.subtype) for i in st.indirect}
    return out


# Spark's class names where an expression should read as the SQL a user writes (``x -> upper(x)``,
# ``info.city``, ``tags[0]``, ``m['k']``, a variable's name), and exprId suffixes.
INTERNAL_NAMES = re.compile(r"namedlambdavariable|lambdafunction|getstructfield|getarrayitem|getmapvalue|"
                            r"getarraystructfields|variablereference|pythonudf|scalaudf|sqlscalarfunction|#\d")


def internal_texts(st: StatementLineage) -> list[str]:
    """The expression texts of a statement that name an internal class instead of reading as SQL."""
    return [i.expression for _, inputs in st.columns for i in inputs if INTERNAL_NAMES.search(i.expression)]


def document_edges(statement: dict[str, Any]) -> dict[str, set[tuple[str, str, str]]]:
    """A document statement's direct edges: target column -> {(source table, field, subtype)}."""
    return {c: {(i["table"], i["field"], i["subtype"]) for i in inputs} for c, inputs in statement["columns"].items()}


# -- the seed: ods_users (+ dim_company) -> dwd_users -----------------------------------------------------

SEED_DDL = """
CREATE TABLE ods_users (id BIGINT, name STRING, birthday TIMESTAMP, ts TIMESTAMP) USING parquet;
CREATE TABLE dim_company (user_id BIGINT, company_name STRING) USING parquet;
CREATE TABLE dwd_users (id BIGINT, name STRING, company_name STRING, birthday TIMESTAMP, ts TIMESTAMP, p STRING)
  USING parquet PARTITIONED BY (p);
"""
SEED_SINGLE = ("INSERT INTO dwd_users SELECT id, name, name AS company_name, birthday, ts, "
               "date_format(birthday, 'yyyyMMdd') FROM ods_users")
SEED_JOIN = ("INSERT INTO dwd_users SELECT a.id, concat(a.name, b.company_name), b.company_name, a.birthday, a.ts, "
             "date_format(a.birthday, 'yyyyMMdd') FROM ods_users a JOIN dim_company b ON a.id = b.user_id")

# Two tables and an insert between them: the smallest script with a target, a source and a transformation.
SRC_DST = (
    "CREATE TABLE src (id BIGINT, name STRING) USING parquet;\n"
    "CREATE TABLE dst (id BIGINT, label STRING) USING parquet;\n"
    "INSERT INTO dst SELECT id, upper(name) FROM src"
)

# The seed's expected edges, shared by the plan and the static extractor's tests: both must give
# the same answer; the database differs between fixtures (the plan fixtures were captured in
# ``demo``, the static tests use ``default``).
Edges = dict[str, set[tuple[str, str, str, str]]]


def seed_single_edges(database: str) -> Edges:
    """``INSERT INTO dwd_users SELECT id, name, name AS company_name, ... FROM ods_users``."""
    ods = f"spark_catalog.{database}.ods_users"
    return {
        "id": {(ods, "id", IDENTITY, "ods_users.id")},
        "name": {(ods, "name", IDENTITY, "ods_users.name")},
        "company_name": {(ods, "name", IDENTITY, "ods_users.name")},
        "birthday": {(ods, "birthday", IDENTITY, "ods_users.birthday")},
        "ts": {(ods, "ts", IDENTITY, "ods_users.ts")},
        "p": {(ods, "birthday", TRANSFORMATION, "date_format(ods_users.birthday, 'yyyyMMdd')")},
    }


def seed_join_edges(database: str) -> Edges:
    """The seed join of ``ods_users a`` and ``dim_company b``."""
    ods, dim = f"spark_catalog.{database}.ods_users", f"spark_catalog.{database}.dim_company"
    return {
        "id": {(ods, "id", IDENTITY, "a.id")},
        "name": {(ods, "name", TRANSFORMATION, "concat(a.name, b.company_name)"),
                 (dim, "company_name", TRANSFORMATION, "concat(a.name, b.company_name)")},
        "company_name": {(dim, "company_name", IDENTITY, "b.company_name")},
        "birthday": {(ods, "birthday", IDENTITY, "a.birthday")},
        "ts": {(ods, "ts", IDENTITY, "a.ts")},
        "p": {(ods, "birthday", TRANSFORMATION, "date_format(a.birthday, 'yyyyMMdd')")},
    }


# -- TPC-DS: the 103 queries over the TPC-DS schema (tests/data/tpcds) ------------------------------------
# Each query is analyzed (never run) as ``CREATE TABLE tpcds_out.<q> AS <query>``, or as a bare
# SELECT where its output repeats a column name, which a table cannot hold.


def tpcds_queries() -> list[tuple[str, str]]:
    """(name, sql) of the 103 queries in the order q1, q2, ..., q14a, q14b, ..."""
    def key(p: Path) -> tuple[int, str]:
        m = re.match(r"q(\d+)([a-z]?)", p.stem)
        return (int(m.group(1)), m.group(2)) if m else (0, p.stem)

    return [(p.stem, p.read_text().strip().rstrip(";").strip()) for p in sorted(TPCDS.glob("queries/q*.sql"), key=key)]


def create_tpcds_schema(spark: Any) -> None:
    spark.sql("CREATE DATABASE IF NOT EXISTS tpcds")
    spark.sql("CREATE DATABASE IF NOT EXISTS tpcds_out")
    spark.sql("USE tpcds")
    for stmt in (TPCDS / "schema.sql").read_text().split(";"):
        if stmt.strip():
            spark.sql(stmt.replace("CREATE TABLE", "CREATE TABLE IF NOT EXISTS", 1))


def capture_tpcds(spark: Any) -> list[tuple[str, str, dict[str, Any]]]:
    """(name, mode, record) per query; mode is ``ctas`` or ``select``."""
    spark.sql("USE tpcds")
    out = []
    for name, sql in tpcds_queries():
        columns = [c.lower() for c in spark.sql(sql).columns]
        mode = "ctas" if len(set(columns)) == len(columns) else "select"
        text = f"CREATE TABLE tpcds_out.{name} USING parquet AS {sql}" if mode == "ctas" else sql
        out.append((name, mode, analyzed_record(spark, text)))
    return out


def tpcds_summary(rows: list[tuple[str, str, StatementLineage]]) -> str:
    """The checked-in per-query summary (docs/tpcds_lineage.md)."""
    lines = [
        "# TPC-DS: target columns with and without source columns (plan extractor)",
        "",
        "Generated by `python bench/plan_extract.py --write-summary`; `tests/integration/test_tpcds.py`",
        "checks that it matches a fresh run. A column without sources is made of literals or `count(*)`",
        "alone (its rows still depend on the indirect inputs).",
        "",
        "| query | analyzed as | columns | with sources | without sources | indirect inputs | warnings |",
        "|---|---|---|---|---|---|---|",
    ]
    total = with_src = 0
    for name, mode, st in rows:
        cols = len(st.columns)
        have = sum(1 for _, inputs in st.columns if inputs)
        total += cols
        with_src += have
        lines.append(f"| {name} | {mode} | {cols} | {have} | {cols - have} | {len(st.indirect)} | {len(st.warnings)} |")
    lines += ["", f"Total: {total} target columns, {with_src} with sources, {total - with_src} without.", ""]
    return "\n".join(lines)
