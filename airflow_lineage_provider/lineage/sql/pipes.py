"""Spark's SQL pipe syntax (``TABLE t |> WHERE .. |> SELECT ..``), written as the SQL it stands for.

sqlglot reads some pipe operators after ``FROM t`` (into CTEs), but not a query that starts with
``TABLE t``, nor ``|> UNION ALL TABLE t``, ``|> SET``, ``|> DROP``, ...; and its CTEs hide the names of
the relations, which Spark keeps visible (``TABLE t |> WHERE t.x = 1``, ``|> JOIN u |> SELECT t.a, u.b``).
So before sqlglot reads a statement, every chain of pipe operators in it (the statement's query, a CTE,
a subquery, a scalar subquery, ...) is written as the plain SELECTs Spark's parser makes of it
(``AstBuilder.visitOperatorPipeStatement``), from the statement's own text: each expression is kept as
written (Spark's names of unaliased columns come from it), and the text of a clause is only moved.

Operator by operator (Spark 4's ``operatorPipeRightSide``), over ``q``, the query so far:

- ``SELECT .. [GROUP BY ..]``: the select list over ``q``'s relations; ``EXTEND e``: ``SELECT *, e``; ``SET c = e``:
  ``SELECT * REPLACE (e AS c)`` (the column keeps its place; one assignment after the other, as Spark
  makes one projection per assignment); ``DROP c``: ``SELECT * EXCEPT (c)``; ``AS x``: ``(q) AS x``.
- ``WHERE``: a filter of ``q``; ``AGGREGATE a GROUP BY g``: ``SELECT g, a .. GROUP BY g`` (the grouping
  columns first; a grouping alias names the column, an ordinal names ``q``'s column at that place).
- Joins (``JOIN``, ``LEFT OUTER JOIN``, ``NATURAL JOIN``, ``JOIN LATERAL``, ...) with ``q`` on the left;
  ``UNION`` / ``EXCEPT`` / ``MINUS`` / ``INTERSECT`` ``[ALL | DISTINCT]`` with ``q`` first (``TABLE t``
  as ``SELECT * FROM t``); ``PIVOT`` / ``UNPIVOT`` of ``q``; ``ORDER BY``, ``SORT BY``, ``DISTRIBUTE
  BY``, ``CLUSTER BY``, ``LIMIT``, ``OFFSET`` of ``q``; ``TABLESAMPLE`` (rows kept or not: no lineage),
  left out.

An operator goes into ``q``'s own SELECT while that reads the same (a WHERE, a JOIN or a SELECT over a
relation nothing was done to yet, an ORDER BY after a SELECT), else ``q`` becomes a derived table
``__pipe<n>``. Spark keeps the relations' names visible through most operators, so a column qualified
by a relation inside ``__pipe<n>`` is then read as ``__pipe<n>``'s (``requalify``, after sqlglot
parsed the statement). An operator not read is left out, and said (one note each).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Union

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from airflow_lineage_provider.lineage.sql.render import SPARK_DIALECT

# The derived tables a chain's steps become: ``__pipe1``, ``__pipe2``, ...
PIPE_ALIAS = "__pipe"

_T = TokenType
_SET_OPERATIONS = frozenset({_T.UNION, _T.EXCEPT, _T.INTERSECT})  # MINUS is EXCEPT to the tokenizer
# Spark's queryOrganization: what ends a pipe operator's own clause and applies to its result.
# Their order in a query: one goes into a SELECT after those of lower rank (``ORDER BY x`` then ``LIMIT 1``);
# another reads the SELECT's result (``LIMIT 1`` then ``ORDER BY x``).
_RESULT_RANKS = {_T.ORDER_BY: 0, _T.CLUSTER_BY: 0, _T.DISTRIBUTE_BY: 0, _T.SORT_BY: 1, _T.WINDOW: 2, _T.LIMIT: 3,
                 _T.OFFSET: 4}
_RESULT_CLAUSES = frozenset(_RESULT_RANKS)
_JOINS = frozenset({_T.JOIN, _T.INNER, _T.CROSS, _T.LEFT, _T.RIGHT, _T.FULL, _T.NATURAL, _T.SEMI, _T.ANTI, _T.OUTER})
_QUERY_STARTS = frozenset({_T.SELECT, _T.FROM, _T.VALUES, _T.WITH, _T.TABLE})
# ``TABLE`` after these names a table a statement writes or manages, not a query (``INSERT INTO TABLE t``).
_NOT_A_QUERY_BEFORE_TABLE = frozenset({"INTO", "OVERWRITE", "CREATE", "REPLACE", "TEMPORARY", "TEMP", "EXTERNAL",
                                       "GLOBAL", "CACHE", "LAZY", "UNCACHE", "ALTER", "DROP", "TRUNCATE", "DESC",
                                       "DESCRIBE", "ANALYZE", "REFRESH", "REPAIR", "MSCK", "SHOW", "COMMENT", "ON",
                                       "LIKE", "EXISTS"})
# What can end an expression, so that a name after it is an alias (``sum(z) z``, ``x + 1 AS k``).
_VALUE_ENDS = frozenset({_T.VAR, _T.IDENTIFIER, _T.NUMBER, _T.STRING, _T.R_BRACKET, _T.NULL, _T.TRUE, _T.FALSE,
                         _T.STAR})
_NAMES = frozenset({_T.VAR, _T.IDENTIFIER})


@dataclass
class _Group:
    """A parenthesized part of the statement: its tokens and groups, at its own level."""

    open: Token
    items: list[Union[Token, "_Group"]] = field(default_factory=list)
    close: Token | None = None

    @property
    def start(self) -> int:
        return self.open.start

    @property
    def end(self) -> int:
        return self.close.end if self.close is not None else (self.items[-1].end if self.items else self.open.end)


_Item = Union[Token, _Group]


def _kind(item: _Item) -> TokenType | None:
    return None if isinstance(item, _Group) else item.token_type


@dataclass(frozen=True)
class Rewritten:
    """A statement with its pipe syntax written as plain SQL, and what was left out (one note each)."""

    sql: str
    notes: tuple[str, ...]


def rewrite(sql: str, columns: Callable[[str], list[str] | None] | None = None) -> Rewritten | None:
    """``sql`` with every chain of pipe operators written as plain SQL; ``None`` when it has none (or
    cannot be tokenized). ``columns``: the output column names of a query's text, when known (what an
    ``AGGREGATE .. GROUP BY <ordinal>`` names)."""
    if "|>" not in sql:
        return None
    try:
        tokens = SPARK_DIALECT.tokenize(sql)
    except Exception:  # noqa: BLE001 - not tokenized: sqlglot's parse says why
        return None
    if not any(t.token_type == _T.PIPE_GT for t in tokens):
        return None
    writer = _Writer(sql, columns)
    try:
        return Rewritten(writer.level(_nest(tokens), top=True), tuple(writer.notes))
    except Exception as e:  # noqa: BLE001 - a gap of ours: the statement is then read as written, and says so
        return Rewritten(sql, (f"the pipe syntax (|>) could not be read by the static extractor "
                               f"({e.__class__.__name__}: {e}): the statement is read as sqlglot reads it",))


def _nest(tokens: list[Token]) -> list[_Item]:
    """The tokens as a tree of parenthesized groups."""
    top: list[_Item] = []
    stack: list[_Group] = []
    for token in tokens:
        here = stack[-1].items if stack else top
        if token.token_type == _T.L_PAREN:
            group = _Group(token)
            here.append(group)
            stack.append(group)
        elif token.token_type == _T.R_PAREN and stack:
            stack.pop().close = token
        else:
            here.append(token)
    return top


class _Query:
    """A pipe chain's query so far: a SELECT filled in operator by operator over ``source`` (a FROM
    clause), or a finished query's text (``query``)."""

    def __init__(self, source: str | None = None, query: str | None = None, simple: bool = False) -> None:
        self.source = source
        self.query = query
        self.simple = simple  # the source is one relation (a PIVOT goes onto it)
        self.select: str | None = None  # the select clause; None: ``SELECT *``
        self.where: list[str] = []
        self.group: str | None = None
        self.tail: str | None = None  # ORDER BY, LIMIT, ...
        self.rank = -1  # of the tail's last clause

    def open(self) -> bool:
        """A relation nothing was done to but filters: a WHERE, a JOIN, a SELECT go into its SELECT."""
        return self.query is None and self.select is None and self.group is None and self.tail is None

    def sql(self) -> str:
        if self.query is not None:
            return self.query
        parts = [self.select or "SELECT *", "FROM", self.source or ""]
        if self.where:
            parts += ["WHERE", " AND ".join(f"({w})" for w in self.where) if len(self.where) > 1 else self.where[0]]
        if self.group is not None:
            parts += ["GROUP BY", self.group]
        if self.tail:
            parts.append(self.tail)
        return " ".join(parts)


