"""lineage/plan/expressions.py (and tree.decode) on expression trees written by hand in Spark's flat JSON form.

``TreeNode.toJSON`` writes a tree as a pre-order list; a node's ``num-children``
says how many of the following subtrees are its children. The helpers below
build such lists: ``node("Add", x, y)`` is ``[Add] + x + y``.
"""

from __future__ import annotations

import pytest

from airflow_lineage_provider.lineage.model import AGGREGATION, IDENTITY, TRANSFORMATION
from airflow_lineage_provider.lineage.plan.expressions import (
    Reference,
    expr_id,
    is_identity,
    references,
    render,
    strip_alias,
)
from airflow_lineage_provider.lineage.plan.tree import decode, named_outputs, scala_seq

PKG = "org.apache.spark.sql.catalyst.expressions."


def node(cls: str, *children: list[dict], **fields) -> list[dict]:
    """A node of class ``cls`` (under ``expressions.`` unless dotted) followed by its children's subtrees."""
    head = {"class": cls if "." in cls else PKG + cls, "num-children": len(children)}
    if len(children) > 1:
        head["children"] = list(range(len(children)))
    elif children:
        head["child"] = 0
    head.update(fields)
    return [head] + [item for child in children for item in child]


def attr(name: str, eid: int, data_type: str = "string", qualifier: str | list = "[]") -> list[dict]:
    return node("AttributeReference", name=name, dataType=data_type, nullable=True,
                exprId={"product-class": PKG + "ExprId", "id": eid}, qualifier=qualifier)


def lit(value, data_type: str) -> list[dict]:
    """Spark writes a literal's value as a string (None for NULL)."""
    return node("Literal", value=value, dataType=data_type)


def alias(child: list[dict], name: str, eid: int) -> list[dict]:
    return node("Alias", child, name=name, exprId={"product-class": PKG + "ExprId", "id": eid}, qualifier=[])


def cast(child: list[dict], data_type: str) -> list[dict]:
    return node("Cast", child, dataType=data_type, timeZoneId=None)


def agg(function: list[dict], distinct: bool = False, filter_: list[dict] | None = None) -> list[dict]:
    """AggregateExpression: the function is child 0, the FILTER condition (if any) child 1."""
    children = [function] + ([filter_] if filter_ else [])
    return node("aggregate.AggregateExpression", *children, aggregateFunction=0,
                mode={"object": PKG + "aggregate.Complete$"}, isDistinct=distinct,
                filter=1 if filter_ else None, resultId={"id": 999})


def agg_fn(cls: str, *children: list[dict]) -> list[dict]:
    return node(PKG + "aggregate." + cls, *children)


A_ID = attr("id", 1, "integer", "[a]")
A_NAME = attr("name", 2, "string", "[a]")
B_COMPANY = attr("company_name", 3, "string", "[b]")
A_AMOUNT = attr("amount", 4, "long", "[a]")
A_STATUS = attr("status", 5, "string", "[a]")
A_EMAIL = attr("email", 6, "string", "[a]")


def refs(flat: list[dict]) -> list[tuple[int, str, str, bool, bool]]:
    return [(r.expr_id, r.name, r.subtype, r.masking, r.conditional) for r in references(decode(flat))]


# -- tree.decode ----------------------------------------------------------------------


def test_decode_builds_children_in_order():
    tree = decode(node("Concat", A_NAME, node("Upper", B_COMPANY), lit("x", "string")))
    assert tree.cls == "Concat"
    assert tree.is_expression
    assert [c.cls for c in tree.children] == ["AttributeReference", "Upper", "Literal"]
    assert tree.children[0].get("name") == "name"
    assert tree.children[1].children[0].get("name") == "company_name"
    assert [n.cls for n in tree.walk()] == ["Concat", "AttributeReference", "Upper", "AttributeReference", "Literal"]


def test_decode_strips_scala_object_dollar_and_package():
    tree = decode([{"class": "org.apache.spark.sql.catalyst.plans.logical.OneRowRelation$", "num-children": 0}])
    assert tree.cls == "OneRowRelation"
    assert not tree.is_expression
    assert tree.children == ()


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("[a]", ["a"]), ("[spark_catalog, demo, t]", ["spark_catalog", "demo", "t"]), ("[]", []), ([], []),
     (["x", "y"], ["x", "y"]), (None, []), ("plain", [])],
)
def test_scala_seq(raw, expected):
    assert scala_seq(raw) == expected


