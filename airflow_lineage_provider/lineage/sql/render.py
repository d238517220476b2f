"""Walking sqlglot trees and writing them back as SQL: expression texts and Spark's column names.

The texts are what a person reads in the document (``concat(a.name, b.company_name)``); an
unnamed output column gets the name Spark gives it (``(a + b)``), so that both extractors
name targets alike.
"""

from __future__ import annotations

import re
import threading
from decimal import Decimal
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError
from sqlglot.tokens import Token

from airflow_lineage_provider.lineage import functions

DIALECT = "spark"
# Spark's dialect, looked up once: every parse, normalization and generator of the extractor uses it.
SPARK_DIALECT = sqlglot.Dialect.get_or_raise(DIALECT)


def _with_null_handling(kind: type[exp.Expression]) -> Any:
    """``first_value(x, false)``, ``last_value(x, true)``: Spark's second argument says whether nulls are
    ignored. sqlglot reads ``true`` but refuses ``false`` (two arguments for a one-argument class); both
    are read here, as ``IGNORE NULLS`` / ``RESPECT NULLS`` (the name Spark gives is the call's alone)."""
    def build(args: list[exp.Expression]) -> exp.Expression:
        this = kind(this=args[0] if args else None)
        if len(args) < 2:
            return this
        return exp.IgnoreNulls(this=this) if args[1] == exp.true() else exp.RespectNulls(this=this)

    return build


for _name, _kind in (("FIRST_VALUE", exp.FirstValue), ("LAST_VALUE", exp.LastValue)):
    SPARK_DIALECT.parser_class.FUNCTIONS[_name] = _with_null_handling(_kind)

def _distinct_pair(kind: type[exp.Expression], build: Any) -> Any:
    """``corr(DISTINCT x, y)``: sqlglot reads DISTINCT's arguments as one (``Distinct(x, y)``) and then misses
    the second of a two-argument aggregate; read as Spark does, the first argument distinct."""
    def parse(args: list[exp.Expression]) -> exp.Expression:
        if len(args) == 1 and isinstance(args[0], exp.Distinct) and len(args[0].expressions) == 2:
            first, second = args[0].expressions
            return kind(this=exp.Distinct(expressions=[first]), expression=second)
        return build(args)

    return parse


for _name, _kind in (("CORR", exp.Corr), ("COVAR_POP", exp.CovarPop), ("COVAR_SAMP", exp.CovarSamp)):
    SPARK_DIALECT.parser_class.FUNCTIONS[_name] = _distinct_pair(
        _kind, SPARK_DIALECT.parser_class.FUNCTIONS.get(_name, _kind.from_arg_list))

def _percentile(args: list[exp.Expression]) -> exp.Expression:
    """``percentile(v, p, frequency)``: sqlglot's node has no place for Spark's third argument and would
    drop it, and its column with it; read as a call of ``percentile`` with all three."""
    if len(args) == 3:
        return exp.Anonymous(this="percentile", expressions=args)
    return exp.Quantile(this=args[0], quantile=args[1]) if len(args) == 2 else exp.Anonymous(
        this="percentile", expressions=args)


SPARK_DIALECT.parser_class.FUNCTIONS["PERCENTILE"] = _percentile
SPARK_DIALECT.parser_class.FUNCTION_PARSERS = {
    k: v for k, v in SPARK_DIALECT.parser_class.FUNCTION_PARSERS.items() if k != "PERCENTILE"}

# ``any(v)`` is Spark's aggregate (bool_or), not the ANY quantifier sqlglot reads it as (``ANY v``, no
# function); without its no-paren parser, ANY is read as SOME is: a quantifier before a subquery
# (``x = ANY (SELECT ...)``, ``LIKE ANY (...)``), else a call of the function ``any``.
SPARK_DIALECT.parser_class.NO_PAREN_FUNCTION_PARSERS = {
    k: v for k, v in SPARK_DIALECT.parser_class.NO_PAREN_FUNCTION_PARSERS.items() if k != "ANY"}


class _Generators(threading.local):
    """Two generators per thread: built per call, they cost more than the text they write, and a
    generator keeps state while it writes. (Instances, not subclasses: sqlglot's compiled build,
    sqlglotc, cannot be subclassed.)"""

    def __init__(self) -> None:
        self.plain = SPARK_DIALECT.generator()
        self.lower = SPARK_DIALECT.generator(normalize_functions="lower")


_GENERATORS = _Generators()


class _Readers(threading.local):
    """A tokenizer and a parser per thread, reused (``keywords.parse`` reads every statement with them):
    ``sqlglot.parse_one`` builds both per call (each parse starts by resetting the parser's state)."""

    def __init__(self) -> None:
        self.tokenizer = SPARK_DIALECT.tokenizer()
        self.parser = SPARK_DIALECT.parser()


_READERS = _Readers()


def tokenize(sql: str) -> list[Token]:
    """Spark's tokens of ``sql``, with this thread's tokenizer."""
    return _READERS.tokenizer.tokenize(sql)


def parse_tokens(tokens: list[Token], sql: str) -> exp.Expression:
    """sqlglot's tree of ``tokens`` (``sql``'s), with this thread's parser: one statement, or a block."""
    result = _READERS.parser.parse(tokens, sql)
    if not result or result[0] is None:
        raise ParseError(f"No expression was parsed from '{sql}'")
    return exp.Block(expressions=result) if len(result) > 1 else result[0]


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
        # Never pushed: leaf values and leaves not looked for, which would be popped only to be passed over
        # (nothing below them to find); a third of a tree's nodes, half the values of a binary operator. So
        # too the classes not entered that are not looked for (``render``'s columns and literals): nothing
        # of them or below them is returned (their subclasses are told by ``codes``).
        self.skipped = frozenset(kind for kind in LEAF_VALUES | set(pruned) if not issubclass(kind, found))

    def __call__(self, root: exp.Expression) -> list[Any]:
        out: list[Any] = []
        codes, skipped = self.codes, self.skipped  # looked up once: read for every node
        stack = [root]
        pop = stack.pop
        push = stack.append
        expression = exp.Expr
        while stack:
            node = pop()
            cls = type(node)
            code = codes.get(cls)
            if code is None:
                code = codes[cls] = issubclass(cls, self.found) | (issubclass(cls, self.pruned) or cls in _LEAVES) << 1
            if code & 1:
                out.append(node)
                if code & 2:
                    continue
            elif code:
                continue
            args = node.args
            if len(args) == 2:  # most nodes are an operator and its two operands: pushed without the loop
                first, second = args.values()
                if isinstance(first, expression) and isinstance(second, expression):
                    if type(second) not in skipped:
                        push(second)
                    if type(first) not in skipped:
                        push(first)
                    continue
            for value in reversed(args.values()):
                kind = type(value)
                if kind in skipped:  # most values: names, flags, no value
                    continue
                if kind is list:
                    for item in reversed(value):
                        if type(item) not in skipped and isinstance(item, expression):
                            push(item)
                elif isinstance(value, expression):
                    push(value)
        return out


