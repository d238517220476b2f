"""Field lineage from Spark's analyzed logical plan, resolved top-down by exprId.

Like Calcite's ``getColumnOrigins``: start from each output column of the write
and follow the exprId down through the plan, one rule per node kind, to the
columns of base relations. Every step records how the value changes (identity,
transformation, aggregation); conditions met on the way (joins, filters, group
keys, sort and window keys, CASE conditions) become statement-level indirect
inputs. The resolver walks the lean plan of ``lean.py`` (built by ``digest.py``), where Spark's
JSON is already reduced to exprIds, expression texts and the roles of their
attributes; a node kind the digest does not know is passed through on a
best-effort basis with a warning and a lower confidence: lineage is never dropped
without a word.
"""

from __future__ import annotations

import gc
from dataclasses import replace
from typing import Any

from airflow_lineage_provider.lineage.model import (
    FILTER,
    IDENTITY,
    INDIRECT,
    TRANSFORMATION,
    ColumnInput,
    Dataset,
    Origin,
    StatementLineage,
    stronger,
)
from airflow_lineage_provider.lineage.plan import lean
from airflow_lineage_provider.lineage.plan import record as raw
from airflow_lineage_provider.lineage.plan.digest import digest

UNKNOWN_NODE_CONFIDENCE = 0.5
_NONE: frozenset = frozenset()
_MASKING, _CONDITIONAL, _GENERATED, _STEPS = lean.MASKING, lean.CONDITIONAL_REF, lean.GENERATED, lean.STEPS
_new = tuple.__new__  # builds an Origin without the Python-level __new__ of a NamedTuple (hot path)


class _Union(tuple):
    """A step that merges several ``(node, exprId)`` sources: the branches of a UNION."""


class _Rows(tuple):
    """A step that merges one expression per kind of output row: an EXPAND."""


class _Loop(tuple):
    """A recursive CTE's reference to itself: ``(anchor node, exprId)`` then the recursion's."""


