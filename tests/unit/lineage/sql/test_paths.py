"""lineage/sql/paths.py: a multi-part column name, the longest qualifier naming a relation first."""

from __future__ import annotations

import pytest

from airflow_lineage_provider.lineage.sql import extract_script

DDL = ("CREATE DATABASE IF NOT EXISTS d; USE d;\n"
       "CREATE TABLE c (id INT, info STRUCT<city: STRING, geo: STRUCT<lat: DOUBLE>>) USING parquet;\n"
       "CREATE TABLE t5 (i1 INT, t5 STRUCT<i1: INT, i2: INT>) USING parquet;\n")


@pytest.mark.parametrize(("sql", "columns", "indirect"), [
    ("SELECT d.c.info.city FROM d.c", {"city": {"c.info.city:IDENTITY"}}, set()),
    ("SELECT spark_catalog.d.c.info.geo.lat AS lat FROM c WHERE d.c.info.city = 'x'",
     {"lat": {"c.info.geo.lat:IDENTITY"}}, {"c.info.city:FILTER"}),
    # a struct column named like its table: crashed with "Unknown column: i2", read the wrong column i1
    ("SELECT d.t5.t5.i2, t5.t5.i1, t5.i1 AS top FROM d.t5",
     {"i2": {"t5.t5.i2:IDENTITY"}, "i1": {"t5.t5.i1:IDENTITY"}, "top": {"t5.i1:IDENTITY"}}, set()),
    ("SELECT d.c.info.* FROM c", {"city": {"c.info.city:IDENTITY"}, "geo": {"c.info.geo:IDENTITY"}}, set()),
])
def test_a_multi_part_name_is_the_relation_then_a_column_and_its_fields(sql, columns, indirect):
    st = extract_script(DDL + sql).statements[-1]
    assert st.warnings == () and st.confidence == 1.0
    assert {col: {f"{i.table.rsplit('.', 1)[-1]}.{i.field}:{i.subtype}" for i in inputs}
            for col, inputs in st.columns} == columns
    assert {f"{i.table.rsplit('.', 1)[-1]}.{i.field}:{i.subtype}" for i in st.indirect} == indirect
