"""lineage/sql/columns.py: sqlglot's ``qualify_columns`` steps taken on scopes built once, for speed alone.

So these tests hold it to sqlglot's own: on every query the extractor qualifies (the corpus, TPC-DS,
the cases below), either the qualified tree is the one ``qualify_columns`` makes, node for node, or
the query is handed over as it was.
"""

from __future__ import annotations

from typing import Any

import pytest
from sqlglot import exp
from sqlglot.optimizer.qualify_columns import qualify_columns as sqlglots

from airflow_lineage_provider.lineage.sql import SqlExtractor
from airflow_lineage_provider.lineage.sql import qualify as step  # the module: its column step is patched
from airflow_lineage_provider.lineage.sql.columns import qualify_columns as ours
from tests.helpers import DATA, TPCDS, tpcds_queries
from tests.integration.corpus import CASES as CORPUS

DDL = """
CREATE TABLE emp (id BIGINT, name STRING, dept STRING, salary DOUBLE, info STRUCT<city: STRING>,
                  tags ARRAY<STRING>) USING parquet;
CREATE TABLE dept (dept STRING, dname STRING) USING parquet;
CREATE TABLE sales (id BIGINT, q STRING, amount DOUBLE) USING parquet;
CREATE TABLE `odd name` (k BIGINT, v STRING) USING parquet;
"""

# (query, whether the columns are qualified here or handed to sqlglot)
CASES = [
    ("SELECT e.name, dname FROM emp e JOIN dept d ON e.dept = d.dept WHERE salary > 10", True),
    ("SELECT * FROM emp JOIN dept ON emp.dept = dept.dept", True),
    ("SELECT d.*, name FROM emp, dept d WHERE emp.dept = d.dept", True),
    ("SELECT dept, count(*), sum(salary) AS total FROM emp GROUP BY 1 HAVING sum(salary) > 1 ORDER BY 2, total", True),
    ("SELECT dept, max(salary) AS m FROM emp GROUP BY dept HAVING m > 1 ORDER BY max(salary)", False),
    ("SELECT dept, max(salary) AS m FROM emp GROUP BY dept HAVING max(salary) > 1 ORDER BY max(salary)", True),
    ("WITH c AS (SELECT dept, salary * 2 AS s FROM emp) SELECT c.dept, s FROM c UNION ALL SELECT dept, 1 FROM dept "
     "ORDER BY 1", True),
    ("SELECT name FROM emp e WHERE salary > (SELECT avg(salary) FROM emp i WHERE i.dept = e.dept)", True),
    ("SELECT name FROM emp WHERE EXISTS (SELECT 1 FROM dept WHERE dept.dept = emp.dept AND dname = name)", True),
    ("SELECT (SELECT max(dname) FROM dept), upper(name), 'x' FROM emp", True),
    ("SELECT name FROM emp LEFT SEMI JOIN dept ON emp.dept = dept.dept", False),  # sqlglot's resolver reads dept.dept
    ("SELECT e.name FROM emp e LEFT ANTI JOIN dept d ON e.dept = d.dept", False),
    ("SELECT salary * 2 AS s FROM emp WHERE s > 1", False),  # an alias reference: written out by sqlglot
    ("SELECT * EXCEPT (salary) FROM emp", False),
    ("SELECT info.city FROM emp", False),  # a struct field
    ("SELECT id, t FROM emp LATERAL VIEW explode(tags) x AS t", False),
    ("SELECT * FROM sales PIVOT (sum(amount) FOR q IN ('q1', 'q2'))", False),
    ("SELECT a, b FROM nowhere", False),  # no schema
    ("SELECT dept FROM emp, dept", True),  # ambiguous: left unqualified, as sqlglot leaves it
    ("SELECT x.a FROM (SELECT name, dept FROM emp) AS x(a, b)", False),
    # Columns of no table given their source's identifier from one plan per source (``_Scope._plan``): many
    # columns of one source, a quoted alias, ambiguous and owned names side by side, nesting, a set operation,
    # a correlated subquery's own columns and the outer ones it reads.
    ("SELECT name, salary, dept, upper(name) FROM emp AS `Big E` WHERE salary > 1 AND name <> dept", True),
    ("SELECT id, amount, name, salary FROM sales s JOIN emp e ON s.id = e.id WHERE amount > salary", True),
    ("SELECT x.n, n, d, dname FROM (SELECT name AS n, dept AS d FROM emp) x JOIN dept ON d = dept.dept", True),
    ("SELECT n FROM (SELECT n, d FROM (SELECT name AS n, dept AS d FROM emp) a WHERE d > '') b", True),
    ("SELECT name, dept FROM emp WHERE salary > 1 UNION SELECT dname, dept FROM dept WHERE dname > dept", True),
    ("SELECT name FROM emp WHERE salary > (SELECT max(amount) FROM sales WHERE q = name AND amount > salary)", True),
    ("SELECT k, v, upper(v) FROM `odd name` WHERE k > 1 AND v IN (SELECT dname FROM dept WHERE dname > v)", True),
    # ``_stars`` looks at the projections only of a scope with a star outside an aggregate or a star column.
    ("SELECT count(*), max(name) FROM emp WHERE dept IN (SELECT dept FROM dept)", True),
    ("SELECT e.*, count(*) OVER () AS n FROM emp e", True),
    ("SELECT x.* FROM (SELECT * FROM dept) x WHERE dname > ''", True),
    ("SELECT * FROM (SELECT name, dept FROM emp) a UNION ALL SELECT `D`.* FROM dept AS `D`", True),
    ("WITH c AS (SELECT * FROM sales) SELECT q, (SELECT count(*) FROM c) AS n FROM c", True),
]


