"""lineage/sql/render.py: the names Spark gives unnamed columns (the corpus checks them against Spark)."""

from __future__ import annotations

import pytest
import sqlglot
from sqlglot import exp

from airflow_lineage_provider.lineage.sql.keywords import parse
from airflow_lineage_provider.lineage.sql.render import FindAll, spark_name


def _named(expression: str) -> str:
    """Spark's name of ``expression`` as the one unnamed column of ``SELECT .. FROM t``."""
    sql = f"SELECT {expression} FROM t"
    [projection] = parse(sql).expressions
    return spark_name(projection, sql)


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
    assert _named(call) == name


@pytest.mark.parametrize(("call", "name"), [
    ("ucase(s)", "ucase(s)"), ("lcase(s)", "lcase(s)"), ("char_length(s)", "char_length(s)"), ("len(s)", "len(s)"),
    ("sha1(s)", "sha1(s)"), ("var_samp(x)", "var_samp(x)"), ("rpad(s, 5)", "rpad(s, 5,  )"), ("lpad(s, 5, 'x')", "lpad(s, 5, x)"),
    ("split(s, ',')", "split(s, ,, -1)"), ("instr(s, 'a')", "instr(s, a)"), ("locate('a', s)", "locate(a, s, 1)"),
    ("position('a' IN s)", "locate(a, s, 1)"), ("months_between(a, b)", "months_between(a, b, true)"),
    ("sort_array(arr)", "sort_array(arr, true)"), ("percentile_approx(x, 0.5)", "percentile_approx(x, 0.5, 10000)"),
    ("overlay(s PLACING t FROM 2)", "overlay(s, t, 2, -1)"), ("date_sub(d, 1)", "date_sub(d, 1)"),
    ("date_trunc('MONTH', ts)", "date_trunc(MONTH, ts)"), ("trunc(d, 'MM')", "trunc(d, MM)"),
    ("extract(year FROM ts)", "extract(year FROM ts)"), ("EXTRACT(Month FROM ts)", "extract(Month FROM ts)"),
    ("timestampadd(HOUR, 1, ts)", "timestampadd(HOUR, 1, ts)"), ("isnull(s)", "(s IS NULL)"),
    ("isnotnull(s)", "(s IS NOT NULL)"), ("exists(arr, a -> a > 0)",
                                          "exists(arr, lambdafunction((namedlambdavariable() > 0), namedlambdavariable()))"),
])
def test_calls_are_named_as_called_with_the_defaults_spark_writes_out(call, name):
    assert _named(call) == name


@pytest.mark.parametrize(("call", "name"), [
    ("from_json(j, 'a INT')", "from_json(j)"), ("regexp_like(s, 'a')", "REGEXP_LIKE(s, a)"), ("regexp(s, 'a')", "REGEXP(s, a)"),
    ("s RLIKE 'a'", "RLIKE(s, a)"), ("regexp_instr(s, 'a')", "regexp_instr(s, a, 0)"), ("s LIKE ANY ('a%', 'b')", "likeany(s)"),
    ("s NOT LIKE ALL ('a')", "notlikeall(s)"), ("to_varchar(x, '9')", "to_char(x, 9)"), ("collate(s, 'UTF8_LCASE')",
                                                                                       "collate(s, UTF8_LCASE)"),
    ("current_database()", "current_schema()"), ("bit_get(i, 0)", "bit_get(i, 0)"), ("i >> 1", "(i >> 1)"),
    ("shiftright(i, 1)", "shiftright(i, 1)"), ("array_size(a)", "array_size(a)"), ("sentences(s)", "sentences(s, , )"),
    ("ts + INTERVAL 1 HOUR", "ts + INTERVAL '01' HOUR"), ("ts - INTERVAL 2 DAYS", "ts - INTERVAL '2' DAY"),
    ("to_unix_timestamp(ts)", "to_unix_timestamp(ts, yyyy-MM-dd HH:mm:ss)"), ("to_utc_timestamp(ts, 'PST')",
                                                                              "to_utc_timestamp(ts, PST)"),
    ("make_interval(i)", "make_interval(i, 0, 0, 0, 0, 0, 0.000000)"), ("localtimestamp()", "localtimestamp()"),
    ("int(x + 1)", "(x + 1)"), ("upper(string(i))", "upper(i)"),
])
def test_more_calls_are_named_as_spark_names_them(call, name):
    assert _named(call) == name


@pytest.mark.parametrize(("expression", "name"), [
    ("1e3", "1000.0"), ("1.5BD", "1.5"), ("i IS DISTINCT FROM 1", "(NOT (i <=> 1))"), ("NOT s IS NULL", "(NOT (s IS NULL))"),
    ("s IS NOT NULL", "(s IS NOT NULL)"), ("trim('x', s)", "TRIM(BOTH x FROM s)"),
    ("struct(i AS k, s) = named_struct('a', 1)", "(struct(i AS k, s) = named_struct(a, 1))"),
    ("mode() WITHIN GROUP (ORDER BY s)", "mode() WITHIN GROUP (ORDER BY s DESC)"),
    ("mode() WITHIN GROUP (ORDER BY s DESC)", "mode() WITHIN GROUP (ORDER BY s)"),
])
def test_literals_and_operators_are_named_as_spark_names_them(expression, name):
    assert _named(expression) == name


