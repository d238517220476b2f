"""What a Spark expression reads, how, and how a person would write it.

``references`` lists the attributes an expression reads with the role each plays
(a value that flows into the result, or a condition that only decides it), and
``render`` prints the expression back as SQL with the user's table aliases,
never Spark's internal ``#id`` suffixes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from airflow_lineage_provider.lineage import functions
from airflow_lineage_provider.lineage.model import AGGREGATION, IDENTITY, TRANSFORMATION, widens
from airflow_lineage_provider.lineage.plan.tree import Tree, scala_seq

AGGREGATE_WRAPPER = "AggregateExpression"
SUBQUERY_EXPRESSIONS = frozenset({"ScalarSubquery", "Exists", "ListQuery", "InSubquery", "LateralSubquery"})

_INFIX = {
    "Add": "+", "Subtract": "-", "Multiply": "*", "Divide": "/", "IntegralDivide": "div",
    "Remainder": "%", "EqualTo": "=", "EqualNullSafe": "<=>", "LessThan": "<",
    "LessThanOrEqual": "<=", "GreaterThan": ">", "GreaterThanOrEqual": ">=", "And": "AND",
    "Or": "OR", "BitwiseAnd": "&", "BitwiseOr": "|", "BitwiseXor": "^", "Like": "LIKE",
    "RLike": "RLIKE", "ILike": "ILIKE",
}


@lru_cache(maxsize=1)
def _function_names() -> dict[str, str]:
    """Expression class -> SQL function name, taken from Spark's function registry."""
    text = resources.files("airflow_lineage_provider.lineage.plan").joinpath("spark_functions.json").read_text()
    return json.loads(text)


def _classes(names: frozenset[str]) -> frozenset[str]:
    """The expression classes of the functions ``names`` (``lineage/functions.py``)."""
    return frozenset(cls for cls, name in _function_names().items() if name in names)


MASKING = _classes(functions.MASKING)
# Window functions whose value comes from the row's position alone: their children are the
# window's order keys, which are indirect (WINDOW) inputs, not values.
RANKING = _classes(functions.RANKING)


@dataclass(frozen=True)
class Reference:
    """An attribute read by an expression: its exprId, and how its value is used."""

    expr_id: int
    name: str
    subtype: str  # IDENTITY, TRANSFORMATION or AGGREGATION
    masking: bool
    conditional: bool  # only decides the result (CASE/IF condition), not part of its value
    path: str = ""  # a struct field read from the attribute: ``city`` of ``info.city``


def expr_id(node: Tree) -> int | None:
    raw = node.fields.get("exprId")
    return raw.get("id") if isinstance(raw, dict) else None


def strip_alias(node: Tree) -> Tree:
    while node.cls == "Alias" and node.children:
        node = node.children[0]
    return node


def is_identity(node: Tree) -> bool:
    """An attribute copied as is: through aliases and casts that only widen a number."""
    node = extracted(strip_alias(node))
    while node.children:
        if node.cls == "GetStructField" and struct_field_name(node):
            pass  # a struct's field, read as it is: the field's own value
        elif node.cls in ("Cast", "AnsiCast", "UpCast"):
            if not _widens(node.children[0], node.fields.get("dataType")):
                return False
        elif not is_char_padding(node):
            break
        node = node.children[0]
    return node.cls in ("AttributeReference", "OuterReference")


def is_char_padding(node: Tree) -> bool:
    """Spark pads a CHAR(n) column when it reads it: the value is still the column's own."""
    return node.cls == "StaticInvoke" and node.fields.get("functionName") in _CHAR_PADDING


_CHAR_PADDING = ("readSidePadding", "charTypeWriteSideCheck", "varcharTypeWriteSideCheck")


def _widens(child: Tree, target: object) -> bool:
    source = child.fields.get("dataType")
    return source == target or widens(source, target)


def references(node: Tree) -> list[Reference]:
    """Every attribute the expression reads, in order of appearance (computed once per node)."""
    cached = node._cache.get("refs")
    if cached is None:
        cached = []
        _collect(node, cached, is_identity(node), agg=False, masking=False, conditional=False)
        node._cache["refs"] = cached
    return cached


def extracted(node: Tree) -> Tree:
    """What a read of a struct's field reads when the struct is made in place: ``named_struct('a', x,
    'b', y).b`` and ``struct(st.*).c`` read ``y`` and ``st.c`` alone (Spark's optimizer says the same);
    any other expression is itself."""
    if node.cls != "GetStructField" or not node.children:
        return node
    made = extracted(strip_alias(node.children[0]))
    ordinal = node.fields.get("ordinal")
    if made.cls == "CreateNamedStruct" and isinstance(ordinal, int) and 0 <= 2 * ordinal + 1 < len(made.children):
        # A CTAS's query names the values of ``struct(st.*)`` with aliases (``st.a AS a``).
        return extracted(strip_alias(made.children[2 * ordinal + 1]))
    return node


