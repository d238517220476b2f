"""MERGE INTO, UPDATE and DELETE FROM run for real on tables with row-level support.

The corpus's row-level cases (``corpus_spark4.py``) are analyzed on parquet tables, where Spark keeps
``MergeIntoTable`` / ``UpdateTable`` / ``DeleteFromTable``. Here each runs on the tests' row-level
catalog (``tests/rowlevel.py``) in both of its modes, where Spark's analyzer rewrites it into
``ReplaceData`` (copy-on-write) or ``WriteDelta`` (merge-on-read): the same lineage must come out.
"""

from __future__ import annotations

import re
import subprocess

import pytest

from airflow_lineage_provider.lineage.plan import resolve
from tests.conftest import venv_bin
from tests.integration.corpus_spark4 import SPARK4_CASES
from tests.integration.test_corpus import direct, indirect
from tests.rowlevel import CATALOG_CLASS, rowlevel_conf

pytestmark = pytest.mark.spark

MODES = {"cow": "copy-on-write", "mor": "merge-on-read"}
REWRITTEN = {"cow": {"ReplaceData", "InsertOnlyMerge"}, "mor": {"WriteDelta", "InsertOnlyMerge"}}
ROW_LEVEL_CASES = [c for c in SPARK4_CASES if c.target == "acct"]
INTERNAL_COLUMNS = {"_file", "_pos", "__row_operation"}
ACCT_ROWS = "(1, 'a', 10.0, 'open'), (2, 'b', 20.0, 'open'), (3, 'c', 30.0, 'closed')"
UPD_ROWS = "(1, 'A', 5.0, 'add'), (2, 'B', 200.0, 'D'), (4, 'd', 40.0, 'add')"


def on_rowcat(sql: str, mode: str) -> str:
    """A corpus case's SQL on the row-level catalog: ``acct`` is the table of the mode, ``acct_upd``
    the source, ``emp`` the corpus's own."""
    sql = re.sub(r"\bacct_upd\b", "rowcat.corpus.acct_upd", sql)
    sql = re.sub(r"\bacct\b(?=\.)", f"acct_{mode}", sql)  # a column qualified by the table's name
    sql = re.sub(r"\bacct\b", f"rowcat.corpus.acct_{mode}", sql)
    return re.sub(r"\bJOIN emp\b", "JOIN spark_catalog.corpus.emp", sql)


def reset_statements(mode: str) -> list[str]:
    """The statements that make the mode's tables anew on the row-level catalog, with their rows."""
    out = ["CREATE NAMESPACE IF NOT EXISTS rowcat.corpus"]
    for table, columns, rows, props in (
        (f"acct_{mode}", "id BIGINT, name STRING, balance DOUBLE, status STRING", ACCT_ROWS,
         f" TBLPROPERTIES ('write.mode' = '{MODES[mode]}')"),
        ("acct_upd", "id BIGINT, name STRING, amount DOUBLE, op STRING", UPD_ROWS, ""),
    ):
        out += [f"DROP TABLE IF EXISTS rowcat.corpus.{table}", f"CREATE TABLE rowcat.corpus.{table} ({columns}){props}",
                f"INSERT INTO rowcat.corpus.{table} VALUES {rows}"]
    return out


def reset(spark, mode: str) -> None:
    for statement in reset_statements(mode):
        spark.sql(statement)


def rows_of(spark, mode: str) -> list[tuple]:
    return sorted(tuple(r) for r in spark.table(f"rowcat.corpus.acct_{mode}").collect())


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("case", ROW_LEVEL_CASES, ids=[c.name for c in ROW_LEVEL_CASES])
def test_a_row_level_write_that_runs_has_the_lineage_of_its_dry_run(rowlevel_plans, case, mode):
    record = rowlevel_plans.record(case, mode)
    assert record["plan"][0]["class"].rsplit(".", 1)[-1] in REWRITTEN[mode]
    st = resolve.extract(record)
    as_corpus = {column: {s.replace(f"acct_{mode}.", "acct.") for s in sources}
                 for column, sources in direct(st).items()}
    assert as_corpus == case.columns
    assert list(dict(st.columns)) == list(case.columns), "columns in the table's order"
    assert {s.replace(f"acct_{mode}.", "acct.") for s in indirect(st)} == case.indirect
    assert not INTERNAL_COLUMNS & {c for c, _ in st.columns}
    assert not INTERNAL_COLUMNS & {i.field for _, inputs in st.columns for i in inputs}
    assert st.warnings == () and st.confidence == 1.0
    assert st.target is not None and st.target.table == f"rowcat.corpus.acct_{mode}"
    assert st.target.mode == case.name.split("_", 1)[0]


