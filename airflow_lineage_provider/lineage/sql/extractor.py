"""Field lineage from SQL text alone (sqlglot, ``spark`` dialect): ``"method": "sql"``.

Lineage before a job runs (OpenLineage START, the CLI without a JVM) and when no
plan could be captured. It produces the same document as the plan extractor
(``lineage/plan.py``) by the same rules: identity through aliases and widening
casts, transformation, aggregation, masking, and the statement's indirect inputs
(joins, filters, group/sort/window keys, CASE/IF conditions, pivot columns).

How: each statement is parsed and qualified once (sqlglot's ``qualify`` steps:
tables get ``catalog.db`` — by one walk of our own when the query needs no more of
``qualify_tables`` —, columns their table alias, ``*`` is expanded from the
schema), its scopes built once, and then every output column is resolved
top-down through CTEs, subqueries, set operations, generators and pivots to
base-table columns, each step memoized per (scope, column): one pass per
statement, never one per column.

The schema comes from the script's own DDL (CREATE / DROP / ALTER TABLE ADD
COLUMNS in order, views included), then the ``schema`` parameter, then a
``SchemaCache`` (see ``sql_schema``). What SQL text cannot tell is said, not
guessed: a ``*`` over a table with no schema stays unexpanded and an
unqualified column two tables could own is reported as ambiguous, each with a
warning and a confidence below 1.
"""

from __future__ import annotations

import gc
import logging
import re
import threading
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, NamedTuple

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.normalize_identifiers import normalize_identifiers
from sqlglot.optimizer.qualify_columns import qualify_columns
from sqlglot.optimizer.qualify_tables import qualify_tables
from sqlglot.optimizer.scope import Scope, ScopeType, build_scope
from sqlglot.schema import MappingSchema

from airflow_lineage_provider.lineage import functions, naming
from airflow_lineage_provider.lineage.model import (
    AGGREGATION,
    CONDITIONAL,
    FILTER,
    GROUP_BY,
    IDENTITY,
    INDIRECT,
    INPUT_ORDER,
    JOIN,
    SORT,
    SPARK_CATALOG,
    TRANSFORMATION,
    WINDOW,
    ColumnInput,
    Dataset,
    LineageReport,
    Origin,
    StatementLineage,
    direct_inputs,
    stronger,
    widens,
)
from airflow_lineage_provider.lineage.schema_cache import SchemaCache
from airflow_lineage_provider.lineage.sql.catalog import Catalog, TableInfo, parameter_tables
from airflow_lineage_provider.lineage.statements import split_statements

log = logging.getLogger(__name__)

DIALECT = "spark"
_SPARK = sqlglot.Dialect.get_or_raise(DIALECT)


class _Generators(threading.local):
    """Two generators per thread: built per call, they cost more than the text they write, and a
    generator keeps state while it writes. (Instances, not subclasses: sqlglot's compiled build,
    sqlglotc, cannot be subclassed.)"""

    def __init__(self) -> None:
        self.plain = _SPARK.generator()
        self.lower = _SPARK.generator(normalize_functions="lower")


_GENERATORS = _Generators()
# Confidence when part of the lineage could not be known from the text.
PARTIAL_CONFIDENCE = 0.5
# Confidence when tables had no schema but every column was still resolved unambiguously.
UNCHECKED_CONFIDENCE = 0.9

# Window functions sqlglot types as aggregates that Spark does not wrap in an aggregate.
NOT_AGGREGATE = functions.OFFSET_WINDOW | functions.RANKING
_FILE_FORMATS = frozenset({"parquet", "orc", "json", "csv", "text", "avro", "delta", "binaryfile"})
_UNNAMED = re.compile(r"_col_\d+")  # qualify's name for an output column the query leaves unnamed
_DIRECTORY = re.compile(
    r"^\s*INSERT\s+OVERWRITE\s+(?:LOCAL\s+)?DIRECTORY\s*(?P<path>'(?:[^'\\]|\\.)*')?(?P<rest>.*?)"
    r"(?P<query>\b(?:WITH|SELECT|FROM|VALUES|TABLE)\b.*|\(.*)$",
    re.I | re.S,
)
_OPTION_PATH = re.compile(r"\bpath\s*=?\s*'((?:[^'\\]|\\.)*)'", re.I)


@dataclass
class ViewLineage:
    """A view defined in the script: its columns' origins, and what its rows depend on."""

    columns: dict[str, frozenset[Origin]]
    indirect: frozenset[ColumnInput]
    inputs: dict[str, Dataset]
    warnings: tuple[str, ...] = ()


@dataclass
class _Src:
    """A relation in a FROM clause, as a column reference reaches it."""

    kind: str  # table | scope | udtf | func | pivot | values
    node: Any = None  # exp.Table / Scope / exp.Lateral / exp.Pivot / exp.Values
    name: str | None = None  # table: catalog name (or path)
    info: TableInfo | None = None
    inner: _Src | None = None  # pivot: the pivoted relation
    outer_scope: Scope | None = None  # udtf/func/pivot: the scope whose columns they read
    dataset: Dataset | None = None
    hidden: bool = False  # a pivoted relation: only its pivot's output is visible by column name


class _Ref(NamedTuple):
    """A column an expression reads, with its role there."""

    column: exp.Column
    subtype: str
    masking: bool
    conditional: bool


@dataclass
class _Result:
    columns: list[tuple[str, frozenset[Origin]]]
    indirect: set[ColumnInput] = field(default_factory=set)
    inputs: dict[str, Dataset] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    confidence: float = 1.0


# -- the extractor --------------------------------------------------------------------------------------