def tree(node: Any) -> Any:
    """Every node's class and arguments, keys included (a key set to None is not an absent key)."""
    if isinstance(node, exp.Expression):
        return type(node).__name__, tuple(sorted((k, tree(v)) for k, v in node.args.items()))
    if isinstance(node, list):
        return tuple(tree(v) for v in node)
    return node


class Held:
    """The column step, checked against sqlglot's on a copy of each query it is given."""

    def __init__(self) -> None:
        self.own = 0
        self.handed = 0
        self.failures: list[str] = []  # the extractor turns an exception into a warning: kept here

    def __call__(self, query: exp.Expression, schema: Any, noted: Any = None) -> Any:
        before = tree(query)
        copy = query.copy()
        try:
            theirs: Any = tree(sqlglots(copy, schema))
        except Exception as e:  # noqa: BLE001 - then ours must hand the query over
            theirs = e
        root = ours(query, schema, noted)  # on the scopes built from what qualify's walk noted, when it did
        if root is None:
            self.handed += 1
            if tree(query) != before:
                self.failures.append(f"handed over changed: {query.sql('spark')}")
        else:
            self.own += 1
            if isinstance(theirs, Exception) or tree(query) != theirs or root.expression is not query:
                self.failures.append(f"not sqlglot's tree ({theirs!r:.80}): {query.sql('spark')}")
        return root


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> Held:
    checker = Held()
    monkeypatch.setattr(step, "own_qualify_columns", checker)
    return checker


