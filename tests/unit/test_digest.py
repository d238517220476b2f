"""lineage/digest.py: the lean plan the driver dumps gives the same lineage as Spark's JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from airflow_lineage_provider.lineage import digest, plan

PLANS = Path(__file__).resolve().parents[1] / "data" / "plans"
FIXTURES = sorted(p.stem for p in PLANS.glob("*.json"))


def raw(name: str) -> dict:
    return json.loads((PLANS / f"{name}.json").read_text())


@pytest.mark.parametrize("name", FIXTURES)
def test_lean_record_through_json_gives_the_same_lineage(name):
    record = raw(name)
    lean_text = json.dumps(digest.digest(record), separators=(",", ":"))
    lean = json.loads(lean_text)
    assert lean["format"] == digest.LEAN and digest.is_lean(lean)
    assert "plan" not in lean and "extras" not in lean
    assert plan.extract(lean).to_dict() == plan.extract(record).to_dict()
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
    assert kinds.count(digest.REL) == 2 and set(kinds) <= {digest.REL, digest.DEF, digest.MAP, digest.CONST}
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
    lineage = plan.extract(lean)
    assert lineage.confidence == plan.UNKNOWN_NODE_CONFIDENCE
    assert all(inputs for _, inputs in lineage.columns)  # passed through, not lost
