"""Digest Spark's analyzed-plan JSON into the lean plan the resolver walks (``lean.py``).

Spark's ``toJSON`` is verbose (every attribute carries its type, nullability,
metadata and qualifier) and most of it is irrelevant to lineage. The digest keeps
only what resolution reads: per node, its output exprIds and, per expression, its
SQL text and the attributes it reads with their roles. Nodes that only pass rows
through (aliases, filters, sorts, limits, CTE definitions) are folded into their
child; their conditions become statement-level condition entries.

The driver digests each plan on its background thread while Spark runs on, so the
dump holds lean plans and extraction on the Airflow worker is a short walk. A raw
record (tests, the CLI analysing in process, a driver whose digest failed) is
digested on read.
"""

from __future__ import annotations

from typing import Any, Mapping

from airflow_lineage_provider.lineage import naming
from airflow_lineage_provider.lineage.model import (
    CONDITIONAL,
    FILTER,
    GROUP_BY,
    JOIN,
    SORT,
    TRANSFORMATION,
    WINDOW,
    Dataset,
)
from airflow_lineage_provider.lineage.plan import expressions as ex
from airflow_lineage_provider.lineage.plan import record as raw
from airflow_lineage_provider.lineage.plan.events import lean_keys
from airflow_lineage_provider.lineage.plan.lean import (
    CONST,
    DEF,
    EXPAND,
    LEAN,
    MAP,
    REL,
    REN,
    derived_outputs,
    is_lean,
    pack_columns,
    ref_code,
)
from airflow_lineage_provider.lineage.plan.rowlevel import RowLevel
from airflow_lineage_provider.lineage.plan.tree import Tree, decode, named_outputs
from airflow_lineage_provider.lineage.plan.writes import ROW_LEVEL_COMMANDS, Write, find_write

# Nodes whose output is their only child's output, row for row or a subset of rows.
PASS_THROUGH = frozenset({
    "CTERelationDef",
    "SubqueryAlias", "View", "GlobalLimit", "LocalLimit", "Limit", "Offset", "Tail", "Distinct",
    "Deduplicate", "DeduplicateWithinWatermark", "Repartition", "RepartitionByExpression",
    "RebalancePartitions", "Sample", "ResolvedHint", "EventTimeWatermark", "Subquery",
    "WithWindowDefinition", "CollectMetrics", "Sort", "Filter", "PipeOperator",
    # A SQL table function (``RETURNS TABLE``) called in FROM: its body is the child, its columns the body's.
    "SQLFunctionNode",
})
# Leaves that read a table or files.
RELATIONS = frozenset({"LogicalRelation", "HiveTableRelation", "DataSourceV2Relation", "DataSourceV2ScanRelation",
                       "StreamingRelation", "StreamingRelationV2", "StreamingDataSourceV2Relation",
                       "StreamingExecutionRelation"})
# Leaves that make rows out of literals: no source columns, and nothing lost. An RDD
# (``createDataFrame`` from Python data) is not a dataset either.
CONSTANT_LEAVES = frozenset({"LocalRelation", "OneRowRelation", "Range", "EmptyRelation", "LogicalRDD"})
KNOWN = frozenset({"Project", "Aggregate", "Window", "Join", "Union", "Generate", "Expand", "Intersect",
                   "Except", "LateralJoin", "WithCTE", "CTERelationRef", "UnionLoop", "UnionLoopRef",
                   "ScriptTransformation"}
                  ) | PASS_THROUGH | ROW_LEVEL_COMMANDS | RELATIONS | CONSTANT_LEAVES
SEMI_JOINS = ("LeftSemi", "LeftAnti", "ExistenceJoin")
_CONDITIONAL_CLASSES = (".CaseWhen", ".If", ".PivotFirst", ".AggregateExpression")


