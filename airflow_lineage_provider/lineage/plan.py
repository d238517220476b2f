"""Field lineage from Spark's analyzed logical plan, resolved top-down by exprId.

Like Calcite's ``getColumnOrigins``: start from each output column of the write
and follow the exprId down through the plan, one rule per node kind, to the
columns of base relations. Every step records how the value changes (identity,
transformation, aggregation); conditions met on the way (joins, filters, group
keys, sort and window keys, CASE conditions) become statement-level indirect
inputs. The resolver walks the lean plan of ``lineage/digest.py``, where Spark's
JSON is already reduced to exprIds, expression texts and the roles of their
attributes; a node kind the digest does not know is passed through on a
best-effort basis with a warning and a lower confidence: lineage is never dropped
without a word.
"""

from __future__ import annotations

import gc
from operator import attrgetter
from typing import Any, NamedTuple

from airflow_lineage_provider.lineage import digest as lean
from airflow_lineage_provider.lineage.model import (
    DIRECT,
    FILTER,
    IDENTITY,
    INDIRECT,
    TRANSFORMATION,
    ColumnInput,
    Dataset,
    StatementLineage,
    stronger,
)

UNKNOWN_NODE_CONFIDENCE = 0.5
_NONE: frozenset = frozenset()
_new = tuple.__new__  # builds an Origin without the Python-level __new__ of a NamedTuple (hot path)
# ColumnInput's own order, compared field by field in C rather than by its generated __lt__.
_ORDER = attrgetter("table", "field", "type", "subtype", "expression", "masking")


class Origin(NamedTuple):
    """One source column reached from an output column, with what happened on the way."""

    table: str
    field: str
    subtype: str
    expression: str
    masking: bool


class PlanResolver:
    """Resolves the columns of one lean plan. Build one per record."""

    def __init__(self, record: dict[str, Any]) -> None:
        self.nodes: list[dict[str, Any]] = record["nodes"]
        self.labels = [Dataset.from_dict(d).label for d in record["datasets"]]
        self.indirect: set[ColumnInput] = set()
        self._memo: dict[tuple[int, int], frozenset[Origin]] = {}
        self._positions: dict[int, dict[int, int]] = {}
        self._definitions: dict[int, dict[int, Any]] = {}
        self._leaf_origins: dict[int, Origin] | None = None

    def position(self, index: int, eid: int) -> int | None:
        """Where ``eid`` stands in the node's output (indexed once per node: wide plans stay linear)."""
        table = self._positions.get(index)
        if table is None:
            output = self.nodes[index]["o"]
            # Built right to left, so a repeated exprId keeps its first position.
            table = self._positions[index] = dict(zip(reversed(output), range(len(output) - 1, -1, -1)))
        return table.get(eid)

    def resolve(self, index: int, eid: int) -> frozenset[Origin]:
        """Source columns of the attribute ``eid`` as node ``index`` outputs it."""
        key = (index, eid)
        found = self._memo.get(key)
        if found is not None:
            return found
        self._memo[key] = _NONE  # breaks cycles in malformed plans
        node = self.nodes[index]
        kind = node["k"]
        if kind == lean.DEF:
            definitions = self._definitions.get(index)
            if definitions is None:
                definitions = self._definitions[index] = {e: x for e, x in node["d"]}
            if eid in definitions:
                expression = definitions[eid]
                result = self.expression(expression, node["c"]) if expression is not None else _NONE
            else:
                result = self._pass(node["c"], eid)
        elif kind == lean.MAP:
            result = self._map(index, node, eid)
        elif kind == lean.REL:
            position = self.position(index, eid)
            result = _NONE if position is None else frozenset(
                {Origin(self.labels[node["ds"]], node["n"][position], IDENTITY, "", False)})
        elif kind == lean.REN:
            position = self.position(index, eid)
            source = node["r"][position] if position is not None else None
            result = self.resolve(node["c"][0], source) if source is not None and node["c"] else _NONE
        elif kind == lean.EXPAND:
            position = self.position(index, eid)
            out: set[Origin] = set()
            if position is not None:
                for row in node["rows"]:
                    if position < len(row):
                        out |= self.expression(row[position], node["c"])
            result = frozenset(out)
        else:  # CONST
            result = _NONE
        self._memo[key] = result
        return result

    def _pass(self, children: list[int], eid: int) -> frozenset[Origin]:
        for child in children:
            if self.position(child, eid) is not None:
                return self.resolve(child, eid)
        return _NONE

    def _map(self, index: int, node: dict[str, Any], eid: int) -> frozenset[Origin]:
        """UNION and CTE references: output i is output i of each source."""
        position = self.position(index, eid)
        if position is None:
            return _NONE
        out: set[Origin] = set()
        for child in node["c"]:
            cols = self.nodes[child]["o"]
            if position < len(cols):
                out |= self.resolve(child, cols[position])
        return frozenset(out)

    def expression(self, expression: list[Any], children: list[int]) -> frozenset[Origin]:
        """Origins of a digested expression whose attributes come from ``children``' outputs."""
        text, refs, subs = expression
        out: set[Origin] = set()
        for eid, subtype, flags in refs:
            if flags & lean.CONDITIONAL_REF:
                continue
            keep_any = subtype == IDENTITY or flags & lean.GENERATED
            masked = bool(flags & lean.MASKING)
            for o in self._resolve_ref(children, eid):
                step = o.subtype if o.subtype == subtype else stronger(subtype, o.subtype)
                out.add(_new(Origin, (o.table, o.field, step, o.expression if keep_any and o.expression else text,
                                      o.masking or masked)))
        for scalar, plan in subs:
            if scalar:
                for eid in self.nodes[plan]["o"][:1]:
                    for o in self.resolve(plan, eid):
                        out.add(Origin(o.table, o.field, stronger(TRANSFORMATION, o.subtype), text, o.masking))
        return frozenset(out)

    def _resolve_ref(self, children: list[int], eid: int) -> frozenset[Origin]:
        """An attribute read from the children, or, for an outer reference, straight from its relation."""
        for child in children:
            if self.position(child, eid) is not None:
                return self.resolve(child, eid)
        origin = self._leaf_origin(eid)
        return frozenset({origin}) if origin else _NONE

    def _leaf_origin(self, eid: int) -> Origin | None:
        if self._leaf_origins is None:
            self._leaf_origins = {}
            for node in self.nodes:
                if node["k"] == lean.REL:
                    for e, name in zip(node["o"], node["n"]):
                        self._leaf_origins[e] = Origin(self.labels[node["ds"]], name, IDENTITY, "", False)
        return self._leaf_origins.get(eid)

    def note_conditions(self, conds: list[list[Any]], outer: list[int]) -> None:
        """Statement-level indirect inputs: every condition of the plan, and subquery correlations."""
        add = self.indirect.add
        for subtype, refs, subs, scope, every in conds:
            if every:
                for child in scope:
                    for e in self.nodes[child]["o"]:
                        for o in self.resolve(child, e):
                            add(ColumnInput(o.table, o.field, INDIRECT, subtype, "", o.masking))
                continue
            for eid, _, _ in refs:
                for o in self._resolve_ref(scope, eid):
                    add(ColumnInput(o.table, o.field, INDIRECT, subtype, "", o.masking))
            for _, plan in subs:
                for e in self.nodes[plan]["o"]:
                    for o in self.resolve(plan, e):
                        add(ColumnInput(o.table, o.field, INDIRECT, subtype, "", o.masking))
        for eid in outer:
            origin = self._leaf_origin(eid)
            if origin:
                add(ColumnInput(origin.table, origin.field, INDIRECT, FILTER, "", origin.masking))


