"""Field lineage from Spark's analyzed logical plan, resolved top-down by exprId.

Like Calcite's ``getColumnOrigins``: start from each output column of the write
and follow the exprId down through the plan, one handler per node kind, to the
columns of base relations. Every step records how the value changes (identity,
transformation, aggregation); conditions met on the way (joins, filters, group
keys, sort and window keys, CASE conditions) become statement-level indirect
inputs. A node kind without a handler is passed through on a best-effort basis
with a warning and a lower confidence: lineage is never dropped without a word.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass
from typing import Any, Callable

from airflow_lineage_provider.lineage import expressions as ex
from airflow_lineage_provider.lineage import naming
from airflow_lineage_provider.lineage.model import (
    DIRECT,
    FILTER,
    GROUP_BY,
    IDENTITY,
    INDIRECT,
    JOIN,
    SORT,
    WINDOW,
    CONDITIONAL,
    TRANSFORMATION,
    ColumnInput,
    Dataset,
    StatementLineage,
    stronger,
)
from airflow_lineage_provider.lineage.tree import Tree, decode, named_outputs, scala_seq

UNKNOWN_NODE_CONFIDENCE = 0.5

# Nodes whose output is their only child's output, row for row or a subset of rows.
PASS_THROUGH = frozenset({
    "CTERelationDef",
    "SubqueryAlias", "View", "GlobalLimit", "LocalLimit", "Limit", "Offset", "Tail", "Distinct",
    "Deduplicate", "DeduplicateWithinWatermark", "Repartition", "RepartitionByExpression",
    "RebalancePartitions", "Sample", "ResolvedHint", "EventTimeWatermark", "Subquery",
    "WithWindowDefinition", "CollectMetrics", "Sort", "Filter",
})
# Leaves that read a table or files.
RELATIONS = frozenset({"LogicalRelation", "HiveTableRelation", "DataSourceV2Relation", "DataSourceV2ScanRelation",
                       "StreamingRelation", "StreamingRelationV2", "StreamingDataSourceV2Relation",
                       "StreamingExecutionRelation"})
# Leaves that make rows out of literals: no source columns, and nothing lost. An RDD
# (``createDataFrame`` from Python data) is not a dataset either.
CONSTANT_LEAVES = frozenset({"LocalRelation", "OneRowRelation", "Range", "EmptyRelation", "LogicalRDD"})


@dataclass(frozen=True)
class Origin:
    """One source column reached from an output column, with what happened on the way."""

    table: str
    field: str
    subtype: str
    expression: str
    masking: bool


@dataclass(frozen=True)
class Write:
    """What a write command writes: the target and the plan of its rows."""

    target: Dataset | None
    query: Tree
    columns: tuple[str, ...] | None  # None: the query's own output names


class PlanResolver:
    """Resolves columns of one analyzed plan. Build one per captured plan."""

    def __init__(self, root: Tree, extras: dict[str, Any] | None = None) -> None:
        self.root = root
        self.extras = extras or {}
        self.warnings: list[str] = []
        self.confidence = 1.0
        self.indirect: set[ColumnInput] = set()
        self.inputs: dict[str, Dataset] = {}
        self._memo: dict[tuple[int, int], frozenset[Origin]] = {}
        self._outputs: dict[int, list[tuple[int, str]]] = {}
        self._positions: dict[int, dict[int, int]] = {}
        self._definitions: dict[tuple[int, str], dict[int, Tree]] = {}
        self._seen_indirect: set[int] = set()
        self._handlers: dict[str, Callable[[Tree, int], frozenset[Origin]]] = {
            "Project": self._project,
            "Aggregate": self._aggregate,
            "Window": self._window,
            "Join": self._pass,
            "Union": self._union,
            "Generate": self._generate,
            "Expand": self._expand,
            "Intersect": self._set_operation,
            "Except": self._set_operation,
            "LateralJoin": self._lateral_join,
            "WithCTE": self._with_cte,
            "CTERelationRef": self._cte_ref,
        }
        self._cte_defs: dict[int, Tree] | None = None
        self._every_node: list[Tree] | None = None
        self._leaf_origins: dict[int, Origin] | None = None

    # -- output columns of a node -------------------------------------------------

    def output(self, node: Tree) -> list[tuple[int, str]]:
        """(exprId, name) of the node's output columns, in order."""
        key = id(node)
        if key not in self._outputs:
            self._outputs[key] = self._compute_output(node)
        return self._outputs[key]

    def position(self, node: Tree, eid: int) -> int | None:
        """Where ``eid`` stands in the node's output (indexed once per node: wide plans stay linear)."""
        key = id(node)
        index = self._positions.get(key)
        if index is None:
            index = self._positions[key] = {}
            for i, (e, _) in enumerate(self.output(node)):
                index.setdefault(e, i)
        return index.get(eid)

    def _definition(self, node: Tree, field_name: str, eid: int) -> Tree | None:
        """The named expression of ``field_name`` that defines ``eid``."""
        key = (id(node), field_name)
        index = self._definitions.get(key)
        if index is None:
            index = self._definitions[key] = {}
            for e in node.exprs(field_name):
                d = ex.expr_id(e)
                if d is not None:
                    index.setdefault(d, e)
        return index.get(eid)

    def _compute_output(self, node: Tree) -> list[tuple[int, str]]:
        cls = node.cls
        if cls in ("Project",):
            return named_outputs(node.fields.get("projectList"))
        if cls == "Aggregate":
            return named_outputs(node.fields.get("aggregateExpressions"))
        if cls == "Window":
            return self.output(node.children[0]) + named_outputs(node.fields.get("windowExpressions"))
        if cls == "Join":
            left = self.output(node.children[0])
            if _join_type(node) in ("LeftSemi", "LeftAnti", "ExistenceJoin"):
                return left
            return left + self.output(node.children[1])
        if cls == "Generate":
            base = self.output(node.children[0]) if node.children else []
            return base + named_outputs(node.fields.get("generatorOutput"))
        if cls in ("Intersect", "Except"):
            return self.output(node.children[0])
        if cls == "WithCTE":
            return self.output(node.children[-1])
        if cls == "LateralJoin":
            right = _lateral_plan(node)
            return self.output(node.children[0]) + (self.output(right) if right is not None else [])
        if cls == "HiveTableRelation":
            return named_outputs(node.fields.get("dataCols")) + named_outputs(node.fields.get("partitionCols"))
        if "output" in node.fields:
            return named_outputs(node.fields.get("output"))
        if cls not in PASS_THROUGH and cls not in self._handlers:
            # An unknown node that lists named expressions (a projection of its own) outputs them.
            for name in node.fields:
                items = node.exprs(name)
                if items and all(e.cls in ("Alias", "AttributeReference") for e in items) \
                        and any(e.cls == "Alias" for e in items):
                    return _named(items)
        if node.children:
            return self.output(node.children[0])
        return []

    # -- resolution ------------------------------------------------------------------

    def resolve(self, node: Tree, eid: int) -> frozenset[Origin]:
        """Source columns of the attribute ``eid`` as ``node`` outputs it."""
        key = (id(node), eid)
        if key in self._memo:
            return self._memo[key]
        self._memo[key] = frozenset()  # breaks cycles in malformed plans
        self._note_indirect(node)
        cls = node.cls
        if cls in self._handlers:
            result = self._handlers[cls](node, eid)
        elif cls in PASS_THROUGH:
            result = self.resolve(node.children[0], eid) if node.children else frozenset()
        elif cls in RELATIONS:
            result = self._relation(node, eid)
        elif cls in CONSTANT_LEAVES:
            result = frozenset()
        else:
            result = self._unknown(node, eid)
        self._memo[key] = result
        return result

    def _from_expression(self, node: Tree, expression: Tree, children: tuple[Tree, ...]) -> frozenset[Origin]:
        """Origins of an expression whose attributes come from ``children``' outputs."""
        text = ex.render(expression)
        out: set[Origin] = set()
        for ref in ex.references(expression):
            if ref.conditional:
                continue
            for o in self._resolve_ref(children, ref.expr_id):
                subtype = stronger(ref.subtype, o.subtype)
                keep_inner = o.expression and (ref.subtype == IDENTITY or ex.is_generated(ref.name))
                out.add(Origin(o.table, o.field, subtype, o.expression if keep_inner else text,
                               o.masking or ref.masking))
        for sub in ex.subqueries(expression):
            plan = sub.plan("plan")
            if plan is None:
                continue
            if sub.cls == "ScalarSubquery":
                for eid, _ in self.output(plan)[:1]:
                    for o in self.resolve(plan, eid):
                        out.add(Origin(o.table, o.field, stronger(TRANSFORMATION, o.subtype), text, o.masking))
            self._subquery_indirect(sub, plan)
        return frozenset(out)

    def _resolve_ref(self, children: tuple[Tree, ...], eid: int) -> frozenset[Origin]:
        """An attribute read from the children, or, for an outer reference, straight from its relation."""
        owners = self._owners(children, eid)
        if owners:
            return self.resolve(owners[0], eid)
        origin = self._leaf_origin(eid)
        return frozenset({origin}) if origin else frozenset()

    def _leaf_origin(self, eid: int) -> Origin | None:
        if self._leaf_origins is None:
            self._leaf_origins = {}
            for leaf in self._all_nodes():
                if leaf.cls in RELATIONS:
                    dataset = self._relation_dataset(leaf)
                    for e, name in self.output(leaf):
                        self._leaf_origins[e] = Origin(dataset.label, name, IDENTITY, "", False)
        return self._leaf_origins.get(eid)

    def _owners(self, children: tuple[Tree, ...], eid: int) -> list[Tree]:
        return [c for c in children if self.position(c, eid) is not None]

    def _named_lookup(self, node: Tree, field_name: str, eid: int) -> frozenset[Origin]:
        definition = self._definition(node, field_name, eid)
        if definition is not None:
            return self._from_expression(node, definition, node.children)
        return self._pass(node, eid)

    def _pass(self, node: Tree, eid: int) -> frozenset[Origin]:
        for child in self._owners(node.children, eid):
            return self.resolve(child, eid)
        return frozenset()

    def _project(self, node: Tree, eid: int) -> frozenset[Origin]:
        return self._named_lookup(node, "projectList", eid)

    def _aggregate(self, node: Tree, eid: int) -> frozenset[Origin]:
        return self._named_lookup(node, "aggregateExpressions", eid)

    def _window(self, node: Tree, eid: int) -> frozenset[Origin]:
        return self._named_lookup(node, "windowExpressions", eid)

    def _generate(self, node: Tree, eid: int) -> frozenset[Origin]:
        if self._definition(node, "generatorOutput", eid) is not None:
            generator = node.expr("generator")
            if generator is None:
                return frozenset()
            found = self._from_expression(node, generator, node.children)
            return frozenset(Origin(o.table, o.field, stronger("TRANSFORMATION", o.subtype), o.expression, o.masking)
                             for o in found)
        return self._pass(node, eid)

    def _union(self, node: Tree, eid: int) -> frozenset[Origin]:
        position = self.position(node.children[0], eid) if node.children else None
        if position is None:
            return frozenset()
        out: set[Origin] = set()
        for child in node.children:
            cols = self.output(child)
            if position < len(cols):
                out |= self.resolve(child, cols[position][0])
        return frozenset(out)

    def _expand(self, node: Tree, eid: int) -> frozenset[Origin]:
        """GROUPING SETS / ROLLUP / CUBE / UNPIVOT: one projection per output row kind."""
        position = self.position(node, eid)
        if position is None:
            return frozenset()
        rows = node.expr_rows("projections") or self._expand_rows(node)
        if not rows:
            return self._expand_by_name(node, position)
        out: set[Origin] = set()
        for row in rows:
            if position < len(row):
                out |= self._from_expression(node, row[position], node.children)
        return frozenset(out)

    def _expand_rows(self, node: Tree) -> list[list[Tree]]:
        """Projections the capture read from the JVM where Spark's JSON left them out."""
        if "expand_rows" not in node._cache:
            output = self.output(node)
            raw = self.extras.get("expand", {}).get(str(output[0][0]) if output else "")
            node._cache["expand_rows"] = [[decode(e) for e in row] for row in raw] if raw else []
        return node._cache["expand_rows"]

    def _expand_by_name(self, node: Tree, position: int) -> frozenset[Origin]:
        """No projections at all: Spark's grouping analytics put the child's columns first, then
        fresh copies of the group-by columns (same names), then the grouping id."""
        child = node.children[0]
        eid, name = self.output(node)[position]
        child_output = self.output(child)
        if position < len(child_output):
            return self.resolve(child, child_output[position][0])
        same_name = [e for e, n in child_output if n == name]
        if same_name:
            return self.resolve(child, same_name[-1])
        if name not in ("spark_grouping_id", "gid"):
            self.warn(f"Expand without projections: no source found for {name}")
        return frozenset()

    def _set_operation(self, node: Tree, eid: int) -> frozenset[Origin]:
        """INTERSECT / EXCEPT: values come from the left; the right only filters (indirect)."""
        return self.resolve(node.children[0], eid)

    def _lateral_join(self, node: Tree, eid: int) -> frozenset[Origin]:
        if self.position(node.children[0], eid) is not None:
            return self.resolve(node.children[0], eid)
        right = _lateral_plan(node)
        return self.resolve(right, eid) if right is not None else frozenset()

    def _with_cte(self, node: Tree, eid: int) -> frozenset[Origin]:
        return self.resolve(node.children[-1], eid)

    def _cte_ref(self, node: Tree, eid: int) -> frozenset[Origin]:
        """A CTE reference maps by position to its definition's output."""
        if self._cte_defs is None:
            self._cte_defs = {
                int(n.fields["id"]): n for n in self._all_nodes() if n.cls == "CTERelationDef" and "id" in n.fields
            }
        definition = self._cte_defs.get(int(node.fields.get("cteId", -1)))
        if definition is None or not definition.children:
            self.warn(f"CTE reference {node.fields.get('cteId')} has no definition in the plan")
            return frozenset()
        position = self.position(node, eid)
        source = self.output(definition.children[0])
        if position is None or position >= len(source):
            return frozenset()
        return self.resolve(definition.children[0], source[position][0])

    def _relation(self, node: Tree, eid: int) -> frozenset[Origin]:
        position = self.position(node, eid)
        if position is None:
            return frozenset()
        dataset = self._relation_dataset(node)
        return frozenset({Origin(dataset.label, self.output(node)[position][1], IDENTITY, "", False)})

    def _relation_dataset(self, node: Tree) -> Dataset:
        cached = node._cache.get("dataset")
        if cached is None:
            cached = node._cache["dataset"] = self._name_relation(node)
        self.inputs.setdefault(cached.label, cached)
        return cached

    def _name_relation(self, node: Tree) -> Dataset:
        meta = node.get("catalogTable") or node.get("tableMeta") or node.get("table")
        table = naming.table_name(meta.get("identifier")) if isinstance(meta, dict) else None
        out = self.output(node)
        key = str(out[0][0]) if out else ""
        paths = self.extras.get("relations", {}).get(key, {})
        if table is None:
            table = paths.get("table")
        if paths.get("jdbc"):  # a JDBC table: named by its database server, never by credentials
            return naming.from_jdbc(paths["jdbc"].get("url", ""), paths["jdbc"].get("table"),
                                    catalog_name=paths.get("table"))
        location = self.extras.get("tables", {}).get(table) if table else None
        location = location or (paths.get("paths") or [None])[0] or _source_path(node)
        return naming.from_location(location, table=table)

    def _unknown(self, node: Tree, eid: int) -> frozenset[Origin]:
        self.warn(f"unknown plan node {node.cls}: lineage passed through on a best-effort basis")
        for f in node.fields:
            e = self._definition(node, f, eid)
            if e is not None and e.cls == "Alias":
                return self._from_expression(node, e, node.children)
        found = self._pass(node, eid)
        if not found and not node.children:
            self.warn(f"unknown leaf {node.cls}: no source for its columns")
        return found

    def note_whole_plan(self, query: Tree) -> None:
        """Inputs read only by conditions, and relations no column reached, still count."""
        for node in query.walk():
            if node.cls in RELATIONS:
                self._relation_dataset(node)
            self._note_indirect(node)

    def _all_nodes(self) -> list[Tree]:
        """Every plan node, subquery plans included (walked once, on first need)."""
        if self._every_node is None:
            self._every_node = list(self.root.deep_walk())
        return self._every_node

    def warn(self, message: str) -> None:
        self.confidence = min(self.confidence, UNKNOWN_NODE_CONFIDENCE)
        if message not in self.warnings:
            self.warnings.append(message)

    # -- indirect inputs --------------------------------------------------------------

    def _note_indirect(self, node: Tree) -> None:
        if id(node) in self._seen_indirect:
            return
        self._seen_indirect.add(id(node))
        cls = node.cls
        if cls == "Filter":
            self._indirect_from(node.expr("condition"), node.children, FILTER)
        elif cls == "Join":
            # A semi or anti join keeps or drops rows: its condition filters.
            kind = FILTER if _join_type(node) in ("LeftSemi", "LeftAnti", "ExistenceJoin") else JOIN
            self._indirect_from(node.expr("condition"), node.children, kind)
        elif cls == "Aggregate":
            for g in node.exprs("groupingExpressions"):
                self._indirect_from(g, node.children, GROUP_BY)
        elif cls == "Sort":
            for o in node.exprs("order"):
                self._indirect_from(o, node.children, SORT)
        elif cls == "Window":
            for p in node.exprs("partitionSpec") + node.exprs("orderSpec"):
                self._indirect_from(p, node.children, WINDOW)
        elif cls in ("Intersect", "Except") and len(node.children) > 1:
            right = node.children[1]
            for e, _ in self.output(right):
                for o in self.resolve(right, e):
                    self.indirect.add(ColumnInput(o.table, o.field, INDIRECT, FILTER, "", o.masking))
        elif cls == "LateralJoin":
            self._indirect_from(node.expr("condition"), node.children + _opt(_lateral_plan(node)), JOIN)
        for name in ("projectList", "aggregateExpressions", "windowExpressions"):
            raw = node.fields.get(name)
            # Only expressions with a condition in them (CASE, IF, a pivot, an aggregate's
            # FILTER) have conditional inputs: find them in the raw JSON before decoding.
            if isinstance(raw, list) and any(_has_condition(flat) for flat in raw):
                for e in node.exprs(name):
                    self._indirect_conditions(e, node.children)

    def _indirect_from(self, expression: Tree | None, children: tuple[Tree, ...], subtype: str) -> None:
        if expression is None:
            return
        for ref in ex.references(expression):
            for o in self._resolve_ref(children, ref.expr_id):
                self.indirect.add(ColumnInput(o.table, o.field, INDIRECT, subtype, "", o.masking))
        for sub in ex.subqueries(expression):
            plan = sub.plan("plan")
            if plan is not None:
                for e, _ in self.output(plan):
                    for o in self.resolve(plan, e):
                        self.indirect.add(ColumnInput(o.table, o.field, INDIRECT, subtype, "", o.masking))
                self._subquery_indirect(sub, plan)

    def _subquery_indirect(self, sub: Tree, plan: Tree) -> None:
        """A subquery's own conditions and its correlation (outer references) filter the result."""
        for node in plan.walk():
            self._note_indirect(node)
        for ref in ex.references(_outer_refs(sub)) if sub.children else ():
            origin = self._leaf_origin(ref.expr_id)
            if origin:
                self.indirect.add(ColumnInput(origin.table, origin.field, INDIRECT, FILTER, "", origin.masking))

    def _indirect_conditions(self, expression: Tree, children: tuple[Tree, ...]) -> None:
        for ref in ex.references(expression):
            if ref.conditional:
                for o in self._resolve_ref(children, ref.expr_id):
                    self.indirect.add(ColumnInput(o.table, o.field, INDIRECT, CONDITIONAL, "", o.masking))


