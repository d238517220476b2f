"""lineage/diff.py: what changed between two runs' lineage of a task."""

from __future__ import annotations

from dataclasses import replace

from airflow_lineage_provider.lineage.diff import diff
from airflow_lineage_provider.lineage.model import (
    INDIRECT,
    ColumnInput,
    Dataset,
    LineageReport,
    StatementLineage,
)

SRC = "spark_catalog.default.src"
OUT = Dataset(namespace="file", name="/wh/out", table="spark_catalog.default.out")


def report(**columns) -> LineageReport:
    return LineageReport((StatementLineage(
        index=0, sql="x", method="plan", confidence=1.0, target=OUT,
        columns=tuple((c, tuple(inputs)) for c, inputs in columns.items()),
        indirect=(ColumnInput(SRC, "id", type=INDIRECT, subtype="JOIN"),)),))


def test_the_same_lineage_is_no_change():
    same = report(a=[ColumnInput(SRC, "a")])
    assert diff(same, same).same and diff(same, same).lines() == ["no change in the column lineage"]


def test_added_removed_changed_and_lost_are_each_told():
    old = report(a=[ColumnInput(SRC, "a")], b=[ColumnInput(SRC, "b", subtype="TRANSFORMATION", expression="upper(b)")],
                 c=[ColumnInput(SRC, "c")])
    new = report(a=[ColumnInput(SRC, "a"), ColumnInput(SRC, "z", subtype="TRANSFORMATION", expression="a || z")],
                 b=[ColumnInput(SRC, "b", subtype="AGGREGATION", expression="max(b)")], c=[])
    result = diff(old, new)
    t = OUT.table
    assert result.lost == [f"{t}.c"]
    assert result.added == [f"{t}.a <- {SRC}.z TRANSFORMATION  a || z"]
    assert result.removed == [f"{t}.c <- {SRC}.c IDENTITY"]
    assert result.changed == [f"{t}.b <- {SRC}.b: TRANSFORMATION  upper(b) -> AGGREGATION  max(b)"]
    assert result.lines()[0] == f"! {t}.c lost all its sources"


def test_an_indirect_input_that_goes_is_a_removed_edge():
    old = report(a=[ColumnInput(SRC, "a")])
    new = LineageReport((replace(old.statements[0], indirect=()),))
    assert diff(old, new).removed == [f"{OUT.table}.(indirect) <- {SRC}.id JOIN"]


def test_a_column_that_is_a_join_key_and_a_filter_keeps_both_and_loses_one_alone():
    old = report(a=[ColumnInput(SRC, "a")])
    both = (ColumnInput(SRC, "id", type=INDIRECT, subtype="JOIN"), ColumnInput(SRC, "id", type=INDIRECT, subtype="FILTER"))
    old = LineageReport((replace(old.statements[0], indirect=both),))
    new = LineageReport((replace(old.statements[0], indirect=both[:1]),))
    assert diff(old, old).same
    assert diff(old, new).removed == [f"{OUT.table}.(indirect) <- {SRC}.id FILTER"]
    assert diff(old, new).added == [] and diff(old, new).changed == []
