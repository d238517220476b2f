"""lineage/plan/resolve.py on real analyzed plans captured from Spark 4.2 (tests/data/plans)."""

from __future__ import annotations

import copy

import pytest

from airflow_lineage_provider.lineage.model import (
    DIRECT,
    IDENTITY,
    INDIRECT,
    JOIN,
    TRANSFORMATION,
    ColumnInput,
    Dataset,
    StatementLineage,
)
from airflow_lineage_provider.lineage.plan import resolve
from tests.helpers import plan_record, seed_join_edges, seed_single_edges

WH = "/wh/warehouse/demo.db/"
ODS = "spark_catalog.demo.ods_users"
DIM = "spark_catalog.demo.dim_company"
DWD = "spark_catalog.demo.dwd_users"
SEED_SINGLE_EDGES = seed_single_edges("demo")
SEED_JOIN_EDGES = seed_join_edges("demo")
MADE_UP = "org.apache.spark.sql.catalyst.plans.logical.MadeUpNode"


def record(name: str) -> dict:
    return plan_record(name)


def edges(lineage: StatementLineage) -> dict[str, set[tuple[str, str, str, str]]]:
    """Target column -> {(source table, source field, subtype, expression)}; every edge is DIRECT, unmasked."""
    out = {}
    for column, inputs in lineage.columns:
        assert all(i.type == DIRECT and not i.masking for i in inputs), column
        out[column] = {(i.table, i.field, i.subtype, i.expression) for i in inputs}
    return out


def source(name: str) -> Dataset:
    return Dataset(namespace="file", name=WH + name, table=f"spark_catalog.demo.{name}")


JOIN_KEYS = (
    ColumnInput(DIM, "user_id", INDIRECT, JOIN, "", False),
    ColumnInput(ODS, "id", INDIRECT, JOIN, "", False),
)


# -- seed_join: INSERT INTO dwd_users SELECT ... FROM ods_users a JOIN dim_company b ON a.id = b.user_id


@pytest.fixture(scope="module")
def seed_join() -> StatementLineage:
    return resolve.extract(record("seed_join"))


def test_seed_join_columns_in_target_order(seed_join):
    assert [c for c, _ in seed_join.columns] == ["id", "name", "company_name", "birthday", "ts", "p"]


@pytest.mark.parametrize("column", list(SEED_JOIN_EDGES))
def test_seed_join_column_edges(seed_join, column):
    assert edges(seed_join)[column] == SEED_JOIN_EDGES[column]


def test_seed_join_column_inputs_are_sorted(seed_join):
    assert [i.table for i in seed_join.column_map["name"]] == [DIM, ODS]


def test_seed_join_indirect_join_keys(seed_join):
    assert seed_join.indirect == JOIN_KEYS


def test_seed_join_target_and_inputs(seed_join):
    assert seed_join.target == Dataset(namespace="file", name=WH + "dwd_users", table=DWD, mode="append")
    assert seed_join.inputs == (source("dim_company"), source("ods_users"))


def test_seed_join_statement_fields(seed_join):
    assert seed_join.index == 11
    assert seed_join.method == "plan"
    assert seed_join.sql.startswith("INSERT INTO dwd_users SELECT a.id, concat(a.name, b.company_name)")
    assert seed_join.confidence == 1.0
    assert seed_join.warnings == ()


# -- seed_single_table: INSERT INTO dwd_users SELECT id, name, name AS company_name, ... FROM ods_users


@pytest.fixture(scope="module")
def seed_single() -> StatementLineage:
    return resolve.extract(record("seed_single_table"))


def test_seed_single_table_edges(seed_single):
    assert [c for c, _ in seed_single.columns] == ["id", "name", "company_name", "birthday", "ts", "p"]
    assert edges(seed_single) == SEED_SINGLE_EDGES


def test_seed_single_table_statement(seed_single):
    assert seed_single.target == Dataset(namespace="file", name=WH + "dwd_users", table=DWD, mode="append")
    assert seed_single.inputs == (source("ods_users"),)
    assert seed_single.indirect == ()
    assert seed_single.index == 10
    assert seed_single.confidence == 1.0
    assert seed_single.warnings == ()