_CONDITIONAL_CLASSES = (".CaseWhen", ".If", ".PivotFirst", ".AggregateExpression")


def _has_condition(flat: Any) -> bool:
    return isinstance(flat, list) and any(
        isinstance(n, dict) and str(n.get("class", "")).endswith(_CONDITIONAL_CLASSES) for n in flat)


def _named(exprs: list[Tree]) -> list[tuple[int, str]]:
    out = []
    for e in exprs:
        eid = ex.expr_id(e)
        if eid is not None:
            out.append((eid, str(e.fields.get("name"))))
    return out


def _opt(node: Tree | None) -> tuple[Tree, ...]:
    return (node,) if node is not None else ()


def _lateral_plan(node: Tree) -> Tree | None:
    right = node.expr("right")
    return right.plan("plan") if right is not None else None


def _outer_refs(sub: Tree) -> Tree:
    """The outer references of a subquery expression, as one tree to read references from."""
    return Tree("OuterRefs", {}, sub.children)


def _source_path(node: Tree) -> str | None:
    """A streaming file source names its path in ``sourceName``: ``FileSource[/data/in]``."""
    name = node.fields.get("sourceName")
    if isinstance(name, str) and name.startswith("FileSource[") and name.endswith("]"):
        return name[len("FileSource["):-1].split(",")[0].strip() or None
    return None


