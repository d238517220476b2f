"""sqlglot's ``qualify_columns`` for the queries that need only its common steps, on scopes built once.

sqlglot's ``qualify_columns`` builds the query's scopes, then the resolver builds them again; its
steps for Spark are, per scope: columns given the source that has them, ``*`` expanded from the
schema, HAVING / QUALIFY columns told from output aliases, every output named, positional and
alias references of GROUP BY / ORDER BY written out. ``qualify_columns`` here takes those same
steps, in the same order and with the same calls, on one scope tree that the resolver then
reuses. A query that needs any other step (USING / NATURAL joins, pivots, laterals and table
functions, VALUES, a source of unknown schema, an alias reference to expand, a struct path, a
column alias list, a recursive CTE, ``* EXCEPT``, DISTINCT ON, ...) or one sqlglot would reject
is left as it was: ``None`` says to hand it to sqlglot's ``qualify_columns``. The tests hold the
two to the same trees on every corpus and TPC-DS query.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence
from weakref import WeakKeyDictionary

from sqlglot import exp
from sqlglot.errors import OptimizeError
from sqlglot.expressions import SAFE_IDENTIFIER_RE
from sqlglot.optimizer.scope import Scope, find_in_scope, traverse_scope, walk_in_scope
from sqlglot.schema import MappingSchema

from airflow_lineage_provider.lineage.sql.scopes import NotTakenError
from airflow_lineage_provider.lineage.sql.scopes import traverse_scope as noted_scopes

# Nodes of a GROUP BY that sqlglot looks into for grouped columns.
_GROUPING_CONTAINERS = (exp.Group, exp.GroupingSets, exp.Cube, exp.Rollup, exp.Tuple, exp.Paren)
_MISSING = object()
_NO_IDS: frozenset[int] = frozenset()


class _NotHereError(Exception):
    """The query needs a step of sqlglot's ``qualify_columns`` that is not taken here."""


def qualify_columns(query: exp.Expression, schema: MappingSchema,
                    noted: dict[int, list[exp.Expression]] | None = None) -> Scope | None:
    """Qualify ``query``'s columns as sqlglot's ``qualify_columns`` does; returns its root scope.

    ``noted``: what qualify's walk noted for the scopes (``scopes.py``), when it still holds for the tree.
    ``None``: the query is left as it was, for sqlglot's ``qualify_columns``.
    """
    undo: list[tuple[exp.Expression, str, Any]] = []
    try:
        scopes = None
        if noted is not None:
            try:
                scopes = noted_scopes(query, noted)
            except NotTakenError:
                pass
        if scopes is None:
            scopes = traverse_scope(query)
        if not scopes:
            return None
        tables = _TABLES.get(schema)
        if tables is None:
            tables = _TABLES[schema] = {}
        for scope in scopes:
            _Scope(scope, schema, undo, tables).qualify()
    except Exception:  # noqa: BLE001 - not a step taken here, a query sqlglot rejects, or a surprise: sqlglot's
        for node, key, old in reversed(undo):
            if key == "":  # a replacement: ``old`` is the node replaced
                node.replace(old)
            elif old is _MISSING:
                node.set(key, None)
            else:
                node.set(key, old)
                if old is None:
                    node.args[key] = None
        return None
    for scope in scopes:
        scope.clear_cache()  # what each scope collected before its columns changed
    return scopes[-1]


# Per schema (rebuilt whenever the catalog changes), per table's catalog, database and name: its columns, those
# as a set, and whether they are unknown (none, or a star): read by many scopes of many statements.
_Known = tuple[Sequence[str], frozenset[str], bool]
_TABLES: WeakKeyDictionary[MappingSchema, dict[tuple[str, str, str], _Known]] = WeakKeyDictionary()


_Make = Callable[..., exp.Identifier]
_Maker = tuple[_Make, tuple[Any, ...], str]  # ``make(*args)``: a new identifier; the name it holds
_Plan = tuple[_Make, tuple[Any, ...], "set[int] | frozenset[int]"]  # ``_Scope._plan``