def extract(record: dict[str, Any]) -> StatementLineage:
    """Lineage of one captured record, raw (``"plan"``, ``"extras"``) or already digested.

    The resolver builds many small acyclic objects; Python's cyclic garbage
    collector would rescan them again and again, so it is paused for the call.
    """
    paused = gc.isenabled()
    gc.disable()
    try:
        return _extract(lean.digest(record))
    finally:
        if paused:
            gc.enable()


def _extract(record: dict[str, Any]) -> StatementLineage:
    resolver = PlanResolver(record)
    query = record["query"]
    names = record.get("columns")
    columns: list[tuple[str, tuple[ColumnInput, ...]]] = []
    for i, (eid, name) in enumerate(zip(resolver.nodes[query]["o"], record["names"])):
        target_name = names[i] if names and i < len(names) else name
        inputs = tuple(sorted((
            ColumnInput(o.table, o.field, DIRECT, o.subtype, o.expression or o.field, o.masking)
            for o in resolver.resolve(query, eid)
        ), key=_ORDER))
        columns.append((target_name, inputs))
    # A static partition's value is a literal of the statement: a column with no source.
    for name in record.get("static") or ():
        if name not in {c for c, _ in columns}:
            columns.append((name, ()))
    resolver.note_conditions(record["conds"], record["outer"])
    warnings = tuple(record.get("warnings") or ())
    datasets = {}
    for d in record["datasets"]:
        dataset = Dataset.from_dict(d)
        datasets.setdefault(dataset.label, dataset)
    return StatementLineage(
        index=int(record.get("index", 0)),
        sql=str(record.get("sql", "")),
        method="plan",
        confidence=UNKNOWN_NODE_CONFIDENCE if warnings else 1.0,
        target=Dataset.from_dict(record["target"]) if record.get("target") else None,
        inputs=tuple(sorted(datasets.values(), key=lambda d: d.label)),
        columns=tuple(columns),
        indirect=tuple(sorted(resolver.indirect, key=_ORDER)),
        warnings=warnings,
    )
