"""lineage/sql/scopes.py: sqlglot's scopes built from what qualify's walk noted.

``scopes.traverse_scope`` stands in for sqlglot's ``traverse_scope`` for speed alone, so these tests hold
every scope it builds to sqlglot's own on the same tree: the same scopes in the same order, with the same
links, sources and collected nodes (the very nodes), for every attribute the column step and the resolver
read. A shape it does not take must be declined (``NotTakenError``), never built otherwise.
"""

from __future__ import annotations

import pytest
import sqlglot
from sqlglot import exp
from sqlglot.optimizer.scope import Scope, traverse_scope

from airflow_lineage_provider.lineage.sql import qualify as static
from airflow_lineage_provider.lineage.sql import scopes
from tests.helpers import tpcds_queries
from tests.integration.corpus import CASES as CORPUS

# Shapes taken: CTEs (chained, shadowing a table), derived tables, nested and correlated subqueries, joins
# (semi and anti too), set operations (nested, parenthesized, in a CTE, in a subquery), stars.
TAKEN = [
    "SELECT a, b FROM t WHERE c > 1",
    "SELECT t.a, u.b FROM t JOIN u ON t.k = u.k LEFT JOIN v ON v.k = u.k WHERE t.c IN (1, 2)",
    "WITH x AS (SELECT a, k FROM t), y AS (SELECT x.a FROM x JOIN u ON x.k = u.k) SELECT a FROM y",
    "WITH t AS (SELECT a FROM t) SELECT a FROM t",
    "WITH t AS (SELECT a FROM db.t) SELECT t.a, s.b FROM t, db.t AS s",
    "SELECT s.a FROM (SELECT a FROM (SELECT a, b FROM t) i WHERE b > 0) s",
    "SELECT a FROM t WHERE b IN (SELECT b FROM u WHERE u.c = t.c AND u.d IN (SELECT d FROM v))",
    "SELECT a, (SELECT MAX(b) FROM u WHERE u.k = t.k) AS m FROM t WHERE EXISTS (SELECT 1 FROM v WHERE v.k = t.k)",
    "SELECT a FROM t LEFT SEMI JOIN u ON t.k = u.k LEFT ANTI JOIN v ON t.k = v.k",
    "SELECT a FROM t UNION ALL SELECT a FROM u UNION SELECT b FROM v",
    "SELECT a FROM t UNION ALL (SELECT a FROM u EXCEPT SELECT a FROM v)",
    "(SELECT a FROM t) UNION (SELECT a FROM u ORDER BY a LIMIT 1)",
    "WITH x AS (SELECT a FROM t UNION SELECT a FROM u) SELECT a FROM x INTERSECT SELECT a FROM v",
    "SELECT a FROM t WHERE a IN (SELECT a FROM u UNION SELECT a FROM v)",
    "SELECT * FROM t JOIN (SELECT * FROM u) s ON t.k = s.k",
    "SELECT COUNT(*), SUM(a) FROM t GROUP BY b HAVING COUNT(*) > 1 ORDER BY 1",
    "SELECT a, ROW_NUMBER() OVER (PARTITION BY b ORDER BY c) AS r FROM t QUALIFY r = 1",
    "SELECT x.a FROM (SELECT a FROM t) x, (SELECT a FROM u) y WHERE x.a = y.a",
    "SELECT s.a FROM (SELECT a FROM t UNION ALL SELECT a FROM u) s",
    "SELECT explode(arr) AS e FROM t",
    "SELECT a FROM t JOIN t ON t.k = t.k",
    "SELECT * FROM range(10)",  # a table function with no column in its arguments: a table to sqlglot
    # Scopes that end where the walk goes on in the scope around them (the walk's marks give it back): several
    # subqueries in one WHERE with the outer select's columns after them, in CTEs, projections, derived tables,
    # unions inside a WHERE, HAVING after a WHERE's subquery, WHEREs nested three deep.
    "SELECT a FROM t WHERE b IN (SELECT b FROM u WHERE u.c > 0) AND c = (SELECT MAX(c) FROM v) AND d > 1",
    "WITH x AS (SELECT a FROM t WHERE a > (SELECT MIN(a) FROM u)), y AS (SELECT a FROM x WHERE EXISTS "
    "(SELECT 1 FROM v WHERE v.a = x.a)) SELECT y.a, (SELECT COUNT(*) FROM u) AS n FROM y WHERE y.a IN (SELECT a FROM x)",
    "SELECT (SELECT b FROM u WHERE u.k = s.k) AS b, s.a FROM (SELECT k, a FROM t WHERE a IN (SELECT a FROM v "
    "WHERE v.b IN (SELECT b FROM u))) s JOIN u ON u.k = s.k WHERE s.a > 0 ORDER BY s.a",
    "SELECT a, COUNT(*) FROM t WHERE a IN (SELECT a FROM u UNION SELECT a FROM v WHERE v.c > 1) GROUP BY a "
    "HAVING COUNT(*) > (SELECT COUNT(*) FROM u)",
    "SELECT z.a FROM (SELECT y.a FROM (SELECT a FROM t WHERE a > 1) y WHERE y.a < 9) z WHERE z.a IN "
    "(SELECT a FROM u) AND z.a <> 5",
]
# Shapes declined: laterals, table functions (a lateral or in FROM with a column alias list), a star of one relation, column alias lists, recursive CTEs,
# VALUES, a parenthesized join, pivots, struct stars, a query in a table function.
DECLINED = [
    "SELECT a, e FROM t LATERAL VIEW explode(arr) x AS e",
    "SELECT t.a, x.b FROM t, LATERAL (SELECT b FROM u WHERE u.k = t.k) x",
    "SELECT id FROM explode(array(1, 2)) AS x(id)",
    "SELECT t.* FROM t",
    "SELECT c FROM (SELECT a FROM t) AS s(c)",
    "WITH x(c) AS (SELECT a FROM t) SELECT c FROM x",
    "WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT n FROM r",
    "SELECT * FROM VALUES (1, 2) AS v(a, b)",
    "SELECT a FROM (t JOIN u ON t.k = u.k)",
    "SELECT * FROM t PIVOT (SUM(a) FOR b IN ('x', 'y'))",
    "SELECT s.* FROM (SELECT named_struct('a', 1) AS s) x",
]