def _identifier_of(args: dict[str, Any]) -> exp.Identifier:
    return exp.Identifier(**args)


_NAME_AND_QUOTED = ["this", "quoted"]  # the arguments ``to_identifier(name, quoted)`` gives, in its order


def _name_and_quoted(args: dict[str, Any]) -> dict[str, Any] | tuple[str, bool]:
    """An identifier's arguments as (name, quoted) when that is all they are: ``to_identifier(name, quoted)`` makes
    the same identifier (the same arguments, in that order) from them, with no keywords for the compiled
    ``Identifier`` to parse: ``Identifier(**args)`` costs half as much again (a column of a source gets one)."""
    if list(args) == _NAME_AND_QUOTED and type(args["this"]) is str and type(args["quoted"]) is bool:
        return args["this"], args["quoted"]
    return args


def _table_key(table: exp.Table) -> tuple[str, str, str] | None:
    """(catalog, database, name) of a table that has all three, else ``None``."""
    catalog, db = table.catalog, table.db
    return (catalog, db, table.name) if catalog and db else None


def _set(undo: list[tuple[exp.Expression, str, Any]], node: exp.Expression, key: str, value: Any) -> None:
    """``node.set(key, value)``, remembered so that it can be taken back."""
    undo.append((node, key, node.args.get(key, _MISSING)))
    node.set(key, value)


def _replace(undo: list[tuple[exp.Expression, str, Any]], old: exp.Expression, new: exp.Expression) -> None:
    """``old.replace(new)``, remembered."""
    if old.parent is None:
        return
    undo.append((new, "", old))
    old.replace(new)