def _collect(node: Tree, out: list[Reference], identity: bool, agg: bool, masking: bool, conditional: bool) -> None:
    cls = node.cls
    if cls == "GetStructField":
        node = extracted(node)
        cls = node.cls
    if cls in ("AttributeReference", "OuterReference"):
        target = _outer_target(node) if cls == "OuterReference" else node
        eid = expr_id(target) if target is not None else None
        if eid is not None:
            subtype = AGGREGATION if agg else (IDENTITY if identity else TRANSFORMATION)
            out.append(Reference(eid, str(target.fields.get("name")), subtype, masking, conditional))
        return
    if cls == "GetStructField":
        path, base = field_path(node)
        if path and base.cls == "AttributeReference":
            eid = expr_id(base)
            if eid is not None:
                subtype = AGGREGATION if agg else (IDENTITY if identity else TRANSFORMATION)
                out.append(Reference(eid, str(base.fields.get("name")), subtype, masking, conditional, path))
                return
    if (cls in SUBQUERY_EXPRESSIONS and cls != "InSubquery") or cls in RANKING:
        return  # a subquery's children are its outer references: the plan resolver handles both
    if cls == AGGREGATE_WRAPPER:
        agg = True
    if cls in MASKING:
        masking = True
    kids = node.children
    if cls == "WindowExpression":
        if kids:  # the window spec's keys are indirect inputs of the Window node
            _collect(kids[0], out, identity, agg, masking, conditional)
        return
    if cls == "CaseWhen":
        branches = len(kids) // 2
        for i, kid in enumerate(kids):
            _collect(kid, out, identity, agg, masking, conditional or (i < 2 * branches and i % 2 == 0))
        return
    if cls == "PivotFirst" and kids:
        # The pivot column only decides which output column a value lands in.
        _collect(kids[0], out, identity, agg, masking, True)
        for kid in kids[1:]:
            _collect(kid, out, identity, agg, masking, conditional)
        return
    if cls == "If" and len(kids) == 3:
        _collect(kids[0], out, identity, agg, masking, True)
        _collect(kids[1], out, identity, agg, masking, conditional)
        _collect(kids[2], out, identity, agg, masking, conditional)
        return
    if cls == AGGREGATE_WRAPPER and node.fields.get("filter") is not None and len(kids) > 1:
        _collect(kids[0], out, identity, agg, masking, conditional)
        for kid in kids[1:]:
            _collect(kid, out, identity, agg, masking, True)
        return
    for kid in kids:
        _collect(kid, out, identity, agg, masking, conditional)


def field_path(node: Tree) -> tuple[str, Tree]:
    """``("geo.lat", info)`` for ``info.geo.lat``: the struct fields a chain of field reads names,
    and what it reads them from; ``""`` when a field has no name (read by position)."""
    names: list[str] = []
    while node.cls == "GetStructField" and node.children:
        name = struct_field_name(node)
        if not name:
            return "", node
        names.append(str(name))
        node = node.children[0]
    return ".".join(reversed(names)), node


def struct_field_name(node: Tree) -> str | None:
    """The name of the field a ``GetStructField`` reads. Spark leaves it out where it expanded
    ``info.*`` itself: then it is the struct type's field at the node's ordinal."""
    name = node.fields.get("name")
    if name:
        return str(name)
    fields = _struct_fields(node.children[0]) if node.children else None
    ordinal = node.fields.get("ordinal")
    if fields and isinstance(ordinal, int) and 0 <= ordinal < len(fields) and isinstance(fields[ordinal], dict):
        return str(fields[ordinal].get("name") or "") or None
    return None


def _struct_fields(node: Tree) -> list[Any] | None:
    """The fields of the struct an expression gives: from an attribute's type, or the field of a
    struct read from one."""
    if node.cls == "GetStructField" and node.children:
        fields = _struct_fields(node.children[0])
        ordinal = node.fields.get("ordinal")
        if fields and isinstance(ordinal, int) and 0 <= ordinal < len(fields) and isinstance(fields[ordinal], dict):
            node_type = fields[ordinal].get("type")
            return node_type.get("fields") if isinstance(node_type, dict) else None
        return None
    data_type = node.fields.get("dataType")
    return data_type.get("fields") if isinstance(data_type, dict) else None


def _outer_target(node: Tree) -> Tree | None:
    """The attribute an ``OuterReference`` points at (held in its field ``e``)."""
    return node.expr("e") or (node.children[0] if node.children else None)


