"""Lineage documents -> the graph the UI draws: tables with their columns, column-to-column edges.

The UI reads the same ``airflow-lineage/1`` documents as everything else (``LineageReport``);
this module only rearranges them. Documents of several tasks are stitched into one graph: a
table written by one task and read by another is one node, so a path can be followed across
tasks. Two datasets are the same node when they share a catalog table name or a storage
location (a task reading a path another task wrote as a table still joins up).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from airflow_lineage_provider.lineage.diff import ADDED, EdgeKey, LineageDiff, edge_key, target_label
from airflow_lineage_provider.lineage.model import (
    DIRECT,
    IDENTITY,
    INDIRECT,
    SPARK_CATALOG,
    ColumnInput,
    Dataset,
    LineageReport,
    StatementLineage,
    stronger,
)
from airflow_lineage_provider.lineage.naming import identity_keys
from airflow_lineage_provider.lineage.trace import Trace


@dataclass(frozen=True)
class TaskLineage:
    """The lineage document one task instance pushed to XCom."""

    task_id: str
    map_index: int
    report: LineageReport

    @property
    def ref(self) -> dict[str, Any]:
        return {"task_id": self.task_id, "map_index": self.map_index}


class _Keys:
    """Union-find over dataset identities: catalog name and storage location."""

    def __init__(self) -> None:
        self._parent: dict[str, str] = {}

    def find(self, key: str) -> str:
        self._parent.setdefault(key, key)
        root = key
        while self._parent[root] != root:
            root = self._parent[root]
        while self._parent[key] != root:  # path compression
            self._parent[key], key = root, self._parent[key]
        return root

    def union(self, keys: list[str]) -> None:
        roots = [self.find(k) for k in keys]
        for other in roots[1:]:
            if other != roots[0]:
                self._parent[other] = roots[0]


def _label_key(label: str) -> str:
    """The key of a column's table when the statement names no dataset for it."""
    return "table:" + label


@dataclass
class _Table:
    id: str
    label: str
    kind: str  # "dataset" or "result" (a bare query's result set)
    namespace: str | None = None
    name: str | None = None
    columns: list[str] = field(default_factory=list)
    writers: list[dict[str, Any]] = field(default_factory=list)
    readers: list[dict[str, Any]] = field(default_factory=list)

    _known: set[str] = field(default_factory=set)  # the columns, for a constant-time check on wide tables
    # The writers and readers, for a constant-time check too: a dimension read by every task of a trace
    # across 1,000 DAGs has 10,000 readers (a list search took 1.5 s of the trace's graph).
    _refs: set[tuple[str, tuple[tuple[str, Any], ...]]] = field(default_factory=set)

    def add_column(self, column: str) -> None:
        if column not in self._known:
            self._known.add(column)
            self.columns.append(column)

    def add_ref(self, role: str, ref: dict[str, Any]) -> None:
        """Note a task as one of the table's ``writers`` or ``readers`` (``role``), once."""
        key = (role, tuple(ref.items()))
        if key not in self._refs:
            self._refs.add(key)
            getattr(self, role).append(ref)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "label": self.label,
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "columns": list(self.columns),
            "writers": self.writers,
            "readers": self.readers,
        }


@dataclass(frozen=True)
class TaskChanges:
    """A task instance's lineage compared with its previous successful run (``lineage/diff.py``)."""

    previous_run_id: str
    diff: LineageDiff