# Nodes with no node below them: a walk need not look into their arguments.
_LEAVES = frozenset({exp.Identifier, exp.Literal, exp.Var, exp.Null, exp.Boolean})
# What ``FindAll`` and ``Finder`` do not put in their queues (but the classes they look for), and what
# ``qualify._walk`` passes over (but identifiers, which it lower-cases): leaves, and the commonest arguments
# that are no node (told apart at once, before the ``isinstance`` that tells the others).
LEAF_VALUES = _LEAVES | {str, bool, type(None)}


class FindAll:
    """``find_all``: the nodes of some classes in sqlglot's breadth-first order (``find_all``'s, where
    the first found of a name may be the one kept), at two thirds of its cost.

    Its compiled generator nests three (``find_all``, ``walk``, ``bfs``) and one more per node
    (``iter_expressions``). Here one loop runs over a list that grows as it is read, and leaves
    not looked for, a third of a tree's nodes (``_LEAVES``: nothing below them), are never put in it.
    """

    def __init__(self, *found: type[exp.Expression]) -> None:
        self.found = found
        self.skipped = frozenset(kind for kind in LEAF_VALUES if not issubclass(kind, found))
        # A column that names a column (not ``t.*``, whose star may hold more) holds names alone (its table,
        # db, catalog: identifiers): not put in the queue either, unless a column or a name is looked for.
        self.named = None if issubclass(exp.Column, found) or issubclass(exp.Identifier, found) else exp.Column

    def __call__(self, root: exp.Expression) -> list[Any]:
        out: list[Any] = []
        found, skipped, named = self.found, self.skipped, self.named  # looked up once: read for every argument
        expression = exp.Expr
        identifier = exp.Identifier
        queue = [root]
        push = queue.append
        for node in queue:  # a list's iterator reads what is appended while it runs: a queue
            if isinstance(node, found):
                out.append(node)
            for value in node.args.values():
                kind = type(value)
                if kind in skipped:  # most values: names, flags, no value
                    continue
                if kind is list:
                    for item in value:
                        kind = type(item)
                        if kind not in skipped and isinstance(item, expression) and (
                                kind is not named or type(item.args.get("this")) is not identifier):
                            push(item)
                elif isinstance(value, expression) and (
                        kind is not named or type(value.args.get("this")) is not identifier):
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
        if b is node or isinstance(b, (exp.Dot, exp.Kwarg)) or isinstance(b.parent, exp.Paren):
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
    """The name Spark gives an unnamed output column: ``toPrettySQL`` of the resolved expression, i.e.
    its SQL without qualifiers, strings unquoted, each expression written as its Spark class writes
    itself (``_pretty``)."""
    copy = _pretty(_copy(_named_windows(node)), sql.lower())
    text = _GENERATORS.lower.generate(copy, copy=False)
    if "extract(" in text:  # the field as written: sqlglot keeps it in capitals
        text = _EXTRACT.sub(lambda m: _written_field(m, sql), text)
    return re.sub(r"DECIMAL\((\d+), (\d+)\)", r"DECIMAL(\1,\2)", text)


_EXTRACT = re.compile(r"extract\((\w+) FROM ")


def _written_field(m: re.Match[str], sql: str) -> str:
    found = re.search(rf"\bextract\s*\(\s*({m.group(1)})\s+from\b", sql, re.IGNORECASE)
    return f"extract({found.group(1) if found else m.group(1)} FROM "


def _copy(root: exp.Expression) -> exp.Expression:
    """``root.copy()``, each node's meta (its token's positions) copied as a dict: sqlglot copies it through
    ``copy.deepcopy``, which was two thirds of the time Spark's name of a column took."""
    top = root.__class__()
    stack = [(root, top)]
    while stack:
        node, copy = stack.pop()
        if node.comments is not None:
            copy.comments = list(node.comments)
        if node._type is not None:
            copy._type = node._type.copy()
        if node._meta is not None:
            copy._meta = dict(node._meta)
        if node._hash is not None:
            copy._hash = node._hash
        for key, value in node.args.items():
            if isinstance(value, exp.Expr):
                child = value.__class__()
                stack.append((value, child))
                copy.set(key, child)
            elif type(value) is list:
                copy.args[key] = []
                for item in value:
                    if isinstance(item, exp.Expr):
                        child = item.__class__()
                        stack.append((item, child))
                        copy.append(key, child)
                    else:
                        copy.append(key, item)
            else:
                copy.args[key] = value
    return top


def _named_windows(node: exp.Expression) -> exp.Expression:
    """``f() OVER w`` with ``WINDOW w AS (...)``: Spark names it by the window it stands for."""
    select = node.find_ancestor(exp.Select)
    named = {str(d.this.name).lower(): d for d in (select.args.get("windows") or []) if isinstance(d, exp.Window)} \
        if select is not None else {}
    if not named:
        return node
    node = node.copy()
    for window in list(node.find_all(exp.Window)):
        ref = window.args.get("alias")
        seen: set[str] = set()
        while isinstance(ref, exp.Identifier) and ref.name.lower() in named and ref.name.lower() not in seen:
            seen.add(ref.name.lower())
            definition = named[ref.name.lower()]
            for key in ("partition_by", "order", "spec"):
                if not window.args.get(key) and definition.args.get(key):
                    window.set(key, definition.args[key].copy() if isinstance(definition.args[key], exp.Expression)
                               else [e.copy() for e in definition.args[key]])
            ref = definition.args.get("alias")
        window.set("alias", None)
    return node


