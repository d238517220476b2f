"""lineage/sql/pivot_syntax.py: a PIVOT's aggregates that are expressions over aggregates."""

from __future__ import annotations

import pytest
from sqlglot import exp

from airflow_lineage_provider.lineage.sql.keywords import parse
from airflow_lineage_provider.lineage.sql.pivot_syntax import PLACEHOLDER, read, wrap


def _read(sql: str) -> exp.Pivot:
    text = wrap(sql) or sql
    tree = parse(text)
    read(tree, text)
    assert PLACEHOLDER not in tree.sql()
    return tree.find(exp.Pivot)


@pytest.mark.parametrize(("sql", "aggregates"), [
    ("SELECT * FROM t PIVOT (avg(x) + 1 AS a FOR k IN (1, 2))", ["AVG(x) + 1 AS a"]),
    ("SELECT * FROM t PIVOT (sum(x) * 2, max(y) m FOR k IN (1))", ["SUM(x) * 2", "MAX(y) AS m"]),
    ("SELECT * FROM t PIVOT (max(y) - min(y) spread, count(*) FOR k IN (1))", ["MAX(y) - MIN(y) AS spread", "COUNT(*)"]),
    ("SELECT * FROM t PIVOT (sum(CASE WHEN x > 0 THEN x END) / 2 AS big FOR k IN (1))",
     ["SUM(CASE WHEN x > 0 THEN x END) / 2 AS big"]),
    ("SELECT * FROM t PIVOT (sum(x) + length('FOR (') AS s FOR k IN ('a'))", ["SUM(x) + LENGTH('FOR (') AS s"]),
    ("SELECT * FROM t PIVOT (coalesce(sum(x), 0) AS s, avg(x) FOR k IN (1))", ["COALESCE(SUM(x), 0) AS s", "AVG(x)"]),
])
def test_each_aggregate_is_read_as_the_expression_spark_reads(sql, aggregates):
    assert [a.sql("spark") for a in _read(sql).expressions] == aggregates


def test_a_pivot_of_calls_only_and_an_unpivot_are_left_as_written():
    assert wrap("SELECT * FROM t PIVOT (sum(x) AS s, avg(x) FOR k IN (1))") is None
    assert wrap("SELECT * FROM t UNPIVOT (v FOR k IN (a, b))") is None
    assert wrap("SELECT pivot FROM t") is None


def test_unaliased_aggregates_of_several_are_named_as_spark_names_them():
    pivot = _read("SELECT * FROM t PIVOT (sum(x) * 2, avg(y) + 1, count(*) FOR k IN ('a', 'b' AS bee))")
    assert [c.name for c in pivot.args["columns"]] == [
        "a_(sum(x) * 2)", "a_(avg(y) + 1)", "a_count(1)", "bee_(sum(x) * 2)", "bee_(avg(y) + 1)", "bee_count(1)"]