def build_graph(tasks: list[TaskLineage], changes: dict[tuple[str, int], TaskChanges] | None = None
                ) -> dict[str, Any]:
    """One graph of every task's lineage, JSON-ready for the UI.

    ``tables``: nodes with their columns in a stable order (written columns first, as the
    statement writes them, then columns only read). ``edges``: one per (source column, target
    column), its ``subtype`` the strongest of its ``steps`` (each step one statement of one task,
    with its own subtype and expression). ``indirect``: one per (source column, target table),
    naming the target columns it influences. ``table_edges``: the table-level summary.
    ``tasks``: each task's statements as the side panel shows them (SQL, method, confidence, warnings,
    agreement). ``changes`` (one per task that has a previous successful run): what ``diff`` found; the
    edges it added or changed carry ``change`` (and their steps ``change`` and ``previous``), so the
    page colours exactly what ``airflow-lineage diff`` prints.
    """
    keys = _Keys()
    datasets_by_key: dict[str, Dataset] = {}

    # Pass 1: which datasets are one node.
    for task in tasks:
        for stmt in task.report.statements:
            for ds in (*stmt.inputs, *((stmt.target,) if stmt.target else ())):
                ks = identity_keys(ds)
                keys.union([*ks, _label_key(ds.label)])
                for k in ks:
                    datasets_by_key.setdefault(k, ds)
            for _, srcs in stmt.columns:
                for c in srcs:
                    keys.find(_label_key(c.table))
            for c in stmt.indirect:
                keys.find(_label_key(c.table))

    tables: dict[str, _Table] = {}  # by union-find root, or by result id

    def table_for(root: str, label: str, dataset: Dataset | None) -> _Table:
        if root not in tables:
            tables[root] = _Table(id=f"t{len(tables)}", label=label, kind="dataset",
                                  namespace=dataset.namespace if dataset else None,
                                  name=dataset.name if dataset else None)
        table = tables[root]
        if dataset is not None:
            if table.namespace is None or (table.namespace == SPARK_CATALOG and dataset.namespace != SPARK_CATALOG):
                table.namespace, table.name = dataset.namespace, dataset.name
            if dataset.table and table.label != dataset.table and table.label == (table.name or ""):
                table.label = dataset.table  # prefer the catalog name over a path
        return table

    def resolve(stmt: StatementLineage, label: str) -> _Table:
        """The node of a column's ``table`` (a dataset label) within one statement."""
        for ds in (*stmt.inputs, *((stmt.target,) if stmt.target else ())):
            if ds.label == label or ds.table == label:
                return table_for(keys.find(identity_keys(ds)[0]), ds.label, ds)
        return table_for(keys.find(_label_key(label)), label, None)

    edges: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    indirect: dict[tuple[str, str, str], dict[str, Any]] = {}
    task_summaries: list[dict[str, Any]] = []

    change_summaries: list[dict[str, Any]] = []
    for task in tasks:
        statements = []
        task_changes = (changes or {}).get((task.task_id, task.map_index))
        marks = _marks(task_changes.diff) if task_changes else {}
        targets: dict[str, str] = {}  # the diff's name of a target -> its node
        for stmt in task.report.statements:
            step_ref = {**task.ref, "statement": stmt.index}
            if stmt.target is not None:
                target = resolve(stmt, stmt.target.label)
                target.add_ref("writers", task.ref)
            else:
                rid = f"result:{task.task_id}:{task.map_index}:{stmt.index}"
                mapped = f"[{task.map_index}]" if task.map_index >= 0 else ""
                target = tables.setdefault(rid, _Table(
                    id=f"t{len(tables)}", label=f"query result: {task.task_id}{mapped} statement {stmt.index + 1}",
                    kind="result"))
            targets[target_label(stmt)] = target.id
            for ds in stmt.inputs:
                resolve(stmt, ds.label).add_ref("readers", task.ref)
            for column, srcs in stmt.columns:
                target.add_column(column)
                for src in srcs:
                    _add_direct(edges, resolve(stmt, src.table), src, target, column, step_ref,
                                marks.get(edge_key(stmt, column, src)))
            for src in stmt.indirect:
                _add_indirect(indirect, resolve(stmt, src.table), src, target,
                              [c for c, _ in stmt.columns], step_ref, marks.get(edge_key(stmt, None, src)))
            statements.append({
                "index": stmt.index,
                "sql": stmt.sql,
                "method": stmt.method,
                "confidence": stmt.confidence,
                "target": stmt.target.label if stmt.target else None,
                "target_table": target.id,
                "warnings": list(stmt.warnings),
                "agreement": stmt.agreement.to_dict() if stmt.agreement else None,
            })
        task_summaries.append({**task.ref, "statements": statements, "warnings": list(task.report.warnings)})
        if task_changes:
            summary = {**task.ref, "previous_run_id": task_changes.previous_run_id, **task_changes.diff.to_dict()}
            for lost in summary["lost"]:
                lost["table"] = targets.get(lost["target"])  # None: the column's statement is gone too
            change_summaries.append(summary)

    edge_list = [{"id": f"e{i}", **e} for i, e in enumerate(edges.values())]
    indirect_list = [{"id": f"i{i}", **e} for i, e in enumerate(indirect.values())]
    return {
        "tables": [t.to_dict() for t in tables.values()],
        "edges": edge_list,
        "indirect": indirect_list,
        "table_edges": _table_edges(edge_list, indirect_list),
        "tasks": task_summaries,
        "changes": change_summaries,
    }


