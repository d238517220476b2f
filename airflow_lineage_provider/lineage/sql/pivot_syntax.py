"""A PIVOT's aggregates that are expressions over aggregates, read as Spark reads them.

Spark's PIVOT takes any named expressions before ``FOR``: ``PIVOT (avg(x) + 1 AS a, sum(x) * 2 FOR k IN
(..))``. sqlglot reads each as a function call and fails at the operator ("Expecting FOR"). Before sqlglot
reads the statement, each such expression is written as the argument of a placeholder function, which
sqlglot reads as any call; after, the placeholder gives way to its argument, so the tree is the one
Spark's text means.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.dialects.dialect import pivot_column_names
from sqlglot.tokens import Token, TokenType

from airflow_lineage_provider.lineage.sql.render import spark_name, tokenize

PLACEHOLDER = "__airflow_lineage_pivot_expression"
_T = TokenType
_NAMES = (_T.VAR, _T.IDENTIFIER)
_OPEN = (_T.L_PAREN, _T.L_BRACKET)
_CLOSE = (_T.R_PAREN, _T.R_BRACKET)


def wrap(text: str) -> str | None:
    """``text`` with each PIVOT aggregate that is not one call wrapped in the placeholder; ``None`` when
    it has none (or sqlglot cannot tokenize it: the parse then says what is wrong)."""
    try:
        tokens = tokenize(text)
    except Exception:  # noqa: BLE001 - the parse that follows reports the statement's error
        return None
    inserts: list[tuple[int, str]] = []
    for i, token in enumerate(tokens):
        if token.token_type is _T.PIVOT and i + 1 < len(tokens) and tokens[i + 1].token_type is _T.L_PAREN:
            for first, last in _aggregates(tokens, i + 2):
                inserts += [(tokens[first].start, f"{PLACEHOLDER}("), (tokens[last].end + 1, ")")]
    if not inserts:
        return None
    for position, piece in sorted(inserts, reverse=True):
        text = text[:position] + piece + text[position:]
    return text


def read(tree: exp.Expression, sql: str) -> None:
    """Put each placeholder's argument in its place, and name the columns of each unaliased aggregate of a
    PIVOT of several as Spark does (``<value>_<toPrettySQL(aggregate)>``: ``dotnet_(sum(x) * 2)``), where
    sqlglot names them by its own text of the aggregate. ``sql``: the statement sqlglot read."""
    for pivot in list(tree.find_all(exp.Pivot)):
        aggregates = pivot.expressions
        columns = pivot.args.get("columns") or []
        if pivot.args.get("unpivot") or len(aggregates) < 2 or not columns or len(columns) % len(aggregates):
            _unwrap(pivot)
            continue
        written = pivot_column_names(aggregates, dialect="spark")  # sqlglot's suffixes (``_pivot_column_names``)
        _unwrap(pivot)
        named = [a.alias if isinstance(a, exp.Alias) else spark_name(a, sql) for a in pivot.expressions]
        renamed = []
        for k, column in enumerate(columns):
            old, new = written[k % len(written)], named[k % len(named)]
            name = column.name
            renamed.append(exp.to_identifier(name[:len(name) - len(old)] + new) if old != new and name.endswith(old)
                           else column)
        pivot.set("columns", renamed)


def _unwrap(pivot: exp.Pivot) -> None:
    for call in list(pivot.find_all(exp.Anonymous)):
        if call.name == PLACEHOLDER and len(call.expressions) == 1:
            call.replace(call.expressions[0])


def _aggregates(tokens: list[Token], start: int) -> list[tuple[int, int]]:
    """The (first, last) tokens of each aggregate of the PIVOT whose list starts at ``start`` that needs the
    placeholder: an expression, its alias left out, that is not one call from its name to its ``)``."""
    out: list[tuple[int, int]] = []
    depth = 0
    item = start
    for i in range(start, len(tokens)):
        kind = tokens[i].token_type
        if kind in _OPEN:
            depth += 1
        elif kind in _CLOSE:
            depth -= 1
            if depth < 0:
                return []  # no FOR: not a PIVOT's list
        elif depth == 0 and kind in (_T.COMMA, _T.FOR):
            last = _expression_end(tokens, item, i - 1)
            if last >= item and not _one_call(tokens, item, last):
                out.append((item, last))
            if kind is _T.FOR:
                return out
            item = i + 1
    return []


def _expression_end(tokens: list[Token], first: int, last: int) -> int:
    """The last token of an aggregate's expression: its alias (``AS a``, or a bare name after a
    ``)``, a name or a literal) left out."""
    if last - first >= 1 and tokens[last].token_type in _NAMES:
        before = tokens[last - 1].token_type
        if before is _T.ALIAS:
            return last - 2
        if before in (_T.R_PAREN, _T.VAR, _T.IDENTIFIER, _T.NUMBER, _T.STRING):
            return last - 1
    return last


def _one_call(tokens: list[Token], first: int, last: int) -> bool:
    """Whether tokens ``first``..``last`` are one call, ``name(...)``, what sqlglot reads there."""
    if last - first < 2 or tokens[first + 1].token_type is not _T.L_PAREN:
        return last == first  # a lone name or literal: sqlglot's error says what Spark's would
    depth = 0
    for i in range(first + 1, last + 1):
        kind = tokens[i].token_type
        if kind in _OPEN:
            depth += 1
        elif kind in _CLOSE:
            depth -= 1
            if depth == 0:
                return i == last
    return False