def _text(n: exp.Expression, sql: str) -> str:
    return _GENERATORS.lower.generate(_pretty(n, sql), copy=False)


# Window functions whose frame Spark fixes (``WindowFunction.frame``): the ranking ones, and ``cume_dist``.
_ROWS_TO_CURRENT = "ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"
_RANGE_TO_CURRENT = "RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"
_WHOLE_PARTITION = "ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING"
# Ranking functions Spark writes in capitals (``RankLike.sql``).
_CAPITAL_RANKS = {exp.Rank: "RANK()", exp.DenseRank: "DENSE_RANK()", exp.PercentRank: "PERCENT_RANK()"}


_DAY_TIME = ("DAY", "HOUR", "MINUTE", "SECOND")


def _interval_literal(node: exp.Expression) -> str | None:
    """``interval 23 days 4 hours`` as Spark writes the day-time interval it makes: ``INTERVAL '23 04' DAY TO
    HOUR`` (one unit: ``INTERVAL '1' DAY``); ``None`` for another expression."""
    parts: list[exp.Expression] = []
    stack = [node]
    while stack:  # the terms of the sum, in order (sqlglot nests them either way)
        term = stack.pop()
        if isinstance(term, exp.Add):
            stack.extend((term.expression, term.this))
        else:
            parts.append(term)
    units: dict[str, str] = {}
    for part in parts:
        if not isinstance(part, exp.Interval) or not isinstance(part.this, exp.Literal) \
                or part.args.get("unit") is None:
            return None
        unit = re.sub(r"S$", "", plain_sql(part.args["unit"]).upper())
        if unit not in _DAY_TIME or unit in units:
            return None
        units[unit] = part.this.name
    order = [u for u in _DAY_TIME if u in units]
    if len(order) == 1:  # hours, minutes, seconds in two digits (``INTERVAL '03' HOUR``)
        return f"INTERVAL '{units[order[0]] if order[0] == 'DAY' else units[order[0]].zfill(2)}' {order[0]}"
    first, last = _DAY_TIME.index(order[0]), _DAY_TIME.index(order[-1])
    values = [units.get(u, "0") for u in _DAY_TIME[first:last + 1]]
    rest = [v.zfill(2) for v in values[1:]]
    text = f"{values[0]} {':'.join(rest)}" if order[0] == "DAY" else ":".join([values[0].zfill(2), *rest])
    return f"INTERVAL '{text}' {order[0]} TO {order[-1]}"


def _frame_bound(value: object, side: object) -> str:
    interval = _interval_literal(value) if isinstance(value, (exp.Interval, exp.Add)) else None
    if interval is not None:
        return f"{interval} {str(side or '').upper()}"
    value = value.name if isinstance(value, exp.Expression) else str(value or "")
    side = str(side or "").upper()
    if value.upper() == "UNBOUNDED":
        return f"UNBOUNDED {side}"
    if value.upper() in ("CURRENT ROW", "CURRENT"):
        return "CURRENT ROW"
    return f"{value} {side}"


def _window_name(w: exp.Window, sql: str) -> str:
    """``f(..) OVER (PARTITION BY .. ORDER BY x ASC NULLS FIRST <frame>)``: the frame always spelled out,
    the default one as Spark resolves it (``ResolveWindowFrame``)."""
    fn = w.this
    inner = fn.this if isinstance(fn, (exp.IgnoreNulls, exp.RespectNulls)) else fn
    name = _fname(inner)
    offset = None
    if name in ("lag", "lead"):
        args = [inner.this, inner.args.get("offset"), inner.args.get("default")]
        offset = int(args[1].name) if isinstance(args[1], exp.Literal) else 1
        texts = [_text(args[0], sql), str(offset), _text(args[2], sql) if args[2] is not None else "NULL"]
        fn_text = f"{name}({', '.join(texts)})"
    elif type(inner) in _CAPITAL_RANKS:
        fn_text = _CAPITAL_RANKS[type(inner)]
    else:
        fn_text = _text(fn, sql)
    parts = []
    if w.args.get("partition_by"):
        parts.append("PARTITION BY " + ", ".join(_text(p, sql) for p in w.args["partition_by"]))
    order = w.args.get("order")
    if order is not None and order.expressions:
        items = []
        for o in order.expressions:
            desc = bool(o.args.get("desc"))
            nulls_first = o.args.get("nulls_first")
            nulls_first = (not desc) if nulls_first is None else bool(nulls_first)
            items.append(f"{_text(o.this, sql)} {'DESC' if desc else 'ASC'} NULLS {'FIRST' if nulls_first else 'LAST'}")
        parts.append("ORDER BY " + ", ".join(items))
    spec = w.args.get("spec")
    if offset is not None:
        bound = f"{-offset if name == 'lag' else offset} FOLLOWING"
        parts.append(f"ROWS BETWEEN {bound} AND {bound}")
    elif spec is not None:
        start = _frame_bound(spec.args.get("start"), spec.args.get("start_side"))
        end = _frame_bound(spec.args.get("end"), spec.args.get("end_side")) if spec.args.get("end") else "CURRENT ROW"
        parts.append(f"{str(spec.args.get('kind') or 'ROWS').upper()} BETWEEN {start} AND {end}")
    elif name in functions.RANKING:
        parts.append(_RANGE_TO_CURRENT if name == "cume_dist" else _ROWS_TO_CURRENT)
    else:
        parts.append(_RANGE_TO_CURRENT if order is not None and order.expressions else _WHOLE_PARTITION)
    return f"{fn_text} OVER ({' '.join(parts)})"


