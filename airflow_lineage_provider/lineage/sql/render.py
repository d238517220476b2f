"""Walking sqlglot trees and writing them back as SQL: expression texts and Spark's column names.

The texts are what a person reads in the document (``concat(a.name, b.company_name)``); an
unnamed output column gets the name Spark gives it (``(a + b)``), so that both extractors
name targets alike.
"""

from __future__ import annotations

import re
import threading
from typing import Any

import sqlglot
from sqlglot import exp

DIALECT = "spark"
# Spark's dialect, looked up once: every parse, normalization and generator of the extractor uses it.
SPARK_DIALECT = sqlglot.Dialect.get_or_raise(DIALECT)


class _Generators(threading.local):
    """Two generators per thread: built per call, they cost more than the text they write, and a
    generator keeps state while it writes. (Instances, not subclasses: sqlglot's compiled build,
    sqlglotc, cannot be subclassed.)"""

    def __init__(self) -> None:
        self.plain = SPARK_DIALECT.generator()
        self.lower = SPARK_DIALECT.generator(normalize_functions="lower")


_GENERATORS = _Generators()


class Finder:
    """A pre-order walk returning the nodes of some classes, entering none of ``pruned``.

    What sqlglot's depth-first ``walk`` with a ``prune`` yields, filtered, at a third of the cost
    of ``find_all``: its compiled generator visits a node slower than this plain loop does, and
    most of a static extraction's own walks (conditions, the table walk before qualify,
    rendering) were spent in it.
    """

    def __init__(self, found: tuple[type, ...], pruned: tuple[type, ...] = ()) -> None:
        self.found = found
        self.pruned = pruned
        self.codes: dict[type, int] = {}  # per class: 1 returned, 2 not entered

    def __call__(self, root: exp.Expression) -> list[Any]:
        out: list[Any] = []
        codes = self.codes
        stack = [root]
        pop = stack.pop
        push = stack.append
        expression = exp.Expr
        while stack:
            node = pop()
            cls = type(node)
            code = codes.get(cls)
            if code is None:
                code = codes[cls] = issubclass(cls, self.found) | issubclass(cls, self.pruned) << 1
            if code & 1:
                out.append(node)
                if code & 2:
                    continue
            elif code:
                continue
            for value in reversed(node.args.values()):
                if type(value) is list:
                    for item in reversed(value):
                        if isinstance(item, expression):
                            push(item)
                elif isinstance(value, expression):
                    push(value)
        return out


def render(node: exp.Expression) -> str:
    """The expression as written against the query's aliases, every binary operator in parentheses
    as the plan extractor writes them; call once resolution is done."""
    if isinstance(node, exp.Column):
        return plain_sql(node)
    # Wrap binary operations in parentheses in place (no copy of the tree), then unwrap.
    wrapped: list[tuple[exp.Paren, exp.Expression]] = []
    for b in _BINARIES(node):
        if b is node or isinstance(b, exp.Dot) or isinstance(b.parent, exp.Paren):
            continue
        paren = exp.Paren()
        b.replace(paren)
        paren.set("this", b)
        wrapped.append((paren, b))
    try:
        text = _GENERATORS.lower.generate(node, copy=False)
        wrap = isinstance(node, exp.Binary) and not isinstance(node, exp.Dot) and not isinstance(node.parent, exp.Paren)
        return f"({text})" if wrap else text
    finally:
        for paren, b in reversed(wrapped):
            paren.replace(b)


_BINARIES = Finder((exp.Binary,), (exp.Column, exp.Literal))


def plain_sql(node: exp.Expression) -> str:
    """``node.sql("spark")`` without the copy of the tree that ``sql()`` makes first."""
    return _GENERATORS.plain.generate(node, copy=False)


def spark_name(node: exp.Expression, sql: str = "") -> str:
    """The name Spark gives an unnamed output column: its SQL without qualifiers, strings unquoted."""
    copy = _pretty(node.copy(), sql.lower())
    text = _GENERATORS.lower.generate(copy, copy=False)
    return re.sub(r"DECIMAL\((\d+), (\d+)\)", r"DECIMAL(\1,\2)", text)


def _pretty(n: exp.Expression, sql: str) -> exp.Expression:
    if isinstance(n, exp.Column):
        return exp.column(n.this.copy()) if n.table else n
    if isinstance(n, exp.Literal) and n.is_string:
        return exp.Var(this=n.this)  # as written, unquoted; ``''`` too (exp.var refuses an empty name)
    if isinstance(n, exp.Paren):  # Spark has no parentheses node: ``(a + b)`` is the addition's own name
        return _pretty(n.this, sql)
    if isinstance(n, exp.Count) and isinstance(n.this, exp.Star):
        return exp.Anonymous(this="count", expressions=[exp.Literal.number(1)])
    for key, value in list(n.args.items()):
        if isinstance(value, exp.Expression):
            n.set(key, _pretty(value, sql))
        elif isinstance(value, list):
            n.set(key, [_pretty(v, sql) if isinstance(v, exp.Expression) else v for v in value])
    if isinstance(n, exp.Substring) and "substring(" not in sql:
        return exp.Anonymous(this="substr", expressions=[a for a in (n.this, n.args.get("start"), n.args.get("length"))
                                                         if a is not None])
    if isinstance(n, exp.DPipe):  # Spark names ``a || b`` as the call it makes of it
        return exp.Anonymous(this="concat", expressions=[n.this, n.expression])
    if isinstance(n, exp.Binary) and not isinstance(n, exp.Dot):
        return exp.Paren(this=n)
    return n