def test_expr_id_and_strip_alias():
    tree = decode(alias(alias(A_NAME, "n1", 10), "n2", 11))
    assert expr_id(tree) == 11
    inner = strip_alias(tree)
    assert inner.cls == "AttributeReference"
    assert expr_id(inner) == 2
    assert expr_id(decode(lit("1", "integer"))) is None


# -- render ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flat", "sql"),
    [
        pytest.param(A_ID, "a.id", id="qualified"),
        pytest.param(attr("id", 1, "integer", "[spark_catalog, demo, ods_users]"), "ods_users.id",
                     id="table-qualified"),
        pytest.param(attr("id", 1, "integer", []), "id", id="unqualified"),
        pytest.param(attr("id", 1, "integer", "[__auto_generated_subquery_name]"), "id", id="generated-qualifier"),
        pytest.param(attr("my col", 1, "string", "[a]"), "a.`my col`", id="quoted-name"),
        pytest.param(attr("a`b", 1, "string", []), "`a``b`", id="backquote-in-name"),
        pytest.param(attr("1st", 1, "string", []), "`1st`", id="leading-digit"),
        pytest.param(alias(A_NAME, "renamed", 9), "a.name", id="alias"),
        pytest.param(node("Add", A_ID, lit("1", "integer")), "(a.id + 1)", id="infix-add"),
        pytest.param(node("Multiply", node("Add", A_ID, lit("1", "integer")), A_AMOUNT),
                     "((a.id + 1) * a.amount)", id="nested-infix"),
        pytest.param(node("And", node("EqualTo", A_STATUS, lit("ok", "string")), node("IsNotNull", A_ID)),
                     "((a.status = 'ok') AND (a.id IS NOT NULL))", id="and-isnotnull"),
        pytest.param(node("Not", node("IsNull", A_ID)), "(NOT (a.id IS NULL))", id="not-isnull"),
        pytest.param(node("Concat", A_NAME, B_COMPANY), "concat(a.name, b.company_name)", id="function"),
        pytest.param(node("DateFormatClass", A_NAME, lit("yyyyMMdd", "string"), timeZoneId=None),
                     "date_format(a.name, 'yyyyMMdd')", id="date-format"),
        pytest.param(node("CaseWhen", node("EqualTo", A_STATUS, lit("ok", "string")), lit("1", "integer"),
                          lit("0", "integer")),
                     "CASE WHEN (a.status = 'ok') THEN 1 ELSE 0 END", id="case-when-else"),
        pytest.param(node("CaseWhen", node("GreaterThan", A_AMOUNT, lit("10", "long")), A_NAME,
                          node("LessThan", A_AMOUNT, lit("0", "long")), B_COMPANY),
                     "CASE WHEN (a.amount > 10L) THEN a.name WHEN (a.amount < 0L) THEN b.company_name END",
                     id="case-when-two-branches"),
        pytest.param(node("If", node("GreaterThan", A_AMOUNT, lit("0", "long")), A_NAME, lit(None, "string")),
                     "if((a.amount > 0L), a.name, NULL)", id="if"),
        pytest.param(cast(A_ID, "long"), "CAST(a.id AS BIGINT)", id="cast-bigint"),
        pytest.param(cast(A_NAME, "date"), "CAST(a.name AS DATE)", id="cast-date"),
        pytest.param(cast(A_AMOUNT, "decimal(10,2)"), "CAST(a.amount AS DECIMAL(10,2))", id="cast-decimal"),
        pytest.param(cast(lit("5", "integer"), "long"), "5", id="implicit-literal-cast"),
        pytest.param(node("In", A_ID, lit("1", "integer"), lit("2", "integer")), "(a.id IN (1, 2))", id="in"),
        pytest.param(agg(agg_fn("Sum", A_AMOUNT)), "sum(a.amount)", id="sum"),
        pytest.param(agg(agg_fn("Count", A_ID), distinct=True), "count(DISTINCT a.id)", id="count-distinct"),
        pytest.param(agg(agg_fn("Count", lit("1", "integer"))), "count(*)", id="count-star"),
        pytest.param(agg(agg_fn("Sum", A_AMOUNT), filter_=node("EqualTo", A_STATUS, lit("ok", "string"))),
                     "sum(a.amount) FILTER (WHERE (a.status = 'ok'))", id="aggregate-filter"),
        pytest.param(node("Md5", cast(A_EMAIL, "binary")), "md5(CAST(a.email AS BINARY))", id="md5"),
    ],
)
def test_render(flat, sql):
    assert render(decode(flat)) == sql


