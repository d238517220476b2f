"""lineage/model.py: the airflow-lineage/1 document and how subtypes compose."""

from __future__ import annotations

import json
from dataclasses import FrozenInstanceError

import pytest

from airflow_lineage_provider.lineage.model import (
    AGGREGATION,
    CONDITIONAL,
    DIRECT,
    FILTER,
    FORMAT,
    IDENTITY,
    INDIRECT,
    JOIN,
    TRANSFORMATION,
    ColumnInput,
    Dataset,
    LineageReport,
    Origin,
    StatementLineage,
    _told_apart,
    stronger,
    unique_names,
)
from airflow_lineage_provider.lineage.plan import resolve
from tests.helpers import plan_record

ORDERS = Dataset(namespace="hdfs://nn:8020", name="/wh/orders", table="spark_catalog.shop.orders")
USERS = Dataset(namespace="s3://lake", name="raw/users", table=None)
DAILY = Dataset(namespace="file", name="/wh/daily", table="spark_catalog.shop.daily", mode="overwrite")

WRITE = StatementLineage(
    index=3,
    sql="INSERT OVERWRITE daily SELECT ...",
    method="plan",
    confidence=0.5,
    target=DAILY,
    inputs=(ORDERS, USERS),
    columns=(
        ("day", (ColumnInput("spark_catalog.shop.orders", "ts", DIRECT, TRANSFORMATION, "to_date(o.ts)"),)),
        ("total", (ColumnInput("spark_catalog.shop.orders", "amount", DIRECT, AGGREGATION, "sum(o.amount)"),)),
        ("email_hash", (ColumnInput("/raw/users", "email", DIRECT, TRANSFORMATION, "md5(u.email)", True),)),
        ("batch", ()),
    ),
    indirect=(
        ColumnInput("spark_catalog.shop.orders", "status", INDIRECT, FILTER),
        ColumnInput("spark_catalog.shop.orders", "user_id", INDIRECT, JOIN),
        ColumnInput("/raw/users", "vip", INDIRECT, CONDITIONAL, masking=True),
    ),
    warnings=("unknown plan node Foo: lineage passed through on a best-effort basis",),
)
QUERY = StatementLineage(index=4, sql="SELECT 1", method="none", confidence=0.0, target=None)
REPORT = LineageReport(statements=(WRITE, QUERY), warnings=("statement 5 failed",))


def test_statement_to_dict_exact():
    assert QUERY.to_dict() == {
        "index": 4,
        "sql": "SELECT 1",
        "method": "none",
        "confidence": 0.0,
        "target": None,
        "inputs": [],
        "columns": {},
        "indirect": [],
        "warnings": [],
    }


def test_write_to_dict_shape():
    d = WRITE.to_dict()
    assert d["target"] == {"table": "spark_catalog.shop.daily", "namespace": "file", "name": "/wh/daily",
                           "mode": "overwrite"}
    # No mode: the key is left out.
    assert d["inputs"] == [
        {"table": "spark_catalog.shop.orders", "namespace": "hdfs://nn:8020", "name": "/wh/orders"},
        {"table": None, "namespace": "s3://lake", "name": "raw/users"},
    ]
    assert list(d["columns"]) == ["day", "total", "email_hash", "batch"]
    assert d["columns"]["total"] == [{"table": "spark_catalog.shop.orders", "field": "amount", "type": "DIRECT",
                                      "subtype": "AGGREGATION", "expression": "sum(o.amount)", "masking": False}]
    assert d["columns"]["batch"] == []
    # An indirect input has no expression.
    assert d["indirect"][2] == {"table": "/raw/users", "field": "vip", "type": "INDIRECT",
                                "subtype": "CONDITIONAL", "masking": True}


def test_report_format_key():
    d = REPORT.to_dict()
    assert d["format"] == FORMAT == "airflow-lineage/1"
    assert d["warnings"] == ["statement 5 failed"]
    assert [s["index"] for s in d["statements"]] == [3, 4]


def test_report_without_warnings_omits_the_key():
    assert LineageReport(statements=(QUERY,)).to_dict() == {"format": "airflow-lineage/1",
                                                             "statements": [QUERY.to_dict()]}


@pytest.mark.parametrize("statement", [WRITE, QUERY], ids=["write", "query"])
def test_statement_round_trip(statement):
    assert StatementLineage.from_dict(statement.to_dict()) == statement


def test_report_round_trip():
    assert LineageReport.from_dict(REPORT.to_dict()) == REPORT


