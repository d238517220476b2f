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

This module is a mixin of the digest's builder (``digest._Digest``): it uses the
builder's nodes, expressions and conditions, and the digest calls it for the
commands ``writes.ROW_LEVEL`` names.
"""

from __future__ import annotations

from typing import Any

from airflow_lineage_provider.lineage import naming
from airflow_lineage_provider.lineage.model import CONDITIONAL, FILTER, IDENTITY, JOIN, Dataset
from airflow_lineage_provider.lineage.plan import expressions as ex
from airflow_lineage_provider.lineage.plan.lean import EXPAND, ref_code
from airflow_lineage_provider.lineage.plan.tree import Tree

# The write mode a row-level command gives its target in the document.
MODES = {"MergeIntoTable": "merge", "UpdateTable": "update", "DeleteFromTable": "delete"}
_NULL: list[Any] = ["NULL", []]  # a value with no source: a column an INSERT clause leaves out


class _Clause:
    """One WHEN clause (or the UPDATE itself): its values by target exprId, and whether the
    columns it does not name keep their value (UPDATE) or are NULL (INSERT)."""

    __slots__ = ("values", "keeps")

    def __init__(self, values: dict[int, list[Tree]], keeps: bool) -> None:
        self.values = values
        self.keeps = keeps


class RowLevel:
    """The digest's handling of MERGE INTO, UPDATE and DELETE FROM (a mixin of ``_Digest``)."""

    # -- what the digest asks -----------------------------------------------------------------

    def row_level_columns(self, node: Tree) -> list[tuple[int, str]]:
        """(exprId, name) of the target columns some clause writes, in the table's order."""
        written: set[int] = set()
        for clause in self._clauses(node):
            if clause.keeps:
                return self.output(_target_plan(node))  # type: ignore[attr-defined]
            written.update(clause.values)
        return [(e, name) for e, name in self.output(_target_plan(node)) if e in written]  # type: ignore[attr-defined]

    def row_level(self, node: Tree) -> int:
        """The lean EXPAND node of a row-level command: one row of values per clause."""
        target_plan = _target_plan(node)
        children = [self.node(target_plan)]  # type: ignore[attr-defined]
        source = node.children[1] if node.cls == "MergeIntoTable" and len(node.children) > 1 else None
        if source is not None:
            children.append(self.node(source))  # type: ignore[attr-defined]
        self.note_relations(node)  # type: ignore[attr-defined]
        condition = node.expr("mergeCondition") if node.cls == "MergeIntoTable" else node.expr("condition")
        self._condition(condition, JOIN if node.cls == "MergeIntoTable" else FILTER, children)  # type: ignore
        for action in _actions(node):
            self._condition(action.expr("condition"), CONDITIONAL, children)  # type: ignore[attr-defined]
        columns = self.row_level_columns(node)
        rows: list[list[Any]] = []
        for clause in self._clauses(node):
            rows.extend(self._rows(clause, columns, children))
        return self._leaf(EXPAND, node, c=children, rows=rows)  # type: ignore[attr-defined]

    def row_level_target(self, node: Tree) -> Dataset | None:
        """The written table: the relation under the command's target plan."""
        for found in _target_plan(node).walk():
            if found.cls in ("LogicalRelation", "HiveTableRelation", "DataSourceV2Relation"):
                dataset = self._name_relation(found)  # type: ignore[attr-defined]
                return Dataset(namespace=dataset.namespace, name=dataset.name, table=dataset.table,
                               mode=MODES.get(node.cls))
        table = (self.extras.get("write") or {}).get("table")  # type: ignore[attr-defined]
        return naming.from_location(None, table=table, mode=MODES.get(node.cls)) if table else None

    # -- clauses --------------------------------------------------------------------------------

    def _clauses(self, node: Tree) -> list[_Clause]:
        cached = node._cache.get("clauses")
        if cached is None:
            if node.cls == "UpdateTable":
                cached = [_Clause(_assigned(node.exprs("assignments")), keeps=True)]
            else:
                cached = [clause for action in _actions(node) if (clause := _clause(action)) is not None]
            node._cache["clauses"] = cached
        return cached

    def _rows(self, clause: _Clause, columns: list[tuple[int, str]], children: list[int]) -> list[list[Any]]:
        """The clause's values in the order of ``columns``; a column given several values (one per
        nested field set) adds rows, as each value is a source of the column."""
        first: list[Any] = []
        more: list[list[Any]] = []
        for position, (eid, _) in enumerate(columns):
            values = clause.values.get(eid)
            if not values:
                first.append(self._keep(eid, columns) if clause.keeps else _NULL)
                continue
            lean = [self._value(v, children) for v in values]
            first.append(lean[0])
            for extra in lean[1:]:
                row = [_NULL] * len(columns)
                row[position] = extra
                more.append(row)
        return [first, *more]

    def _value(self, value: Tree, children: list[int]) -> list[Any]:
        self._conditional_refs(value, children)  # type: ignore[attr-defined]
        return self._expression(value, children)  # type: ignore[attr-defined]

    @staticmethod
    def _keep(eid: int, columns: list[tuple[int, str]]) -> list[Any]:
        """A column the clause leaves as it is: the target's own value, read as it was."""
        name = next(n for e, n in columns if e == eid)
        return [name, [eid, ref_code(IDENTITY, False, False, False)]]


# -- raw-plan helpers ----------------------------------------------------------------------------

def _target_plan(node: Tree) -> Tree:
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
