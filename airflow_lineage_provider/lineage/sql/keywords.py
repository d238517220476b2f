"""Spark's keywords used as column names (``all``, ``values``, ``from``, ``when``, ...), and its type names used as
functions (``bigint(x)``), read as Spark reads them.

Spark reserves no keyword by default: a column may be named ``values`` or ``all`` and be written
bare. sqlglot reads such a word as its keyword wherever it stands, so the statement fails to
parse (``SELECT values FROM t``) or, worse, loses the column without a word (``SELECT all, k``
reads as ``SELECT ALL k``; ``max(all)`` as ``max()``). Before sqlglot parses a statement, a
keyword that stands where only a name can (after ``SELECT``, a comma, an opening parenthesis or
an operator, and before a comma, a closing parenthesis or an operator) becomes a name. And
``GROUP BY all`` / ``ORDER BY all`` over a relation with a column ``all`` is that column, as
Spark resolves the relation's column before the ``ALL`` clause.
"""

from __future__ import annotations

import re
from typing import Any

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from airflow_lineage_provider.lineage.sql.render import CAST_FUNCTIONS, SPARK_DIALECT, parse_tokens, tokenize

_T = TokenType
# Keywords sqlglot reserves that Spark reads as a column's name where a name stands (checked against Spark;
# ``case`` and ``not`` sqlglot's parser reads by their text, whatever their token: not made names here).
_NAMES = frozenset({
    _T.ALL, _T.VALUES, _T.INTERVAL, _T.CROSS, _T.LATERAL, _T.QUALIFY, _T.USING, _T.WHEN, _T.THEN,
    _T.ELSE, _T.DISTINCT, _T.HAVING, _T.WHERE, _T.FROM, _T.SELECT, _T.ALIAS, _T.ON, _T.JOIN, _T.INNER,
    _T.OUTER, _T.UNION, _T.EXCEPT, _T.INTERSECT, _T.AND, _T.OR, _T.LIKE, _T.RLIKE, _T.ILIKE, _T.BETWEEN,
    _T.WITH, _T.INTO, _T.TABLE_SAMPLE, _T.LIMIT, _T.OFFSET,
})
_COMPARISONS = frozenset({_T.EQ, _T.NEQ, _T.NULLSAFE_EQ, _T.GT, _T.GTE, _T.LT, _T.LTE})
_KEYS = frozenset({_T.ORDER_BY, _T.GROUP_BY, _T.PARTITION_BY, _T.SORT_BY, _T.CLUSTER_BY, _T.DISTRIBUTE_BY})
# Tokens after which an operand starts.
_BEFORE = _COMPARISONS | _KEYS | frozenset({
    _T.SELECT, _T.COMMA, _T.L_PAREN, _T.WHERE, _T.HAVING, _T.ON, _T.AND, _T.OR, _T.WHEN, _T.THEN, _T.ELSE,
    _T.PLUS, _T.DASH, _T.SLASH, _T.MOD, _T.DPIPE,
})
# Tokens that may follow an operand (``FROM`` only in a select list: after ``SELECT`` or a comma).
_AFTER = _COMPARISONS | frozenset({_T.COMMA, _T.R_PAREN, _T.IS, _T.IN, _T.ALIAS, _T.ASC, _T.DESC, _T.SEMICOLON})
# Keywords that may follow an operand too, but not one of ``_CLAUSES`` (``SELECT FROM WHERE`` is no column).
_AFTER_WORDS = frozenset({_T.WHERE, _T.GROUP_BY, _T.ORDER_BY, _T.HAVING, _T.LIMIT, _T.AND, _T.OR, _T.THEN, _T.ELSE,
                          _T.END})
_CLAUSES = frozenset({_T.SELECT, _T.FROM, _T.WHERE, _T.HAVING, _T.QUALIFY, _T.WITH, _T.ON, _T.USING, _T.JOIN,
                      _T.INNER, _T.CROSS, _T.OUTER, _T.UNION, _T.EXCEPT, _T.INTERSECT, _T.LIMIT, _T.OFFSET, _T.INTO,
                      _T.TABLE_SAMPLE, _T.LATERAL})
_ARITHMETIC = frozenset({_T.PLUS, _T.DASH, _T.STAR, _T.SLASH, _T.MOD, _T.DPIPE})
# Keywords that begin an operand or a query themselves (``(SELECT -1)``, ``SELECT ALL -x``, ``INTERVAL -1 DAY``):
# an operator after one of them is no sign that it is a name; ``VALUES`` only before a minus sign.
_STARTS = frozenset({_T.SELECT, _T.ALL, _T.DISTINCT, _T.INTERVAL, _T.CASE, _T.WITH, _T.LATERAL})
_QUANTIFIERS = frozenset({_T.ALL, _T.DISTINCT})  # after a comma, no quantifier: ``a, all + 1`` is a name
# Type names Spark calls as cast functions (``bigint(x)`` is CAST(x AS BIGINT)) that sqlglot reads as anonymous calls
# (``int``, ``double``, ``string`` it reads as casts): a name followed by ``(`` and not after ``AS``.
_CAST_TYPES = frozenset({_T.TINYINT, _T.SMALLINT, _T.BIGINT, _T.FLOAT, _T.DECIMAL, _T.BINARY, _T.BOOLEAN})
_SEEN = _NAMES | _CAST_TYPES  # the tokens the loop looks at twice
_NAMED_ALL, _CAST_CALL = 1, 2


