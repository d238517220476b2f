"""lineage/sql/qualify.py: the steps before resolution that stand in for parts of sqlglot's own.

The static extractor qualifies tables with one walk of its own where it can
(``_qualify_tables``) and walks trees with ``Finder``; both are there for speed
alone, so these tests hold them to what sqlglot would have done.
"""

from __future__ import annotations

import pytest
import sqlglot
from sqlglot import exp
from sqlglot.optimizer.normalize_identifiers import normalize_identifiers

from airflow_lineage_provider.lineage.sql import SqlExtractor
from airflow_lineage_provider.lineage.sql import qualify as static  # the module: its table walk is patched
from airflow_lineage_provider.lineage.sql.render import Finder
from tests.helpers import tpcds_queries

DDL = """
CREATE DATABASE IF NOT EXISTS other;
CREATE TABLE emp (id BIGINT, name STRING, dept STRING, salary DOUBLE, tags ARRAY<STRING>) USING parquet;
CREATE TABLE dept (dept STRING, dname STRING) USING parquet;
CREATE TABLE other.emp (id BIGINT, nick STRING) USING parquet;
CREATE TABLE sales (id BIGINT, q STRING, amount DOUBLE) USING parquet;
"""

# (query, whether the extractor's own walk qualifies every table, or sqlglot's qualify_tables must run too)
CASES = [
    ("SELECT e.name, d.dname FROM emp e JOIN dept d ON e.dept = d.dept WHERE e.salary > 10", True),
    ("SELECT name FROM emp WHERE dept IN (SELECT dept FROM dept WHERE dname = 'x')", True),
    ("WITH x AS (SELECT name, dept FROM emp) SELECT x.name, d.dname FROM x JOIN dept d ON x.dept = d.dept", True),
    ("SELECT nick FROM other.emp", True),
    ("SELECT id FROM emp UNION ALL SELECT id FROM other.emp", True),
    ("SELECT `value` FROM parquet.`/Data/In`", True),
    ("WITH a AS (SELECT name, dept FROM emp), b AS (SELECT name FROM a) SELECT b.name FROM b", True),
    # A table that names its database is a table, even where a CTE has its name.
    ("WITH emp AS (SELECT dept FROM dept) SELECT e.nick, emp.dept FROM other.emp e CROSS JOIN emp", True),
    # A CTE named like a table, read in its own body: that read is the table.
    ("WITH emp AS (SELECT name FROM emp WHERE salary > 1) SELECT name FROM emp", False),
    # Read in an earlier CTE's body, a later CTE's name is a table's.
    ("WITH a AS (SELECT dname FROM dept), dept AS (SELECT dept FROM emp) SELECT a.dname FROM a", False),
    # A WITH that is not the query's own: which names it covers takes scopes to tell.
    ("SELECT t.dept FROM (WITH dept AS (SELECT dept FROM emp) SELECT dept FROM dept) t JOIN dept ON t.dept = dept.dept",
     False),
    ("SELECT name FROM (SELECT name FROM emp)", False),  # a derived table with no name
    ("SELECT id, t FROM emp LATERAL VIEW explode(tags) x AS t", False),
    ("SELECT * FROM VALUES (1, 'a') AS v(id, name)", False),
    ("SELECT * FROM sales PIVOT (sum(amount) FOR q IN ('q1', 'q2'))", False),
    ("SELECT default.emp.name FROM default.emp", False),
]


@pytest.fixture(scope="module")
def extractor() -> SqlExtractor:
    x = SqlExtractor()
    x.run(DDL)
    return x


