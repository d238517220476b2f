"""The statement's indirect inputs: the columns its conditions read.

Joins, filters, group/sort/window keys, CASE/IF conditions, set operations' right sides:
each becomes an INDIRECT input with its subtype. A mixin of the scope resolver (``scope.py``).
"""

from __future__ import annotations

from itertools import chain
from typing import Any, Iterable

from sqlglot import exp
from sqlglot.optimizer.scope import Scope

from airflow_lineage_provider.lineage.model import (
    CONDITIONAL,
    FILTER,
    GROUP_BY,
    IDENTITY,
    INDIRECT,
    JOIN,
    SORT,
    WINDOW,
    ColumnInput,
    Origin,
)
from airflow_lineage_provider.lineage.sql.qualify import using_key
from airflow_lineage_provider.lineage.sql.render import Finder, plain_sql, spark_name
from airflow_lineage_provider.lineage.sql.roles import Ref, collect_refs, field_path
from airflow_lineage_provider.lineage.sql.shared import Source

# Inside a condition, what is not read as plain columns: queries, and grouping-id bits.
_NESTED = (exp.Subquery, exp.Select, exp.SetOperation, exp.Grouping, exp.GroupingId)
_CONDITION_PARTS = Finder((exp.Column, exp.Dot, *_NESTED), (exp.Column, exp.Dot, *_NESTED))
_COLUMN = exp.Column  # looked up once: read for every part of every condition (and every key, ``key_parts``)
_ORDERED = exp.Ordered
_NO_IDS: frozenset[int] = frozenset()
_make_input = ColumnInput.make  # bound once: a class method is bound anew at each look-up through its class
# Projections with nothing in them that can be a window or a condition, by their class (a subclass, rare, is
# looked into: it finds nothing either).
_PLAIN_VALUES = frozenset({exp.Column, exp.Literal})