def subqueries(node: Tree) -> list[Tree]:
    """Subquery expressions inside ``node``; their plans live in a field, not as children."""
    cached = node._cache.get("subqueries")
    if cached is None:
        cached = node._cache["subqueries"] = [n for n in node.walk() if n.cls in SUBQUERY_EXPRESSIONS]
    return cached


def is_generated(name: str) -> bool:
    """Names Spark makes up for its own attributes (pivot, auto subquery aliases)."""
    return name.startswith("__") or "__auto_generated_subquery_name" in name


def render(node: Tree) -> str:
    """The expression as SQL, attributes named ``alias.column`` as the user wrote them."""
    cls = node.cls
    f = node.fields
    kids = node.children
    if cls == "Alias":
        return render(kids[0]) if kids else str(f.get("name"))
    if is_char_padding(node) and kids:
        return render(kids[0])
    if cls == "AttributeReference":
        qualifier = [q for q in scala_seq(f.get("qualifier")) if not is_generated(q)]
        name = _ident(str(f.get("name")))
        return f"{_ident(qualifier[-1])}.{name}" if qualifier else name
    if cls == "OuterReference":
        target = _outer_target(node)
        return render(target) if target is not None else "outer"
    if cls == "Literal":
        return _literal(f.get("value"), f.get("dataType"))
    if cls in _INFIX and len(kids) == 2:
        return f"({render(kids[0])} {_INFIX[cls]} {render(kids[1])})"
    if cls == "Not" and len(kids) == 1:
        return f"(NOT {render(kids[0])})"
    if cls == "UnaryMinus" and len(kids) == 1:
        return f"(- {render(kids[0])})"
    if cls == "IsNull" and kids:
        return f"({render(kids[0])} IS NULL)"
    if cls == "IsNotNull" and kids:
        return f"({render(kids[0])} IS NOT NULL)"
    if cls in ("Cast", "AnsiCast", "UpCast") and kids and kids[0].cls in ("Literal", "VariableReference"):
        return render(kids[0])  # Spark's implicit cast of a constant: not what the user wrote
    if cls in ("Cast", "AnsiCast", "UpCast", "TryCast") and kids:
        word = "try_cast" if cls == "TryCast" or f.get("evalMode") == "TRY" else "CAST"
        return f"{word}({render(kids[0])} AS {type_sql(f.get('dataType'))})"
    if cls == "In" and kids:
        return f"({render(kids[0])} IN ({', '.join(render(k) for k in kids[1:])}))"
    if cls == "InSet" and kids:
        return f"({render(kids[0])} IN (...))"
    if cls == "CaseWhen":
        parts = ["CASE"]
        branches = len(kids) // 2
        for i in range(branches):
            parts.append(f"WHEN {render(kids[2 * i])} THEN {render(kids[2 * i + 1])}")
        if len(kids) % 2:
            parts.append(f"ELSE {render(kids[-1])}")
        parts.append("END")
        return " ".join(parts)
    if cls == AGGREGATE_WRAPPER and kids:
        inner = render(kids[0])
        if f.get("isDistinct") and "(" in inner:
            head, _, rest = inner.partition("(")
            inner = f"{head}(DISTINCT {rest}"
        if f.get("filter") is not None and len(kids) > 1:
            inner += f" FILTER (WHERE {render(kids[1])})"
        return inner
    if cls == "WindowExpression" and kids:
        spec = render(kids[1]) if len(kids) > 1 else ""
        return f"{render(kids[0])} OVER ({spec})"
    if cls == "WindowSpecDefinition":
        return _window_spec(node)
    if cls == "SortOrder" and kids:
        direction = (f.get("direction") or {}).get("object", "")
        return render(kids[0]) + (" DESC" if "Descending" in str(direction) else "")
    if cls in SUBQUERY_EXPRESSIONS:
        if cls == "InSubquery" and kids:
            return f"({render(kids[0])} IN (subquery))"
        if cls == "ScalarSubquery":
            return f"(SELECT {_subquery_select(node)} ...)"
        return "EXISTS (subquery)" if cls == "Exists" else "(subquery)"
    if cls in ("PythonUDF", "PythonUDAF", "ScalaUDF") and (f.get("name") or f.get("udfName")):
        return f"{f.get('name') or f.get('udfName')}({', '.join(render(k) for k in kids)})"
    if cls == "SQLScalarFunction":
        return _sql_function(node)
    if cls == "NamedLambdaVariable":
        return _ident(str(f.get("name")))
    if cls == "LambdaFunction" and kids:
        return _lambda(node)
    if cls == "GetStructField" and kids:
        name = struct_field_name(node)
        return f"{render(kids[0])}.{_ident(str(name))}" if name else f"{render(kids[0])}[{f.get('ordinal')}]"
    if cls == "GetArrayStructFields" and kids:
        name = (f.get("field") or {}).get("name") if isinstance(f.get("field"), dict) else None
        return f"{render(kids[0])}.{_ident(str(name))}" if name else f"{render(kids[0])}[{f.get('ordinal')}]"
    if cls in ("GetArrayItem", "GetMapValue") and len(kids) == 2:
        return f"{render(kids[0])}[{render(kids[1])}]"
    if cls == "VariableReference":
        return ".".join(_ident(p) for p in scala_seq(f.get("originalNameParts"))) or "variable"
    if cls in ("Count",) and not kids:
        return "count(*)"
    if cls == "Count" and len(kids) == 1 and kids[0].cls == "Literal" and kids[0].fields.get("value") == "1":
        return "count(*)"
    # A lambda Spark adds on its own (aggregate's finish) is not in the SQL: left out.
    shown = [k for k in kids if not (k.cls == "LambdaFunction" and k.fields.get("hidden"))]
    return f"{_function_name(cls)}({', '.join(render(k) for k in shown)})"