def digest(record: dict[str, Any]) -> dict[str, Any]:
    """The lean form of a raw record (``record.py``)."""
    raw.check_readable(record)
    if is_lean(record):
        return record
    extras = raw.extras_of(record)
    root = decode(record[raw.PLAN])
    builder = _Digest(root, extras)
    write = find_write(root, extras)
    query = write[1] if write else root
    if write is None and root.cls == "CreateViewCommand":
        query = root.plan("plan") or root
    elif write is None and root.cls.endswith("Command"):
        builder.warn(f"unknown write command {root.cls}: columns resolved from its plan as a query")
    given = root.get("userSpecifiedColumns") if root.cls == "CreateViewCommand" else None
    if write and isinstance(given, list) and given and not write[2]:
        builder.warn(f"the view's {len(given)} column names were not captured: its columns are named as its query "
                     "names them")
    top = builder.node(query)
    builder.note_relations(query)
    if write and write[0] is None and root.cls in ROW_LEVEL_COMMANDS:
        target = builder.row_level.target(root)
        write = (target, query, None)
    out = {k: v for k, v in record.items() if k != raw.PLAN and k != raw.EXTRAS}
    out.update(lean_keys(record))
    out.update(
        format=LEAN,
        nodes=builder.nodes,
        query=top,
        names=[name for _, name in builder.output(query)],
        datasets=[d.to_dict() for d in builder.datasets],
        conds=builder.conds,
        outer=sorted(builder.outer),
        target=write[0].to_dict() if write and write[0] else None,
        columns=list(write[2]) if write and write[2] else None,
        static=list(raw.static_partitions(extras)),
        schemas=builder.schemas(query, write),
        warnings=builder.warnings,
    )
    return out


