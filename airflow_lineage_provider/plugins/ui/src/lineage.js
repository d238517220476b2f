// Pure logic of the column-lineage view (no DOM, no Cytoscape): indexes the graph the API
// returns (plugins/graph.py), walks impact paths, lays tables out with dagre, writes CSV.
// Kept apart from main.js so `node --test` can check it.
import dagre from "@dagrejs/dagre";

export const ROW_HEIGHT = 26;
export const HEADER_HEIGHT = 34;
export const TABLE_WIDTH = 200;

/** Short name of a table: the table of `catalog.db.table`, the last part of a path. */
export function shortName(label) {
  const text = String(label);
  if (text.startsWith("query result")) return text;
  if (text.startsWith("/") || text.includes("://")) {
    const parts = text.split("/").filter(Boolean);
    return parts.length ? parts[parts.length - 1] : text;
  }
  const parts = text.split(".");
  return parts.length > 2 ? parts.slice(2).join(".") : parts[parts.length - 1];
}

/** Ids for Cytoscape built from positions, never from names, so no name needs escaping. */
export function indexGraph(graph) {
  const tables = new Map();
  const columns = new Map(); // column id -> {id, table, name}
  const byName = new Map(); // table id + "\u0000" + column -> column id
  for (const t of graph.tables) {
    tables.set(t.id, t);
    t.columns.forEach((name, i) => {
      const id = `${t.id}-c${i}`;
      columns.set(id, { id, table: t.id, name });
      byName.set(`${t.id}\u0000${name}`, id);
    });
  }
  const col = (tableId, name) => byName.get(`${tableId}\u0000${name}`);
  const direct = graph.edges.map((e) => ({ ...e, from: col(e.source, e.source_column), to: col(e.target, e.target_column) }));
  const indirect = graph.indirect.map((e) => ({
    ...e,
    from: col(e.source, e.source_column),
    to: e.target_columns.map((c) => col(e.target, c)).filter(Boolean),
  }));
  return { graph, tables, columns, col, direct, indirect };
}

/** Adjacency lists of the column graph, built once per graph and per "indirect" setting. */
function adjacency(index, indirect) {
  const key = indirect ? "adjIndirect" : "adjDirect";
  if (index[key]) return index[key];
  const down = new Map();
  const up = new Map();
  const link = (map, a, b, edgeId) => {
    let list = map.get(a);
    if (!list) map.set(a, (list = []));
    list.push({ other: b, edgeId });
  };
  for (const e of index.direct) {
    link(down, e.from, e.to, e.id);
    link(up, e.to, e.from, e.id);
  }
  if (indirect) {
    for (const e of index.indirect) {
      for (const to of e.to) {
        link(down, e.from, to, e.id);
        link(up, to, e.from, e.id);
      }
    }
  }
  index[key] = { down, up };
  return index[key];
}

/**
 * Every column upstream and downstream of one column, and the edges on those paths: the walk
 * plugins/graph.py's impact() defines (test_graph.py runs both on the same graphs). Breadth first,
 * so `distance` is the fewest hops; `depth` stops it that many hops out (null: all); with
 * `indirect`, an indirect input reaches every column its statement writes.
 */
export function impact(index, columnId, { indirect = false, depth = null } = {}) {
  const { down, up } = adjacency(index, indirect);
  const edges = new Set();
  const walk = (adj) => {
    const seen = new Map([[columnId, { distance: 0, via: [] }]]);
    let frontier = [columnId];
    let hops = 0;
    while (frontier.length && (depth === null || depth === undefined || hops < depth)) {
      hops += 1;
      const next = [];
      for (const node of frontier) {
        for (const { other, edgeId } of adj.get(node) || []) {
          edges.add(edgeId); // every edge walked, also one into a column reached otherwise: all of the path
          const known = seen.get(other);
          if (!known) {
            seen.set(other, { distance: hops, via: [edgeId], from: [node] });
            next.push(other);
          } else if (known.distance === hops) {
            known.via.push(edgeId);
            known.from.push(node);
          }
        }
      }
      frontier = next;
    }
    seen.delete(columnId);
    return seen;
  };
  return { column: columnId, upstream: walk(up), downstream: walk(down), edges };
}

