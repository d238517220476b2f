// The column-lineage page: fetches the graph from the plugin's API and draws it with Cytoscape.
// Every piece of data reaches the page through textContent or a Cytoscape label (drawn on a
// canvas), never as HTML: a column called <img src=x onerror=...> shows as that text.
import cytoscape from "cytoscape";
import {
  COLLAPSE_THRESHOLD, COLLAPSED_HEIGHT, FOCUS_OPEN_LIMIT, HEADER_HEIGHT, ROW_HEIGHT, TABLE_WIDTH, collapsedLabel,
  columnsWithLineage, impact, impactCsv, impactRows, indexGraph, layout, layoutTables, projectEdges, searchColumns,
  shortName, tableImpact, throughIndirect,
} from "./lineage.js";

const COLORS = { IDENTITY: "#2b6cb0", TRANSFORMATION: "#c05621", AGGREGATION: "#6b46c1", INDIRECT: "#718096" };
const CHANGE_COLORS = { added: "#2f855a", changed: "#d69e2e" };
// The impact lists render this many rows at first; "show all" renders the rest (the CSV has them all).
const LIST_LIMIT = 200;
const DEPTHS = [["1", "1 hop"], ["2", "2 hops"], ["all", "all hops"]];

/** After the browser has painted what Cytoscape drew (it draws on the next animation frame). */
function afterPaint(fn) {
  requestAnimationFrame(() => requestAnimationFrame(fn));
}

/** An element with text children only: strings become text nodes, never markup. */
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

/** The plugin's root path (``/column-lineage``), from the page's API address. */
function pluginRoot(api) {
  return api.slice(0, api.indexOf("/api/"));
}

/** The trace API's address for the page's parameters. */
function traceUrl(api, o) {
  const params = new URLSearchParams({ dataset: o.dataset, direction: o.direction || "both", depth: o.depth || "all" });
  if (o.column) params.set("column", o.column);
  if (o.asOf) params.set("as_of", o.asOf);
  return `${api}?${params}`;
}

function stepText(s) {
  const mapped = s.map_index >= 0 ? `[${s.map_index}]` : "";
  return `${s.task_id}${mapped}, statement ${s.statement + 1}`;
}

class LineageView {
  constructor(root) {
    this.root = root;
    this.opts = { ...root.dataset };
    this.level = "columns";
    this.showIndirect = false; // join/filter/group keys: counted apart, one switch to include them
    this.lineageOnly = false;
    this.showChanges = false;
    this.depth = { upstream: null, downstream: null };
    this.open = new Set(); // tables drawn with their columns
    this.selected = null; // {kind: "column"|"table", id}
    this.report = null;
  }

  async start() {
    this.renderShell();
    const trace = this.opts.view === "trace";
    if (trace && !this.opts.dataset) {
      this.showMessage("empty", "Trace a column across DAGs",
        "Find a dataset or a column above: the trace follows it through every DAG's latest successful runs.");
      return;
    }
    let response;
    try {
      response = await fetch(trace ? traceUrl(this.opts.api, this.opts) : this.opts.api,
        { credentials: "same-origin", headers: { Accept: "application/json" } });
    } catch (err) {
      this.showMessage("error", "Could not reach the Airflow API server.", String(err));
      return;
    }
    if (response.status === 401) {
      this.showMessage("error", "Sign in to Airflow to see column lineage.", "The API answered 401 (not authenticated).");
      return;
    }
    if (response.status === 403) {
      this.showMessage("error", "You may not read this DAG's XComs.", "The API answered 403 (forbidden).");
      return;
    }
    if (trace && (response.status === 404 || response.status === 400)) {
      const body = await response.json().catch(() => ({}));
      this.showMessage(response.status === 404 ? "empty" : "error", "No trace", String(body.detail || response.status));
      return;
    }
    if (!response.ok) {
      this.showMessage("error", `The lineage API answered ${response.status}.`, await response.text());
      return;
    }
    const fetched = performance.now();
    this.data = await response.json();
    const parsed = performance.now();
    this.index = indexGraph(this.data.graph);
    this.root.dataset.state = "loaded";
    if (!this.data.graph.tables.length) {
      this.renderEmpty();
      return;
    }
    this.large = this.index.columns.size > COLLAPSE_THRESHOLD;
    if (!this.large) for (const id of this.index.tables.keys()) this.open.add(id);
    this.lineageOnly = this.large;
    this.lineageBox.checked = this.lineageOnly;
    this.changes = this.data.graph.changes || [];
    this.changesBox.disabled = !this.changes.length;
    this.changesBox.parentElement.title = this.changes.length
      ? "colour what changed since each task's previous successful run"
      : "no task here has an earlier successful run with lineage to compare with";
    const indexed = performance.now();
    this.renderGraph();
    const drawn = performance.now();
    this.renderOverview();
    if (trace) {
      this.focusStart();
      this.renderTraceDags();
    }
    const panel = performance.now();
    // Ready once the graph is on screen: the tests and bench/ui_scale.py wait for this.
    afterPaint(() => {
      this.root.dataset.state = "ready";
      const ready = performance.now();
      this.root.dataset.readyMs = String(Math.round(ready));
      // Where the time went (ms since navigation start), for bench/ui_scale.py.
      this.root.dataset.timings = JSON.stringify(Object.fromEntries(Object.entries({ fetched, parsed, indexed, drawn, panel, ready })
        .map(([k, v]) => [k, Math.round(v)])));
    });
  }

