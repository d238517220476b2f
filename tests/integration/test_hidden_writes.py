"""Statements whose parsed form hides what they write, run by the script runner as the driver runs them.

A multi-insert (``FROM s INSERT INTO a SELECT ... INSERT INTO b SELECT ...``) is parsed as a Union of
inserts: each insert is a write of its own, with its own target and columns. A WITH before a write
(``WITH s AS (...) MERGE INTO t USING s ...``) is parsed as a CTE around the write: a dry run analyzes it
as that write and never runs it. ``CREATE TABLE IDENTIFIER(var) (...)`` is parsed as a plan waiting for
its name: it is a command (no lineage, no warning), not a query. Each runs here through
``job/script.ScriptRunner`` in the tests' shared session, dry and for real, and the lineage is read back
from the dump as the hook reads it.
"""

from __future__ import annotations

import pytest

from airflow_lineage_provider.job.dump import read_dump
from airflow_lineage_provider.job.script import ScriptRunner
from airflow_lineage_provider.lineage.agreement import with_agreement
from airflow_lineage_provider.lineage.extract import from_records
from airflow_lineage_provider.lineage.model import LineageReport, StatementLineage
from airflow_lineage_provider.lineage.sql import extract_script
from tests.integration.test_corpus import direct, indirect

pytestmark = pytest.mark.spark

DB = "hidden_w"
SETUP = f"""CREATE DATABASE IF NOT EXISTS {DB};
USE {DB};
DROP TABLE IF EXISTS src;
DROP TABLE IF EXISTS dep;
DROP TABLE IF EXISTS a;
DROP TABLE IF EXISTS b;
DROP TABLE IF EXISTS part;
CREATE TABLE src (id BIGINT, name STRING, dept STRING, salary DOUBLE, age INT) USING parquet;
CREATE TABLE dep (id BIGINT, dname STRING) USING parquet;
CREATE TABLE a (id BIGINT, name STRING) USING parquet;
CREATE TABLE b (id BIGINT, s DOUBLE) USING parquet;
CREATE TABLE part (id BIGINT, name STRING, p STRING) USING parquet PARTITIONED BY (p);
INSERT INTO src VALUES (1, 'x', 'd1', 10.0, 31), (2, 'y', 'd2', 20.0, 25);
INSERT INTO dep VALUES (1, 'd1');
"""


def run(spark, tmp_path, script: str, *, dry_run: bool) -> list[StatementLineage]:
    """The statements of ``script`` (after SETUP) as the dump of a script run gives them, and the run's
    warnings checked empty."""
    dump = tmp_path / ("dry" if dry_run else "real")
    runner = ScriptRunner(spark, str(dump), dry_run=dry_run, keep_going=False)
    assert runner.run(SETUP + script) == 0, runner.errors
    result = read_dump(str(dump))
    assert not any("unknown" in w for w in result.warnings), result.warnings
    spark.sql("USE default")
    return list(from_records(result.records, result.warnings).statements)


def short(st: StatementLineage) -> str:
    return st.target.table.rsplit(".", 1)[-1] if st.target and st.target.table else (
        "path" if st.target else "query")


def lineage(statements: list[StatementLineage], first: int) -> list[tuple[int, str, dict, set]]:
    """(statement index from the script's first non-setup statement, target, direct, indirect) of each write."""
    return [(st.index - first, short(st), direct(st), indirect(st)) for st in statements if st.index >= first]


FIRST = SETUP.count(";")


def comparable(write: tuple[int, str, dict, set]) -> tuple:
    index, target, columns, indirect_inputs = write
    return index, target, sorted((c, sorted(v)) for c, v in columns.items()), sorted(indirect_inputs)


# -- multi-insert: each insert its own write, dry run and real run ---------------------------------------