class _Scope:
    """One scope's steps of ``qualify_columns`` (sqlglot's resolver, for what they ask of it)."""

    def __init__(self, scope: Scope, schema: MappingSchema, undo: list[tuple[exp.Expression, str, Any]],
                 tables: dict[tuple[str, str, str], _Known]) -> None:
        self.scope = scope
        self.schema = schema
        self.dialect = schema.dialect
        self.undo = undo
        self.tables = tables
        self._source_columns: dict[tuple[str, bool], Sequence[str]] = {}
        self._all: dict[str, Sequence[str]] | None = None
        self._sets: dict[str, frozenset[str]] = {}
        self._owners: dict[str, str | None] = {}
        self._all_sets: list[tuple[str, frozenset[str]]] | None = None
        self._makers: dict[str, _Maker] = {}

    # -- what sqlglot's resolver answers ------------------------------------------------------

    def source_columns(self, name: str, only_visible: bool = False) -> Sequence[str]:
        key = (name, only_visible)
        found = self._source_columns.get(key)
        if found is not None:
            return found
        scope = self.scope
        source = scope.sources.get(name)
        if source is None:
            raise _NotHereError(f"unknown table {name}")
        if isinstance(source, exp.Table):
            if source.args.get("pivots") or not isinstance(source.this, exp.Identifier):
                raise _NotHereError("pivot or table function")
            # Every table has its catalog and database by now: its parts name it alone.
            table_key = _table_key(source)
            known = self.tables.get(table_key) if table_key else None
            if known is None:
                columns = self.schema.column_names(source, only_visible)
                known = (columns, frozenset(columns), not columns or "*" in columns)
                if table_key:
                    self.tables[table_key] = known
            found, self._sets[name], unknown = known
        else:
            expression = source.expression
            if isinstance(expression, exp.SetOperation):
                if expression.args.get("on") or expression.args.get("side") or expression.args.get("kind"):
                    raise _NotHereError("set operation by name")
                found = expression.named_selects
            elif isinstance(expression, exp.Select):
                first = expression.expressions[0] if expression.expressions else None
                if isinstance(first, exp.QueryTransform):
                    raise _NotHereError("transform")
                found = expression.named_selects
            else:
                raise _NotHereError("values, unnest or lateral")
            unknown = not found or "*" in found
        node = scope.selected_sources.get(name)
        node = node[0] if node is not None else None
        if isinstance(node, exp.Expression) and node.alias_column_names:
            raise _NotHereError("column alias list")
        if unknown:
            raise _NotHereError("a source of unknown columns")
        self._source_columns[key] = found
        return found

    def name_set(self, name: str) -> frozenset[str]:
        """``source_columns(name)`` as a set (a table's, once per schema: ``source_columns`` notes it)."""
        found = self._sets.get(name)
        if found is None:
            columns = self.source_columns(name)  # its checks, in this scope
            found = self._sets.get(name)
            if found is None:
                found = self._sets[name] = frozenset(columns)
        return found

    def owner(self, name: str) -> str | None:
        """The one selected source that has a column ``name`` (``unambiguous(all_source_columns())``, asked
        per name: a scope's sources have a hundred columns, its query reads a few)."""
        found = self._owners.get(name, _MISSING)
        if found is _MISSING:
            sets = self._all_sets
            if sets is None:
                sets = self._all_sets = [(table, self.name_set(table)) for table in self.all_source_columns()]
            found = None
            for table, names in sets:
                if name in names:
                    if found is not None:  # two sources have it: ambiguous
                        found = None
                        break
                    found = table
            self._owners[name] = found
        return found  # type: ignore[return-value]

    def all_source_columns(self) -> dict[str, Sequence[str]]:
        if self._all is None:
            if self.scope.lateral_sources:
                raise _NotHereError("lateral")
            self._all = {name: self.source_columns(name) for name in self.scope.selected_sources}
        return self._all

    def unambiguous(self, sources: dict[str, Sequence[str]]) -> dict[str, str]:
        """Column name -> the one source that has it (sqlglot's ``_get_unambiguous_columns``)."""
        owners: dict[str, str] = {}
        shared: set[str] = set()
        for table, names in sources.items():
            for name in set(names):
                if name in owners:
                    shared.add(name)
                else:
                    owners[name] = table
        for name in shared:
            del owners[name]
        return owners

    def get_table(self, column: exp.Column) -> exp.Identifier | None:
        """The identifier of the source that has ``column`` (sqlglot's ``Resolver.get_table``, for
        scopes whose sources all have known columns)."""
        scope = self.scope
        name = column.name
        table_name = None
        if not scope.semi_or_anti_join_tables:  # no SEMI / ANTI join: where the column is does not matter
            table_name = self.owner(name)
            if table_name:
                return self._identifier(table_name)
        join = self._join_context(column)
        if join is None or not join.is_semi_or_anti_join:
            table_name = self.owner(name)
        if not table_name and join is not None:
            try:
                table_name = self.unambiguous(self._available(join)).get(name)
            except OptimizeError:
                table_name = None
        if not table_name:
            return None  # sqlglot's guess of an unknown table function: no source has unknown columns here
        return self._identifier(table_name)

    def _identifier(self, table_name: str) -> exp.Identifier:
        """A new identifier naming the source ``table_name`` in a column: its alias's (a copy), else its name."""
        make, args, _ = self._maker(table_name)
        return make(*args)

    def _maker(self, table_name: str) -> _Maker:
        """How ``_identifier`` makes the identifier of ``table_name`` (``make(*args)``) and the name it holds,
        worked out once per source."""
        found = self._makers.get(table_name)
        if found is None:
            selected = self.scope.selected_sources.get(table_name)
            node: exp.Expression | None = selected[0] if selected is not None else None
            if isinstance(node, exp.Query):
                while node and node.alias != table_name and node.parent:
                    node = node.parent
            alias = node.args.get("alias") if node is not None else None
            given = alias.this if alias else None
            if isinstance(given, exp.Identifier) and not given.comments:
                # A copy of it, but for the place in the text its meta keeps (a deep copy costs more than
                # the rest of the column's qualification).
                plain = _name_and_quoted(dict(given.args))
                found = (exp.to_identifier, plain, given.name) if type(plain) is tuple else \
                    (_identifier_of, (plain,), given.name)
            elif given is None or isinstance(given, str):
                # What ``to_identifier`` makes of a name, its pattern matched once, not once per column.
                name = table_name if given is None else given
                found = (exp.to_identifier, (name, not SAFE_IDENTIFIER_RE.match(name)), name)
            else:
                found = (exp.to_identifier, (given,), given.name)
            self._makers[table_name] = found
        return found

    def _plan(self, owner: str) -> _Plan:
        """What ``_columns`` gives a column of no table that source ``owner`` alone has, worked out once per
        source: how to make its identifier, and the ids of the columns that get none (``column_index``: the
        source is a scope, and they are its own columns)."""
        make, args, name = self._maker(owner)
        source = self.scope.sources.get(name)
        return make, args, source.column_index if isinstance(source, Scope) else _NO_IDS

    def _join_context(self, column: exp.Column) -> exp.Join | None:
        args = self.scope.expression.args
        if not args.get("joins") or args.get("laterals") or args.get("pivots"):
            return None
        ancestor = column.find_ancestor(exp.Join, exp.Select)
        if isinstance(ancestor, exp.Join):
            name = ancestor.alias_or_name
            if name in self.scope.selected_sources or name in self.scope.semi_or_anti_join_tables:
                return ancestor
        return None

    def _available(self, join: exp.Join) -> dict[str, Sequence[str]]:
        args = self.scope.expression.args
        first = args["from_"].alias_or_name
        available = {first: self._visible(first)}
        for other in args["joins"][: join.index + 1]:
            if other is join or not other.is_semi_or_anti_join:
                available[other.alias_or_name] = self._visible(other.alias_or_name)
        return available

    def _visible(self, name: str) -> Sequence[str]:
        if name not in self.scope.sources:
            raise OptimizeError(f"Unknown table: {name}")
        return self.source_columns(name)

    # -- the steps ----------------------------------------------------------------------------

    def qualify(self) -> None:
        scope = self.scope
        expression = scope.expression
        select = isinstance(expression, exp.Select)
        if not select and not isinstance(expression, exp.SetOperation):
            raise _NotHereError("neither a select nor a set operation")
        self._check(select)
        self._columns()
        scope.clear_column_cache()  # as sqlglot does: an outer scope reads this one's columns as they are now
        if select:
            self._stars()
            self._having_and_qualify()
            self._outputs()
            self._group_by()
        self._order_by()

    def _check(self, select: bool) -> None:
        """What ``qualify_columns`` would do here that is not done here: bail out."""
        scope = self.scope
        expression = scope.expression
        if scope.comprehensions or scope.lateral_sources or scope.udtf_scopes or scope.table_columns:
            raise _NotHereError("comprehension, lateral or table function")
        for node in (*scope.ctes, *scope.derived_tables):
            alias = node.args.get("alias")
            if alias is not None and alias.args.get("columns"):
                raise _NotHereError("column alias list")
            if alias is not None and "columns" in alias.args:
                _set(self.undo, alias, "columns", None)  # as ``_pop_table_column_aliases`` leaves it
        for cte in scope.ctes:
            if isinstance(cte.parent, exp.With) and cte.parent.args.get("recursive"):
                raise _NotHereError("recursive")
        if scope.outer_columns:
            raise _NotHereError("column alias list")
        selected = scope.selected_sources  # raises OptimizeError for an alias used twice
        if scope.pivots:
            raise _NotHereError("pivot")
        if select:
            joins = expression.args.get("joins") or []
            names = {join.alias_or_name for join in joins}
            for join in joins:
                if join.args.get("using") or join.method == "NATURAL":
                    raise _NotHereError("using")
            if names and names.issuperset(selected):
                raise _NotHereError("joins with no source table")
            for p in expression.expressions:
                if isinstance(p, exp.QueryTransform):
                    raise _NotHereError("transform")
            distinct = expression.args.get("distinct")
            if distinct is not None and distinct.args.get("on") is not None:
                raise _NotHereError("distinct on")
        self.all_source_columns()  # every selected source has known columns, or bail

    def _columns(self) -> None:
        """``_convert_columns_to_dots`` (none to convert) and ``_qualify_columns``."""
        scope = self.scope
        selected = scope.selected_sources
        sources = scope.sources
        parent = scope.parent
        expression = scope.expression
        aliases: set[str] | None = None  # the output aliases, worked out for the first column no source has
        for column in scope.stars:
            if not isinstance(column, exp.Column) or column.args.get("db") is not None or \
                    (column.table and column.table not in selected):
                raise _NotHereError("struct star")
        column_class = exp.Column
        semi = scope.semi_or_anti_join_tables
        owners = self._owners
        plans: dict[str, _Plan] = {}  # per source
        sets = self._sets
        undo = self.undo
        for column in _scope_columns(scope):
            args = column.args
            if type(column) is not column_class or ("db" in args and args["db"] is not None):
                raise _NotHereError("struct path")
            table = column.table
            name = column.name
            if table:
                if table not in selected and not (parent is not None and table in parent.sources
                                                  and scope.is_correlated_subquery):
                    raise _NotHereError("struct path")  # sqlglot makes it a Dot
                if table in sources:
                    names = sets.get(table)
                    if name not in (names if names is not None else self.name_set(table)):
                        raise _NotHereError("unknown column")
                continue
            if not semi:  # ``get_table``'s first step and the steps below, without their calls
                owner = owners.get(name, _MISSING)
                if owner is _MISSING:
                    owner = self.owner(name)
                if owner:
                    plan = plans.get(owner)
                    if plan is None:
                        plan = plans[owner] = self._plan(owner)
                    make, made_args, kept = plan
                    if id(column) not in kept:  # ``_set``, inline: most columns come here
                        undo.append((column, "table", args.get("table", _MISSING)))
                        column.set("table", make(*made_args))
                    continue
            identifier = self.get_table(column)
            if identifier is None:
                # An outer column or an ambiguous one: left as it is, as sqlglot does. An alias
                # (``SELECT a + 1 AS b .. WHERE b > 0``): sqlglot writes its expression in.
                if aliases is None:
                    aliases = {p.alias for p in expression.expressions if isinstance(p, exp.Alias)} \
                        if isinstance(expression, exp.Select) else set()
                if name in aliases:
                    raise _NotHereError("alias reference")
                continue
            source = sources.get(identifier.name)
            if isinstance(source, Scope) and id(column) in source.column_index:
                continue
            _set(undo, column, "table", identifier)

    def _stars(self) -> None:
        """``_expand_stars``: ``*`` and ``t.*`` from the sources' columns."""
        scope = self.scope
        if not scope.stars and not scope.scans_all_subscope_columns:
            # No projection to expand, its projections not looked at: a ``*`` projection is a star of the scope
            # outside any aggregate (it sets ``scans_all_subscope_columns``), a ``t.*`` one is one of its ``stars``.
            return
        expression = scope.expression
        new: list[exp.Expression] = []
        expanded = False
        for projection in expression.expressions:
            if isinstance(projection, exp.Star):
                star = projection
                tables = list(scope.selected_sources)
            elif isinstance(projection, exp.Column) and isinstance(projection.this, exp.Star):
                star = projection.this
                tables = [projection.table]
            else:
                new.append(projection)
                continue
            if any(star.args.get(k) for k in ("ilike", "except_", "replace", "rename")):
                raise _NotHereError("star modifiers")
            expanded = True
            for table in tables:
                source = scope.sources.get(table)
                if source is None:
                    raise _NotHereError("star of an outer or pivoted source")
                names = self.source_columns(table, only_visible=True)
                if len(names) != len(set(names)):
                    raise _NotHereError("duplicate columns under a star")
                quoted_names: set[str] = set()
                if isinstance(source, Scope) and isinstance(source.expression, exp.Query):
                    quoted_names = {s.output_name for s in source.expression.selects if _quoted_output(s)}
                table_source = isinstance(source, exp.Table)
                for name in names:
                    quoted = name in quoted_names or (table_source and self.dialect.case_sensitive(name))
                    new.append(exp.column(name, table=table, quoted=quoted))
        if expanded:
            _set(self.undo, expression, "expressions", new)
            scope.clear_cache()

    def _having_and_qualify(self) -> None:
        """``_expand_alias_refs`` where it does something once columns are qualified: HAVING and QUALIFY
        columns no source qualified (the others have their table already)."""
        expression = self.scope.expression
        having = expression.args.get("having")
        qualify = expression.args.get("qualify")
        if having is None and qualify is None:
            return
        aliases: dict[str, exp.Expression] = {}
        for p in expression.expressions:
            if isinstance(p, exp.Alias):
                aliases[p.alias] = p.this
        grouped: set[tuple[str, str]] = set()
        group = expression.args.get("group")
        if having is not None and group is not None:
            selects = expression.selects
            for grouping in group.walk(prune=lambda n: not isinstance(n, _GROUPING_CONTAINERS)):
                if isinstance(grouping, exp.Literal) and grouping.is_int:
                    index = int(grouping.to_py()) - 1
                    if 0 <= index < len(selects):
                        grouping = selects[index].unalias().unnest()
                if isinstance(grouping, exp.Column):
                    grouped.add((grouping.table, grouping.name))
        for node, is_having in ((having, True), (qualify, False)):
            if node is None:
                continue
            for column in list(walk_in_scope(node, prune=lambda n: n.is_star)):
                if not isinstance(column, exp.Column) or column.table:
                    continue
                table = self.get_table(column)
                alias_expr = aliases.get(column.name)
                skip = alias_expr is not None and find_in_scope(alias_expr, exp.AggFunc) is not None and \
                    column.find_ancestor(exp.AggFunc) is not None and \
                    not isinstance(column.find_ancestor(exp.Window, exp.Select), exp.Window)
                prefer_column = True
                if table is not None and is_having:
                    prefer_column = isinstance(column.find_ancestor(exp.AggFunc, exp.Having), exp.AggFunc) or (
                        table.name, column.name) in grouped
                if table is not None and (alias_expr is None or skip or prefer_column):
                    _set(self.undo, column, "table", table)
                elif alias_expr is not None and not skip:
                    raise _NotHereError("alias reference")

    def _outputs(self) -> None:
        """``qualify_outputs``: every output column named."""
        expression = self.scope.expression
        dialect = self.dialect
        new: list[exp.Expression] = []
        changed = False
        alias_class, column_class, identifier_class = exp.Alias, exp.Column, exp.Identifier
        for i, selection in enumerate(expression.expressions):
            kind = type(selection)
            if kind is alias_class:
                pass
            elif kind is column_class and type(selection.this) is identifier_class:
                # The commonest unnamed output, named as below without ``alias_``'s parsing and checks.
                source = selection.this
                name = source.this or f"_col_{i}"
                selection = alias_class(this=selection, alias=exp.to_identifier(  # no keywords: ``_name_and_quoted``
                    name, bool(source.quoted) or not SAFE_IDENTIFIER_RE.match(name)))
                changed = True
            elif isinstance(selection, exp.Subquery):
                if not selection.output_name:
                    identifier = exp.to_identifier(f"_col_{i}")
                    dialect.normalize_identifier(identifier)
                    _set(self.undo, selection, "alias", exp.TableAlias(this=identifier))
            elif not isinstance(selection, (exp.Alias, exp.Aliases)) and not selection.is_star:
                unwrapped = selection.unnest()
                if isinstance(unwrapped, exp.Column):
                    source_identifier = unwrapped.this
                elif isinstance(unwrapped, exp.Dot):
                    source_identifier = unwrapped.expression
                else:
                    source_identifier = None
                selection = exp.alias_(selection, alias=selection.output_name or f"_col_{i}", copy=False)
                if isinstance(source_identifier, exp.Identifier):
                    if source_identifier.quoted:
                        selection.args["alias"].set("quoted", True)
                else:
                    dialect.normalize_identifier(selection.args["alias"])
                changed = True
            new.append(selection)
        if changed:
            _set(self.undo, expression, "expressions", new)

    def _group_by(self) -> None:
        """``_expand_group_by``: ``GROUP BY 1`` written as the first projection."""
        expression = self.scope.expression
        group = expression.args.get("group")
        if group is None:
            return
        new: list[exp.Expression] = []
        changed = False
        for node in group.expressions:
            if node.is_int and isinstance(node, exp.Literal):
                select = self._by_position(node)
                value = select.this
                if isinstance(value, exp.CONSTANTS) or value.is_number or value.find(exp.Explode, exp.Unnest):
                    new.append(node)
                    continue
                if value.find(exp.Query):
                    raise _NotHereError("a positional key holding a query")
                new.append(value.copy())
                changed = True
            else:
                new.append(node)
        if changed:
            _set(self.undo, group, "expressions", new)

    def _by_position(self, node: exp.Literal) -> exp.Alias:
        selects = self.scope.expression.selects
        position = int(node.this) - 1
        if not 0 <= position < len(selects) or not isinstance(selects[position], exp.Alias):
            raise _NotHereError("position")
        return selects[position]

    def _order_by(self) -> None:
        """``_expand_order_by_and_distinct_on`` for ORDER BY (DISTINCT ON is not Spark's)."""
        expression = self.scope.expression
        order = expression.args.get("order")
        if not isinstance(order, exp.Expression):
            return
        seen: set[str] = set()
        repeated: set[str] = set()
        for name in expression.named_selects:
            (repeated if name in seen else seen).add(name)
        alias_names = seen - repeated  # the names of one projection each
        keys = [ordered.this for ordered in order.expressions]
        for original in keys:
            expanded = original
            if original.is_int and isinstance(original, exp.Literal):
                select = self._by_position(original)
                if select.alias in alias_names:
                    expanded = exp.column(select.args["alias"].copy())
            # A column or a literal, the commonest keys, holds no aggregate: not walked.
            for agg in () if type(original) in _LEAF_KEYS else original.find_all(exp.AggFunc):
                for column in agg.find_all(exp.Column):
                    if not column.table:
                        table = self.get_table(column) if isinstance(expression, exp.Select) else None
                        if table:
                            _set(self.undo, column, "table", table)
            if original is not expanded:
                _replace(self.undo, original, expanded)
        if expression.args.get("group"):
            # sqlglot's ``{s.this: s for s in selects}.get(node)``: the last projection equal to the key. Equal
            # nodes are of one class, and equal columns of one name (their hash reads it in lower case): only
            # those are compared (hashing every projection costs more), found by class and name at once.
            alike: dict[tuple[type, str | None], list[exp.Expression]] = {}
            for s in expression.selects:
                if s.alias_or_name in alias_names:
                    this = s.this
                    kind = type(this)
                    alike.setdefault((kind, this.name.lower() if kind is exp.Column else None), []).append(s)
            for node in keys:
                if not node.is_int:
                    kind = type(node)
                    candidates = alike.get((kind, node.name.lower() if kind is exp.Column else None))
                    replacement = next((s for s in reversed(candidates) if s.this == node), None) \
                        if candidates else None
                    if replacement is not None:
                        _replace(self.undo, node, exp.column(replacement.alias_or_name))


