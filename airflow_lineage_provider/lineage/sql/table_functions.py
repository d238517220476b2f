"""SQL table functions (``CREATE FUNCTION f(..) RETURNS TABLE (..) RETURN <query>``) read as their body.

Spark inlines such a function where it is called (``FROM f(10)``, ``LATERAL f(t.x)``): the plan's
lineage is the body's, its parameters bound to the call's arguments and its columns named as the
``RETURNS TABLE`` clause names them. The static extractor does the same to the query before
qualifying it, so a call is a subquery like any other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from sqlglot import exp

_DEPTH = 16  # a function whose body calls functions calls, this deep (a recursive definition stops here)


@dataclass(frozen=True)
class TableFunction:
    """A SQL table function the script defined: parameters (name, default), returned columns, body."""

    params: tuple[tuple[str, exp.Expression | None], ...]
    columns: tuple[str, ...]
    body: exp.Query


def definition(tree: exp.Create) -> TableFunction | None:
    """The table function ``CREATE FUNCTION`` defines, or ``None`` (a scalar function, another form)."""
    udf, body = tree.this, tree.expression
    if not isinstance(udf, exp.UserDefinedFunction) or not isinstance(body, exp.Return):
        return None
    returns = next((p for p in (tree.args.get("properties") or exp.Properties(expressions=[])).expressions
                    if isinstance(p, exp.ReturnsProperty) and p.args.get("is_table")), None)
    if returns is None or not isinstance(returns.this, exp.Schema) or not isinstance(body.this, exp.Query):
        return None
    params = []
    for p in udf.expressions:
        if isinstance(p, exp.ColumnDef):
            default = next((c.args["kind"].this for c in p.args.get("constraints") or []
                            if isinstance(c.args.get("kind"), exp.DefaultColumnConstraint)), None)
            params.append((p.name.lower(), default))
    columns = tuple(c.name for c in returns.this.expressions if isinstance(c, exp.ColumnDef))
    return TableFunction(tuple(params), columns, body.this)


def expand(query: exp.Expression, lookup: Callable[[list[str]], TableFunction | None], depth: int = 0) -> None:
    """Each call of a known table function in ``query`` (``FROM [db.]f(..)``, ``LATERAL f(..)``) replaced by
    its body, in place. ``lookup`` finds a function by its name parts (catalog, db, name)."""
    for node in list(query.find_all(exp.Table, exp.Lateral)):
        call = node.this
        if not isinstance(call, exp.Anonymous):
            continue
        parts = [node.catalog, node.db, call.name] if isinstance(node, exp.Table) else [call.name]
        function = lookup(parts)
        if function is None:
            continue
        body = _bound(function, call.expressions, call.name)
        if depth < _DEPTH:
            expand(body, lookup, depth + 1)
        alias = node.args.get("alias")
        if isinstance(node, exp.Table):
            node.replace(exp.Subquery(this=body, alias=alias or exp.TableAlias(this=exp.to_identifier(call.name))))
        else:
            node.set("this", exp.Subquery(this=body))
            if alias is None:
                node.set("alias", exp.TableAlias(this=exp.to_identifier(call.name)))


def _bound(function: TableFunction, args: list[exp.Expression], name: str) -> exp.Query:
    """A copy of the body, its parameters replaced by the arguments (positional or ``p => v``, else the
    default, else NULL) and its columns named as the function returns them."""
    values: dict[str, exp.Expression] = {p: (d if d is not None else exp.null()) for p, d in function.params}
    for i, arg in enumerate(args):
        if isinstance(arg, exp.Kwarg):
            values[arg.this.name.lower()] = arg.expression
        elif i < len(function.params):
            values[function.params[i][0]] = arg
    body = function.body.copy()
    for column in list(body.find_all(exp.Column)):
        qualifier = column.table.lower()
        if column.name.lower() in values and (not qualifier or qualifier == name.lower()):
            column.replace(values[column.name.lower()].copy())
    first: exp.Expression = body
    while isinstance(first, (exp.SetOperation, exp.Subquery)):
        first = first.this
    if isinstance(first, exp.Select) and len(first.expressions) == len(function.columns) and not any(
            isinstance(p, exp.Star) or (isinstance(p, exp.Column) and isinstance(p.this, exp.Star))
            for p in first.expressions):
        first.set("expressions", [exp.alias_(p.unalias(), c) for p, c in zip(first.expressions, function.columns)])
    return body