@pytest.mark.parametrize(("call", "name"), [
    ("dateadd(MONTH, 1, d)", "timestampadd(MONTH, 1, d)"), ("date_add(d, 1)", "date_add(d, 1)"), ("space(i)", "space(i)"),
    ("unix_date(d)", "unix_date(d)"), ("FIRST_VALUE(s) IGNORE NULLS", "first(s)"), ("LAST_VALUE(s) RESPECT NULLS", "last(s)"),
])
def test_calls_sqlglot_rewrites_keep_spark_s_names(call, name):
    assert _named(call) == name


@pytest.mark.parametrize(("literal", "name"), [
    ("TIMESTAMP '2016-01-01 20:54:00.000'", "TIMESTAMP '2016-01-01 20:54:00'"),
    ("TIMESTAMP '2016-01-01 20:54:00.100'", "TIMESTAMP '2016-01-01 20:54:00.1'"),
    ("TIMESTAMP '2016-1-1 1:2:3'", "TIMESTAMP '2016-01-01 01:02:03'"), ("TIMESTAMP '2016-01-01'", "TIMESTAMP '2016-01-01 00:00:00'"),
    ("DATE '2024-1-5'", "DATE '2024-01-05'"), ("TIMESTAMP '2016-01-01 10:00:00 UTC'", "TIMESTAMP '2016-01-01 10:00:00 UTC'"),
])
def test_datetime_literals_are_written_as_spark_writes_their_values(literal, name):
    assert _named(f"coalesce(ts, {literal})") == f"coalesce(ts, {name})"


# ``FindAll`` stands in for ``find_all`` for speed alone: the same nodes in the same (breadth-first) order,
# where the order says which spelling of a name is kept.
_MY_STATEMENTS = [
    "SELECT `Id`, t.Name AS `Full Name` FROM db.T AS t WHERE t.x IN (SELECT MAX(y) AS M FROM u)",
    "WITH c AS (SELECT a AS A1, b FROM t) SELECT c.* FROM c JOIN (SELECT A1 AS Z FROM c) AS d(Q) ON c.a1 = d.q",
    "SELECT * FROM (SELECT k AS K, v FROM t UNION ALL SELECT k, v AS V FROM u) s ORDER BY 1",
    "SELECT a.* FROM parquet.`/Data/In` a LEFT JOIN b USING (id) NATURAL JOIN c",
    "SELECT x, (SELECT SUM(z) AS s FROM w WHERE w.k = t.k) AS inner_sum FROM t LATERAL VIEW explode(arr) e AS el",
    "SELECT * REPLACE (a + 1 AS a) FROM VALUES (1, 'x') AS v(A, B)",
    "SELECT 1",
    # Columns that hold more than names (``t.*`` and its star's queries, aliases), and names only (``FindAll``
    # does not queue those): quoted, with a db and a catalog, in lists, in conditions, in set operations.
    "SELECT t.* REPLACE ((SELECT max(x) AS M FROM u) AS a) FROM t",
    "SELECT s.* EXCEPT (a) FROM (SELECT a AS A, b FROM t) s WHERE s.b IN (SELECT c FROM w)",
    "SELECT cat.db.t.a, `Q`.`b` AS B FROM cat.db.t JOIN q AS `Q` ON t.a = `Q`.b",
    "SELECT a FROM t WHERE t.a > 1 UNION ALL SELECT u.b AS A FROM u JOIN (SELECT k FROM v) AS x ON u.k = x.k",
    "SELECT count(t.*), max(b) OVER (PARTITION BY t.a ORDER BY `b`) AS m FROM t GROUP BY t.a, b",
]


@pytest.mark.parametrize("found", [
    (exp.Table,), (exp.Alias, exp.TableAlias), (exp.Table, exp.Join), (exp.Column,), (exp.Identifier,),
    (exp.Literal, exp.Select), (exp.Expression,),
])
def test_find_all_finds_what_sqlglots_find_all_finds_in_the_same_order(found: tuple) -> None:
    from tests.helpers import tpcds_queries

    finder = FindAll(*found)
    nodes = 0
    for sql in _MY_STATEMENTS + [sql for _, sql in tpcds_queries()]:
        tree = sqlglot.parse_one(sql, dialect="spark")
        expected = list(tree.find_all(*found))
        assert [id(n) for n in finder(tree)] == [id(n) for n in expected], sql
        for node in expected[:3]:  # from any node too, a leaf included
            assert [id(n) for n in finder(node)] == [id(n) for n in node.find_all(*found)], sql
        nodes += len(expected)
    assert nodes > 500
