"""One query's scopes resolved top-down: every output column to the base-table columns it comes from.

Through CTEs, subqueries, set operations, generators and pivots (``pivot.py``); the
statement's indirect inputs are noted on the way (``conditions.py``). What SQL text cannot
tell is said, not guessed: a ``*`` over a table with no schema stays unexpanded and an
unqualified column two tables could own is reported as ambiguous, each with a warning and a
confidence below 1.
"""

from __future__ import annotations

import re

from sqlglot import exp
from sqlglot.optimizer.scope import Scope, ScopeType, build_scope

from airflow_lineage_provider.lineage import naming
from airflow_lineage_provider.lineage.model import (
    AGGREGATION,
    FILTER,
    IDENTITY,
    TRANSFORMATION,
    Origin,
    origin,
    stronger,
    widens,
)
from airflow_lineage_provider.lineage.sql.catalog import Catalog, NamedTable, ViewLineage, spelled_path
from airflow_lineage_provider.lineage.sql.conditions import Conditions, grouping_sets_of
from airflow_lineage_provider.lineage.sql.pivot import Pivots
from airflow_lineage_provider.lineage.sql.qualify import FILE_FORMATS, using_key
from airflow_lineage_provider.lineage.sql.render import cast_call, plain_sql, render, spark_name
from airflow_lineage_provider.lineage.sql.roles import Ref, collect_refs, field_path, norm_type
from airflow_lineage_provider.lineage.sql.shared import PARTIAL_CONFIDENCE, UNCHECKED_CONFIDENCE, Result, Source
from airflow_lineage_provider.lineage.sql.widening import arithmetic_type, common_type, literal_type

_UNNAMED = re.compile(r"_col_\d+")  # qualify's name for an output column the query leaves unnamed
_NONE: frozenset[Origin] = frozenset()  # no origin (one object, not one made per call)
_NO_KEYS: frozenset[str] = frozenset()  # ``null_keys`` of a statement without GROUPING SETS
_GROUPING_ID = "grouping__id"  # the column Spark's grouping analytics add: which grouping set a row is of


