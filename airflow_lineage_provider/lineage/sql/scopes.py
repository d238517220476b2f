"""sqlglot's ``traverse_scope`` for the common shapes, on what qualify's walk already gathered.

sqlglot's scopes each walk their own part of the tree (``Scope._collect``: a generator and a ten-class
``isinstance`` per node), a tenth of a statement's work. The walk that lower-cases identifiers
(``qualify._walk``) visits every node anyway: it notes each node of those ten classes under the scope it
belongs to (``walk_in_scope``'s boundaries), and ``traverse_scope`` here builds sqlglot's own ``Scope``
objects in sqlglot's order, each given what its ``_collect`` would have found. A shape this does not
take (a lateral, a table function, a pivot, a join hint, a recursive CTE, a column alias list, a DDL or
DML root, ...) makes it return ``None``, and sqlglot's ``traverse_scope`` builds the scopes. The tests
hold the two to the same scopes.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.helper import find_new_name
from sqlglot.optimizer.scope import (
    Scope,
    ScopeType,
    _get_source_alias,
    _is_derived_table,
    _is_from_or_join,
    _is_semi_or_anti_join_rhs,
)

# What ``Scope._collect`` classifies; the walk notes these, per scope.
COLLECTIBLE = (exp.Column, exp.Dot, exp.Table, exp.Query, exp.UDTF, exp.CTE, exp.Star, exp.TableColumn,
               exp.JoinHint, exp.Comprehension)
_QUERIES = exp.UNWRAPPED_QUERIES
_FROM_OR_JOIN = (exp.From, exp.Join)


class NotTakenError(Exception):
    """A shape taken only by sqlglot's ``traverse_scope``."""


def inner_owner(node: exp.Expression) -> int:
    """For a node that starts a scope (``walk_in_scope``'s boundaries), the id of the scope's expression
    (what its nodes are noted under); ``0``: the node starts none. Raises ``NotTakenError`` for shapes not taken."""
    parent = node.parent
    if isinstance(parent, exp.UDTF):
        raise NotTakenError
    if isinstance(node, exp.CTE):
        inner = node.this
    elif isinstance(node, _QUERIES):
        if isinstance(parent, _FROM_OR_JOIN):
            raise NotTakenError
        return id(node)
    elif isinstance(parent, _FROM_OR_JOIN) and _is_derived_table(node):
        inner = node.this
        args = node.args
        if args.get("joins") or args.get("laterals") or args.get("pivots"):
            raise NotTakenError  # walked by the outer scope, not noted here
    elif isinstance(parent, _FROM_OR_JOIN):
        raise NotTakenError  # ``(a JOIN b)``: its tables are the outer scope's, through ``_traverse_tables``
    else:
        return 0
    if not isinstance(inner, _QUERIES):
        raise NotTakenError
    return id(inner)


def traverse_scope(query: exp.Expression, noted: dict[int, list[exp.Expression]]) -> list[Scope]:
    """sqlglot's ``traverse_scope(query)``: the scopes in its order, each collected from ``noted`` (per
    scope expression's id, its nodes of ``COLLECTIBLE`` in the reverse of ``walk_in_scope``'s order)."""
    if not isinstance(query, _QUERIES):
        raise NotTakenError
    scopes: list[Scope] = []
    _traverse(Scope(query), noted, scopes)
    return scopes


def _collected(scope: Scope, noted: dict[int, list[exp.Expression]]) -> Scope:
    """``scope`` given what ``Scope._collect`` finds: the chain of tests of ``_collect``, in its order."""
    tables: list[exp.Table] = []
    ordered: list[exp.Expression] = []
    ctes: list[exp.CTE] = []
    subqueries: list[exp.Expression] = []
    derived: list[exp.Subquery] = []
    raw: list[exp.Column] = []
    stars: list[exp.Column | exp.Dot] = []
    semi: set[str] = set()
    scans = False
    column_class, star_class = exp.Column, exp.Star
    # The walk took children last first: reversed, a scope's nodes come in ``walk_in_scope``'s order but for
    # a node and one below it, which no list here holds both of (what is below a table or a column, or a
    # derived table's joins, is declined).
    for node in reversed(noted.get(id(scope.expression), ())):
        cls = type(node)
        if cls is column_class:
            if isinstance(node.this, star_class):
                stars.append(node)
            else:
                raw.append(node)
        elif isinstance(node, exp.Dot):
            if node.is_star:
                raise NotTakenError
        elif isinstance(node, exp.Table):
            if isinstance(node.parent, exp.JoinHint):
                raise NotTakenError
            if _is_semi_or_anti_join_rhs(node):
                semi.add(node.alias_or_name)
            tables.append(node)
            ordered.append(node)
        elif isinstance(node, (exp.JoinHint, exp.Lateral, exp.TableColumn, exp.Comprehension)) or (
                isinstance(node, exp.UDTF) and isinstance(node.parent, _FROM_OR_JOIN)):
            raise NotTakenError
        elif isinstance(node, exp.CTE):
            ctes.append(node)
        elif _is_derived_table(node) and _is_from_or_join(node):
            if _is_semi_or_anti_join_rhs(node):
                semi.add(node.alias_or_name)
            derived.append(node)  # type: ignore[arg-type]
            ordered.append(node)
        elif isinstance(node, _QUERIES) and not _is_from_or_join(node):
            subqueries.append(node)
        elif isinstance(node, star_class) and (
                node.args.get("except_") or not isinstance(node.parent, exp.Count)):
            scans = True
    scope._tables = tables
    scope._ordered_sources = ordered
    scope._ctes = ctes
    scope._subqueries = subqueries
    scope._derived_tables = derived
    scope._udtfs = []
    scope._raw_columns = raw
    scope._table_columns = []
    scope._stars = stars
    scope._join_hints = []
    scope._comprehensions = []
    scope._semi_anti_join_tables = semi
    # The ids of the columns, ``raw`` and ``stars`` (all columns here), in one call rather than one per column.
    index = set(map(id, raw))
    if stars:
        index.update(map(id, stars))
    scope._column_index = index
    scope._scans_all_subscope_columns = scans
    scope._collected = True
    return scope