class _Writer:
    """Writes a statement's levels (the statement, each parenthesized part) with their pipe chains as
    plain SQL, numbering the derived tables it makes."""

    def __init__(self, sql: str, columns: Callable[[str], list[str] | None] | None) -> None:
        self.source = sql
        self.columns = columns
        self.notes: list[str] = []
        self.count = 0

    # -- text ------------------------------------------------------------------------------------

    def text(self, items: list[_Item], tables: bool = False) -> str:
        """The items as written (the gaps between them too: spaces, comments), each group's own pipe
        chains rewritten. ``tables``: ``TABLE t`` starting a set operation's query is ``SELECT * FROM t``."""
        out: list[str] = []
        previous: _Item | None = None
        after_operation = True
        for item in items:
            if previous is not None:
                out.append(self.source[previous.end + 1:item.start])
            kind = _kind(item)
            if isinstance(item, _Group):
                out.append(self.group(item))
            elif tables and kind == _T.TABLE and after_operation:
                out.append("SELECT * FROM")
            else:
                out.append(self.source[item.start:item.end + 1])
            if (kind in _SET_OPERATIONS and (previous is None or _kind(previous) != _T.STAR)) or (
                    after_operation and kind in (_T.ALL, _T.DISTINCT)):
                after_operation = True
            else:
                after_operation = False
            previous = item
        return "".join(out)

    def group(self, group: _Group) -> str:
        inner = self.level(group.items, top=False)
        if not group.items:
            return self.source[group.start:group.end + 1]
        head = self.source[group.open.end + 1:group.items[0].start]
        tail = self.source[group.items[-1].end + 1:group.close.start] if group.close is not None else ""
        return "(" + head + inner + tail + (")" if group.close is not None else "")

    def alias(self) -> str:
        self.count += 1
        return f"{PIPE_ALIAS}{self.count}"

    def wrap(self, q: _Query) -> str:
        """``q`` as a derived table of a FROM clause."""
        return f"({q.sql()}) AS {self.alias()}"

    def over(self, q: _Query) -> _Query:
        """A query to fill in over ``q``: ``q`` itself while it is open (its filters kept), else a SELECT
        from ``q`` as a derived table."""
        return q if q.open() else _Query(source=self.wrap(q))

    def first(self, q: _Query) -> str:
        """``q`` as the first query of a set operation."""
        if q.query is None and q.tail is None:
            return q.sql()
        return f"SELECT * FROM {self.wrap(q)}"

    # -- levels ----------------------------------------------------------------------------------

    def level(self, items: list[_Item], top: bool) -> str:
        pipes = [i for i, item in enumerate(items) if _kind(item) == _T.PIPE_GT]
        if not pipes:
            return self.text(items)
        start = _query_start(items, top)
        if start is None or start >= pipes[0]:
            self.notes.append("a pipe operator |> whose query the static extractor could not find was not read")
            return self.text(items)
        q = self.primary(items[start:pipes[0]])
        for at, end in zip(pipes, pipes[1:] + [len(items)]):
            q = self.operator(q, items[at + 1:end])
        prefix = self.text(items[:start])
        gap = self.source[items[start - 1].end + 1:items[start].start] if start else ""
        return prefix + gap + q.sql()

    def primary(self, items: list[_Item]) -> _Query:
        """The query a chain starts from."""
        kinds = [_kind(i) for i in items]
        if any(_set_operation(items, i) for i in range(len(items))):
            return _Query(query=self.text(items, tables=True))
        first = kinds[0]
        if first == _T.TABLE:
            return _Query(source=self.text(items[1:]), simple=True)
        if first == _T.FROM and _T.SELECT not in kinds:
            relation = items[1:]
            return _Query(source=self.text(relation),
                          simple=not any(_kind(i) in _JOINS or _kind(i) == _T.COMMA for i in relation))
        if first == _T.VALUES:
            return _Query(source=self.text(items))
        if len(items) == 1 and isinstance(items[0], _Group):
            inner = items[0].items
            if any(_kind(i) == _T.PIPE_GT for i in inner):
                return _Query(query=self.level(inner, top=False))
            return _Query(query=self.text(inner, tables=True))  # ``(TABLE t) |> ..``
        return _Query(query=self.text(items))

    def operator(self, q: _Query, items: list[_Item]) -> _Query:
        """``q |> <items>``."""
        if not items:
            self.notes.append("an empty pipe operator |> was not read")
            return q
        kind = _kind(items[0])
        word = self.source[items[0].start:items[0].end + 1].upper() if not isinstance(items[0], _Group) else "("
        if kind in _SET_OPERATIONS:
            return _Query(query=f"{self.first(q)} {self.text(items, tables=True)}")
        # The operator's own clause, then result clauses (ORDER BY ..), then set operations it is the first query of.
        cut = next((i for i in range(len(items)) if _set_operation(items, i)), len(items))
        body, rest = items[:cut], items[cut:]
        split = next((i for i, item in enumerate(body) if _kind(item) in _RESULT_CLAUSES), len(body))
        body, tail = body[:split], body[split:]
        if body:
            q = self.clause(q, kind, word, body)
        for clause in _split_before(tail, _RESULT_CLAUSES):
            q = self.result(q, clause)
        if rest:
            q = _Query(query=f"{self.first(q)} {self.text(rest, tables=True)}")
        return q

    def result(self, q: _Query, clause: list[_Item]) -> _Query:
        """``q`` with a result clause (ORDER BY, LIMIT, ...): in its SELECT after the clauses that come
        before it there, else over its result."""
        rank = _RESULT_RANKS[_kind(clause[0])]
        if q.query is not None or rank <= q.rank:
            q = _Query(source=self.wrap(q))
        q.tail = f"{q.tail} {self.text(clause)}" if q.tail else self.text(clause)
        q.rank = rank
        return q

    def clause(self, q: _Query, kind: TokenType | None, word: str, body: list[_Item]) -> _Query:
        rest = body[1:]
        if kind == _T.SELECT:  # Spark 4.2 lets it group: ``|> SELECT k, sum(v) GROUP BY k``
            at = next((i for i, item in enumerate(body) if _kind(item) == _T.GROUP_BY), None)
            q = self.over(q)
            q.select = self.text(body if at is None else body[:at])
            if at is not None:
                q.group = ", ".join(self.text(_unaliased(g)) for g in _split(body[at + 1:], _T.COMMA))
            return q
        if kind == _T.WHERE:
            if not q.open():
                q = _Query(source=self.wrap(q))
            q.where.append(self.text(rest))
            return q
        if kind in _JOINS:
            join = " ".join(self.text(run) for run in _unsampled(body))
            if q.open():
                q.source = f"{q.source} {join}"
                q.simple = False
                return q
            return _Query(source=f"{self.wrap(q)} {join}")
        if kind in (_T.PIVOT, _T.UNPIVOT):
            if q.open() and q.simple and not q.where:
                q.source = f"{q.source} {self.text(body)}"
                q.simple = False
                return q
            return _Query(source=f"{self.wrap(q)} {self.text(body)}")
        if kind == _T.TABLE_SAMPLE:
            return q  # which rows are kept: no column lineage
        if kind == _T.ALIAS:
            return _Query(source=f"({q.sql()}) AS {self.text(rest)}", simple=True)
        if kind == _T.VAR and word == "EXTEND":
            q = self.over(q)
            q.select = f"SELECT *, {self.text(rest)}"
            return q
        if kind == _T.DROP:
            q = self.over(q)
            q.select = f"SELECT * EXCEPT ({self.text(rest)})"
            return q
        if kind == _T.SET:
            for assignment in _split(rest, _T.COMMA):
                eq = next((i for i, item in enumerate(assignment) if _kind(item) == _T.EQ), None)
                if eq is None or not eq:
                    self.notes.append(f"the pipe operator |> SET {self.text(assignment)} was not read")
                    continue
                q = self.over(q)
                q.select = f"SELECT * REPLACE ({self.text(assignment[eq + 1:])} AS {self.text(assignment[:eq])})"
            return q
        if kind == _T.VAR and word == "AGGREGATE":
            return self.aggregate(q, rest)
        self.notes.append(f"the pipe operator |> {word} is not read by the static extractor: its input's "
                          f"lineage passes through it as it is")
        return q

    def aggregate(self, q: _Query, body: list[_Item]) -> _Query:
        """``|> AGGREGATE a, .. [GROUP BY g, ..]``: the grouping columns, then the aggregates."""
        at = next((i for i, item in enumerate(body) if _kind(item) == _T.GROUP_BY), None)
        aggregates = body if at is None else body[:at]
        groups = _split(body[at + 1:], _T.COMMA) if at is not None else []
        names: list[str] | None = None
        select: list[str] = []
        keys: list[str] = []
        for group in groups:
            if len(group) == 1 and _kind(group[0]) == _T.NUMBER and re.fullmatch(r"\d+", group[0].text):
                # An ordinal names the input's column at that place.
                if names is None:
                    names = (self.columns(q.sql()) if self.columns else None) or []
                ordinal = int(group[0].text)
                if not 0 < ordinal <= len(names):
                    self.notes.append(f"|> AGGREGATE ... GROUP BY {ordinal}: the column it names is unknown (the "
                                      f"input's columns are not known), so it is left out")
                    continue
                name = "`" + names[ordinal - 1].replace("`", "``") + "`"
                select.append(name)
                keys.append(name)
                continue
            select.append(self.text(group))
            keys.append(self.text(_unaliased(group)))
        if aggregates:
            select.append(self.text(aggregates))
        q = self.over(q)
        q.select = "SELECT " + ", ".join(select)
        if keys:
            q.group = ", ".join(keys)
        return q


