// The page's pure logic (src/lineage.js), run with `npm test` (node --test); the impact walk itself is
// checked against plugins/graph.py by tests/unit/plugins/test_graph.py.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  COLLAPSED_HEIGHT, collapsedLabel, columnsWithLineage, impact, impactCsv, impactRows, indexGraph, layoutTables,
  projectEdges, throughIndirect,
} from "../src/lineage.js";

const T = "spark_catalog.default.";
// a (3 columns) -> b (3 columns), b.k a join key of c's statement; b.z has no edge.
const GRAPH = {
  tables: [
    { id: "t0", label: `${T}a`, columns: ["x", "y", "k"] },
    { id: "t1", label: `${T}b`, columns: ["x", "y", "k", "z"] },
    { id: "t2", label: `${T}c`, columns: ["x"] },
  ],
  edges: [
    { id: "e0", source: "t0", source_column: "x", target: "t1", target_column: "x", type: "DIRECT", subtype: "IDENTITY", steps: [] },
    { id: "e1", source: "t0", source_column: "y", target: "t1", target_column: "y", type: "DIRECT", subtype: "AGGREGATION", steps: [] },
    { id: "e2", source: "t0", source_column: "k", target: "t1", target_column: "k", type: "DIRECT", subtype: "IDENTITY",
      change: "added", steps: [] },
    { id: "e3", source: "t1", source_column: "x", target: "t2", target_column: "x", type: "DIRECT", subtype: "TRANSFORMATION",
      steps: [{ task_id: "c", map_index: -1, statement: 0, subtype: "TRANSFORMATION", expression: "=x+1" }] },
  ],
  indirect: [{ id: "i0", source: "t1", source_column: "k", target: "t2", type: "INDIRECT", subtypes: ["JOIN"],
    target_columns: ["x"], steps: [] }],
  table_edges: [{ id: "te0", source: "t0", target: "t1" }, { id: "te1", source: "t1", target: "t2" }],
};

test("edges whose columns are both drawn stay single; the others join their tables, counted", () => {
  const idx = indexGraph(GRAPH);
  const drawn = new Set(["t1-c0", "t1-c1", "t1-c2", "t2-c0"]); // a collapsed, b and c open
  const endOf = (cid) => (drawn.has(cid) ? cid : idx.columns.get(cid).table);
  const { single, merged } = projectEdges(idx.direct, endOf, { tableOf: (cid) => idx.columns.get(cid).table });
  assert.deepEqual(single.map((e) => e.id), ["e3"]);
  assert.equal(merged.length, 1);
  assert.deepEqual({ ...merged[0], id: undefined }, { id: undefined, from: "t0", to: "t1", members: ["e0", "e1", "e2"],
    subtype: "AGGREGATION", change: "added" });
});

test("a hidden column's edges are not drawn at all", () => {
  const idx = indexGraph(GRAPH);
  const endOf = (cid) => (cid.startsWith("t0") ? null : cid);
  assert.deepEqual(projectEdges(idx.direct, endOf).single.map((e) => e.id), ["e3"]);
});

test("columns with lineage leave out a column no edge touches", () => {
  const idx = indexGraph(GRAPH);
  assert.equal(columnsWithLineage(idx).has(idx.col("t1", "z")), false);
  assert.equal(columnsWithLineage(idx).has(idx.col("t1", "k")), true);
});

test("a tall table keeps its top beside its neighbours, and a table below it in its rank moves down", () => {
  const idx = indexGraph(GRAPH);
  const heights = { t0: COLLAPSED_HEIGHT, t1: 5000, t2: COLLAPSED_HEIGHT };
  const pos = layoutTables(idx, new Set(["t0", "t1", "t2"]), (t) => heights[t.id]);
  const top = (id) => pos.get(id).y - heights[id] / 2;
  assert.ok(Math.abs(top("t1") - top("t0")) < 300, `${top("t1")} vs ${top("t0")}`);
  assert.ok(pos.get("t0").x < pos.get("t1").x && pos.get("t1").x < pos.get("t2").x);
});

test("a collapsed table says its name, how many columns, and the first few", () => {
  const table = { label: `${T}wide`, columns: ["a", "b", "c", "d"] };
  assert.equal(collapsedLabel(table, table.columns), "wide\n4 columns\na, b, c, …");
  assert.equal(collapsedLabel(table, ["b"], { onPath: true }), "wide\n1 of 4 columns on the path\nb");
});

test("a join key's value path and what only the join reaches are told apart, and the CSV holds the rows", () => {
  const idx = indexGraph(GRAPH);
  const key = idx.col("t1", "k");
  assert.deepEqual([...impact(idx, key).downstream.keys()], []);
  assert.deepEqual(throughIndirect(idx, key), { upstream: 0, downstream: 1 });
  const report = impactRows(idx, impact(idx, idx.col("t0", "x")));
  const csv = impactCsv(report).trim().split("\r\n");
  assert.equal(csv[0], "selected_table,selected_column,direction,distance,table,column,via_subtypes,expressions,tasks,via_columns");
  assert.deepEqual(csv.slice(1), [
    `${T}a,x,downstream,1,${T}b,x,IDENTITY,,,a.x`,
    `${T}a,x,downstream,2,${T}c,x,TRANSFORMATION,'=x+1,c,b.x`, // a leading = is defused
  ]);
});

test("a CSV cell defuses a formula, also after leading whitespace, and quotes what needs quoting", async () => {
  const { csvCell } = await import("../src/lineage.js");
  const cases = [
    ["plain", "plain"], ["a,b", '"a,b"'], ['say "x"', '"say ""x"""'], ["", ""], [null, ""], [42, "42"],
    ["=1+1", "'=1+1"], ["+1", "'+1"], ["-1", "'-1"], ["@SUM(A1)", "'@SUM(A1)"],
    [" =1+1", "' =1+1"], ["  +cmd", "'  +cmd"], ["\t=1+1", "'\t=1+1"], ["\n@x", `"'\n@x"`],
    ["\u00a0=1+1", "'\u00a0=1+1"], ["\uff1d1+1", "'\uff1d1+1"], ["\tplain", "'\tplain"], [" x ", '" x "'],
    ["a=1", "a=1"], ["x - y", "x - y"],
  ];
  for (const [value, cell] of cases) assert.equal(csvCell(value), cell, JSON.stringify(value));
});