class Conditions:
    """Notes the indirect inputs of every scope of a query."""

    def note_indirect(self, scope: Scope) -> None:
        """The scope's own conditions (WHERE, ON, GROUP BY, HAVING, ORDER BY, ...) as indirect inputs."""
        e = scope.expression
        if not isinstance(e, exp.Select):  # the commonest scope first
            if isinstance(e, exp.SetOperation):
                self._note_set_operation(scope, e)
            return
        args = e.args  # looked up once: read for each clause
        where = args.get("where")
        if where is not None:
            self._indirect_expr(scope, where.this, FILTER, self.where_columns.get(id(where)))
        for j in args.get("joins") or []:
            on = j.args.get("on")
            if on is not None:
                kind = str(j.args.get("kind") or "").upper()
                self._indirect_expr(scope, on, FILTER if kind in ("SEMI", "ANTI") else JOIN)
        group = args.get("group")
        if group is not None and group.args.get("all"):
            # GROUP BY ALL: every projection that aggregates nothing is a key.
            for p in e.expressions:
                if not (p.this if isinstance(p, exp.Alias) else p).find(exp.AggFunc, exp.Window):
                    self._add_indirect(self.expression_origins(scope, p), GROUP_BY)
        elif group is not None and group.args.get("grouping_sets"):
            # GROUP BY a, b GROUPING SETS (..): the keys are what the sets group by (a key outside them all
            # is NULL in every row, no key of any row).
            nulls = self.null_keys(scope)
            for key in grouping_expressions(group):
                if plain_sql(key) not in nulls:
                    self._indirect_expr(scope, key, GROUP_BY)
        elif group is not None:
            self._indirect_expr(scope, group, GROUP_BY, key_parts(group))
        having = args.get("having")
        if having is not None:
            self._indirect_expr(scope, having.this, FILTER)
        qual = args.get("qualify")
        if qual is not None:
            self._indirect_expr(scope, qual.this, FILTER)
        for key in ("order", "sort", "cluster"):
            node = args.get(key)
            if node is None:
                continue
            if _orders_by_all(node):  # ORDER BY ALL: every projection, in order
                for p in e.expressions:
                    self._add_indirect(self.expression_origins(scope, p), SORT)
            else:
                self._indirect_expr(scope, node, SORT, key_parts(node))
        noted = self.noted
        for p in e.expressions:  # the projections no output column led to (most were noted on the way)
            if id(p) in noted:
                continue
            if type(p.this if type(p) is exp.Alias else p) in _PLAIN_VALUES:
                continue  # nothing in it can be a window or a condition
            refs: list[Ref] = []
            subs: list[exp.Expression] = []
            collect_refs(p, refs, subs, False, False, False, False)
            self.note_projection(scope, p, refs, subs)
        for src in self.sources(scope).values():
            if src.kind == "pivot":
                self._pivot_indirect(src)

    def _note_set_operation(self, scope: Scope, e: exp.SetOperation) -> None:
        """INTERSECT / EXCEPT: the right side's columns filter; ORDER BY: the columns it sorts by."""
        if isinstance(e, (exp.Intersect, exp.Except)) and len(scope.set_operation_scopes) > 1:
            right = scope.set_operation_scopes[1]
            for i, name in enumerate(self.outputs(right)):
                self._add_indirect(self.resolve(right, name, i), FILTER)
        order = e.args.get("order")
        if order is not None and _orders_by_all(order):  # ORDER BY ALL: every output column
            for i, name in enumerate(self.outputs(scope)):
                self._add_indirect(self.resolve(scope, name, i), SORT)
        elif order is not None:
            for col in order.find_all(exp.Column):
                if col.name in self.outputs(scope):
                    self._add_indirect(self.resolve(scope, col.name), SORT)

    def null_keys(self, scope: Scope) -> frozenset[str]:
        """The texts of the expressions ``GROUP BY a, b GROUPING SETS ((a))`` groups by outside every
        grouping set: Spark's Expand makes them NULL in every row, so they read no source column."""
        found = self._null_keys.get(scope)
        if found is None:
            group = grouping_sets_of(scope.expression)
            found = frozenset()
            if group is not None:
                in_sets = {plain_sql(e) for sets in group.args["grouping_sets"] for e in grouping_expressions(sets)}
                found = frozenset(plain_sql(e) for e in group.expressions) - in_sets
            self._null_keys[scope] = found
        return found

    def generated_key(self, scope: Scope, name: str) -> exp.Expression | None:
        """A grouping expression a later clause names by the name Spark gives it (``ORDER BY `(d + 1)```
        after ``GROUPING SETS (a, d + 1)``): the grouping analytics output it as a column of that name."""
        group = scope.expression.args.get("group") if isinstance(scope.expression, exp.Select) else None
        for key in grouping_expressions(group) if group is not None else ():
            if not isinstance(key, exp.Column) and spark_name(key, self.sql) == name:
                return key
        return None

    def note_projection(self, scope: Scope, proj: exp.Expression, refs: list[Ref],
                         subs: list[exp.Expression]) -> None:
        """A projection's CASE/IF conditions and window keys: indirect inputs of the statement,
        whether or not an output column reads the projection (Spark's plan keeps them all)."""
        self.noted.add(id(proj))
        for ref in refs:
            if ref.conditional:
                column = ref.column
                self._add_indirect(self._condition_column(scope, column.table, column.name), CONDITIONAL)
        for w in subs:
            if isinstance(w, exp.Window):
                for spec in _window_specs(w, scope.expression):
                    for part in spec.args.get("partition_by") or []:
                        self._indirect_expr(scope, part, WINDOW)
                    if spec.args.get("order") is not None:
                        self._indirect_expr(scope, spec.args["order"], WINDOW, key_parts(spec.args["order"]))

    def _pivot_indirect(self, src: Source) -> None:
        pivot: exp.Pivot = src.node
        keep, names, values = self.pivot_parts(src)
        scope = src.outer_scope
        if pivot.args.get("unpivot"):
            if pivot.args.get("include_nulls"):
                return
            for f in pivot.args.get("fields") or []:
                for c in f.find_all(exp.Column):
                    self._add_indirect(self.source_column(scope, src.inner, c.name), FILTER)
            return
        for c in keep if self.pivots_by_condition(src) else keep + names:
            self._add_indirect(self.source_column(scope, src.inner, c), GROUP_BY)
        for c in names:
            self._add_indirect(self.source_column(scope, src.inner, c), CONDITIONAL)
        for agg in pivot.expressions:  # an aggregate's CASE / IF conditions, as a projection's (``note_projection``)
            refs: list[Ref] = []
            collect_refs(agg.this if isinstance(agg, exp.Alias) else agg, refs, [], False, False, False, False)
            for ref in refs:
                if ref.conditional:
                    self._add_indirect(self.source_column(scope, src.inner, ref.column.name), CONDITIONAL)

    def _condition_column(self, scope: Scope, table: str, name: str, select_first: bool = False
                          ) -> frozenset[Origin]:
        """A column ``table.name`` read by a condition; ORDER BY sees the select list first, other clauses its
        sources. (Its names, not its node: ``column_origins``' reason.)"""
        if not table:
            proj = self.projections(scope).get(name)
            if proj is not None and (select_first or not self._owned(scope, name)):
                inner = proj.this if isinstance(proj, exp.Alias) else proj
                if not (isinstance(inner, exp.Column) and inner.name == name and not inner.table):
                    # A projection an output column led to is resolved already: what ``expression_origins``
                    # finds depends on the scope and the projection alone (its steps are remembered per node,
                    # scope and name, its warnings said once), so its origins then are its origins now.
                    found = self._projection_origins.get(id(proj))
                    return found if found is not None else self.expression_origins(scope, proj)
        return self.column_origins(scope, table, name)

    def _owned(self, scope: Scope, name: str) -> bool:
        for src in self.sources(scope).values():
            names = self.source_outputs(src)
            if names is not None and name.lower() in (n.lower() for n in names):
                return True
        return False

    def _indirect_expr(self, scope: Scope, node: exp.Expression, subtype: str,
                       parts: list[exp.Column] | None = None) -> None:
        """Columns a condition reads. A query inside it gives its outputs and is not entered: its own
        conditions are its own scope's (walking into it would read each nested query twice).
        ``parts``: what the walk of ``node`` finds, when known already (a WHERE's columns, ``where_columns``)
        or found faster (the keys of a GROUP BY / ORDER BY, ``key_parts``)."""
        select_first = subtype == SORT
        noted = self.conditions_noted
        other_keys = self._other_keys(scope, node) if self.using else _NO_IDS
        # What each part reads, noted together at the end: one ``_add_indirect``, not one per column (what
        # is noted is a set of inputs, the same whatever the order they are added in).
        read: list[Iterable[Origin]] = []
        add = read.append
        for n in _CONDITION_PARTS(node) if parts is None else parts:
            if other_keys and id(n) in other_keys:
                continue
            if isinstance(n, _COLUMN):  # most parts are columns: tested first
                # A column a condition of the scope read already, in the same role: its inputs are noted
                # (what it reads depends on the scope, its name and the role alone, ``_condition_column``).
                table, name = n.table, n.name
                key = (scope, table, name, subtype)
                if key not in noted and not isinstance(n.this, exp.Star):
                    noted.add(key)
                    # A qualified column, most of them, is its relation's whatever the clause: ``_condition_column``'s
                    # rule, called for the others only.
                    add(self.column_origins(scope, table, name) if table else
                        self._condition_column(scope, table, name, select_first))
            elif type(n) is exp.Dot:
                path, base = field_path(n)
                if path:  # a struct field: the field is the input, named by its path
                    add([o._replace(field=self.field_of(o, path)) if o.subtype == IDENTITY else o
                         for o in self._condition_column(scope, base.table, base.name, select_first)])
                else:
                    for c in n.find_all(exp.Column):
                        if not isinstance(c.this, exp.Star):
                            add(self._condition_column(scope, c.table, c.name, select_first))
            elif isinstance(n, (exp.Subquery, exp.Select, exp.SetOperation)):
                child = self.scope_of.get(id(n.this if isinstance(n, exp.Subquery) else n))
                if child is not None:
                    for i, name in enumerate(self.outputs(child)):
                        if name != "*":
                            add(self.resolve(child, name, i))
            # Grouping / GroupingId (pruned too): a bit of the grouping id, no source column.
        if read:
            self._add_indirect(chain.from_iterable(read), subtype)

    def _other_keys(self, scope: Scope, node: exp.Expression) -> set[int] | frozenset[int]:
        """The ids of the arguments of ``node``'s USING / NATURAL keys (``COALESCE(a.k, b.k)``) that are not the key
        Spark outputs, the side's: a condition that reads the key reads that side's column, not the other."""
        side = self.using.get(id(scope.expression))
        other_keys: set[int] = set()
        for c in node.find_all(exp.Coalesce) if side else ():
            key = using_key(c, side)
            if key is not c:
                other_keys |= {id(a) for a in (c.this, *c.expressions) if a is not key}
        return other_keys

    def _add_indirect(self, origins: Iterable[Origin], subtype: str) -> None:
        indirect = self.result.indirect
        for table, field, _, _, masking in origins:
            key = (table, field, subtype, masking)
            if key not in indirect:  # conditions name the same columns again and again: build each input once
                indirect[key] = _make_input(table, field, INDIRECT, subtype, "", masking)