  // ---------- page frame ----------
  renderShell() {
    const o = this.opts;
    const title = o.view === "task"
      ? ["Column lineage of task ", el("strong", {}, o.taskId), o.mapIndex ? ` [${o.mapIndex}]` : ""]
      : o.view === "trace" ? ["Column lineage across DAGs", o.dataset ? [": ", el("strong", { id: "cl-trace-start" },
        o.column ? `${o.dataset}.${o.column}` : o.dataset)] : []]
        : ["Column lineage of DAG run ", el("strong", {}, o.runId)];
    this.search = el("input", {
      type: "search", id: "cl-search", placeholder: "Find a column…", "aria-label": "Find a column",
      oninput: () => this.onSearch(), onkeydown: (ev) => this.onSearchKey(ev),
    });
    this.results = el("ul", { id: "cl-search-results", class: "cl-results", role: "listbox", hidden: true });
    this.levelButtons = ["columns", "tables"].map((level) => el("button", {
      type: "button", class: "cl-seg", "data-level": level, "aria-pressed": String(level === this.level),
      onclick: () => this.setLevel(level),
    }, level === "columns" ? "Columns" : "Tables"));
    this.indirectBox = el("input", { type: "checkbox", id: "cl-indirect", onchange: () => this.setIndirect() });
    this.lineageBox = el("input", { type: "checkbox", id: "cl-lineage-only", onchange: () => this.setLineageOnly() });
    this.changesBox = el("input", { type: "checkbox", id: "cl-changes", disabled: true, onchange: () => this.setChanges() });
    const depthSelect = (side) => el("select", { id: `cl-depth-${side === "upstream" ? "up" : "down"}`,
      "aria-label": `${side} depth`, onchange: (ev) => this.setDepth(side, ev.target.value) },
    ...DEPTHS.map(([v, text]) => el("option", { value: v, selected: v === "all" }, text)));
    this.exportButton = el("button", { type: "button", id: "cl-export", disabled: true, onclick: () => this.exportCsv() },
      "Export impact CSV");
    const toolbar = el("div", { class: "cl-toolbar" },
      el("div", { class: "cl-title" }, ...title,
        o.view === "task" && o.runPage ? el("a", { href: o.runPage, class: "cl-link", id: "cl-run-link" }, "whole DAG run") : null),
      el("div", { class: "cl-controls" },
        el("div", { class: "cl-searchbox" }, this.search, this.results),
        el("div", { class: "cl-segmented", role: "group", "aria-label": "Level" }, ...this.levelButtons),
        el("label", { class: "cl-check", title: "follow join, filter, group and condition keys too" }, this.indirectBox, " Indirect"),
        el("label", { class: "cl-check" }, this.lineageBox, " Columns with lineage only"),
        el("label", { class: "cl-check" }, "Upstream ", depthSelect("upstream")),
        el("label", { class: "cl-check" }, "Downstream ", depthSelect("downstream")),
        el("label", { class: "cl-check" }, this.changesBox, " Changes"),
        el("button", { type: "button", onclick: () => this.cy && this.cy.fit(undefined, 30) }, "Fit"),
        el("button", { type: "button", id: "cl-collapse-all", onclick: () => this.collapseAll() }, "Collapse all"),
        el("button", { type: "button", id: "cl-clear", onclick: () => this.clearSelection() }, "Clear"),
        this.exportButton));
    this.changeKeys = el("span", { class: "cl-key", hidden: true },
      el("span", { class: "cl-swatch cl-added" }), "added since last run",
      el("span", { class: "cl-swatch cl-changed" }), "changed");
    const legend = el("div", { class: "cl-legend" },
      ...[["IDENTITY", "identity"], ["TRANSFORMATION", "transformation"], ["AGGREGATION", "aggregation"]].map(
        ([k, text]) => el("span", { class: "cl-key" }, el("span", { class: `cl-swatch cl-${k.toLowerCase()}` }), text)),
      el("span", { class: "cl-key" }, el("span", { class: "cl-swatch cl-indirect" }), "indirect (join, filter, group…)"),
      this.changeKeys,
      el("span", { class: "cl-hint" }, "Click a table to open it, a column to see only its path."));
    this.canvas = el("div", { id: "cl-graph", class: "cl-graph" });
    this.tooltip = el("div", { id: "cl-tooltip", class: "cl-tooltip", hidden: true, role: "tooltip" });
    this.panel = el("aside", { id: "cl-panel", class: "cl-panel", "aria-live": "polite" });
    this.traceDags = el("div", { id: "cl-trace-dags", class: "cl-trace-dags", hidden: true });
    this.root.replaceChildren(toolbar, ...(o.view === "trace" ? [this.traceBar(), this.traceDags] : []), legend,
      el("div", { class: "cl-main" }, el("div", { class: "cl-graph-wrap" }, this.canvas, this.tooltip), this.panel));
    this.root.dataset.state = "loading";
    this.panel.append(el("p", { class: "cl-muted" }, "Loading lineage…"));
  }

  // ---------- the trace across DAGs ----------
  /** Find a dataset or column in any DAG the user may read; direction, depth and time of the trace. */
  traceBar() {
    const o = this.opts;
    this.traceSearch = el("input", { type: "search", id: "cl-trace-search", placeholder: "Find a dataset or column in any DAG…",
      "aria-label": "Find a dataset or column in any DAG", oninput: () => this.onTraceSearch() });
    this.traceResults = el("ul", { id: "cl-trace-results", class: "cl-results", role: "listbox", hidden: true });
    this.traceDirection = el("select", { id: "cl-trace-direction", "aria-label": "direction" },
      ...[["both", "both ways"], ["upstream", "upstream"], ["downstream", "downstream (impact)"]].map(([v, text]) =>
        el("option", { value: v, selected: v === (o.direction || "both") }, text)));
    this.traceDepth = el("select", { id: "cl-trace-depth", "aria-label": "depth" },
      ...DEPTHS.map(([v, text]) => el("option", { value: v, selected: v === (o.depth || "all") }, text)));
    this.traceAsOf = el("input", { type: "text", id: "cl-trace-as-of", placeholder: "as of (e.g. 2026-11-26)",
      "aria-label": "as of", value: o.asOf || "" });
    return el("div", { class: "cl-toolbar cl-trace-bar" },
      el("div", { class: "cl-searchbox" }, this.traceSearch, this.traceResults),
      el("label", { class: "cl-check" }, "Direction ", this.traceDirection),
      el("label", { class: "cl-check" }, "Depth ", this.traceDepth),
      this.traceAsOf,
      el("button", { type: "button", id: "cl-trace-go", onclick: () => this.goTrace(o.dataset, o.column) }, "Trace"));
  }

  goTrace(dataset, column) {
    if (!dataset) return;
    const params = new URLSearchParams({ dataset, direction: this.traceDirection.value, depth: this.traceDepth.value });
    if (column) params.set("column", column);
    if (this.traceAsOf.value.trim()) params.set("as_of", this.traceAsOf.value.trim());
    window.location.search = params.toString();
  }

  onTraceSearch() {
    clearTimeout(this.traceTimer);
    const q = this.traceSearch.value.trim();
    if (!q) {
      this.traceResults.hidden = true;
      return;
    }
    this.traceTimer = setTimeout(async () => {
      const r = await fetch(`${this.opts.search}?${new URLSearchParams({ q })}`,
        { credentials: "same-origin", headers: { Accept: "application/json" } });
      if (!r.ok || q !== this.traceSearch.value.trim()) return;
      const { results } = await r.json();
      this.traceResults.replaceChildren(...(results.length ? results.map((f) => el("li", { role: "option" },
        el("button", { type: "button", class: "cl-colbtn", "data-dataset": f.label, "data-column": f.column,
          onclick: () => this.goTrace(f.label, f.column) },
        f.column ? [`${shortName(f.label)}.`, el("strong", {}, f.column)] : [el("strong", {}, shortName(f.label)), " (dataset)"])))
        : [el("li", { class: "cl-muted" }, "nothing with lineage matches")]));
      this.traceResults.hidden = false;
    }, 150);
  }

  /** The column the trace started from, selected so its path across DAGs is what is drawn. */
  focusStart() {
    const start = this.data.trace.start;
    if (!start.column) return;
    for (const t of this.index.tables.values()) {
      if (t.label !== start.label && !(t.namespace === start.namespace && t.name === start.name)) continue;
      const id = this.index.col(t.id, start.column);
      if (id) {
        this.open.add(t.id);
        this.focusColumn(id);
        return;
      }
    }
  }