def _marks(diff: LineageDiff) -> dict[EdgeKey, dict[str, Any]]:
    """Edge key -> how the edge changed (removed edges are not in this run's graph: the panel lists them)."""
    out: dict[EdgeKey, dict[str, Any]] = {}
    for change in diff.edges:
        if change.kind == ADDED:
            out[change.key] = {"change": ADDED}
        elif change.old is not None and change.new is not None:
            out[change.key] = {"change": change.kind, "previous": {"subtype": change.old[0],
                                                                   "expression": change.old[1]}}
    return out


def _add_step(edge: dict[str, Any], step: dict[str, Any], mark: dict[str, Any] | None) -> None:
    step = {**step, **(mark or {})}
    if step in edge["steps"]:
        return
    edge["steps"].append(step)
    if mark and edge.get("change") != ADDED:  # an edge one statement added is new, whatever another changed
        edge["change"] = mark["change"]


def _add_direct(edges: dict, source: _Table, src: ColumnInput, target: _Table, column: str,
                step_ref: dict[str, Any], mark: dict[str, Any] | None = None) -> None:
    source.add_column(src.field)
    key = (source.id, src.field, target.id, column)
    step = {**step_ref, "subtype": src.subtype, "expression": src.expression, "masking": src.masking}
    edge = edges.get(key)
    if edge is None:
        edge = edges[key] = {"source": source.id, "source_column": src.field, "target": target.id,
                             "target_column": column, "type": DIRECT, "subtype": src.subtype,
                             "masking": src.masking, "steps": []}
    else:
        edge["subtype"] = stronger(edge["subtype"], src.subtype)
        edge["masking"] = edge["masking"] or src.masking
    _add_step(edge, step, mark)


def _add_indirect(indirect: dict, source: _Table, src: ColumnInput, target: _Table, columns: list[str],
                  step_ref: dict[str, Any], mark: dict[str, Any] | None = None) -> None:
    source.add_column(src.field)
    key = (source.id, src.field, target.id)
    edge = indirect.setdefault(key, {"source": source.id, "source_column": src.field, "target": target.id,
                                     "type": INDIRECT, "subtypes": [], "target_columns": [], "steps": []})
    if src.subtype not in edge["subtypes"]:
        edge["subtypes"].append(src.subtype)
    known = set(edge["target_columns"])
    edge["target_columns"].extend(c for c in columns if c not in known)
    step = {**step_ref, "subtype": src.subtype}
    _add_step(edge, step, mark)


