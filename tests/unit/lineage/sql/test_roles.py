"""lineage/sql/roles.py: the role of each column an expression reads, by the class of each node on the way
(``collect_refs`` tells the classes apart in groups, a test per group: each kind is held here)."""

from __future__ import annotations

import pytest

from airflow_lineage_provider.lineage.sql.keywords import parse
from airflow_lineage_provider.lineage.sql.roles import collect_refs

T, A = "TRANSFORMATION", "AGGREGATION"


@pytest.mark.parametrize(("expression", "refs", "subs"), [
    # conditionals: what decides is conditional, what is chosen is not
    ("CASE WHEN a > 1 THEN b ELSE c END", [("a", T, False, True), ("b", T, False, False), ("c", T, False, False)], []),
    ("if(a, b, c)", [("a", T, False, True), ("b", T, False, False), ("c", T, False, False)], []),
    ("nullif(a, b)", [("a", T, False, False), ("b", T, False, True)], []),
    ("decode(a, 1, b, 2, c, d)",
     [("a", T, False, True), ("b", T, False, False), ("c", T, False, False), ("d", T, False, False)], []),
    ("count(a) FILTER (WHERE b > 1)", [("a", A, True, False), ("b", T, False, True)], []),
    # read otherwise than as their arguments
    ("percentile_cont(0.5) WITHIN GROUP (ORDER BY a)", [("a", A, False, False)], []),
    ("a IN (SELECT x FROM u)", [("a", T, False, False)], []),
    ("exists(arr, x -> x > a)", [("arr", T, False, False), ("a", T, False, False)], []),
    ("sum(a) OVER (PARTITION BY b)", [("a", A, False, False)], ["Window"]),
    ("rank() OVER (ORDER BY a)", [], ["Window"]),
    ("coalesce(t.a, (SELECT max(x) FROM u))", [("t.a", T, False, False)], ["Subquery"]),
    ("t.*", [], []),
    ("1 + 2", [], []),
    # operators and functions: their arguments
    ("a IN (b, 1)", [("a", T, False, False), ("b", T, False, False)], []),
    ("md5(a) || upper(b)", [("a", T, True, False), ("b", T, False, False)], []),
    ("-(a * `B`) + abs(t.c)", [("a", T, False, False), ('"B"', T, False, False), ("t.c", T, False, False)], []),
])
def test_each_kind_of_node_gives_its_columns_their_role(expression: str, refs: list, subs: list) -> None:
    [projection] = parse(f"SELECT {expression} FROM t").expressions
    found: list = []
    below: list = []
    collect_refs(projection, found, below, False, False, False, False)
    assert [(r.column.sql(), r.subtype, r.masking, r.conditional) for r in found] == refs
    assert [type(s).__name__ for s in below] == subs