@pytest.mark.parametrize(("sql", "own"), CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_the_table_walk_decides_when_it_is_enough(sql: str, own: bool) -> None:
    query = normalize_identifiers(sqlglot.parse_one(sql, dialect="spark"), dialect="spark")
    assert static._qualify_tables(query, "default") is own


@pytest.mark.parametrize(("sql", "own"), CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_the_table_walk_gives_the_lineage_sqlglots_qualify_tables_gives(
        sql: str, own: bool, extractor: SqlExtractor, monkeypatch: pytest.MonkeyPatch) -> None:
    [ours] = extractor.statement(sql)
    monkeypatch.setattr(static, "_qualify_tables", lambda query, db, parts=None: False)  # sqlglot's step, always
    [theirs] = extractor.statement(sql)
    assert ours.to_dict() == theirs.to_dict()
    assert ours.columns and not ours.warnings and ours.confidence == 1.0, ours.to_dict()


def test_values_in_from_give_named_columns_with_no_source(extractor: SqlExtractor) -> None:
    [st] = extractor.statement("SELECT v.id, e.name, col1 FROM VALUES (1), (2) AS v(id) JOIN emp e ON e.id = v.id "
                               "CROSS JOIN VALUES (3)")
    assert not st.warnings
    columns = dict(st.columns)
    assert columns["id"] == () and columns["col1"] == ()
    assert [(i.table, i.field) for i in columns["name"]] == [("spark_catalog.default.emp", "name")]


def test_a_table_in_another_database_keeps_it(extractor: SqlExtractor) -> None:
    [st] = extractor.statement("SELECT e.nick, d.name FROM other.emp e JOIN emp d ON e.id = d.id")
    assert dict(st.columns)["nick"][0].table == "spark_catalog.other.emp"
    assert dict(st.columns)["name"][0].table == "spark_catalog.default.emp"


def _sqlglot_walk(root: exp.Expression, found: tuple[type, ...], pruned: tuple[type, ...]) -> list[exp.Expression]:
    return [n for n in root.walk(bfs=False, prune=lambda n: isinstance(n, pruned)) if isinstance(n, found)]


@pytest.mark.parametrize(("found", "pruned"), [
    ((exp.Column,), ()),
    ((exp.Column, exp.Subquery), (exp.Column, exp.Subquery)),
    ((exp.Binary,), (exp.Column, exp.Literal)),
    ((exp.Table, exp.With, exp.Subquery), (exp.Table,)),
    # Leaves looked for (the finder pushes no leaf it does not look for): literals, names, among the rest
    ((exp.Literal,), ()),
    ((exp.Literal, exp.Column), (exp.Column,)),
    ((exp.Identifier, exp.Null, exp.Boolean, exp.Var), ()),
    ((exp.Binary, exp.Literal, exp.Identifier), (exp.Subquery,)),
    # Classes not entered nor looked for (the finder pushes none of them): nothing in them is found
    ((exp.Identifier, exp.Binary), (exp.Column,)),
    ((exp.Literal, exp.Column), (exp.Subquery, exp.Window, exp.Case)),
])
def test_the_finder_finds_what_sqlglots_walk_finds_in_the_same_order(found: tuple, pruned: tuple) -> None:
    """On TPC-DS and the statements of ``LOWER_CASE`` and ``FINDER``: leaves in every place (literals, names,
    NULL, booleans), nesting, aliases, quoting, set operations, subqueries."""
    finder = Finder(found, pruned)
    nodes = 0
    for sql in [sql for _, sql in tpcds_queries()] + LOWER_CASE + FINDER:
        tree = sqlglot.parse_one(sql, dialect="spark")
        expected = _sqlglot_walk(tree, found, pruned)
        assert [id(n) for n in finder(tree)] == [id(n) for n in expected], sql
        nodes += len(expected)
    assert nodes > 1000  # the queries have plenty of each


FINDER = [
    "SELECT a + 1 = 2 AND NOT b IS NULL OR c = TRUE FROM t WHERE d <> 'x' AND e IN (1, NULL, FALSE)",
    "SELECT `Q`.`a b` - -1.5 AS `x y` FROM (SELECT 1 AS `a b` UNION SELECT 2 INTERSECT SELECT 3) AS `Q`",
    "SELECT x FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.k = t.k AND u.v > (SELECT max(v) - 1 FROM w))",
    "SELECT s.a.b, m['k'], arr[0] + 2 * (3 - y) / 4 % 5 FROM t s WHERE z BETWEEN 1 AND 2 OR z LIKE 'p%'",
    "SELECT CASE WHEN a > 1 THEN 'p' WHEN a IS NULL THEN NULL ELSE 'q' END, cast(b AS DECIMAL(7, 2)) FROM t",
    "SELECT sum(a) OVER (PARTITION BY b ORDER BY c ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t GROUP BY 1",
]


def test_the_identifier_walk_finds_what_the_table_walk_and_find_all_find() -> None:
    """``_walk`` lower-cases identifiers and, on the way, finds the table step's nodes and every select:
    the same nodes as ``_TABLE_PARTS`` and ``find_all(exp.Select)``, on every TPC-DS query and corpus case."""
    from tests.integration.corpus import CASES as CORPUS

    parts = selects = 0
    for sql in [sql for _, sql in tpcds_queries()] + [case.sql for case in CORPUS]:
        try:
            tree = sqlglot.parse_one(sql, dialect="spark")
        except sqlglot.errors.ParseError:
            continue
        if tree is None:
            continue
        expected_parts = sorted(id(n) for n in static._TABLE_PARTS(tree))  # a node may be in two places
        expected_selects = sorted(id(n) for n in tree.find_all(exp.Select))
        walked = static._walk(tree, sql.lower().replace("sqlglot.meta", ""))
        assert sorted(id(n) for n in walked.table_parts) == expected_parts, sql
        assert sorted(id(n) for n in walked.selects) == expected_selects, sql
        parts += len(expected_parts)
        selects += len(expected_selects)
    assert parts > 5000 and selects > 1000


# Literals and names in every place the walk passes over them: it skips literals and leaf values without a look.
LOWER_CASE = [
    "SELECT Name, 'MiXed' AS Lit FROM Emp WHERE Dept IN ('A', 'b', 1, 2.5) AND Salary BETWEEN 1 AND 2",
    "SELECT CASE WHEN E.Salary > 10 THEN 'HIGH' ELSE `Low` END AS Band FROM Emp AS E",
    "SELECT D.DName, count(*) FROM Dept D JOIN (SELECT Dept, 1 AS One FROM Emp WHERE Id = 3) X ON X.Dept = D.Dept "
    "GROUP BY D.DName HAVING sum(X.One) > 2 ORDER BY 2 DESC LIMIT 10",
    "WITH Cte AS (SELECT Id, array(1, 2, Id) AS Arr FROM Emp) SELECT Cte.Arr[0], named_struct('K', Cte.Id) FROM Cte",
    "SELECT Id FROM Emp UNION ALL SELECT coalesce(Id, -1) FROM Other.Emp WHERE Nick LIKE 'X%'",
    "SELECT cast(Salary AS DECIMAL(7, 2)), date_add(DATE '2000-01-01', 30), INTERVAL 3 DAYS FROM Emp",
]


def test_the_walk_lower_cases_names_as_sqlglots_normalize_identifiers_does() -> None:
    """``_walk`` stands in for ``normalize_identifiers``: the same tree after either, on TPC-DS and the statements
    above (the walk passes over literals and leaf values without entering them)."""
    for sql in [sql for _, sql in tpcds_queries()] + LOWER_CASE:
        ours, theirs = sqlglot.parse_one(sql, dialect="spark"), sqlglot.parse_one(sql, dialect="spark")
        static._walk(ours, sql.lower())
        normalize_identifiers(theirs, dialect="spark")
        assert ours.sql("spark") == theirs.sql("spark"), sql


def test_the_where_columns_are_what_the_conditions_walk_of_the_where_finds(extractor: SqlExtractor) -> None:
    """``where_columns`` stands in for the conditions step's walk of a WHERE (``_CONDITION_PARTS``): where
    it gives a WHERE's columns, they are the walk's nodes, the same and in the same order; a WHERE with more
    than columns below it (a subquery, a struct path) or a statement with ``GROUPING`` is left to the walk."""
    from airflow_lineage_provider.lineage.sql.conditions import _CONDITION_PARTS
    from tests.helpers import TPCDS

    tpcds = SqlExtractor(database="tpcds")
    tpcds.run((TPCDS / "schema.sql").read_text())
    own = [
        "SELECT name FROM emp WHERE salary > 10 AND (dept = 'a' OR name LIKE 'b%')",
        "SELECT count(*) FILTER (WHERE salary > 1) AS n FROM emp WHERE dept = 'x'",  # a WHERE in a FILTER too
        "WITH x AS (SELECT name, dept FROM emp WHERE salary > 1) SELECT x.name FROM x JOIN dept d ON x.dept = d.dept "
        "WHERE d.dname = 'a'",
        "SELECT name FROM (SELECT name, salary FROM emp WHERE id > 1) t WHERE t.salary > 1",
    ]
    declined = [
        "SELECT name FROM emp WHERE dept IN (SELECT dept FROM dept WHERE dname = 'x')",  # the outer WHERE
        "SELECT dept FROM emp WHERE salary > 1 GROUP BY dept GROUPING SETS ((dept))",
    ]
    fast = 0
    for x, sql in [(tpcds, sql) for _, sql in tpcds_queries()] + [(extractor, sql) for sql in own + declined]:
        tree = sqlglot.parse_one(sql, dialect="spark")
        query, _, _, _, wheres = static.qualify(tree, sql, sql.lower(), x.catalog.database, x.schema())
        for where in query.find_all(exp.Where):
            if id(where) in wheres:
                assert [id(n) for n in wheres[id(where)]] == [id(n) for n in _CONDITION_PARTS(where.this)], sql
                fast += 1
        if sql in own:
            assert len(wheres) == len(list(query.find_all(exp.Where))), sql
        if sql == declined[0]:
            assert len(wheres) == 1 and id(query.args["where"]) not in wheres, sql  # the inner WHERE alone
        if sql == declined[1]:
            assert not wheres
    assert fast > 200  # most TPC-DS WHEREs hold columns alone


@pytest.mark.parametrize("sql", [
    "SELECT `Value` AS `My Value` FROM parquet.`/Data/In`",
    "SELECT a.Id FROM parquet.`/Data/A` a JOIN Emp e ON a.Id = e.ID WHERE e.Name IN (SELECT `Name` FROM json.`s3://B/Names`)",
    "SELECT x FROM (SELECT X FROM csv.`/In/Part=1` UNION ALL SELECT Y FROM `Delta`.`/Tbl/V2`) t",
    "WITH c AS (SELECT * FROM orc.`/Data/C` AS `C`) SELECT `C`.* FROM c JOIN text.`/Logs/X` l ON c.k = l.value",
    "SELECT * FROM Parquet.`/Upper/Format` p, other.`Emp` e, `Other`.`/Not/A/Path` n",
    "SELECT `Order Count` FROM t WHERE k IN (SELECT K FROM avro.`/A/B` UNION SELECT K FROM binaryfile.`/C/D`)",
])
def test_the_identifier_walk_keeps_a_paths_case_as_prepares_marks_do(sql: str) -> None:
    """``_walk`` tells a path (``_is_path``) where it lower-cases names, without the marks ``_prepare``'s walk of
    every table leaves: the names sqlglot's walk of identifiers leaves, paths marked first (the case of each kept)."""
    def names(ours: bool) -> list[tuple[str, str]]:
        tree = sqlglot.parse_one(sql, dialect="spark")
        static._prepare(tree, walk=not ours)
        if ours:
            static._walk(tree, sql.lower())
        else:
            normalize_identifiers(tree, dialect="spark")
        return [(identifier.arg_key, identifier.this) for identifier in tree.find_all(exp.Identifier)]

    assert names(True) == names(False)
    assert any(any(c.isupper() for c in name) for _, name in names(True))  # a path's case kept