def _set_operation(items: list[_Item], i: int) -> bool:
    """Whether ``items[i]`` is a set operation (not a star's ``EXCEPT (c)``)."""
    return _kind(items[i]) in _SET_OPERATIONS and not (i and _kind(items[i - 1]) == _T.STAR)


def _split(items: list[_Item], kind: TokenType) -> list[list[_Item]]:
    """The items between the tokens of ``kind`` (at this level: a group's are its own)."""
    parts: list[list[_Item]] = [[]]
    for item in items:
        if _kind(item) == kind:
            parts.append([])
        else:
            parts[-1].append(item)
    return [p for p in parts if p]


def _split_before(items: list[_Item], kinds: frozenset[TokenType]) -> list[list[_Item]]:
    """The items in parts, each starting at a token of ``kinds`` (at this level)."""
    parts: list[list[_Item]] = []
    for item in items:
        if not parts or _kind(item) in kinds:
            parts.append([])
        parts[-1].append(item)
    return parts


def _unsampled(items: list[_Item]) -> list[list[_Item]]:
    """A relation without its ``TABLESAMPLE (..) [REPEATABLE (..)]`` (which rows are read: no column lineage;
    sqlglot does not read one after a subquery), as the runs of items around it."""
    runs: list[list[_Item]] = [[]]
    i = 0
    while i < len(items):
        if _kind(items[i]) == _T.TABLE_SAMPLE and i + 1 < len(items) and isinstance(items[i + 1], _Group):
            i += 2
            if i + 1 < len(items) and _kind(items[i]) is not None and items[i].text.upper() == "REPEATABLE" \
                    and isinstance(items[i + 1], _Group):
                i += 2
            runs.append([])
            continue
        runs[-1].append(items[i])
        i += 1
    return [run for run in runs if run]