# -- ctas_upper: CREATE TABLE t_ctas USING parquet AS SELECT id, upper(name) AS uname FROM ods_users


@pytest.fixture(scope="module")
def ctas() -> StatementLineage:
    return resolve.extract(record("ctas_upper"))


def test_ctas_edges(ctas):
    assert [c for c, _ in ctas.columns] == ["id", "uname"]
    assert edges(ctas) == {
        "id": {(ODS, "id", IDENTITY, "ods_users.id")},
        "uname": {(ODS, "name", TRANSFORMATION, "upper(ods_users.name)")},
    }


def test_ctas_statement(ctas):
    assert ctas.target == Dataset(
        namespace="file", name=WH + "t_ctas", table="spark_catalog.demo.t_ctas", mode="create"
    )
    assert ctas.inputs == (source("ods_users"),)
    assert ctas.indirect == ()
    assert ctas.index == 12
    assert ctas.confidence == 1.0
    assert ctas.warnings == ()


def test_extract_does_not_modify_the_record():
    raw = record("seed_join")
    before = copy.deepcopy(raw)
    resolve.extract(raw)
    assert raw == before


# -- a plan node class the resolver has never heard of


def with_unknown_node(name: str, position: int, expected_class: str) -> dict:
    rec = copy.deepcopy(record(name))
    assert rec["plan"][position]["class"].endswith("." + expected_class)
    rec["plan"][position]["class"] = MADE_UP
    return rec


UNKNOWN_CASES = [
    pytest.param("seed_join", 2, "Project", SEED_JOIN_EDGES, id="join-inner-project"),
    pytest.param("seed_join", 4, "SubqueryAlias", SEED_JOIN_EDGES, id="join-subquery-alias"),
    pytest.param("seed_single_table", 2, "Project", SEED_SINGLE_EDGES, id="single-inner-project"),
]


@pytest.mark.parametrize(("name", "position", "cls", "expected"), UNKNOWN_CASES)
def test_unknown_node_warns_and_lowers_confidence(name, position, cls, expected):
    lineage = resolve.extract(with_unknown_node(name, position, cls))
    assert lineage.warnings == ("unknown plan node MadeUpNode: lineage passed through on a best-effort basis",)
    assert lineage.confidence == resolve.UNKNOWN_NODE_CONFIDENCE
    assert lineage.confidence < 1.0


@pytest.mark.parametrize(("name", "position", "cls", "expected"), UNKNOWN_CASES)
def test_unknown_node_keeps_lineage_of_every_column(name, position, cls, expected):
    lineage = resolve.extract(with_unknown_node(name, position, cls))
    assert [c for c, _ in lineage.columns] == list(expected)
    assert edges(lineage) == expected


def test_unknown_node_keeps_join_keys():
    lineage = resolve.extract(with_unknown_node("seed_join", 2, "Project"))
    assert lineage.indirect == JOIN_KEYS


def test_a_dry_runs_write_spark_would_refuse_keeps_its_lineage_and_says_so_once():
    """``refused`` (a dry run's, record.py): a warning on the statement, raw or resolved in the driver, never
    twice, and no lower confidence (the lineage is the analyzed plan's)."""
    from airflow_lineage_provider.job.capture import digested
    from airflow_lineage_provider.lineage.plan import record as raw

    why = "[UNSUPPORTED_FEATURE.TABLE_OPERATION] The feature is not supported: Table t does not support DELETE"
    rec = {**plan_record("seed_join"), raw.REFUSED: why}
    plain = resolve.extract(plan_record("seed_join"))
    for statement in (resolve.extract(copy.deepcopy(rec)), resolve.extract(digested(copy.deepcopy(rec), []))):
        assert statement.warnings == (resolve.refused_warning(why),)
        assert statement.columns == plain.columns and statement.confidence == plain.confidence
    assert resolve.refused_warning(why) == f"dry run only: a real run of this statement would be refused by Spark ({why})"