class SqlExtractor:
    """Static lineage of a script's statements, tracking the script's DDL in order.

    ``schema``: ``{table: {column: type}}`` (or a list of columns per table); ``ddl``: DDL texts
    (e.g. the contents of DDL files) run before the script; ``cache``: a ``SchemaCache``.
    """

    def __init__(self, schema: Mapping[str, Any] | None = None, *, ddl: Iterable[str] = (),
                 cache: SchemaCache | None = None, database: str = "default",
                 catalog: Catalog | None = None) -> None:
        if catalog is None:
            catalog = Catalog(database=database, parameter=parameter_tables(schema, database), cache=cache)
            if ddl:
                param = Catalog(database=database)
                sub = SqlExtractor(catalog=param)
                for text in ddl:
                    sub.run(text)
                for info in param.tables.values():
                    info.source = "parameter"
                catalog.parameter.update(param.tables)
        self.catalog = catalog
        self._schema: MappingSchema | None = None
        self._schema_version = -1
        self._sql = ""

    # -- scripts and statements ------------------------------------------------------------------

    def run(self, script: str) -> LineageReport:
        statements: list[StatementLineage] = []
        for stmt in split_statements(script):
            statements.extend(self.statement(stmt.sql, stmt.index))
        return LineageReport(statements=tuple(statements))

    def statement(self, sql: str, index: int = 0) -> list[StatementLineage]:
        """Lineage of one statement (none for DDL), updating the catalog with its DDL."""
        self._sql = sql
        collecting = gc.isenabled()
        gc.disable()  # syntax trees are many small objects with no cycles to find: skip the collector's passes
        try:
            return self._statement(sql, index)
        except Exception as e:  # lineage never breaks a job
            log.warning("static lineage failed for statement %s: %s", index, e, exc_info=True)
            return [_none(index, sql, f"static extraction failed: {e.__class__.__name__}: {e}")]
        finally:
            if collecting:
                gc.enable()

    def _statement(self, sql: str, index: int) -> list[StatementLineage]:
        directory = _DIRECTORY.match(sql)
        if directory:
            return self._directory(sql, index, directory)
        try:
            tree = sqlglot.parse_one(sql, dialect=_SPARK)
        except SqlglotError as e:
            return [_none(index, sql, f"the SQL could not be parsed: {str(e).splitlines()[0]}")]
        if isinstance(tree, exp.Use):
            name = tree.this.name if tree.this is not None else ""
            if name and (tree.args.get("kind") is None or str(tree.args.get("kind")).upper() in ("DATABASE", "SCHEMA")):
                self.catalog.database = name.lower()
            return []
        if isinstance(tree, exp.Drop):
            kind = str(tree.args.get("kind") or "").upper()
            if kind in ("TABLE", "VIEW"):
                for t in tree.args.get("tables") or [tree.this]:
                    if isinstance(t, exp.Table):
                        self.catalog.drop(self._table_name(t))
            return []
        if isinstance(tree, exp.Alter):
            self._alter(tree)
            return []
        if isinstance(tree, exp.Create):
            return self._create(tree, sql, index)
        if isinstance(tree, exp.Insert):
            return self._insert(tree, sql, index)
        if isinstance(tree, exp.Query):
            result = self._lineage(tree)
            return [self._document(index, sql, None, result, result.columns)]
        if isinstance(tree, (exp.Merge, exp.Update, exp.Delete)):
            return [_none(index, sql, f"{tree.key.upper()} is not covered by the static extractor")]
        return []

    # -- DDL ---------------------------------------------------------------------------------------

    def _table_name(self, table: exp.Table) -> str:
        return self.catalog.full_name([table.catalog, table.db, table.name])

    def _create(self, tree: exp.Create, sql: str, index: int) -> list[StatementLineage]:
        kind = str(tree.args.get("kind") or "").upper()
        target = tree.this
        columns_given: list[str] = []
        defs: list[tuple[str, str]] = []
        if isinstance(target, exp.Schema):
            for e in target.expressions:
                if isinstance(e, exp.ColumnDef):
                    defs.append((e.name, e.args["kind"].sql(DIALECT) if e.args.get("kind") else ""))
                elif isinstance(e, exp.Identifier):
                    columns_given.append(e.name)
            target = target.this
        if not isinstance(target, exp.Table) or kind not in ("TABLE", "VIEW"):
            return []
        name = self._table_name(target)
        props = tree.args.get("properties")
        location = None
        partitions: list[tuple[str, str]] = []
        partition_names: list[str] = []
        temporary = False
        for p in props.expressions if props else []:
            if isinstance(p, exp.LocationProperty):
                location = p.this.name if p.this is not None else None
            elif isinstance(p, exp.PartitionedByProperty):
                items = p.this.expressions if isinstance(p.this, (exp.Schema, exp.Tuple)) else [p.this]
                for item in items:
                    if isinstance(item, exp.ColumnDef):
                        partitions.append((item.name, item.args["kind"].sql(DIALECT) if item.args.get("kind") else ""))
                    elif item is not None:
                        partition_names.append(item.name)
            elif isinstance(p, exp.TemporaryProperty):
                temporary = True
        query = tree.expression
        if kind == "VIEW":
            if not isinstance(query, exp.Query):
                return []
            result = self._lineage(query)
            cols = result.columns
            if columns_given:
                cols = [(columns_given[i] if i < len(columns_given) else c, o) for i, (c, o) in enumerate(cols)]
            view = ViewLineage(dict(cols), frozenset(result.indirect), dict(result.inputs), tuple(result.warnings))
            self.catalog.put(TableInfo(name, [(c, "") for c, _ in cols], view=view))
            if temporary:
                return []  # a temporary view is not a dataset: lineage flows through it
            mode = "overwrite" if tree.args.get("replace") else "create"
            return [self._document(index, sql, naming.from_location(None, table=name, mode=mode), result, cols)]
        if isinstance(query, exp.Query):
            result = self._lineage(query)
            # Column types of a CTAS are not inferred: later casts of its columns count as transformations.
            self.catalog.put(TableInfo(name, [(c, "") for c, _ in result.columns], location=location))
            target_ds = naming.from_location(location, table=name, mode="overwrite" if tree.args.get("replace") else "create")
            return [self._document(index, sql, target_ds, result, result.columns)]
        if defs:
            if partition_names:  # data source tables keep their partition columns last
                wanted = [n.lower() for n in partition_names]
                defs = [d for d in defs if d[0].lower() not in wanted] + [d for n in wanted for d in defs if d[0].lower() == n]
            all_defs = defs + partitions
            parts = tuple(n for n, _ in partitions) + tuple(partition_names)
            if tree.args.get("exists") and self.catalog.get(name) is not None and name in self.catalog.tables:
                return []
            self.catalog.put(TableInfo(name, all_defs, location=location, partitions=parts))
        return []

    def _alter(self, tree: exp.Alter) -> None:
        if not isinstance(tree.this, exp.Table):
            return
        name = self._table_name(tree.this)
        info = self.catalog.get(name)
        for action in tree.args.get("actions") or []:
            if isinstance(action, exp.Schema) or isinstance(action, exp.ColumnDef):
                items = action.expressions if isinstance(action, exp.Schema) else [action]
                add = [(d.name, d.args["kind"].sql(DIALECT) if d.args.get("kind") else "") for d in items
                       if isinstance(d, exp.ColumnDef)]
                if info is not None and add:
                    data = [c for c in info.columns if c[0] not in info.partitions]
                    parts = [c for c in info.columns if c[0] in info.partitions]
                    info = TableInfo(name, data + add + parts, info.location, info.partitions, info.view)
                    self.catalog.put(info)
            elif isinstance(action, exp.AlterRename) and info is not None and isinstance(action.this, exp.Table):
                new = self._table_name(action.this)
                self.catalog.drop(name)
                self.catalog.put(TableInfo(new, info.columns, info.location, info.partitions, info.view))

    # -- writes ------------------------------------------------------------------------------------

    def _insert(self, tree: exp.Insert, sql: str, index: int) -> list[StatementLineage]:
        target = tree.this
        listed: list[str] = []
        if isinstance(target, exp.Schema):
            listed = [e.name for e in target.expressions]
            target = target.this
        query = tree.expression
        if not isinstance(target, exp.Table) or not isinstance(query, (exp.Query, exp.Values)):
            return [_none(index, sql, "this INSERT form is not covered by the static extractor")]
        name = self._table_name(target)
        info = self.catalog.get(name)
        static: dict[str, bool] = {}
        spec = target.args.get("partition")
        for e in spec.expressions if spec is not None else []:
            if isinstance(e, exp.EQ):
                static[e.this.name.lower()] = True
            elif e is not None:
                static.setdefault(e.name.lower(), False)
        result = self._lineage(query)
        produced = result.columns
        if info is not None:
            table_cols = info.names
            if listed:
                by_name = {c.lower(): o for c, (_, o) in zip(listed, produced)}
                columns = [(c, by_name.get(c.lower(), frozenset())) for c in table_cols]
            else:
                fed = [c for c in table_cols if not static.get(c.lower())]
                if len(fed) != len(produced):
                    result.warnings.append(
                        f"INSERT INTO {name}: the query gives {len(produced)} columns, the table takes {len(fed)}")
                    result.confidence = min(result.confidence, PARTIAL_CONFIDENCE)
                by_name = {c.lower(): o for c, (_, o) in zip(fed, produced)}
                columns = [(c, by_name.get(c.lower(), frozenset())) for c in table_cols]
        else:
            result.warnings.append(f"no schema for {name}: target columns named after the query's")
            result.confidence = min(result.confidence, UNCHECKED_CONFIDENCE)
            columns = [(listed[i] if i < len(listed) else c, o) for i, (c, o) in enumerate(produced)]
            columns += [(p, frozenset()) for p, is_static in static.items() if is_static]
        mode = "overwrite" if tree.args.get("overwrite") else "append"
        dataset = naming.from_location(info.location if info else None, table=name, mode=mode)
        return [self._document(index, sql, dataset, result, columns)]

    def _directory(self, sql: str, index: int, m: re.Match[str]) -> list[StatementLineage]:
        path = m.group("path")
        if path:
            path = path[1:-1]
        else:
            opt = _OPTION_PATH.search(m.group("rest") or "")
            path = opt.group(1) if opt else None
        try:
            query = sqlglot.parse_one(m.group("query"), dialect=_SPARK)
        except SqlglotError as e:
            return [_none(index, sql, f"the SQL could not be parsed: {str(e).splitlines()[0]}")]
        result = self._lineage(query)
        return [self._document(index, sql, naming.from_location(path, table=None, mode="overwrite"), result,
                               result.columns)]

    def _document(self, index: int, sql: str, target: Dataset | None, result: _Result,
                  columns: list[tuple[str, frozenset[Origin]]]) -> StatementLineage:
        cols = tuple((name, direct_inputs(origins)) for name, origins in columns)
        warnings = tuple(dict.fromkeys(result.warnings))
        return StatementLineage(
            index=index, sql=sql, method="sql", confidence=result.confidence if warnings else 1.0, target=target,
            inputs=tuple(sorted(result.inputs.values(), key=lambda d: d.label)), columns=cols,
            indirect=tuple(sorted(result.indirect, key=INPUT_ORDER)), warnings=warnings,
        )

    # -- queries -----------------------------------------------------------------------------------

    def schema(self) -> MappingSchema:
        """The sqlglot schema of every known table and view (rebuilt only after DDL changed it)."""
        if self._schema is None or self._schema_version != self.catalog.version:
            nested: dict[str, dict[str, dict[str, dict[str, str]]]] = {}
            for name, info in self.catalog.known().items():
                parts = name.split(".")
                if len(parts) != 3 or not info.columns:
                    continue
                # qualify compares the query's names lower-cased (Spark ignores case); the origins
                # keep the case the DDL gave (TableInfo.lookup), as Spark's plan does.
                nested.setdefault(parts[0], {}).setdefault(parts[1], {})[parts[2]] = {
                    c.lower(): (t or "UNKNOWN") for c, t in info.columns}
            self._schema = MappingSchema(nested, dialect=DIALECT, normalize=False)
            self._schema_version = self.catalog.version
        return self._schema

    def _lineage(self, query: exp.Expression) -> _Result:
        if isinstance(query, exp.Values):
            width = len(query.expressions[0].expressions) if query.expressions else 0
            return _Result([(f"col{i + 1}", frozenset()) for i in range(width)])
        # The pre-pass looks for path reads (backquoted) and USING / NATURAL joins: most statements
        # have neither, which plain substring tests tell far faster than a regular expression.
        text = self._sql.lower()
        names, using = _prepare(query, walk="`" in text or "using" in text or "natural" in text)
        # sqlglot's qualify, step by step: the steps it takes for validation, quoting and dot-part
        # recovery are of no use here, and its table step is mostly done by one walk of our own.
        query = normalize_identifiers(query, dialect=_SPARK)
        db = self.catalog.database
        if not _qualify_tables(query, db):
            query = qualify_tables(query, db=db, catalog=SPARK_CATALOG, dialect=_SPARK)
        qualified = qualify_columns(query, self.schema())
        result = _Resolver(self, qualified, using).run()
        result.columns = [(names.get(c.lower(), c), o) for c, o in result.columns]
        return result