def _join_type(node: Tree) -> str:
    raw = node.get("joinType")
    if isinstance(raw, dict):
        name = raw.get("object") or raw.get("product-class") or ""
        return str(name).rsplit(".", 1)[-1].rstrip("$")
    return str(raw)


# -- writes ----------------------------------------------------------------------------

_WRITE_MODES = {"Append": "append", "Overwrite": "overwrite", "ErrorIfExists": "create", "Ignore": "create"}


def find_write(root: Tree, extras: dict[str, Any]) -> Write | None:
    """The target and query of a write command; ``None`` for a plain query."""
    write = extras.get("write") or {}
    mode = write.get("mode")
    location = write.get("location") or write.get("path")
    cls = root.cls
    if cls in ("InsertIntoHadoopFsRelationCommand", "InsertIntoHiveTable", "InsertIntoDataSourceCommand"):
        meta = root.get("catalogTable") or root.get("table")
        table = naming.table_name(meta.get("identifier")) if isinstance(meta, dict) else write.get("table")
        if cls == "InsertIntoHiveTable" and mode is None:
            mode = "overwrite" if root.get("overwrite") else "append"
        target = naming.from_location(location, table=table, mode=mode)
        return Write(target, root.children[0], None)
    if cls in ("CreateDataSourceTableAsSelectCommand", "CreateHiveTableAsSelectCommand",
               "OptimizedCreateHiveTableAsSelectCommand"):
        meta = root.get("table") or root.get("tableDesc")
        table = naming.table_name(meta.get("identifier")) if isinstance(meta, dict) else write.get("table")
        query = root.plan("query") or (root.children[0] if root.children else None)
        if query is None:
            return None
        return Write(naming.from_location(location, table=table, mode=mode or "create"), query, None)
    if cls in ("InsertIntoDataSourceDirCommand", "InsertIntoHiveDirCommand"):
        query = root.plan("query") or (root.children[0] if root.children else None)
        if query is None:
            return None
        return Write(naming.from_location(location, table=None, mode=mode or "overwrite"), query, None)
    if cls == "CreateViewCommand":
        view_type = str((root.get("viewType") or {}).get("object", ""))
        query = root.plan("plan")
        if query is None or "Temp" in view_type:
            return None  # a temporary view is not a dataset: lineage flows through it
        table = naming.table_name(root.get("name"))
        columns = tuple(c.split(",")[0].strip("( ") for c in scala_seq(root.get("userSpecifiedColumns"))) or None
        return Write(naming.from_location(None, table=table, mode="overwrite" if root.get("replace") else "create"),
                     query, columns)
    if cls in ("SaveIntoDataSourceCommand",):
        query = root.plan("query") or (root.children[0] if root.children else None)
        if query is None:
            return None
        if write.get("jdbc"):
            return Write(naming.from_jdbc(write["jdbc"].get("url", ""), write["jdbc"].get("table"), mode=mode),
                         query, None)
        return Write(naming.from_location(location, table=write.get("table"), mode=mode), query, None)
    return _find_write_v2(root, write, location, mode)