  /** The DAGs the trace crosses, each way in the order it reaches them: the whole path at a glance when
   * the graph can show only a part of it well; a DAG's button shows its tables. */
  renderTraceDags() {
    const byDag = new Map();
    const tableOf = new Map();
    for (const t of this.index.tables.values()) tableOf.set(`${t.namespace}|${t.name}`, t.id);
    for (const h of this.data.trace.hops) {
      const key = `${h.direction}|${h.run.dag_id}`;
      if (!byDag.has(key)) byDag.set(key, { direction: h.direction, dag: h.run.dag_id, from: h.depth, to: h.depth, tasks: new Set(), tables: new Set() });
      const d = byDag.get(key);
      d.from = Math.min(d.from, h.depth);
      d.to = Math.max(d.to, h.depth);
      d.tasks.add(h.run.task_id);
      const id = tableOf.get(`${h.target.namespace}|${h.target.name}`);
      if (id) d.tables.add(id);
    }
    if (!byDag.size) return;
    const SHOWN = 12;
    const rows = [];
    for (const direction of ["upstream", "downstream"]) {
      const dags = [...byDag.values()].filter((d) => d.direction === direction).sort((a, b) => a.from - b.from || (a.dag < b.dag ? -1 : 1));
      if (!dags.length) continue;
      const chips = dags.slice(0, SHOWN).map((d) => el("button", {
        type: "button", class: `cl-dag-chip cl-dag-${direction}`, "data-dag": d.dag, "data-direction": direction,
        title: `${d.dag}: ${d.tasks.size} task${d.tasks.size === 1 ? "" : "s"}, ${d.from === d.to ? `hop ${d.from}` : `hops ${d.from}–${d.to}`}`,
        onclick: () => this.showTables(d.tables),
      }, d.dag, el("span", { class: "cl-muted" }, ` ${d.from === d.to ? d.from : `${d.from}–${d.to}`}`)));
      const more = dags.length - SHOWN;
      rows.push(el("div", { class: "cl-dag-row" },
        el("strong", {}, `${direction === "upstream" ? "Upstream" : "Downstream"}: ${dags.length} DAG${dags.length === 1 ? "" : "s"}`),
        ...chips, more > 0 ? el("span", { class: "cl-muted", title: dags.slice(SHOWN).map((d) => d.dag).join(", ") }, `+${more} more`) : null));
    }
    this.traceDags.replaceChildren(...rows);
    this.traceDags.hidden = false;
    this.frameStart([...byDag.values()]);
  }

  /** The first view of a trace: the start with the DAGs nearest it each way, at a size rows can be read
   * (a trace over 20 DAGs fitted whole would draw 200 tables a few pixels wide); the DAG buttons go on. */
  frameStart(dags) {
    const start = this.data.trace.start;
    const cy = this.cy;
    if (!cy) return;
    const ids = new Set();
    for (const t of this.index.tables.values()) if (t.namespace === start.namespace && t.name === start.name) ids.add(t.id);
    const ways = new Set();
    for (const direction of ["upstream", "downstream"]) {
      const nearest = dags.filter((d) => d.direction === direction && d.from === 1);
      for (const d of nearest) for (const id of d.tables) ids.add(id);
      if (dags.some((d) => d.direction === direction)) ways.add(direction);
    }
    const nodes = cy.collection([...ids].map((id) => cy.getElementById(id)).filter((n) => n.nonempty()));
    const first = cy.collection([...ids].slice(0, 1).map((id) => cy.getElementById(id)).filter((n) => n.nonempty()));
    if (!nodes.nonempty()) return;
    cy.fit(nodes, 40);
    if (cy.zoom() > 1.6) cy.zoom(1.6);
    if (cy.zoom() >= 0.7 || !first.nonempty()) {
      cy.center(nodes);
      return;
    }
    // Too many to read at once: the start near the side the trace does not go, the nearest hops beside it.
    cy.zoom(0.7);
    cy.center(first);
    if (ways.size === 1) {
      const room = cy.width() / 2 - first.renderedBoundingBox().w / 2 - 40;
      cy.panBy({ x: ways.has("upstream") ? room : -room, y: 0 });
    }
  }

  /** Fit the view to these tables (a DAG's), at a size its rows can be read. */
  showTables(ids) {
    if (!this.cy || !ids.size) return;
    const nodes = this.cy.collection([...ids].map((id) => this.cy.getElementById(id)).filter((n) => n.nonempty()));
    if (!nodes.nonempty()) return;
    this.cy.fit(nodes, 40);
    if (this.cy.zoom() > 1.6) this.cy.zoom(1.6);
    this.cy.center(nodes);
  }

  /** What the trace could not draw, said: hops of DAGs the user may not read, sources with no lineage,
   * readers that ran again on data no one refreshed. */
  renderTraceFacts() {
    const t = this.data.trace;
    const box = el("div", { class: "cl-statements", id: "cl-trace-facts" }, el("h4", {}, "Across DAGs"));
    const runs = new Map();
    for (const h of t.hops) runs.set(`${h.run.dag_id}.${h.run.task_id}`, h.run);
    box.append(el("ul", { class: "cl-list", id: "cl-trace-runs" }, ...[...runs].map(([name, r]) =>
      el("li", { "data-task": name }, el("strong", {}, name), ` run ${r.run_id}, ended ${r.ended}`))));
    for (const g of t.hidden) {
      box.append(el("p", { class: "cl-warning cl-hidden-hops", "data-direction": g.direction },
        `${g.direction} at ${g.depth} hop${g.depth === 1 ? "" : "s"}: ${g.hops} hop${g.hops === 1 ? "" : "s"} hidden `
        + "(in DAGs you may not read)"));
    }
    for (const src of t.sources) {
      box.append(el("p", { class: "cl-muted cl-source", "data-dataset": src.dataset.label }, `${src.dataset.label}: ${src.reason}`));
    }
    for (const h of t.hops.filter((x) => x.stale)) box.append(el("p", { class: "cl-warning cl-stale" }, `stale: ${h.stale}`));
    if (t.omitted) {
      box.append(el("p", { class: "cl-warning", id: "cl-trace-omitted" },
        `${t.omitted.toLocaleString("en")} more hops beyond depth ${t.shown_depth} are not drawn: choose a depth, `
        + "or take them all with airflow-lineage trace --csv"));
    }
    this.panel.append(box);
  }

  showMessage(kind, headline, detail) {
    this.root.dataset.state = kind;
    this.canvas.replaceChildren(el("div", { class: `cl-message cl-${kind}`, id: "cl-message" },
      el("h2", {}, headline), detail ? el("p", {}, detail) : null));
    this.panel.replaceChildren();
  }

  renderEmpty() {
    const o = this.opts;
    const problems = this.data.problems || [];
    this.root.dataset.state = "empty";
    const headline = o.view === "task"
      ? `Task ${o.taskId} has no column lineage in this run.`
      : "No task of this DAG run has column lineage.";
    this.canvas.replaceChildren(el("div", { class: "cl-message cl-empty", id: "cl-message" },
      el("h2", {}, headline),
      el("p", {}, "Column lineage is what a SparkSqlLineageOperator task pushes to XCom ",
        el("code", {}, "column_lineage"), " when it succeeds. This task is of another kind, has not finished, or failed."),
      ...problems.map((p) => el("p", { class: "cl-warning" }, p))));
    this.panel.replaceChildren();
    this.renderStatements();
  }

  // ---------- what is drawn ----------
  /** The focused path: the clicked column's impact, or null when no column is selected. */
  path() {
    if (!this.selected || this.selected.kind !== "column") return null;
    if (!this.pathCache || this.pathCache.key !== this.pathKey()) {
      const id = this.selected.id;
      const up = impact(this.index, id, { indirect: this.showIndirect, depth: this.depth.upstream });
      const down = impact(this.index, id, { indirect: this.showIndirect, depth: this.depth.downstream });
      const result = { column: id, upstream: up.upstream, downstream: down.downstream, edges: new Set() };
      // Only the edges of each side's own walk: an upstream edge walked downstream would leave the path.
      for (const e of this.walkedEdges(up, "upstream")) result.edges.add(e);
      for (const e of this.walkedEdges(down, "downstream")) result.edges.add(e);
      this.pathCache = { key: this.pathKey(), result };
    }
    return this.pathCache.result;
  }

