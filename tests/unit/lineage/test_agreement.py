"""lineage/agreement.py: each plan statement checked against the static lineage of the same SQL."""

from __future__ import annotations

from dataclasses import replace

from airflow_lineage_provider.lineage.agreement import edges, summary, with_agreement
from airflow_lineage_provider.lineage.model import (
    INDIRECT,
    TRANSFORMATION,
    Agreement,
    ColumnInput,
    Dataset,
    LineageReport,
    StatementLineage,
)

SRC = "spark_catalog.default.src"
OUT = Dataset(namespace="file", name="/wh/out", table="spark_catalog.default.out")


def statement(method: str, *, index: int = 2, sql: str = "INSERT INTO out SELECT a, upper(b) FROM src WHERE c > 0",
              b_subtype: str = TRANSFORMATION, target: Dataset | None = OUT, warnings: tuple = ()) -> StatementLineage:
    return StatementLineage(
        index=index, sql=sql, method=method, confidence=1.0 if method != "none" else 0.0, target=target,
        columns=(("a", (ColumnInput(SRC, "a"),)), ("b", (ColumnInput(SRC, "b", subtype=b_subtype),))),
        indirect=(ColumnInput(SRC, "c", type=INDIRECT, subtype="FILTER"),), warnings=warnings)


def test_edges_are_written_as_the_cli_prints_them():
    assert edges(statement("plan")) == {f"a <- {SRC}.a IDENTITY", f"b <- {SRC}.b TRANSFORMATION",
                                        f"(indirect) <- {SRC}.c FILTER"}


def test_the_same_edges_agree():
    [checked] = with_agreement(LineageReport((statement("plan"),)), LineageReport((statement("sql"),))).statements
    assert checked.agreement == Agreement("same")


def test_different_edges_are_listed_on_each_side():
    static = LineageReport((statement("sql", b_subtype="IDENTITY"),))
    [checked] = with_agreement(LineageReport((statement("plan"),)), static).statements
    assert checked.agreement == Agreement("differs", only_plan=(f"b <- {SRC}.b TRANSFORMATION",),
                                          only_static=(f"b <- {SRC}.b IDENTITY",))


def test_a_static_warning_is_a_difference_with_its_reason():
    static = LineageReport((statement("sql", warnings=("no schema for src",)),))
    [checked] = with_agreement(LineageReport((statement("plan"),)), static).statements
    assert checked.agreement.static == "differs" and checked.agreement.reason == "no schema for src"


def test_no_static_lineage_is_unavailable_with_the_reason():
    static = LineageReport((StatementLineage(index=2, sql="x", method="none", confidence=0.0, target=None,
                                             warnings=("EXECUTE IMMEDIATE is not parsed",)),))
    [checked] = with_agreement(LineageReport((statement("plan"),)), static).statements
    assert checked.agreement == Agreement("unavailable", reason="EXECUTE IMMEDIATE is not parsed")
    [alone] = with_agreement(LineageReport((statement("plan"),)), LineageReport()).statements
    assert alone.agreement.static == "unavailable" and "no statement" in alone.agreement.reason


def test_writes_static_lineage_cannot_be_matched_to_are_unavailable():
    block = (statement("plan"), replace(statement("plan"), columns=()))  # two writes of one scripting block
    checked = with_agreement(LineageReport(block), LineageReport((statement("sql"),))).statements
    assert {c.agreement.static for c in checked} == {"unavailable"}
    assert "scripting block" in checked[0].agreement.reason
    [dataframe] = with_agreement(LineageReport((statement("plan", sql=""),)), LineageReport()).statements
    assert "no SQL text" in dataframe.agreement.reason
    other = LineageReport((statement("sql", target=None),))
    [mismatch] = with_agreement(LineageReport((statement("plan"),)), other).statements
    assert mismatch.agreement.static == "unavailable" and "another statement" in mismatch.agreement.reason


def test_static_statements_are_left_as_they_are_and_counted_apart():
    report = LineageReport((statement("plan"), statement("sql", index=3)))
    checked = with_agreement(report, LineageReport((statement("sql"),))).statements
    assert checked[1].agreement is None
    assert summary(checked) == {"same": 1, "differs": 0, "unavailable": 0}


def test_the_agreement_survives_the_document():
    [checked] = with_agreement(LineageReport((statement("plan"),)),
                               LineageReport((statement("sql", b_subtype="IDENTITY"),))).statements
    doc = LineageReport((checked,)).to_dict()
    assert doc["statements"][0]["agreement"] == {
        "static": "differs", "only_plan": [f"b <- {SRC}.b TRANSFORMATION"], "only_static": [f"b <- {SRC}.b IDENTITY"]}
    assert LineageReport.from_dict(doc).statements[0] == checked
    assert "agreement" not in LineageReport((statement("plan"),)).to_dict()["statements"][0]


def test_a_multi_inserts_writes_are_each_matched_to_the_static_write_of_their_target():
    other = Dataset(namespace="file", name="/wh/other", table="spark_catalog.default.other")
    plan = LineageReport((statement("plan"), statement("plan", target=other, b_subtype="IDENTITY")))
    static = LineageReport((statement("sql", target=other), statement("sql")))
    first, second = with_agreement(plan, static).statements
    assert first.agreement == Agreement("same")
    assert second.agreement.static == "differs" and second.agreement.only_plan == (f"b <- {SRC}.b IDENTITY",)
    # The static extractor read none of them: each says so.
    nothing = with_agreement(plan, LineageReport()).statements
    assert all("no statement" in st.agreement.reason for st in nothing)


def test_a_target_written_as_often_by_both_is_matched_write_for_write_in_the_texts_order():
    """``FROM src INSERT INTO out SELECT .. INSERT INTO out SELECT ..``: both sides list the two writes of one
    table in the order of the text; a third plan write (a loop of a scripting block) cannot be matched."""
    first, second = statement("plan"), statement("plan", b_subtype="IDENTITY")
    static = LineageReport((statement("sql"), statement("sql", b_subtype="IDENTITY")))
    a, b = with_agreement(LineageReport((first, second)), static).statements
    assert a.agreement == Agreement("same") and b.agreement == Agreement("same")
    thrice = with_agreement(LineageReport((first, second, first)), static).statements
    assert {c.agreement.static for c in thrice} == {"unavailable"}
