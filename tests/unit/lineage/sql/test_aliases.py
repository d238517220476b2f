"""lineage/sql/aliases.py: Spark's name of an unnamed column reading a lateral column alias."""

from __future__ import annotations

import pytest

from airflow_lineage_provider.lineage.sql import extract_script

DDL = "CREATE TABLE t (a INT, b INT, s INT) USING parquet;\n"


@pytest.mark.parametrize(("sql", "names"), [
    ("SELECT a AS x, x * 2 FROM t", ["x", "(lateralAliasReference(x) * 2)"]),
    ("SELECT count(a) AS c, sum(b) + c FROM t GROUP BY ALL", ["c", "(sum(b) + lateralAliasReference(c))"]),
    ("SELECT A AS X, upper(x) FROM t", ["X", "upper(lateralAliasReference(x))"]),
    ("SELECT b AS s, s + 1 FROM t", ["s", "(s + 1)"]),  # the relation's column s, not the alias
    ("SELECT a + 1 AS x, x * 2 AS y FROM t", ["x", "y"]),
])
def test_unnamed_columns_reading_an_alias_are_named_as_spark_names_them(sql, names):
    st = extract_script(DDL + sql).statements[-1]
    assert [c for c, _ in st.columns] == names and st.confidence == 1.0