  pathKey() {
    return `${this.selected.id}|${this.showIndirect}|${this.depth.upstream}|${this.depth.downstream}`;
  }

  walkedEdges(result, side) {
    const keep = new Set([result.column, ...result[side].keys()]);
    const edges = [];
    for (const eid of result.edges) {
      const e = this.edgeById(eid);
      if (!e) continue;
      const ends = e.type === "INDIRECT" ? [e.from, ...e.to] : [e.from, e.to];
      if (ends.filter((x) => keep.has(x)).length >= 2) edges.push(eid);
    }
    return edges;
  }

  edgeById(id) {
    if (!this.edgeIndex) this.edgeIndex = new Map([...this.index.direct, ...this.index.indirect].map((e) => [e.id, e]));
    return this.edgeIndex.get(id);
  }

  /** The columns of a table that are drawn (when it is open) or summarised (when collapsed). */
  columnsShown(t, path) {
    const ids = t.columns.map((c) => this.index.col(t.id, c));
    if (path) return ids.filter((id) => id === path.column || path.upstream.has(id) || path.downstream.has(id));
    if (!this.lineageOnly) return ids;
    const withLineage = columnsWithLineage(this.index);
    return ids.filter((id) => withLineage.has(id));
  }

  isOpen(t, shown, path) {
    if (this.open.has(t.id)) return true;
    return Boolean(path) && shown.length <= FOCUS_OPEN_LIMIT;
  }

  elements() {
    const idx = this.index;
    if (this.level === "tables") return this.tableElements();
    const path = this.path();
    const shown = new Map(); // table id -> column ids shown
    const opened = new Set();
    for (const t of idx.tables.values()) {
      const cols = this.columnsShown(t, path);
      if (path && !cols.length) continue; // off the focused path: hidden, not faded
      shown.set(t.id, cols);
      if (this.isOpen(t, cols, path)) opened.add(t.id);
    }
    const height = (t) => (opened.has(t.id) ? HEADER_HEIGHT + Math.max(1, shown.get(t.id).length) * ROW_HEIGHT : COLLAPSED_HEIGHT);
    const pos = layoutTables(idx, new Set(shown.keys()), height, { ranksep: path ? 70 : 130 });
    const drawnColumn = new Set();
    const els = [];
    for (const [tid, cols] of shown) {
      const t = idx.tables.get(tid);
      const p = pos.get(tid);
      const h = height(t);
      const isOpen = opened.has(tid);
      const label = isOpen ? shortName(t.label) : collapsedLabel(t, cols.map((id) => idx.columns.get(id).name), { onPath: Boolean(path) });
      els.push({ group: "nodes", data: { id: tid, kind: "table", label, full: t.label, h, result: t.kind === "result" },
        position: { x: p.x, y: p.y },
        classes: `table${t.kind === "result" ? " result" : ""}${isOpen ? "" : " collapsed"}` });
      if (!isOpen) continue;
      if (!cols.length) {
        els.push({ group: "nodes", data: { id: `${tid}-none`, kind: "note",
          label: t.columns.length ? "(no column with lineage)" : "(no columns known)" },
        position: { x: p.x, y: p.y - h / 2 + HEADER_HEIGHT + ROW_HEIGHT / 2 }, classes: "note" });
      }
      const top = p.y - h / 2 + HEADER_HEIGHT;
      cols.forEach((id, i) => {
        drawnColumn.add(id);
        let cls = "column";
        if (path) cls += id === path.column ? " selected-column" : path.upstream.has(id) ? " upstream" : " downstream";
        if (this.showChanges && this.lostColumns().has(id)) cls += " lost";
        els.push({ group: "nodes", data: { id, kind: "column", label: idx.columns.get(id).name, table: tid },
          position: { x: p.x, y: top + i * ROW_HEIGHT + ROW_HEIGHT / 2 }, classes: cls });
      });
    }
    const endOf = (cid) => {
      if (drawnColumn.has(cid)) return cid;
      const c = idx.columns.get(cid);
      if (!shown.has(c.table) || opened.has(c.table)) return null; // hidden, or a row left out of an open table
      return c.table;
    };
    const onPath = (e) => !path || path.edges.has(e.id);
    const changeClass = (change) => (this.showChanges && change ? ` change-${change}` : "");
    const direct = projectEdges(idx.direct.filter(onPath), endOf, { tableOf: (cid) => idx.columns.get(cid).table });
    for (const e of direct.single) {
      els.push({ group: "edges", data: { id: e.id, source: e.from, target: e.to, kind: "direct", subtype: e.subtype },
        classes: `direct ${e.subtype.toLowerCase()}${e.masking ? " masking" : ""}${changeClass(e.change)}${path ? " on-path" : ""}` });
    }
    // An edge into or out of an open table meets it at its header, where its neighbours face it.
    const header = (tid, side) => (opened.has(tid)
      ? `${side * TABLE_WIDTH / 2}px ${HEADER_HEIGHT / 2 - height(idx.tables.get(tid)) / 2}px` : "outside-to-node");
    for (const m of direct.merged) {
      const n = m.members.length;
      els.push({ group: "edges", data: { id: `d${m.id}`, source: m.from, target: m.to, kind: "merged", members: m.members,
        subtype: m.subtype, label: n === 1 ? "" : `${n} columns`, se: header(m.from, 1), te: header(m.to, -1) },
      classes: `merged ${m.subtype.toLowerCase()}${changeClass(m.change)}` });
    }
    if (this.showIndirect) {
      // A key's edge goes from the key (or its collapsed table) to the table its statement writes.
      const merged = new Map();
      for (const e of idx.indirect) {
        if (!onPath(e) || !shown.has(e.target)) continue;
        let from = endOf(e.from);
        if (from === null) continue;
        if (from !== e.from) from = idx.columns.get(e.from).table;
        if (from === e.target) continue;
        if (from === e.from) {
          els.push({ group: "edges", data: { id: e.id, source: from, target: e.target, kind: "indirect" },
            classes: `indirect${changeClass(e.change)}` });
          continue;
        }
        const key = `${from}\u0000${e.target}`;
        if (!merged.has(key)) merged.set(key, { from, to: e.target, members: [], change: null });
        const m = merged.get(key);
        m.members.push(e.id);
        m.change = m.change === "added" ? m.change : e.change || m.change;
      }
      let n = 0;
      for (const m of merged.values()) {
        els.push({ group: "edges", data: { id: `im${n++}`, source: m.from, target: m.to, kind: "merged", members: m.members,
          label: `${m.members.length} key${m.members.length === 1 ? "" : "s"}`, se: header(m.from, 1), te: header(m.to, -1) },
        classes: `indirect merged${changeClass(m.change)}` });
      }
    }
    return els;
  }