def _sql_function(node: Tree) -> str:
    """A SQL function (``CREATE FUNCTION f(x) RETURN ...``) by its name and parameters: Spark's JSON
    drops the function, but its parameters are qualified by its name (``f.x``)."""
    inputs = node.exprs("inputs")
    qualifier = scala_seq(inputs[0].fields.get("qualifier")) if inputs else []
    name = qualifier[-1] if qualifier else "sql_function"
    return f"{_ident(name)}({', '.join(_ident(str(i.fields.get('name'))) for i in inputs)})"


def _lambda(node: Tree) -> str:
    """``x -> body`` or ``(acc, x) -> body``: the fields hold the indexes of its children."""
    kids = node.children
    body = node.fields.get("function", 0)
    arguments = node.fields.get("arguments")
    positions = [i for i in arguments if isinstance(i, int)] if isinstance(arguments, list) else range(1, len(kids))
    names = [render(kids[i]) for i in positions if i < len(kids)]
    params = names[0] if len(names) == 1 else f"({', '.join(names)})"
    return f"{params} -> {render(kids[body if isinstance(body, int) and body < len(kids) else 0])}"


def _subquery_select(node: Tree) -> str:
    plan = node.plan("plan")
    while plan is not None:
        for name in ("projectList", "aggregateExpressions"):
            items = plan.exprs(name) if name in plan.fields else []
            if items:
                return render(items[0])
        plan = plan.children[0] if plan.children else None
    return "..."


def _window_spec(node: Tree) -> str:
    """``PARTITION BY .. ORDER BY ..``: the spec's fields hold indexes of its children."""
    kids = node.children
    partition = [kids[i] for i in node.fields.get("partitionSpec") or [] if isinstance(i, int) and i < len(kids)]
    order = [kids[i] for i in node.fields.get("orderSpec") or [] if isinstance(i, int) and i < len(kids)]
    parts = []
    if partition:
        parts.append("PARTITION BY " + ", ".join(render(p) for p in partition))
    if order:
        parts.append("ORDER BY " + ", ".join(render(o) for o in order))
    return " ".join(parts)


def _function_name(cls: str) -> str:
    name = _function_names().get(cls)
    if name:
        return name
    for suffix in ("Expression", "Class"):
        if cls.endswith(suffix) and len(cls) > len(suffix):
            cls = cls[: -len(suffix)]
    return cls.lower()


def _ident(name: str) -> str:
    return name if name.replace("_", "a").isalnum() and not name[:1].isdigit() else f"`{name.replace('`', '``')}`"


def _literal(value: object, data_type: object) -> str:
    if value is None:
        return "NULL"
    if data_type == "string":
        return "'" + str(value).replace("\\", "\\\\").replace("'", "\\'") + "'"
    if data_type == "boolean":
        return str(value).lower()
    if data_type in ("integer", "double", "float") or str(data_type).startswith("decimal"):
        return str(value)
    if data_type == "long":
        return f"{value}L"
    if data_type in ("date", "timestamp", "timestamp_ntz"):
        return f"{str(data_type).split('_')[0].upper()} '{value}'"
    return str(value)


def type_sql(data_type: object) -> str:
    """Spark's JSON name of a type as SQL writes it (``long`` -> ``BIGINT``)."""
    if isinstance(data_type, str):
        return {"long": "BIGINT", "integer": "INT", "short": "SMALLINT", "byte": "TINYINT"}.get(
            data_type, data_type.upper()
        )
    if isinstance(data_type, dict):
        return str(data_type.get("type", "STRUCT")).upper()
    return str(data_type)