class PlanResolver:
    """Resolves the columns of one lean plan. Build one per record.

    Spark gives every attribute its own exprId, so the lean plan is indexed once by
    exprId: which nodes define it (compute it, read it from a relation, or map it from
    other exprIds). Passing an attribute through a node then costs nothing, and a wide
    plan is resolved in time linear in its size. An exprId can have several definers:
    a UNION's output shares its first branch's exprIds, and a projection that lists a
    column again defines it again (with the text the user wrote there). The right one
    is the highest at or below the asking node, as children always come before their
    parents.
    """

    def __init__(self, record: dict[str, Any]) -> None:
        self.nodes: list[dict[str, Any]] = record["nodes"]
        self.labels = [Dataset.from_dict(d).label for d in record["datasets"]]
        self.indirect: set[tuple[str, str, str, bool]] = set()
        self._outputs: dict[int, list[int]] = {}
        self._steps: list[dict[int, Any]] = [self._node_steps(node) for node in self.nodes]
        self._results: list[dict[int, frozenset[Origin]]] = [{} for _ in self.nodes]
        self._where: dict[int, Any] = {}
        self._estimates: dict[tuple[int, int], frozenset[Origin]] = {}  # recursive CTEs being iterated
        where = self._where
        for index, steps in enumerate(self._steps):
            again = where.keys() & steps.keys()
            if again:  # defined lower in the plan too: keep every definer, in order
                for eid in again:
                    found = where[eid]
                    where[eid] = found + [index] if type(found) is list else [found, index]
                where.update({eid: index for eid in steps if eid not in again})
            else:
                where.update(dict.fromkeys(steps, index))

    def _node_steps(self, node: dict[str, Any]) -> dict[int, Any]:
        """How a node gets each exprId it defines.

        A step is a relation's column name, a digested expression, a ``(node, exprId)`` it
        is renamed from, a ``_Union`` of those, the ``_Rows`` of an EXPAND, or ``_NONE`` or
        ``None`` (a literal, a value with no source). The first position of a repeated
        exprId wins.
        """
        kind = node["k"]
        if kind == lean.DEF:
            flat = iter(node["d"])
            return dict(zip(flat, flat))  # an exprId with no expression (None) has no source
        output = node["o"]
        if kind == lean.REL:
            return dict(zip(reversed(output), reversed(node["n"])))
        children = node.get("c") or ()
        if kind == lean.REN:
            child = children[0] if children else None
            return {eid: (child, source) if child is not None and source is not None else _NONE
                    for eid, source in zip(reversed(output), reversed(node["r"]))}
        steps: dict[int, Any] = {}
        if kind == lean.MAP:
            child_outputs = [(child, self.outputs(child)) for child in children]
            if len(children) == 1 and len(set(output)) == len(output):  # a CTE reference: a plain rename
                child, cols = child_outputs[0]
                # Spark often keeps the definition's exprIds: those are not renamed, and not defined here.
                return {eid: (child, source) for eid, source in zip(output, cols) if eid != source}
            merge = _Loop if node.get("loop") else _Union
            for position in range(len(output) - 1, -1, -1):
                pairs = [(child, cols[position]) for child, cols in child_outputs if position < len(cols)]
                steps[output[position]] = pairs[0] if len(pairs) == 1 and merge is _Union else merge(pairs)
        elif kind == lean.EXPAND:
            rows = node["rows"]
            for position in range(len(output) - 1, -1, -1):
                steps[output[position]] = _Rows(row[position] for row in rows if position < len(row))
        else:  # CONST
            steps = dict.fromkeys(output, _NONE)
        return steps

    def outputs(self, index: int) -> list[int]:
        """The exprIds node ``index`` outputs, in order."""
        return lean.outputs(self.nodes, index, self._outputs)

    def resolve(self, index: int, eid: int) -> frozenset[Origin]:
        """Source columns of the attribute ``eid`` as node ``index`` outputs it."""
        where = self._where
        while True:
            found = where.get(eid)
            if type(found) is int:
                if found > index:
                    return _NONE
            elif found is None:
                return _NONE
            else:  # several definers: the highest at or below ``index``
                for found in reversed(found):
                    if found <= index:
                        break
                else:
                    return _NONE
            index = found
            step = self._steps[index][eid]
            if type(step) is not tuple or step[0] >= index:
                break
            index, eid = step  # renamed: follow it, nothing to remember
        results = self._results[index]
        result = results.get(eid)
        if result is not None:
            return result
        results[eid] = _NONE  # breaks cycles in malformed plans
        kind = type(step)
        if kind is str:  # a relation's column
            result = frozenset({_new(Origin, (self.labels[self.nodes[index]["ds"]], step, IDENTITY, "", False))})
        elif kind is list:
            result = self.expression(step, index)
        elif kind is _Union:
            result = frozenset().union(*(self.resolve(child, e) for child, e in step))
        elif kind is _Rows:
            result = frozenset().union(*(self.expression(x, index) for x in step))
        elif kind is _Loop:
            result = self._loop(index, eid, step)
        else:
            result = _NONE
        results[eid] = result
        return result

    def _loop(self, index: int, eid: int, step: _Loop) -> frozenset[Origin]:
        """A recursive CTE reading itself: its rows are the anchor's and the recursion's, and the
        recursion reads them again. Start from the anchor's origins and resolve the recursion
        with that estimate, again and again until it reaches nothing new (the sets only grow)."""
        (anchor, anchor_eid), rest = step[0], step[1:]
        last = max((child for child, _ in rest), default=anchor)
        estimate = self.resolve(anchor, anchor_eid)
        while True:
            self._estimates[(index, eid)] = estimate
            # What the recursion resolved depends on the estimate: forget it, but keep every estimate
            # being iterated visible (cleared in place: callers hold these dicts).
            for i in range(anchor + 1, last + 1):
                self._results[i].clear()
            for (i, e), known in self._estimates.items():
                self._results[i][e] = known
            reached = estimate.union(*(self.resolve(child, e) for child, e in rest))
            if reached == estimate:
                break
            estimate = reached
        del self._estimates[(index, eid)]
        return estimate

    def expression(self, expression: list[Any], index: int) -> frozenset[Origin]:
        """Origins of a digested expression of node ``index``; it reads what lies below."""
        text = expression[0]
        below = index - 1
        out: list[Origin] = []
        add = out.append
        flat = iter(expression[1])
        paths = expression[3] if len(expression) > 3 else None
        for position, (eid, code) in enumerate(zip(flat, flat)):
            if code & _CONDITIONAL:
                continue
            subtype = _STEPS[code >> 3]
            masked = code & _MASKING > 0
            copy = subtype == IDENTITY  # a copy keeps the text of what it copies,
            generated = code & _GENERATED  # and so does a column Spark generated (a generator's output)
            path = paths[position] if paths else ""
            for o in self.resolve(below, eid):
                step = o.subtype if copy or o.subtype == subtype else stronger(subtype, o.subtype)
                # A struct field of a column copied as it is: the field is the source, named by its path.
                field = f"{o.field}.{path}" if path and o.subtype == IDENTITY else o.field
                shown = (o.expression or text) if (copy and not path) or generated else text
                add(_new(Origin, (o.table, field, step, shown, o.masking or masked)))
        for scalar, plan in expression[2] if len(expression) > 2 else ():
            if scalar:
                for eid in self.outputs(plan)[:1]:
                    for o in self.resolve(plan, eid):
                        add(_new(Origin, (o.table, o.field, stronger(TRANSFORMATION, o.subtype), text, o.masking)))
        return frozenset(out)

    def _leaf_origin(self, eid: int) -> Origin | None:
        """The relation column ``eid`` names, if any: what a correlated subquery reads from outside."""
        for index in reversed(self._definers(eid)):
            step = self._steps[index][eid]
            if type(step) is str:
                return _new(Origin, (self.labels[self.nodes[index]["ds"]], step, IDENTITY, "", False))
        return None

    def _definers(self, eid: int) -> list[int]:
        found = self._where.get(eid)
        return [] if found is None else [found] if type(found) is int else found

    def note_conditions(self, conds: list[list[Any]], outer: list[int]) -> None:
        """Statement-level indirect inputs: every condition of the plan, and subquery correlations."""
        add = self.indirect.add
        for cond in conds:
            subtype, refs, subs, scope, every = cond[:5]
            paths = cond[5] if len(cond) > 5 else None
            if every:
                for child in scope:
                    for e in self.outputs(child):
                        for o in self.resolve(child, e):
                            add((o.table, o.field, subtype, o.masking))
                continue
            limit = max(scope) if scope else -1
            for position, eid in enumerate(refs):
                path = paths[position] if paths else ""
                for o in self.resolve(limit, eid):
                    add((o.table, f"{o.field}.{path}" if path and o.subtype == IDENTITY else o.field, subtype,
                         o.masking))
            for _, plan in subs:
                for e in self.outputs(plan):
                    for o in self.resolve(plan, e):
                        add((o.table, o.field, subtype, o.masking))
        for eid in outer:
            origin = self._leaf_origin(eid)
            if origin:
                add((origin.table, origin.field, FILTER, origin.masking))

    def indirect_inputs(self) -> list[ColumnInput]:
        return [ColumnInput.make(table, field, INDIRECT, subtype, "", masking)
                for table, field, subtype, masking in self.indirect]