  tableElements() {
    const idx = this.index;
    const pos = layout(idx);
    const els = [];
    for (const t of idx.tables.values()) {
      const p = pos.tables.get(t.id);
      els.push({ group: "nodes", data: { id: t.id, kind: "table", label: `${shortName(t.label)}\n${t.columns.length} columns`,
        full: t.label, h: 56, result: t.kind === "result" }, position: { x: p.x, y: p.y },
      classes: `table level-tables${t.kind === "result" ? " result" : ""}` });
    }
    for (const e of idx.graph.table_edges) {
      const onlyIndirect = e.columns === 0;
      const label = e.columns ? `${e.columns} column${e.columns === 1 ? "" : "s"}` : "indirect";
      els.push({ group: "edges", data: { id: e.id, source: e.source, target: e.target, kind: "table-edge", label,
        subtype: e.subtype || "INDIRECT" },
      classes: onlyIndirect ? "indirect table-edge" : `table-edge ${String(e.subtype).toLowerCase()}` });
    }
    return els;
  }

  lostColumns() {
    if (!this.lost) {
      this.lost = new Set();
      for (const task of this.changes || []) {
        for (const l of task.lost) {
          const id = l.table ? this.index.col(l.table, l.column) : null;
          if (id) this.lost.add(id);
        }
      }
    }
    return this.lost;
  }

  style() {
    const edgeColor = (k) => ({ "line-color": COLORS[k], "target-arrow-color": COLORS[k] });
    const changeColor = (k) => ({ "line-color": CHANGE_COLORS[k], "target-arrow-color": CHANGE_COLORS[k], width: 4, "z-index": 25 });
    return [
      { selector: "node.table", style: {
        shape: "round-rectangle", width: TABLE_WIDTH, height: "data(h)", "background-color": "#f7fafc",
        "border-width": 1, "border-color": "#a0aec0", label: "data(label)", "font-size": 13, "font-weight": "bold",
        "text-wrap": "ellipsis", "text-max-width": TABLE_WIDTH - 16, "text-valign": "top", "text-halign": "center",
        "text-margin-y": HEADER_HEIGHT - 8, color: "#1a202c", "z-index": 1 } },
      { selector: "node.table.collapsed", style: { "text-wrap": "wrap", "text-valign": "center", "text-margin-y": 0,
        "font-weight": "normal", "font-size": 14, "line-height": 1.3, "background-color": "#edf2f7", "border-width": 2 } },
      { selector: "node.table.level-tables", style: { "text-wrap": "wrap", "text-valign": "center", "text-margin-y": 0 } },
      { selector: "node.table.result", style: { "background-color": "#fffbea", "border-style": "dashed" } },
      { selector: "node.column", style: {
        shape: "rectangle", width: TABLE_WIDTH - 12, height: ROW_HEIGHT - 4, "background-color": "#ffffff",
        "border-width": 1, "border-color": "#e2e8f0", label: "data(label)", "font-size": 12, "text-valign": "center",
        "text-halign": "center", "text-max-width": TABLE_WIDTH - 20, "text-overflow-wrap": "anywhere", color: "#2d3748",
        "z-index": 10 } },
      { selector: "node.note", style: { shape: "rectangle", width: TABLE_WIDTH - 12, height: ROW_HEIGHT - 4,
        "background-opacity": 0, label: "data(label)", "font-size": 11, color: "#718096", "text-valign": "center",
        "text-halign": "center", "z-index": 10, events: "no" } },
      { selector: "edge", style: { width: 2, "curve-style": "bezier", "target-arrow-shape": "triangle",
        "arrow-scale": 0.9, "z-index": 5, ...edgeColor("IDENTITY") } },
      { selector: "edge.direct", style: { "source-endpoint": "50% 0%", "target-endpoint": "-50% 0%" } },
      { selector: "edge.transformation", style: edgeColor("TRANSFORMATION") },
      { selector: "edge.aggregation", style: { width: 3, ...edgeColor("AGGREGATION") } },
      { selector: "edge.indirect", style: { "line-style": "dashed", width: 1.5, ...edgeColor("INDIRECT"),
        "target-endpoint": "outside-to-node" } },
      { selector: "edge.merged", style: { "curve-style": "straight" } },
      { selector: "edge.merged, edge.table-edge", style: { label: "data(label)", "font-size": 11,
        "text-background-color": "#ffffff", "text-background-opacity": 1, "text-background-padding": 2, color: "#4a5568",
        "source-endpoint": "outside-to-node", "target-endpoint": "outside-to-node", width: 3 } },
      { selector: "edge.merged", style: { "source-endpoint": "data(se)", "target-endpoint": "data(te)" } },
      // A key's merged edge bows beside the value edge between the same two tables, so neither line nor
      // label hides the other ("500 columns" and "1 key" were drawn on one another).
      { selector: "edge.indirect.merged", style: { "curve-style": "unbundled-bezier", "control-point-distances": 28,
        "control-point-weights": 0.5 } },
      { selector: "edge.masking", style: { "line-style": "dotted" } },
      { selector: "edge.change-added", style: changeColor("added") },
      { selector: "edge.change-changed", style: changeColor("changed") },
      { selector: "node.column.lost", style: { "background-color": "#fed7d7", "border-color": "#c53030", "border-width": 3 } },
      { selector: ".faded", style: { opacity: 0.18 } },
      { selector: "node.column.selected-column, node.table.selected-table", style: {
        "background-color": "#fefcbf", "border-color": "#b7791f", "border-width": 3 } },
      { selector: "node.column.upstream, node.table.upstream", style: { "background-color": "#e6fffa", "border-color": "#2c7a7b", "border-width": 2 } },
      { selector: "node.column.downstream, node.table.downstream", style: { "background-color": "#fff5f5", "border-color": "#c53030", "border-width": 2 } },
      { selector: "edge.on-path", style: { width: 3.5, "z-index": 20 } },
      { selector: "node.match", style: { "border-color": "#d69e2e", "border-width": 3 } },
      { selector: "edge.hover", style: { width: 4, "z-index": 30 } },
    ];
  }

  /** Draw what the state says (level, open tables, focus, switches): only what is visible is built. */
  renderGraph({ fit = true, center = null } = {}) {
    this.tooltip.hidden = true;
    const elements = this.elements();
    if (!this.cy) {
      this.canvas.replaceChildren();
      this.cy = cytoscape({
        container: this.canvas,
        style: this.style(),
        autoungrabify: true,
        boxSelectionEnabled: false,
        wheelSensitivity: 0.3,
        minZoom: 0.05,
        maxZoom: 3,
        // Thousands of rows once a wide table is open: pan and zoom a snapshot, redraw when they stop.
        textureOnViewport: this.large,
        hideEdgesOnViewport: this.large,
      });
      this.bindEvents();
    }
    const cy = this.cy;
    cy.batch(() => {
      cy.elements().remove();
      cy.add(elements);
    });
    if (fit && !center) {
      cy.fit(undefined, 30);
      if (cy.zoom() > 1.6) {
        cy.zoom(1.6); // a two-table graph fills the canvas at a size that still looks like a page
        cy.center();
      }
      // A fit that makes rows unreadable (an open table of hundreds of rows): show a part well instead.
      if (cy.zoom() < 0.3) {
        fit = false;
        center = this.selected && this.selected.kind === "column" ? null : this.lastOpened;
        if (!center) {
          cy.zoom(0.9);
          if (this.selected && this.selected.kind === "column") cy.center(cy.getElementById(this.selected.id));
          else {
            // A long chain: its start, readable, with the rest a pan away (the side panel lists every table).
            const bb = cy.elements().boundingBox();
            const first = cy.nodes(".table").min((n) => n.position("x")).ele;
            cy.pan({ x: 30 - bb.x1 * 0.9, y: cy.height() / 2 - first.position("y") * 0.9 });
          }
        }
      }
    }
    if (center && cy.getElementById(center).nonempty()) {
      // An opened table may be thousands of rows tall: show its top at a readable size, not all of it.
      const n = cy.getElementById(center);
      const bb = n.boundingBox();
      cy.zoom(Math.min(1, Math.max(0.4, cy.width() / (bb.w * 4))));
      cy.pan({ x: cy.width() / 2 - n.position("x") * cy.zoom(), y: 40 - bb.y1 * cy.zoom() });
    }
    // For tests and scripting: the Cytoscape instance and the page's state.
    window.columnLineage = this;
    this.root.dataset.drawn = String(cy.elements().length);
  }