def key_parts(clause: exp.Expression) -> list[Any]:
    """What ``_CONDITION_PARTS`` finds in a clause of keys (GROUP BY, ORDER BY), a key at a time: a column, or a
    column sorted (``ORDER BY c DESC``), the commonest keys, is its own part without a walk (a walk of ORDER BY
    went through each ``Ordered``'s four arguments).

    The same parts in the same order: the walk enters the clause and each ``Ordered`` (neither found nor
    pruned) and goes through their arguments in order, where flags are no nodes; a column is found and not
    entered. An ``Ordered``'s arguments but what it sorts are flags (``desc``, ``nulls_first``) or ``WITH FILL``:
    one with a fill is left to the walk, as is any key but a column."""
    parts: list[Any] = []
    for value in clause.args.values():
        for key in value if type(value) is list else (value,):
            kind = type(key)
            if kind is _ORDERED and key.args.get("with_fill") is None:
                key = key.this
                kind = type(key)
            if kind is _COLUMN:
                parts.append(key)
            elif isinstance(key, exp.Expr):
                parts += _CONDITION_PARTS(key)
    return parts


def grouping_sets_of(query: exp.Expression) -> exp.Group | None:
    """The GROUP BY of a select that has GROUPING SETS (``GROUP BY a, b GROUPING SETS (..)``), else ``None``."""
    group = query.args.get("group") if isinstance(query, exp.Select) else None
    return group if group is not None and group.args.get("grouping_sets") else None


