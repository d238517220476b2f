"""lineage/sql/render.py: the names Spark gives unnamed columns (the corpus checks them against Spark)."""

from __future__ import annotations

import pytest

from airflow_lineage_provider.lineage.sql.keywords import parse
from airflow_lineage_provider.lineage.sql.render import spark_name


@pytest.mark.parametrize(("call", "name"), [
    ("ceil(x)", "CEIL(x)"), ("CEIL(x)", "CEIL(x)"), ("ceiling(x)", "ceiling(x)"), ("ceil(x, 1)", "ceil(x, 1)"),
    ("floor(x)", "FLOOR(x)"), ("floor(x, 0)", "floor(x, 0)"),
    ("power(x, 2)", "POWER(x, 2)"), ("pow(x, 2)", "pow(x, 2)"),
    ("log10(x)", "LOG10(x)"), ("log2(x)", "LOG2(x)"), ("log(x)", "LOG(E(), x)"), ("log(2, x)", "LOG(2, x)"), ("ln(x)", "ln(x)"),
    ("signum(x)", "SIGNUM(x)"), ("sign(x)", "sign(x)"), ("pi()", "PI()"), ("e()", "E()"),
    ("round(x)", "round(x, 0)"), ("round(x, 2)", "round(x, 2)"), ("bround(x)", "bround(x, 0)"), ("positive(x)", "(+ x)"),
    ("power(ceil(x), 2)", "POWER(CEIL(x), 2)"), ("ceil(x) + 1", "(CEIL(x) + 1)"), ("sqrt(abs(x))", "SQRT(abs(x))"),
])
def test_math_calls_are_named_as_spark_names_them(call, name):
    sql = f"SELECT {call} FROM t"
    [projection] = parse(sql).expressions
    assert spark_name(projection, sql) == name