  bindEvents() {
    const cy = this.cy;
    cy.on("tap", "node.column", (ev) => this.timed(ev, () => this.selectColumn(ev.target.id())));
    cy.on("tap", "node.table", (ev) => this.timed(ev, () => this.tapTable(ev.target.id())));
    cy.on("tap", "edge", (ev) => this.showEdge(ev.target.id()));
    cy.on("tap", (ev) => { if (ev.target === cy) this.clearSelection(); });
    cy.on("mouseover", "edge", (ev) => this.showTooltip(ev));
    cy.on("mousemove", "edge", (ev) => this.moveTooltip(ev));
    cy.on("mouseout", "edge", (ev) => { ev.target.removeClass("hover"); this.tooltip.hidden = true; });
    cy.on("mouseover", "node.table", (ev) => this.showTableTooltip(ev));
    cy.on("mousemove", "node.table", (ev) => this.moveTooltip(ev));
    cy.on("mouseout", "node.table", () => { this.tooltip.hidden = true; });
  }

  /** Run a click's work and record how long until the answer is on screen (bench/ui_scale.py reads it). */
  timed(ev, work) {
    const start = ev.originalEvent && ev.originalEvent.timeStamp ? ev.originalEvent.timeStamp : performance.now();
    work();
    const n = Number(this.root.dataset.clicks || 0) + 1;
    afterPaint(() => {
      this.root.dataset.clickMs = String(Math.round(performance.now() - start));
      this.root.dataset.clicks = String(n);
    });
  }

  tapTable(id) {
    if (this.level === "tables") {
      this.selectTable(id);
      return;
    }
    const collapsed = this.cy.getElementById(id).hasClass("collapsed");
    if (collapsed) this.openTable(id);
    else this.showTable(id);
  }

  openTable(id, { show = true } = {}) {
    this.open.add(id);
    this.lastOpened = id;
    this.renderGraph({ fit: false, center: id });
    if (show) this.showTable(id);
  }

  closeTable(id) {
    this.open.delete(id);
    this.renderGraph({ fit: false });
    if (!this.selected) this.renderOverview();
  }

  collapseAll() {
    this.open.clear();
    this.renderGraph();
    if (!this.selected) this.renderOverview();
  }

  setLevel(level) {
    if (level === this.level) return;
    this.level = level;
    for (const b of this.levelButtons) b.setAttribute("aria-pressed", String(b.dataset.level === level));
    if (this.selected && this.selected.kind === "column" && level === "tables") {
      this.selected = { kind: "table", id: this.index.columns.get(this.selected.id).table };
    } else if (this.selected && this.selected.kind === "table" && level === "columns") {
      this.selected = null;
    }
    this.renderGraph();
    if (this.selected && this.selected.kind === "table") this.selectTable(this.selected.id);
    else if (!this.selected) this.renderOverview();
  }

  setIndirect() {
    this.showIndirect = this.indirectBox.checked;
    this.refresh();
  }

  setLineageOnly() {
    this.lineageOnly = this.lineageBox.checked;
    this.refresh();
  }

  setDepth(side, value) {
    this.depth[side] = value === "all" ? null : Number(value);
    this.refresh();
  }

  setChanges() {
    this.showChanges = this.changesBox.checked;
    this.changeKeys.hidden = !this.showChanges;
    if (this.showChanges) {
      // Open the tables a change touches, so its edges are drawn one by one.
      for (const e of this.index.direct) if (e.change) { this.open.add(e.source); this.open.add(e.target); }
      for (const id of this.lostColumns()) this.open.add(this.index.columns.get(id).table);
    }
    this.refresh();
  }

  refresh() {
    if (this.selected && this.selected.kind === "column") this.selectColumn(this.selected.id);
    else {
      this.renderGraph();
      if (this.selected && this.selected.kind === "table") this.selectTable(this.selected.id);
      else this.renderOverview();
    }
  }

  // ---------- selection and focus ----------
  clearSelection() {
    this.selected = null;
    this.report = null;
    this.exportButton.disabled = true;
    if (this.cy) this.renderGraph();
    this.renderOverview();
  }

  selectColumn(id) {
    if (this.level !== "columns") {
      this.level = "columns";
      for (const b of this.levelButtons) b.setAttribute("aria-pressed", String(b.dataset.level === "columns"));
    }
    this.selected = { kind: "column", id };
    const result = this.path();
    this.renderGraph();
    this.report = impactRows(this.index, result);
    this.exportButton.disabled = false;
    this.renderImpact(result);
  }

  selectTable(id) {
    const cy = this.cy;
    const result = tableImpact(this.index.graph, id);
    this.selected = { kind: "table", id };
    this.report = null;
    this.exportButton.disabled = true;
    cy.batch(() => {
      cy.elements().removeClass("faded upstream downstream selected-column selected-table on-path match");
      cy.elements().addClass("faded");
      cy.getElementById(id).removeClass("faded").addClass("selected-table");
      for (const t of result.upstream) cy.getElementById(t).removeClass("faded").addClass("upstream");
      for (const t of result.downstream) cy.getElementById(t).removeClass("faded").addClass("downstream");
      for (const eid of result.edges) cy.getElementById(eid).removeClass("faded").addClass("on-path");
    });
    const t = this.index.tables.get(id);
    const names = (set) => [...set].map((tid) => this.index.tables.get(tid).label);
    this.panel.replaceChildren(
      el("h3", {}, t.label),
      this.tableFacts(t),
      el("h4", {}, "Upstream tables"), this.list(names(result.upstream), "cl-upstream-tables"),
      el("h4", {}, "Downstream tables"), this.list(names(result.downstream), "cl-downstream-tables"),
      el("p", { class: "cl-muted" }, "Switch to Columns to follow single columns."));
  }

  list(items, id) {
    if (!items.length) return el("p", { class: "cl-muted", id }, "none");
    return el("ul", { id, class: "cl-list" }, ...items.map((x) => el("li", {}, x)));
  }

  tableFacts(t) {
    const refs = (rs) => rs.map((r) => (r.map_index >= 0 ? `${r.task_id}[${r.map_index}]` : r.task_id)).join(", ") || "—";
    return el("dl", { class: "cl-facts" },
      el("dt", {}, "Dataset"), el("dd", {}, t.namespace ? `${t.namespace}  ${t.name}` : t.kind === "result" ? "result of a query, not stored" : "—"),
      el("dt", {}, "Written by"), el("dd", {}, refs(t.writers)),
      el("dt", {}, "Read by"), el("dd", {}, refs(t.readers)),
      el("dt", {}, "Columns"), el("dd", {}, String(t.columns.length)));
  }