/** How many more columns the walk reaches through indirect inputs: graph.py's through_indirect(). */
export function throughIndirect(index, columnId, { depth = null } = {}) {
  const direct = impact(index, columnId, { depth });
  const both = impact(index, columnId, { indirect: true, depth });
  return { upstream: both.upstream.size - direct.upstream.size, downstream: both.downstream.size - direct.downstream.size };
}

/** Tables upstream and downstream of a table, through table-level edges. */
export function tableImpact(graph, tableId) {
  const walk = (forward) => {
    const seen = new Set([tableId]);
    const edges = new Set();
    let frontier = [tableId];
    while (frontier.length) {
      const next = [];
      for (const node of frontier) {
        for (const e of graph.table_edges) {
          const [a, b] = forward ? [e.source, e.target] : [e.target, e.source];
          if (a === node) {
            edges.add(e.id);
            if (!seen.has(b)) {
              seen.add(b);
              next.push(b);
            }
          }
        }
      }
      frontier = next;
    }
    seen.delete(tableId);
    return { tables: seen, edges };
  };
  const up = walk(false);
  const down = walk(true);
  return { upstream: up.tables, downstream: down.tables, edges: new Set([...up.edges, ...down.edges]) };
}

/** One row per impacted column: what a CSV export and the side panel list. */
export function impactRows(index, result) {
  const edgeById = new Map([...index.direct, ...index.indirect].map((e) => [e.id, e]));
  const selected = index.columns.get(result.column);
  const rows = [];
  const describe = (direction, id, info) => {
    const c = index.columns.get(id);
    const via = info.via.map((eid) => edgeById.get(eid)).filter(Boolean);
    const subtypes = [...new Set(via.flatMap((e) => (e.type === "INDIRECT" ? e.subtypes : [e.subtype])))];
    const expressions = [...new Set(via.flatMap((e) => (e.steps || []).map((s) => s.expression).filter(Boolean)))];
    const tasks = [...new Set(via.flatMap((e) => (e.steps || []).map((s) => s.task_id)))];
    const from = [...new Set((info.from || []).map((fid) => {
      const f = index.columns.get(fid);
      return `${shortName(index.tables.get(f.table).label)}.${f.name}`;
    }))];
    rows.push({
      direction,
      distance: info.distance,
      table: index.tables.get(c.table).label,
      column: c.name,
      id,
      subtypes,
      expressions,
      tasks,
      via: from,
    });
  };
  for (const [id, info] of result.upstream) describe("upstream", id, info);
  for (const [id, info] of result.downstream) describe("downstream", id, info);
  rows.sort((a, b) => (a.direction === b.direction ? 0 : a.direction === "upstream" ? -1 : 1)
    || a.distance - b.distance || a.table.localeCompare(b.table) || a.column.localeCompare(b.column));
  return { selected: { table: index.tables.get(selected.table).label, column: selected.name }, rows };
}

/** A CSV cell: quoted, and a formula defused so a spreadsheet never runs it: a leading = + - @, also after
 * leading whitespace (a spreadsheet may trim it, " =1+1" then runs), and a leading tab or line break. */