def _outer_columns(query: exp.Expression) -> list[str]:
    """The names of the outer query's columns a subquery reads (``ScalarSubquery``'s children)."""
    local = {t.alias_or_name for t in query.find_all(exp.Table, exp.Subquery) if t.alias_or_name}
    local |= {c.alias_or_name for c in query.find_all(exp.CTE)}
    # Each reference, as often as it is made (``(SELECT c WHERE c = 8)`` is ``scalarsubquery(c, c)``).
    return [c.name for c in query.find_all(exp.Column)
            if c.table and c.table not in local and not isinstance(c.this, exp.Star)]


def _fname(node: exp.Expression) -> str:
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    try:
        return node.sql_name().lower()
    except Exception:  # noqa: BLE001 - not a function
        return node.key


# Binary operators Spark writes infix, in parentheses (``BinaryOperator.sql``); the other binary nodes
# of sqlglot are function calls in Spark (``shiftleft(a, 1)``).
_INFIX = (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod, exp.IntDiv, exp.And, exp.Or, exp.EQ, exp.NEQ, exp.GT, exp.GTE,
          exp.LT, exp.LTE, exp.BitwiseAnd, exp.BitwiseOr, exp.BitwiseXor, exp.NullSafeEQ)


def _pretty(n: exp.Expression, sql: str) -> exp.Expression:
    """Spark's pretty SQL of one expression (``usePrettyExpression`` + each class's ``sql``)."""
    if isinstance(n, exp.Column):
        return exp.column(n.this, copy=False) if n.table else n  # ``n`` is of spark_name's copy
    if isinstance(n, exp.Literal) and n.is_string:
        return exp.Var(this=n.this)  # as written, unquoted; ``''`` too (exp.var refuses an empty name)
    if isinstance(n, exp.Boolean):
        return exp.Var(this="true" if n.this else "false")
    if isinstance(n, exp.Paren):  # Spark has no parentheses node: ``(a + b)`` is the addition's own name
        return _pretty(n.this, sql)
    if isinstance(n, exp.Count) and isinstance(n.this, exp.Star):
        return exp.Anonymous(this="count", expressions=[exp.Literal.number(1)])
    if isinstance(n, exp.Window):
        return exp.Var(this=_window_name(n, sql))
    if isinstance(n, exp.Subquery):
        return exp.Var(this=f"scalarsubquery({', '.join(_outer_columns(n))})")
    if isinstance(n, exp.Filter) and isinstance(n.expression, exp.Where):
        return exp.Var(this=f"{_text(n.this, sql)} FILTER (WHERE {_text(n.expression.this, sql)})")
    if isinstance(n, exp.Cast) and _written_name(n, sql) in CAST_FUNCTIONS:  # int(x), bigint(x + 1): Spark names
        return _pretty(n.this, sql)  # the operand (its cast functions are casts that keep their operand's name)
    if isinstance(n, exp.Cast) and _written_name(n, sql) in _CAST_CALLS:  # to_timestamp(x): a call to Spark
        return exp.Var(this=f"{_written_name(n, sql)}({_text(n.this, sql)})")
    if isinstance(n, exp.Cast) and isinstance(n.this, exp.Literal):  # a typed literal: DATE '2024-01-01', 10L
        kind = plain_sql(n.to).upper()
        if n.this.is_string and kind in ("DATE", "TIMESTAMP", "TIMESTAMP_NTZ", "TIMESTAMP_LTZ"):
            return exp.Var(this=f"{kind} '{_datetime_text(n.this.this, kind == 'DATE')}'")
        if n.this.is_number and kind in ("DOUBLE", "FLOAT"):  # 400.00D: the value's Java toString, 400.0
            return exp.Var(this=_java_double(n.this.name))
        if n.this.is_number:
            return exp.Var(this=n.this.name)
        if n.this.is_string and kind.startswith("DECIMAL") and not n.this.meta and _NUMBER.fullmatch(n.this.this):
            # 1.5BD (sqlglot's cast of a literal it made, with no place in the text; CAST('1.5' AS ..)'s has one)
            return exp.Var(this=n.this.this)
    if isinstance(n, exp.Literal) and n.is_number and "e" in n.this.lower():  # 1e3: a double, 1000.0
        return exp.Var(this=_java_double(n.this))
    if isinstance(n, exp.Neg) and not (isinstance(n.this, exp.Literal) and n.this.is_number):
        return exp.Var(this=f"(- {_text(n.this, sql)})")
    if isinstance(n, exp.Not):
        inner = n.this.this if isinstance(n.this, exp.Paren) else n.this
        # ``a IS NOT NULL`` is IsNotNull to Spark; ``not(a IS NULL)``, written in parentheses, stays a NOT
        if isinstance(inner, exp.Is) and isinstance(inner.expression, exp.Null) and inner is n.this \
                and not _not_before(inner.this, sql):  # ``NOT a IS NULL`` stays a NOT
            return exp.Var(this=f"({_text(inner.this, sql)} IS NOT NULL)")
        return exp.Var(this=f"(NOT {_text(inner, sql)})")
    if isinstance(n, exp.NEQ):
        return exp.Var(this=f"(NOT ({_text(n.this, sql)} = {_text(n.expression, sql)}))")
    if isinstance(n, exp.Like) and isinstance(n.expression, (exp.Any, exp.All)):  # LIKE ANY (..): likeany(s)
        kind = "any" if isinstance(n.expression, exp.Any) else "all"
        return exp.Var(this=f"{'not' if n.args.get('negate') else ''}like{kind}({_text(n.this, sql)})")
    if isinstance(n, exp.Like) and not n.args.get("escape"):
        text = f"{_text(n.this, sql)} LIKE {_text(n.expression, sql)}"
        return exp.Var(this=f"(NOT {text})" if n.args.get("negate") else text)
    if isinstance(n, exp.Exists) and not isinstance(n.expression, exp.Lambda):  # names the outer columns it reads
        return exp.Var(this=f"exists({', '.join(_outer_columns(n.this))})")
    if isinstance(n, exp.In) and n.args.get("query") is not None:  # and IN's query is a ListQuery
        text = f"({_text(n.this, sql)} IN (listquery({', '.join(_outer_columns(n.args['query']))})))"
        return exp.Var(this=f"(NOT {text})" if n.args.get("is_not") or n.args.get("negate") else text)
    if isinstance(n, exp.In) and not n.args.get("query"):
        values = ", ".join(_text(e, sql) for e in n.expressions)
        text = f"({_text(n.this, sql)} IN ({values}))"
        return exp.Var(this=f"(NOT {text})" if n.args.get("is_not") or n.args.get("negate") else text)
    if isinstance(n, exp.Between):
        return exp.Var(this=f"between({_text(n.this, sql)}, {_text(n.args['low'], sql)}, {_text(n.args['high'], sql)})")
    if isinstance(n, exp.If) and not isinstance(n.parent, exp.Case):
        false = n.args.get("false")
        args = [n.this, n.args.get("true"), *([false] if false is not None else [exp.null()])]
        return exp.Var(this=f"(IF({', '.join(_text(a, sql) for a in args)}))")
    if isinstance(n, exp.Case) and n.this is not None:  # CASE x WHEN v: Spark's is CASE WHEN (x = v)
        subject = n.this
        n.set("this", None)
        for branch in n.args.get("ifs") or []:
            branch.set("this", exp.EQ(this=subject.copy(), expression=branch.this))
    if isinstance(n, exp.Struct):
        return exp.Var(this=_struct_name(n, sql))
    if isinstance(n, (exp.IgnoreNulls, exp.RespectNulls)) and isinstance(n.this, (exp.FirstValue, exp.LastValue)) \
            and not isinstance(n.parent, exp.Window):  # FIRST_VALUE(x) IGNORE NULLS, an aggregate: Spark's first(x)
        name = "first" if isinstance(n.this, exp.FirstValue) else "last"
        return _pretty(exp.Anonymous(this=name, expressions=[n.this.this]), sql)
    if isinstance(n, (exp.IgnoreNulls, exp.RespectNulls)):  # first/last name no null handling
        return _pretty(n.this, sql)
    if isinstance(n, exp.Cast) and not isinstance(n.this, exp.Column) and n.parent is None:
        return exp.Var(this=f"CAST({_text(n.this, sql)} AS {plain_sql(n.to).upper()})")
    if isinstance(n, exp.Interval) and isinstance(n.this, exp.Literal):
        unit = re.sub(r"S$", "", plain_sql(n.args["unit"]).upper()) if n.args.get("unit") else ""  # DAYS: DAY
        value = n.this.name
        if unit in ("HOUR", "MINUTE", "SECOND") and value.isdigit():  # a day-time field: two digits, '01'
            value = value.zfill(2)
        return exp.Var(this=f"INTERVAL '{value}' {unit}".rstrip())
    if isinstance(n, (exp.Add, exp.Sub)) and isinstance(n.expression, exp.Interval):  # TimeAdd: no parentheses
        return exp.Var(this=f"{_text(n.this, sql)} {'+' if isinstance(n, exp.Add) else '-'} {_text(n.expression, sql)}")
    if isinstance(n, exp.Is):
        return exp.Var(this=f"({_text(n.this, sql)} IS {_text(n.expression, sql).upper()})")
    if isinstance(n, exp.NullSafeNEQ):  # a IS DISTINCT FROM b
        return exp.Var(this=f"(NOT ({_text(n.this, sql)} <=> {_text(n.expression, sql)}))")
    if isinstance(n, exp.Trim) and n.expression is not None and not n.args.get("position"):  # trim(x, s): BOTH
        n.set("position", "BOTH")
    if isinstance(n, exp.NullSafeEQ):
        return exp.Var(this=f"({_text(n.this, sql)} <=> {_text(n.expression, sql)})")
    if isinstance(n, exp.RegexpLike):  # regexp_like(s, p): REGEXP_LIKE; regexp(s, p): REGEXP; rlike, RLIKE: RLIKE
        name = {"regexp_like": "REGEXP_LIKE", "regexp": "REGEXP"}.get(_written_name(n, sql), "RLIKE")
        return exp.Var(this=f"{name}({_text(n.this, sql)}, {_text(n.expression, sql)})")
    if isinstance(n, exp.ILike):
        return exp.Var(this=f"ilike({_text(n.this, sql)}, {_text(n.expression, sql)})")
    if isinstance(n, exp.WithinGroup) and isinstance(n.expression, exp.Order):
        fn = n.this
        args = ", ".join(_text(a, sql) for a in fn.iter_expressions())
        flip = _fname(fn) == "mode"  # Spark's Mode writes its order reversed (``reverseOpt``): ASC as DESC
        order = ", ".join(_text(o.this, sql) + (" DESC" if bool(o.args.get("desc")) != flip else "")
                          for o in n.expression.expressions)
        return exp.Var(this=f"{_fname(fn)}({args}) WITHIN GROUP (ORDER BY {order})")
    if isinstance(n, exp.Lambda):  # Spark writes a lambda's variables without their names
        params = {p.name.lower() for p in n.expressions}
        body = n.this
        for c in list(body.find_all(exp.Column, exp.Identifier)):
            if isinstance(c, exp.Identifier) and isinstance(c.parent, exp.Column):
                continue
            if not (isinstance(c, exp.Column) and c.table) and c.name.lower() in params:
                if c is body:
                    body = exp.Var(this="namedlambdavariable()")
                else:
                    c.replace(exp.Var(this="namedlambdavariable()"))
        variables = ", ".join("namedlambdavariable()" for _ in n.expressions)
        return exp.Var(this=f"lambdafunction({_text(body, sql)}, {variables})")
    if type(n) is exp.Quantile:  # percentile(v, p), as Spark reads it: frequency 1 filled in
        return exp.Var(this=f"percentile({_text(n.this, sql)}, {_text(n.args['quantile'], sql)}, 1)")
    if isinstance(n, exp.Anonymous) and str(n.name).lower() in functions.PARAMETERS:
        n.set("expressions", _positional(n))
    for key, value in list(n.args.items()):
        if isinstance(value, exp.Expression):
            n.set(key, _pretty(value, sql))
        elif isinstance(value, list):
            n.set(key, [_pretty(v, sql) if isinstance(v, exp.Expression) else v for v in value])
    written = _written_name(n, sql) or (_CEIL_FLOOR.get(type(n), "") if isinstance(n, (exp.Ceil, exp.Floor)) else "")
    if type(n) in _CALLED_AS and not written:  # sqlglot keeps no place for these: the name the statement uses
        written = next((name for name in _CALLED_AS[type(n)] if f"{name}(" in sql), _CALLED_AS[type(n)][-1])
    if isinstance(n, exp.Substring):  # Spark fills in the length it defaults to
        length = n.args.get("length") or exp.Literal.number(2147483647)
        return exp.Anonymous(this="substring" if "substring(" in sql else "substr",
                             expressions=[a for a in (n.this, n.args.get("start"), length) if a is not None])
    if isinstance(n, exp.RegexpReplace) and n.args.get("position") is None:  # and the position
        return exp.Anonymous(this="regexp_replace", expressions=[n.this, n.expression, n.args.get("replacement"),
                                                                 exp.Literal.number(1)])
    if written in _SPARK_ALIASES.get(type(n), ()):  # nvl(a, b) is Coalesce to sqlglot, nvl to Spark
        # (sqlglot's date_diff wraps its operands in TsOrDsToDate, which Spark's name does not show)
        return _call(written, [a.this if isinstance(a, exp.TsOrDsToDate) else a for a in n.iter_expressions()])
    named = _called(n, written)
    if named is not None:
        return named
    if written in _MATH_NAMES:
        operands = list(n.iter_expressions())
        arity = _MATH_NAMES[written]
        if written == "log" and len(operands) == 1:  # log(x): Spark's Logarithm of base e
            return _call("LOG", ["E()", operands[0]])
        if len(operands) >= arity and (written not in _ONE_ARGUMENT or len(operands) == 1):
            # sqlglot reads log10(x) as Log(10, x): the operands written are the last ones
            return _call(written.upper(), operands[len(operands) - arity:])
    if written in _DEFAULT_SCALE and len(list(n.iter_expressions())) == 1:  # round(x): Spark fills in scale 0
        return exp.Anonymous(this=written, expressions=[*n.iter_expressions(), exp.Literal.number(0)])
    if written == "positive":  # UnaryPositive: ``(+ x)``
        return exp.Var(this=f"(+ {_GENERATORS.lower.generate(next(n.iter_expressions()), copy=False)})")
    if isinstance(n, exp.DPipe):  # Spark names ``a || b`` as the call it makes of it
        return exp.Anonymous(this="concat", expressions=[n.this, n.expression])
    if isinstance(n, exp.IntDiv):
        return exp.Var(this=f"({_GENERATORS.lower.generate(n.this, copy=False)} div "
                            f"{_GENERATORS.lower.generate(n.expression, copy=False)})")
    if isinstance(n, exp.CurrentDate):
        return exp.Var(this="current_date()")
    if isinstance(n, _INFIX):
        return exp.Paren(this=n)
    return n