# DataSource V2 writes and streaming sinks: the query is a child, the target comes from the capture.
_V2_WRITES = {"AppendData": 0, "OverwriteByExpression": 0, "OverwritePartitionsDynamic": 0,
              "CreateTableAsSelect": -1, "ReplaceTableAsSelect": -1,
              "WriteToMicroBatchDataSourceV1": 0, "WriteToMicroBatchDataSource": 0}


def _find_write_v2(root: Tree, write: dict[str, Any], location: str | None, mode: str | None) -> Write | None:
    if root.cls not in _V2_WRITES or not root.children:
        return None
    query = root.children[_V2_WRITES[root.cls]]
    table = write.get("table")
    if write.get("jdbc"):
        target = naming.from_jdbc(write["jdbc"].get("url", ""), write["jdbc"].get("table"), mode=mode,
                                  catalog_name=table)
    elif location or table:
        target = naming.from_location(location, table=table, mode=mode)
    else:
        # A streaming sink with no dataset behind it (console, memory, foreachBatch, Kafka...).
        target = Dataset(namespace="spark_sink", name=str(write.get("sink") or root.cls), mode=mode)
    return Write(target, query, None)


def extract(record: dict[str, Any]) -> StatementLineage:
    """Lineage of one captured record: ``{"index", "sql", "plan", "extras"}``.

    The resolver builds many small acyclic objects; Python's cyclic garbage
    collector would rescan them again and again (a third of the time on wide
    plans), so it is paused for the call.
    """
    paused = gc.isenabled()
    gc.disable()
    try:
        return _extract(record)
    finally:
        if paused:
            gc.enable()