@pytest.mark.parametrize("mode", list(MODES))
def test_the_catalog_really_merges_updates_and_deletes(corpus, mode):
    reset(corpus, mode)
    corpus.sql(f"MERGE INTO rowcat.corpus.acct_{mode} t USING rowcat.corpus.acct_upd u ON t.id = u.id "
               "WHEN MATCHED AND u.op = 'D' THEN DELETE WHEN MATCHED THEN UPDATE SET balance = t.balance + u.amount "
               "WHEN NOT MATCHED THEN INSERT (id, name, balance, status) VALUES (u.id, u.name, u.amount, 'new')")
    assert rows_of(corpus, mode) == [(1, "a", 15.0, "open"), (3, "c", 30.0, "closed"), (4, "d", 40.0, "new")]
    corpus.sql(f"UPDATE rowcat.corpus.acct_{mode} SET status = upper(status) WHERE balance > 20")
    assert rows_of(corpus, mode) == [(1, "a", 15.0, "open"), (3, "c", 30.0, "CLOSED"), (4, "d", 40.0, "NEW")]
    corpus.sql(f"DELETE FROM rowcat.corpus.acct_{mode} WHERE status = 'CLOSED'")
    assert rows_of(corpus, mode) == [(1, "a", 15.0, "open"), (4, "d", 40.0, "NEW")]


def test_a_script_of_row_level_writes_runs_under_spark_submit_with_its_lineage(tmp_path):
    """As a user runs it: the CLI submits the script with the catalog's jar and settings, the driver
    captures each write as it runs, and the document names the rewritten table."""
    conf = rowlevel_conf()
    script = tmp_path / "merge.sql"
    script.write_text(
        "CREATE NAMESPACE IF NOT EXISTS rowcat.shop;\n"
        "CREATE TABLE rowcat.shop.stock (sku STRING, qty INT, note STRING) TBLPROPERTIES ('write.mode' = "
        "'merge-on-read');\n"
        "CREATE TABLE rowcat.shop.moves (sku STRING, delta INT);\n"
        "INSERT INTO rowcat.shop.stock VALUES ('a', 1, 'x'), ('b', 2, 'y');\n"
        "INSERT INTO rowcat.shop.moves VALUES ('a', 10), ('c', 3);\n"
        "MERGE INTO rowcat.shop.stock s USING rowcat.shop.moves m ON s.sku = m.sku\n"
        "  WHEN MATCHED THEN UPDATE SET qty = s.qty + m.delta\n"
        "  WHEN NOT MATCHED THEN INSERT (sku, qty, note) VALUES (m.sku, m.delta, 'new');\n"
        "SELECT * FROM rowcat.shop.stock ORDER BY sku;\n")
    proc = subprocess.run(
        [venv_bin("airflow-lineage"), "extract", "--sql", str(script), "--format", "json",
         "--conf", f"spark.jars={conf['spark.jars']}", "--conf", f"spark.sql.catalog.rowcat={CATALOG_CLASS}"],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    import json

    doc = json.loads(proc.stdout)
    merge = next(s for s in doc["statements"] if s["index"] == 5)
    assert merge["target"]["table"] == "rowcat.shop.stock" and merge["target"]["mode"] == "merge"
    assert merge["method"] == "plan" and merge["warnings"] == []
    edges = {(c, i["table"].rsplit(".", 1)[-1] + "." + i["field"], i["subtype"])
             for c, inputs in merge["columns"].items() for i in inputs}
    assert edges == {
        ("sku", "stock.sku", "IDENTITY"), ("sku", "moves.sku", "IDENTITY"),
        ("qty", "stock.qty", "TRANSFORMATION"), ("qty", "moves.delta", "TRANSFORMATION"),
        ("qty", "moves.delta", "IDENTITY"),
        ("note", "stock.note", "IDENTITY"),
    }
    assert {(i["table"].rsplit(".", 1)[-1] + "." + i["field"], i["subtype"]) for i in merge["indirect"]} == {
        ("stock.sku", "JOIN"), ("moves.sku", "JOIN")}
    final = next(s for s in doc["statements"] if s["index"] == 6)
    assert final["target"] is None  # the query's rows are in the task log; its columns read the merged table
