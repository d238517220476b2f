"""MERGE INTO, UPDATE and DELETE FROM read as one query over the target and the source.

The plan extractor's rule (``lineage/plan/rowlevel.py``) holds here too: each target column's
sources are the values the clauses that write rows give it (a column an UPDATE clause leaves as
it is keeps the target's own value; an INSERT clause's column left out is NULL; a DELETE writes
nothing), the ON condition is a JOIN input, WHEN conditions CONDITIONAL, an UPDATE's or DELETE's
WHERE a FILTER. Rather than resolve clauses on their own, the statement is rewritten into a
SELECT the resolver already reads: ``FROM target JOIN source ON ...`` (or ``FROM target WHERE
...``), one projection per value a clause gives a column, and one ``CASE WHEN condition`` per
WHEN condition (so that its columns are CONDITIONAL inputs). The projections are then gathered
back per target column.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

MODES = {exp.Merge: "merge", exp.Update: "update", exp.Delete: "delete"}
_WITH = "with_" if "with_" in exp.Select.arg_types else "with"


@dataclass(frozen=True)
class RowLevelQuery:
    """The query a row-level statement reads as, and which target column each projection feeds."""

    query: exp.Select
    feeds: dict[str, str]  # projection alias -> target column
    columns: list[str]  # the target columns some clause writes, in the table's order
    warnings: list[str]


def rewrite(statement: exp.Expression, target_columns: list[str] | None) -> RowLevelQuery:
    """``statement`` (a MERGE, UPDATE or DELETE) as a query. ``target_columns``: the target table's
    columns, when its schema is known (UPDATE clauses keep, and ``*`` sets, every column)."""
    target = statement.this
    projections: list[exp.Expression] = []
    feeds: dict[str, str] = {}
    written: set[str] = set()
    warnings: list[str] = []
    columns = list(target_columns or [])
    target_name = target.alias_or_name if isinstance(target, exp.Table) else ""

    def feed(column: str, value: exp.Expression) -> None:
        alias = f"__value_{len(projections)}"
        projections.append(exp.alias_(value.copy(), alias))
        feeds[alias] = column
        written.add(column.lower())

    def clause(values: dict[str, exp.Expression], keeps: bool) -> None:
        for column, value in values.items():
            feed(column, value)
        if keeps:
            if not columns:
                warnings.append("no schema for the target: the columns a clause leaves as they are are unknown")
            for column in columns:
                if column.lower() not in {c.lower() for c in values}:
                    feed(column, exp.column(column, table=target_name))

    if isinstance(statement, exp.Update):
        clause(_assignments(statement.expressions), keeps=True)
        query = exp.select(*projections or [exp.alias_(exp.Literal.number(1), "__none")]).from_(target.copy())
        if statement.args.get("where") is not None:
            query = query.where(statement.args["where"].this.copy())
    elif isinstance(statement, exp.Delete):
        query = exp.select(exp.alias_(exp.Literal.number(1), "__none")).from_(target.copy())
        if statement.args.get("where") is not None:
            query = query.where(statement.args["where"].this.copy())
    else:
        source = statement.args.get("using")
        source_name = source.alias_or_name if source is not None else ""
        conditions: list[exp.Expression] = []
        whens = statement.args.get("whens")
        for when in whens.expressions if whens is not None else []:
            # A NOT MATCHED clause sees the source's row alone, a NOT MATCHED BY SOURCE one the target's.
            side = "" if when.args.get("matched") else (target_name if when.args.get("source") else source_name)
            if when.args.get("condition") is not None:
                conditions.append(_read_from(when.args["condition"], side))
            then = when.args.get("then")
            if isinstance(then, exp.Update):
                if any(isinstance(e, exp.Star) for e in then.expressions):
                    clause({c: exp.column(c, table=source_name) for c in columns}, keeps=False)
                else:
                    assigned = _assignments(then.expressions)
                    clause({c: _read_from(v, side) for c, v in assigned.items()}, keeps=True)
            elif isinstance(then, exp.Insert):
                if isinstance(then.this, exp.Star):
                    clause({c: exp.column(c, table=source_name) for c in columns}, keeps=False)
                else:
                    names = [c.name for c in then.this.expressions] if isinstance(then.this, exp.Tuple) else columns
                    values = then.expression.expressions if isinstance(then.expression, exp.Tuple) else []
                    clause({n: _read_from(v, side) for n, v in zip(names, values)}, keeps=False)
            # A DELETE writes no value.
        if not columns and any(feeds):
            columns = list(dict.fromkeys(feeds.values()))
        for condition in conditions:  # read as a CASE condition: its columns are CONDITIONAL inputs
            projections.append(exp.alias_(exp.Case(ifs=[exp.If(this=condition.copy(), true=exp.null())]),
                                          f"__when_{len(projections)}"))
        query = exp.select(*projections or [exp.alias_(exp.Literal.number(1), "__none")]).from_(target.copy())
        if source is not None:
            query = query.join(source.copy(), on=statement.args["on"].copy() if statement.args.get("on") else None)
        if statement.args.get(_WITH) is not None:
            query.set(_WITH, statement.args[_WITH].copy())
    if not columns:
        columns = list(dict.fromkeys(feeds.values()))
    return RowLevelQuery(query, feeds, [c for c in columns if c.lower() in written], warnings)


def _read_from(value: exp.Expression, side: str) -> exp.Expression:
    """``value`` with its unqualified columns qualified by ``side``, the one relation its clause sees
    (the rewritten query joins both, where a name both have would be ambiguous). Columns of a nested
    query or lambda are theirs to resolve."""
    if not side:
        return value
    value = value.copy()
    for column in list(value.find_all(exp.Column)):
        if not column.table and not isinstance(column.this, exp.Star) and column.find_ancestor(
                exp.Select, exp.Lambda) is None:
            column.set("table", exp.to_identifier(side))
    return value


def _assignments(items: list[exp.Expression]) -> dict[str, exp.Expression]:
    """``SET a = x, b = y``: the value of each column (a nested field sets its top column)."""
    out: dict[str, exp.Expression] = {}
    for item in items:
        if isinstance(item, exp.EQ) and isinstance(item.this, (exp.Column, exp.Dot)):
            key = item.this
            while isinstance(key, exp.Dot):
                key = key.this
            out[key.name] = item.expression
    return out