def grouping_expressions(node: exp.Expression) -> list[exp.Expression]:
    """The expressions a GROUP BY clause (or one grouping set, CUBE, ROLLUP) groups by, flattened."""
    out: list[exp.Expression] = []
    for e in [*node.expressions, *(node.args.get("grouping_sets") or []), *(node.args.get("cube") or []),
              *(node.args.get("rollup") or [])] if isinstance(node, exp.Group) else node.expressions:
        while isinstance(e, exp.Paren):
            e = e.this
        if isinstance(e, (exp.GroupingSets, exp.Cube, exp.Rollup, exp.Tuple)):
            out.extend(grouping_expressions(e))
        else:
            out.append(e)
    return out


def _orders_by_all(order: exp.Expression) -> bool:
    items = order.expressions
    return len(items) == 1 and isinstance(items[0], exp.Ordered) and isinstance(items[0].this, exp.Var) \
        and items[0].this.name.upper() == "ALL"


def _window_specs(window: exp.Window, select: exp.Expression) -> list[exp.Expression]:
    """The window's own keys, and those of the named window it refers to (``OVER w``, ``WINDOW w AS
    (...)``; a named window may build on another, ``w2 AS (w1 ORDER BY ..)``)."""
    specs: list[exp.Expression] = [window]
    named = {str(d.this.name).lower(): d for d in (select.args.get("windows") or [])
             if isinstance(d, exp.Window) and isinstance(d.this, exp.Identifier)}
    ref = window.args.get("alias")
    seen: set[str] = set()
    while isinstance(ref, exp.Identifier) and ref.name.lower() in named and ref.name.lower() not in seen:
        seen.add(ref.name.lower())
        definition = named[ref.name.lower()]
        specs.append(definition)
        ref = definition.args.get("alias")
    return specs