@pytest.mark.parametrize(
    ("value", "data_type", "sql"),
    [
        ("abc", "string", "'abc'"),
        ("it's", "string", r"'it\'s'"),
        ("a\\b", "string", r"'a\\b'"),
        ("", "string", "''"),
        (None, "string", "NULL"),
        (None, "integer", "NULL"),
        ("42", "integer", "42"),
        ("42", "long", "42L"),
        ("1.5", "double", "1.5"),
        ("12.50", "decimal(4,2)", "12.50"),
        ("true", "boolean", "true"),
        ("2024-01-31", "date", "DATE '2024-01-31'"),
        ("2024-01-31 10:00:00", "timestamp", "TIMESTAMP '2024-01-31 10:00:00'"),
        ("2024-01-31 10:00:00", "timestamp_ntz", "TIMESTAMP '2024-01-31 10:00:00'"),
    ],
)
def test_render_literal(value, data_type, sql):
    assert render(decode(lit(value, data_type))) == sql


# -- identity -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flat", "identity"),
    [
        pytest.param(A_ID, True, id="attribute"),
        pytest.param(alias(A_ID, "x", 9), True, id="aliased"),
        pytest.param(cast(A_ID, "long"), True, id="int-to-long"),
        pytest.param(alias(cast(cast(attr("b", 7, "byte"), "integer"), "double"), "x", 9), True,
                     id="byte-int-double"),
        pytest.param(cast(A_ID, "decimal(20,0)"), True, id="int-to-decimal"),
        pytest.param(cast(A_ID, "integer"), True, id="same-type"),
        pytest.param(cast(A_AMOUNT, "integer"), False, id="long-to-int-narrows"),
        pytest.param(cast(A_NAME, "integer"), False, id="string-to-int"),
        pytest.param(cast(A_ID, "string"), False, id="int-to-string"),
        pytest.param(node("Upper", A_NAME), False, id="function"),
        pytest.param(lit("1", "integer"), False, id="literal"),
    ],
)
def test_is_identity(flat, identity):
    assert is_identity(decode(flat)) is identity


# -- references -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flat", "expected"),
    [
        pytest.param(A_ID, [(1, "id", IDENTITY, False, False)], id="bare-attribute"),
        pytest.param(alias(A_NAME, "n", 9), [(2, "name", IDENTITY, False, False)], id="alias"),
        pytest.param(cast(A_ID, "long"), [(1, "id", IDENTITY, False, False)], id="widening-cast"),
        pytest.param(cast(A_AMOUNT, "integer"), [(4, "amount", TRANSFORMATION, False, False)],
                     id="narrowing-cast"),
        pytest.param(node("Concat", A_NAME, B_COMPANY),
                     [(2, "name", TRANSFORMATION, False, False), (3, "company_name", TRANSFORMATION, False, False)],
                     id="function"),
        pytest.param(node("Add", A_ID, A_ID),
                     [(1, "id", TRANSFORMATION, False, False), (1, "id", TRANSFORMATION, False, False)],
                     id="repeated"),
        pytest.param(lit("x", "string"), [], id="literal"),
        pytest.param(agg(agg_fn("Sum", A_AMOUNT)), [(4, "amount", AGGREGATION, False, False)], id="sum"),
        pytest.param(alias(agg(agg_fn("Max", node("Upper", A_NAME))), "m", 9),
                     [(2, "name", AGGREGATION, False, False)], id="aggregate-of-function"),
        pytest.param(node("Md5", cast(A_EMAIL, "binary")), [(6, "email", TRANSFORMATION, True, False)], id="md5"),
        pytest.param(node("Sha2", A_EMAIL, lit("256", "integer")), [(6, "email", TRANSFORMATION, True, False)],
                     id="sha2"),
        pytest.param(node("Concat", node("Sha2", A_EMAIL, lit("256", "integer")), A_NAME),
                     [(6, "email", TRANSFORMATION, True, False), (2, "name", TRANSFORMATION, False, False)],
                     id="masking-only-inside"),
        pytest.param(agg(agg_fn("Count", A_ID)), [(1, "id", AGGREGATION, True, False)], id="count"),
        pytest.param(node("CaseWhen", node("EqualTo", A_STATUS, lit("ok", "string")), A_NAME, B_COMPANY),
                     [(5, "status", TRANSFORMATION, False, True), (2, "name", TRANSFORMATION, False, False),
                      (3, "company_name", TRANSFORMATION, False, False)],
                     id="case-when-condition"),
        pytest.param(node("CaseWhen", node("IsNull", A_ID), A_NAME, node("IsNull", A_AMOUNT), A_EMAIL),
                     [(1, "id", TRANSFORMATION, False, True), (2, "name", TRANSFORMATION, False, False),
                      (4, "amount", TRANSFORMATION, False, True), (6, "email", TRANSFORMATION, False, False)],
                     id="case-when-two-conditions-no-else"),
        pytest.param(node("If", node("GreaterThan", A_AMOUNT, lit("0", "long")), A_NAME, B_COMPANY),
                     [(4, "amount", TRANSFORMATION, False, True), (2, "name", TRANSFORMATION, False, False),
                      (3, "company_name", TRANSFORMATION, False, False)],
                     id="if-predicate"),
        pytest.param(agg(agg_fn("Sum", A_AMOUNT), filter_=node("EqualTo", A_STATUS, lit("ok", "string"))),
                     [(4, "amount", AGGREGATION, False, False), (5, "status", AGGREGATION, False, True)],
                     id="aggregate-filter"),
        pytest.param(agg(agg_fn("Sum", node("If", node("IsNull", A_STATUS), lit("0", "long"), A_AMOUNT))),
                     [(5, "status", AGGREGATION, False, True), (4, "amount", AGGREGATION, False, False)],
                     id="conditional-inside-aggregate"),
    ],
)
def test_references(flat, expected):
    assert refs(flat) == expected