@pytest.mark.parametrize(("sql", "own"), CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_the_column_step_is_sqlglots_or_hands_over(sql: str, own: bool, held: Held,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    x = SqlExtractor()
    x.run(DDL)
    [st] = x.statement(sql)
    assert not held.failures
    assert (held.own, held.handed) == ((1, 0) if own else (0, 1)), st.to_dict()
    monkeypatch.setattr(step, "own_qualify_columns", lambda query, schema, noted=None: None)  # sqlglot's step, always
    [theirs] = x.statement(sql)
    assert st.to_dict() == theirs.to_dict()


def test_a_using_join_goes_to_sqlglot(held: Held) -> None:
    x = SqlExtractor()
    x.run(DDL)
    [st] = x.statement("SELECT name, dname FROM emp JOIN dept USING (dept)")
    assert held.own == 0 and st.columns


def test_tpcds_trees_are_sqlglots(held: Held) -> None:
    x = SqlExtractor(database="tpcds")
    x.run((TPCDS / "schema.sql").read_text())
    for _, sql in tpcds_queries():
        x.statement(sql)
    assert not held.failures
    # The speed is in the queries qualified here: all but those reading a struct-like path.
    assert held.own >= 99, (held.own, held.handed)


def test_corpus_trees_are_sqlglots(held: Held) -> None:
    base = SqlExtractor()
    base.run((DATA / "corpus_schema.sql").read_text())
    for case in CORPUS:
        x = SqlExtractor(catalog=base.catalog.copy())
        if case.setup:
            x.run(case.setup)
        x.statement(case.sql)
    assert not held.failures
    assert held.own > held.handed > 0


def test_identifiers_are_normalized_as_sqlglot_normalizes_them() -> None:
    """qualify.py's own walk for sqlglot's ``normalize_identifiers``, on every TPC-DS query and corpus case."""
    import sqlglot
    from sqlglot.optimizer.normalize_identifiers import normalize_identifiers

    texts = [sql for _, sql in tpcds_queries()] + [case.sql for case in CORPUS] + [
        "SELECT `value`, Name FROM parquet.`/Data/In` AS `T`", "SELECT A /* sqlglot.meta case_sensitive */ FROM T"]
    for sql in texts:
        try:
            parsed = sqlglot.parse_one(sql, dialect="spark")
        except sqlglot.errors.ParseError:
            continue
        if parsed is None:
            continue
        step._prepare(parsed)  # marks the identifiers of paths case-sensitive
        theirs = normalize_identifiers(parsed.copy(), dialect="spark")
        step._walk(parsed, sql.lower())  # lower-cases in place, as sqlglot's step does
        assert tree(parsed) == tree(theirs), sql


@pytest.mark.parametrize("sql", [
    "SELECT t.a FROM emp AS t",
    "SELECT `T 1`.a FROM emp AS `T 1` JOIN dept AS `select` ON `T 1`.dept = `select`.dept",
    "SELECT x.n FROM (SELECT name AS n FROM emp) AS x UNION ALL SELECT y.dname FROM dept AS y",
    "SELECT name FROM emp AS e WHERE e.salary > (SELECT avg(salary) FROM emp AS i WHERE i.dept = e.dept)",
    "WITH c AS (SELECT dept FROM emp) SELECT `c`.dept FROM c AS `c`",
])
def test_a_sources_identifier_made_without_keywords_is_the_one_made_with_them(sql: str) -> None:
    """``_identifier`` makes a column's table identifier with ``to_identifier(name, quoted)`` where the source's
    identifier has only those arguments (``_name_and_quoted``): the same arguments, in the same order, as
    ``Identifier(**args)`` makes; any other arguments are left to it."""
    from sqlglot import parse_one

    from airflow_lineage_provider.lineage.sql.columns import _name_and_quoted

    identifiers = list(parse_one(sql, dialect="spark").find_all(exp.Identifier))
    for given in identifiers + [exp.Identifier(this="x", quoted=None), exp.Identifier(this="y", quoted=True, x=1)]:
        args = dict(given.args)
        plain = _name_and_quoted(args)
        made = exp.to_identifier(*plain) if type(plain) is tuple else exp.Identifier(**plain)
        expected = exp.Identifier(**args)
        assert list(made.args.items()) == list(expected.args.items()), sql
        assert made.sql(dialect="spark") == expected.sql(dialect="spark")
    assert sum(type(_name_and_quoted(dict(i.args))) is tuple for i in identifiers) == len(identifiers)