def _call(name: str, operands: list[Any]) -> exp.Var:
    """A call as Spark names it, its name as given (the generator would write it in lower case), operands
    written as they are (texts given as strings, unquoted)."""
    texts = [o if isinstance(o, str) else _GENERATORS.lower.generate(o, copy=False) for o in operands]
    return exp.Var(this=f"{name}({', '.join(texts)})")


def _called(n: exp.Expression, written: str) -> exp.Var | None:
    """Calls sqlglot reads as another function, or whose defaults Spark writes out in the name: the name Spark
    gives them (``ucase(s)``, ``rpad(s, 5,  )``, ``locate(a, s, 1)``, ``date_sub(d, 1)``); measured on Spark
    (the corpus's st_name_functions cases). ``None``: sqlglot's text is Spark's."""
    args = n.args
    if isinstance(n, exp.Anonymous) and written in ("isnull", "isnotnull") and len(n.expressions) == 1:
        return exp.Var(this=f"({_GENERATORS.lower.generate(n.expressions[0], copy=False)} IS "
                            f"{'NOT ' if written == 'isnotnull' else ''}NULL)")
    if isinstance(n, exp.Pad) and args.get("fill_pattern") is None:
        return _call("lpad" if args.get("is_left") else "rpad", [n.this, n.expression, " "])
    if isinstance(n, exp.RegexpSplit) and args.get("limit") is None and written == "split":
        return _call("split", [n.this, n.expression, "-1"])
    if isinstance(n, exp.StrPosition):
        if written == "instr":
            return _call("instr", [n.this, args["substr"]])
        return _call("locate", [args["substr"], n.this, args.get("position") or "1"])
    if isinstance(n, exp.MonthsBetween) and written == "months_between" and len(list(n.iter_expressions())) == 2:
        return _call("months_between", [n.this, n.expression, "true"])
    if isinstance(n, exp.ArraySort) and written == "sort_array":
        return _call("sort_array", [n.this, "false" if args.get("nulls_first") == exp.false() else "true"])
    if isinstance(n, exp.ApproxQuantile) and args.get("accuracy") is None:
        return _call(written, [n.this, args["quantile"], "10000"])
    if isinstance(n, exp.Overlay):
        return _call("overlay", [n.this, n.expression, args["from_"], args.get("for_") or "-1"])
    if isinstance(n, exp.TsOrDsAdd) and written == "date_sub":  # date_add(d, -n) to sqlglot
        amount = n.expression.this if isinstance(n.expression, exp.Paren) else n.expression
        return _call("date_sub", [n.this, amount.this if isinstance(amount, exp.Mul) else amount])
    if isinstance(n, exp.Exists) and n.expression is not None:  # exists(array, lambda)
        return _call("exists", [n.this, n.expression])
    if isinstance(n, exp.Reduce) and args.get("finish") is None:  # Spark's default finish: the identity lambda
        return _call(written or "aggregate", [n.this, args["initial"], args["merge"],
                                              "lambdafunction(namedlambdavariable(), namedlambdavariable())"])
    if isinstance(n, (exp.TimestampTrunc, exp.DateTrunc)) and written in ("date_trunc", "trunc"):
        unit = args["unit"].name
        return _call(written, [unit, n.this] if written == "date_trunc" else [n.this, unit])
    if isinstance(n, exp.TimestampAdd) and written in ("timestampadd", "date_add", "dateadd"):  # with a unit
        return _call("timestampadd", [args["unit"].name, n.expression, n.this])
    if isinstance(n, exp.ArraySort) and written == "array_sort" and args.get("expression") is None:
        return _call("array_sort", [n.this, _DEFAULT_COMPARATOR])
    if isinstance(n, exp.JSONExtractScalar) and written == "get_json_object":
        return _call(written, [n.this, n.expression.sql("spark").strip("'")])
    if isinstance(n, exp.FromJson):  # Spark names it by its input alone
        return _call("from_json", [n.this])
    if isinstance(n, exp.RegexpInstr) and written == "regexp_instr" and args.get("group") is None \
            and len(list(n.iter_expressions())) == 2:
        return _call(written, [n.this, n.expression, "0"])
    if isinstance(n, exp.Anonymous) and written == "to_varchar":  # to_char's other name; Spark names it to_char
        return _call("to_char", list(n.expressions))
    if isinstance(n, exp.ToChar) and written in ("to_char", "to_varchar"):
        return _call("to_char", [n.this, args["format"]] if args.get("format") is not None else [n.this])
    if isinstance(n, exp.Collate):
        return _call("collate", [n.this, n.expression])
    if isinstance(n, (exp.CurrentDatabase, exp.CurrentSchema)):
        return exp.Var(this="current_schema()")
    if isinstance(n, exp.CurrentCatalog):
        return exp.Var(this="current_catalog()")
    if isinstance(n, exp.Getbit) and written == "bit_get":
        return _call(written, [n.this, n.expression])
    if isinstance(n, (exp.BitwiseLeftShift, exp.BitwiseRightShift)) and not written:  # the operator: ``(i >> 1)``
        op = "<<" if isinstance(n, exp.BitwiseLeftShift) else ">>"
        return exp.Var(this=f"({_GENERATORS.lower.generate(n.this, copy=False)} {op} "
                            f"{_GENERATORS.lower.generate(n.expression, copy=False)})")
    if isinstance(n, exp.Localtimestamp):
        return exp.Var(this="localtimestamp()")
    if isinstance(n, exp.MakeInterval):  # the fields not given, 0
        fields = [args.get(k) for k in ("year", "month", "week", "day", "hour", "minute")]
        seconds = args.get("second") or "0.000000"
        return _call("make_interval", [f if f is not None else "0" for f in fields] + [seconds])
    if isinstance(n, exp.StrToUnix) and written == "to_unix_timestamp" and args.get("format") is None:
        return _call(written, [n.this, "yyyy-MM-dd HH:mm:ss"])
    if isinstance(n, (exp.AtTimeZone, exp.FromTimeZone)) and written in ("from_utc_timestamp", "to_utc_timestamp"):
        value = n.this.this if isinstance(n.this, exp.Cast) and not n.this.meta else n.this  # sqlglot's own cast
        return _call(written, [value, args["zone"]])
    if isinstance(n, exp.Anonymous) and written in _CAPITAL_CALLS:
        return _call(written.upper(), list(n.expressions))
    if isinstance(n, exp.Extract):
        return exp.Var(this=f"extract({n.this.name} FROM {_GENERATORS.lower.generate(n.expression, copy=False)})")
    return None


