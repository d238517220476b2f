"""lineage/sql/pipes.py: Spark's pipe syntax (|>) read as the SQL it stands for (the plan side: corpus_static.py)."""

from __future__ import annotations

import pytest

from airflow_lineage_provider.lineage.sql import SqlExtractor
from airflow_lineage_provider.lineage.sql.pipes import rewrite

DDL = ("CREATE TABLE emp (id BIGINT, name STRING, dept STRING, salary DOUBLE, age INT) USING parquet;"
       "CREATE TABLE dept (dept STRING, dname STRING, region STRING) USING parquet;"
       "CREATE TABLE out2 (a STRING, b DOUBLE) USING parquet")


def lineage(sql: str):
    x = SqlExtractor()
    x.run(DDL)
    (st,) = x.statement(sql)
    return st


def short(st) -> dict[str, set[str]]:
    return {c: {f"{i.table.rsplit('.', 1)[-1]}.{i.field}:{i.subtype[0]}" for i in inputs} for c, inputs in st.columns}


def indirect(st) -> set[str]:
    return {f"{i.table.rsplit('.', 1)[-1]}.{i.field}:{i.subtype}" for i in st.indirect}


def test_no_pipe_no_rewrite():
    assert rewrite("SELECT a FROM t") is None
    assert rewrite("SELECT '|>' AS s FROM t") is None  # in a string: no operator


def test_each_step_goes_into_the_select_it_reads_as():
    assert rewrite("TABLE t |> WHERE a > 0 |> SELECT a, b").sql == "SELECT a, b FROM t WHERE a > 0"
    assert rewrite("FROM t |> JOIN u USING (k) |> EXTEND a + 1 AS c").sql == \
        "SELECT *, a + 1 AS c FROM t JOIN u USING (k)"
    assert rewrite("TABLE t |> SELECT a |> WHERE a > 0").sql == "SELECT * FROM (SELECT a FROM t) AS __pipe1 WHERE a > 0"
    assert rewrite("TABLE t |> UNION ALL TABLE u |> DROP b").sql == \
        "SELECT * EXCEPT (b) FROM (SELECT * FROM t UNION ALL SELECT * FROM u) AS __pipe1"


@pytest.mark.parametrize(("sql", "columns", "indirect_inputs"), [
    ("TABLE emp |> SELECT name, salary * 2 AS pay", {"name": {"emp.name:I"}, "pay": {"emp.salary:T"}}, set()),
    ("TABLE dept |> SET dname = upper(dname), region = dname",
     {"dept": {"dept.dept:I"}, "dname": {"dept.dname:T"}, "region": {"dept.dname:T"}}, set()),
    ("TABLE dept |> DROP region |> AS d |> SELECT d.dname", {"dname": {"dept.dname:I"}}, set()),
    ("TABLE emp |> AGGREGATE sum(salary) AS s GROUP BY dept, age > 30 AS senior",
     {"dept": {"emp.dept:I"}, "senior": {"emp.age:T"}, "s": {"emp.salary:A"}}, {"emp.dept:GROUP_BY", "emp.age:GROUP_BY"}),
    ("TABLE emp |> SELECT dept, age, salary |> AGGREGATE max(salary) GROUP BY 2",
     {"age": {"emp.age:I"}, "max(salary)": {"emp.salary:A"}}, {"emp.age:GROUP_BY"}),
    ("TABLE emp |> SELECT name, dept |> JOIN dept ON emp.dept = dept.dept |> SELECT emp.name, dname",
     {"name": {"emp.name:I"}, "dname": {"dept.dname:I"}}, {"emp.dept:JOIN", "dept.dept:JOIN"}),
    ("INSERT INTO out2 TABLE emp |> ORDER BY age |> LIMIT 3 |> SELECT name, salary",
     {"a": {"emp.name:I"}, "b": {"emp.salary:I"}}, {"emp.age:SORT"}),
    ("WITH c AS (TABLE emp |> TABLESAMPLE (10 ROWS) |> WHERE age > 1) SELECT x.id FROM (TABLE c |> SELECT id) x",
     {"id": {"emp.id:I"}}, {"emp.age:FILTER"}),
    ("EXECUTE IMMEDIATE 'TABLE emp |> SELECT upper(name)'", {"upper(name)": {"emp.name:T"}}, set()),
])
def test_static_lineage_of_pipe_operators(sql, columns, indirect_inputs):
    st = lineage(sql)
    assert (st.method, st.warnings, st.confidence) == ("sql", (), 1.0)
    assert short(st) == columns
    assert indirect(st) == indirect_inputs


def test_an_operator_not_read_is_said_once_with_lower_confidence():
    st = lineage("TABLE emp |> RENAME name AS who |> SELECT id")
    assert short(st) == {"id": {"emp.id:I"}}
    assert st.confidence < 1
    assert st.warnings == ("the pipe operator |> RENAME is not read by the static extractor: its input's lineage "
                           "passes through it as it is",)


def test_an_ordinal_of_unknown_columns_is_said():
    st = lineage("TABLE nowhere |> AGGREGATE count(*) AS n GROUP BY 1")
    assert st.confidence < 1
    assert any("GROUP BY 1" in w for w in st.warnings)
