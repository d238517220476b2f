"""lineage/plan/rowlevel.py on recorded MERGE, UPDATE and DELETE plans (``tests/data/plans/rowlevel_*``).

Each statement is recorded in three shapes (``scripts/record_rowlevel_plans.py``): ``analyzed`` (the
``MergeIntoTable`` / ``UpdateTable`` / ``DeleteFromTable`` of a dry run, on the corpus's parquet table
``acct``) and ``cow`` / ``mor`` (run on the tests' row-level catalog, rewritten into ``ReplaceData`` /
``WriteDelta``, or ``InsertOnlyMerge``). The statements are corpus cases: the lineage the integration
tests (``test_corpus.py``, ``test_rowlevel.py``) hold them to is the truth here, with no JVM.
"""

from __future__ import annotations

import json

import pytest

from airflow_lineage_provider.lineage.model import (
    CONDITIONAL,
    DIRECT,
    FILTER,
    IDENTITY,
    INDIRECT,
    JOIN,
    TRANSFORMATION,
    StatementLineage,
)
from airflow_lineage_provider.lineage.plan import digest, resolve
from airflow_lineage_provider.lineage.plan.lean import EXPAND
from tests.helpers import plan_record
from tests.integration.corpus_spark4 import SPARK4_CASES

CASES = {c.name: c for c in SPARK4_CASES}
RECORDED = ("merge_update_insert", "merge_conditional_delete_then_update", "merge_insert_only",
            "update_set_where", "delete_exists")
SHAPES = ("analyzed", "cow", "mor")
ROOTS = {"analyzed": {"MergeIntoTable", "UpdateTable", "DeleteFromTable"},
         "cow": {"ReplaceData", "InsertOnlyMerge"}, "mor": {"WriteDelta", "InsertOnlyMerge"}}
TABLES = {"analyzed": "spark_catalog.corpus.acct", "cow": "rowcat.corpus.acct_cow", "mor": "rowcat.corpus.acct_mor"}
SOURCE = {"analyzed": "spark_catalog.corpus.acct_upd", "cow": "rowcat.corpus.acct_upd", "mor": "rowcat.corpus.acct_upd"}
# The rewrite's operation, row id and metadata columns: in the rewritten plans, never in the lineage.
INTERNAL = {"__row_operation", "__row_id", "__row_from_source", "__row_from_target", "_file", "_pos"}
LETTER = {IDENTITY: "I", TRANSFORMATION: "T"}


def lineage(case: str, shape: str) -> StatementLineage:
    return resolve.extract(plan_record(f"rowlevel_{case}_{shape}"))


def short(table: str) -> str:
    """``acct`` for the target of any shape (``acct_cow``, ``acct_mor``), ``acct_upd`` for the source."""
    name = table.rsplit(".", 1)[-1]
    return name.removesuffix("_cow").removesuffix("_mor")


def direct(st: StatementLineage) -> dict[str, set[str]]:
    """Target column -> {"table.field:I|T"}, the corpus's notation."""
    return {column: {f"{short(i.table)}.{i.field}:{LETTER[i.subtype]}{'!' if i.masking else ''}" for i in inputs}
            for column, inputs in st.columns}


def indirect(st: StatementLineage) -> set[str]:
    return {f"{short(i.table)}.{i.field}:{i.subtype}" for i in st.indirect}


def edges(st: StatementLineage) -> set[tuple[str | None, str, str, str, str]]:
    """Every edge with the target's name the same in every shape; expression texts left out (a column a
    clause keeps reads ``id`` in the analyzed shape, ``t.id`` in the rewritten ones)."""
    out = {(c, short(i.table), i.field, i.type, i.subtype) for c, inputs in st.columns for i in inputs}
    return out | {(None, short(i.table), i.field, i.type, i.subtype) for i in st.indirect}


ALL = [(case, shape) for case in RECORDED for shape in SHAPES]


@pytest.mark.parametrize(("case", "shape"), ALL, ids=[f"{c}-{s}" for c, s in ALL])
def test_the_recorded_plan_has_the_shape_its_name_says(case, shape):
    root = plan_record(f"rowlevel_{case}_{shape}")["plan"][0]["class"].rsplit(".", 1)[-1]
    assert root in ROOTS[shape]
    assert (root == "InsertOnlyMerge") == (shape != "analyzed" and case == "merge_insert_only")


@pytest.mark.parametrize(("case", "shape"), ALL, ids=[f"{c}-{s}" for c, s in ALL])
def test_a_recorded_row_level_write_has_its_corpus_lineage(case, shape):
    st = lineage(case, shape)
    expected = CASES[case]
    assert direct(st) == expected.columns
    assert list(dict(st.columns)) == list(expected.columns), "columns in the table's order"
    assert indirect(st) == expected.indirect
    assert st.warnings == () and st.confidence == 1.0 and st.method == "plan"
    assert st.target is not None and st.target.table == TABLES[shape]
    assert st.target.mode == case.split("_", 1)[0]


@pytest.mark.parametrize("case", RECORDED)
def test_both_plan_shapes_give_one_lineage(case):
    analyzed = edges(lineage(case, "analyzed"))
    assert edges(lineage(case, "cow")) == analyzed
    assert edges(lineage(case, "mor")) == analyzed


