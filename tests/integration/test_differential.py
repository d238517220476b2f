"""The differential harness (``bench/differential.py``) over the project's own SQL, as a user's files.

The corpus (its schema, each case's setup and statement) and the 103 TPC-DS queries run as two
scripts through a dry run on the shared Spark session, and each plan statement is checked against
the static lineage of its script, as every task run checks it. What it proves beyond
``test_agreement.py`` (one statement at a time, on a copy of the schema): the two extractors also
agree when a whole script runs in order (DDL, temporary views and functions created by the script
itself) and the plan side goes through the dump as in a real run (resolved in the driver, read back),
the harness itself runs, and neither extractor crashes. The figures asserted are those
measured when the harness was written (docs/accuracy.md); they may only grow.
"""

from __future__ import annotations

import pytest

from bench import differential
from tests.integration.corpus import CASES

pytestmark = pytest.mark.spark

# Measured on 2026-11-27 (docs/accuracy.md): what the plan resolves and the static extractor agrees on.
CORPUS_AGREE = 224
TPCDS_AGREE = 103


@pytest.fixture(scope="module")
def rows(spark, tmp_path_factory):
    files = differential.project_files(tmp_path_factory.mktemp("differential"))
    return {f.name: differential.run_files(spark, [f], differential.project_setup) for f in files}


def _said_to_differ(row: differential.Row) -> bool:
    """A corpus case whose ``static`` reason says why the static extractor misses it (test_agreement's rule)."""
    return any(row.sql == " ".join(case.sql.split())[:160] for case in CASES if case.static)


@pytest.mark.slow
def test_no_extractor_crashes(rows):
    for name, got in rows.items():
        s = differential.summary(got)
        assert s["static_crashed"] == 0 and s["plan_crashed"] == 0, (name, s["families"])


@pytest.mark.slow
def test_no_write_has_static_columns_missing_at_confidence_one(rows):
    for name, got in rows.items():
        assert [(r.sql, r.silent) for r in got if r.silent] == [], name


def test_a_write_static_reads_short_at_confidence_one_is_told():
    from airflow_lineage_provider.lineage.model import Dataset, LineageReport, Origin, StatementLineage

    target = Dataset(namespace="spark_catalog", name="db.t", table="spark_catalog.db.t")
    a = Origin("spark_catalog.db.s", "a", "IDENTITY", "a", False)

    def write(method, confidence, columns):
        return StatementLineage.of(index=2, sql="", method=method, confidence=confidence, target=target,
                                   inputs=(), columns=columns, indirect=(), warnings=())

    plan = LineageReport(statements=(write("plan", 1.0, [("x", [a]), ("y", [a])]),))
    short = LineageReport(statements=(write("sql", 1.0, [("x", [a])]),))
    warned = LineageReport(statements=(write("sql", 0.5, [("x", [a])]),))
    renamed = LineageReport(statements=(write("sql", 1.0, [("x", [a]), ("_c1", [a])]),))
    assert differential.silent_writes(plan, short) == {2: ["spark_catalog.db.t.y"]}
    assert differential.silent_writes(plan, warned) == {}
    assert differential.silent_writes(plan, renamed) == {}  # a name apart is another family, not a gap


@pytest.mark.slow
def test_tpcds_every_query_resolves_and_agrees(rows):
    s = differential.summary(rows["tpcds.sql"])
    assert s["plan_failed"] == 0, s["families"]
    assert s["plan_resolved"] == s["agree"] >= TPCDS_AGREE, differential.format_summary(s)


@pytest.mark.slow
def test_corpus_agrees_as_a_script(rows):
    got = rows["corpus.sql"]
    s = differential.summary(got)
    assert s["agree"] >= CORPUS_AGREE, differential.format_summary(s)
    differ = [r for r in got if r.outcome in (differential.STATIC_DIFFERS, differential.STATIC_FAILED)]
    assert [r for r in differ if not _said_to_differ(r)] == [], differential.format_rows(differ)


def test_a_difference_gets_its_family():
    """The families by shape, on edge sets written as ``agreement.edges`` writes them."""
    plan = {"x <- t.a IDENTITY", "(indirect) <- t.k FILTER"}
    assert differential.family(plan, plan) == ""
    assert differential.family(plan, set()) == differential.STATIC_EMPTY
    assert differential.family(plan, {"_c0 <- t.a IDENTITY", "(indirect) <- t.k FILTER"}) == differential.NAMES
    assert differential.family(plan, {"x <- t.a TRANSFORMATION", "(indirect) <- t.k FILTER"}) == differential.SUBTYPE
    assert differential.family(plan, {"x <- t.a IDENTITY"}) == differential.MISSING_INDIRECT
    assert differential.family(plan, {"(indirect) <- t.k FILTER"}) == differential.MISSING_DIRECT
    assert differential.family(plan, plan | {"x <- t.b IDENTITY"}) == differential.EXTRA_DIRECT
    assert differential.family(plan, plan | {"(indirect) <- t.b JOIN"}) == differential.EXTRA_INDIRECT
    assert differential.family(plan, {"x <- t.b IDENTITY", "(indirect) <- t.k FILTER"}) == differential.MIXED


def test_prepare_makes_views_over_values_tables(tmp_path):
    """Spark's test inputs read temporary views over VALUES, which have no source columns: the
    preparation makes them parquet tables, applies ``--SET`` and ``--IMPORT``, and trims."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "base.sql").write_text(
        "--SET spark.sql.ansi.enabled=false\n"
        "CREATE OR REPLACE TEMPORARY VIEW t AS SELECT * FROM VALUES (1, 'a') AS t(k, v);\n"
        "CREATE TEMPORARY VIEW u(a, b) AS VALUES (1, 2);\n"
        "CREATE VIEW w AS VALUES (1, 2) AS w(x, y);\n"
        "SELECT k FROM t;\nDROP VIEW t;\nDROP VIEW other;\nSELECT 1;\n")
    (tmp_path / "in" / "sub").mkdir()
    (tmp_path / "in" / "sub" / "again.sql").write_text("--IMPORT ../base.sql\nSELECT 2;\n")
    (tmp_path / "in" / "sub" / "only.sql").write_text("--IMPORT ../base.sql\n")  # the same statements again
    out = differential.prepare(tmp_path / "in", tmp_path / "out", max_statements=6)
    assert [p.name for p in out] == ["base.sql", "sub__again.sql"]
    text = out[0].read_text()
    assert text.splitlines()[0] == "SET spark.sql.ansi.enabled=false;"
    assert "CREATE TABLE t USING parquet AS SELECT * FROM VALUES (1, 'a') AS t(k, v);" in text
    assert "CREATE TABLE u USING parquet AS SELECT * FROM (VALUES (1, 2)) AS prepared_values(a, b);" in text
    assert "CREATE TABLE w USING parquet AS SELECT * FROM VALUES (1, 2) AS w(x, y);" in text
    assert text.count("DROP TABLE IF EXISTS t;") == 2 and "DROP VIEW other;" in text and "SELECT 1" not in text
    assert out[1].read_text() == text