def test_report_round_trip_through_json():
    text = REPORT.to_json()
    assert isinstance(text, str)
    assert LineageReport.from_dict(json.loads(text)) == REPORT
    # to_json passes its options to json.dumps.
    assert json.loads(REPORT.to_json(indent=2, sort_keys=True)) == json.loads(text)


def test_extracted_lineage_round_trips_through_json():
    lineage = resolve.extract(plan_record("seed_join"))
    report = LineageReport(statements=(lineage,))
    back = LineageReport.from_dict(json.loads(json.dumps(report.to_dict())))
    assert back == report
    assert back.statements[0].column_map["p"] == lineage.column_map["p"]


def test_a_query_with_two_columns_of_one_name_keeps_both_through_the_document():
    # SELECT a.k, b.k, k + 1 AS k: the document keys columns by name, so each repeat gets its occurrence.
    a, b = Origin("t.a", "k", IDENTITY, "a.k", False), Origin("t.b", "k", IDENTITY, "b.k", False)
    st = StatementLineage.of(index=0, sql="", method="plan", confidence=1.0, target=None, inputs=(),
                             columns=[("k", [a]), ("k", [b]), ("k", [b])], indirect=(), warnings=())
    assert [name for name, _ in st.columns] == ["k", "k (2)", "k (3)"]
    back = StatementLineage.from_dict(json.loads(json.dumps(st.to_dict())))
    assert back == st and back.column_map["k (2)"][0].table == "t.b"


def test_inputs_given_under_their_keys_make_the_statement_their_lists_make():
    # The resolvers keep the datasets under their labels and the indirect inputs under (table, field, subtype,
    # masking): handed as they are, they are sorted by those keys, into the order their lists are sorted into.
    indirect = [ColumnInput(t, f, INDIRECT, s, "", m) for t, f, s, m in [
        ("t.b", "k", FILTER, False), ("t.a", "z", JOIN, False), ("t.a", "k", JOIN, True), ("t.a", "k", FILTER, False),
        ("t.a", "k", JOIN, False), ("t.a", "k2", CONDITIONAL, False)]]
    inputs = [USERS, ORDERS, DAILY]
    common = dict(index=3, sql="SELECT 1", method="sql", confidence=0.5, target=DAILY,
                  columns=[("k", [Origin("t.a", "k", IDENTITY, "", False)])], warnings=("w",))
    listed = StatementLineage.of(inputs=inputs, indirect=indirect, **common)
    keyed = StatementLineage.of(inputs={d.label: d for d in inputs},
                                indirect={(i.table, i.field, i.subtype, i.masking): i for i in indirect}, **common)
    assert keyed == listed and hash(keyed) == hash(listed) and keyed.to_dict() == listed.to_dict()
    assert [i.field for i in keyed.indirect] == ["k", "k", "k", "k2", "z", "k"]
    assert [i.subtype for i in keyed.indirect[:3]] == [FILTER, JOIN, JOIN] and keyed.indirect[2].masking
    assert [d.label for d in keyed.inputs] == ["raw/users", "spark_catalog.shop.daily", "spark_catalog.shop.orders"]
    # made without the dataclass's __init__: still the frozen dataclass it declares
    assert StatementLineage(**{k: getattr(keyed, k) for k in keyed.__dict__}) == keyed and keyed.agreement is None
    with pytest.raises(FrozenInstanceError):
        keyed.index = 4  # type: ignore[misc]


def test_unique_names_skips_a_name_the_query_already_has():
    names = [n for n, _ in unique_names([("k", 1), ("k (2)", 2), ("k", 3), ("K", 4)])]
    assert names == ["k", "k (2)", "k (3)", "K"]


@pytest.mark.parametrize("columns", [
    [],
    [("a", 1)],
    [("a", 1), ("b", 2), ("A", 3)],  # case tells names apart
    [("k (2)", 1), ("k", 2)],  # a name like a told-apart one, not repeated
    [("k", 1), ("k", 2), ("k", 3)],
    [("k", 1), ("k (2)", 2), ("k", 3), ("K", 4)],
    [("x", 1), ("y", 2), ("x", 3), ("x (2)", 4)],  # a told-apart name the query has after it
])
def test_unique_names_is_the_slow_paths(columns):
    """Columns with no repeated name are returned as they are: the same as through the loop."""
    assert unique_names(iter(columns)) == _told_apart(columns)  # the loop itself, every name through it


def test_empty_report_round_trip():
    assert LineageReport.from_dict({"format": FORMAT}) == LineageReport()