class Resolver(Conditions, Pivots):
    """Resolves every output column of one qualified query, top-down through its scopes.

    Each step is memoized per (scope, column): one pass per statement, never one per column.
    """

    def __init__(self, catalog: Catalog, sql: str, text: str, query: exp.Expression,
                 using: dict[int, str] | None = None, root: Scope | None = None,
                 where_columns: dict[int, list[exp.Column]] | None = None) -> None:
        """``text``: ``sql`` lower-cased; ``root``: the query's scopes, when qualification built them
        (``sql/columns.py``); ``where_columns``: the columns of WHERE clauses qualification found
        (``qualify.where_columns``)."""
        self.sql = sql
        self.using = using or {}
        self.catalog = catalog
        self.query = query
        self.root = root if root is not None else build_scope(query)
        self.scopes: list[Scope] = list(self.root.traverse()) if self.root is not None else []  # walked once
        self.scope_of: dict[int, Scope] = {id(s.expression): s for s in self.scopes}
        self.result = Result([])
        # Memos per scope are keyed by the scope itself: sqlglot's Scope is hashed and compared by identity, as
        # its id would be (no ``id()`` call per look-up), and the scopes live as long as the resolver (``scopes``).
        self._memo: dict[tuple[Scope, str | int], frozenset[Origin]] = {}
        # Per projection (its id), the origins ``resolve`` found for it: what a clause naming it by its alias
        # reads again (``ORDER BY total``), as ``expression_origins`` would find them anew (``_condition_column``).
        self._projection_origins: dict[int, frozenset[Origin]] = {}
        self._sources: dict[Scope, dict[str, Source]] = {}
        self._projections: dict[Scope, dict[str, exp.Expression]] = {}
        self._outputs: dict[Scope, list[str]] = {}
        self._pending: dict[str, exp.Expression] = {}  # expressions whose text is asked for (``render``)
        self._src_memo: dict[tuple[int, str], frozenset[Origin]] = {}
        self._column_memo: dict[tuple[Scope, str, str], frozenset[Origin]] = {}
        self._tables: dict[tuple[str, str, str], NamedTable] = {}
        self.noted: set[int] = set()  # projections whose conditions and window keys are noted
        self.conditions_noted: set[tuple[Scope, str, str, str]] = set()  # (scope, table, column, subtype) noted
        self.where_columns = where_columns or {}
        self._views_noted: set[str] = set()
        self._unknown_tables: set[str] = set()
        self._null_keys: dict[Scope, frozenset[str]] = {}  # per scope (``Conditions.null_keys``)
        # Only a query with GROUPING SETS has keys that are NULL in every row: told once, not asked per expression.
        self._grouping_sets = any(grouping_sets_of(s.expression) is not None for s in self.scopes)
        self._types: dict[tuple[Scope, int], str | None] = {}  # per scope and position (``output_type``)
        self._keyed_names = "[" in sql or "json" in text  # projections qualify names after a key (``_unnamed``)

    def run(self) -> Result:
        if self.root is None:
            self.warn("the statement has no query the static extractor understands")
            return self.result
        root, columns = self.root, self.result.columns
        names = self.outputs(root)
        spark_names = self._spark_names(root)
        for i, name in enumerate(names):
            if name == "*":
                continue
            try:
                origins = self.resolve(root, name, i)
            except RecursionError:
                raise
            except Exception as e:  # noqa: BLE001 - one column the extractor cannot read costs that column only
                self.warn(f"column {spark_names.get(i, name)}: {_unreadable(self._projection(i), e)}")
                origins = frozenset()
            columns.append((spark_names.get(i, name), origins))
        for scope in self.scopes:
            try:
                self.note_indirect(scope)
            except RecursionError:
                raise
            except Exception as e:  # noqa: BLE001 - nor do one query's conditions
                self.warn(f"the conditions of a query: {_unreadable(scope.expression, e)}")
        self._finish_texts()
        if self._unknown_tables:
            self.warn(f"no schema for {', '.join(sorted(self._unknown_tables))}: columns taken as the query names "
                      f"them, unchecked", UNCHECKED_CONFIDENCE)
        return self.result

    def warn(self, message: str, confidence: float = PARTIAL_CONFIDENCE) -> None:
        self.result.confidence = min(self.result.confidence, confidence)
        if message not in self.result.warnings:
            self.result.warnings.append(message)

    # -- outputs ------------------------------------------------------------------------------

    def outputs(self, scope: Scope) -> list[str]:
        out = self._outputs.get(scope)
        if out is None:
            e = scope.expression
            if isinstance(e, exp.SetOperation):
                out = self.outputs(scope.set_operation_scopes[0]) if scope.set_operation_scopes else []
            elif isinstance(e, exp.Select):
                out = []
                for p in e.expressions:
                    if type(p) is exp.Alias:  # no star: the common case (qualify names the projections), told first
                        out.append(p.alias_or_name)
                        continue
                    if isinstance(p, exp.Star) and self._leaves_out_all(scope, p):
                        continue  # ``* EXCEPT (a, t.b)`` of every column there is: no column (qualify keeps it)
                    if isinstance(p, exp.Star) or (isinstance(p, exp.Column) and isinstance(p.this, exp.Star)):
                        out.append("*")
                        table = p.table if isinstance(p, exp.Column) else ""
                        self.warn(f"{(table + '.') if table else ''}* not expanded: no schema for "
                                  f"{self._star_owner(scope, table)}; its columns are not in the lineage")
                    else:
                        out.append(p.alias_or_name)
            else:
                out = []
            self._outputs[scope] = out
        return out

    def _leaves_out_all(self, scope: Scope, star: exp.Star) -> bool:
        left_out = {e.name.lower() for e in star.args.get("except_") or []}
        if not left_out:
            return False
        for src in self.sources(scope).values():
            if src.hidden:
                continue
            names = self.source_outputs(src)
            if names is None or any(n.lower() not in left_out for n in names):
                return False
        return True

    def _star_owner(self, scope: Scope, table: str) -> str:
        srcs = self.sources(scope)
        names = [s.name or a for a, s in srcs.items() if (not table or a == table)]
        return ", ".join(sorted(n for n in names if n)) or "its source"

    def projections(self, scope: Scope) -> dict[str, exp.Expression]:
        out = self._projections.get(scope)
        if out is None:
            # Last first, so that the first projection of a name wins; a name as written before the same in
            # lower case (a struct's field a star spread keeps the type's case).
            named = [(p.alias_or_name, p) for p in reversed(scope.expression.expressions)]
            out = {name.lower(): p for name, p in named}
            out.update(named)
            self._projections[scope] = out
        return out

    def _spark_names(self, scope: Scope) -> dict[int, str]:
        """Spark's names for output columns the query leaves unnamed (``sum(x)``, ``(a + b)``)."""
        while isinstance(scope.expression, exp.SetOperation) and scope.set_operation_scopes:
            scope = scope.set_operation_scopes[0]
        if not isinstance(scope.expression, exp.Select):
            return {}
        out = {}
        for i, p in enumerate(scope.expression.expressions):
            node = _unnamed(p, self.sql)
            if node is None:
                below = self._unnamed_below(scope, p)
                if below is not None:
                    node = self._outer_named(*below)
            if node is not None:
                try:
                    out[i] = spark_name(self._dates_shifted(scope, node), self.sql)
                except RecursionError:
                    raise
                except Exception as e:  # noqa: BLE001 - the column keeps qualify's name, and says why
                    self.warn(f"column {p.alias}: the name Spark gives it is unknown: {_unreadable(p.this, e)}")
        return out

    def _dates_shifted(self, scope: Scope, node: exp.Expression) -> exp.Expression:
        """``d + 1``, ``d - n`` of a DATE column and a whole number: Spark's ``date_add(d, 1)`` / ``date_sub(d, n)``,
        which it names so (a copy of ``node`` so written; ``node`` itself when it has none)."""
        if node.find(exp.Add, exp.Sub) is None:
            return node
        copy = node.copy()
        for n in list(copy.find_all(exp.Add, exp.Sub)):
            left, right = n.this, n.expression
            if isinstance(n, exp.Add) and isinstance(right, exp.Column) and not isinstance(left, exp.Column):
                left, right = right, left  # 1 + d: date_add(d, 1)
            if isinstance(left, exp.Column) and self.column_type(scope, left) == "date" and self._whole(scope, right):
                name = "date_add" if isinstance(n, exp.Add) else "date_sub"
                call = exp.Anonymous(this=name, expressions=[left, right])
                if n is copy:
                    return call
                n.replace(call)
        return copy

    def _whole(self, scope: Scope, node: exp.Expression) -> bool:
        """Whether ``node`` is a whole number: an integer literal or a column of an integer type."""
        if isinstance(node, exp.Literal):
            return node.is_int
        return isinstance(node, exp.Column) and self.column_type(scope, node) in ("tinyint", "smallint", "int")

    def _unnamed_below(self, scope: Scope, p: exp.Expression, depth: int = 0
                       ) -> tuple[exp.Expression, Scope] | None:
        """``SELECT * FROM (SELECT sum(x) OVER (..) FROM t)``: a column a star brings up from a subquery
        that left it unnamed is named as Spark named it there (with the scope that names it)."""
        column = p.this if isinstance(p, exp.Alias) else p
        if type(column) is not exp.Column or depth > 20:
            return None
        # qualify names an unnamed projection _col_<i>, or after its key (``arr[0]``, a JSON path): only a
        # statement that has brackets or a JSON path can have the latter, which a text test tells
        if not _UNNAMED.fullmatch(column.name) and not self._keyed_names:
            return None
        src = self.sources(scope).get(column.table)
        if src is None or src.kind != "scope":
            return None
        below = src.node
        while isinstance(below.expression, exp.SetOperation) and below.set_operation_scopes:
            below = below.set_operation_scopes[0]  # a set operation's columns are named by its first query
        if not isinstance(below.expression, exp.Select):
            return None
        inner = self.projections(below).get(column.name)
        if inner is None:
            return None
        named = _unnamed(inner, self.sql)
        return (named, below) if named is not None else self._unnamed_below(below, inner, depth + 1)

    def _outer_named(self, node: exp.Expression, scope: Scope) -> exp.Expression:
        """Spark names a column of an enclosing query read in a LATERAL subquery ``outer(db.t.c)``: the
        expression with such columns written so (a copy), else the expression itself."""
        outer = [c for c in node.find_all(exp.Column) if c.table and c.table not in self.sources(scope)]
        if not outer or _outer(scope) is None:
            return node
        copy = node.copy()
        for column in [c for c in copy.find_all(exp.Column) if c.table and c.table not in self.sources(scope)]:
            s, src = _outer(scope), None
            while s is not None and src is None:
                src = self.sources(s).get(column.table)
                s = _outer(s) if src is None else s
            owner = src.name if src is not None and src.kind == "table" and src.name and \
                src.node.alias_or_name == src.node.name else column.table
            column.replace(exp.Var(this=f"outer({owner}.{column.name})"))
        return copy

    def _projection(self, position: int) -> exp.Expression | None:
        scope = self.root
        while scope is not None and isinstance(scope.expression, exp.SetOperation) and scope.set_operation_scopes:
            scope = scope.set_operation_scopes[0]
        items = scope.expression.expressions if scope is not None and isinstance(scope.expression, exp.Select) else []
        return items[position] if position < len(items) else None

    # -- sources -----------------------------------------------------------------------------

    def sources(self, scope: Scope) -> dict[str, Source]:
        out = self._sources.get(scope)
        if out is not None:
            return out
        out = {}
        self._sources[scope] = out
        sel = scope.expression
        if not isinstance(sel, exp.Select):
            return out
        items: list[exp.Expression] = []
        frm = sel.args.get("from_") or sel.args.get("from")
        if frm is not None:
            items.append(frm.this)
        for j in sel.args.get("joins") or []:
            items.append(j.this)
        for item in items:
            src: Source | None = None
            alias = item.alias_or_name
            if isinstance(item, exp.Table):
                known = scope.sources.get(alias)
                if not isinstance(known, Scope) and item.args.get("db") is None:
                    # Qualified tables all have a database: this is a CTE, which sqlglot's scope files
                    # under its PIVOT / UNPIVOT's alias as a table.
                    known = scope.cte_sources.get(item.name, known)
                if isinstance(known, Scope):
                    src = Source("scope", known)
                elif not isinstance(item.this, exp.Identifier):
                    src = Source("func", item.this, outer_scope=scope)
                else:
                    src = self._table_source(item)
            elif isinstance(item, exp.Subquery):
                known = scope.sources.get(alias)
                inner = self.scope_of.get(id(item.this))
                src = Source("scope", known if isinstance(known, Scope) else inner)
                if src.node is None:
                    src = None
            elif isinstance(item, exp.Values):  # rows of literals: named columns, no source
                src = Source("values", item)
            elif isinstance(item, exp.Lateral):
                body = item.this.this if isinstance(item.this, exp.Subquery) else None
                inner = self.scope_of.get(id(body)) if body is not None else None
                if inner is not None:
                    src = Source("scope", inner)
                else:
                    src = Source("udtf", item, outer_scope=scope)
            if src is None:
                continue
            out[alias] = src
            for pivot in item.args.get("pivots") or []:
                src.hidden = True
                out[pivot.alias or alias] = Source("pivot", pivot, inner=src, outer_scope=scope)
        for lateral in sel.args.get("laterals") or []:
            out[lateral.alias_or_name] = Source("udtf", lateral, outer_scope=scope)
        return out

    def _table_source(self, table: exp.Table) -> Source:
        db = table.db
        if db and db.lower() in FILE_FORMATS and table.this.args.get("quoted"):
            path = table.name
            return Source("table", table, name=path, dataset=naming.from_location(path, table=None))
        parts = (table.catalog, db, table.name)
        known = self._tables.get(parts)
        if known is None:  # a table is read in many scopes: look it up and name it once
            known = self._tables[parts] = self.catalog.table(parts)
        return Source("table", table, *known)  # a NamedTable: Source's fields in order

    def source_outputs(self, src: Source) -> list[str] | None:
        """Column names a source offers; ``None`` when unknown."""
        if src.kind == "table":
            return src.info.names if src.info is not None else None
        if src.kind == "scope":
            names = self.outputs(src.node)
            return None if "*" in names else names
        if src.kind in ("udtf", "values", "func"):
            relation = src.node.parent if src.kind == "func" else src.node  # a table function: its call
            alias = relation.args.get("alias") if relation is not None else None
            cols = [c.name for c in alias.columns] if alias is not None and alias.columns else []
            if src.kind == "values":  # unnamed, Spark calls them col1, col2, ... (sqlglot: _col_0, ...)
                cols = [f"col{i + 1}" if _UNNAMED.fullmatch(c) else c for i, c in enumerate(cols)]
            return cols or None
        if src.kind == "pivot":
            return self.pivot_outputs(src)
        return None

    # -- resolution ---------------------------------------------------------------------------

    def resolve(self, scope: Scope, name: str, position: int | None = None) -> frozenset[Origin]:
        """Source columns of the output column ``name`` of ``scope``."""
        key = (scope, name) if position is None else (scope, position)  # a position decides alone
        found = self._memo.get(key)
        if found is not None:
            return found
        self._memo[key] = _NONE
        e = scope.expression
        result: frozenset[Origin] = _NONE
        if isinstance(e, exp.Select):  # most scopes are selects: asked first (a miss of ``isinstance`` costs more)
            items = e.expressions
            if position is not None and position < len(items):
                proj = items[position]
            else:
                proj = self.projections(scope).get(name)
            if proj is not None:
                result = self._projection_origins[id(proj)] = self.expression_origins(scope, proj)
        elif isinstance(e, exp.SetOperation):
            names = self.outputs(scope)
            if position is None:
                position = names.index(name) if name in names else None
            if position is not None:
                branches = scope.set_operation_scopes if isinstance(e, exp.Union) else scope.set_operation_scopes[:1]
                # A branch Spark casts to the column's common type, losing values: a TRANSFORMATION.
                types = self._branch_types(scope, position)
                common = common_type(types) if types is not None else None
                out: set[Origin] = set()
                for branch, kind in zip(branches, types or [None] * len(branches)):
                    bnames = self.outputs(branch)
                    if position < len(bnames):
                        found = self.resolve(branch, bnames[position], position)
                        if common is not None and kind != common and not widens(kind, common):
                            found = frozenset(origin((o.table, o.field, stronger(TRANSFORMATION, o.subtype),
                                                      o.expression, o.masking)) for o in found)
                        out |= found
                result = frozenset(out)
        self._memo[key] = result
        return result

    def output_type(self, scope: Scope, position: int) -> str | None:
        """The type of a query's output column at ``position``, when the text tells it for sure.

        Remembered per scope and position: a set operation's branches are typed again by each set
        operation above them (a chain of UNIONs is a nest of them)."""
        key = (scope, position)
        if key in self._types:
            return self._types[key]
        e = scope.expression
        if isinstance(e, exp.SetOperation):
            types = self._branch_types(scope, position)
            found = common_type(types) if types else None
        elif isinstance(e, exp.Values):
            found = self._rows_type(scope, e, position)
        elif not isinstance(e, exp.Select) or position >= len(e.expressions):
            found = None
        else:
            found = self._expression_type(scope, e.expressions[position])
        self._types[key] = found
        return found

    def _branch_types(self, scope: Scope, position: int) -> list[str | None] | None:
        """The types of a set operation's branches at ``position``; ``None`` at the first the text does not
        tell, without typing the others (the branches then have no common type, ``common_type``)."""
        types: list[str | None] = []
        for branch in scope.set_operation_scopes:
            kind = self.output_type(branch, position)
            if kind is None:
                return None
            types.append(kind)
        return types

    def _expression_type(self, scope: Scope, node: exp.Expression) -> str | None:
        while isinstance(node, (exp.Alias, exp.Paren)):
            node = node.this
        if type(node) is exp.Column:
            return self.column_type(scope, node) or self._values_type(scope, node)
        if isinstance(node, exp.Cast):
            return norm_type(plain_sql(node.to))
        if isinstance(node, exp.Literal):
            return literal_type(node)
        if isinstance(node, (exp.Add, exp.Sub)):
            return arithmetic_type(type(node), self._expression_type(scope, node.this),
                                   self._expression_type(scope, node.expression))
        return None

    def _values_type(self, scope: Scope, col: exp.Column) -> str | None:
        """The type of a column of rows of literals (``VALUES (0, 'a') AS v(x, y)``): the rows' common type."""
        src = self.sources(scope).get(col.table) if col.table else None
        names = self.source_outputs(src) if src is not None and src.kind == "values" else None
        if not names or col.name not in names:
            return None
        return self._rows_type(scope, src.node, names.index(col.name))

    def _rows_type(self, scope: Scope, values: exp.Values, position: int) -> str | None:
        types: list[str | None] = []
        for row in values.expressions:
            items = row.expressions if isinstance(row, exp.Tuple) else [row]
            value = items[position] if position < len(items) else None
            types.append(self._expression_type(scope, value) if value is not None else None)
        return common_type(types)

    def expression_origins(self, scope: Scope, proj: exp.Expression) -> frozenset[Origin]:
        inner = proj.this if isinstance(proj, exp.Alias) else proj
        if self.using and isinstance(inner, exp.Coalesce) and id(scope.expression) in self.using:
            inner = using_key(inner, self.using[id(scope.expression)])
        nulls = self.null_keys(scope) if self._grouping_sets else _NO_KEYS
        if nulls and plain_sql(inner) in nulls:
            return frozenset()  # a grouped expression outside every grouping set: always NULL
        if type(inner) is exp.Column and not isinstance(inner.this, exp.Star):
            # The common case, a column copied: what it copies, under the first text written for it.
            origins = self.column_origins(scope, inner.table, inner.name)
            for o in origins:
                if not o.expression:
                    break
            else:
                return origins
            text = self.render(inner)
            return frozenset({o if o.expression else origin((o.table, o.field, o.subtype, text, o.masking))
                              for o in origins})
        identity = self.is_identity(scope, inner)
        refs: list[Ref] = []
        subs: list[exp.Expression] = []
        collect_refs(inner, refs, subs, identity, False, False, False)
        if proj.parent is scope.expression and id(proj) not in self.noted:  # a projection of the scope:
            self.note_projection(scope, proj, refs, subs)  # its conditions and window keys, while at it
        out: set[Origin] = set()
        text: str | None = None
        for ref in refs:
            if ref.conditional or (nulls and ref.subtype != AGGREGATION and plain_sql(ref.column) in nulls):
                continue
            path = ref.path
            column = ref.column
            for o in self.column_origins(scope, column.table, column.name):
                subtype = stronger(ref.subtype, o.subtype)
                if o.expression and ref.subtype == IDENTITY and not path:
                    expression = o.expression
                else:
                    if text is None:
                        text = self.render(inner)
                    expression = text
                # A struct field of a column copied as it is: the field is the source, named by its path.
                field = self.field_of(o, path) if path and o.subtype == IDENTITY else o.field
                out.add(origin((o.table, field, subtype, expression, o.masking or ref.masking)))
        for sub in subs:
            if isinstance(sub, exp.Subquery):
                child = self.scope_of.get(id(sub.this))
                if child is None:
                    continue
                names = self.outputs(child)
                if names:
                    if text is None:
                        text = self.render(inner)
                    for o in self.resolve(child, names[0], 0):
                        out.add(origin((o.table, o.field, stronger(TRANSFORMATION, o.subtype), text, o.masking)))
        return frozenset(out)

    def column_origins(self, scope: Scope, table: str, name: str) -> frozenset[Origin]:
        """Origins of a column reference ``table.name`` read in ``scope`` (outer references included).

        Remembered per scope and name (a plain table's, per table): a column is read by projections and
        conditions alike. Given its names, not the node: a caller that read them already (a condition's key)
        does not read them again (each ``.table`` / ``.name`` of sqlglot's compiled nodes costs some 250-300
        instructions)."""
        if table:
            sources = self._sources.get(scope)  # made once per scope (``sources``), most often made already
            src = (sources if sources is not None else self.sources(scope)).get(table)
            if src is not None and src.plain:
                # The common case, a column of a table this scope reads: its origins are made once per table
                # and column (``TableInfo.origins_made``), remembered there, not here.
                if not src.noted:
                    src.noted = True
                    self.result.inputs.setdefault(src.label, src.dataset)
                found = src.made.get(name)
                return found if found is not None else self._table_column(src, name)  # made now, or no such column
        else:
            src = None
        key = (scope, table, name)
        found = self._column_memo.get(key)
        if found is not None:
            return found
        if src is None:
            found = self._column_origins(scope, table, name)  # unqualified, or a relation of an outer query
        else:
            found = self.source_column(scope, src, name)  # a relation of this scope (``_column_origins``' first)
        self._column_memo[key] = found
        return found

    def _column_origins(self, scope: Scope, table: str, name: str) -> frozenset[Origin]:
        s: Scope | None = scope
        if table:
            nested = False  # read from inside a derived table or CTE of a correlated query
            while s is not None:
                src = self.sources(s).get(table)
                if src is not None:
                    found = self.source_column(s, src, name)
                    if nested:  # Spark pulls such an outer reference up as a correlation condition
                        self._add_indirect(found, FILTER)
                    return found
                nested = nested or s.scope_type in (ScopeType.DERIVED_TABLE, ScopeType.CTE)
                s = _outer(s)
            self.warn(f"column {table}.{name}: no relation {table} in scope")
            return frozenset()
        while s is not None:
            candidates = []
            unknown = []
            for alias, src in self.sources(s).items():
                if src.hidden:
                    continue
                if src.kind == "table" and src.info is not None:
                    if src.info.lookup(name) is not None:
                        candidates.append((alias, src))
                    continue
                names = self.source_outputs(src)
                if names is None:
                    unknown.append((alias, src))
                elif name.lower() in (n.lower() for n in names):
                    candidates.append((alias, src))
            if len(candidates) == 1:
                return self.source_column(s, candidates[0][1], name)
            if len(candidates) > 1:
                self.warn(f"column {name} is ambiguous: {', '.join(sorted(a for a, _ in candidates))} could own it")
                return frozenset()
            if len(unknown) == 1:
                return self.source_column(s, unknown[0][1], name)
            if len(unknown) > 1:
                self.warn(f"column {name} is ambiguous: it could belong to any of "
                          f"{', '.join(sorted((src.name or a) for a, src in unknown))} (no schema to decide)")
                return frozenset()
            s = _outer(s)
        if name.lower() == _GROUPING_ID:
            return frozenset()  # Spark's grouping id of GROUPING SETS / CUBE / ROLLUP: no source column
        key = self.generated_key(scope, name)
        if key is not None:
            return self.expression_origins(scope, key)
        self.warn(f"column {name} is not in any relation of its query")
        return frozenset()

    def source_column(self, scope: Scope, src: Source, name: str) -> frozenset[Origin]:
        if src.kind == "scope":
            return self.resolve(src.node, name)
        if src.kind == "table":
            return self._table_column(src, name)
        key = (id(src), name)
        found = self._src_memo.get(key)
        if found is not None:
            return found
        self._src_memo[key] = frozenset()
        if src.kind == "udtf":
            found = self._generator(src.outer_scope or scope, src.node.this)
        elif src.kind == "func":
            found = self._generator(src.outer_scope or scope, src.node)
        elif src.kind == "pivot":
            found = self.pivot_column(src, name)
        else:
            found = frozenset()
        self._src_memo[key] = found
        return found

    def _table_column(self, src: Source, name: str) -> frozenset[Origin]:
        info = src.info
        if src.plain:  # a table with a schema (the common case): its label made once
            self.result.inputs.setdefault(src.label, src.dataset)
            found = info.origins(src.label, name)
            if found is None:
                self.warn(f"column {name} is not in the schema of {src.name}")
                return frozenset()
            return found
        label = src.dataset.label if src.dataset else (src.name or "")
        if info is not None and info.view is not None:
            view: ViewLineage = info.view
            if src.name not in self._views_noted:
                self._views_noted.add(src.name or "")
                for i in view.indirect:
                    self.result.indirect.setdefault((i.table, i.field, i.subtype, i.masking), i)
                self.result.inputs.update(view.inputs)
                for w in view.warnings:
                    self.warn(f"view {src.name}: {w}")
            for col, origins in view.columns.items():
                if col.lower() == name.lower():
                    return origins
            self.warn(f"column {name} is not a column of view {src.name}")
            return frozenset()
        if src.dataset is not None:
            self.result.inputs.setdefault(label, src.dataset)
        if src.name and src.dataset and src.dataset.table:  # no schema: the column as the query names it
            self._unknown_tables.add(src.name)
        return frozenset({origin((label, name, IDENTITY, "", False))})

    def field_of(self, origin: Origin, path: str) -> str:
        """The field a struct path read from ``origin`` is (``info.geo.lat``), each part spelled as the table's
        type spells it, as Spark names it (the query may write ``st.c`` for a field ``C``)."""
        info = self.catalog.get(origin.table) if "." not in origin.field else None
        kind = info.type_of(origin.field) if info is not None else None
        return f"{origin.field}.{spelled_path(kind, path) if kind else path}"

    def _generator(self, scope: Scope, generator: exp.Expression) -> frozenset[Origin]:
        found = self.expression_origins(scope, generator)
        return frozenset(origin((o.table, o.field, stronger(TRANSFORMATION, o.subtype), o.expression, o.masking))
                         for o in found)

    # -- types and text -------------------------------------------------------------------------

    def is_identity(self, scope: Scope, node: exp.Expression) -> bool:
        while isinstance(node, (exp.Alias, exp.Paren)):
            node = node.this
        casts = []
        while isinstance(node, exp.Cast):
            casts.append(node)
            node = node.this
        if type(node) is exp.Dot:  # a struct's field, read as it is: the field's own value
            path, base = field_path(node)
            return bool(path) and not casts
        if not isinstance(node, exp.Column) or isinstance(node.this, exp.Star):
            return False
        if not casts:
            return True
        source = self.column_type(scope, node)
        for cast in reversed(casts):
            target = norm_type(plain_sql(cast.to))
            if not widens(source, target):
                return False
            source = target
        return True

    def column_type(self, scope: Scope, col: exp.Column, depth: int = 0) -> str | None:
        if depth > 50:
            return None
        s: Scope | None = scope
        src = None
        while s is not None and src is None:
            src = self.sources(s).get(col.table) if col.table else None
            if src is None and not col.table:
                break
            if src is None:
                s = _outer(s)
        if src is None:
            return None
        if src.kind == "table" and src.info is not None and src.info.view is None:
            t = src.info.type_of(col.name)
            return norm_type(t) if t else None
        if src.kind == "scope" and isinstance(src.node.expression, exp.Select):
            proj = self.projections(src.node).get(col.name)
            if proj is None:
                return None
            node = proj.this if isinstance(proj, exp.Alias) else proj
            while isinstance(node, exp.Paren):
                node = node.this
            if isinstance(node, exp.Cast):
                return norm_type(plain_sql(node.to))
            if isinstance(node, exp.Column):
                return self.column_type(src.node, node, depth + 1)
        return None

    def render(self, node: exp.Expression) -> str:
        """A placeholder for the expression's text, rendered at the end for the expressions that remain.

        Named by the node's id: the same for each time it is asked for, and no other node's (``_pending`` keeps
        it alive until then)."""
        placeholder = f"\x00{id(node)}"
        self._pending[placeholder] = node
        return placeholder

    def _finish_texts(self) -> None:
        rendered: dict[str, str] = {}
        pending = self._pending
        columns = []
        for name, origins in self.result.columns:
            done = []
            for o in origins:
                placeholder = o.expression
                if placeholder in pending:  # no text an expression is written as (NUL and digits)
                    text = rendered.get(placeholder)
                    if text is None:
                        node = pending[placeholder]
                        try:
                            text = render(node)
                        except RecursionError:
                            raise
                        except Exception:  # noqa: BLE001 - an expression's text as sqlglot writes it, unparenthesized
                            text = plain_sql(node)
                        rendered[placeholder] = text
                    o = origin((o.table, o.field, o.subtype, text, o.masking))
                done.append(o)
            columns.append((name, frozenset(done)))
        self.result.columns = columns