def multi_insert_script(directory: str) -> str:
    return (
        # 0: two tables
        "FROM src INSERT INTO a SELECT id, name INSERT INTO b SELECT id, salary * 2;\n"
        # 1: an alias, a WHERE each, INSERT OVERWRITE
        "FROM src s INSERT INTO a SELECT s.id, upper(s.name) WHERE s.age > 30 "
        "INSERT OVERWRITE TABLE b SELECT s.id, s.salary WHERE s.age <= 30;\n"
        # 2: a WITH before it
        "WITH w AS (SELECT id, name, salary FROM src WHERE salary > 0) "
        "FROM w INSERT INTO a SELECT id, name INSERT INTO b SELECT id, salary;\n"
        # 3: from a subquery with a set operation in a second level of parentheses
        "FROM (SELECT id, name FROM src UNION ALL (SELECT id, dname FROM dep)) u "
        "INSERT INTO a SELECT id, name INSERT INTO b SELECT id, CAST(length(name) AS DOUBLE);\n"
        # 4: three targets: a partitioned table, a directory, a quoted name
        "FROM src INSERT INTO part PARTITION (p) SELECT id, name, dept "
        f"INSERT OVERWRITE DIRECTORY '{directory}' USING parquet SELECT id, name "
        "INSERT INTO `a` SELECT `id`, `dept`;\n"
        # 5: one table twice: two writes
        "FROM src INSERT INTO a SELECT id, name INSERT INTO a SELECT id, dept;\n"
    )


MULTI_INSERT = [
    (0, "a", {"id": {"src.id:I"}, "name": {"src.name:I"}}, set()),
    (0, "b", {"id": {"src.id:I"}, "s": {"src.salary:T"}}, set()),
    (1, "a", {"id": {"src.id:I"}, "name": {"src.name:T"}}, {"src.age:FILTER"}),
    (1, "b", {"id": {"src.id:I"}, "s": {"src.salary:I"}}, {"src.age:FILTER"}),
    (2, "a", {"id": {"src.id:I"}, "name": {"src.name:I"}}, {"src.salary:FILTER"}),
    (2, "b", {"id": {"src.id:I"}, "s": {"src.salary:I"}}, {"src.salary:FILTER"}),
    (3, "a", {"id": {"src.id:I", "dep.id:I"}, "name": {"src.name:I", "dep.dname:I"}}, set()),
    (3, "b", {"id": {"src.id:I", "dep.id:I"}, "s": {"src.name:T", "dep.dname:T"}}, set()),
    (4, "part", {"id": {"src.id:I"}, "name": {"src.name:I"}, "p": {"src.dept:I"}}, set()),
    (4, "path", {"id": {"src.id:I"}, "name": {"src.name:I"}}, set()),
    (4, "a", {"id": {"src.id:I"}, "name": {"src.dept:I"}}, set()),
    (5, "a", {"id": {"src.id:I"}, "name": {"src.name:I"}}, set()),
    (5, "a", {"id": {"src.id:I"}, "name": {"src.dept:I"}}, set()),
]


@pytest.mark.parametrize("dry_run", [True, False], ids=["dry-run", "real-run"])
def test_each_insert_of_a_multi_insert_is_a_write_of_its_own(spark, tmp_path, dry_run):
    directory = tmp_path / "dir"
    statements = run(spark, tmp_path, multi_insert_script(str(directory)), dry_run=dry_run)
    got = lineage(statements, FIRST)
    assert sorted(map(comparable, got)) == sorted(map(comparable, MULTI_INSERT))
    ours = [st for st in statements if st.index >= FIRST]
    assert all(st.warnings == () and st.confidence == 1.0 for st in ours)
    # The static extractor reads each insert as the plan does (a directory's too); one table written twice
    # by one statement is matched write for write, in the text's order.
    static = extract_script(SETUP + multi_insert_script(str(directory)))
    checked = with_agreement(LineageReport(tuple(ours)), static).statements
    assert [st.agreement.static for st in checked] == ["same"] * 13, [
        (st.index - FIRST, short(st), st.agreement) for st in checked]
    rows = spark.sql(f"SELECT count(*) FROM {DB}.a").collect()[0][0]
    if dry_run:
        assert rows == 0 and not directory.exists(), "a dry run writes nothing"
    else:
        assert rows > 0 and directory.exists()


