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


@pytest.mark.parametrize(("text", "opens"), [
    ("select a as x, x * 2 from t", True),
    ("select a as x, b from t where x > 1", False),  # named again only after the FROM
    ("select a as x, b from (select x from u)", False),
    ("select a as x, b as y, upper(y) from t", True),
    ("select a as x, b as x, c from t", True),  # the second alias names x again, as the search did
    ("select a as `x`, x + 1 from t", True),
    ("select a as xy, x from t", False),  # a word, not a prefix
    ("select a, b from t", False),
])
def test_the_gate_opens_only_where_an_alias_is_named_again_before_from(text, opens):
    from airflow_lineage_provider.lineage.sql.aliases import _reads_an_alias

    assert _reads_an_alias(text) is opens


def test_a_wide_select_list_of_aliases_is_read_once():
    # 2,000 aliases, each named again only in the next select: the gate stays shut and sees each word once.
    from airflow_lineage_provider.lineage.sql.aliases import _reads_an_alias

    first = ", ".join(f"c{i} + 1 as c{i}" for i in range(2000))
    second = ", ".join(f"c{i} + 2 as c{i}" for i in range(2000))
    assert _reads_an_alias(f"with a as (select {first} from w) select {second} from a") is False
    assert _reads_an_alias(f"select {first}, c5 * 2 from w") is True
