"""PIVOT and UNPIVOT: which input columns an output column of a pivoted relation comes from.

A mixin of the scope resolver (``scope.py``): it reads the resolver's sources and memos.
"""

from __future__ import annotations

from sqlglot import exp

from airflow_lineage_provider.lineage.model import Origin, origin, stronger
from airflow_lineage_provider.lineage.sql.roles import Ref, collect_refs
from airflow_lineage_provider.lineage.sql.shared import Source


class Pivots:
    """Pivot and unpivot columns, and the pivot's indirect inputs."""

    def pivot_parts(self, src: Source) -> tuple[list[str], list[str], list[str]]:
        """(kept input columns, pivot/name columns, value columns) of a pivot or unpivot."""
        pivot: exp.Pivot = src.node
        inner = self.source_outputs(src.inner) or []
        field_in = pivot.args.get("fields") or []
        if pivot.args.get("unpivot"):
            used = {c.name.lower() for f in field_in for c in f.find_all(exp.Column)}
            names = [f.this.name for f in field_in if isinstance(f, exp.In)]
            # UNPIVOT ((v1, v2) FOR ...): a tuple of value columns, named one by one.
            values = [i.name for e in pivot.expressions for i in (e.expressions if isinstance(e, exp.Tuple) else [e])]
            return [c for c in inner if c.lower() not in used], names, values
        used = {c.name.lower() for e in pivot.expressions for c in e.find_all(exp.Column)}
        pivot_cols = {c.name.lower() for f in field_in if isinstance(f, exp.In) for c in f.this.find_all(exp.Column)}
        keep = [c for c in inner if c.lower() not in used and c.lower() not in pivot_cols]
        values = [c.name for c in pivot.args.get("columns") or []]
        return keep, sorted(pivot_cols), values

    def pivots_by_condition(self, src: Source) -> bool:
        """Whether Spark pivots with one conditional aggregate per value (``min(if(k = 'v', x, null))``) and
        no grouping by the pivot columns: when an aggregate's result is not atomic (an array, map or struct:
        ``collect_list(x)``, ``min(arr)``), which ``PivotFirst`` cannot hold."""
        for agg in src.node.expressions:
            inner = agg.this if isinstance(agg, exp.Alias) else agg
            if isinstance(inner, (exp.ArrayAgg, exp.ArrayUniqueAgg)):
                return True
            if isinstance(inner, (exp.Min, exp.Max, exp.First, exp.Last, exp.AnyValue)) \
                    and isinstance(inner.this, exp.Column):
                kind = self._inner_type(src.inner, inner.this.name)
                if kind and kind.startswith(("array", "map", "struct")):
                    return True
        return False

    def _inner_type(self, inner: Source | None, name: str) -> str | None:
        """The type of a pivoted relation's column, when known."""
        if inner is None:
            return None
        if inner.kind == "table" and inner.info is not None:
            kind = inner.info.type_of(name)
            return kind.lower() if kind else None
        if inner.kind == "scope" and isinstance(inner.node.expression, exp.Select):
            column = exp.column(name)
            proj = self.projections(inner.node).get(name)
            node = proj.this if isinstance(proj, exp.Alias) else proj
            if isinstance(node, exp.Column):
                column = node
            else:
                return None
            kind = self.column_type(inner.node, column)
            return kind.lower() if kind else None
        return None

    def pivot_outputs(self, src: Source) -> list[str] | None:
        """Column names a pivot or unpivot offers; ``None`` when its input's are unknown."""
        if self.source_outputs(src.inner) is None:
            return None
        keep, names, values = self.pivot_parts(src)
        if src.node.args.get("unpivot"):
            return keep + names + values
        return keep + values

    def pivot_column(self, src: Source, name: str) -> frozenset[Origin]:
        """Source columns of a pivot's or unpivot's output column ``name``."""
        pivot: exp.Pivot = src.node
        keep, names, values = self.pivot_parts(src)
        scope = src.outer_scope
        lower = name.lower()
        if pivot.args.get("unpivot"):
            if lower in (n.lower() for n in names):
                return frozenset()
            if lower in (v.lower() for v in values):
                pos = [v.lower() for v in values].index(lower)
                out: set[Origin] = set()
                for f in pivot.args.get("fields") or []:
                    for item in f.expressions:
                        if isinstance(item, exp.PivotAlias):
                            item = item.this
                        cols = item.expressions if isinstance(item, exp.Tuple) else [item]
                        if pos < len(cols):
                            for c in cols[pos].find_all(exp.Column):
                                out |= self.source_column(scope, src.inner, c.name)
                return frozenset(out)
            return self.source_column(scope, src.inner, name)
        if lower in (v.lower() for v in values):
            aggs = pivot.expressions
            pos = [v.lower() for v in values].index(lower)
            agg = aggs[pos % len(aggs)] if aggs else None
            if agg is None:
                return frozenset()
            refs: list[Ref] = []
            collect_refs(agg.this if isinstance(agg, exp.Alias) else agg, refs, [], False, False, False, False)
            text = self.render(agg.this if isinstance(agg, exp.Alias) else agg)
            out = set()
            for ref in refs:
                if ref.conditional:  # a CASE / IF condition: an indirect input (``Conditions._pivot_indirect``)
                    continue
                for o in self.source_column(scope, src.inner, ref.column.name):
                    out.add(origin((o.table, o.field, stronger(ref.subtype, o.subtype), text,
                                    o.masking or ref.masking)))
            return frozenset(out)
        return self.source_column(scope, src.inner, name)


def name_pivot_values(pivot: exp.Pivot) -> None:
    """Values with no alias that sqlglot leaves unnamed (tuples, arrays: ``FOR (c, y) IN (('a', 1), ..)``)
    get the names Spark gives them, before qualify expands a star over the pivot."""
    columns = pivot.args.get("columns") or []
    ins = [f for f in pivot.args.get("fields") or [] if isinstance(f, exp.In)]
    if pivot.args.get("unpivot") or not any(not c.name for c in columns) or len(ins) != 1 \
            or len(pivot.expressions) != 1 or len(ins[0].expressions) != len(columns):
        return
    pivot.set("columns", [c if c.name else exp.to_identifier(_value_name(e))
                          for c, e in zip(columns, ins[0].expressions)])


def _value_name(node: exp.Expression) -> str:
    """The name Spark gives a PIVOT value with no alias: its value as Spark prints it (``{dotNET, 2012}`` for
    a tuple, a struct; ``[1, 1]`` for an array; a string unquoted)."""
    if isinstance(node, exp.PivotAlias):
        node = node.this
    if isinstance(node, exp.Paren):
        node = exp.Tuple(expressions=[node.this])
    if isinstance(node, exp.Tuple):
        return "{" + ", ".join(_value_name(e) for e in node.expressions) + "}"
    if isinstance(node, exp.Array):
        return "[" + ", ".join(_value_name(e) for e in node.expressions) + "]"
    if isinstance(node, exp.Literal):
        return node.name
    return node.sql("spark")
