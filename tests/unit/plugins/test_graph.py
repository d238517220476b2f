"""plugins/graph.py: lineage documents of one or many tasks -> the graph the UI draws."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from airflow_lineage_provider.lineage.model import (
    AGGREGATION,
    DIRECT,
    IDENTITY,
    INDIRECT,
    JOIN,
    TRANSFORMATION,
    ColumnInput,
    Dataset,
    LineageReport,
    StatementLineage,
)
from airflow_lineage_provider.plugins.graph import TaskLineage, build_graph, impact

T = "spark_catalog.default."


def ds(table: str, path: str | None = None) -> Dataset:
    return Dataset(namespace="file", name=path or f"/wh/{table.rsplit('.', 1)[-1]}", table=T + table if table else None)


def stmt(index: int, target: Dataset | None, inputs: tuple[Dataset, ...], columns: dict[str, list[ColumnInput]],
         indirect: tuple[ColumnInput, ...] = ()) -> StatementLineage:
    return StatementLineage(index=index, sql=f"-- {index}", method="plan", confidence=1.0, target=target,
                            inputs=inputs, columns=tuple((c, tuple(s)) for c, s in columns.items()), indirect=indirect)


def col(table: str, field: str, subtype: str = IDENTITY, expression: str = "") -> ColumnInput:
    return ColumnInput(table, field, DIRECT, subtype, expression or field)


def task(task_id: str, *statements: StatementLineage, map_index: int = -1) -> TaskLineage:
    return TaskLineage(task_id, map_index, LineageReport(tuple(statements)))


def table_by_label(graph: dict, label: str) -> dict:
    [table] = [t for t in graph["tables"] if t["label"] == label]
    return table


def edge_set(graph: dict) -> set[tuple[str, str, str, str, str]]:
    labels = {t["id"]: t["label"] for t in graph["tables"]}
    return {(labels[e["source"]], e["source_column"], labels[e["target"]], e["target_column"], e["subtype"])
            for e in graph["edges"]}


# The demo's two seed statements, then its bare SELECT.
SEED = task(
    "build_dwd_users",
    stmt(0, ds("dwd_users"), (ds("ods_users"),), {
        "id": [col(T + "ods_users", "id")],
        "birthday": [col(T + "ods_users", "birthday")],
        "p": [col(T + "ods_users", "birthday", TRANSFORMATION, "date_format(birthday, 'yyyyMMdd')")],
    }),
    stmt(1, ds("dwd_users"), (ds("dim_company"), ds("ods_users")), {
        "id": [col(T + "ods_users", "id")],
        "name": [col(T + "ods_users", "name", TRANSFORMATION, "concat(a.name, b.company_name)"),
                 col(T + "dim_company", "company_name", TRANSFORMATION, "concat(a.name, b.company_name)")],
        "birthday": [col(T + "ods_users", "birthday")],
        "p": [col(T + "ods_users", "birthday", TRANSFORMATION, "date_format(a.birthday, 'yyyyMMdd')")],
    }, indirect=(ColumnInput(T + "dim_company", "user_id", INDIRECT, JOIN), ColumnInput(T + "ods_users", "id", INDIRECT, JOIN))),
    stmt(2, None, (ds("dwd_users"),), {"p": [col(T + "dwd_users", "p")], "users": []}),
)


def test_tables_are_nodes_with_written_columns_first_then_read_ones():
    g = build_graph([SEED])
    assert [t["label"] for t in g["tables"]] == [
        T + "dwd_users", T + "ods_users", T + "dim_company", "query result: build_dwd_users statement 3"]
    assert table_by_label(g, T + "dwd_users")["columns"] == ["id", "birthday", "p", "name"]
    assert table_by_label(g, T + "ods_users")["columns"] == ["id", "birthday", "name"]
    assert table_by_label(g, T + "dim_company")["columns"] == ["company_name", "user_id"]
    result = table_by_label(g, "query result: build_dwd_users statement 3")
    assert result["kind"] == "result" and result["columns"] == ["p", "users"]
    assert table_by_label(g, T + "ods_users")["namespace"] == "file"


def test_one_edge_per_column_pair_with_every_statement_as_a_step():
    g = build_graph([SEED])
    assert edge_set(g) == {
        (T + "ods_users", "id", T + "dwd_users", "id", IDENTITY),
        (T + "ods_users", "birthday", T + "dwd_users", "birthday", IDENTITY),
        (T + "ods_users", "birthday", T + "dwd_users", "p", TRANSFORMATION),
        (T + "ods_users", "name", T + "dwd_users", "name", TRANSFORMATION),
        (T + "dim_company", "company_name", T + "dwd_users", "name", TRANSFORMATION),
        (T + "dwd_users", "p", "query result: build_dwd_users statement 3", "p", IDENTITY),
    }
    [p_edge] = [e for e in g["edges"] if e["target_column"] == "p" and e["source_column"] == "birthday"]
    assert [(s["statement"], s["expression"]) for s in p_edge["steps"]] == [
        (0, "date_format(birthday, 'yyyyMMdd')"), (1, "date_format(a.birthday, 'yyyyMMdd')")]
    assert all(s["task_id"] == "build_dwd_users" for s in p_edge["steps"])


def test_edge_subtype_is_the_strongest_of_its_steps():
    g = build_graph([task("t",
                          stmt(0, ds("out"), (ds("src"),), {"x": [col(T + "src", "a")]}),
                          stmt(1, ds("out"), (ds("src"),), {"x": [col(T + "src", "a", AGGREGATION, "sum(a)")]}))])
    [edge] = g["edges"]
    assert edge["subtype"] == AGGREGATION
    assert [s["subtype"] for s in edge["steps"]] == [IDENTITY, AGGREGATION]


def test_indirect_inputs_point_at_the_target_table_and_name_the_columns_they_influence():
    g = build_graph([SEED])
    ids = {t["label"]: t["id"] for t in g["tables"]}
    by_source = {(e["source"], e["source_column"]): e for e in g["indirect"]}
    join = by_source[(ids[T + "dim_company"], "user_id")]
    assert join["target"] == ids[T + "dwd_users"]
    assert join["subtypes"] == [JOIN]
    assert join["target_columns"] == ["id", "name", "birthday", "p"]
    assert join["steps"] == [{"task_id": "build_dwd_users", "map_index": -1, "statement": 1, "subtype": JOIN}]


def test_a_table_written_by_one_task_and_read_by_another_is_one_node():
    prepare = task("prepare", stmt(0, ds("ods_users"), (), {"birthday": []}))
    g = build_graph([prepare, SEED])
    assert [t["label"] for t in g["tables"]].count(T + "ods_users") == 1
    ods = table_by_label(g, T + "ods_users")
    assert ods["writers"] == [{"task_id": "prepare", "map_index": -1}]
    assert ods["readers"] == [{"task_id": "build_dwd_users", "map_index": -1}]
    # The path continues across tasks: a third task reading dwd_users extends it.
    report = task("report", stmt(0, ds("rpt"), (ds("dwd_users"),), {"month": [col(T + "dwd_users", "p", TRANSFORMATION, "substr(p, 1, 6)")]}))
    g = build_graph([prepare, SEED, report])
    ids = {t["label"]: t["id"] for t in g["tables"]}
    down = impact(g, ids[T + "ods_users"], "birthday")["downstream"]
    assert {(t, c, d) for t, c, d in down} == {
        (ids[T + "dwd_users"], "birthday", 1), (ids[T + "dwd_users"], "p", 1),
        (ids["query result: build_dwd_users statement 3"], "p", 2), (ids[T + "rpt"], "month", 2)}


def test_a_path_read_is_the_table_written_at_that_location():
    writer = task("w", stmt(0, ds("events", "/data/events"), (ds("raw"),), {"e": [col(T + "raw", "e")]}))
    path_read = Dataset(namespace="file", name="/data/events")  # read by path: no catalog name
    reader = task("r", stmt(0, ds("agg"), (path_read,), {"n": [col("/data/events", "e", AGGREGATION, "count(e)")]}))
    g = build_graph([writer, reader])
    events = [t for t in g["tables"] if t["name"] == "/data/events"]
    assert len(events) == 1 and events[0]["label"] == T + "events"
    assert (T + "events", "e", T + "agg", "n", AGGREGATION) in edge_set(g)


def test_same_catalog_name_with_an_unknown_location_joins_the_located_table():
    static = Dataset(namespace="spark_catalog", name=T + "ods_users", table=T + "ods_users")  # method sql, no location
    reader = task("static", stmt(0, ds("x"), (static,), {"b": [col(T + "ods_users", "birthday")]}))
    g = build_graph([SEED, reader])
    ods = table_by_label(g, T + "ods_users")
    assert ods["namespace"] == "file" and ods["name"] == "/wh/ods_users"


def test_mapped_tasks_get_one_result_node_each_and_keep_their_map_index_in_steps():
    docs = [task("m", stmt(0, None, (ds("src"),), {"v": [col(T + "src", "v")]}), map_index=i) for i in (0, 1)]
    g = build_graph(docs)
    assert sorted(t["label"] for t in g["tables"] if t["kind"] == "result") == [
        "query result: m[0] statement 1", "query result: m[1] statement 1"]
    assert sorted(s["map_index"] for e in g["edges"] for s in e["steps"]) == [0, 1]


def test_impact_walks_upstream_and_downstream_and_survives_cycles():
    loop = task("loop", stmt(0, ds("t"), (ds("t"),), {"a": [col(T + "t", "a", TRANSFORMATION, "a + 1")]}))
    g = build_graph([SEED, loop])
    ids = {t["label"]: t["id"] for t in g["tables"]}
    up = impact(g, ids[T + "dwd_users"], "name")["upstream"]
    assert {(t, c) for t, c, _ in up} == {(ids[T + "ods_users"], "name"), (ids[T + "dim_company"], "company_name")}
    assert impact(g, ids[T + "t"], "a") == {"upstream": [], "downstream": []}


def test_impact_follows_indirect_inputs_only_when_asked():
    g = build_graph([SEED])
    ids = {t["label"]: t["id"] for t in g["tables"]}
    assert impact(g, ids[T + "dim_company"], "user_id")["downstream"] == []
    down = impact(g, ids[T + "dim_company"], "user_id", indirect=True)["downstream"]
    assert {c for t, c, d in down if t == ids[T + "dwd_users"] and d == 1} == {"id", "name", "birthday", "p"}


def test_table_edges_summarise_column_edges_and_indirect_only_links():
    g = build_graph([SEED])
    labels = {t["id"]: t["label"] for t in g["tables"]}
    summary = {(labels[e["source"]], labels[e["target"]]): (e["columns"], e["indirect"], e["subtype"]) for e in g["table_edges"]}
    assert summary[(T + "ods_users", T + "dwd_users")] == (4, 1, TRANSFORMATION)
    assert summary[(T + "dim_company", T + "dwd_users")] == (1, 1, TRANSFORMATION)


def test_task_summaries_keep_sql_method_and_warnings():
    report = LineageReport((stmt(0, ds("a"), (), {}),), warnings=("plan capture failed",))
    g = build_graph([TaskLineage("t", -1, report)])
    assert g["tasks"] == [{"task_id": "t", "map_index": -1, "warnings": ["plan capture failed"], "statements": [
        {"index": 0, "sql": "-- 0", "method": "plan", "confidence": 1.0, "target": T + "a",
         "target_table": g["tables"][0]["id"], "warnings": [], "agreement": None}]}]


def test_task_summaries_carry_each_statements_agreement():
    from dataclasses import replace

    from airflow_lineage_provider.lineage.model import Agreement

    differs = Agreement("differs", only_plan=(f"id <- {T}src.id IDENTITY",))
    report = LineageReport((replace(stmt(0, ds("a"), (), {}), agreement=differs),))
    [task] = build_graph([TaskLineage("t", -1, report)])["tasks"]
    assert task["statements"][0]["agreement"] == {"static": "differs", "only_plan": [f"id <- {T}src.id IDENTITY"],
                                                  "only_static": []}


def test_no_documents_is_an_empty_graph():
    assert build_graph([]) == {"tables": [], "edges": [], "indirect": [], "table_edges": [], "tasks": [], "changes": []}


def chain(n: int) -> list[TaskLineage]:
    """t0 -> t1 -> ... -> tn, one column each, and t{i-1}.k a join key of every statement."""
    return [task(f"w{i}", stmt(0, ds(f"t{i}"), (ds(f"t{i - 1}"),),
                               {"a": [col(T + f"t{i - 1}", "a", TRANSFORMATION, f"a + {i}")], "k": [col(T + f"t{i - 1}", "k")]},
                               indirect=(ColumnInput(T + f"t{i - 1}", "k", INDIRECT, JOIN),)))
            for i in range(1, n + 1)]


def test_impact_depth_stops_that_many_hops_out():
    g = build_graph(chain(4))
    ids = {t["label"]: t["id"] for t in g["tables"]}
    for depth, expected in ((1, {(ids[T + "t1"], "a", 1)}), (2, {(ids[T + "t1"], "a", 1), (ids[T + "t2"], "a", 2)})):
        assert set(impact(g, ids[T + "t0"], "a", depth=depth)["downstream"]) == expected
    assert len(impact(g, ids[T + "t0"], "a")["downstream"]) == 4
    assert {(c, d) for _, c, d in impact(g, ids[T + "t3"], "a", depth=1)["upstream"]} == {("a", 1)}


def test_what_only_a_join_key_reaches_is_counted_apart():
    from airflow_lineage_provider.plugins.graph import through_indirect

    g = build_graph(chain(3))
    ids = {t["label"]: t["id"] for t in g["tables"]}
    # By value, t0.k reaches t1.k, t2.k, t3.k; as a join key also every a downstream of it.
    assert len(impact(g, ids[T + "t0"], "k")["downstream"]) == 3
    assert through_indirect(g, ids[T + "t0"], "k") == {"upstream": 0, "downstream": 3}
    assert through_indirect(g, ids[T + "t0"], "k", depth=1) == {"upstream": 0, "downstream": 1}


def test_changes_mark_the_edges_diff_found_and_place_a_lost_column():
    from airflow_lineage_provider.lineage.diff import diff
    from airflow_lineage_provider.plugins.graph import TaskChanges

    old = task("t", stmt(0, ds("out"), (ds("src"),), {
        "a": [col(T + "src", "a")], "b": [col(T + "src", "b", TRANSFORMATION, "upper(b)")], "c": [col(T + "src", "c")]}))
    new = task("t", stmt(0, ds("out"), (ds("src"),), {
        "a": [col(T + "src", "a"), col(T + "src", "z", TRANSFORMATION, "a || z")],
        "b": [col(T + "src", "b", AGGREGATION, "max(b)")], "c": []}))
    d = diff(old.report, new.report)
    g = build_graph([new], {("t", -1): TaskChanges("manual__1", d)})
    marks = {(e["source_column"], e["target_column"]): e.get("change") for e in g["edges"]}
    assert marks == {("a", "a"): None, ("z", "a"): "added", ("b", "b"): "changed"}
    [changed] = [e for e in g["edges"] if e.get("change") == "changed"]
    assert changed["steps"][0]["previous"] == {"subtype": TRANSFORMATION, "expression": "upper(b)"}
    [summary] = g["changes"]
    assert summary["previous_run_id"] == "manual__1" and summary["lines"] == d.lines()
    assert summary["lost"] == [{"target": T + "out", "column": "c", "table": table_by_label(g, T + "out")["id"]}]
    assert [e["kind"] for e in summary["edges"]] == ["added", "changed", "removed"]
    assert build_graph([new])["changes"] == []


UI = Path(__file__).resolve().parents[3] / "airflow_lineage_provider" / "plugins" / "ui"


@pytest.mark.skipif(not (UI / "node_modules").is_dir() or not shutil.which("node"),
                    reason="needs `npm ci` in airflow_lineage_provider/plugins/ui")
def test_the_page_walks_as_impact_does():
    """One definition of the walk: lineage.js, which the page runs on a click, gives what impact() gives
    on the same graphs, at every depth, with and without indirect inputs."""
    graphs = [build_graph([SEED]), build_graph(chain(4)),
              build_graph([SEED, task("loop", stmt(0, ds("t"), (ds("t"),), {"a": [col(T + "t", "a")]}))])]
    cases = [(gi, t["id"], c, ind, depth) for gi, g in enumerate(graphs) for t in g["tables"] for c in t["columns"]
             for ind in (False, True) for depth in (1, 2, None)]
    script = """
      import { indexGraph, impact } from "./src/lineage.js";
      import { readFileSync } from "node:fs";
      const { graphs, cases } = JSON.parse(readFileSync(0, "utf8"));
      const indexes = graphs.map(indexGraph);
      const out = cases.map(([gi, table, column, indirect, depth]) => {
        const idx = indexes[gi];
        const r = impact(idx, idx.col(table, column), { indirect, depth });
        const side = (m) => [...m].map(([id, info]) => [idx.columns.get(id).table, idx.columns.get(id).name, info.distance]);
        return { upstream: side(r.upstream), downstream: side(r.downstream) };
      });
      process.stdout.write(JSON.stringify(out));
    """
    proc = subprocess.run(["node", "--input-type=module", "-e", script], cwd=UI, check=True, capture_output=True,
                          text=True, input=json.dumps({"graphs": graphs, "cases": cases}))
    for (gi, table, column, ind, depth), page in zip(cases, json.loads(proc.stdout), strict=True):
        python = impact(graphs[gi], table, column, indirect=ind, depth=depth)
        for side in ("upstream", "downstream"):
            assert sorted(map(tuple, page[side])) == sorted(python[side]), (gi, table, column, ind, depth, side)