# -- WITH before a write: a dry run analyzes it as that write --------------------------------------------

WITH_WRITES = (
    # 0: the issue's: MERGE into a table without row-level support
    "WITH s AS (SELECT id, name FROM src) MERGE INTO a t USING s ON t.id = s.id "
    "WHEN MATCHED THEN UPDATE SET name = s.name;\n"
    # 1: two CTEs, the second a set operation in parentheses; INSERT values
    "WITH s AS (SELECT id, name FROM src WHERE age > 1), s2 AS (SELECT * FROM s UNION ALL (SELECT id, dname FROM dep)) "
    "MERGE INTO a AS t USING s2 ON t.id = s2.id WHEN NOT MATCHED THEN INSERT (id, name) VALUES (s2.id, upper(s2.name));\n"
    # 2: DELETE
    "WITH s AS (SELECT id FROM src WHERE age > 30) DELETE FROM a WHERE id IN (SELECT id FROM s);\n"
    # 3: UPDATE
    "WITH s AS (SELECT id FROM src) UPDATE a SET name = 'x' WHERE id IN (SELECT id FROM s);\n"
    # 4: INSERT (a dry run used to run it for real)
    "WITH s AS (SELECT id, name FROM src) INSERT INTO a SELECT id, name FROM s;\n"
    # 5: quoted CTE name, INSERT OVERWRITE, a CTE inside a CTE
    "WITH `s` AS (WITH t AS (SELECT id, salary FROM src) SELECT id, salary FROM t) "
    "INSERT OVERWRITE TABLE b SELECT id, salary + 1 FROM `s`;\n"
)
REFUSED = "dry run only: a real run of this statement would be refused by Spark"


def test_a_with_before_a_write_is_analyzed_as_that_write_in_a_dry_run(spark, tmp_path):
    statements = run(spark, tmp_path, WITH_WRITES, dry_run=True)
    ours = [st for st in statements if st.index >= FIRST]
    assert [(st.index - FIRST, short(st)) for st in ours] == [(0, "a"), (1, "a"), (2, "a"), (3, "a"), (4, "a"),
                                                              (5, "b")]
    got = {st.index - FIRST: (direct(st), indirect(st)) for st in ours}
    assert got[0] == ({"id": {"a.id:I"}, "name": {"src.name:I"}}, {"a.id:JOIN", "src.id:JOIN"})
    assert got[1] == ({"id": {"src.id:I", "dep.id:I"}, "name": {"src.name:T", "dep.dname:T"}},
                      {"a.id:JOIN", "src.id:JOIN", "dep.id:JOIN", "src.age:FILTER"})
    assert got[2] == ({}, {"a.id:FILTER", "src.id:FILTER", "src.age:FILTER"})
    assert got[3] == ({"id": {"a.id:I"}, "name": set()}, {"a.id:FILTER", "src.id:FILTER"})
    assert got[4] == ({"id": {"src.id:I"}, "name": {"src.name:I"}}, set())
    assert got[5] == ({"id": {"src.id:I"}, "s": {"src.salary:T"}}, set())
    # MERGE, UPDATE and DELETE into parquet: Spark would refuse them when run, and the dry run says so.
    assert [any(w.startswith(REFUSED) for w in st.warnings) for st in ours] == [True] * 4 + [False] * 2
    assert spark.sql(f"SELECT count(*) FROM {DB}.a").collect()[0][0] == 0, "a dry run writes nothing"