def test_reference_fields():
    [ref] = references(decode(alias(node("Md5", A_EMAIL), "h", 9)))
    assert ref == Reference(expr_id=6, name="email", subtype=TRANSFORMATION, masking=True, conditional=False)


def test_references_are_computed_once_per_node():
    tree = decode(node("Concat", A_NAME, B_COMPANY))
    assert references(tree) is references(tree)


# -- expressions people recognize: no internal class names in a text -------------------------------------

def lambda_var(name: str, eid: int) -> list[dict]:
    return node("NamedLambdaVariable", name=name, dataType="string", exprId={"id": eid}, value=None)


def lambda_fn(body: list[dict], *args: list[dict], hidden: bool = False) -> list[dict]:
    """LambdaFunction: the body is child 0, the arguments the children after it."""
    return node("LambdaFunction", body, *args, function=0, arguments=list(range(1, len(args) + 1)), hidden=hidden)


TAGS = attr("tags", 1, "array", "[src]")
INFO = attr("info", 2, "struct", "[src]")
M = attr("m", 3, "map", "[src]")


@pytest.mark.parametrize(("tree", "text"), [
    (node("ArrayTransform", TAGS, lambda_fn(node("Upper", lambda_var("x", 9)), lambda_var("x", 9)),
          argument=0, function=1), "transform(src.tags, x -> upper(x))"),
    (node("ArrayAggregate", TAGS, lit("0", "integer"),
          lambda_fn(node("Add", lambda_var("acc", 8), node("Length", lambda_var("t", 9))),
                    lambda_var("acc", 8), lambda_var("t", 9)),
          lambda_fn(lambda_var("id", 7), lambda_var("id", 7), hidden=True)),
     "aggregate(src.tags, 0, (acc, t) -> (acc + length(t)))"),
    (node("GetStructField", INFO, ordinal=0, name="city"), "src.info.city"),
    (node("GetStructField", INFO, ordinal=1), "src.info[1]"),
    (node("GetArrayItem", TAGS, lit("0", "integer"), failOnError=False), "src.tags[0]"),
    (node("GetMapValue", M, lit("k", "string")), "src.m['k']"),
    (node("VariableReference", originalNameParts="[system, session, v]", identifier=None), "system.session.v"),
    (node("VariableReference", originalNameParts="[v]", identifier=None), "v"),
    (node("PythonUDF", attr("name", 4, "string", "[e]"), name="py_upper", func=None, evalType=100),
     "py_upper(e.name)"),
    (node("PythonUDF", attr("x", 4, "double", "[e]"), attr("y", 5, "double", "[e]"), name="pandas_ratio",
          func=None, evalType=200), "pandas_ratio(e.x, e.y)"),
    (node("SQLScalarFunction", node("Add", attr("x", 6, "double", "[sq_plus]"), lit("1", "double")), function=None,
          inputs=[attr("x", 6, "double", "[sq_plus]")]), "sq_plus(x)"),
])
def test_expressions_render_as_the_sql_a_user_writes(tree, text):
    rendered = render(decode(tree))
    assert rendered == text
    for internal in ("namedlambdavariable", "lambdafunction", "getstructfield", "getarrayitem", "getmapvalue",
                     "variablereference", "pythonudf", "sqlscalarfunction", "#"):
        assert internal not in rendered.lower()


