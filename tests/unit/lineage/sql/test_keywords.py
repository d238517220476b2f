"""lineage/sql/keywords.py: Spark's keywords used as column names, read as names; the keywords left as keywords."""

from __future__ import annotations

import pytest
import sqlglot
from sqlglot import exp

from airflow_lineage_provider.lineage.sql import extract_script
from airflow_lineage_provider.lineage.sql.keywords import parse
from airflow_lineage_provider.lineage.sql.render import SPARK_DIALECT

DDL = "CREATE TABLE kw (`all` INT, `values` STRING, `from` INT, `interval` INT, k INT) USING parquet;\n"


def lineage(sql: str) -> tuple[dict[str, set[str]], set[str]]:
    st = extract_script(DDL + sql).statements[-1]
    assert st.warnings == () and st.confidence == 1.0
    return ({c: {f"{i.field}:{i.subtype}" for i in inputs} for c, inputs in st.columns},
            {f"{i.field}:{i.subtype}" for i in st.indirect})


@pytest.mark.parametrize(("sql", "columns", "indirect"), [
    # sqlglot read ``SELECT ALL k`` and lost the column ``all`` without a word
    ("SELECT all, k FROM kw", {"all": {"all:IDENTITY"}, "k": {"k:IDENTITY"}}, set()),
    ("SELECT max(all) AS m, count(from) AS c FROM kw", {"m": {"all:AGGREGATION"}, "c": {"from:AGGREGATION"}}, set()),
    ("SELECT values, values + 1 AS v FROM kw WHERE interval > 1",
     {"values": {"values:IDENTITY"}, "v": {"values:TRANSFORMATION"}}, {"interval:FILTER"}),
    ("SELECT max(k) AS m FROM kw GROUP BY all ORDER BY all", {"m": {"k:AGGREGATION"}}, {"all:GROUP_BY", "all:SORT"}),
    ("SELECT k FROM kw GROUP BY k, all ORDER BY k, all", {"k": {"k:IDENTITY"}},
     {"k:GROUP_BY", "all:GROUP_BY", "k:SORT", "all:SORT"}),
])
def test_a_keyword_where_a_name_stands_is_the_column(sql, columns, indirect):
    assert lineage(sql) == (columns, indirect)


def test_group_by_all_over_a_relation_without_a_column_all_is_the_clause():
    st = extract_script("CREATE TABLE t (a INT, b INT) USING parquet;\nSELECT a, max(b) AS m FROM t GROUP BY all "
                        "ORDER BY all").statements[-1]
    assert {f"{i.field}:{i.subtype}" for i in st.indirect} == {"a:GROUP_BY", "a:SORT", "b:SORT"}


@pytest.mark.parametrize("sql", [
    "SELECT DISTINCT a, b FROM t", "SELECT ALL a FROM t", "SELECT a FROM t UNION ALL SELECT b FROM u",
    "SELECT a FROM t WHERE a IS NOT NULL AND b IS DISTINCT FROM c", "SELECT a + INTERVAL '1' DAY FROM t",
    "SELECT (SELECT -1), x > ALL (SELECT y FROM u) FROM t", "INSERT INTO t (a, b) VALUES (1, 2)",
    "SELECT * FROM VALUES (1, 2) AS v(a, b)", "SELECT CASE WHEN a THEN 1 ELSE -1 END FROM t LIMIT ALL",
    "SELECT a FROM t JOIN u USING (k) CROSS JOIN w LEFT OUTER JOIN z ON t.a = z.a",
    "SELECT * EXCEPT (a) FROM t", "SELECT count(DISTINCT a) FROM t GROUP BY ALL ORDER BY ALL DESC",
    "SELECT TRANSFORM (a) USING 'cat' AS (x) FROM t", "SELECT FROM t",
])
def test_keywords_in_their_places_are_read_as_sqlglot_reads_them(sql):
    assert parse(sql) == sqlglot.parse_one(sql, dialect=SPARK_DIALECT)


@pytest.mark.parametrize(("sql", "casts"), [
    ("SELECT bigint(x), decimal (y), Boolean(b) FROM t", ["BIGINT", "DECIMAL(10, 0)", "BOOLEAN"]),
    ("SELECT CAST(x AS BIGINT), CAST(y AS DECIMAL(5, 2)) FROM t", ["BIGINT", "DECIMAL(5, 2)"]),  # types, not calls
    ("SELECT upper(tinyint(x) + smallint(y)) FROM t", ["TINYINT", "SMALLINT"]),
])
def test_spark_s_cast_functions_are_read_as_casts(sql, casts):
    tree = parse(sql)
    assert not [a for a in tree.find_all(exp.Anonymous) if a.name.lower() in ("bigint", "decimal", "boolean")]
    assert [c.to.sql("spark") for c in tree.find_all(exp.Cast)] == casts