def _table_edges(edges: list[dict[str, Any]], indirect: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Table-to-table edges: how many column edges each carries, and whether only indirect ones."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for e in edges:
        t = out.setdefault((e["source"], e["target"]), {"source": e["source"], "target": e["target"],
                                                        "columns": 0, "indirect": 0, "subtype": IDENTITY})
        t["columns"] += 1
        t["subtype"] = stronger(t["subtype"], e["subtype"])
    for e in indirect:
        t = out.setdefault((e["source"], e["target"]), {"source": e["source"], "target": e["target"],
                                                        "columns": 0, "indirect": 0, "subtype": None})
        t["indirect"] += 1
    return [{"id": f"te{i}", **t} for i, t in enumerate(out.values())]


def impact(graph: dict[str, Any], table_id: str, column: str, *, indirect: bool = False,
           depth: int | None = None) -> dict[str, list]:
    """Every column upstream and downstream of one column, with its distance in hops.

    The definition of the walk the page does when a column is clicked (``ui/src/lineage.js`` walks the
    same way; tests/unit/plugins/test_graph.py runs both on the same graphs): breadth first, so a
    distance is the fewest hops; ``depth`` stops it that many hops out (``None``: all of them);
    ``indirect`` also follows indirect edges (a filter or join key influences every column its
    statement writes).
    """
    down: dict[tuple[str, str], list[tuple[str, str]]] = {}
    up: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for e in graph["edges"]:
        s, t = (e["source"], e["source_column"]), (e["target"], e["target_column"])
        down.setdefault(s, []).append(t)
        up.setdefault(t, []).append(s)
    if indirect:
        for e in graph["indirect"]:
            s = (e["source"], e["source_column"])
            for c in e["target_columns"]:
                down.setdefault(s, []).append((e["target"], c))
                up.setdefault((e["target"], c), []).append(s)

    def walk(adjacency: dict) -> list[tuple[str, str, int]]:
        seen = {(table_id, column): 0}
        frontier = [(table_id, column)]
        hops = 0
        while frontier and (depth is None or hops < depth):
            hops += 1
            nxt = []
            for node in frontier:
                for other in adjacency.get(node, []):
                    if other not in seen:
                        seen[other] = hops
                        nxt.append(other)
            frontier = nxt
        return [(t, c, d) for (t, c), d in seen.items() if d > 0]

    return {"upstream": walk(up), "downstream": walk(down)}


def through_indirect(graph: dict[str, Any], table_id: str, column: str, *, depth: int | None = None
                     ) -> dict[str, int]:
    """How many more columns the walk reaches when it follows indirect inputs too: the page's
    "and 9,500 through a join, filter or grouping key" under a list of values only."""
    direct = impact(graph, table_id, column, depth=depth)
    both = impact(graph, table_id, column, indirect=True, depth=depth)
    return {side: len(both[side]) - len(direct[side]) for side in ("upstream", "downstream")}


def trace_graph(trace: Trace) -> dict[str, Any]:
    """A trace across DAGs as the graph the page draws: each (DAG, task) of its hops one task of the graph
    (named ``dag_id.task_id``), its hops rebuilt as the lineage of the statements they came from, so
    the page's search, impact walk, depth and CSV work on a trace as on a run."""
    runs: dict[tuple[str, str, int], dict[tuple[int, tuple[str, str]], list]] = {}
    for h in trace.hops:
        per_run = runs.setdefault((h.run.dag_id, h.run.task_id, h.run.map_index), {})
        per_run.setdefault((h.statement, h.target.dataset), []).append(h)
    tasks = []
    for (dag_id, task_id, map_index), statements in runs.items():
        built = []
        for (index, _), hops in sorted(statements.items(), key=lambda kv: kv[0]):
            columns: dict[str, list[ColumnInput]] = {}
            indirect: list[ColumnInput] = []
            inputs: dict[tuple[str, str], Dataset] = {}
            for h in hops:
                inputs.setdefault(h.source.dataset, _dataset(h.source))
                if h.indirect:
                    indirect.append(ColumnInput(h.source.label or h.source.name, h.source.column, INDIRECT, h.subtype))
                else:
                    columns.setdefault(h.target.column, []).append(ColumnInput(
                        h.source.label or h.source.name, h.source.column, DIRECT, h.subtype, h.expression))
            built.append(StatementLineage(index=index, sql="", method="trace", confidence=1.0,
                                          target=_dataset(hops[0].target), inputs=tuple(inputs.values()),
                                          columns=tuple((c, tuple(s)) for c, s in columns.items()),
                                          indirect=tuple(indirect)))
        tasks.append(TaskLineage(task_id=f"{dag_id}.{task_id}", map_index=map_index,
                                 report=LineageReport(statements=tuple(built))))
    return build_graph(tasks)


def _dataset(f: Any) -> Dataset:
    return Dataset(namespace=f.namespace, name=f.name, table=f.label if f.label and f.label != f.name else None)