class _Digest:
    """Builds the lean node table of one plan; each raw node is digested once."""

    def __init__(self, root: Tree, extras: Mapping[str, Any]) -> None:
        self.root = root
        self.extras = extras
        self.nodes: list[dict[str, Any]] = []
        self.datasets: list[Dataset] = []
        self.conds: list[list[Any]] = []
        self.outer: set[int] = set()
        self.warnings: list[str] = []
        self._index: dict[int, int] = {}
        self._lean_outputs: list[list[int]] = []  # per lean node, the exprIds it outputs
        self._dataset_index: dict[Dataset, int] = {}
        self._outputs: dict[int, list[tuple[int, str]]] = {}
        self._cte_defs: dict[int, Tree] | None = None
        self._loop_refs: dict[Any, list[int]] = {}  # recursive CTE references waiting for their loop
        # The caches above are keyed by id(tree), and deep_walk() decodes plans held in fields afresh
        # each time: every tree cached is kept alive here, or a freed one's id could be handed to a
        # later tree, which would then read the cache entry of another node.
        self._alive: list[Tree] = []
        # MERGE, UPDATE and DELETE: a collaborator that builds their nodes with this builder's methods.
        self.row_level = RowLevel(self)

    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    # -- output columns ------------------------------------------------------------------

    def output(self, node: Tree) -> list[tuple[int, str]]:
        """(exprId, name) of the node's output columns, in order."""
        key = id(node)
        if key not in self._outputs:
            self._alive.append(node)
            self._outputs[key] = self._compute_output(node)
        return self._outputs[key]

    def _compute_output(self, node: Tree) -> list[tuple[int, str]]:
        cls = node.cls
        if cls == "Project":
            return named_outputs(node.fields.get("projectList"))
        if cls == "Aggregate":
            return named_outputs(node.fields.get("aggregateExpressions"))
        if cls == "Window":
            return self.output(node.children[0]) + named_outputs(node.fields.get("windowExpressions"))
        if cls == "Join":
            left = self.output(node.children[0])
            return left if _join_type(node) in SEMI_JOINS else left + self.output(node.children[1])
        if cls == "Generate":
            base = self.output(node.children[0]) if node.children else []
            return base + named_outputs(node.fields.get("generatorOutput"))
        if cls in ("Intersect", "Except"):
            return self.output(node.children[0])
        if cls == "UnionLoop":  # a recursive CTE: new exprIds, the anchor's names
            ids = [d.get("id") for d in node.fields.get("outputAttrIds") or () if isinstance(d, dict)]
            return list(zip(ids, (name for _, name in self.output(node.children[0])))) if node.children else []
        if cls == "WithCTE":
            return self.output(node.children[-1])
        if cls in ROW_LEVEL_COMMANDS:
            return self.row_level.columns(node)
        if cls == "LateralJoin":
            right = _lateral_plan(node)
            return self.output(node.children[0]) + (self.output(right) if right is not None else [])
        if cls == "HiveTableRelation":
            return named_outputs(node.fields.get("dataCols")) + named_outputs(node.fields.get("partitionCols"))
        if "output" in node.fields:
            return named_outputs(node.fields.get("output"))
        if cls not in KNOWN:
            named = _alias_field(node)
            if named:
                return [(e, str(x.fields.get("name"))) for e, x in named]
        if node.children:
            return self.output(node.children[0])
        return []

    # -- nodes -----------------------------------------------------------------------------

    def node(self, node: Tree) -> int:
        """Index of the lean node standing for ``node`` (a pass-through node stands for its child)."""
        key = id(node)
        found = self._index.get(key)
        if found is None:
            self._alive.append(node)
            found = self._index[key] = self._build(node)
        return found

    def _add(self, lean: dict[str, Any], output: list[int]) -> int:
        self.nodes.append(lean)
        self._lean_outputs.append(output)
        return len(self.nodes) - 1

    def leaf(self, kind: str, node: Tree, **fields: Any) -> int:
        """Add the lean node of ``kind`` standing for ``node``: its outputs, or a definition whose outputs follow."""
        output = [e for e, _ in self.output(node)]
        if kind == DEF:  # most outputs follow from the definitions and the children: not written twice
            for lean in ({"k": kind, **fields}, {"k": kind, "p": 1, **fields}):
                if derived_outputs(lean, self._lean_outputs.__getitem__) == output:
                    return self._add(lean, output)
        return self._add({"k": kind, "o": output, **fields}, output)

    def _build(self, node: Tree) -> int:
        cls = node.cls
        kids = node.children
        if cls in PASS_THROUGH:
            if not kids:
                return self.leaf(CONST, node)
            child = self.node(kids[0])
            if cls == "Filter":
                self.condition(node.expr("condition"), FILTER, [child])
            elif cls == "Sort":
                for order in node.exprs("order"):
                    self.condition(order, SORT, [child])
            return child
        if cls in RELATIONS:
            return self.leaf(REL, node, ds=self._dataset(node), n=[n for _, n in self.output(node)])
        if cls in CONSTANT_LEAVES:
            return self.leaf(CONST, node)
        if cls == "WithCTE":
            for definition in kids[:-1]:
                self.node(definition)
            return self.node(kids[-1])
        if cls == "CTERelationRef":
            return self._cte_ref(node)
        if cls in ("Intersect", "Except"):
            left = self.node(kids[0])
            if len(kids) > 1:
                self.conds.append([FILTER, [], [], [self.node(kids[1])], True])
            return left
        if cls == "Union":
            return self.leaf(MAP, node, c=[self.node(k) for k in kids])
        if cls == "UnionLoop":
            return self._union_loop(node)
        if cls == "UnionLoopRef":
            # Reads what the loop has made so far: its anchor's rows and its own. The recursion that
            # holds this reference is not built yet: its node is filled in by _union_loop.
            found = self.leaf(MAP, node, c=[], loop=1)
            self._loop_refs.setdefault(node.fields.get("loopId"), []).append(found)
            return found
        if cls == "Expand":
            return self._expand(node)
        if cls in ROW_LEVEL_COMMANDS:
            return self.row_level.build(node)
        children = [self.node(k) for k in kids]
        if cls == "Project":
            return self._defining(node, children, "projectList")
        if cls == "Aggregate":
            for g in node.exprs("groupingExpressions"):
                self.condition(g, GROUP_BY, children)
            return self._defining(node, children, "aggregateExpressions")
        if cls == "Window":
            for key in node.exprs("partitionSpec") + node.exprs("orderSpec"):
                self.condition(key, WINDOW, children)
            return self._defining(node, children, "windowExpressions")
        if cls == "Join":
            kind = FILTER if _join_type(node) in SEMI_JOINS else JOIN
            self.condition(node.expr("condition"), kind, children)
            return self.leaf(DEF, node, c=children, d=[])
        if cls == "Generate":
            return self._generate(node, children)
        if cls == "ScriptTransformation":
            return self._script(node, children)
        if cls == "LateralJoin":
            right = _lateral_plan(node)
            if right is not None:
                children.append(self.node(right))
            self.condition(node.expr("condition"), JOIN, children)
            return self.leaf(DEF, node, c=children, d=[])
        return self._unknown(node, children)

    def _defining(self, node: Tree, children: list[int], field_name: str) -> int:
        listed = node.fields.get(field_name)
        conditional = isinstance(listed, list) and any(_has_condition(flat) for flat in listed)
        defs: list[list[Any]] = []
        seen: set[int] = set()
        for e in node.exprs(field_name):
            eid = ex.expr_id(e)
            if eid is None or eid in seen:
                continue
            seen.add(eid)
            defs += (eid, self.expression(e, children))
        if conditional:
            for e in node.exprs(field_name):
                self.conditional_refs(e, children)
        return self.leaf(DEF, node, c=children, d=defs)

    def _generate(self, node: Tree, children: list[int]) -> int:
        generator = node.expr("generator")
        defs: list[list[Any]] = []
        if generator is not None:
            text, refs, *subs = self.expression(generator, children)
            # A generator's output is never the input value itself: at least a transformation.
            refs = [r if i % 2 == 0 else max(r >> 3, 1) << 3 | r & 7 for i, r in enumerate(refs)]
            for e in node.exprs("generatorOutput"):
                eid = ex.expr_id(e)
                if eid is not None:
                    defs += (eid, [text, refs, *subs])
        else:
            for e in node.exprs("generatorOutput"):
                if ex.expr_id(e) is not None:
                    defs += (ex.expr_id(e), None)
        return self.leaf(DEF, node, c=children, d=defs)

    def _script(self, node: Tree, children: list[int]) -> int:
        """TRANSFORM ... USING: an external program turns the input rows into the output rows, so
        every output column may come from every input column, and none is a copy."""
        inputs = self.output(node.children[0]) if node.children else []
        text = f"TRANSFORM({', '.join(name for _, name in inputs)}) USING '{node.fields.get('script', '')}'"
        refs: list[int] = []
        for eid, _ in inputs:
            refs += (eid, ref_code(TRANSFORMATION, False, False, False))
        defs: list[Any] = []
        for eid, _ in self.output(node):
            defs += (eid, [text, refs])
        return self.leaf(DEF, node, c=children, d=defs)

    def _union_loop(self, node: Tree) -> int:
        """WITH RECURSIVE: output i is the anchor's output i and the recursion's output i; the
        recursion's references to the loop read both (the resolver's memo ends the cycle)."""
        if len(node.children) != 2:
            return self._unknown(node, [self.node(k) for k in node.children])
        anchor = self.node(node.children[0])
        recursion = self.node(node.children[1])
        for ref in self._loop_refs.pop(node.fields.get("id"), ()):
            self.nodes[ref]["c"] = [anchor, recursion]
        return self.leaf(MAP, node, c=[anchor, recursion])

    def _expand(self, node: Tree) -> int:
        """GROUPING SETS / ROLLUP / CUBE / UNPIVOT: one projection per output row kind."""
        children = [self.node(k) for k in node.children]
        rows = node.expr_rows("projections") or self._expand_rows(node)
        if rows:
            lean_rows = [[self.expression(e, children) for e in row] for row in rows]
            return self.leaf(EXPAND, node, c=children, rows=lean_rows)
        # No projections at all: Spark's grouping analytics put the child's columns first,
        # then fresh copies of the group-by columns (same names), then the grouping id.
        child_output = self.output(node.children[0]) if node.children else []
        renames: list[int | None] = []
        for position, (_, name) in enumerate(self.output(node)):
            if position < len(child_output):
                renames.append(child_output[position][0])
                continue
            same_name = [e for e, n in child_output if n == name]
            if same_name:
                renames.append(same_name[-1])
            else:
                renames.append(None)
                if name not in ("spark_grouping_id", "gid"):
                    self.warn(f"Expand without projections: no source found for {name}")
        return self.leaf(REN, node, c=children[:1], r=renames)

    def _expand_rows(self, node: Tree) -> list[list[Tree]]:
        """Projections the capture read from the JVM where Spark's JSON left them out."""
        output = self.output(node)
        rows = raw.expand_rows(self.extras, output[0][0]) if output else None
        return [[decode(e) for e in row] for row in rows] if rows else []

    def _cte_ref(self, node: Tree) -> int:
        """A CTE reference maps by position to its definition's output."""
        if self._cte_defs is None:
            self._cte_defs = {int(n.fields["id"]): n for n in self.root.deep_walk()
                              if n.cls == "CTERelationDef" and "id" in n.fields}
        definition = self._cte_defs.get(int(node.fields.get("cteId", -1)))
        if definition is None or not definition.children:
            self.warn(f"CTE reference {node.fields.get('cteId')} has no definition in the plan")
            return self.leaf(CONST, node)
        source = self.node(definition.children[0])
        return self.leaf(MAP, node, c=[source])

    def _unknown(self, node: Tree, children: list[int]) -> int:
        self.warn(f"unknown plan node {node.cls}: lineage passed through on a best-effort basis")
        if not node.children:
            self.warn(f"unknown leaf {node.cls}: no source for its columns")
        defs: list[list[Any]] = []
        seen: set[int] = set()
        for name in node.fields:
            for e in node.exprs(name) if isinstance(node.fields[name], list) else ():
                eid = ex.expr_id(e)
                if e.cls == "Alias" and eid is not None and eid not in seen:
                    seen.add(eid)
                    defs += (eid, self.expression(e, children))
        return self.leaf(DEF, node, c=children, d=defs)

    # -- relations ---------------------------------------------------------------------------

    def _dataset(self, node: Tree) -> int:
        dataset = self.name_relation(node)
        index = self._dataset_index.get(dataset)
        if index is None:
            index = self._dataset_index[dataset] = len(self.datasets)
            self.datasets.append(dataset)
        return index

    def name_relation(self, node: Tree) -> Dataset:
        """The dataset a relation reads: its catalog name and where the capture found it stored."""
        meta = node.get("catalogTable") or node.get("tableMeta") or node.get("table")
        table = naming.table_name(meta.get("identifier")) if isinstance(meta, dict) else None
        out = self.output(node)
        key = str(out[0][0]) if out else ""
        paths = raw.relation(self.extras, key)
        if table is None:
            table = paths.get(raw.TABLE)
        jdbc = paths.get(raw.JDBC)
        if jdbc:  # a JDBC table: named by its database server, never by credentials
            return naming.from_jdbc(jdbc.get(raw.URL, ""), jdbc.get(raw.TABLE), catalog_name=paths.get(raw.TABLE))
        location = raw.table_location(self.extras, table) if table else None
        location = location or (paths.get(raw.PATHS) or [None])[0] or _source_path(node)
        return naming.from_location(location, table=table)

    def schemas(self, query: Tree, write: Write | None) -> dict[str, str | list[list[str]]]:
        """Columns of the catalog tables the statement read and wrote, for the static extractor's
        schema cache: the next run's START lineage knows them before Spark runs."""
        return {table: pack_columns(columns) for table, columns in self._schemas(query, write).items()}

    def _schemas(self, query: Tree, write: Write | None) -> dict[str, list[list[str]]]:
        out: dict[str, list[list[str]]] = {}
        for node in query.deep_walk():
            if node.cls in RELATIONS:
                table = self.datasets[self._dataset(node)].table
                if table:
                    out.setdefault(table, _typed_columns(node))
        if write and write[0] is not None and write[0].table and query.cls not in ROW_LEVEL_COMMANDS:
            names = list(write[2] or ()) or [n for _, n in self.output(query)]
            names += [n for n in raw.static_partitions(self.extras) if n not in names]
            known = out.get(write[0].table)
            if known is None or [c[0] for c in known] != names:  # read and written alike: keep the types
                out[write[0].table] = [[n, ""] for n in names]
        return out

    def note_relations(self, query: Tree) -> None:
        """Every relation of the plan is an input, also one read only by a condition or subquery."""
        for node in query.deep_walk():
            if node.cls in RELATIONS:
                self.node(node)

    # -- expressions ---------------------------------------------------------------------------

    def expression(self, expression: Tree, children: list[int]) -> list[Any]:
        """The lean form of an expression over ``children``: its text, the columns it reads with their
        roles, and its subqueries."""
        refs: list[int] = []
        paths: list[str] = []
        for r in ex.references(expression):
            refs += (r.expr_id, ref_code(r.subtype, r.masking, r.conditional, ex.is_generated(r.name)))
            paths.append(r.path)
        subs = self._subqueries(expression, children)
        if any(paths):
            return [ex.render(expression), refs, subs, paths]
        return [ex.render(expression), refs, subs] if subs else [ex.render(expression), refs]

    def _subqueries(self, expression: Tree, children: list[int]) -> list[list[Any]]:
        out = []
        for sub in ex.subqueries(expression):
            plan = sub.plan("plan")
            if plan is None:
                continue
            out.append([sub.cls == "ScalarSubquery", self.node(plan)])
            if sub.children:  # the correlation: outer references filter the result
                values = _outer_values(plan)
                for ref in ex.references(Tree("OuterRefs", {}, sub.children)):
                    if ref.expr_id not in values:
                        self.outer.add(ref.expr_id)
        return out

    def condition(self, expression: Tree | None, subtype: str, scope: list[int]) -> None:
        """The columns (and subqueries) an expression reads, as a statement-level input of ``subtype``."""
        if expression is None:
            return
        found = ex.references(expression)
        refs = [r.expr_id for r in found]
        subs = self._subqueries(expression, scope)
        if refs or subs:
            paths = [r.path for r in found]
            self.conds.append([subtype, refs, subs, scope, False, paths] if any(paths)
                              else [subtype, refs, subs, scope, False])

    def conditional_refs(self, expression: Tree, scope: list[int]) -> None:
        """The columns that only decide a value (a CASE's WHEN, an IF's test) as CONDITIONAL inputs."""
        refs = [r.expr_id for r in ex.references(expression) if r.conditional]
        if refs:
            self.conds.append([CONDITIONAL, refs, [], scope, False])


