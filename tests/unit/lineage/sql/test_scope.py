"""lineage/sql/scope.py: the resolver's fast paths, held to the slow paths they skip."""

from __future__ import annotations

import pytest
import sqlglot
from sqlglot import exp
from sqlglot.optimizer.scope import Scope

from airflow_lineage_provider.lineage.sql import SqlExtractor
from airflow_lineage_provider.lineage.sql.qualify import qualify
from airflow_lineage_provider.lineage.sql.render import cast_call
from airflow_lineage_provider.lineage.sql.scope import _UNNAMED, Resolver, _unnamed
from tests.helpers import TPCDS, tpcds_queries

DDL = """
CREATE TABLE emp (id BIGINT, name STRING, dept STRING, salary DOUBLE, hired DATE, info STRUCT<city: STRING>)
USING parquet;
CREATE TABLE dept (dept STRING, dname STRING) USING parquet;
"""

# Nesting, aliases, quoting, set operations, subqueries; with and without GROUPING SETS.
OWN = [
    "SELECT e.name AS `Who`, d.dname FROM emp e JOIN dept d ON e.dept = d.dept WHERE e.salary > 1",
    "WITH x AS (SELECT `name`, dept FROM emp) SELECT x.name, upper(x.dept), 1e3, CAST(1 AS INT) FROM x",
    "SELECT name FROM emp UNION ALL SELECT dname FROM dept ORDER BY 1",
    "SELECT * FROM (SELECT sum(salary), dept FROM emp GROUP BY dept) t WHERE t.dept IN (SELECT dept FROM dept)",
    "SELECT dept, name, count(*) FROM emp GROUP BY dept, name GROUPING SETS ((dept), ())",
    "SELECT dept, sum(salary) FROM emp GROUP BY CUBE (dept)",
    "SELECT e.info.city, to_timestamp(e.name), (SELECT max(salary) FROM emp) AS top FROM emp e",
    "SELECT dept FROM (SELECT dept, name FROM emp GROUP BY dept, name GROUPING SETS ((dept))) s",
]


@pytest.fixture(scope="module")
def statements() -> list[tuple[SqlExtractor, str]]:
    own = SqlExtractor()
    own.run(DDL)
    tpcds = SqlExtractor(database="tpcds")
    tpcds.run((TPCDS / "schema.sql").read_text())
    return [(own, sql) for sql in OWN] + [(tpcds, sql) for _, sql in tpcds_queries()]


def _resolver(x: SqlExtractor, sql: str) -> Resolver:
    tree = sqlglot.parse_one(sql, dialect="spark")
    text = sql.lower()
    query, _, using, root, wheres = qualify(tree, sql, text, x.catalog.database, x.schema())
    return Resolver(x.catalog, sql, text, query, using, root, wheres)


def test_a_statement_without_grouping_sets_has_no_key_null_in_every_row(statements) -> None:
    """``expression_origins`` asks ``null_keys`` only when a scope of the statement has GROUPING SETS: in any
    other statement, every scope's null keys are none."""
    told = 0
    for x, sql in statements:
        resolver = _resolver(x, sql)
        keys = [resolver.null_keys(scope) for scope in resolver.scopes]
        if not resolver._grouping_sets:
            assert not any(keys), sql
        else:
            told += 1
    assert told >= 2  # the flag is raised where GROUPING SETS are (OWN has two such statements)


def _unnamed_slow(p: exp.Expression, sql: str) -> exp.Expression | None:
    """``_unnamed`` as it was before a column's alias was told first: every test in its order."""
    if isinstance(p, exp.Subquery) and _UNNAMED.fullmatch(p.alias or ""):
        return p
    if not isinstance(p, exp.Alias):
        return None
    if p.alias.startswith("_col_") and _UNNAMED.fullmatch(p.alias):
        return None if type(p.this) is exp.Column else p.this
    if isinstance(p.this, exp.Cast) and isinstance(p.this.this, exp.Literal) and p.alias == p.this.this.name:
        return p.this
    if "start" in p.args["alias"].meta:
        return None
    if isinstance(p.this, exp.Literal) and p.this.is_number and "e" in p.this.this.lower():
        return p.this
    if isinstance(p.this, (exp.Bracket, exp.JSONExtract, exp.JSONExtractScalar)) and p.alias == p.this.output_name:
        return p.this
    if isinstance(p.this, exp.Cast) and isinstance(p.this.this, exp.Column) and p.alias == p.this.this.name \
            and cast_call(p.this, sql):
        return p.this
    return None


def test_the_unnamed_expression_of_a_projection_is_the_slow_paths(statements) -> None:
    """``_unnamed`` returns at once for an aliased column (none of its later tests can hold for one): the
    same expression as every test in turn, for every projection of every select."""
    seen = 0
    for x, sql in statements:
        resolver = _resolver(x, sql)
        for select in resolver.query.find_all(exp.Select):
            for p in select.expressions:
                assert _unnamed(p, sql) is _unnamed_slow(p, sql), (sql, p.sql())
                seen += 1
    assert seen > 1000


