"""lineage/sql/using.py: a star over a USING / NATURAL join then another join keeps the later relation's key."""

from __future__ import annotations

import pytest

from airflow_lineage_provider.lineage.sql import extract_script

DDL = "CREATE TABLE a (k INT, x INT) USING parquet;\nCREATE TABLE b (k INT, y INT) USING parquet;\n" \
      "CREATE TABLE c (z INT, k INT, w INT) USING parquet;\n"


@pytest.mark.parametrize(("sql", "names"), [
    ("SELECT * FROM a JOIN b USING (k) JOIN c ON c.z = a.x", ["k", "x", "y", "z", "k (2)", "w"]),
    ("SELECT * FROM a NATURAL JOIN b JOIN c ON c.z = a.x", ["k", "x", "y", "z", "k (2)", "w"]),
    ("SELECT * FROM a JOIN b USING (k) LEFT JOIN (SELECT k FROM c) s ON s.k = a.k", ["k", "x", "y", "k (2)"]),
    ("SELECT * FROM a JOIN b USING (k) JOIN c USING (k)", ["k", "x", "y", "z", "w"]),
])
def test_the_star_has_every_column_spark_gives(sql, names):
    st = extract_script(DDL + sql).statements[-1]
    assert [c for c, _ in st.columns] == names and st.confidence == 1.0
    tables = {c: {i.table.rsplit(".", 1)[-1] for i in inputs} for c, inputs in st.columns}
    assert tables.get("k (2)", {"c"}) == {"c"}