# -- one query: scopes resolved top-down ---------------------------------------------------------------


class _Resolver:
    def __init__(self, extractor: SqlExtractor, query: exp.Expression, using: dict[int, str] | None = None) -> None:
        self.x = extractor
        self.sql = extractor._sql
        self.using = using or {}
        self.catalog = extractor.catalog
        self.query = query
        self.root = build_scope(query)
        self.scope_of: dict[int, Scope] = {}
        if self.root is not None:
            for s in self.root.traverse():
                self.scope_of[id(s.expression)] = s
        self.result = _Result([])
        self._memo: dict[tuple[int, str | int], frozenset[Origin]] = {}
        self._sources: dict[int, dict[str, _Src]] = {}
        self._projections: dict[int, dict[str, exp.Expression]] = {}
        self._outputs: dict[int, list[str]] = {}
        self._texts: dict[int, str] = {}
        self._pending: list[exp.Expression] = []
        self._src_memo: dict[tuple[int, str], frozenset[Origin]] = {}
        self._column_memo: dict[tuple[int, str, str], frozenset[Origin]] = {}
        self._tables: dict[str, tuple[TableInfo | None, Dataset]] = {}
        self._table_memo: dict[tuple[str, str], frozenset[Origin]] = {}
        self._indirect_seen: set[tuple[str, str, str, bool]] = set()
        self._noted: set[int] = set()  # projections whose conditions and window keys are noted
        self._views_noted: set[str] = set()
        self._unknown_tables: set[str] = set()

    def run(self) -> _Result:
        if self.root is None:
            self.warn("the statement has no query the static extractor understands")
            return self.result
        names = self.outputs(self.root)
        spark_names = self._spark_names(self.root)
        for i, name in enumerate(names):
            if name == "*":
                continue
            self.result.columns.append((spark_names.get(i, name), self.resolve(self.root, name, i)))
        for scope in self.root.traverse():
            self._note_indirect(scope)
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
        key = id(scope)
        out = self._outputs.get(key)
        if out is None:
            e = scope.expression
            if isinstance(e, exp.SetOperation):
                out = self.outputs(scope.set_operation_scopes[0]) if scope.set_operation_scopes else []
            elif isinstance(e, exp.Select):
                out = []
                for p in e.expressions:
                    if isinstance(p, exp.Star) or (isinstance(p, exp.Column) and isinstance(p.this, exp.Star)):
                        out.append("*")
                        table = p.table if isinstance(p, exp.Column) else ""
                        self.warn(f"{(table + '.') if table else ''}* not expanded: no schema for "
                                  f"{self._star_owner(scope, table)}; its columns are not in the lineage")
                    else:
                        out.append(p.alias_or_name)
            else:
                out = []
            self._outputs[key] = out
        return out

    def _star_owner(self, scope: Scope, table: str) -> str:
        srcs = self.sources(scope)
        names = [s.name or a for a, s in srcs.items() if (not table or a == table)]
        return ", ".join(sorted(n for n in names if n)) or "its source"

    def projections(self, scope: Scope) -> dict[str, exp.Expression]:
        key = id(scope)
        out = self._projections.get(key)
        if out is None:
            out = {}
            for p in scope.expression.expressions:
                out.setdefault(p.alias_or_name, p)
            self._projections[key] = out
        return out

    def _spark_names(self, scope: Scope) -> dict[int, str]:
        """Spark's names for output columns the query leaves unnamed (``sum(x)``, ``(a + b)``)."""
        while isinstance(scope.expression, exp.SetOperation) and scope.set_operation_scopes:
            scope = scope.set_operation_scopes[0]
        if not isinstance(scope.expression, exp.Select):
            return {}
        out = {}
        for i, p in enumerate(scope.expression.expressions):
            if isinstance(p, exp.Alias) and p.alias.startswith("_col_") and _UNNAMED.fullmatch(p.alias):
                out[i] = spark_name(p.this, self.sql)
        return out

    # -- sources -----------------------------------------------------------------------------

    def sources(self, scope: Scope) -> dict[str, _Src]:
        key = id(scope)
        out = self._sources.get(key)
        if out is not None:
            return out
        out = {}
        self._sources[key] = out
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
            src: _Src | None = None
            alias = item.alias_or_name
            if isinstance(item, exp.Table):
                known = scope.sources.get(alias)
                if isinstance(known, Scope):
                    src = _Src("scope", known)
                elif not isinstance(item.this, exp.Identifier):
                    src = _Src("func", item.this, outer_scope=scope)
                else:
                    src = self._table_source(item)
            elif isinstance(item, exp.Subquery):
                known = scope.sources.get(alias)
                inner = self.scope_of.get(id(item.this))
                src = _Src("scope", known if isinstance(known, Scope) else inner)
                if src.node is None:
                    src = None
            elif isinstance(item, exp.Values):  # rows of literals: named columns, no source
                src = _Src("values", item)
            elif isinstance(item, exp.Lateral):
                body = item.this.this if isinstance(item.this, exp.Subquery) else None
                inner = self.scope_of.get(id(body)) if body is not None else None
                if inner is not None:
                    src = _Src("scope", inner)
                else:
                    src = _Src("udtf", item, outer_scope=scope)
            if src is None:
                continue
            out[alias] = src
            for pivot in item.args.get("pivots") or []:
                src.hidden = True
                out[pivot.alias or alias] = _Src("pivot", pivot, inner=src, outer_scope=scope)
        for lateral in sel.args.get("laterals") or []:
            out[lateral.alias_or_name] = _Src("udtf", lateral, outer_scope=scope)
        return out

    def _table_source(self, table: exp.Table) -> _Src:
        if table.db and table.db.lower() in _FILE_FORMATS and table.this.args.get("quoted"):
            path = table.name
            return _Src("table", table, name=path, dataset=naming.from_location(path, table=None))
        name = self.catalog.full_name([table.catalog, table.db, table.name])
        known = self._tables.get(name)
        if known is None:  # a table is read in many scopes: look it up and name it once
            info = self.catalog.get(name)
            known = self._tables[name] = (info, naming.from_location(info.location if info else None, table=name))
        return _Src("table", table, name=name, info=known[0], dataset=known[1])

    def _source_outputs(self, src: _Src) -> list[str] | None:
        """Column names a source offers; ``None`` when unknown."""
        if src.kind == "table":
            return src.info.names if src.info is not None else None
        if src.kind == "scope":
            names = self.outputs(src.node)
            return None if "*" in names else names
        if src.kind == "udtf" or src.kind == "values":
            alias = src.node.args.get("alias")
            cols = [c.name for c in alias.columns] if alias is not None and alias.columns else []
            if src.kind == "values":  # unnamed, Spark calls them col1, col2, ... (sqlglot: _col_0, ...)
                cols = [f"col{i + 1}" if _UNNAMED.fullmatch(c) else c for i, c in enumerate(cols)]
            return cols or None
        if src.kind == "pivot":
            return self._pivot_outputs(src)
        return None

    # -- resolution ---------------------------------------------------------------------------

    def resolve(self, scope: Scope, name: str, position: int | None = None) -> frozenset[Origin]:
        """Source columns of the output column ``name`` of ``scope``."""
        key = (id(scope), name) if position is None else (id(scope), position)  # a position decides alone
        found = self._memo.get(key)
        if found is not None:
            return found
        self._memo[key] = frozenset()
        e = scope.expression
        result: frozenset[Origin] = frozenset()
        if isinstance(e, exp.SetOperation):
            names = self.outputs(scope)
            if position is None:
                position = names.index(name) if name in names else None
            if position is not None:
                branches = scope.set_operation_scopes if isinstance(e, exp.Union) else scope.set_operation_scopes[:1]
                out: set[Origin] = set()
                for branch in branches:
                    bnames = self.outputs(branch)
                    if position < len(bnames):
                        out |= self.resolve(branch, bnames[position], position)
                result = frozenset(out)
        elif isinstance(e, exp.Select):
            if position is not None and position < len(e.expressions):
                proj = e.expressions[position]
            else:
                proj = self.projections(scope).get(name)
            if proj is not None:
                result = self.expression_origins(scope, proj)
        self._memo[key] = result
        return result

    def expression_origins(self, scope: Scope, proj: exp.Expression) -> frozenset[Origin]:
        inner = proj.this if isinstance(proj, exp.Alias) else proj
        if self.using and isinstance(inner, exp.Coalesce) and id(scope.expression) in self.using:
            inner = _using_key(inner, self.using[id(scope.expression)])
        if type(inner) is exp.Column and not isinstance(inner.this, exp.Star):
            # The common case, a column copied: what it copies, under the first text written for it.
            origins = self.column_origins(scope, inner)
            if all(o.expression for o in origins):
                return origins
            text = self.render(inner)
            return frozenset(o if o.expression else o._replace(expression=text) for o in origins)
        identity = self.is_identity(scope, inner)
        refs: list[_Ref] = []
        subs: list[exp.Expression] = []
        _collect(inner, refs, subs, identity, False, False, False)
        if proj.parent is scope.expression and id(proj) not in self._noted:  # a projection of the scope:
            self._note_projection(scope, proj, refs, subs)  # its conditions and window keys, while at it
        out: set[Origin] = set()
        text: str | None = None
        for ref in refs:
            if ref.conditional:
                continue
            for o in self.column_origins(scope, ref.column):
                subtype = stronger(ref.subtype, o.subtype)
                if o.expression and ref.subtype == IDENTITY:
                    expression = o.expression
                else:
                    if text is None:
                        text = self.render(inner)
                    expression = text
                out.add(Origin(o.table, o.field, subtype, expression, o.masking or ref.masking))
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
                        out.add(Origin(o.table, o.field, stronger(TRANSFORMATION, o.subtype), text, o.masking))
        return frozenset(out)

    def column_origins(self, scope: Scope, col: exp.Column) -> frozenset[Origin]:
        """Origins of a column reference read in ``scope`` (outer references included).

        Remembered per scope and name: a column is read by projections and conditions alike."""
        table = col.table
        name = col.name
        if table:  # the common case, a column of a table this scope reads: straight to the table
            src = self.sources(scope).get(table)
            if src is not None and src.kind == "table" and src.info is not None and src.info.view is None:
                return self._table_column(src, name)
        key = (id(scope), table, name)
        found = self._column_memo.get(key)
        if found is None:
            found = self._column_memo[key] = self._column_origins(scope, table, name)
        return found

    def _column_origins(self, scope: Scope, table: str, name: str) -> frozenset[Origin]:
        s: Scope | None = scope
        if table:
            while s is not None:
                src = self.sources(s).get(table)
                if src is not None:
                    return self.source_column(s, src, name)
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
                names = self._source_outputs(src)
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
        self.warn(f"column {name} is not in any relation of its query")
        return frozenset()

    def source_column(self, scope: Scope, src: _Src, name: str) -> frozenset[Origin]:
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
            found = self._pivot_column(src, name)
        else:
            found = frozenset()
        self._src_memo[key] = found
        return found

    def _table_column(self, src: _Src, name: str) -> frozenset[Origin]:
        info = src.info
        label = src.dataset.label if src.dataset else (src.name or "")
        if info is not None and info.view is not None:
            view: ViewLineage = info.view
            if src.name not in self._views_noted:
                self._views_noted.add(src.name or "")
                self.result.indirect |= view.indirect
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
        if info is None:
            if src.name and src.dataset and src.dataset.table:
                self._unknown_tables.add(src.name)
            return frozenset({Origin(label, name, IDENTITY, "", False)})
        key = (label, name)
        cached = self._table_memo.get(key)
        if cached is not None:
            return cached
        found = info.lookup(name)
        if found is not None:
            cached = self._table_memo[key] = frozenset({Origin(label, found[0], IDENTITY, "", False)})
            return cached
        self.warn(f"column {name} is not in the schema of {src.name}")
        return frozenset()

    def _generator(self, scope: Scope, generator: exp.Expression) -> frozenset[Origin]:
        found = self.expression_origins(scope, generator)
        return frozenset(Origin(o.table, o.field, stronger(TRANSFORMATION, o.subtype), o.expression, o.masking)
                         for o in found)

    # -- pivot / unpivot ---------------------------------------------------------------------------

    def _pivot_parts(self, src: _Src) -> tuple[list[str], list[str], list[str]]:
        """(kept input columns, pivot/name columns, value columns) of a pivot or unpivot."""
        pivot: exp.Pivot = src.node
        inner = self._source_outputs(src.inner) or []
        field_in = pivot.args.get("fields") or []
        if pivot.args.get("unpivot"):
            used = {c.name.lower() for f in field_in for c in f.find_all(exp.Column)}
            names = [f.this.name for f in field_in if isinstance(f, exp.In)]
            values = [e.name for e in pivot.expressions]
            return [c for c in inner if c.lower() not in used], names, values
        used = {c.name.lower() for e in pivot.expressions for c in e.find_all(exp.Column)}
        pivot_cols = {c.name.lower() for f in field_in if isinstance(f, exp.In) for c in f.this.find_all(exp.Column)}
        keep = [c for c in inner if c.lower() not in used and c.lower() not in pivot_cols]
        values = [c.name for c in pivot.args.get("columns") or []]
        return keep, sorted(pivot_cols), values

    def _pivot_outputs(self, src: _Src) -> list[str] | None:
        if self._source_outputs(src.inner) is None:
            return None
        keep, names, values = self._pivot_parts(src)
        if src.node.args.get("unpivot"):
            return keep + names + values
        return keep + values

    def _pivot_column(self, src: _Src, name: str) -> frozenset[Origin]:
        pivot: exp.Pivot = src.node
        keep, names, values = self._pivot_parts(src)
        scope = src.outer_scope
        lower = name.lower()
        if pivot.args.get("unpivot"):
            if lower in (n.lower() for n in names):
                return frozenset()
            if lower in (v.lower() for v in values):
                pos = [v.lower() for v in values].index(lower)
                out: set[Origin] = set()
                for f in pivot.args.get("fields") or []:
                    for item in f.expressions:
                        cols = item.expressions if isinstance(item, exp.Tuple) else [item]
                        if pos < len(cols):
                            for c in cols[pos].find_all(exp.Column):
                                out |= self.source_column(scope, src.inner, c.name)
                return frozenset(out)
            return self.source_column(scope, src.inner, name)
        if lower in (v.lower() for v in values):
            aggs = pivot.expressions
            pos = [v.lower() for v in values].index(lower)
            agg = aggs[pos % len(aggs)] if aggs else None
            if agg is None:
                return frozenset()
            refs: list[_Ref] = []
            _collect(agg.this if isinstance(agg, exp.Alias) else agg, refs, [], False, False, False, False)
            text = self.render(agg.this if isinstance(agg, exp.Alias) else agg)
            out = set()
            for ref in refs:
                for o in self.source_column(scope, src.inner, ref.column.name):
                    out.add(Origin(o.table, o.field, stronger(ref.subtype, o.subtype), text, o.masking or ref.masking))
            return frozenset(out)
        return self.source_column(scope, src.inner, name)

    # -- indirect inputs ------------------------------------------------------------------------

    def _note_indirect(self, scope: Scope) -> None:
        e = scope.expression
        if isinstance(e, (exp.Intersect, exp.Except)) and len(scope.set_operation_scopes) > 1:
            right = scope.set_operation_scopes[1]
            for i, name in enumerate(self.outputs(right)):
                self._add_indirect(self.resolve(right, name, i), FILTER)
        if isinstance(e, exp.SetOperation):
            order = e.args.get("order")
            if order is not None:
                for col in order.find_all(exp.Column):
                    if col.name in self.outputs(scope):
                        self._add_indirect(self.resolve(scope, col.name), SORT)
            return
        if not isinstance(e, exp.Select):
            return
        where = e.args.get("where")
        if where is not None:
            self._indirect_expr(scope, where.this, FILTER)
        for j in e.args.get("joins") or []:
            on = j.args.get("on")
            if on is not None:
                kind = str(j.args.get("kind") or "").upper()
                self._indirect_expr(scope, on, FILTER if kind in ("SEMI", "ANTI") else JOIN)
        group = e.args.get("group")
        if group is not None:
            self._indirect_expr(scope, group, GROUP_BY)
        having = e.args.get("having")
        if having is not None:
            self._indirect_expr(scope, having.this, FILTER)
        qual = e.args.get("qualify")
        if qual is not None:
            self._indirect_expr(scope, qual.this, FILTER)
        for key in ("order", "sort", "cluster"):
            node = e.args.get(key)
            if node is not None:
                self._indirect_expr(scope, node, SORT)
        for p in e.expressions:  # the projections no output column led to (most were noted on the way)
            if id(p) in self._noted:
                continue
            if isinstance(p.this if isinstance(p, exp.Alias) else p, (exp.Column, exp.Literal)):
                continue  # nothing in it can be a window or a condition
            refs: list[_Ref] = []
            subs: list[exp.Expression] = []
            _collect(p, refs, subs, False, False, False, False)
            self._note_projection(scope, p, refs, subs)
        for src in self.sources(scope).values():
            if src.kind == "pivot":
                self._pivot_indirect(src)

    def _note_projection(self, scope: Scope, proj: exp.Expression, refs: list[_Ref],
                         subs: list[exp.Expression]) -> None:
        """A projection's CASE/IF conditions and window keys: indirect inputs of the statement,
        whether or not an output column reads the projection (Spark's plan keeps them all)."""
        self._noted.add(id(proj))
        for ref in refs:
            if ref.conditional:
                self._add_indirect(self._condition_column(scope, ref.column), CONDITIONAL)
        for w in subs:
            if isinstance(w, exp.Window):
                for part in w.args.get("partition_by") or []:
                    self._indirect_expr(scope, part, WINDOW)
                if w.args.get("order") is not None:
                    self._indirect_expr(scope, w.args["order"], WINDOW)

    def _pivot_indirect(self, src: _Src) -> None:
        pivot: exp.Pivot = src.node
        keep, names, values = self._pivot_parts(src)
        scope = src.outer_scope
        if pivot.args.get("unpivot"):
            if pivot.args.get("include_nulls"):
                return
            for f in pivot.args.get("fields") or []:
                for c in f.find_all(exp.Column):
                    self._add_indirect(self.source_column(scope, src.inner, c.name), FILTER)
            return
        for c in keep + names:
            self._add_indirect(self.source_column(scope, src.inner, c), GROUP_BY)
        for c in names:
            self._add_indirect(self.source_column(scope, src.inner, c), CONDITIONAL)

    def _condition_column(self, scope: Scope, col: exp.Column, select_first: bool = False) -> frozenset[Origin]:
        """A column read by a condition; ORDER BY sees the select list first, other clauses its sources."""
        if not col.table and col.name in self.projections(scope) and (select_first or not self._owned(scope, col.name)):
            proj = self.projections(scope)[col.name]
            inner = proj.this if isinstance(proj, exp.Alias) else proj
            if not (isinstance(inner, exp.Column) and inner.name == col.name and not inner.table):
                return self.expression_origins(scope, proj)
        return self.column_origins(scope, col)

    def _owned(self, scope: Scope, name: str) -> bool:
        for src in self.sources(scope).values():
            names = self._source_outputs(src)
            if names is not None and name.lower() in (n.lower() for n in names):
                return True
        return False

    def _indirect_expr(self, scope: Scope, node: exp.Expression, subtype: str) -> None:
        """Columns a condition reads. A query inside it gives its outputs and is not entered: its own
        conditions are its own scope's (walking into it would read each nested query twice)."""
        select_first = subtype == SORT
        for n in _CONDITION_PARTS(node):
            if isinstance(n, exp.Column):
                if not isinstance(n.this, exp.Star):
                    self._add_indirect(self._condition_column(scope, n, select_first), subtype)
            elif isinstance(n, (exp.Subquery, exp.Select, exp.SetOperation)):
                child = self.scope_of.get(id(n.this if isinstance(n, exp.Subquery) else n))
                if child is not None:
                    for i, name in enumerate(self.outputs(child)):
                        if name != "*":
                            self._add_indirect(self.resolve(child, name, i), subtype)
            # Grouping / GroupingId (pruned too): a bit of the grouping id, no source column.

    def _add_indirect(self, origins: Iterable[Origin], subtype: str) -> None:
        seen = self._indirect_seen
        for o in origins:
            key = (o.table, o.field, subtype, o.masking)
            if key not in seen:  # conditions name the same columns again and again: build each input once
                seen.add(key)
                self.result.indirect.add(ColumnInput.make(o.table, o.field, INDIRECT, subtype, "", o.masking))

    # -- types and text -------------------------------------------------------------------------

    def is_identity(self, scope: Scope, node: exp.Expression) -> bool:
        while isinstance(node, (exp.Alias, exp.Paren)):
            node = node.this
        casts = []
        while isinstance(node, exp.Cast):
            casts.append(node)
            node = node.this
        if not isinstance(node, exp.Column) or isinstance(node.this, exp.Star):
            return False
        if not casts:
            return True
        source = self.column_type(scope, node)
        for cast in reversed(casts):
            target = _norm_type(_sql(cast.to))
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
            return _norm_type(t) if t else None
        if src.kind == "scope" and isinstance(src.node.expression, exp.Select):
            proj = self.projections(src.node).get(col.name)
            if proj is None:
                return None
            node = proj.this if isinstance(proj, exp.Alias) else proj
            while isinstance(node, exp.Paren):
                node = node.this
            if isinstance(node, exp.Cast):
                return _norm_type(_sql(node.to))
            if isinstance(node, exp.Column):
                return self.column_type(src.node, node, depth + 1)
        return None

    def render(self, node: exp.Expression) -> str:
        """A placeholder for the expression's text, rendered at the end for the expressions that remain."""
        key = id(node)
        text = self._texts.get(key)
        if text is None:
            text = self._texts[key] = f"\x00{len(self._pending)}"
            self._pending.append(node)
        return text

    def _finish_texts(self) -> None:
        rendered: dict[str, str] = {}

        def text(placeholder: str) -> str:
            if not placeholder.startswith("\x00"):
                return placeholder
            if placeholder not in rendered:
                rendered[placeholder] = render(self._pending[int(placeholder[1:])])
            return rendered[placeholder]

        self.result.columns = [
            (name, frozenset(o._replace(expression=text(o.expression)) if o.expression.startswith("\x00") else o
                             for o in origins))
            for name, origins in self.result.columns
        ]