def _unnamed(p: exp.Expression, sql: str) -> exp.Expression | None:
    """The expression of a projection the query leaves unnamed, which qualify named ``_col_<i>`` (a
    scalar subquery is named on itself), after the literal a cast reads (Spark: ``DATE '2024-01-01'``,
    ``CAST(1 AS INT)``), after the key of an element (``arr[0]``, ``m['k']``, ``element_at(arr, 1)``: Spark
    names the whole), or after the column of a call sqlglot reads as a cast (``to_timestamp(s)``); ``None``
    for a projection with a name."""
    if not isinstance(p, exp.Alias):  # an alias (the common case, told first) is no subquery
        return p if isinstance(p, exp.Subquery) and _UNNAMED.fullmatch(p.alias or "") else None
    this, alias = p.this, p.alias
    if alias.startswith("_col_") and _UNNAMED.fullmatch(alias):
        return None if type(this) is exp.Column else this  # a column: named where it is made
    if type(this) is exp.Column:
        return None  # a column keeps its name (none of the expressions below): the common case, told first
    if isinstance(this, exp.Cast) and isinstance(this.this, exp.Literal) and alias == this.this.name:
        return this
    if "start" in p.args["alias"].meta:  # an alias the statement writes (qualify's has no place in the text)
        return None
    if isinstance(this, exp.Literal) and this.is_number and "e" in this.this.lower():  # 1e3: 1000.0
        return this
    if isinstance(this, (exp.Bracket, exp.JSONExtract, exp.JSONExtractScalar)) and alias == this.output_name:
        return this
    if isinstance(this, exp.Cast) and isinstance(this.this, exp.Column) and alias == this.this.name \
            and cast_call(this, sql):
        return this
    return None


