"""lineage/plan/digest.py: the lean plan the driver dumps gives the same lineage as Spark's JSON."""

from __future__ import annotations

import json

import pytest

from airflow_lineage_provider.lineage.plan import digest, resolve
from airflow_lineage_provider.lineage.plan.lean import (
    CONST,
    DEF,
    LEAN,
    MAP,
    REL,
    is_lean,
    outputs,
    pack_columns,
    unpack_columns,
)
from tests.helpers import PLANS, plan_record

FIXTURES = sorted(p.stem for p in PLANS.glob("*.json"))


def raw(name: str) -> dict:
    return plan_record(name)


@pytest.mark.parametrize("name", FIXTURES)
def test_lean_record_through_json_gives_the_same_lineage(name):
    record = raw(name)
    lean_text = json.dumps(digest.digest(record), separators=(",", ":"))
    lean = json.loads(lean_text)
    assert lean["format"] == LEAN and is_lean(lean)
    assert "plan" not in lean and "extras" not in lean
    assert resolve.extract(lean).to_dict() == resolve.extract(record).to_dict()
    # The point of the digest: far less to read back than Spark's JSON.
    assert len(lean_text) * 3 < len(json.dumps(record, separators=(",", ":")))


def test_digest_keeps_the_record_fields_and_is_idempotent():
    record = raw("seed_join")
    record.update(index=3, sql="INSERT ...", line=7)
    lean = digest.digest(record)
    assert (lean["index"], lean["sql"], lean["line"]) == (3, "INSERT ...", 7)
    assert digest.digest(lean) is lean


def test_seed_join_lean_shape():
    lean = digest.digest(raw("seed_join"))
    kinds = [n["k"] for n in lean["nodes"]]
    # Aliases, filters and CTE definitions fold into their child: only relations, the join and projections stay.
    assert kinds.count(REL) == 2 and set(kinds) <= {REL, DEF, MAP, CONST}
    assert {d["table"] for d in lean["datasets"]} == {"spark_catalog.demo.ods_users", "spark_catalog.demo.dim_company"}
    assert lean["target"]["table"] == "spark_catalog.demo.dwd_users"
    assert lean["names"] == [n for n in lean["names"] if n]  # every output named
    join_conditions = [c for c in lean["conds"] if c[0] == "JOIN"]
    assert join_conditions and all(refs for _, refs, _, _, _ in join_conditions)


def test_unknown_node_is_warned_in_the_digest():
    record = raw("seed_join")
    for node in record["plan"]:
        if node["class"].endswith(".SubqueryAlias"):
            node["class"] = "org.apache.spark.sql.catalyst.plans.logical.MadeUpNode"
            break
    lean = digest.digest(record)
    assert any("MadeUpNode" in w for w in lean["warnings"])
    lineage = resolve.extract(lean)
    assert lineage.confidence == resolve.UNKNOWN_NODE_CONFIDENCE
    assert all(inputs for _, inputs in lineage.columns)  # passed through, not lost


def test_an_older_lean_dump_is_refused_with_the_reason():
    with pytest.raises(ValueError, match=r"lean/1 plan dump.*run the job again"):
        digest.digest({"format": "lean/1", "nodes": [], "index": 0})


def test_join_outputs_are_worked_out_not_written_twice():
    lean = digest.digest(raw("seed_join"))
    nodes = lean["nodes"]
    joins = [i for i, n in enumerate(nodes) if n["k"] == DEF and n.get("p")]
    assert joins, "the join passes both sides through"
    for i in joins:
        assert "o" not in nodes[i]
        left, right = nodes[i]["c"]
        cache: dict = {}
        assert outputs(nodes, i, cache) == outputs(nodes, left, cache) + outputs(nodes, right, cache)
    assert len(outputs(nodes, lean["query"], {})) == len(lean["names"])


@pytest.mark.parametrize("columns", [
    [["id", "bigint"], ["price", "decimal(7,2)"], ["tags", "array<struct<k:string,v:int>>"]],
    [["odd\tname", "string"], ["line\nbreak", "int"]],  # Spark allows both in a quoted name
    [],
])
def test_schemas_pack_and_unpack(columns):
    packed = pack_columns(columns)
    assert unpack_columns(json.loads(json.dumps(packed))) == [tuple(c) for c in columns]


def test_seed_schemas_come_back_typed():
    lean = json.loads(json.dumps(digest.digest(raw("seed_join"))))
    schemas = {t: unpack_columns(c) for t, c in lean["schemas"].items()}
    assert schemas["spark_catalog.demo.ods_users"] == [
        ("id", "BIGINT"), ("name", "STRING"), ("birthday", "TIMESTAMP"), ("ts", "TIMESTAMP")]
    # The written table: its names (the statement's output), no types known from the plan.
    assert schemas["spark_catalog.demo.dwd_users"] == [
        (name, "") for name in ("id", "name", "company_name", "birthday", "ts", "p")]
