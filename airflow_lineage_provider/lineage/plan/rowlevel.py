"""Row-level writes (MERGE INTO, UPDATE, DELETE FROM) in the lean plan.

Such a command writes into the table it reads, clause by clause, so its lineage is
not a query's output: each target column takes, from every clause that writes rows,
the value that clause gives it. An UPDATE SET or INSERT value brings its sources;
a column an UPDATE clause leaves as it is keeps the target's own value (IDENTITY);
a column an INSERT clause leaves out is NULL; a DELETE writes no value at all. A
column no clause writes is not a target column. The ON condition is a JOIN input,
a WHEN condition CONDITIONAL and an UPDATE's or DELETE's WHERE a FILTER.

A row-level write becomes one EXPAND node, one row of expressions per clause, over
the target and source plans: the resolver unions a column's rows as it does for
GROUPING SETS. Its outputs reuse the target's exprIds, so the expressions below
read the target's columns as they were.

Two plan shapes say the same thing. The analyzed ``MergeIntoTable`` / ``UpdateTable`` /
``DeleteFromTable`` (a dry run, or a table format with commands of its own) lists the
clauses. For a table with row-level support (Iceberg's, or any DataSource V2 table that
implements ``SupportsRowLevelOperations``), Spark's analyzer rewrites them into
``ReplaceData`` (copy-on-write) or ``WriteDelta`` (merge-on-read) over a query whose
rows each carry an operation code: ``MergeRows`` instructions for a MERGE, a projection
for an UPDATE or DELETE. The rows that write values (update, insert, reinsert) are the
clauses; rows carried over unchanged (copy-on-write rewrites every row of a file), deleted
or discarded write nothing, and the operation, row id and metadata columns of the
rewrite (``__row_operation``, ``_file``, ``_pos``) are never target columns.

``RowLevel`` is a collaborator of the digest's builder (``digest._Digest``): made with the builder,
it builds these nodes with the builder's nodes, expressions and conditions (``Builder`` names
exactly those), and the builder calls it for the commands ``writes.ROW_LEVEL_COMMANDS`` names.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Protocol

from airflow_lineage_provider.lineage import naming
from airflow_lineage_provider.lineage.model import CONDITIONAL, FILTER, IDENTITY, JOIN, Dataset
from airflow_lineage_provider.lineage.plan import expressions as ex
from airflow_lineage_provider.lineage.plan import record as raw
from airflow_lineage_provider.lineage.plan.lean import EXPAND, ref_code
from airflow_lineage_provider.lineage.plan.tree import Tree

# The write mode a row-level command gives its target in the document.
MODES = {"MergeIntoTable": "merge", "UpdateTable": "update", "DeleteFromTable": "delete"}
REWRITTEN = frozenset({"ReplaceData", "WriteDelta", "InsertOnlyMerge"})
# Spark's operation codes of a rewritten row (``RowDeltaUtils``): the ones that write values.
_UPDATE, _INSERT, _REINSERT = 2, 3, 4
_WRITES_VALUES = frozenset({_UPDATE, _INSERT, _REINSERT})
_NULL: list[Any] = ["NULL", []]  # a value with no source: a column an INSERT clause leaves out

_Output = Callable[[Tree], list[tuple[int, str]]]


class Builder(Protocol):
    """What the row-level handling asks of the digest's builder: the lean plan is one table of
    nodes and conditions, so a row-level command's node is built by the builder that builds the
    plans under it. (A protocol: the digest imports this module, which cannot import it back.)"""

    @property
    def extras(self) -> Mapping[str, Any]:
        """What the capture read beside the plan JSON (the written table's name and location)."""

    @property
    def conds(self) -> list[list[Any]]:
        """The statement's condition entries so far (a rewritten MERGE's anti join is retyped)."""

    def output(self, node: Tree) -> list[tuple[int, str]]: ...

    def node(self, node: Tree) -> int: ...

    def leaf(self, kind: str, node: Tree, **fields: Any) -> int: ...

    def note_relations(self, query: Tree) -> None: ...

    def name_relation(self, node: Tree) -> Dataset: ...

    def expression(self, expression: Tree, children: list[int]) -> list[Any]: ...

    def condition(self, expression: Tree | None, subtype: str, scope: list[int]) -> None: ...

    def conditional_refs(self, expression: Tree, scope: list[int]) -> None: ...


@dataclass(frozen=True, slots=True)
class _Clause:
    """One WHEN clause (or the UPDATE itself): its values by target exprId, and whether the
    columns it does not name keep their value (UPDATE) or are NULL (INSERT)."""

    values: dict[int, list[Tree]]
    keeps: bool


class RowLevel:
    """The digest's handling of MERGE INTO, UPDATE and DELETE FROM, built with the digest's builder."""

    def __init__(self, builder: Builder) -> None:
        # Weak: the builder holds this collaborator, and a strong reference back would make a cycle that
        # keeps every digested plan alive until the garbage collector runs (digest was 1.35x slower).
        self._builder: Builder = weakref.proxy(builder)
        # Per command node (by id), what was read of it. The node is kept in the value: while it
        # lives, its id cannot be handed to another tree.
        self._rewrites: dict[int, tuple[Tree, _Rewrite]] = {}
        self._clause_lists: dict[int, tuple[Tree, list[_Clause]]] = {}

    # -- what the digest asks -----------------------------------------------------------------

    def columns(self, node: Tree) -> list[tuple[int, str]]:
        """(exprId, name) of the target columns some clause writes, in the table's order."""
        if node.cls in REWRITTEN:
            rewrite = self._rewrite(node)
            return rewrite.columns if rewrite.rows else []
        written: set[int] = set()
        for clause in self._clauses(node):
            if clause.keeps:
                return self._builder.output(_target_plan(node))
            written.update(clause.values)
        return [(e, name) for e, name in self._builder.output(_target_plan(node)) if e in written]

    def build(self, node: Tree) -> int:
        """The lean EXPAND node of a row-level command: one row of values per clause."""
        if node.cls in REWRITTEN:
            return self._rewritten(node)
        builder = self._builder
        target_plan = _target_plan(node)
        children = [builder.node(target_plan)]
        source = node.children[1] if node.cls == "MergeIntoTable" and len(node.children) > 1 else None
        if source is not None:
            children.append(builder.node(source))
        builder.note_relations(node)
        condition = node.expr("mergeCondition") if node.cls == "MergeIntoTable" else node.expr("condition")
        builder.condition(condition, JOIN if node.cls == "MergeIntoTable" else FILTER, children)
        for action in _actions(node):
            builder.condition(action.expr("condition"), CONDITIONAL, children)
        columns = self.columns(node)
        rows: list[list[Any]] = []
        for clause in self._clauses(node):
            rows.extend(self._rows(clause, columns, children))
        return builder.leaf(EXPAND, node, c=children, rows=rows)

    def target(self, node: Tree) -> Dataset | None:
        """The written table: the relation under the command's target plan."""
        mode = MODES.get(node.cls) or self._rewrite(node).mode
        write = raw.write_of(self._builder.extras)
        if node.cls in REWRITTEN and write.get(raw.TABLE):
            location = raw.write_location(self._builder.extras, node.cls, raw.LOCATION)
            return naming.from_location(location, table=write[raw.TABLE], mode=mode)
        for found in _target_plan(node).walk():
            if found.cls in ("LogicalRelation", "HiveTableRelation", "DataSourceV2Relation"):
                dataset = self._builder.name_relation(found)
                return Dataset(namespace=dataset.namespace, name=dataset.name, table=dataset.table, mode=mode)
        table = write.get("table")
        return naming.from_location(None, table=table, mode=mode) if table else None

    # -- the rewritten shapes --------------------------------------------------------------------

    def _rewrite(self, node: Tree) -> _Rewrite:
        cached = self._rewrites.get(id(node))
        if cached is None:
            cached = self._rewrites[id(node)] = (node, _read_rewrite(node, self._builder.output))
        return cached[1]

    def _anti_join_is_the_merge_condition(self, rewrite: _Rewrite, before: int) -> None:
        """Spark turned the MERGE's ON condition into the anti join that finds the rows to insert:
        it is the statement's JOIN condition, as in the MERGE the user wrote, not a filter."""
        join = rewrite.below[0] if rewrite.below else None
        condition = join.expr("condition") if join is not None and join.cls == "Join" else None
        if condition is None:
            return
        refs = [r.expr_id for r in ex.references(condition)]
        for cond in self._builder.conds[before:]:
            if cond[0] == FILTER and cond[1] == refs:
                cond[0] = JOIN

    def _rewritten(self, node: Tree) -> int:
        builder = self._builder
        rewrite = self._rewrite(node)
        before = len(builder.conds)
        children = [builder.node(plan) for plan in rewrite.below]
        if node.cls == "InsertOnlyMerge":
            self._anti_join_is_the_merge_condition(rewrite, before)
        builder.note_relations(node)
        if not rewrite.merge:  # an UPDATE's or DELETE's WHERE; a MERGE's ON is its join's condition
            builder.condition(node.expr("condition"), FILTER, children)
        for condition in rewrite.conditions:
            builder.condition(condition, CONDITIONAL, children)
        rows = [[self._value(value, children) for value in row] for row in rewrite.rows]
        return builder.leaf(EXPAND, node, c=children, rows=rows)

    # -- clauses --------------------------------------------------------------------------------

    def _clauses(self, node: Tree) -> list[_Clause]:
        cached = self._clause_lists.get(id(node))
        if cached is None:
            if node.cls == "UpdateTable":
                clauses = [_Clause(_assigned(node.exprs("assignments")), keeps=True)]
            else:
                clauses = [clause for action in _actions(node) if (clause := _clause(action)) is not None]
            cached = self._clause_lists[id(node)] = (node, clauses)
        return cached[1]

    def _rows(self, clause: _Clause, columns: list[tuple[int, str]], children: list[int]) -> list[list[Any]]:
        """The clause's values in the order of ``columns``; a column given several values (one per
        nested field set) adds rows, as each value is a source of the column."""
        first: list[Any] = []
        more: list[list[Any]] = []
        for position, (eid, _) in enumerate(columns):
            values = clause.values.get(eid)
            if not values:
                first.append(_keep(eid, columns) if clause.keeps else _NULL)
                continue
            lean = [self._value(v, children) for v in values]
            first.append(lean[0])
            for extra in lean[1:]:
                row = [_NULL] * len(columns)
                row[position] = extra
                more.append(row)
        return [first, *more]

    def _value(self, value: Tree, children: list[int]) -> list[Any]:
        self._builder.conditional_refs(value, children)
        return self._builder.expression(value, children)


def _keep(eid: int, columns: list[tuple[int, str]]) -> list[Any]:
    """A column the clause leaves as it is: the target's own value, read as it was."""
    name = next(n for e, n in columns if e == eid)
    return [name, [eid, ref_code(IDENTITY, False, False, False)]]


# -- raw-plan helpers ----------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class _Rewrite:
    """What a ReplaceData / WriteDelta writes: the query's data columns, one row of values per
    instruction that writes values, the instructions' conditions, and the plans they read."""

    columns: list[tuple[int, str]]
    rows: list[list[Tree]]
    conditions: list[Tree]
    below: list[Tree]
    merge: bool

    @property
    def mode(self) -> str:
        return "merge" if self.merge else "update" if self.rows else "delete"


def _read_rewrite(node: Tree, output: _Output) -> _Rewrite:
    query = node.children[0] if node.children else None
    if query is None:
        return _Rewrite([], [], [], [], merge=False)
    table = node.plan("table")
    data = {name for _, name in output(table)} if table is not None else set()
    out = output(query)
    below = list(query.children[:1])
    if node.cls == "InsertOnlyMerge":
        # A MERGE with INSERT clauses only, rewritten into an append of the source rows the target has
        # none of: the values are the projection's, and a column the INSERT leaves out is NULL.
        items = [ex.strip_alias(e) for e in query.exprs("projectList")] if query.cls == "Project" else []
        positions = [i for i, (_, name) in enumerate(out)
                     if name in data and i < len(items) and not _is_null(items[i])]
        return _Rewrite([out[i] for i in positions], [[items[i] for i in positions]] if positions else [], [],
                        below, merge=True)
    # The first column is the operation; then the table's columns; then row ids and metadata.
    positions = [i for i, (_, name) in enumerate(out) if i > 0 and name in data]
    columns = [out[i] for i in positions]
    if query.cls == "MergeRows":
        rows, conditions = [], []
        for name in ("matchedInstructions", "notMatchedInstructions", "notMatchedBySourceInstructions"):
            for instruction in query.exprs(name):
                kids = instruction.children
                if not kids:
                    continue
                conditions.append(kids[0])
                values = kids[1:]
                halves = [values[:len(values) // 2], values[len(values) // 2:]] \
                    if instruction.cls.endswith("Split") else [values]
                for half in halves:
                    if half and _operation(half[0]) in _WRITES_VALUES:
                        rows.append([half[i] for i in positions if i < len(half)])
        return _Rewrite(columns, rows, conditions, below, merge=True)
    # An UPDATE or DELETE: a projection (or, when the condition has a subquery, a UNION of one for the
    # rows it changes and one for the rows it carries over), its first column the operation.
    projections = [query] if query.cls == "Project" else \
        [c for c in query.children if c.cls == "Project"] if query.cls == "Union" else []
    rows = []
    for projection in projections:
        items = [ex.strip_alias(e) for e in projection.exprs("projectList")]
        if not items:
            continue
        operation = items[0]
        if operation.cls == "If" and len(operation.children) == 3:
            # Copy-on-write UPDATE: every row is rewritten, ``if(cond, new, old)``: the clause is ``new``.
            if _operation(operation.children[1]) in _WRITES_VALUES:
                rows.append([_then(items[i]) for i in positions if i < len(items)])
        elif _operation(operation) in _WRITES_VALUES:
            rows.append([items[i] for i in positions if i < len(items)])
    below = [p.children[0] for p in projections if p.children] if query.cls == "Union" else below
    return _Rewrite(columns, rows, [], below, merge=False)


def _operation(expression: Tree) -> int | None:
    """The operation code a rewritten row's first column holds (a literal)."""
    if expression.cls == "Literal":
        try:
            return int(str(expression.fields.get("value")))
        except ValueError:
            return None
    return None


def _is_null(expression: Tree) -> bool:
    return expression.cls == "Literal" and expression.fields.get("value") is None


def _then(expression: Tree) -> Tree:
    return expression.children[1] if expression.cls == "If" and len(expression.children) == 3 else expression


def _target_plan(node: Tree) -> Tree:
    if node.cls in REWRITTEN:
        return node.plan("table") or node.children[0]
    field = "targetTable" if node.cls == "MergeIntoTable" else "table"
    index = node.fields.get(field)
    if isinstance(index, int) and index < len(node.children):
        return node.children[index]
    return node.children[0]


def _actions(node: Tree) -> list[Tree]:
    if node.cls != "MergeIntoTable":
        return []
    return [a for name in ("matchedActions", "notMatchedActions", "notMatchedBySourceActions")
            for a in node.exprs(name)]


def _clause(action: Tree) -> _Clause | None:
    """A MERGE action as a clause; a DELETE writes no value (``None``)."""
    cls = action.cls
    if cls.startswith("Delete"):
        return None
    assignments = [a for a in action.children if a.cls == "Assignment"]
    return _Clause(_assigned(assignments), keeps=cls.startswith("Update"))


def _assigned(assignments: list[Tree]) -> dict[int, list[Tree]]:
    """Values by the exprId of the target column they set (a nested field sets its top column)."""
    out: dict[int, list[Tree]] = {}
    for assignment in assignments:
        if len(assignment.children) != 2:
            continue
        key, value = assignment.children
        eid = ex.expr_id(key) if key.cls == "AttributeReference" else _top_column(key)
        if eid is not None:
            out.setdefault(eid, []).append(value)
    return out


def _top_column(key: Tree) -> int | None:
    for found in key.walk():
        if found.cls == "AttributeReference":
            return ex.expr_id(found)
    return None