class _IsSubclass(dict[type, bool]):
    """Per class, whether it is a subclass of ``classes``, worked out on its first lookup: read by a subscript
    alone (no ``get``, no test for a class not seen yet), as it is read per node."""

    def __init__(self, classes: tuple[type, ...]) -> None:
        super().__init__()
        self.classes = classes

    def __missing__(self, kind: type) -> bool:
        found = self[kind] = issubclass(kind, self.classes)
        return found


# The nodes ``Scope.columns`` looks up to from a column, and per class whether it is one: a column of a long
# WHERE sits below a dozen nodes, and a class looked up costs a fifth of an ``isinstance`` on nine classes.
_CONTEXTS = (exp.Select, exp.Qualify, exp.Order, exp.Cluster, exp.Having, exp.Hint, exp.Table, exp.Star, exp.Distinct)
_IS_CONTEXT = _IsSubclass(_CONTEXTS)
# The clauses of a select below which sqlglot may leave a column out of the scope's columns.
_CLAUSES = (exp.Qualify, exp.Order, exp.Cluster, exp.Having, exp.Hint, exp.Distinct)
_IS_CLAUSE = _IsSubclass(_CLAUSES)  # per class, whether it is one (a class looked up costs less than six checks)
_LEAF_KEYS = frozenset({exp.Column, exp.Literal})  # ORDER BY keys that hold no other expression