def _extract(record: dict[str, Any]) -> StatementLineage:
    extras = record.get("extras") or {}
    root = decode(record["plan"])
    resolver = PlanResolver(root, extras)
    write = find_write(root, extras)
    query = write.query if write else root
    if write is None and root.cls == "CreateViewCommand":
        query = root.plan("plan") or root
    elif write is None and root.cls.endswith("Command"):
        resolver.warn(f"unknown write command {root.cls}: columns resolved from its plan as a query")
    names = write.columns if write and write.columns else None
    outputs = resolver.output(query)
    columns: list[tuple[str, tuple[ColumnInput, ...]]] = []
    for i, (eid, name) in enumerate(outputs):
        target_name = names[i] if names and i < len(names) else name
        origins = resolver.resolve(query, eid)
        inputs = tuple(sorted(
            ColumnInput(o.table, o.field, DIRECT, o.subtype, o.expression or o.field, o.masking) for o in origins
        ))
        columns.append((target_name, inputs))
    # A static partition's value is a literal of the statement: a column with no source.
    for name in (extras.get("write") or {}).get("static_partitions") or {}:
        if name not in {c for c, _ in columns}:
            columns.append((name, ()))
    resolver.note_whole_plan(query)
    return StatementLineage(
        index=int(record.get("index", 0)),
        sql=str(record.get("sql", "")),
        method="plan",
        confidence=resolver.confidence,
        target=write.target if write else None,
        inputs=tuple(sorted(resolver.inputs.values(), key=lambda d: d.label)),
        columns=tuple(columns),
        indirect=tuple(sorted(resolver.indirect)),
        warnings=tuple(resolver.warnings),
    )
