"""What changed in a task's lineage between two runs (or two documents): edges added, removed or
changed (subtype, expression), and the columns that lost all their sources.

A lineage change that nobody meant is a bug report waiting to be written: a rewritten statement that
drops a join key, a column that now comes from a literal. ``airflow-lineage diff`` prints it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from airflow_lineage_provider.lineage.model import DIRECT, LineageReport

# (target, column or "(indirect)", source table.field, DIRECT or the indirect subtype) -> (subtype, expression):
# a direct edge is one per column pair (its subtype can change); an indirect one is one per subtype, as a
# column can be a join key and a filter of one statement at once.
_Edges = dict[tuple[str, str, str, str], tuple[str, str]]


@dataclass(frozen=True)
class LineageDiff:
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)  # target columns that had sources and have none now

    @property
    def same(self) -> bool:
        return not (self.added or self.removed or self.changed or self.lost)

    def lines(self) -> list[str]:
        if self.same:
            return ["no change in the column lineage"]
        out = [f"! {c} lost all its sources" for c in self.lost]
        out += [f"+ {e}" for e in self.added] + [f"- {e}" for e in self.removed] + [f"~ {e}" for e in self.changed]
        return out


def _edges(report: LineageReport) -> tuple[_Edges, dict[tuple[str, str], bool]]:
    """Every edge of a report, and for each target column whether it has a source."""
    edges: _Edges = {}
    has_source: dict[tuple[str, str], bool] = {}
    for st in report.statements:
        target = st.target.label if st.target else f"query result of statement {st.index + 1}"
        for column, inputs in st.columns:
            has_source[(target, column)] = has_source.get((target, column), False) or bool(inputs)
            for i in inputs:
                edges[(target, column, f"{i.table}.{i.field}", DIRECT)] = (i.subtype, i.expression)
        for i in st.indirect:
            edges[(target, "(indirect)", f"{i.table}.{i.field}", i.subtype)] = (i.subtype, "")
    return edges, has_source


def diff(old: LineageReport, new: LineageReport) -> LineageDiff:
    before, had = _edges(old)
    after, has = _edges(new)

    def text(key: tuple[str, str, str, str], value: tuple[str, str]) -> str:
        target, column, source, _ = key
        subtype, expression = value
        return f"{target}.{column} <- {source} {subtype}" + (f"  {expression}" if expression else "")

    added = sorted(text(k, v) for k, v in after.items() if k not in before)
    removed = sorted(text(k, v) for k, v in before.items() if k not in after)
    changed = sorted(
        f"{k[0]}.{k[1]} <- {k[2]}: {before[k][0]}{'  ' + before[k][1] if before[k][1] else ''} -> "
        f"{after[k][0]}{'  ' + after[k][1] if after[k][1] else ''}"
        for k in before.keys() & after.keys() if before[k] != after[k])
    lost = sorted(f"{target}.{column}" for (target, column), had_one in had.items()
                  if had_one and not has.get((target, column), False))
    return LineageDiff(added, removed, changed, lost)