# Scopes that may read their parent's columns: a subquery in an expression (or a branch of one),
# a lateral one. A CTE or a derived table cannot: a name it does not have is not its parent's.
_CORRELATED = frozenset({ScopeType.SUBQUERY, ScopeType.SET_OPERATION, ScopeType.UDTF})


def _outer(scope: Scope) -> Scope | None:
    return scope.parent if scope.scope_type in _CORRELATED else None


class _Finder:
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
        return _sql(node)
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


_BINARIES = _Finder((exp.Binary,), (exp.Column, exp.Literal))


def _sql(node: exp.Expression) -> str:
    """``node.sql("spark")`` without the copy of the tree that ``sql()`` makes first."""
    return _GENERATORS.plain.generate(node, copy=False)


def spark_name(node: exp.Expression, sql: str = "") -> str:
    """The name Spark gives an unnamed output column: its SQL without qualifiers, strings unquoted."""
    copy = _pretty(node.copy(), sql.lower())
    while isinstance(copy, exp.Paren) and not isinstance(node, exp.Paren) and isinstance(copy.this, exp.Binary) \
            and not isinstance(node, exp.Binary):
        copy = copy.this
    text = _GENERATORS.lower.generate(copy, copy=False)
    return re.sub(r"DECIMAL\((\d+), (\d+)\)", r"DECIMAL(\1,\2)", text)