# Spark's cast functions (``int(x)`` is CAST(x AS INT)) -> the type they cast to. sqlglot reads some as casts, the
# others as anonymous calls (``keywords.parse`` makes casts of those).
CAST_FUNCTIONS: dict[str, str] = {
    "boolean": "BOOLEAN", "tinyint": "TINYINT", "smallint": "SMALLINT", "int": "INT", "bigint": "BIGINT",
    "float": "FLOAT", "double": "DOUBLE", "decimal": "DECIMAL(10, 0)", "string": "STRING", "binary": "BINARY",
}
# Calls sqlglot reads as a cast (``to_timestamp(x)`` is CAST(x AS TIMESTAMP)) that Spark names as called.
_CAST_CALLS = frozenset({"to_timestamp"})


def cast_call(node: exp.Cast, sql: str) -> bool:
    """Whether a cast is a call Spark names as called (``to_timestamp(s)``, where Spark names ``CAST(s AS ..)``
    after its column)."""
    return _written_name(node, sql.lower()) in _CAST_CALLS


def _java_double(text: str) -> str:
    """A double literal as Java's ``Double.toString`` writes it (Spark names a literal by its value):
    ``400.0``, ``1.0E10``, ``2.5E-5``."""
    try:
        value = float(text)
    except ValueError:
        return text
    if value == 0 or 1e-3 <= abs(value) < 1e7:
        out = repr(value)
        return out if "e" not in out else text
    sign, digits, exponent = Decimal(repr(value)).normalize().as_tuple()  # the shortest digits, as Java's
    power = len(digits) - 1 + int(exponent)
    fraction = "".join(map(str, digits[1:])) or "0"
    return f"{'-' if sign else ''}{digits[0]}.{fraction}E{power}"