def parse(text: str) -> exp.Expression:
    """sqlglot's tree of one statement (``sqlglot.parse_one``), Spark's keywords that stand as column
    names read as names."""
    tokens = tokenize(text)
    found = _names(tokens)  # a plain loop over the tokens: a tenth of the cost of a regex over the text
    tree = parse_tokens(tokens, text)
    if found & _NAMED_ALL:  # sqlglot reads an ORDER BY key by its text: ``ORDER BY k, all`` has an ALL it made a name
        for ordered in tree.find_all(exp.Ordered):
            if isinstance(ordered.this, exp.Var) and ordered.this.name.upper() == "ALL" \
                    and len(ordered.parent.expressions) > 1:
                ordered.set("this", exp.column("all"))
    if found & _CAST_CALL:
        _cast_functions(tree)
    return tree


def _cast_functions(tree: exp.Expression) -> None:
    """Each call of a cast function read as the cast it is (``bigint(x)``: CAST(x AS BIGINT)), its place in the text
    kept (Spark names it after its operand, ``render.spark_name``)."""
    for call in list(tree.find_all(exp.Anonymous)):
        kind = CAST_FUNCTIONS.get(str(call.name).lower())
        if kind is not None and len(call.expressions) == 1:
            cast = exp.Cast(this=call.expressions[0], to=exp.DataType.build(kind, dialect=SPARK_DIALECT))
            cast.meta.update(call.meta)
            call.replace(cast)


def _names(tokens: list[Token]) -> int:
    """Make a name of each keyword of ``_NAMES`` that stands where only a name can; what was found: ``_NAMED_ALL``
    (an ``all`` made a name), ``_CAST_CALL`` (a cast function called)."""
    named_all = False
    cast_call = 0
    last = len(tokens) - 1
    for i, token in enumerate(tokens):
        kind = token.token_type
        if kind not in _SEEN or i == 0:
            continue
        before = tokens[i - 1].token_type
        after = tokens[i + 1].token_type if i < last else None
        if kind in _CAST_TYPES:
            if after is _T.L_PAREN and before is not _T.ALIAS:
                cast_call = _CAST_CALL
            continue
        if before not in _BEFORE:
            continue
        if kind is _T.ALL and before in _KEYS and after is not _T.COMMA:
            continue  # ``GROUP BY ALL``, ``ORDER BY ALL DESC``: the clause, unless a column is named so (``by_all``)
        if after is None or after in _AFTER or (after in _AFTER_WORDS and kind not in _CLAUSES) \
                or (after is _T.FROM and before in (_T.SELECT, _T.COMMA)) \
                or (after in _ARITHMETIC and (kind not in _STARTS or (kind in _QUANTIFIERS and before is _T.COMMA))
                    and not (kind is _T.VALUES and after is _T.DASH)):
            token.token_type = _T.VAR
            named_all = named_all or kind is _T.ALL
    return (_NAMED_ALL if named_all else 0) | cast_call


# Searched in the lower-cased text, with no word boundary before ``by``: a pattern that starts with a literal is
# searched fifty times faster, and a match within a word (``standby all``) costs only the walk that follows.
_BY_ALL = re.compile(r"by\s+all\b")


def by_all(query: exp.Expression, text: str, schema: Any) -> bool:
    """``GROUP BY all`` / ``ORDER BY all`` of a select over a relation with a column ``all``: that column.
    ``query``: its tables qualified; ``text``: the statement, lower-cased; ``schema``: sqlglot's ``MappingSchema``
    of the tables. Returns whether any was rewritten."""
    if "all" not in text or not _BY_ALL.search(text):
        return False
    changed = False
    for select in query.find_all(exp.Select):
        group = select.args.get("group")
        order = select.args.get("order")
        grouped = group is not None and bool(group.args.get("all"))
        ordered = order is not None and len(order.expressions) == 1 and isinstance(order.expressions[0].this, exp.Var) \
            and order.expressions[0].this.name.upper() == "ALL"
        if not (grouped or ordered) or "all" not in relation_columns(select, query, schema):
            continue
        if grouped:
            group.set("all", None)
            group.set("expressions", [*group.expressions, exp.column("all")])
        if ordered:
            order.expressions[0].set("this", exp.column("all"))
        changed = True
    return changed


def relation_columns(select: exp.Select, query: exp.Expression, schema: Any) -> set[str]:
    """The column names of the relations of a select's FROM and joins that tell them (tables, derived
    tables and CTEs of plain selects), in lower case."""
    names: set[str] = set()
    ctes = {cte.alias_or_name: cte.this for cte in query.find_all(exp.CTE)}
    for source in [select.args.get("from_")] + list(select.args.get("joins") or []):
        relation = source.this if source is not None else None
        body = relation.this if isinstance(relation, exp.Subquery) else None
        if isinstance(relation, exp.Table):
            if not relation.args.get("db") and relation.name in ctes:
                body = ctes[relation.name]
            else:
                try:
                    names.update(c.lower() for c in schema.column_names(relation))
                except Exception:  # noqa: BLE001 - a table of unknown columns has none known here
                    pass
                continue
        if isinstance(body, exp.Query):
            names.update(n.lower() for n in body.named_selects)
    return names