def _pretty(n: exp.Expression, sql: str) -> exp.Expression:
    if isinstance(n, exp.Column):
        return exp.column(n.this.copy()) if n.table else n
    if isinstance(n, exp.Literal) and n.is_string:
        return exp.var(n.this)
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
    if isinstance(n, exp.Binary) and not isinstance(n, exp.Dot):
        return exp.Paren(this=n)
    return n


# Inside a condition, what is not read as plain columns: queries, and grouping-id bits.
_NESTED = (exp.Subquery, exp.Select, exp.SetOperation, exp.Grouping, exp.GroupingId)
_CONDITION_PARTS = _Finder((exp.Column, *_NESTED), (exp.Column, *_NESTED))


# What ``_collect`` does with a node, by its class (worked out once per class: ``isinstance`` on
# sqlglot's deep class tree was a tenth of the static extractor's own time).
_COLUMN, _LEAF, _SUBQUERY, _QUERY, _IN, _WINDOW, _CASE, _IF, _FILTER, _OTHER = range(10)
_KINDS: dict[type, tuple[int, bool, bool, bool, bool]] = {}


def _kind(cls: type) -> tuple[int, bool, bool, bool, bool]:
    """(what it is, a function?, an aggregate class?, anonymous?, a masking class?)"""
    found = _KINDS.get(cls)
    if found is None:
        category = (_COLUMN if issubclass(cls, exp.Column) else
                    _LEAF if issubclass(cls, exp.Literal) else
                    _SUBQUERY if issubclass(cls, exp.Subquery) else
                    _QUERY if issubclass(cls, (exp.Select, exp.SetOperation, exp.Exists)) else
                    _IN if issubclass(cls, exp.In) else
                    _WINDOW if issubclass(cls, exp.Window) else
                    _CASE if issubclass(cls, exp.Case) else
                    _IF if issubclass(cls, (exp.If, exp.Nvl2)) else
                    _FILTER if issubclass(cls, exp.Filter) else _OTHER)
        found = _KINDS[cls] = (category, issubclass(cls, exp.Func), issubclass(cls, exp.AggFunc),
                               issubclass(cls, exp.Anonymous),
                               issubclass(cls, (exp.MD5, exp.SHA, exp.SHA2, exp.Count, exp.ApproxDistinct)))
    return found


