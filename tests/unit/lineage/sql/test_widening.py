"""lineage/sql/widening.py: a set operation's column widened to Spark's common type."""

from __future__ import annotations

import pytest
from sqlglot import exp

from airflow_lineage_provider.lineage.sql import extract_script
from airflow_lineage_provider.lineage.sql.widening import arithmetic_type, common_type, literal_type


@pytest.mark.parametrize(("types", "common"), [
    (["int", "bigint"], "bigint"), (["decimal(10,0)", "decimal(11,0)"], "decimal(11,0)"),
    (["int", "decimal(2,1)"], "decimal(11,1)"), (["text", "int"], "int"), (["float", "decimal(5,2)"], "double"),
    (["int", None], None), (["text", "date"], None),
])
def test_common_type(types, common):
    assert common_type(types) == common


def test_types_of_literals_and_sums():
    assert [literal_type(exp.Literal.number(n)) for n in ("1", "1.50", "3000000000")] == \
        ["int", "decimal(3,2)", "bigint"]
    assert arithmetic_type(exp.Add, "decimal(10,0)", "decimal(10,0)") == "decimal(11,0)"
    assert arithmetic_type(exp.Mul, "decimal(10,0)", "decimal(10,0)") is None


def test_a_branch_cast_with_loss_is_a_transformation_and_a_widening_one_is_not():
    st = extract_script("CREATE TABLE t1 (c1 INT, c2 STRING) USING parquet;\n"
                        "CREATE TABLE t2 (c1 DECIMAL(2,1), c2 INT) USING parquet;\n"
                        "SELECT * FROM t1 UNION ALL SELECT * FROM t2").statements[-1]
    assert {c: {(i.table.rsplit(".", 1)[-1], i.subtype) for i in inputs} for c, inputs in st.columns} == {
        "c1": {("t1", "IDENTITY"), ("t2", "TRANSFORMATION")}, "c2": {("t1", "TRANSFORMATION"), ("t2", "IDENTITY")}}


def test_a_table_the_script_made_has_the_types_a_run_saw_of_it():
    # A CTAS's column types are not read from its query; the schema cache (what the plans saw) tells them.
    from airflow_lineage_provider.lineage.schema_cache import SchemaCache

    cache = SchemaCache(None)
    cache.put("spark_catalog.default.t3", [("v", "decimal(10,0)")])
    script = ("CREATE TABLE t3 USING parquet AS SELECT * FROM VALUES (decimal(1)) tbl(v);\n"
              "SELECT v FROM t3 UNION ALL SELECT v + v AS v FROM t3")
    typed = extract_script(script, cache=cache).statements[-1]
    assert {(i.field, i.subtype) for _, inputs in typed.columns for i in inputs} == {("v", "TRANSFORMATION")}
    untyped = extract_script(script).statements[-1]
    assert {(i.field, i.subtype) for _, inputs in untyped.columns for i in inputs} == {
        ("v", "IDENTITY"), ("v", "TRANSFORMATION")}