# -- raw-plan helpers ----------------------------------------------------------------------------

def _outer_values(plan: Tree) -> set[int]:
    """The outer columns a subquery reads only in the values it selects (``(SELECT salary)``,
    ``(SELECT upper(name))``): its value's sources, which decide no row, unlike a correlation."""
    field = {"Project": "projectList", "Aggregate": "aggregateExpressions"}.get(plan.cls)
    if field is None:
        return set()
    values = _outer_ids(plan.fields.get(field))
    if not values:
        return values
    elsewhere = _outer_ids([v for k, v in plan.fields.items() if k != field])
    for node in plan.walk():
        if node is not plan:
            elsewhere |= _outer_ids(list(node.fields.values()))
    return values - elsewhere


def _outer_ids(piece: Any) -> set[int]:
    """The exprIds of the outer columns (``OuterReference``) anywhere in a piece of Spark's JSON."""
    out: set[int] = set()
    for node in raw.all_nodes(piece):
        if str(node["class"]).endswith(".OuterReference"):
            held = node.get("e")
            eid = held[0].get("exprId") if isinstance(held, list) and held and isinstance(held[0], dict) else None
            if isinstance(eid, dict) and "id" in eid:
                out.add(eid["id"])
    return out


def _has_condition(flat: Any) -> bool:
    return isinstance(flat, list) and any(
        isinstance(n, dict) and str(n.get("class", "")).endswith(_CONDITIONAL_CLASSES) for n in flat)