def _unaliased(items: list[_Item]) -> list[_Item]:
    """An expression without the alias it is given (``x + 1 AS k``, ``count(*) c``)."""
    if len(items) >= 3 and _kind(items[-2]) == _T.ALIAS:
        return items[:-2]
    if len(items) >= 2 and _kind(items[-1]) in _NAMES and (
            isinstance(items[-2], _Group) or _kind(items[-2]) in _VALUE_ENDS):
        return items[:-1]
    return items


def _query_start(items: list[_Item], top: bool) -> int | None:
    """Where the query of a level starts: after a statement's head (``INSERT INTO t``, ``CREATE TABLE t
    .. AS``) and after a WITH's CTEs; the level's start in a group."""
    i = 0
    while i < len(items):
        item = items[i]
        kind = _kind(item)
        if kind == _T.WITH:
            i = _after_ctes(items, i)
            if not top:
                return i
            continue
        if not top:
            return i
        if kind == _T.TABLE:
            before = items[i - 1] if i else None
            if before is None or isinstance(before, _Group) or before.text.upper() not in _NOT_A_QUERY_BEFORE_TABLE:
                return i
        elif kind in _QUERY_STARTS or kind == _T.PIPE_GT:
            return i
        elif isinstance(item, _Group) and item.items and (
                isinstance(item.items[0], _Group) or _kind(item.items[0]) in _QUERY_STARTS):
            return i
        i += 1
    return None