def _walked(sql: str) -> tuple[exp.Expression, dict[int, list[exp.Expression]] | None]:
    tree = sqlglot.parse_one(sql, dialect="spark")
    walked = static._walk(tree, sql.lower())
    assert walked is not None
    return tree, walked.noted


def _ours(tree: exp.Expression, noted: dict[int, list[exp.Expression]] | None) -> list[Scope] | None:
    if noted is None:
        return None
    try:
        return scopes.traverse_scope(tree, noted)
    except scopes.NotTakenError:
        return None


def _ids(nodes: object) -> list[int]:
    return [id(n) for n in nodes]  # type: ignore[attr-defined]


def _source(value: object, index: dict[int, int]) -> tuple[str, int]:
    return ("scope", index[id(value)]) if isinstance(value, Scope) else ("node", id(value))


def _described(found: list[Scope]) -> list[dict[str, object]]:
    """Every attribute the column step and the resolver read, nodes by identity and scopes by position."""
    index = {id(s): i for i, s in enumerate(found)}
    out = []
    for s in found:
        out.append({
            "expression": id(s.expression),
            "scope_type": s.scope_type,
            "parent": index.get(id(s.parent)) if s.parent is not None else None,
            "can_be_correlated": s.can_be_correlated,
            "outer_columns": s.outer_columns,
            **{name: {k: _source(v, index) for k, v in getattr(s, name).items()}
               for name in ("sources", "lateral_sources", "cte_sources")},
            **{name: [index[id(c)] for c in getattr(s, name)]
               for name in ("subquery_scopes", "derived_table_scopes", "table_scopes", "cte_scopes",
                            "set_operation_scopes", "udtf_scopes")},
            **{name: _ids(getattr(s, name))
               for name in ("tables", "ctes", "subqueries", "derived_tables", "udtfs", "_raw_columns", "stars",
                            "table_columns", "join_hints", "comprehensions", "columns", "external_columns",
                            "local_columns", "pivots")},
            "column_index": s.column_index,
            "semi_or_anti_join_tables": s.semi_or_anti_join_tables,
            "scans_all_subscope_columns": s.scans_all_subscope_columns,
            "references": [(name, id(node)) for name, node in s.references],
            "selected_sources": _selected(s, index),
        })
    return out


def _selected(s: Scope, index: dict[int, int]) -> object:
    try:
        return {k: (id(node), _source(v, index)) for k, (node, v) in s.selected_sources.items()}
    except Exception as e:  # noqa: BLE001 - ``FROM t JOIN t``: both ways must refuse it alike
        return repr(e)


@pytest.mark.parametrize("sql", TAKEN)
def test_taken_shapes_build_sqlglots_scopes(sql: str) -> None:
    tree, noted = _walked(sql)
    ours = _ours(tree, noted)
    assert ours is not None
    assert _described(ours) == _described(traverse_scope(tree))


@pytest.mark.parametrize("sql", DECLINED)
def test_other_shapes_are_declined(sql: str) -> None:
    tree, noted = _walked(sql)
    assert _ours(tree, noted) is None
    assert traverse_scope(tree)  # sqlglot's builds them


def test_tpcds_queries_build_sqlglots_scopes() -> None:
    taken = 0
    queries = tpcds_queries()
    for name, sql in queries:
        tree, noted = _walked(sql)
        ours = _ours(tree, noted)
        if ours is not None:
            taken += 1
            assert _described(ours) == _described(traverse_scope(tree)), name
    assert taken >= len(queries) * 9 // 10  # the common shapes: what the speed is for


def test_corpus_queries_build_sqlglots_scopes_or_are_declined() -> None:
    taken = 0
    for case in CORPUS:
        try:
            statements = sqlglot.parse(case.sql, dialect="spark")
        except sqlglot.errors.ParseError:
            continue  # read by Spark's own parser (pipes.py, ...), not by these scopes
        for statement in statements:
            if not isinstance(statement, exp.Query) and statement is not None:
                statement = statement.expression  # the query of an INSERT, a CTAS, a view
            if not isinstance(statement, exp.Query) or "sqlglot.meta" in case.sql:
                continue
            walked = static._walk(statement, case.sql.lower())
            ours = _ours(statement, walked.noted if walked is not None else None)
            if ours is not None:
                taken += 1
                assert _described(ours) == _described(traverse_scope(statement)), case.sql
    assert taken >= 100