def _scope_columns(scope: Scope) -> list[exp.Column]:
    """sqlglot's ``Scope.columns`` (its columns, and those of subqueries that read its sources), computed
    as it computes them but for the nearest context node, found by class (with its ``find_ancestor``, 6%
    of a static extraction), and only for the columns that may be left out. Reads the columns the scope
    collected (``_raw_columns``): were that renamed, the query goes to sqlglot's ``qualify_columns``."""
    expression = scope.expression
    scope.stars  # noqa: B018 - the scope collects its nodes once, on the first such read
    external = [column for child in (*scope.subquery_scopes, *scope.udtf_scopes,
                                     *(s for s in scope.derived_table_scopes if s.can_be_correlated))
                for column in _external_columns(child)] \
        if scope.subquery_scopes or scope.udtf_scopes or scope.derived_table_scopes else []
    raw = scope._raw_columns
    # sqlglot leaves a column of the scope out only below a HAVING, QUALIFY or hint, an ORDER BY, CLUSTER BY
    # or DISTINCT of the select itself (those of a window or a call keep theirs), a table function or a
    # star's EXCEPT. A scope with no table function and no star (``scans_all_subscope_columns`` tells a star)
    # has those only as its expression's own clauses: only their columns are tested, the others are its
    # columns (most scopes have no such clause; the others have few columns in it).
    if scope.scans_all_subscope_columns or scope.join_hints or any(
            type(table.this) is not exp.Identifier for table in scope.tables):
        tested: set[int] | None = None
    else:
        is_clause = _IS_CLAUSE
        clauses = []
        for value in expression.args.values():
            if is_clause[type(value)]:
                clauses.append(value)
        if not clauses:
            if not external:
                return list(raw)
            tested = set()
        else:
            tested = {id(node) for clause in clauses for node in walk_in_scope(clause) if type(node) is exp.Column}
    named = set(expression.named_selects) if isinstance(expression, exp.Query) else set()
    if tested is None:
        return [column for column in (*raw, *external) if _kept(column, named)]
    return [column for column in raw if id(column) not in tested or _kept(column, named)] + \
        [column for column in external if _kept(column, named)]


