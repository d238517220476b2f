"""Extraction alone: the dump's plan JSON -> lineage document, over the 103 TPC-DS queries.

The driver digests each analyzed plan into the lean plan (``lineage/plan/digest.py``) on its
background thread while Spark runs on, and dumps that; extraction on the Airflow worker
reads it back and resolves it. Timed here: JSON text of the dumped record -> document.
The digest itself (Spark's JSON -> lean, paid in the driver) is timed and printed
beside it, and so is the whole path from Spark's JSON (how an older raw dump is read).

Prints median and p95 per query (each query's time is the best of its passes, as ``timeit``
takes it, for every tool alike), and the ratio to sqlglot's lineage of all output
columns of the same queries measured in the same run; then a synthetic wide query
(N columns through 10 CTEs) at several widths, to show the cost is linear. Spark is
used only to analyze the queries: it is stopped, JVM and all, before anything is
timed, as extraction runs on an Airflow worker with no Spark beside it.

    python bench/plan_extract.py [--passes 5] [--sqlglot-per-column] [--write-summary]
"""

from __future__ import annotations

import argparse
import gc
import json
import re
import statistics
from typing import Callable

from common import ROOT, best_of, interleaved, ms, p95, per_item_best, spark_session, stop_spark

from airflow_lineage_provider.hooks.spark_lineage import _json_loads
from airflow_lineage_provider.job.capture import digested
from airflow_lineage_provider.lineage.plan import digest, resolve
from tests.helpers import TPCDS, TPCDS_SUMMARY, capture_tpcds, create_tpcds_schema, tpcds_queries, tpcds_summary


def sqlglot_schema() -> dict[str, dict[str, str]]:
    schema: dict[str, dict[str, str]] = {}
    for m in re.finditer(r"CREATE TABLE (\w+) \((.*?)\) USING", (TPCDS / "schema.sql").read_text(), re.S):
        cols = {}
        for line in m.group(2).split(",\n"):
            parts = line.strip().split(None, 1)
            if len(parts) == 2:
                cols[parts[0]] = parts[1]
        schema[m.group(1)] = cols
    return schema


def sqlglot_all_columns(sql: str, schema: dict, trim: bool) -> dict:
    from sqlglot.lineage import lineage

    return lineage(None, sql, schema, dialect="spark", trim_selects=trim)


def sqlglot_resolved(nodes: dict) -> tuple[int, int]:
    """(columns, columns whose lineage reaches a real table)."""
    from sqlglot import exp

    total = resolved = 0
    for node in nodes.values():
        total += 1
        if any(isinstance(n.source, exp.Table) and n.source.name for n in node.walk() if not n.downstream):
            resolved += 1
    return total, resolved


def sqlglot_build() -> str:
    """Which sqlglot runs: the compiled one (sqlglot[c], i.e. sqlglotc) or pure Python."""
    import sqlglot
    import sqlglot.parser

    kind = "compiled sqlglotc" if sqlglot.parser.__file__.endswith((".so", ".pyd")) else "pure Python"
    return f"sqlglot {sqlglot.__version__}, {kind}"


def sqlglot_configs(schema: object) -> dict[str, Callable[[str], object]]:
    """sqlglot's all-columns lineage, default and untrimmed, labelled as the tables print them.

    The schema is built once (a ``MappingSchema``), as a tool calling it per query would: a dict
    would be normalized again on every call, which costs sqlglot about half its time.
    """
    return {"sqlglot lineage(None) all columns, default": lambda s: sqlglot_all_columns(s, schema, True),
            "sqlglot lineage(None) all columns, trim_selects=False": lambda s: sqlglot_all_columns(s, schema, False)}


def sqlglot_share(sqls: list[str], schema: object, trim: bool) -> float:
    """Share of output columns whose sqlglot lineage reaches a real table."""
    counts = [sqlglot_resolved(sqlglot_all_columns(s, schema, trim)) for s in sqls]
    return sum(r for _, r in counts) / sum(t for t, _ in counts)


def ours_resolved(records: list[str]) -> tuple[int, int]:
    total = resolved = 0
    for text in records:
        st = resolve.extract(json.loads(text))
        total += len(st.columns)
        resolved += sum(1 for _, inputs in st.columns if inputs)
    return total, resolved


def lean_text(record: dict) -> str:
    """The record as the driver dumps it (``job/dump.py`` writes compact JSON): its lean plan and the
    lineage the driver resolved from it (``job/capture.digested``)."""
    return json.dumps(digested(dict(record), []), separators=(",", ":"))


def plan_only_text(record: dict) -> str:
    """The record with its lean plan alone: what a dump holds where the driver could not resolve it."""
    return json.dumps(digest.digest(record), separators=(",", ":"))


def wide_query(columns: int, ctes: int = 10) -> tuple[str, str]:
    """A table of ``columns`` columns through ``ctes`` CTEs that each transform every column."""
    ddl = "CREATE TABLE IF NOT EXISTS wide_{n} ({cols}) USING parquet".format(
        n=columns, cols=", ".join(f"c{i} BIGINT" for i in range(columns)))
    parts = [f"t0 AS (SELECT {', '.join(f'c{i}' for i in range(columns))} FROM wide_{columns})"]
    for k in range(1, ctes):
        parts.append(f"t{k} AS (SELECT {', '.join(f'c{i} + {k} AS c{i}' for i in range(columns))} FROM t{k - 1})")
    sql = f"WITH {', '.join(parts)} SELECT * FROM t{ctes - 1}"
    return ddl, sql