def _positional(call: exp.Anonymous) -> list[exp.Expression]:
    """A call's arguments in the order of its parameters, defaults filled in (``f(x, seed => 1, epsilon =>
    0.5)``, ``mask(name)``), as Spark passes them; as written when the function's parameters are not known."""
    params = functions.PARAMETERS.get(str(call.name).lower())
    args = list(call.expressions)
    if params is None:
        return args
    names = [p for p, _ in params]
    slots: dict[str, exp.Expression] = {}
    for i, a in enumerate(args):
        if isinstance(a, exp.Kwarg):
            slots[a.this.name.lower()] = a.expression
        elif i < len(names):
            slots[names[i]] = a
    out = []
    for name, default in params:
        value = slots.get(name)
        if value is None and default is not None:
            value = exp.null() if default == "NULL" else exp.Literal.string(default.strip("'"))
        if value is None:
            break
        out.append(value)
    return out if len(out) >= len(slots) and set(slots) <= set(names[:len(out)]) else args


# Spark functions sqlglot reads as another one's node, whose name Spark keeps as written (``FUNC_ALIAS``),
# with the same operands in the same order.
_SPARK_ALIASES: dict[type, tuple[str, ...]] = {
    exp.Coalesce: ("nvl", "ifnull"), exp.Mod: ("mod",), exp.Ceil: ("ceiling",), exp.Pow: ("pow",),
    exp.ArraySize: ("array_size",), exp.Upper: ("ucase",), exp.Lower: ("lcase",),
    exp.Length: ("char_length", "character_length", "len"), exp.SHA: ("sha1",), exp.Variance: ("var_samp",),
    exp.DateDiff: ("date_diff",), exp.Space: ("space",), exp.UnixDate: ("unix_date",),
    exp.GroupConcat: ("string_agg", "listagg"),
}
# Spark's math expressions name themselves in capitals (``CEIL(x)``, ``POWER(x, 2)``, ``LOG10(x)``), unless
# called by an alias that keeps its own name (``ceiling``, ``pow``, ``sign``, ``ln``, above and as sqlglot
# writes them): the name as called -> the number of operands. Measured on Spark 4.2 and 3.5 (the corpus's
# st_name_math cases).
_MATH_NAMES: dict[str, int] = {
    **dict.fromkeys(("ceil", "floor", "sqrt", "exp", "expm1", "cbrt", "sin", "cos", "tan", "asin", "acos", "atan",
                     "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "cot", "sec", "csc", "log10", "log1p", "log2",
                     "degrees", "radians", "signum"), 1),
    **dict.fromkeys(("power", "log", "atan2", "hypot"), 2),
    **dict.fromkeys(("e", "pi"), 0),
}
# array_sort(arr) with the comparator Spark fills in.
_DEFAULT_COMPARATOR = (
    "lambdafunction((IF(((namedlambdavariable() IS NULL) AND (namedlambdavariable() IS NULL)), 0, (IF("
    "(namedlambdavariable() IS NULL), 1, (IF((namedlambdavariable() IS NULL), -1, (IF((namedlambdavariable() < "
    "namedlambdavariable()), -1, (IF((namedlambdavariable() > namedlambdavariable()), 1, 0)))))))))), "
    "namedlambdavariable(), namedlambdavariable())")