def _alias_field(node: Tree) -> list[tuple[int, Tree]]:
    """An unknown node that lists named expressions (a projection of its own) outputs them."""
    for name in node.fields:
        items = node.exprs(name) if isinstance(node.fields[name], list) else []
        if items and all(e.cls in ("Alias", "AttributeReference") for e in items) \
                and any(e.cls == "Alias" for e in items):
            return [(eid, e) for e in items if (eid := ex.expr_id(e)) is not None]
    return []


def _typed_columns(relation: Tree) -> list[list[str]]:
    """[[column, SQL type], ...] of a relation, from the attributes it outputs."""
    fields = ("dataCols", "partitionCols") if relation.cls == "HiveTableRelation" else ("output",)
    out = []
    for name in fields:
        for flat in relation.fields.get(name) or ():
            if isinstance(flat, list) and flat and isinstance(flat[0], dict) and "name" in flat[0]:
                out.append([str(flat[0]["name"]), ex.type_sql(flat[0].get("dataType"))])
    return out


def _lateral_plan(node: Tree) -> Tree | None:
    right = node.expr("right")
    return right.plan("plan") if right is not None else None


def _source_path(node: Tree) -> str | None:
    """A streaming file source names its path in ``sourceName``: ``FileSource[/data/in]``."""
    name = node.fields.get("sourceName")
    if isinstance(name, str) and name.startswith("FileSource[") and name.endswith("]"):
        return name[len("FileSource["):-1].split(",")[0].strip() or None
    return None


def _join_type(node: Tree) -> str:
    join = node.get("joinType")
    if isinstance(join, dict):
        name = join.get("object") or join.get("product-class") or ""
        return str(name).rsplit(".", 1)[-1].rstrip("$")
    return str(join)