def _traverse(scope: Scope, noted: dict[int, list[exp.Expression]], out: list[Scope]) -> None:
    """``_traverse_scope`` for a select or a set operation: the scopes it yields, appended to ``out``."""
    _collected(scope, noted)
    if isinstance(scope.expression, exp.Select):
        _ctes(scope, noted, out)
        _tables(scope, noted, out)
        for subquery in scope.subqueries:
            child = scope.branch(subquery, scope_type=ScopeType.SUBQUERY)
            _traverse(child, noted, out)
            scope.subquery_scopes.append(child)
        out.append(scope)
    elif isinstance(scope.expression, exp.SetOperation):
        _ctes(scope, noted, out)
        _set_operation(scope, noted, out)
    else:
        raise NotTakenError


def _ctes(scope: Scope, noted: dict[int, list[exp.Expression]], out: list[Scope]) -> None:
    """``_traverse_ctes``; a recursive CTE or a column alias list is sqlglot's."""
    sources: dict[str, exp.Table | Scope] = {}
    for cte in scope.ctes:
        with_ = scope.expression.args.get("with_")
        if (with_ and with_.recursive) or cte.alias_column_names:
            raise NotTakenError
        child = scope.branch(cte.this, cte_sources=sources, scope_type=ScopeType.CTE)
        _traverse(child, noted, out)  # its last scope is ``child``
        sources[cte.alias] = child
        scope.cte_scopes.append(child)
    scope.sources.update(sources)
    scope.cte_sources.update(sources)


def _tables(scope: Scope, noted: dict[int, list[exp.Expression]], out: list[Scope]) -> None:
    """``_traverse_tables`` for tables and derived tables with no joins of their own, no laterals."""
    expression = scope.expression
    args = expression.args
    if args.get("laterals"):
        raise NotTakenError
    sources: dict[str, exp.Table | Scope] = {}
    from_ = args.get("from_")
    relations = [from_.this] if from_ else []
    relations.extend(join.this for join in args.get("joins") or [])
    for relation in relations:
        if isinstance(relation, exp.Table):
            if relation.args.get("joins") or relation.args.get("pivots"):
                raise NotTakenError
            table_name = relation.name
            source_name = relation.alias_or_name
            if table_name in scope.sources and not relation.db:
                sources[source_name] = scope.sources[table_name]
            elif source_name in sources:
                sources[find_new_name(sources, table_name)] = relation
            else:
                sources[source_name] = relation
        elif isinstance(relation, exp.Subquery) and _is_derived_table(relation) and not relation.args.get("joins"):
            if relation.alias_column_names:
                raise NotTakenError
            child = scope.branch(relation, scope_type=ScopeType.DERIVED_TABLE)
            _traverse(child, noted, out)
            sources[_get_source_alias(relation)] = child
            scope.derived_table_scopes.append(child)
            scope.table_scopes.append(child)
        else:
            raise NotTakenError  # a table function, a lateral, ``FINAL``, a parenthesized join
    scope.sources.update(sources)


def _set_operation(scope: Scope, noted: dict[int, list[exp.Expression]], out: list[Scope]) -> None:
    """``_traverse_set_operation`` with no output column list (so no BY NAME reordering)."""
    set_op = scope.expression
    if scope.outer_columns or set_op.args.get("by_name"):
        raise NotTakenError
    previous: Scope | None = None
    stack: list[Scope] = [scope]
    expressions: list[exp.Expression] = [set_op.expression, set_op.this]
    while expressions:
        expression = expressions.pop()
        set_op_scope = stack[-1]
        new = set_op_scope.branch(expression, outer_columns=set_op_scope.outer_columns,
                                  scope_type=ScopeType.SET_OPERATION)
        inner = new.expression
        if previous is None and isinstance(inner, exp.SetOperation):
            if inner.args.get("by_name"):
                raise NotTakenError
            _collected(new, noted)
            _ctes(new, noted, out)
            stack.append(new)
            expressions.extend([inner.expression, inner.this])
            continue
        if not isinstance(inner, _QUERIES):
            raise NotTakenError  # VALUES as an operand
        _traverse(new, noted, out)  # its last scope is ``new``
        if previous is not None:
            stack.pop()
            set_op_scope.set_operation_scopes = [previous, new]
            previous = set_op_scope
            out.append(set_op_scope)
        else:
            previous = new