export function csvCell(value) {
  let text = value === null || value === undefined ? "" : String(value);
  if (/^\s*[=+\-@\uff1d\uff0b\uff0d\uff20]/.test(text) || /^[\t\r\n]/.test(text)) text = "'" + text;
  return /[",\n\r]/.test(text) || text !== text.trim() ? `"${text.replace(/"/g, '""')}"` : text;
}

export function impactCsv(report) {
  const header = ["selected_table", "selected_column", "direction", "distance", "table", "column",
    "via_subtypes", "expressions", "tasks", "via_columns"];
  const lines = [header.join(",")];
  for (const r of report.rows) {
    lines.push([report.selected.table, report.selected.column, r.direction, r.distance, r.table, r.column,
      r.subtypes.join(" "), r.expressions.join(" | "), r.tasks.join(" "), (r.via || []).join(" ")].map(csvCell).join(","));
  }
  return lines.join("\r\n") + "\r\n";
}

/** Columns whose name, or `table.column`, contains the query (case-insensitive). */
export function searchColumns(index, query) {
  const q = String(query).trim().toLowerCase();
  if (!q) return [];
  const out = [];
  for (const c of index.columns.values()) {
    const table = index.tables.get(c.table).label;
    const full = `${table}.${c.name}`.toLowerCase();
    const short = `${shortName(table)}.${c.name}`.toLowerCase();
    if (c.name.toLowerCase().includes(q) || full.includes(q) || short.includes(q)) out.push(c);
  }
  out.sort((a, b) => Number(b.name.toLowerCase() === q) - Number(a.name.toLowerCase() === q)
    || a.name.length - b.name.length || a.name.localeCompare(b.name));
  return out;
}

/** Table height in the column-level view: a header and one row per column. */
export function tableHeight(table) {
  return HEADER_HEIGHT + Math.max(1, table.columns.length) * ROW_HEIGHT;
}

/** Above this many columns in a graph, tables start collapsed: a wall of rows helps no one. */
export const COLLAPSE_THRESHOLD = 300;
/** In a focused path, a table with more columns on the path than this stays collapsed until opened. */
export const FOCUS_OPEN_LIMIT = 60;
export const COLLAPSED_HEIGHT = 78;

/**
 * Left-to-right positions of the tables (dagre, over table-level edges; a few dozen nodes even for
 * 10,000 columns), each as tall as `heightOf(table)` says. Returns centre points, as Cytoscape wants.
 */
export function layoutTables(index, tableIds, heightOf, { ranksep = 130 } = {}) {
  const CAP = 260; // a table of 500 open rows is laid out as this tall, then grows downwards
  const nodesep = 40;
  const heights = new Map();
  for (const id of tableIds) heights.set(id, heightOf(index.tables.get(id)));
  const edges = index.graph.table_edges.filter((e) => e.source !== e.target && tableIds.has(e.source) && tableIds.has(e.target));
  const placed = tableIds.size > DAGRE_LIMIT ? layerTables(tableIds, edges, heights, CAP, nodesep, ranksep)
    : dagreTables(tableIds, edges, heights, CAP, nodesep, ranksep);
  // Tops stay where the layout put them, so the neighbours of a tall table face its first rows, not its
  // middle thousands of pixels down; a table below a tall one in the same rank moves down to make room.
  const ranks = new Map();
  for (const id of tableIds) {
    const n = placed.get(id);
    const key = Math.round(n.x);
    if (!ranks.has(key)) ranks.set(key, []);
    ranks.get(key).push({ id, x: n.x, top: n.y - Math.min(CAP, heights.get(id)) / 2 });
  }
  const out = new Map();
  for (const nodes of ranks.values()) {
    nodes.sort((a, b) => a.top - b.top);
    let bottom = -Infinity;
    for (const n of nodes) {
      const top = Math.max(n.top, bottom + nodesep);
      out.set(n.id, { x: n.x, y: top + heights.get(n.id) / 2 });
      bottom = top + heights.get(n.id);
    }
  }
  return out;
}

/**
 * Above this many tables (a trace across hundreds of DAGs) the tables are laid out in ranks without
 * dagre: dagre threads a dummy node through every rank a long edge crosses (a dimension joined by each
 * of 50 chained tables: 0.9 s; of 200: 9 s) and recurses once per rank (a chain of 2,000 overflows the
 * stack). Below it, a run's few tables, dagre's crossing reduction is worth its cost.
 */
export const DAGRE_LIMIT = 40;

function dagreTables(tableIds, edges, heights, cap, nodesep, ranksep) {
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: "LR", nodesep, ranksep, marginx: 20, marginy: 20 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const id of tableIds) g.setNode(id, { width: TABLE_WIDTH, height: Math.min(cap, heights.get(id)) });
  for (const e of edges) g.setEdge(e.source, e.target);
  dagre.layout(g);
  return new Map([...tableIds].map((id) => [id, g.node(id)]));
}

/**
 * Each table one rank right of its furthest source (longest path, in topological order: no recursion),
 * stacked in the order they are reached; a cycle is entered at its first table unplaced. Centre points.
 */
export function layerTables(tableIds, edges, heights, cap, nodesep, ranksep) {
  const into = new Map([...tableIds].map((id) => [id, 0]));
  const out = new Map([...tableIds].map((id) => [id, []]));
  for (const e of edges) {
    into.set(e.target, into.get(e.target) + 1);
    out.get(e.source).push(e.target);
  }
  const rank = new Map();
  const order = [];
  const done = new Set();
  const ready = [...tableIds].filter((id) => into.get(id) === 0);
  for (let i = 0; order.length < tableIds.size; i++) {
    if (i >= ready.length) ready.push([...tableIds].find((t) => !done.has(t))); // a cycle: enter it anywhere
    const id = ready[i];
    if (done.has(id)) continue;
    done.add(id);
    order.push(id);
    const r = rank.get(id) || 0;
    for (const next of out.get(id)) {
      if (done.has(next)) continue;
      rank.set(next, Math.max(rank.get(next) || 0, r + 1));
      into.set(next, into.get(next) - 1);
      if (into.get(next) === 0) ready.push(next);
    }
  }
  const tops = new Map();
  const pos = new Map();
  for (const id of order) {
    const r = rank.get(id) || 0;
    const h = Math.min(cap, heights.get(id));
    const top = tops.has(r) ? tops.get(r) + nodesep : 20;
    pos.set(id, { x: 20 + TABLE_WIDTH / 2 + r * (TABLE_WIDTH + ranksep), y: top + h / 2 });
    tops.set(r, top + h);
  }
  return pos;
}

/** Left-to-right positions of every table at the table level. */
export function layout(index) {
  return { tables: layoutTables(index, new Set(index.tables.keys()), () => 56) };
}

/** Columns that have an edge of any kind: "columns with lineage only" keeps these. */
export function columnsWithLineage(index) {
  if (index.withLineage) return index.withLineage;
  const out = new Set();
  for (const e of index.direct) {
    out.add(e.from);
    out.add(e.to);
  }
  for (const e of index.indirect) {
    out.add(e.from);
    for (const to of e.to) out.add(to);
  }
  index.withLineage = out;
  return out;
}

const CHANGE_RANK = { added: 2, changed: 1 };

/**
 * The column edges as drawn: an edge whose two columns are drawn stays itself; otherwise its ends
 * become what stands for them (their tables, with `tableOf`; else what `endOf` says) and edges with
 * the same ends are one edge that says how many column edges it carries, its subtype the strongest,
 * its change the newest. `endOf(columnId)` is the drawn end of a column, null when it is hidden.
 */
export function projectEdges(edges, endOf, { tableOf = null } = {}) {
  const single = [];
  const merged = new Map();
  for (const e of edges) {
    let from = endOf(e.from);
    let to = endOf(e.to);
    if (from === null || to === null) continue;
    if (from === e.from && to === e.to) {
      single.push(e);
      continue;
    }
    // One end collapsed: the edge joins the two tables (a fan of 500 lines into one box reads as nothing).
    if (tableOf) {
      from = tableOf(e.from);
      to = tableOf(e.to);
    }
    if (from === to) continue; // inside one collapsed table
    const key = `${from}\u0000${to}`;
    let m = merged.get(key);
    if (!m) merged.set(key, (m = { id: `m${merged.size}`, from, to, members: [], subtype: "IDENTITY", change: null }));
    m.members.push(e.id);
    if (e.subtype && (e.subtype === "AGGREGATION" || (e.subtype === "TRANSFORMATION" && m.subtype === "IDENTITY"))) m.subtype = e.subtype;
    if (e.change && (CHANGE_RANK[e.change] || 0) > (CHANGE_RANK[m.change] || 0)) m.change = e.change;
  }
  return { single, merged: [...merged.values()] };
}

/** What a collapsed table shows: its name, how many columns, and the first few. */
export function collapsedLabel(table, columns, { onPath = false } = {}) {
  const few = columns.slice(0, 3).join(", ");
  const count = onPath ? `${columns.length} of ${table.columns.length} columns on the path`
    : `${columns.length} column${columns.length === 1 ? "" : "s"}`;
  return `${shortName(table.label)}\n${count}\n${few}${columns.length > 3 ? ", …" : ""}`;
}