# The key of a lean record's lineage, resolved in the driver (``job/capture.digested``): the hook
# then reads the statement's lineage instead of resolving the plan again.
RESOLVED = "lineage"


def resolved(statement: StatementLineage) -> dict[str, Any]:
    """A statement's lineage as a record keeps it: the document without the SQL, which the record
    holds already (and which is scrubbed of credentials where it is read)."""
    out = statement.to_dict()
    del out["sql"]
    return out


def extract(record: dict[str, Any]) -> StatementLineage:
    """Lineage of one captured record, raw (``record.py``) or already digested (``lean.py``), or already
    resolved in the driver.

    The resolver builds many small acyclic objects; Python's cyclic garbage
    collector would rescan them again and again, so it is paused for the call.
    """
    done = record.get(RESOLVED)
    if done is not None and lean.is_lean(record):
        statement = StatementLineage.from_dict({**done, "index": int(record.get(raw.INDEX, done.get("index", 0))),
                                                "sql": str(record.get(raw.SQL, ""))})
    else:
        paused = gc.isenabled()
        gc.disable()
        try:
            statement = _extract(digest(record))
        finally:
            if paused:
                gc.enable()
    refused = record.get(raw.REFUSED)
    if refused and refused_warning(str(refused)) not in statement.warnings:  # resolved in the driver: has it
        # A dry run's write Spark would not run: the lineage stands, the warning says so.
        statement = replace(statement, warnings=(*statement.warnings, refused_warning(str(refused))))
    return statement


def refused_warning(reason: str) -> str:
    """The warning of a dry run's write that a real run would not get through: Spark's reason."""
    return f"dry run only: a real run of this statement would be refused by Spark ({reason})"


def _extract(record: dict[str, Any]) -> StatementLineage:
    resolver = PlanResolver(record)
    query = record["query"]
    names = record.get("columns")
    columns: list[tuple[str, frozenset[Origin] | tuple[()]]] = []
    for i, (eid, name) in enumerate(zip(resolver.outputs(query), record["names"])):
        target_name = names[i] if names and i < len(names) else name
        columns.append((target_name, resolver.resolve(query, eid)))
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
    return StatementLineage.of(
        index=int(record.get(raw.INDEX, 0)),
        sql=str(record.get(raw.SQL, "")),
        method="plan",
        confidence=UNKNOWN_NODE_CONFIDENCE if warnings else 1.0,
        target=Dataset.from_dict(record["target"]) if record.get("target") else None,
        inputs=datasets.values(),
        columns=columns,
        indirect=resolver.indirect_inputs(),
        warnings=warnings,
    )