def _collect(node: exp.Expression, refs: list[_Ref], subs: list[exp.Expression], identity: bool, agg: bool,
             masking: bool, conditional: bool) -> None:
    """Column references of an expression with their role; scalar subqueries and windows go to ``subs``."""
    category, func, aggregate_class, anonymous, masking_class = _KINDS.get(type(node)) or _kind(type(node))
    if category == _COLUMN:
        if not isinstance(node.this, exp.Star):
            subtype = AGGREGATION if agg else (IDENTITY if identity else TRANSFORMATION)
            refs.append(_Ref(node, subtype, masking, conditional))
        return
    if category == _LEAF or category == _QUERY:  # a literal reads nothing; a nested query is its own scope
        return
    if category == _SUBQUERY:
        subs.append(node)
        return
    if category == _IN and node.args.get("query") is not None:
        _collect(node.this, refs, subs, identity, agg, masking, conditional)
        return
    if category == _WINDOW:
        subs.append(node)  # its keys are indirect inputs (``_note_projection``)
        fn = node.this
        if fn is not None and _fname(fn) not in functions.RANKING:
            _collect(fn, refs, subs, identity, agg, masking, conditional)
        return
    if func:
        name = _fname(node)
        if name in functions.RANKING or name in functions.GROUPING:
            return
        if (aggregate_class and name not in NOT_AGGREGATE) or (anonymous and name in functions.AGGREGATES):
            agg = True
        if masking_class or name in functions.MASKING:
            masking = True
    if category == _CASE:
        if node.this is not None:
            _collect(node.this, refs, subs, identity, agg, masking, True)
        for branch in node.args.get("ifs") or []:
            _collect(branch.this, refs, subs, identity, agg, masking, True)
            if branch.args.get("true") is not None:
                _collect(branch.args["true"], refs, subs, identity, agg, masking, conditional)
        if node.args.get("default") is not None:
            _collect(node.args["default"], refs, subs, identity, agg, masking, conditional)
        return
    if category == _IF:
        _collect(node.this, refs, subs, identity, agg, masking, True)
        for key in ("true", "false"):
            if node.args.get(key) is not None:
                _collect(node.args[key], refs, subs, identity, agg, masking, conditional)
        return
    if category == _FILTER:
        _collect(node.this, refs, subs, identity, agg, masking, conditional)
        if node.expression is not None:
            _collect(node.expression, refs, subs, identity, agg, masking, True)
        return
    for child in node.iter_expressions():
        _collect(child, refs, subs, identity, agg, masking, conditional)


