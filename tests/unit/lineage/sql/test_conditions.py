"""lineage/sql/conditions.py: the conditions step's fast paths, held to the walk they stand in for."""

from __future__ import annotations

import sys

import sqlglot
from sqlglot import exp

from airflow_lineage_provider.lineage.sql import SqlExtractor
from airflow_lineage_provider.lineage.sql.conditions import _CONDITION_PARTS, key_parts
from airflow_lineage_provider.lineage.sql.qualify import qualify
from tests.helpers import TPCDS, tpcds_queries

DDL = """
CREATE TABLE emp (id BIGINT, name STRING, dept STRING, salary DOUBLE, info STRUCT<city: STRING>) USING parquet;
CREATE TABLE dept (dept STRING, dname STRING) USING parquet;
"""

# Keys of every kind: columns (qualified, quoted, sorted, NULLS FIRST), expressions, struct paths, subqueries,
# positions and aliases, set operations, windows, GROUPING SETS / CUBE / ROLLUP, SORT / CLUSTER / DISTRIBUTE BY.
OWN = [
    "SELECT dept, name FROM emp GROUP BY dept, name ORDER BY dept DESC NULLS FIRST, name",
    "SELECT e.`dept` AS d, count(*) AS n FROM emp e GROUP BY e.`dept` ORDER BY n DESC, d",
    "SELECT upper(name) AS u FROM emp GROUP BY upper(name), salary + 1 ORDER BY upper(name), 1",
    "SELECT e.info.city FROM emp e GROUP BY e.info.city ORDER BY e.info.city",
    "SELECT name FROM emp ORDER BY (SELECT max(dname) FROM dept), salary * 2 ASC",
    "SELECT name FROM emp UNION SELECT dname FROM dept ORDER BY name",
    "SELECT name, rank() OVER (PARTITION BY dept ORDER BY salary DESC, id) FROM emp",
    "SELECT dept, name FROM emp GROUP BY dept, name GROUPING SETS ((dept), (name)) ORDER BY dept",
    "SELECT dept, sum(salary) FROM emp GROUP BY CUBE (dept) ORDER BY dept",
    "SELECT dept, sum(salary) FROM emp GROUP BY ROLLUP (dept, name)",
    "SELECT name FROM emp SORT BY name, salary",
    "SELECT name FROM emp CLUSTER BY name",
    "SELECT name FROM emp DISTRIBUTE BY dept SORT BY name DESC",
    "SELECT * FROM (SELECT dept, max(salary) AS m FROM emp GROUP BY dept ORDER BY m) t ORDER BY t.dept",
]


def test_the_key_parts_are_what_the_conditions_walk_of_the_clause_finds() -> None:
    """``key_parts`` stands in for the conditions step's walk of a GROUP BY / ORDER BY (``_CONDITION_PARTS``):
    the same nodes in the same order, on every clause of keys of TPC-DS and of statements of every kind of key."""
    own = SqlExtractor()
    own.run(DDL)
    tpcds = SqlExtractor(database="tpcds")
    tpcds.run((TPCDS / "schema.sql").read_text())
    clauses = 0
    kinds: set[str] = set()
    for x, sql in [(own, sql) for sql in OWN] + [(tpcds, sql) for _, sql in tpcds_queries()]:
        tree = sqlglot.parse_one(sql, dialect="spark")
        query = qualify(tree, sql, sql.lower(), x.catalog.database, x.schema())[0]
        for clause in query.find_all(exp.Group, exp.Order):
            assert [id(n) for n in key_parts(clause)] == [id(n) for n in _CONDITION_PARTS(clause)], (sql, clause.sql())
            clauses += 1
            kinds.add(type(clause).__name__)
    assert clauses > 150 and kinds >= {"Group", "Order", "Sort", "Distribute"}


# Conditions of every kind over qualified, unqualified and quoted columns: aliases an ORDER BY reads first, nesting,
# set operations, subqueries (correlated too), USING keys, struct paths, windows, HAVING, GROUPING SETS.
CONDITIONS = [
    "SELECT e.name FROM emp e JOIN dept d ON e.dept = d.dept WHERE e.salary > 10 AND d.dname <> 'x'",
    "SELECT name AS dept, salary FROM emp WHERE `dept` = 'a' ORDER BY dept, emp.salary DESC",
    "SELECT upper(name) AS n FROM emp GROUP BY upper(name) HAVING count(id) > 1 ORDER BY n",
    "SELECT * FROM (SELECT e.dept AS d, max(e.salary) AS m FROM emp e GROUP BY e.dept) t WHERE t.m > 1 ORDER BY t.d",
    "SELECT name FROM emp WHERE dept IN (SELECT dept FROM dept WHERE dname = emp.name) ORDER BY salary",
    "SELECT dept FROM emp WHERE salary > 1 UNION SELECT dept FROM dept WHERE dname LIKE 'a%' ORDER BY dept",
    "SELECT dept FROM emp INTERSECT SELECT d.dept FROM dept d WHERE d.dname IS NOT NULL",
    "SELECT dept, name FROM emp JOIN dept USING (dept) WHERE dept = 'x' AND dname = name ORDER BY dept",
    "SELECT e.info.city FROM emp e WHERE e.info.city = 'Oslo' ORDER BY e.info.city",
    "SELECT name, rank() OVER (PARTITION BY dept ORDER BY salary) AS r FROM emp QUALIFY r = 1",
    "SELECT CASE WHEN salary > 1 THEN name END AS n FROM emp e WHERE EXISTS (SELECT 1 FROM dept WHERE dept = e.dept)",
    "SELECT dept, sum(salary) AS s FROM emp GROUP BY dept, name GROUPING SETS ((dept), (dept, name)) ORDER BY s",
]


def test_a_qualified_column_of_a_condition_reads_what_the_condition_column_rule_reads(monkeypatch) -> None:
    """``_indirect_expr`` asks ``column_origins`` for a qualified column at once, without ``_condition_column``
    (whose rule it is): the documents are those of every column going through ``_condition_column``."""
    from airflow_lineage_provider.lineage.sql.scope import Resolver

    def documents() -> list[dict]:
        x = SqlExtractor()
        x.run(DDL)
        return [x.run(sql).to_dict() for sql in CONDITIONS]

    fast = documents()
    original = Resolver.column_origins

    def through_the_rule(self, scope, table, name):  # the fast path's call: made through the rule instead
        caller = sys._getframe(1)
        if caller.f_code.co_name == "_indirect_expr":
            return self._condition_column(scope, table, name, caller.f_locals["select_first"])
        return original(self, scope, table, name)

    monkeypatch.setattr(Resolver, "column_origins", through_the_rule)
    slow = documents()
    assert fast == slow
    assert sum(len(st["indirect"]) for doc in fast for st in doc["statements"]) > 40