def test_a_lambda_variable_is_not_a_column_read():
    tree = decode(node("ArrayTransform", TAGS, lambda_fn(node("Upper", lambda_var("x", 9)), lambda_var("x", 9)),
                       argument=0, function=1))
    assert [(r.expr_id, r.name, r.subtype) for r in references(tree)] == [(1, "tags", TRANSFORMATION)]


# -- a field of a struct made in place ------------------------------------------------------------------------

def named_struct(*pairs: tuple[str, list[dict]]) -> list[dict]:
    """CreateNamedStruct: its children are name, value, name, value, ..."""
    return node("CreateNamedStruct", *[part for name, value in pairs for part in (lit(name, "string"), value)])


def field_refs(tree: list[dict]) -> list[tuple[int, str, str, str]]:
    return [(r.expr_id, r.name, r.subtype, r.path) for r in references(decode(tree))]


def test_a_field_of_a_struct_made_in_place_reads_that_field_only():
    made = named_struct(("n", attr("name", 4, "string", "[e]")), ("d", attr("dept", 5, "string", "[e]")))
    assert field_refs(alias(node("GetStructField", made, ordinal=0, name="n"), "n", 10)) == [(4, "name", IDENTITY, "")]
    assert field_refs(alias(node("GetStructField", made, ordinal=1, name="d"), "d", 10)) == [(5, "dept", IDENTITY, "")]
    # An expression inside: a transformation of what it reads, and nothing of the other fields.
    upper = named_struct(("u", node("Upper", attr("name", 4, "string", "[e]"))), ("a", attr("age", 6, "integer")))
    assert field_refs(node("GetStructField", upper, ordinal=0, name="u")) == [(4, "name", TRANSFORMATION, "")]


def test_struct_star_made_in_place_reads_the_one_field_with_its_path():
    """``STRUCT(info.*).zip``: Spark expands ``info.*`` into fields read by position, named by the type."""
    info = attr("info", 2, {"type": "struct", "fields": [{"name": "city", "type": "string"},
                                                         {"name": "zip", "type": "string"}]}, "[src]")
    made = named_struct(("city", node("GetStructField", info, ordinal=0)), ("zip", node("GetStructField", info, ordinal=1)))
    tree = node("GetStructField", made, ordinal=1, name="zip")
    assert field_refs(tree) == [(2, "info", IDENTITY, "zip")]
    assert is_identity(decode(tree))
    # Made in place twice: STRUCT(STRUCT(info.*) AS s).s.zip
    outer = node("GetStructField", node("GetStructField", named_struct(("s", made)), ordinal=0, name="s"),
                 ordinal=1, name="zip")
    assert field_refs(outer) == [(2, "info", IDENTITY, "zip")]
    # A CTAS's query names the struct's values with aliases: the same field read.
    named = named_struct(("city", alias(node("GetStructField", info, ordinal=0), "city", 11)),
                         ("zip", alias(node("GetStructField", info, ordinal=1), "zip", 12)))
    assert field_refs(node("GetStructField", named, ordinal=1, name="zip")) == [(2, "info", IDENTITY, "zip")]


def test_a_subquery_that_selects_an_outer_column_outputs_that_column():
    """``(SELECT salary)``: the subquery's projection lists ``outer(salary)``, which outputs the outer
    attribute itself (Spark's JSON holds it in the field ``e``)."""
    outer = node("OuterReference", e=attr("salary", 5, "double", "[emp]"))
    assert named_outputs([outer, alias(attr("id", 1, "bigint"), "i", 7)]) == [(5, "salary"), (7, "i")]