def _fname(node: exp.Expression) -> str:
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    kind = type(node)
    name = _FUNCTION_NAMES.get(kind)
    if name is None:  # a function's name is its class's: worked out once per class
        try:
            name = node.sql_name().lower()
        except Exception:  # not a function
            name = node.key
        _FUNCTION_NAMES[kind] = name
    return name


_FUNCTION_NAMES: dict[type, str] = {}


def _norm_type(text: str | None) -> str | None:
    if not text:
        return None
    t = text.lower().replace(" ", "")
    return {"integer": "int", "long": "bigint", "short": "smallint", "byte": "tinyint", "string": "text",
            "varchar": "text"}.get(t, t)


def _prepare(query: exp.Expression, walk: bool = True) -> tuple[dict[str, str], dict[int, str]]:
    """One walk over the query before qualify changes it; returns what qualify would lose.

    - Output names as written (qualify lower-cases identifiers; Spark keeps the case of the name).
    - Selects joining with USING / NATURAL, and the side whose key Spark outputs (qualify makes
      it a COALESCE).
    And it keeps the case of file paths (``parquet.`/Data/In```), the only names Spark does not
    compare case-insensitively, which qualify would lower-case with the rest. ``walk=False`` when the
    statement's text has no path read and no USING / NATURAL join: then there is nothing to find.
    """
    top = query
    while isinstance(top, (exp.SetOperation, exp.Subquery)):
        top = top.this
    names: dict[str, str] = {}
    star = False
    if isinstance(top, exp.Select):
        for p in top.expressions:
            name = p.alias if isinstance(p, exp.Alias) else (p.name if isinstance(p, exp.Column) else "")
            if isinstance(p, exp.Star) or (isinstance(p, exp.Column) and isinstance(p.this, exp.Star)):
                star = True
            elif name:
                names.setdefault(name.lower(), name)
    using: dict[int, str] = {}
    for node in query.find_all(exp.Table, exp.Join) if walk else ():
        if isinstance(node, exp.Table):
            if node.db and node.db.lower() in _FILE_FORMATS and isinstance(node.this, exp.Identifier):
                node.this.meta["case_sensitive"] = True  # a path: qualify lower-cases every other name
        elif node.args.get("using") or str(node.args.get("method") or "").upper() == "NATURAL":
            side = str(node.args.get("side") or "").upper()
            using[id(node.parent)] = "both" if side == "FULL" else ("right" if side == "RIGHT" else "left")
    if star:  # names a star brings up from subqueries
        for alias in top.find_all(exp.Alias):
            if alias.alias:
                names.setdefault(alias.alias.lower(), alias.alias)
    return names, using