def _unreadable(node: exp.Expression | None, error: Exception) -> str:
    """What the extractor could not read, as the user wrote it, and why (one line, never a traceback)."""
    if isinstance(node, exp.Alias):
        node = node.this
    try:
        text = render(node) if node is not None else ""
    except Exception:  # noqa: BLE001 - the text is a courtesy
        text = ""
    text = " ".join(text.split())
    text = text if len(text) <= 80 else text[:77] + "..."
    what = f"the static extractor could not read `{text}`" if text else "the static extractor could not read it"
    return f"{what} ({error.__class__.__name__}: {str(error).splitlines()[0] if str(error) else ''})"


# Scopes that may read their parent's columns: a subquery in an expression (or a branch of one),
# a lateral one. A CTE or a derived table cannot: a name it does not have is not its parent's.
_CORRELATED = frozenset({ScopeType.SUBQUERY, ScopeType.SET_OPERATION, ScopeType.UDTF})


def _outer(scope: Scope) -> Scope | None:
    if scope.scope_type in _CORRELATED:
        return scope.parent
    # A derived table or CTE inside a correlated query (``LATERAL (SELECT .. FROM (SELECT .. WHERE t.k = u.k))``,
    # ``(WITH c AS (.. t.k ..) SELECT ..)``) reads that query's outer columns as the query does: Spark lets
    # it. One at the top level has no outer query to read.
    parent = scope.parent
    if scope.scope_type in (ScopeType.DERIVED_TABLE, ScopeType.CTE) and parent is not None \
            and _outer(parent) is not None:
        return parent
    return None