# Calls Spark names in capitals that sqlglot leaves anonymous.
_CAPITAL_CALLS = frozenset({"spark_partition_id", "regexp"})
# Calls of which sqlglot keeps no place: the names they may be called by (the first one the statement calls).
_CALLED_AS: dict[type, tuple[str, ...]] = {
    exp.GroupConcat: ("string_agg", "listagg"), exp.ApproxQuantile: ("approx_percentile", "percentile_approx"),
}
# sqlglot keeps no place for ``ceil(x)`` / ``floor(x)`` (``ceiling(x)`` it does): their names as Spark's own.
_CEIL_FLOOR: dict[type, str] = {exp.Ceil: "ceil", exp.Floor: "floor"}
_ONE_ARGUMENT = frozenset({"ceil", "floor"})  # ceil(x, 1), floor(x, 0) are RoundCeil / RoundFloor: called as written
_DEFAULT_SCALE = frozenset({"round", "bround"})


def _written_name(n: exp.Expression, sql: str) -> str:
    """A function's name as the statement spells it (sqlglot keeps where its name token is)."""
    meta = n.meta if n.meta else None
    if not meta or "start" not in meta or "end" not in meta:
        return ""
    return sql[meta["start"]:meta["end"] + 1].lower()


_DATETIME = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d+))?)?)?")


def _datetime_text(value: str, date: bool) -> str:
    """A date or timestamp literal's value as Spark writes it: fields zero-padded, a timestamp's time in full and its
    fraction without trailing zeros (``'2016-1-1 1:2:3.100'`` is ``'2016-01-01 01:02:03.1'``); a value with more
    (a zone) as written."""
    m = _DATETIME.fullmatch(value.strip())
    if m is None:
        return value
    y, mo, d, h, mi, sec, frac = m.groups()
    day = f"{y}-{int(mo):02d}-{int(d):02d}"
    if date:
        return day
    fraction = (frac or "").rstrip("0")
    return f"{day} {int(h or 0):02d}:{int(mi or 0):02d}:{int(sec or 0):02d}" + (f".{fraction}" if fraction else "")


_NUMBER = re.compile(r"-?\d+(?:\.\d*)?|-?\.\d+")


def _not_before(node: exp.Expression, sql: str) -> bool:
    """Whether the statement writes ``NOT`` right before ``node`` (``NOT a IS NULL``, which Spark keeps a NOT)."""
    identifier = node.this if isinstance(node, exp.Column) else node
    start = identifier.meta.get("start") if isinstance(identifier, exp.Expression) else None
    return isinstance(start, int) and re.search(r"\bnot\s*$", sql[max(0, start - 12):start]) is not None


def _struct_name(n: exp.Struct, sql: str) -> str:
    """``struct(a, b)``, ``struct(a AS x)``, ``named_struct(x, a)``: sqlglot reads all three alike."""
    pairs = [(e.this.name, e.expression) if isinstance(e, exp.PropertyEQ) else ("", e) for e in n.expressions]
    if all(not key or (isinstance(v, exp.Column) and v.name == key) for key, v in pairs):
        return f"struct({', '.join(_text(v, sql) for _, v in pairs)})"
    if _written_name(n, sql) == "named_struct" or (not n.meta and "named_struct" in sql):
        return f"named_struct({', '.join(f'{key}, {_text(v, sql)}' for key, v in pairs)})"
    return "struct(" + ", ".join(_text(v, sql) if not key or (isinstance(v, exp.Column) and v.name == key)
                                 else f"{_text(v, sql)} AS {key}" for key, v in pairs) + ")"