ORDERED = [
    "SELECT dept, sum(salary) AS total FROM emp GROUP BY dept ORDER BY total DESC",
    "SELECT upper(name) AS `Up`, salary * 2 AS s2 FROM emp ORDER BY `Up`, s2",
    "WITH x AS (SELECT dept, count(*) AS n FROM emp GROUP BY dept ORDER BY n) SELECT x.dept, x.n FROM x",
    "SELECT dept AS d FROM emp UNION SELECT dname FROM dept ORDER BY d",
    "SELECT t.s FROM (SELECT name, salary + 1 AS s FROM emp ORDER BY s) t ORDER BY t.s",
    "SELECT CASE WHEN salary > 1 THEN name END AS c, (SELECT max(dname) FROM dept) AS m FROM emp ORDER BY c, m",
]


def test_a_clause_naming_a_resolved_projection_reads_the_origins_found_for_it(statements) -> None:
    """``_condition_column`` takes the origins ``resolve`` found for a projection (``ORDER BY total``) rather
    than resolving it again: resolved anew, every such projection has the same origins."""
    own = statements[0][0]
    checked = 0
    for x, sql in [(own, sql) for sql in ORDERED] + statements:
        resolver = _resolver(x, sql)
        resolver.run()
        for select in resolver.query.find_all(exp.Select):
            scope = resolver.scope_of.get(id(select))
            for p in select.expressions if scope is not None else []:
                found = resolver._projection_origins.get(id(p))
                if found is not None:
                    assert resolver.expression_origins(scope, p) == found, (sql, p.sql())
                    checked += 1
    assert checked > 1000


PLAIN = [
    "SELECT E.Name, e.`dept`, upper(e.NAME) FROM emp E WHERE e.salary > 1",  # case and quoting as written
    "SELECT a.name, b.name AS boss FROM emp a JOIN emp b ON a.id = b.id",  # one table twice
    "SELECT x.n, x.d FROM (SELECT e.name AS n, e.dept AS d FROM emp e) x ORDER BY x.n",
    "SELECT d.dname FROM dept d WHERE d.dept IN (SELECT e.dept FROM emp e WHERE e.salary > 0)",
]


def _outcome(x, sql: str):
    result = _resolver(x, sql).run()
    return result.columns, result.indirect, result.inputs, result.warnings, result.confidence


def test_a_column_of_a_plain_table_has_the_origins_the_table_makes(statements, monkeypatch) -> None:
    """``column_origins`` reads a column of a table with a schema from the origins the table made so far
    (``TableInfo.origins_made``), asking ``_table_column`` only for one not made: the same lineage, inputs and
    warnings as when every column is asked for (nothing made yet)."""
    own = statements[0][0]
    cases = [(own, sql) for sql in PLAIN] + statements
    fast = [_outcome(x, sql) for x, sql in cases]
    fast = [_outcome(x, sql) for x, sql in cases]  # the tables' origins all made by now
    table_source = Resolver._table_source

    def none_made(self: Resolver, table: exp.Table):  # a plain table with no origin made: each column asked for
        src = table_source(self, table)
        if src.made is not None:
            src.made = {}
        return src

    monkeypatch.setattr(Resolver, "_table_source", none_made)
    for (x, sql), found in zip(cases, fast):
        assert _outcome(x, sql) == found, sql


def _projections_slow(select: exp.Select) -> dict[str, exp.Expression]:
    """``projections`` as it was made before: names as written first, then in lower case, the first of each kept."""
    out: dict[str, exp.Expression] = {}
    for p in select.expressions:
        out.setdefault(p.alias_or_name, p)
    for p in select.expressions:
        out.setdefault(p.alias_or_name.lower(), p)
    return out


REPEATED = [
    "SELECT e.name, e.name, upper(e.name) AS name FROM emp e",  # one name three times
    "SELECT x.Name, x.NAME FROM (SELECT name AS `Name`, dept AS `NAME` FROM emp) x",  # names of one case apart
    "SELECT s.* FROM (SELECT named_struct('City', 1) AS c, info FROM emp) s",
]


def test_the_projections_by_name_are_the_slow_paths(statements) -> None:
    """Each name (as written, or in lower case) finds the first projection of that name, as written first."""
    own = statements[0][0]
    seen = 0
    for x, sql in [(own, sql) for sql in REPEATED] + statements:
        resolver = _resolver(x, sql)
        for scope in resolver.scopes:
            if isinstance(scope.expression, exp.Select):
                slow = _projections_slow(scope.expression)
                found = resolver.projections(scope)
                assert found.keys() == slow.keys() and all(found[k] is slow[k] for k in slow), sql
                seen += 1
    assert seen > 400


def test_a_scope_is_its_own_key() -> None:
    """The resolver keys its memos by the scope itself, not its id: sound while sqlglot's Scope is hashed and
    compared by identity (a Scope comparing by content would take one scope's memos for another's)."""
    assert Scope.__hash__ is object.__hash__ and Scope.__eq__ is object.__eq__