  renderImpact(result) {
    const { selected, rows } = this.report;
    // Counted within each side's own depth, as the list above it is.
    const extra = this.showIndirect ? null : {
      upstream: throughIndirect(this.index, result.column, { depth: this.depth.upstream }).upstream,
      downstream: throughIndirect(this.index, result.column, { depth: this.depth.downstream }).downstream,
    };
    const depthText = (side) => (this.depth[side] === null ? "" : ` within ${this.depth[side]} hop${this.depth[side] === 1 ? "" : "s"}`);
    const section = (direction, title) => {
      const mine = rows.filter((r) => r.direction === direction);
      const out = [el("h4", {}, mine.length ? `${title} (${mine.length}${depthText(direction)})` : title)];
      if (!mine.length) out.push(el("p", { class: "cl-muted" }, "none"));
      else {
        const listEl = el("ul", { class: "cl-list cl-impact", id: `cl-${direction}` });
        const add = (from, to) => listEl.append(...mine.slice(from, to).map((r) => this.impactItem(r, direction)));
        add(0, LIST_LIMIT);
        out.push(listEl);
        if (mine.length > LIST_LIMIT) {
          const more = el("button", { type: "button", class: "cl-more", id: `cl-more-${direction}`, onclick: () => {
            add(LIST_LIMIT, mine.length);
            more.remove();
          } }, `show all ${mine.length} (the CSV has them all)`);
          out.push(more);
        }
      }
      if (extra && extra[direction]) {
        out.push(el("p", { class: "cl-through-indirect", id: `cl-through-indirect-${direction}`,
          "data-count": String(extra[direction]) },
        `and ${extra[direction].toLocaleString("en")} through a join, filter or grouping key: tick Indirect to include them`));
      }
      return out;
    };
    const across = this.opts.view === "trace" ? null : el("a", { id: "cl-trace-link", class: "cl-link",
      href: `${pluginRoot(this.opts.api)}/trace?${new URLSearchParams({ dataset: selected.table, column: selected.column })}` },
    "Trace across DAGs");
    this.panel.replaceChildren(
      el("h3", { id: "cl-selected" }, `${shortName(selected.table)}.${selected.column}`),
      el("p", { class: "cl-muted" }, selected.table, " ", across),
      el("p", { class: "cl-muted" }, "Only this column's path is drawn; Clear shows everything again."),
      ...section("upstream", "Upstream: where it comes from"),
      ...section("downstream", "Downstream: what changes if it changes"),
      el("p", { class: "cl-muted" }, this.showIndirect
        ? "Indirect inputs (joins, filters, grouping) are followed: untick Indirect to follow values only."
        : "Only direct (value) edges are followed: tick Indirect to include joins, filters and grouping."));
    if (this.opts.view === "trace") this.renderTraceFacts();
  }

  impactItem(r, direction) {
    return el("li", { "data-column": `${r.table}.${r.column}`, "data-direction": direction },
      el("button", { type: "button", class: "cl-colbtn", onclick: () => this.focusColumn(r.id) },
        `${shortName(r.table)}.${r.column}`),
      el("span", { class: "cl-meta" }, ` ${r.distance} hop${r.distance === 1 ? "" : "s"} · ${r.subtypes.join(", ").toLowerCase()}`
        + (r.tasks.length ? ` · in ${r.tasks.join(", ")}` : "")
        + (r.via.length ? ` · ${direction === "upstream" ? "feeds" : "from"} ${r.via.join(", ")}` : "")),
      r.expressions.length ? el("code", { class: "cl-expr" }, r.expressions.join(" | ")) : null);
  }

  focusColumn(id) {
    this.selectColumn(id);
    const node = this.cy.getElementById(id);
    if (node.nonempty()) this.cy.center(node);
  }

  showTable(id) {
    const t = this.index.tables.get(id);
    const cols = this.columnsShown(t, null).map((cid) => this.index.columns.get(cid).name);
    this.panel.replaceChildren(el("h3", {}, t.label), this.tableFacts(t),
      this.open.has(id) ? el("button", { type: "button", id: "cl-collapse", onclick: () => this.closeTable(id) }, "Collapse this table")
        : el("button", { type: "button", id: "cl-expand", onclick: () => this.openTable(id) }, "Open this table"),
      el("h4", {}, `Columns (${cols.length})`),
      el("ul", { class: "cl-list" }, ...cols.map((c) => el("li", {},
        el("button", { type: "button", class: "cl-colbtn", onclick: () => this.focusColumn(this.index.col(id, c)) }, c)))));
  }

  // ---------- edges: tooltip and details ----------
  edgeLines(id) {
    const idx = this.index;
    const ele = this.cy ? this.cy.getElementById(id) : null;
    if (ele && ele.nonempty() && ele.data("kind") === "merged") {
      const members = ele.data("members").map((m) => this.edgeById(m));
      const head = `${shortName(idx.tables.get(ele.source().data("kind") === "table" ? ele.source().id() : ele.source().data("table")).label)} → `
        + `${shortName(idx.tables.get(ele.target().data("kind") === "table" ? ele.target().id() : ele.target().data("table")).label)}`;
      const lines = [`${members.length} column edge${members.length === 1 ? "" : "s"}: open a table to see them one by one`,
        ...members.slice(0, 8).map((e) => `${e.source_column} → ${e.type === "INDIRECT" ? "(every column: " + e.subtypes.join(", ").toLowerCase() + ")" : e.target_column}`
          + (this.showChanges && e.change ? ` (${e.change} since last run)` : ""))];
      if (members.length > 8) lines.push(`… and ${members.length - 8} more`);
      return { head, lines };
    }
    const e = this.edgeById(id);
    if (e) {
      const src = `${shortName(idx.tables.get(e.source).label)}.${e.source_column}`;
      if (e.type === "INDIRECT") {
        const tgt = shortName(idx.tables.get(e.target).label);
        return { head: `${src} → ${tgt} (indirect: ${e.subtypes.join(", ").toLowerCase()})`,
          lines: [`influences ${e.target_columns.join(", ")}`, ...e.steps.map((s) => `${s.subtype.toLowerCase()} in ${stepText(s)}`)] };
      }
      const tgt = `${shortName(idx.tables.get(e.target).label)}.${e.target_column}`;
      return { head: `${src} → ${tgt} (${e.subtype.toLowerCase()}${e.masking ? ", masking" : ""})`,
        lines: e.steps.map((s) => `${s.subtype.toLowerCase()}: ${s.expression || s.field || "(as is)"} — ${stepText(s)}`
          + (s.change === "added" ? " — added since the previous run"
            : s.change === "changed" ? ` — was ${s.previous.subtype.toLowerCase()}: ${s.previous.expression || "(as is)"}` : "")) };
    }
    const te = idx.graph.table_edges.find((x) => x.id === id);
    if (te) {
      return { head: `${shortName(idx.tables.get(te.source).label)} → ${shortName(idx.tables.get(te.target).label)}`,
        lines: [`${te.columns} column edge(s), ${te.indirect} indirect input(s)`] };
    }
    return { head: id, lines: [] };
  }