@pytest.mark.parametrize("document", [
    {"format": "airflow-lineage/2", "statements": []},
    {"format": "openlineage", "statements": []},
    {"statements": []},
    {},
])
def test_from_dict_rejects_other_formats(document):
    with pytest.raises(ValueError, match="airflow-lineage/1"):
        LineageReport.from_dict(document)


def test_from_dict_defaults():
    s = StatementLineage.from_dict({"index": 7, "columns": {"c": [{"table": "t", "field": "f"}]}})
    assert s == StatementLineage(
        index=7, sql="", method="plan", confidence=1.0, target=None,
        columns=(("c", (ColumnInput("t", "f", DIRECT, IDENTITY, "", False),)),),
    )


def test_with_warning_appends():
    report = LineageReport(statements=(QUERY,)).with_warning("a").with_warning("b")
    assert report.warnings == ("a", "b")
    assert report.statements == (QUERY,)


def test_column_map_and_label():
    assert WRITE.column_map["day"][0].field == "ts"
    assert list(WRITE.column_map) == ["day", "total", "email_hash", "batch"]
    assert ORDERS.label == "spark_catalog.shop.orders"
    assert USERS.label == "raw/users"


@pytest.mark.parametrize(
    ("first", "then", "expected"),
    [
        (IDENTITY, IDENTITY, IDENTITY),
        (IDENTITY, TRANSFORMATION, TRANSFORMATION),
        (TRANSFORMATION, IDENTITY, TRANSFORMATION),
        (TRANSFORMATION, TRANSFORMATION, TRANSFORMATION),
        (IDENTITY, AGGREGATION, AGGREGATION),
        (AGGREGATION, IDENTITY, AGGREGATION),
        (TRANSFORMATION, AGGREGATION, AGGREGATION),
        (AGGREGATION, TRANSFORMATION, AGGREGATION),
        (AGGREGATION, AGGREGATION, AGGREGATION),
        # A subtype outside the direct ranking counts as a transformation: it beats identity,
        # loses to aggregation, and on a tie the first argument is kept.
        ("SOMETHING", IDENTITY, "SOMETHING"),
        (IDENTITY, "SOMETHING", "SOMETHING"),
        ("SOMETHING", AGGREGATION, AGGREGATION),
        (TRANSFORMATION, "SOMETHING", TRANSFORMATION),
        ("SOMETHING", TRANSFORMATION, "SOMETHING"),
    ],
)
def test_stronger(first, then, expected):
    assert stronger(first, then) == expected


def test_make_builds_the_same_column_input_as_the_constructor():
    args = ("spark_catalog.demo.ods_users", "name", "DIRECT", "TRANSFORMATION", "upper(name)", True)
    made, built = ColumnInput.make(*args), ColumnInput(*args)
    assert made == built and hash(made) == hash(built) and repr(made) == repr(built)
    assert made.to_dict() == built.to_dict() and not made < built and not built < made
    with pytest.raises(FrozenInstanceError):
        made.field = "other"  # type: ignore[misc]


@pytest.mark.parametrize(("document", "message"), [
    ([1, 2, 3], "it is a list, not an object with \"format\": 'airflow-lineage/1'"),
    ({"format": FORMAT, "statements": None}, "'statements' is null, not a list of statements"),
    ({"format": FORMAT, "statements": [1]}, "statement 1: it is a number, not an object"),
    ({"format": FORMAT, "statements": [{"index": 1}, {"index": 5, "columns": {"c": [{"table": "t", "field": "f"},
                                                                                  {"table": "t"}]}}]},
     "statement 2 (index 5), column 'c', input 2: key 'field' is missing"),
    ({"format": FORMAT, "statements": [{"index": 5, "inputs": [{"namespace": "file", "name": 3}]}]},
     "statement 1 (index 5), input dataset 1: 'name' is a number, not a string"),
    ({"format": FORMAT, "statements": [{"index": 5, "target": {"namespace": "file", "name": "/x", "mode": 1}}]},
     "statement 1 (index 5), target: 'mode' is a number, not a string or null"),
    ({"format": FORMAT, "statements": [{"index": 5, "indirect": {}}]},
     "statement 1 (index 5), indirect inputs: it is an object, not a list of inputs"),
    ({"format": FORMAT, "statements": [{"index": 5, "agreement": {"static": None}}]},
     "statement 1 (index 5), agreement: 'static' is null, not a string"),
])
def test_from_dict_says_where_and_what_is_wrong_in_one_error_type(document, message):
    from airflow_lineage_provider.lineage.model import DocumentError

    with pytest.raises(DocumentError) as raised:
        LineageReport.from_dict(document)
    assert str(raised.value) == message
    assert isinstance(raised.value, ValueError)