# Sources sqlglot's qualify_tables gives names or default columns to, or rewrites.
_TABLE_WORK = (exp.Lateral, exp.Unnest, exp.Values, exp.Pivot, exp.TableFromRows)
_TABLE_PARTS = _Finder((exp.Table, exp.With, exp.Subquery, exp.Column, *_TABLE_WORK), (exp.Table, exp.Column))


def _qualify_tables(query: exp.Expression, db: str) -> bool:
    """Give every table read its catalog and database, as ``qualify_tables`` does, in one walk.

    ``qualify_tables`` builds the query's scopes to tell tables from CTE references, which cost
    a tenth of a static extraction. Most queries need nothing else of it: a table whose name
    no CTE has (or that names its database) is a table, and a bare name a CTE has is that CTE
    when the only WITH is the query's own and the reference is outside the bodies of that CTE
    and the ones before it. Returns False when the query needs the rest of ``qualify_tables``
    (an unnamed derived table, a generator, VALUES, a pivot, a table function, a
    ``db.table.column`` reference, a CTE name it cannot place), and then leaves the query as
    it found it. (Unlike ``qualify_tables``, a table keeps no alias it was not given:
    its name already names it, and new nodes are what this saves.)
    """
    if type(query) is exp.Subquery:
        return False
    tables: list[exp.Table] = []
    withs: list[exp.With] = []
    for node in _TABLE_PARTS(query):
        kind = type(node)
        if kind is exp.Table:
            if type(node.this) is not exp.Identifier or node.args.get("joins") or node.args.get("pivots"):
                return False
            tables.append(node)
        elif kind is exp.Column:
            if node.args.get("db") is not None:
                return False
        elif kind is exp.Subquery:
            if (not node.alias and isinstance(node.parent, (exp.From, exp.Join))) or not isinstance(
                    node.this, (exp.Select, exp.SetOperation)):
                return False
        elif kind is exp.With:
            withs.append(node)
        else:
            return False
    ctes = {cte.alias_or_name for w in withs for cte in w.expressions}
    # A name with no database that a CTE has may be that CTE; every other table is a table.
    named = [table for table in tables if table.args.get("db") is None and table.name in ctes]
    if named:
        # That CTE it is outside the CTE bodies, and in the body of a later CTE of the same WITH; in
        # its own body or an earlier one it may be a table. Nested WITHs: not told here.
        if len(withs) > 1 or query.args.get("with_") is not withs[0]:
            return False
        defined: dict[str, int] = {}
        for position, cte in enumerate(withs[0].expressions):
            defined.setdefault(cte.alias_or_name, position)
        body_of = {id(cte): position for position, cte in enumerate(withs[0].expressions)}
        for table in named:
            body = table.find_ancestor(exp.CTE)
            if body is not None and body_of[id(body)] <= defined[table.name]:
                return False
    db_name, catalog_name = _names(db)
    references = {id(table) for table in named}
    for table in tables:
        if id(table) in references:
            continue
        args = table.args
        if args.get("db") is None:
            table.set("db", exp.Identifier(this=db_name[0], quoted=db_name[1]))
        if args.get("catalog") is None:
            table.set("catalog", exp.Identifier(this=catalog_name[0], quoted=catalog_name[1]))
    return True


_NAMES: dict[str, tuple[tuple[str, bool], tuple[str, bool]]] = {}


def _names(db: str) -> tuple[tuple[str, bool], tuple[str, bool]]:
    """(name, quoted) of the database and catalog identifiers ``qualify_tables`` would give a table."""
    found = _NAMES.get(db)
    if found is None:
        ids = [normalize_identifiers(exp.parse_identifier(name, dialect=_SPARK), dialect=_SPARK)
               for name in (db, SPARK_CATALOG)]
        found = _NAMES[db] = ((ids[0].this, bool(ids[0].quoted)), (ids[1].this, bool(ids[1].quoted)))
    return found


def _using_key(node: exp.Coalesce, side: str) -> exp.Expression:
    """The key column a USING join outputs: the left one, the right one, or (FULL) the coalesce of both."""
    args = [node.this, *node.expressions]
    if side == "both" or not all(isinstance(a, exp.Column) for a in args) or len({a.name for a in args}) != 1:
        return node
    return args[-1] if side == "right" else args[0]


def _none(index: int, sql: str, warning: str) -> StatementLineage:
    return StatementLineage(index=index, sql=sql, method="none", confidence=0.0, target=None, warnings=(warning,))


# -- entry points ---------------------------------------------------------------------------------------


def extract_script(script: str, *, schema: Mapping[str, Any] | None = None, ddl: Iterable[str] = (),
                   cache: SchemaCache | None = None, database: str = "default") -> LineageReport:
    """Static lineage of every write (and bare query) of ``script``: ``"method": "sql"``."""
    return SqlExtractor(schema, ddl=ddl, cache=cache, database=database).run(script)


def read_ddl_files(paths: Iterable[str]) -> list[str]:
    texts = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            texts.append(f.read())
    return texts