def _after_ctes(items: list[_Item], i: int) -> int:
    """The index after ``WITH [RECURSIVE] c [(cols)] AS (..), ..``."""
    i += 1
    while i < len(items):
        while i < len(items) and not (isinstance(items[i], _Group) and i and _kind(items[i - 1]) == _T.ALIAS):
            i += 1
        i += 1
        if i < len(items) and _kind(items[i]) == _T.COMMA:
            i += 1
            continue
        break
    return i


# -- after sqlglot parsed the statement ---------------------------------------------------------------


def requalify(tree: exp.Expression) -> None:
    """A column qualified by a relation inside a chain's derived table ``__pipe<n>`` (``t.x`` after
    ``TABLE t |> SELECT x, y |> ...``), read from that derived table, as Spark's plan reads it."""
    for sub in list(tree.find_all(exp.Subquery)):
        alias = sub.alias
        if not alias.startswith(PIPE_ALIAS):
            continue
        select = sub.parent.parent if sub.parent is not None else None
        if not isinstance(select, exp.Select):
            continue
        hidden = _relation_names(sub.this)
        if not hidden:
            continue
        for column in list(select.walk(prune=lambda n: n is sub)):
            if not isinstance(column, exp.Column) or not column.table or column.table.lower() not in hidden:
                continue
            if _visible(column, column.table.lower(), select):
                continue
            column.set("table", exp.to_identifier(alias))
            column.set("db", None)
            column.set("catalog", None)


def _relation_names(node: exp.Expression) -> set[str]:
    names: set[str] = set()
    for relation in node.find_all(exp.Table, exp.Subquery, exp.Values, exp.Lateral):
        if isinstance(relation, exp.Table):
            names.add(relation.name.lower())
        if relation.alias:
            names.add(relation.alias.lower())
    return names


def _relations(select: exp.Select) -> set[str]:
    frm = select.args.get("from_") or select.args.get("from")
    out: set[str] = set()
    for relation in ([frm.this] if frm is not None else []) + [j.this for j in select.args.get("joins") or []]:
        if isinstance(relation, exp.Table):
            out.add(relation.name.lower())
        if relation.alias_or_name:
            out.add(relation.alias_or_name.lower())
    return out


def _visible(column: exp.Column, name: str, top: exp.Select) -> bool:
    """Whether a relation ``name`` of the selects from ``column`` up to ``top`` is what it reads."""
    node: exp.Expression | None = column
    while node is not None:
        if isinstance(node, exp.Select) and name in _relations(node):
            return True
        if node is top:
            return False
        node = node.parent
    return False