def test_a_with_before_a_merge_on_a_row_level_table_dry_and_real(spark, tmp_path):
    script = (
        f"CREATE NAMESPACE IF NOT EXISTS rowcat.{DB};\n"
        f"DROP TABLE IF EXISTS rowcat.{DB}.acct;\n"
        f"CREATE TABLE rowcat.{DB}.acct (id BIGINT, name STRING) TBLPROPERTIES ('write.mode' = 'copy-on-write');\n"
        f"INSERT INTO rowcat.{DB}.acct VALUES (1, 'old');\n"
        f"WITH s AS (SELECT id, upper(name) AS n FROM {DB}.src) MERGE INTO rowcat.{DB}.acct t USING s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET name = s.n WHEN NOT MATCHED THEN INSERT (id, name) VALUES (s.id, s.n);\n"
    )
    expected = ({"id": {"acct.id:I", "src.id:I"}, "name": {"src.name:T"}}, {"acct.id:JOIN", "src.id:JOIN"})
    for dry_run in (True, False):
        statements = run(spark, tmp_path, script, dry_run=dry_run)
        [merge] = [st for st in statements if st.index == FIRST + 4]
        assert merge.target.table == f"rowcat.{DB}.acct"
        assert (direct(merge), indirect(merge)) == expected
        assert merge.warnings == () and merge.confidence == 1.0
        names = sorted(r[0] for r in spark.sql(f"SELECT name FROM rowcat.{DB}.acct").collect())
        assert names == ([] if dry_run else ["X", "Y"]), "a dry run writes nothing (the INSERT before it either)"


# -- CREATE TABLE IDENTIFIER(...): a command, in a dry run and a real run --------------------------------

def identifier_script(location: str) -> str:
    return (
        f"DECLARE OR REPLACE VARIABLE tname STRING DEFAULT '{DB}.idt';\n"
        f"DROP TABLE IF EXISTS {DB}.idt;\n"
        f"DROP TABLE IF EXISTS {DB}.idt_h;\n"
        f"DROP TABLE IF EXISTS {DB}.idl;\n"
        f"DROP TABLE IF EXISTS {DB}.idt_x;\n"
        f"DROP TABLE IF EXISTS {DB}.idt_c;\n"
        # 6: the issue's
        "CREATE TABLE IDENTIFIER(tname) (c1 INT) USING csv;\n"
        # 7: a Hive table, IF NOT EXISTS, an expression for the name
        "CREATE TABLE IF NOT EXISTS IDENTIFIER(tname || '_h') (c1 INT) STORED AS PARQUET;\n"
        # 8: a constant expression, partitioned
        f"CREATE TABLE IDENTIFIER('{DB}.' || 'idl') (c1 INT, c2 STRING) USING parquet PARTITIONED BY (c2);\n"
        # 9: an external table at a location
        f"CREATE TABLE IDENTIFIER(tname || '_x') (c1 INT) USING parquet LOCATION '{location}';\n"
        # 10: then written, through IDENTIFIER too
        "INSERT INTO IDENTIFIER(tname) SELECT age FROM src;\n"
        # 11: a CTAS named by IDENTIFIER
        "CREATE TABLE IDENTIFIER(tname || '_c') USING parquet AS SELECT id FROM src;\n"
    )


@pytest.mark.parametrize("dry_run", [True, False], ids=["dry-run", "real-run"])
def test_create_table_identifier_is_a_command(spark, tmp_path, dry_run):
    statements = run(spark, tmp_path, identifier_script(str(tmp_path / "ext")), dry_run=dry_run)
    got = lineage(statements, FIRST)
    assert got == [(10, "idt", {"c1": {"src.age:I"}}, set()), (11, "idt_c", {"id": {"src.id:I"}}, set())]
    assert all(st.warnings == () and st.confidence == 1.0 for st in statements if st.index >= FIRST)
    for table in ("idt", "idt_h", "idl", "idt_x"):  # the DDL ran, in a dry run too
        assert spark.catalog.tableExists(f"{DB}.{table}")