  showTooltip(ev) {
    const { head, lines } = this.edgeLines(ev.target.id());
    ev.target.addClass("hover");
    this.tooltip.replaceChildren(el("strong", {}, head), ...lines.map((l) => el("div", {}, l)));
    this.tooltip.hidden = false;
    this.moveTooltip(ev);
  }

  showTableTooltip(ev) {
    const t = this.index.tables.get(ev.target.id());
    this.tooltip.replaceChildren(el("strong", {}, t.label),
      t.namespace ? el("div", {}, `${t.namespace}  ${t.name}`) : null,
      ev.target.hasClass("collapsed") ? el("div", {}, `${t.columns.length} columns: click to open`) : null);
    this.tooltip.hidden = false;
    this.moveTooltip(ev);
  }

  moveTooltip(ev) {
    const p = ev.renderedPosition || { x: 0, y: 0 };
    this.tooltip.style.left = `${p.x + 14}px`;
    this.tooltip.style.top = `${p.y + 14}px`;
  }

  showEdge(id) {
    const { head, lines } = this.edgeLines(id);
    this.panel.replaceChildren(el("h3", { id: "cl-edge" }, head), el("ul", { class: "cl-list" },
      ...lines.map((l) => el("li", {}, el("code", { class: "cl-expr" }, l)))));
  }

  // ---------- overview, changes, search, export ----------
  renderOverview() {
    const idx = this.index;
    if (!idx) return;
    const tables = [...idx.tables.values()];
    const columnButtons = (t) => el("div", { class: "cl-cols" }, ...this.columnsShown(t, null).map((cid) => {
      const c = idx.columns.get(cid).name;
      return el("button", { type: "button", class: "cl-colbtn", "data-column": `${t.label}.${c}`,
        onclick: () => this.focusColumn(cid) }, c);
    }));
    this.panel.replaceChildren(
      ...(this.showChanges ? this.changesPanel() : []),
      el("h3", {}, `${tables.length} table${tables.length === 1 ? "" : "s"}, ${idx.columns.size.toLocaleString("en")} columns`),
      el("p", { class: "cl-muted" }, this.large
        ? "Tables are drawn collapsed: click one to open it, or a column (here, in the graph, or found with search) to see only its path."
        : "Click a column, here or in the graph, to see only its upstream and downstream path."),
      el("ul", { class: "cl-list cl-tables", id: "cl-tables" }, ...tables.map((t) => {
        if (!this.large) {
          return el("li", {}, el("span", { class: "cl-tname", title: t.label }, shortName(t.label)), columnButtons(t));
        }
        // 10,000 buttons cost seconds: a large graph's lists are built when opened.
        const details = el("details", { "data-table": t.label },
          el("summary", { class: "cl-tname", title: t.label }, `${shortName(t.label)} (${t.columns.length})`));
        details.addEventListener("toggle", () => {
          if (details.open && details.childElementCount === 1) details.append(columnButtons(t));
        });
        return el("li", {}, details);
      })));
    this.renderStatements();
  }

  changesPanel() {
    const box = el("div", { class: "cl-changes", id: "cl-changes-panel" }, el("h3", {}, "Changes since the previous successful run"));
    for (const task of this.changes) {
      const mapped = task.map_index >= 0 ? `[${task.map_index}]` : "";
      box.append(el("h4", {}, `${task.task_id}${mapped}: compared with ${task.previous_run_id}`));
      if (task.same) {
        box.append(el("p", { class: "cl-muted" }, "no change in the column lineage"));
        continue;
      }
      box.append(el("ul", { class: "cl-list cl-change-lines" }, ...task.lines.map((line) => el("li", {
        class: `cl-change cl-change-${{ "!": "lost", "+": "added", "-": "removed", "~": "changed" }[line[0]] || "other"}`,
      }, line))));
    }
    return [box];
  }

  renderStatements() {
    if (this.opts.view === "trace") {
      this.renderTraceFacts();
      return;
    }
    const tasks = this.data.graph.tasks;
    if (!tasks.length && !(this.data.problems || []).length) return;
    const box = el("div", { class: "cl-statements", id: "cl-statements" }, el("h4", {}, "Statements"));
    for (const t of tasks) {
      for (const w of t.warnings) box.append(el("p", { class: "cl-warning" }, `${t.task_id}: ${w}`));
      for (const s of t.statements) {
        const agreement = s.agreement;
        const badge = agreement ? el("span", {
          class: `cl-agreement cl-agreement-${agreement.static}`, "data-agreement": agreement.static,
          title: "the plan's lineage checked against the static lineage of the same SQL",
        }, agreement.static === "same" ? "static agrees" : `static ${agreement.static}`) : "";
        const differences = agreement && agreement.static !== "same" ? [
          ...(agreement.reason ? [el("p", { class: "cl-warning" }, agreement.reason)] : []),
          ...agreement.only_plan.map((e) => el("p", { class: "cl-only-plan" }, `only plan: ${e}`)),
          ...agreement.only_static.map((e) => el("p", { class: "cl-only-static" }, `only static: ${e}`)),
        ] : [];
        box.append(el("details", {},
          el("summary", {}, `${t.task_id}${t.map_index >= 0 ? `[${t.map_index}]` : ""} · statement ${s.index + 1} → `,
            s.target ? shortName(s.target) : "query result", ` (${s.method}, confidence ${s.confidence}) `, badge),
          el("pre", { class: "cl-sql" }, s.sql),
          ...s.warnings.map((w) => el("p", { class: "cl-warning" }, w)),
          ...differences));
      }
    }
    for (const p of this.data.problems || []) box.append(el("p", { class: "cl-warning" }, p));
    this.panel.append(box);
  }

  onSearch() {
    const matches = searchColumns(this.index, this.search.value).slice(0, 30);
    this.matches = matches;
    if (this.cy) {
      this.cy.nodes().removeClass("match");
      if (this.level === "columns") for (const m of matches) this.cy.getElementById(m.id).addClass("match");
    }
    if (!this.search.value.trim()) {
      this.results.hidden = true;
      return;
    }
    this.results.replaceChildren(...(matches.length ? matches.map((m) => el("li", { role: "option" },
      el("button", { type: "button", class: "cl-colbtn", onclick: () => this.pick(m) },
        `${shortName(this.index.tables.get(m.table).label)}.`, el("strong", {}, m.name))))
      : [el("li", { class: "cl-muted" }, "no column matches")]));
    this.results.hidden = false;
  }

  onSearchKey(ev) {
    if (ev.key === "Enter" && this.matches && this.matches.length) this.pick(this.matches[0]);
    if (ev.key === "Escape") {
      this.search.value = "";
      this.onSearch();
    }
  }

  /** A search result: its table opens (so Clear leaves it open) and its path is shown. */
  pick(match) {
    this.results.hidden = true;
    this.open.add(match.table);
    this.focusColumn(match.id);
  }

  exportCsv() {
    if (!this.report) return;
    const csv = impactCsv(this.report);
    const name = `column-impact-${shortName(this.report.selected.table)}.${this.report.selected.column}`
      .replace(/[^A-Za-z0-9._-]+/g, "_");
    const url = URL.createObjectURL(new Blob([csv], { type: "text/csv;charset=utf-8" }));
    const a = el("a", { href: url, download: `${name}.csv` });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  }
}

function boot() {
  const root = document.getElementById("column-lineage-app");
  if (root) new LineageView(root).start();
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", boot);
else boot();
