"""What changed in a task's lineage between two runs (or two documents): edges added, removed or
changed (subtype, expression), and the columns that lost all their sources.

A lineage change that nobody meant is a bug report waiting to be written: a rewritten statement that
drops a join key, a column that now comes from a literal. ``airflow-lineage diff`` prints it and the
UI's "changes" view colours it; both read this module, so an edge is "the same edge" in one way only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from airflow_lineage_provider.lineage.model import DIRECT, ColumnInput, LineageReport, StatementLineage

# What an indirect input influences in an edge key: the whole statement, not one column.
INDIRECT_COLUMN = "(indirect)"

# (target, column or "(indirect)", source table, source field, DIRECT/INDIRECT, indirect subtype or ""):
# a direct edge is one per column pair (its subtype can change); an indirect one is one per subtype, as a
# column can be a join key and a filter of one statement at once.
EdgeKey = tuple[str, str, str, str, str, str]
# (subtype, expression)
_Edges = dict[EdgeKey, tuple[str, str]]

ADDED, REMOVED, CHANGED = "added", "removed", "changed"


def target_label(statement: StatementLineage) -> str:
    """The name a statement's target goes by in a diff (a bare query has no table)."""
    return statement.target.label if statement.target else f"query result of statement {statement.index + 1}"


def edge_key(statement: StatementLineage, column: str | None, source: ColumnInput) -> EdgeKey:
    """One edge's identity across runs: target, column (``None``: an indirect input), source column, type.

    The graph of the UI marks its edges with the same key, so the changes it colours are the ones
    ``airflow-lineage diff`` prints.
    """
    if column is not None:
        return target_label(statement), column, source.table, source.field, DIRECT, ""
    return target_label(statement), INDIRECT_COLUMN, source.table, source.field, source.type, source.subtype


@dataclass(frozen=True)
class EdgeChange:
    """One edge added, removed, or changed (``old`` and ``new`` are (subtype, expression))."""

    kind: str
    key: EdgeKey
    old: tuple[str, str] | None = None
    new: tuple[str, str] | None = None

    def text(self) -> str:
        target, column, table, source_field, _, _ = self.key

        def side(value: tuple[str, str]) -> str:
            return value[0] + (f"  {value[1]}" if value[1] else "")

        head = f"{target}.{column} <- {table}.{source_field}"
        if self.kind == CHANGED:
            return f"{head}: {side(self.old)} -> {side(self.new)}"
        return f"{head} {side(self.new if self.kind == ADDED else self.old)}"

    def to_dict(self) -> dict[str, Any]:
        target, column, table, source_field, kind, _ = self.key
        return {"kind": self.kind, "target": target, "column": None if column == INDIRECT_COLUMN else column,
                "source_table": table, "source_column": source_field, "type": kind,
                "old": _side(self.old), "new": _side(self.new), "text": self.text()}


def _side(value: tuple[str, str] | None) -> dict[str, str] | None:
    return None if value is None else {"subtype": value[0], "expression": value[1]}


@dataclass(frozen=True)
class LineageDiff:
    edges: tuple[EdgeChange, ...] = ()
    lost_columns: tuple[tuple[str, str], ...] = ()  # (target, column) that had sources and have none now

    def _texts(self, kind: str) -> list[str]:
        return sorted(e.text() for e in self.edges if e.kind == kind)

    @property
    def added(self) -> list[str]:
        return self._texts(ADDED)

    @property
    def removed(self) -> list[str]:
        return self._texts(REMOVED)

    @property
    def changed(self) -> list[str]:
        return self._texts(CHANGED)

    @property
    def lost(self) -> list[str]:
        return [f"{t}.{c}" for t, c in self.lost_columns]

    @property
    def same(self) -> bool:
        return not (self.edges or self.lost_columns)

    def lines(self) -> list[str]:
        if self.same:
            return ["no change in the column lineage"]
        out = [f"! {c} lost all its sources" for c in self.lost]
        out += [f"+ {e}" for e in self.added] + [f"- {e}" for e in self.removed] + [f"~ {e}" for e in self.changed]
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"same": self.same, "edges": [e.to_dict() for e in sorted(self.edges, key=lambda e: (e.kind, e.text()))],
                "lost": [{"target": t, "column": c} for t, c in self.lost_columns], "lines": self.lines()}


def _edges(report: LineageReport) -> tuple[_Edges, dict[tuple[str, str], bool]]:
    """Every edge of a report, and for each target column whether it has a source."""
    edges: _Edges = {}
    has_source: dict[tuple[str, str], bool] = {}
    for st in report.statements:
        target = target_label(st)
        for column, inputs in st.columns:
            has_source[(target, column)] = has_source.get((target, column), False) or bool(inputs)
            for i in inputs:
                edges[edge_key(st, column, i)] = (i.subtype, i.expression)
        for i in st.indirect:
            edges[edge_key(st, None, i)] = (i.subtype, "")
    return edges, has_source


def diff(old: LineageReport, new: LineageReport) -> LineageDiff:
    before, had = _edges(old)
    after, has = _edges(new)
    changes = [EdgeChange(ADDED, k, new=v) for k, v in after.items() if k not in before]
    changes += [EdgeChange(REMOVED, k, old=v) for k, v in before.items() if k not in after]
    changes += [EdgeChange(CHANGED, k, old=before[k], new=after[k]) for k in before.keys() & after.keys()
                if before[k] != after[k]]
    lost = sorted((target, column) for (target, column), had_one in had.items()
                  if had_one and not has.get((target, column), False))
    return LineageDiff(tuple(changes), tuple(lost))
