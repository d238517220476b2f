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