def _kept(column: exp.Column, named_selects: set[str]) -> bool:
    """sqlglot's test of whether ``Scope.columns`` keeps a column of a scope whose query names ``named_selects``."""
    is_context = _IS_CONTEXT
    ancestor = column.parent
    while ancestor is not None:
        if is_context[type(ancestor)]:
            break
        ancestor = ancestor.parent
    return bool(  # sqlglot's test, its commonest case first (a column of the select itself)
        ancestor is None
        or type(ancestor) is exp.Select
        or column.text("table")
        or isinstance(ancestor, exp.Select)
        or (isinstance(ancestor, exp.Table) and not isinstance(ancestor.this, exp.Func))
        or (
            isinstance(ancestor, (exp.Order, exp.Cluster, exp.Distinct))
            and (
                isinstance(ancestor.parent, (exp.Window, exp.WithinGroup))
                or not isinstance(ancestor.parent, exp.Select)
                or column.name not in named_selects
            )
        )
        or (isinstance(ancestor, exp.Star) and not column.arg_key == "except_")
    )


def _external_columns(scope: Scope) -> list[exp.Column]:
    """sqlglot's ``Scope.external_columns``, on ``_scope_columns``."""
    if isinstance(scope.expression, exp.SetOperation):
        left, right = scope.set_operation_scopes
        return _external_columns(left) + _external_columns(right)
    local = {name for name, _ in scope.references}
    semi = scope.semi_or_anti_join_tables
    return [c for c in _scope_columns(scope) if (table := c.text("table")) not in local and table not in semi]


def _quoted_output(selection: exp.Expression) -> bool:
    if isinstance(selection, exp.Alias):
        identifier = selection.args.get("alias")
    elif isinstance(selection, exp.Column):
        identifier = selection.this
    else:
        identifier = None
    return isinstance(identifier, exp.Identifier) and bool(identifier.quoted)