def capture_wide(spark: object, widths: list[int]) -> list[tuple[int, str, dict]]:
    """(width, sql, captured record) of the synthetic wide query at each width."""
    from airflow_lineage_provider.job.capture import PlanCapture

    spark.sql("USE tpcds")
    capture = PlanCapture(spark)
    out = []
    for width in widths:
        ddl, sql = wide_query(width)
        spark.sql(ddl)
        record = capture.describe(spark.sql(sql)._jdf.queryExecution().analyzed())
        record.update(index=0, sql=sql)
        out.append((width, sql, record))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--sqlglot-per-column", action="store_true", help="also time sqlglot per column (slow)")
    ap.add_argument("--write-summary", action="store_true", help="rewrite docs/tpcds_lineage.md")
    ap.add_argument("--widths", default="250,500,1000")
    args = ap.parse_args()
    print(sqlglot_build())

    spark = spark_session()
    create_tpcds_schema(spark)
    captured = capture_tpcds(spark)
    wide = capture_wide(spark, [int(w) for w in args.widths.split(",")])
    stop_spark(spark)
    raw_texts = [json.dumps(rec) for _, _, rec in captured]
    texts = [lean_text(rec) for _, _, rec in captured]
    plan_texts = [plan_only_text(rec) for _, _, rec in captured]
    print(f"captured {len(texts)} TPC-DS plans: {sum(map(len, raw_texts)) / 1e6:.1f} MB of Spark's plan JSON, "
          f"{sum(map(len, texts)) / 1e6:.1f} MB dumped as lean plans with their lineage")
    loads = _json_loads()  # the hook's parser

    def ours(text: str) -> object:
        return resolve.extract(loads(text))

    for text in texts + raw_texts:  # warm-up: imports, function-name table
        ours(text)
    # This process holds every captured plan; the hook's does not. Move what exists now out of
    # the collector's way, or a collection during json.loads would scan it all and time that.
    gc.collect()
    gc.freeze()
    our_times = per_item_best(ours, texts, args.passes)
    total, resolved = ours_resolved(texts)
    rows = [("airflow-lineage plan extractor (dump -> document)", our_times, resolved / total),
            ("  (resolved on the worker: a dump without the driver's lineage)",
             per_item_best(ours, plan_texts, args.passes), resolved / total),
            ("  (in the driver, beside Spark: Spark JSON -> lean + lineage)",
             per_item_best(lambda t: digested(json.loads(t), []), raw_texts, args.passes), float("nan")),
            ("  (Spark JSON -> document, a raw dump)", per_item_best(ours, raw_texts, args.passes), resolved / total)]

    from sqlglot.schema import MappingSchema

    schema = MappingSchema(sqlglot_schema(), dialect="spark")  # built once, sqlglot's best use
    sqls = [sql for _, sql in tpcds_queries()]
    glot = sqlglot_configs(schema)
    glot_times = interleaved(glot, sqls, max(1, min(3, args.passes)))
    rows += [(label, glot_times[label], sqlglot_share(sqls, schema, trim))
             for label, trim in zip(glot, (True, False))]
    if args.sqlglot_per_column:
        from sqlglot.lineage import lineage

        names = {sql: list(sqlglot_all_columns(sql, schema, False)) for sql in sqls}

        def per_column(sql: str) -> None:
            for name in names[sql]:
                lineage(name, sql, schema, dialect="spark")

        rows.append(("sqlglot lineage() per column", per_item_best(per_column, sqls, 1), float("nan")))
    wide_lines = []
    for width, sql, record in wide:
        raw_text, text = json.dumps(record), lean_text(record)
        gc.collect()
        gc.freeze()
        ours_s = best_of(lambda: ours(text), 5)
        digest_s = best_of(lambda: digest.digest(json.loads(raw_text)), 3)
        st = ours(text)
        assert all(inputs for _, inputs in st.columns), "every wide column has its source"
        glot_schema = MappingSchema({f"wide_{width}": {f"c{i}": "BIGINT" for i in range(width)}}, dialect="spark")
        glot_s = best_of(lambda: sqlglot_all_columns(sql, glot_schema, False), 3)
        wide_lines.append(
            f"  {width:5d} columns: ours {ours_s:7.3f} s ({len(text) / 1e6:.2f} MB dumped; digest in the driver "
            f"{digest_s:.3f} s of {len(raw_text) / 1e6:.1f} MB Spark JSON)   "
            f"sqlglot trim_selects=False {glot_s:7.3f} s   ratio {glot_s / ours_s:6.1f}x")

    # openlineage-sql runs last: once its Rust library has run in a process, the Python code
    # after it runs slower there (measured: the 1000-column extraction 0.044 s -> 0.069 s).
    try:
        import openlineage_sql

        def olsql(sql: str) -> object:
            return openlineage_sql.parse([sql], dialect="sparksql")

        rows.append(("openlineage-sql parse (Rust)", per_item_best(olsql, sqls, args.passes), float("nan")))
    except ImportError:
        pass

    base = statistics.median(our_times)
    print(f"\nTPC-DS, 103 queries; per query the best of {args.passes} passes, then median and p95 over the queries")
    print(f"{'tool':66} {'median/query':>14} {'p95/query':>12} {'total':>10} {'ratio':>8} {'resolved':>9}")
    for label, times, share in rows:
        med = statistics.median(times)
        share_text = "n/a" if share != share else f"{share:.0%}"
        print(f"{label:66} {ms(med):>14} {ms(p95(times)):>12} {sum(times):9.3f}s {med / base:7.1f}x {share_text:>9}")
    print("\nSynthetic wide query: N columns through 10 CTEs (extraction of the analyzed plan, best of 5)")
    print("\n".join(wide_lines))

    if args.write_summary:
        TPCDS_SUMMARY.write_text(tpcds_summary([(n, m, resolve.extract(r)) for n, m, r in captured]))
        print(f"\nwrote {TPCDS_SUMMARY.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