@pytest.mark.parametrize("shape", SHAPES)
def test_merge_values_keeps_and_the_on_condition(shape):
    """UPDATE SET balance = t.balance + u.amount, INSERT (...) VALUES (u.id, u.name, u.amount, 'new'):
    a column the UPDATE leaves as it is keeps the target's value, the INSERT's literal brings nothing."""
    st = lineage("merge_update_insert", shape)
    target, source = TABLES[shape], SOURCE[shape]
    columns = {c: {(i.table, i.field, i.subtype) for i in inputs} for c, inputs in st.columns}
    assert columns["balance"] == {(target, "balance", TRANSFORMATION), (source, "amount", TRANSFORMATION),
                                  (source, "amount", IDENTITY)}
    assert columns["id"] == {(target, "id", IDENTITY), (source, "id", IDENTITY)}
    assert columns["status"] == {(target, "status", IDENTITY)}
    texts = {(i.table, i.subtype): i.expression for i in dict(st.columns)["balance"]}
    assert texts[(source, TRANSFORMATION)] == "(t.balance + u.amount)" and texts[(source, IDENTITY)] == "u.amount"
    assert {(i.table, i.field, i.subtype) for i in st.indirect} == {(target, "id", JOIN), (source, "id", JOIN)}
    assert all(i.type == DIRECT for _, inputs in st.columns for i in inputs)
    assert all(i.type == INDIRECT for i in st.indirect)


@pytest.mark.parametrize("shape", SHAPES)
def test_a_when_condition_is_conditional_and_a_delete_writes_no_value(shape):
    st = lineage("merge_conditional_delete_then_update", shape)
    assert (SOURCE[shape], "op", CONDITIONAL) in {(i.table, i.field, i.subtype) for i in st.indirect}
    assert direct(st)["status"] == {"acct_upd.op:I"}  # the UPDATE's value; the DELETE adds none


@pytest.mark.parametrize("shape", SHAPES)
def test_a_column_no_clause_writes_is_not_a_target_column(shape):
    """INSERT (id, name) and nothing else: balance and status are not written."""
    st = lineage("merge_insert_only", shape)
    assert [c for c, _ in st.columns] == ["id", "name"]
    assert digest.digest(plan_record(f"rowlevel_merge_insert_only_{shape}"))["names"] == ["id", "name"]


@pytest.mark.parametrize("shape", SHAPES)
def test_update_and_delete_where_is_a_filter(shape):
    update = lineage("update_set_where", shape)
    assert {(i.field, i.subtype) for i in update.indirect} == {("status", FILTER)}
    assert {c: {i.subtype for i in inputs} for c, inputs in update.columns} == {
        "id": {IDENTITY}, "name": {IDENTITY}, "balance": {TRANSFORMATION}, "status": {IDENTITY}}
    delete = lineage("delete_exists", shape)
    assert delete.columns == ()
    assert {(i.table, i.field, i.subtype) for i in delete.indirect} == {
        (TABLES[shape], "id", FILTER), (SOURCE[shape], "id", FILTER)}


@pytest.mark.parametrize(("case", "shape"), [(c, s) for c, s in ALL if s != "analyzed"])
def test_the_rewrites_own_columns_are_never_lineage(case, shape):
    record = plan_record(f"rowlevel_{case}_{shape}")
    st = resolve.extract(record)
    if record["plan"][0]["class"].endswith("InsertOnlyMerge"):
        assert not INTERNAL & set(json.dumps(record["plan"]).split('"'))
    else:  # they are in the plan ...
        assert {"__row_operation", "_file"} <= set(json.dumps(record["plan"]).split('"'))
    # ... and nowhere in the lineage
    assert not INTERNAL & {c for c, _ in st.columns}
    assert not INTERNAL & {i.field for _, inputs in st.columns for i in inputs}
    assert not INTERNAL & {i.field for i in st.indirect}
    assert not INTERNAL & set(digest.digest(record)["names"])


@pytest.mark.parametrize(("case", "shape"), ALL, ids=[f"{c}-{s}" for c, s in ALL])
def test_a_row_level_write_digests_into_one_expand_row_per_clause_that_writes(case, shape):
    """The digest's lean plan: one EXPAND node for the command, a row per clause that writes values
    (a DELETE none), and the same lineage as the raw record."""
    record = plan_record(f"rowlevel_{case}_{shape}")
    lean = digest.digest(record)
    rows = [len(node["rows"]) for node in lean["nodes"] if node["k"] == EXPAND]
    clauses = {"merge_update_insert": 2, "merge_conditional_delete_then_update": 1, "merge_insert_only": 1,
               "update_set_where": 1, "delete_exists": 0}
    assert rows == [clauses[case]]
    assert lean["target"]["mode"] == case.split("_", 1)[0]
    assert resolve.extract(lean).to_dict() == resolve.extract(record).to_dict()


def test_a_merge_with_a_delete_lists_only_the_columns_its_insert_writes():
    """MERGE ... WHEN MATCHED AND u.op = 'D' THEN DELETE WHEN NOT MATCHED THEN INSERT (id, name) ... (not a
    corpus case), analyzed: id and name are written, balance and status are not target columns."""
    st = lineage("merge_delete_insert_some_columns", "analyzed")
    assert direct(st) == {"id": {"acct_upd.id:I"}, "name": {"acct_upd.name:T"}}
    assert indirect(st) == {"acct.id:JOIN", "acct_upd.id:JOIN", "acct_upd.op:CONDITIONAL"}


@pytest.mark.parametrize("shape", ["cow", "mor"])
@pytest.mark.xfail(strict=True, reason="known: a rewritten MergeRows gives an INSERT's left-out columns as NULL "
                                       "values, and they are listed as target columns with no source")
def test_a_rewritten_merge_with_a_delete_lists_only_the_columns_its_insert_writes(shape):
    st = lineage("merge_delete_insert_some_columns", shape)
    assert edges(st) == edges(lineage("merge_delete_insert_some_columns", "analyzed"))
    assert [c for c, _ in st.columns] == ["id", "name"]
