// The column-lineage page: fetches the graph from the plugin's API and draws it with Cytoscape.
// Every piece of data reaches the page through textContent or a Cytoscape label (drawn on a
// canvas), never as HTML: a column called <img src=x onerror=...> shows as that text.
import cytoscape from "cytoscape";
import {
  HEADER_HEIGHT, ROW_HEIGHT, TABLE_WIDTH, impact, impactCsv, impactRows, indexGraph, layout, searchColumns,
  shortName, tableHeight, tableImpact,
} from "./lineage.js";

const COLORS = { IDENTITY: "#2b6cb0", TRANSFORMATION: "#c05621", AGGREGATION: "#6b46c1", INDIRECT: "#718096" };

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

function stepText(s) {
  const mapped = s.map_index >= 0 ? `[${s.map_index}]` : "";
  return `${s.task_id}${mapped}, statement ${s.statement + 1}`;
}

class LineageView {
  constructor(root) {
    this.root = root;
    this.opts = { ...root.dataset };
    this.level = "columns";
    this.showIndirect = true;
    this.selected = null; // {kind: "column"|"table", id}
    this.report = null;
  }

  async start() {
    this.renderShell();
    let response;
    try {
      response = await fetch(this.opts.api, { credentials: "same-origin", headers: { Accept: "application/json" } });
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
    if (!response.ok) {
      this.showMessage("error", `The lineage API answered ${response.status}.`, await response.text());
      return;
    }
    this.data = await response.json();
    this.index = indexGraph(this.data.graph);
    this.root.dataset.state = "loaded";
    if (!this.data.graph.tables.length) {
      this.renderEmpty();
      return;
    }
    this.renderGraph();
    this.renderOverview();
    this.root.dataset.state = "ready";
  }

  // ---------- page frame ----------
  renderShell() {
    const o = this.opts;
    const title = o.view === "task"
      ? ["Column lineage of task ", el("strong", {}, o.taskId), o.mapIndex ? ` [${o.mapIndex}]` : ""]
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
    this.indirectBox = el("input", { type: "checkbox", id: "cl-indirect", checked: true, onchange: () => this.setIndirect() });
    this.exportButton = el("button", { type: "button", id: "cl-export", disabled: true, onclick: () => this.exportCsv() },
      "Export impact CSV");
    const toolbar = el("div", { class: "cl-toolbar" },
      el("div", { class: "cl-title" }, ...title,
        o.view === "task" && o.runPage ? el("a", { href: o.runPage, class: "cl-link", id: "cl-run-link" }, "whole DAG run") : null),
      el("div", { class: "cl-controls" },
        el("div", { class: "cl-searchbox" }, this.search, this.results),
        el("div", { class: "cl-segmented", role: "group", "aria-label": "Level" }, ...this.levelButtons),
        el("label", { class: "cl-check" }, this.indirectBox, " Indirect"),
        el("button", { type: "button", onclick: () => this.cy && this.cy.fit(undefined, 30) }, "Fit"),
        el("button", { type: "button", id: "cl-clear", onclick: () => this.clearSelection() }, "Clear"),
        this.exportButton));
    const legend = el("div", { class: "cl-legend" },
      ...[["IDENTITY", "identity"], ["TRANSFORMATION", "transformation"], ["AGGREGATION", "aggregation"]].map(
        ([k, text]) => el("span", { class: "cl-key" }, el("span", { class: `cl-swatch cl-${k.toLowerCase()}` }), text)),
      el("span", { class: "cl-key" }, el("span", { class: "cl-swatch cl-indirect" }), "indirect (join, filter, group…)"),
      el("span", { class: "cl-hint" }, "Click a column for its impact; hover an edge for its expression."));
    this.canvas = el("div", { id: "cl-graph", class: "cl-graph" });
    this.tooltip = el("div", { id: "cl-tooltip", class: "cl-tooltip", hidden: true, role: "tooltip" });
    this.panel = el("aside", { id: "cl-panel", class: "cl-panel", "aria-live": "polite" });
    this.root.replaceChildren(toolbar, legend,
      el("div", { class: "cl-main" }, el("div", { class: "cl-graph-wrap" }, this.canvas, this.tooltip), this.panel));
    this.root.dataset.state = "loading";
    this.panel.append(el("p", { class: "cl-muted" }, "Loading lineage…"));
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

  // ---------- the graph ----------
  elements() {
    const idx = this.index;
    const columns = this.level === "columns";
    const pos = layout(idx, { columns });
    const els = [];
    for (const t of idx.tables.values()) {
      const p = pos.tables.get(t.id);
      const h = columns ? tableHeight(t) : 56;
      const label = columns ? shortName(t.label) : `${shortName(t.label)}\n${t.columns.length} columns`;
      els.push({ group: "nodes", data: { id: t.id, kind: "table", label, full: t.label, h, result: t.kind === "result" },
        position: { x: p.x, y: p.y },
        classes: `table${t.kind === "result" ? " result" : ""}${columns ? "" : " level-tables"}` });
      if (!columns) continue;
      if (!t.columns.length) {
        els.push({ group: "nodes", data: { id: `${t.id}-none`, kind: "note", label: "(no columns known)" },
          position: { x: p.x, y: p.y - h / 2 + HEADER_HEIGHT + ROW_HEIGHT / 2 }, classes: "note" });
      }
      for (const name of t.columns) {
        const id = idx.col(t.id, name);
        els.push({ group: "nodes", data: { id, kind: "column", label: name, table: t.id }, position: pos.rows.get(id),
          classes: "column" });
      }
    }
    if (columns) {
      for (const e of idx.direct) {
        els.push({ group: "edges", data: { id: e.id, source: e.from, target: e.to, kind: "direct", subtype: e.subtype },
          classes: `direct ${e.subtype.toLowerCase()}${e.masking ? " masking" : ""}` });
      }
      for (const e of idx.indirect) {
        els.push({ group: "edges", data: { id: e.id, source: e.from, target: e.target, kind: "indirect" },
          classes: "indirect" });
      }
    } else {
      for (const e of idx.graph.table_edges) {
        const onlyIndirect = e.columns === 0;
        const label = e.columns ? `${e.columns} column${e.columns === 1 ? "" : "s"}` : "indirect";
        els.push({ group: "edges", data: { id: e.id, source: e.source, target: e.target, kind: "table-edge", label,
          subtype: e.subtype || "INDIRECT" },
          classes: onlyIndirect ? "indirect table-edge" : `table-edge ${String(e.subtype).toLowerCase()}` });
      }
    }
    return els;
  }

  style() {
    const edgeColor = (k) => ({ "line-color": COLORS[k], "target-arrow-color": COLORS[k] });
    return [
      { selector: "node.table", style: {
        shape: "round-rectangle", width: TABLE_WIDTH, height: "data(h)", "background-color": "#f7fafc",
        "border-width": 1, "border-color": "#a0aec0", label: "data(label)", "font-size": 13, "font-weight": "bold",
        "text-wrap": "ellipsis", "text-max-width": TABLE_WIDTH - 16, "text-valign": "top", "text-halign": "center",
        "text-margin-y": HEADER_HEIGHT - 8, color: "#1a202c", "z-index": 1 } },
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
        "source-endpoint": "50% 0%", "target-endpoint": "outside-to-node" } },
      { selector: "edge.table-edge", style: { label: "data(label)", "font-size": 11, "text-background-color": "#ffffff",
        "text-background-opacity": 1, "text-background-padding": 2, color: "#4a5568",
        "source-endpoint": "outside-to-node", "target-endpoint": "outside-to-node" } },
      { selector: "edge.masking", style: { "line-style": "dotted" } },
      { selector: ".hidden-indirect", style: { display: "none" } },
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

  renderGraph() {
    this.tooltip.hidden = true;
    this.canvas.replaceChildren();
    if (this.cy) this.cy.destroy();
    this.cy = cytoscape({
      container: this.canvas,
      elements: this.elements(),
      style: this.style(),
      layout: { name: "preset", fit: true, padding: 30 },
      autoungrabify: true,
      boxSelectionEnabled: false,
      wheelSensitivity: 0.3,
      minZoom: 0.1,
      maxZoom: 3,
    });
    this.applyIndirect();
    const cy = this.cy;
    cy.on("tap", "node.column", (ev) => this.selectColumn(ev.target.id()));
    cy.on("tap", "node.table", (ev) => (this.level === "tables" ? this.selectTable(ev.target.id()) : this.showTable(ev.target.id())));
    cy.on("tap", "edge", (ev) => this.showEdge(ev.target.id()));
    cy.on("tap", (ev) => { if (ev.target === cy) this.clearSelection(); });
    cy.on("mouseover", "edge", (ev) => this.showTooltip(ev));
    cy.on("mousemove", "edge", (ev) => this.moveTooltip(ev));
    cy.on("mouseout", "edge", (ev) => { ev.target.removeClass("hover"); this.tooltip.hidden = true; });
    cy.on("mouseover", "node.table", (ev) => this.showTableTooltip(ev));
    cy.on("mousemove", "node.table", (ev) => this.moveTooltip(ev));
    cy.on("mouseout", "node.table", () => { this.tooltip.hidden = true; });
    if (this.selected) {
      const { kind, id } = this.selected;
      if (kind === "column" && this.level === "columns") this.selectColumn(id);
      else if (kind === "table" && this.level === "tables") this.selectTable(id);
      else this.clearSelection();
    }
    // For tests and scripting: the Cytoscape instance and the page's state.
    window.columnLineage = this;
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
    if (!this.selected) this.renderOverview();
  }

  setIndirect() {
    this.showIndirect = this.indirectBox.checked;
    this.applyIndirect();
    if (this.selected && this.selected.kind === "column") this.selectColumn(this.selected.id);
  }

  applyIndirect() {
    this.cy.edges(".indirect").toggleClass("hidden-indirect", !this.showIndirect);
  }

  // ---------- selection and impact ----------
  clearSelection() {
    this.selected = null;
    this.report = null;
    this.exportButton.disabled = true;
    if (this.cy) this.cy.elements().removeClass("faded upstream downstream selected-column selected-table on-path");
    this.renderOverview();
  }

  selectColumn(id) {
    if (this.level !== "columns") this.setLevel("columns");
    const cy = this.cy;
    const result = impact(this.index, id, { indirect: this.showIndirect });
    this.selected = { kind: "column", id };
    cy.batch(() => {
      cy.elements().removeClass("faded upstream downstream selected-column selected-table on-path match");
      cy.elements().addClass("faded");
      const keep = (ele) => ele.removeClass("faded");
      const node = cy.getElementById(id);
      node.addClass("selected-column");
      keep(node);
      keep(cy.getElementById(node.data("table")));
      for (const [cid] of result.upstream) {
        const n = cy.getElementById(cid);
        n.addClass("upstream");
        keep(n);
        keep(cy.getElementById(n.data("table")));
      }
      for (const [cid] of result.downstream) {
        const n = cy.getElementById(cid);
        n.addClass("downstream");
        keep(n);
        keep(cy.getElementById(n.data("table")));
      }
      for (const eid of result.edges) {
        const e = cy.getElementById(eid);
        e.addClass("on-path");
        keep(e);
      }
    });
    this.report = impactRows(this.index, result);
    this.exportButton.disabled = false;
    this.renderImpact();
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
      el("dt", {}, "Read by"), el("dd", {}, refs(t.readers)));
  }

  renderImpact() {
    const { selected, rows } = this.report;
    const section = (direction, title) => {
      const mine = rows.filter((r) => r.direction === direction);
      if (!mine.length) return [el("h4", {}, title), el("p", { class: "cl-muted" }, "none")];
      return [el("h4", {}, `${title} (${mine.length})`), el("ul", { class: "cl-list cl-impact", id: `cl-${direction}` },
        ...mine.map((r) => el("li", { "data-column": `${r.table}.${r.column}`, "data-direction": direction },
          el("button", { type: "button", class: "cl-colbtn", onclick: () => this.focusColumn(r.id) },
            `${shortName(r.table)}.${r.column}`),
          el("span", { class: "cl-meta" }, ` ${r.distance} hop${r.distance === 1 ? "" : "s"} · ${r.subtypes.join(", ").toLowerCase()}`
            + (this.opts.view === "dag_run" && r.tasks.length ? ` · in ${r.tasks.join(", ")}` : "")),
          r.expressions.length ? el("code", { class: "cl-expr" }, r.expressions.join(" | ")) : null)))];
    };
    this.panel.replaceChildren(
      el("h3", { id: "cl-selected" }, `${shortName(selected.table)}.${selected.column}`),
      el("p", { class: "cl-muted" }, selected.table),
      ...section("upstream", "Upstream: where it comes from"),
      ...section("downstream", "Downstream: what changes if it changes"),
      el("p", { class: "cl-muted" }, this.showIndirect
        ? "Indirect inputs (joins, filters, grouping) are followed: untick Indirect to follow values only."
        : "Only direct (value) edges are followed: tick Indirect to include joins, filters and grouping."));
  }

  focusColumn(id) {
    this.selectColumn(id);
    this.cy.animate({ center: { eles: this.cy.getElementById(id) }, duration: 200 });
  }

  showTable(id) {
    const t = this.index.tables.get(id);
    this.panel.replaceChildren(el("h3", {}, t.label), this.tableFacts(t),
      el("h4", {}, "Columns"),
      el("ul", { class: "cl-list" }, ...t.columns.map((c) => el("li", {},
        el("button", { type: "button", class: "cl-colbtn", onclick: () => this.focusColumn(this.index.col(id, c)) }, c)))));
  }

  // ---------- edges: tooltip and details ----------
  edgeLines(id) {
    const idx = this.index;
    const e = [...idx.direct, ...idx.indirect].find((x) => x.id === id);
    if (e) {
      const src = `${shortName(idx.tables.get(e.source).label)}.${e.source_column}`;
      if (e.type === "INDIRECT") {
        const tgt = shortName(idx.tables.get(e.target).label);
        return { head: `${src} → ${tgt} (indirect: ${e.subtypes.join(", ").toLowerCase()})`,
          lines: [`influences ${e.target_columns.join(", ")}`, ...e.steps.map((s) => `${s.subtype.toLowerCase()} in ${stepText(s)}`)] };
      }
      const tgt = `${shortName(idx.tables.get(e.target).label)}.${e.target_column}`;
      return { head: `${src} → ${tgt} (${e.subtype.toLowerCase()}${e.masking ? ", masking" : ""})`,
        lines: e.steps.map((s) => `${s.subtype.toLowerCase()}: ${s.expression || s.field || "(as is)"} — ${stepText(s)}`) };
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
      t.namespace ? el("div", {}, `${t.namespace}  ${t.name}`) : null);
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

  // ---------- overview, search, export ----------
  renderOverview() {
    const idx = this.index;
    if (!idx) return;
    const tables = [...idx.tables.values()];
    this.panel.replaceChildren(
      el("h3", {}, `${tables.length} table${tables.length === 1 ? "" : "s"}, ${idx.columns.size} columns`),
      el("p", { class: "cl-muted" }, "Click a column, here or in the graph, to see its upstream and downstream path."),
      el("ul", { class: "cl-list cl-tables", id: "cl-tables" }, ...tables.map((t) => el("li", {},
        el("span", { class: "cl-tname", title: t.label }, shortName(t.label)),
        el("div", { class: "cl-cols" }, ...t.columns.map((c) => el("button", {
          type: "button", class: "cl-colbtn", "data-column": `${t.label}.${c}`,
          onclick: () => this.focusColumn(idx.col(t.id, c)),
        }, c)))))));
    this.renderStatements();
  }

  renderStatements() {
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

  pick(match) {
    this.results.hidden = true;
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
