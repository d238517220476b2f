"""The role a column plays inside an expression: a value (identity, transformation, aggregation,
masked or not) or a condition that only decides the value (CASE/IF, FILTER).

Function roles come from ``lineage/functions.py``, the one table both extractors read.
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

from sqlglot import exp

from airflow_lineage_provider.lineage import functions
from airflow_lineage_provider.lineage.model import AGGREGATION, IDENTITY, TRANSFORMATION

# Window functions sqlglot types as aggregates that Spark does not wrap in an aggregate.
NOT_AGGREGATE = functions.OFFSET_WINDOW | functions.RANKING


class Ref(NamedTuple):
    """A column an expression reads, with its role there."""

    column: exp.Column
    subtype: str
    masking: bool
    conditional: bool
    path: str = ""  # a struct field read from the column: ``city`` of ``info.city``


# ``_ref((column, subtype, masking, conditional, path))``: a Ref made in C (``model.origin``'s reason).
_ref = partial(tuple.__new__, Ref)


def field_path(node: exp.Expression) -> tuple[str, exp.Expression]:
    """``("geo.lat", info)`` for ``info.geo.lat`` (sqlglot's ``Dot`` chain over a column); ``""`` and
    the node itself for anything else."""
    names: list[str] = []
    base = node
    while type(base) is exp.Dot and isinstance(base.expression, exp.Identifier):
        names.append(base.expression.name)
        base = base.this
    if names and type(base) is exp.Column and not isinstance(base.this, exp.Star):
        return ".".join(reversed(names)), base
    return "", node


# What ``collect_refs`` does with a node, by its class (worked out once per class: ``isinstance`` on
# sqlglot's deep class tree was a tenth of the static extractor's own time). Numbered so that one test
# tells the classes apart: ``_OTHER`` (0, an operator or a function over its arguments: most nodes) goes
# to its arguments at once, the conditionals (up to ``_FILTER``) after a function's checks, the others
# (above ``_FILTER``) first.
(_OTHER, _CASE, _IF, _NULLIF, _DECODE, _FILTER,
 _COLUMN, _LEAF, _QUERY, _DOT, _SUBQUERY, _IN, _WINDOW, _WITHIN) = range(14)
_KINDS: dict[type, tuple[int, bool, bool, bool, bool]] = {}
_EXPR = exp.Expr  # looked up once: read for every argument of every node


def _kind(cls: type) -> tuple[int, bool, bool, bool, bool]:
    """(what it is, a function?, an aggregate class?, anonymous?, a masking class?)"""
    found = _KINDS.get(cls)
    if found is None:
        category = (_COLUMN if issubclass(cls, exp.Column) else
                    _LEAF if issubclass(cls, exp.Literal) else
                    _SUBQUERY if issubclass(cls, exp.Subquery) else
                    _QUERY if issubclass(cls, (exp.Select, exp.SetOperation, exp.Exists)) else
                    _IN if issubclass(cls, exp.In) else
                    _WINDOW if issubclass(cls, exp.Window) else
                    _CASE if issubclass(cls, exp.Case) else
                    _IF if issubclass(cls, (exp.If, exp.Nvl2)) else
                    _FILTER if issubclass(cls, exp.Filter) else
                    _NULLIF if issubclass(cls, exp.Nullif) else
                    _DECODE if issubclass(cls, exp.DecodeCase) else
                    _DOT if cls is exp.Dot else  # the class itself, as ``field_path`` reads a chain
                    _WITHIN if cls is exp.WithinGroup else _OTHER)
        found = _KINDS[cls] = (category, issubclass(cls, exp.Func), issubclass(cls, exp.AggFunc),
                               issubclass(cls, exp.Anonymous),
                               issubclass(cls, (exp.MD5, exp.SHA, exp.SHA2, exp.Count, exp.ApproxDistinct)))
    return found


def collect_refs(node: exp.Expression, refs: list[Ref], subs: list[exp.Expression], identity: bool, agg: bool,
             masking: bool, conditional: bool) -> None:
    """Column references of an expression with their role; scalar subqueries and windows go to ``subs``."""
    category, func, aggregate_class, anonymous, masking_class = _KINDS.get(type(node)) or _kind(type(node))
    if category == _COLUMN:
        if not isinstance(node.this, exp.Star):
            subtype = AGGREGATION if agg else (IDENTITY if identity else TRANSFORMATION)
            refs.append(_ref((node, subtype, masking, conditional, "")))
        return
    if category > _FILTER:  # what is read otherwise than as its arguments; some go on to them (below)
        if category == _LEAF:  # a literal reads nothing
            return
        if category == _QUERY:
            if type(node) is not exp.Exists or not isinstance(node.expression, exp.Lambda):
                return  # a nested query is its own scope
            # else exists(array, x -> ...): the higher-order function, not the EXISTS predicate
        elif category == _DOT:
            path, base = field_path(node)
            if path:
                subtype = AGGREGATION if agg else (IDENTITY if identity else TRANSFORMATION)
                refs.append(_ref((base, subtype, masking, conditional, path)))
                return
        elif category == _SUBQUERY:
            subs.append(node)
            return
        elif category == _IN:
            if node.args.get("query") is not None:
                collect_refs(node.this, refs, subs, identity, agg, masking, conditional)
                return
        elif category == _WINDOW:
            subs.append(node)  # its keys are indirect inputs (``note_projection``)
            fn = node.this
            if fn is not None and _fname(fn) not in functions.RANKING:
                collect_refs(fn, refs, subs, identity, agg, masking, conditional)
            return
        else:  # percentile_cont(0.5) WITHIN GROUP (ORDER BY x): x is aggregated
            agg = True
    if func:
        name = _fname(node)
        if name in functions.RANKING or name in functions.GROUPING:
            return
        if (aggregate_class and name not in NOT_AGGREGATE) or (anonymous and name in functions.AGGREGATES):
            agg = True
        if masking_class or name in functions.MASKING:
            masking = True
    if category and category <= _FILTER:
        if category == _CASE:
            if node.this is not None:
                collect_refs(node.this, refs, subs, identity, agg, masking, True)
            for branch in node.args.get("ifs") or []:
                collect_refs(branch.this, refs, subs, identity, agg, masking, True)
                if branch.args.get("true") is not None:
                    collect_refs(branch.args["true"], refs, subs, identity, agg, masking, conditional)
            if node.args.get("default") is not None:
                collect_refs(node.args["default"], refs, subs, identity, agg, masking, conditional)
        elif category == _IF:
            collect_refs(node.this, refs, subs, identity, agg, masking, True)
            for key in ("true", "false"):
                if node.args.get(key) is not None:
                    collect_refs(node.args[key], refs, subs, identity, agg, masking, conditional)
        elif category == _NULLIF:  # nullif(a, b): a, or NULL where a = b; b only decides (as the plan reads it)
            collect_refs(node.this, refs, subs, identity, agg, masking, conditional)
            collect_refs(node.expression, refs, subs, identity, agg, masking, True)
        elif category == _DECODE:  # decode(x, s1, r1, .., default): CASE WHEN x = s1 THEN r1 ..: x and the s decide
            items = node.expressions
            for i, item in enumerate(items):
                decides = i == 0 or (i % 2 == 1 and i + 1 < len(items))
                collect_refs(item, refs, subs, identity, agg, masking, True if decides else conditional)
        else:  # FILTER (WHERE ..): the condition only decides
            collect_refs(node.this, refs, subs, identity, agg, masking, conditional)
            if node.expression is not None:
                collect_refs(node.expression, refs, subs, identity, agg, masking, True)
        return
    for value in node.args.values():  # ``iter_expressions``, without its compiled generator's cost per child
        if type(value) is list:
            for child in value:
                if isinstance(child, _EXPR):
                    collect_refs(child, refs, subs, identity, agg, masking, conditional)
        elif isinstance(value, _EXPR):
            collect_refs(value, refs, subs, identity, agg, masking, conditional)


def _fname(node: exp.Expression) -> str:
    kind = type(node)
    name = _FUNCTION_NAMES.get(kind)  # never an anonymous call's class: its name is the call's own
    if name is None:  # a function's name is its class's: worked out once per class
        if isinstance(node, exp.Anonymous):
            return str(node.name).lower()
        try:
            name = node.sql_name().lower()
        except Exception:  # noqa: BLE001 - not a function: its key names it
            name = node.key
        _FUNCTION_NAMES[kind] = name
    return name


_FUNCTION_NAMES: dict[type, str] = {}
function_name = _fname  # Spark's name of a function (``posexplode_outer``; sqlglot's key drops the underscore)


def norm_type(text: str | None) -> str | None:
    """A SQL type in one spelling (``long`` and ``bigint`` alike), so that a cast is compared with the
    column's declared type to tell a widening copy (IDENTITY) from a transformation."""
    if not text:
        return None
    t = text.lower().replace(" ", "")
    return _TYPE_SPELLINGS.get(t, t)


_TYPE_SPELLINGS = {"integer": "int", "long": "bigint", "short": "smallint", "byte": "tinyint", "string": "text",
                   "varchar": "text"}
