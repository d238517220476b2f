"""Field lineage from SQL text alone (sqlglot, ``spark`` dialect): ``"method": "sql"``; the statements.

Lineage before a job runs (OpenLineage START, the CLI without a JVM) and when no
plan could be captured. It produces the same document as the plan extractor
(``lineage/plan/``) by the same rules: identity through aliases and widening
casts, transformation, aggregation, masking, and the statement's indirect inputs
(joins, filters, group/sort/window keys, CASE/IF conditions, pivot columns).

How: each statement is parsed and qualified once (sqlglot's ``qualify`` steps:
tables get ``catalog.db`` — by one walk of our own when the query needs no more of
``qualify_tables`` —, columns their table alias, ``*`` is expanded from the
schema — by ``columns.py`` when the query needs only its common steps —), its
scopes built once, and then every output column is resolved
top-down through CTEs, subqueries, set operations, generators and pivots to
base-table columns, each step memoized per (scope, column): one pass per
statement, never one per column.

The schema comes from the script's own DDL (CREATE / DROP / ALTER TABLE ADD
COLUMNS in order, views included), then the ``schema`` parameter, then a
``SchemaCache`` (``lineage/schema_cache.py``). What SQL text cannot tell is said, not
guessed: a ``*`` over a table with no schema stays unexpanded and an
unqualified column two tables could own is reported as ambiguous, each with a
warning and a confidence below 1.
"""

from __future__ import annotations

import gc
import logging
import re
from dataclasses import replace
from typing import Any, Callable, Iterable, Mapping

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.schema import MappingSchema

from airflow_lineage_provider.lineage import naming
from airflow_lineage_provider.lineage.model import (
    Dataset,
    LineageReport,
    Origin,
    StatementLineage,
)
from airflow_lineage_provider.lineage.redact import scrub
from airflow_lineage_provider.lineage.schema_cache import SchemaCache
from airflow_lineage_provider.lineage.sql.catalog import (
    Catalog,
    TableInfo,
    ViewLineage,
    parameter_tables,
    struct_fields,
)
from airflow_lineage_provider.lineage.sql.keywords import parse
from airflow_lineage_provider.lineage.sql.pipes import requalify as requalify_pipes
from airflow_lineage_provider.lineage.sql.pipes import rewrite as rewrite_pipes
from airflow_lineage_provider.lineage.sql.pivot_syntax import read as read_pivots
from airflow_lineage_provider.lineage.sql.pivot_syntax import wrap as wrap_pivots
from airflow_lineage_provider.lineage.sql.qualify import output_name, qualify
from airflow_lineage_provider.lineage.sql.render import DIALECT, FindAll, plain_sql, render
from airflow_lineage_provider.lineage.sql.roles import field_path, function_name
from airflow_lineage_provider.lineage.sql.rowlevel import MODES as ROW_LEVEL_MODES
from airflow_lineage_provider.lineage.sql.rowlevel import rewrite as row_level_query
from airflow_lineage_provider.lineage.sql.scope import Resolver
from airflow_lineage_provider.lineage.sql.shared import PARTIAL_CONFIDENCE, UNCHECKED_CONFIDENCE, Result
from airflow_lineage_provider.lineage.sql.table_functions import TableFunction, definition
from airflow_lineage_provider.lineage.sql.table_functions import expand as expand_table_functions
from airflow_lineage_provider.lineage.statements import split_statements

log = logging.getLogger(__name__)

_DIRECTORY = re.compile(
    r"^\s*INSERT\s+OVERWRITE\s+(?:LOCAL\s+)?DIRECTORY\s*(?P<path>'(?:[^'\\]|\\.)*')?(?P<rest>.*?)"
    r"(?P<query>\b(?:WITH|SELECT|FROM|VALUES|TABLE)\b.*|\(.*)$",
    re.I | re.S,
)
_OPTION_PATH = re.compile(r"\bpath\s*=?\s*'((?:[^'\\]|\\.)*)'", re.I)
_EXECUTE_IMMEDIATE = re.compile(
    r"^\s*EXECUTE\s+IMMEDIATE\s+(?:(?P<text>'(?:[^'\\]|\\.|'')*'|\"(?:[^\"\\]|\\.|\"\")*\")|\S+)", re.I | re.S)
_SCRIPTING_BLOCK = re.compile(r"^\s*(?:\w+\s*:\s*)?BEGIN\b", re.I)
# Parameters of a statement EXECUTE IMMEDIATE runs (``?``, ``:name``), outside quoted text.
_PARAMETER = re.compile(r"""('(?:[^'\\]|\\.)*'|`[^`]*`)|\?|(?<![:\w]):[A-Za-z_]\w*""")


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
        self._lowered = ("", "")  # (a text of the statement, lower-cased): ``_lower``
        self._mapped = False  # the statement's MAP / REDUCE written as the TRANSFORM sqlglot reads: ``_map_reduce``
        self.variables: dict[str, str | None] = {}  # session variables: name -> value (a string literal)
        self._notes: list[str] = []  # what a rewrite before qualify could not read, for the statement's warnings
        self._unresolved: list[str] = []  # variables of the statement's IDENTIFIER(...) with no known value
        self._pipe_notes: list[str] = []  # pipe operators (|>) of the statement that were not read

    # -- scripts and statements ------------------------------------------------------------------

    def run(self, script: str) -> LineageReport:
        script = scrub(script) or ""  # every statement's text and message is shown: no credential in any
        statements: list[StatementLineage] = []
        split = split_statements(script)
        for stmt in split:
            found = self.statement(stmt.sql, stmt.index)
            statements.extend(_located(st, stmt.line, len(split)) if st.method == "none" else st for st in found)
        return LineageReport(statements=tuple(statements))

    def statement(self, sql: str, index: int = 0) -> list[StatementLineage]:
        """Lineage of one statement (none for DDL), updating the catalog with its DDL."""
        self._sql = sql
        self._lowered = ("", "")
        self._mapped = False
        collecting = gc.isenabled()
        gc.disable()  # syntax trees are many small objects with no cycles to find: skip the collector's passes
        try:
            return self._statement(sql, index)
        except Exception as e:  # lineage never breaks a job
            # One line a statement (a RecursionError's traceback is thousands of lines); the trace at debug.
            why = f"{EXTRACTION_FAILED}: {_failure(e)}"
            log.warning("static lineage of statement %s: %s", index + 1, why)
            log.debug("static lineage of statement %s failed", index + 1, exc_info=True)
            return [_none(index, sql, why)]
        finally:
            if collecting:
                gc.enable()

    def _statement(self, sql: str, index: int) -> list[StatementLineage]:
        piped = self._read_pipes(sql)
        directory = _DIRECTORY.match(piped)
        if directory:
            return self._directory(sql, index, directory)
        immediate = _EXECUTE_IMMEDIATE.match(sql)
        if immediate:
            return self._execute_immediate(sql, index, immediate)
        if _SCRIPTING_BLOCK.match(sql):
            return [_none(index, sql, "a SQL scripting block (BEGIN ... END) is not read by the static extractor: its "
                                      "writes depend on its variables and control flow, and are known when it runs")]
        text = self._resolve_identifiers(piped)
        mapped = _map_reduce(text, self._lower(text))
        self._mapped = mapped is not text
        text = mapped
        text, directories = _multi_insert_directories(text, self._lower(text))
        pivots = "pivot" in self._lower(text)
        wrapped = wrap_pivots(text) if pivots else None
        if wrapped is not None:
            text = self._sql = wrapped  # what sqlglot reads: the expressions' positions are in it
        try:
            tree = self._parse(text, sql if piped is not sql else None)
        except SqlglotError as e:
            return [_none(index, sql, _parse_failed(e))]
        if pivots:
            read_pivots(tree, self._sql)
        if isinstance(tree, (exp.Declare, exp.Set)):
            self._variables(tree)
            return []
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
            elif kind == "FUNCTION":
                for t in tree.args.get("tables") or [tree.this]:
                    if isinstance(t, exp.Table):
                        self.catalog.functions.pop(self._table_name(t), None)
            return []
        if isinstance(tree, exp.Alter):
            self._alter(tree)
            return []
        if isinstance(tree, exp.Create):
            return self._create(tree, sql, index)
        if isinstance(tree, exp.Insert):
            return self._insert(tree, sql, index, directories)
        if isinstance(tree, exp.MultitableInserts):
            return self._multi_insert(tree, sql, index, directories)
        if isinstance(tree, exp.Query):
            result = self._lineage(tree)
            return [self._document(index, sql, None, result, result.columns)]
        if isinstance(tree, (exp.Merge, exp.Update, exp.Delete)):
            return self._row_level(tree, sql, index)
        return []

    def _lower(self, text: str) -> str:
        """``text`` (the statement, or a rewrite of it) lower-cased, for the text tests of every step: made once
        per text, as most steps leave the text as it is (the same object)."""
        if text is not self._lowered[0]:
            self._lowered = (text, text.lower())
        return self._lowered[1]

    def _read_pipes(self, sql: str) -> str:
        """The statement with its pipe syntax (``TABLE t |> WHERE .. |> SELECT ..``) written as plain SQL
        (``sql/pipes.py``), what the statement's later steps read; ``sql`` itself when it has none."""
        self._pipe_notes = []
        if "|" not in sql or "|>" not in sql:  # one character is found at once, two are a slower scan
            return sql
        rewritten = rewrite_pipes(sql, self._query_columns)
        if rewritten is None:
            return sql
        self._pipe_notes = list(rewritten.notes)
        if rewritten.sql == sql:
            return sql
        self._sql = rewritten.sql  # what sqlglot reads: the expressions' positions are in it
        return rewritten.sql

    def _parse(self, text: str, original: str | None = None) -> exp.Expression:
        """sqlglot's tree of a statement; ``original``: the statement as written, when its pipe syntax was
        rewritten (a rewrite sqlglot cannot read is a gap of ours: the statement is then read as written)."""
        try:
            tree = parse(text)
        except SqlglotError:
            if original is None:
                raise
            self._sql = original
            self._pipe_notes = ["the pipe syntax (|>) as the static extractor writes it could not be parsed: the "
                                "statement is read as sqlglot reads it"]
            return parse(original)
        if original is not None:
            requalify_pipes(tree)
        return tree

    def _query_columns(self, text: str) -> list[str] | None:
        """The output column names of a query's text, by its lineage on this script's catalog; ``None``
        when it cannot be read (a pipe ``AGGREGATE .. GROUP BY <ordinal>`` names one of them)."""
        sub = SqlExtractor(catalog=self.catalog)
        sub.variables = self.variables
        sub._sql = text
        try:
            return [c for c, _ in sub._lineage(sub._parse(text, text)).columns]
        except Exception:  # noqa: BLE001 - unknown columns: the caller says so
            return None

    # -- DDL ---------------------------------------------------------------------------------------

    def _table_name(self, table: exp.Table) -> str:
        return self.catalog.full_name([table.catalog, table.db, table.name])

    def _create(self, tree: exp.Create, sql: str, index: int) -> list[StatementLineage]:
        kind = str(tree.args.get("kind") or "").upper()
        if kind == "FUNCTION":
            function = definition(tree)
            if function is not None and isinstance(tree.this.this, exp.Table):
                self.catalog.functions[self._table_name(tree.this.this)] = function
            return []
        target = tree.this
        columns_given: list[str] = []
        defs: list[tuple[str, str]] = []
        if isinstance(target, exp.Schema):
            for e in target.expressions:
                if isinstance(e, exp.ColumnDef) and kind == "VIEW" and not e.args.get("kind"):
                    columns_given.append(e.name)  # a view's column list, with a comment: a name, not a type
                elif isinstance(e, exp.ColumnDef):
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
        query = _unparenthesized(tree.expression)
        if kind == "VIEW":
            if not isinstance(query, (exp.Query, exp.Values)):
                return []
            result = self._lineage(query)
            cols = result.columns
            if columns_given:
                cols = [(columns_given[i] if i < len(columns_given) else c, o) for i, (c, o) in enumerate(cols)]
            view = ViewLineage(dict(cols), frozenset(result.indirect.values()), dict(result.inputs),
                               tuple(result.warnings))
            self.catalog.put(TableInfo(name, [(c, "") for c, _ in cols], view=view))
            if temporary:
                return []  # a temporary view is not a dataset: lineage flows through it
            mode = "overwrite" if tree.args.get("replace") else "create"
            return [self._document(index, sql, naming.from_location(None, table=name, mode=mode), result, cols)]
        if isinstance(query, (exp.Query, exp.Values)):
            made = _struct_literal_types(query)
            result = self._lineage(query)
            # Column types of a CTAS are not inferred (later casts of its columns count as transformations),
            # but for structs made of literals: their fields are what a later ``s.*`` or ``s.f`` reads.
            self.catalog.put(TableInfo(name, [(c, made.get(c.lower(), "")) for c, _ in result.columns],
                                       location=location))
            mode = "overwrite" if tree.args.get("replace") else "create"
            target_ds = naming.from_location(location, table=name, mode=mode)
            return [self._document(index, sql, target_ds, result, result.columns)]
        if defs:
            if partition_names:  # data source tables keep their partition columns last
                wanted = [n.lower() for n in partition_names]
                defs = ([d for d in defs if d[0].lower() not in wanted]
                        + [d for n in wanted for d in defs if d[0].lower() == n])
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

    def _insert(self, tree: exp.Insert, sql: str, index: int,
                directories: dict[str, str | None] | None = None) -> list[StatementLineage]:
        """``directories``: the paths of ``INSERT OVERWRITE DIRECTORY`` heads (``_multi_insert_directories``)."""
        target = tree.this
        listed: list[str] = []
        if isinstance(target, exp.Schema):
            listed = [e.name for e in target.expressions]
            target = target.this
        query = _with_outer_ctes(tree, _unparenthesized(tree.expression))
        if directories and isinstance(target, exp.Table) and target.name in directories and query is not None:
            result = self._lineage(query)
            dataset = naming.from_location(directories[target.name], table=None, mode="overwrite")
            return [self._document(index, sql, dataset, result, result.columns)]
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
            if tree.args.get("by_name"):  # INSERT ... BY NAME: the query's names pick the columns
                by_name = {c.lower(): o for c, o in produced}
                columns = [(c, by_name.get(c.lower(), frozenset())) for c in table_cols]
            elif listed:
                if len(listed) != len(produced):
                    result.warnings.append(f"INSERT INTO {name}: the query gives {len(produced)} columns, the "
                                           f"column list names {len(listed)}")
                    result.confidence = min(result.confidence, PARTIAL_CONFIDENCE)
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

    def _multi_insert(self, tree: exp.MultitableInserts, sql: str, index: int,
                      directories: dict[str, str | None]) -> list[StatementLineage]:
        """``[WITH ..] FROM src INSERT INTO a SELECT .. [WHERE ..] INSERT INTO b SELECT ..``: Spark makes one
        write per insert, so each is read as ``INSERT INTO a SELECT .. FROM src [WHERE ..]`` (with the WITH),
        a write of the same statement, in the order of the text (the plan's). ``directories``: the paths of
        its ``INSERT OVERWRITE DIRECTORY`` inserts, by the name that stands for them."""
        source = tree.args.get("source")
        outer = tree.args.get(_WITH)
        found: list[StatementLineage] = []
        for insert in tree.expressions:
            query = insert.expression if isinstance(insert, exp.Insert) else None
            if not isinstance(query, exp.Select) or source is None:
                found.append(_none(index, sql, "this multi-insert form is not covered by the static extractor"))
                continue
            relation = source.copy()
            joins = relation.args.get("joins")
            relation.set("joins", None)
            query.from_(relation, copy=False)
            if joins:
                query.set("joins", joins)
            if outer is not None:
                insert.set(_WITH, outer.copy())
            found.extend(self._insert(insert, sql, index, directories))
        return found

    def _resolve_identifiers(self, sql: str) -> str:
        """``IDENTIFIER('db.t')``, ``IDENTIFIER(var)``, ``IDENTIFIER('db.' || var)``: the name it
        makes, written out before sqlglot reads the statement (it takes ``INSERT INTO IDENTIFIER('t')``
        for a table named ``identifier`` with a column list). A variable the script gives no literal
        value is noted: the statement then says it cannot tell what the name is."""
        self._unresolved = []
        if "identifier" not in self._lower(sql):
            return sql

        def name(m: re.Match[str]) -> str:
            text = ""
            for part in _IDENTIFIER_PART.finditer(m.group(1)):
                if part.group(1):
                    text += part.group(1)[1:-1]
                    continue
                value = self.variables.get(_SESSION.sub("", part.group(2)).lower())
                if value is None:
                    self._unresolved.append(part.group(2))
                    return m.group(0)
                text += value
            return text if _PLAIN_NAME.match(text) else "`" + text.replace("`", "``") + "`"

        return _IDENTIFIER.sub(name, sql)

    def _variables(self, tree: exp.Expression) -> None:
        """``DECLARE [VARIABLE] v STRING DEFAULT 'x'``, ``SET VAR v = 'x'``: a session variable's value
        when the script gives it as a string literal (what ``IDENTIFIER(v)`` names); else unknown."""
        if isinstance(tree, exp.Declare):
            for item in tree.expressions:
                default = item.args.get("default")
                value = default.this if isinstance(default, exp.Literal) and default.is_string else None
                names = item.this if isinstance(item.this, list) else [item.this]
                for n in names:
                    if isinstance(n, exp.Expression):
                        self.variables[n.name.lower()] = value
            return
        for item in tree.expressions:
            if isinstance(item, exp.SetItem) and str(item.args.get("kind") or "").upper() == "VARIABLE" \
                    and isinstance(item.this, exp.EQ):
                target, value = item.this.this, item.this.expression
                known = value.this if isinstance(value, exp.Literal) and value.is_string else None
                for n in target.expressions if isinstance(target, exp.Tuple) else [target]:
                    self.variables[_SESSION.sub("", n.sql(DIALECT)).lower()] = known

    def _execute_immediate(self, sql: str, index: int, m: re.Match[str]) -> list[StatementLineage]:
        """``EXECUTE IMMEDIATE 'stmt' [USING ...]``: the lineage of the statement it runs, its parameters
        being values (no source column). A statement held in a variable is known only when it runs."""
        literal = m.group("text")
        if not literal:
            return [_none(index, sql, "EXECUTE IMMEDIATE of a variable: its statement is known only when it runs")]
        quote = literal[0]
        inner = literal[1:-1].replace(quote * 2, quote).replace("\\" + quote, quote)
        inner = _PARAMETER.sub(lambda p: p.group(1) or "NULL", inner)
        found = self._statement(inner, index)
        return [replace(st, sql=sql) for st in found]

    def _expand_struct_stars(self, query: exp.Expression) -> None:
        """``SELECT info.*``, ``info.geo.*``, ``struct(info.*)``: one column (argument) per field of the struct
        (its type in the schema), each read as the field it is (``info.city``), as Spark expands it. A field
        left out (``EXCEPT (zip)``) is none; one with a path left out below it (``EXCEPT (geo.lat)``) is a
        struct of the rest (``struct(info.geo.lon)``)."""
        for select in list(query.find_all(exp.Select)):
            stars = [d for d in select.find_all(exp.Dot) if isinstance(d.expression, exp.Star)
                     and d.find_ancestor(exp.Select) is select]
            if not stars:
                continue
            tables = {t.alias_or_name: t for t in select.find_all(exp.Table) if t.find_ancestor(exp.Select) is select}
            for star in stars:
                path, base = field_path(star.this) if type(star.this) is exp.Dot else ("", star.this)
                if not isinstance(base, exp.Column) or base.table not in tables:
                    continue
                info = self.catalog.get(self._table_name(tables[base.table]))
                found = info.lookup(base.name) if info is not None else None
                kind = found[1] if found else ""
                for part in path.split(".") if path else ():
                    kind = next((t for n, t in struct_fields(kind) if n.lower() == part.lower()), "")
                left_out = [[part.name.lower() for part in e.parts] for e in star.expression.args.get("except_") or []]
                fields = _struct_items(star.this, kind, left_out)
                if not struct_fields(kind):
                    if star.parent is not select:  # a projection's star says so itself (the resolver warns)
                        self._notes.append(f"{render(star)}: the struct's fields are unknown (no struct type in "
                                           f"the schema); its columns are missing")
                    continue
                if star.parent is select:
                    at = select.expressions.index(star)
                    select.set("expressions", select.expressions[:at] + [exp.alias_(v, n) for n, v in fields]
                               + select.expressions[at + 1:])
                elif star.arg_key == "expressions" and isinstance(star.parent, exp.Func):
                    args = list(star.parent.expressions)
                    at = next(i for i, a in enumerate(args) if a is star)
                    star.parent.set("expressions", args[:at] + [v for _, v in fields] + args[at + 1:])

    def _table_function(self, parts: list[str]) -> TableFunction | None:
        return self.catalog.functions.get(self.catalog.full_name(parts))

    def _expand_star_arguments(self, query: exp.Expression) -> None:
        """``struct(*)``, ``coalesce(t.*)``, ``concat_ws(',', *)``: Spark passes every column of the FROM
        clause (of ``t``) as arguments, in order; read from the schema of the tables the select reads.
        Over a relation whose columns the text does not give, the call is left as written (and the
        resolver says the star is not expanded)."""
        for star in list(query.find_all(exp.Star)):
            holder = star.parent if isinstance(star.parent, exp.Column) else star
            call = holder.parent
            if isinstance(call, exp.Paren) and isinstance(call.parent, exp.Select) and call.arg_key == "expressions":
                call.replace(holder)  # ``SELECT (*)``: the star itself
                continue
            if isinstance(call, exp.Paren) and isinstance(call.parent, exp.Distinct):
                call.replace(holder)  # ``count(DISTINCT (*))``: the star itself
                call = holder.parent
            if isinstance(call, exp.Distinct) and isinstance(call.parent, exp.AggFunc):
                pass  # ``count(DISTINCT *)``: Spark counts the distinct rows of every column (not count(1))
            elif not isinstance(call, (exp.Func, exp.In)) or isinstance(call, exp.Count) \
                    or holder.arg_key != "expressions" and not isinstance(call, exp.Anonymous) \
                    and holder.arg_key != "this":
                continue  # a star as a function's argument, or the list of ``x IN (*)``
            select = call.find_ancestor(exp.Select)
            if select is None:
                continue
            wanted = holder.table if isinstance(holder, exp.Column) else ""
            columns = self._from_columns(select, wanted)
            if columns is None and wanted and not self._names_relation(select, wanted):
                continue  # ``struct(info.*)``: a struct's fields, once qualified (``_expand_struct_stars``)
            left_out = {e.name.lower() for e in star.args.get("except_") or []}
            if columns is not None and left_out:  # ``coalesce(* EXCEPT (a, b))``
                columns = [c for c in columns if c.name.lower() not in left_out]
            if columns is None:
                self._notes.append(f"{_generator_name(call)}({wanted + '.' if wanted else ''}*): the star is not "
                                   f"expanded (no known schema for what the select reads); its columns are missing")
                continue
            args = list(call.expressions) if holder.arg_key == "expressions" else [holder]
            at = next(i for i, a in enumerate(args) if a is holder)
            expanded = args[:at] + columns + args[at + 1:]
            if holder.arg_key == "expressions":
                call.set("expressions", expanded)
            else:  # a function whose first argument is its own slot (coalesce(*)): the rest follow it
                call.set("this", expanded[0])
                call.set("expressions", expanded[1:] + list(call.expressions))

    def _apply_alias_lists(self, query: exp.Expression) -> None:
        """``FROM t AS x(a, b)``, ``LATERAL (SELECT ..) s(p, q)``: the list renames the relation's columns in
        order. A table becomes ``(SELECT c1 AS a, c2 AS b FROM t) AS x`` (its schema gives c1, c2); a
        lateral subquery's projections take the names. Else left to qualify."""
        for alias in list(query.find_all(exp.TableAlias)):
            names = [c.name for c in alias.columns]
            relation = alias.parent
            if not names or alias.arg_key != "alias":
                continue
            if isinstance(relation, exp.Table) and isinstance(relation.this, exp.Identifier):
                info = self.catalog.get(self._table_name(relation))
                if info is None or len(info.names) != len(names):
                    continue
                bare = relation.copy()
                bare.set("alias", None)
                body = exp.select(*(exp.alias_(exp.column(c), n) for c, n in zip(info.names, names))).from_(bare)
                relation.replace(exp.Subquery(this=body, alias=exp.TableAlias(this=alias.this)))
            elif isinstance(relation, exp.Lateral) and isinstance(relation.this, exp.Subquery) \
                    and isinstance(relation.this.this, exp.Select):
                select = relation.this.this
                if len(select.expressions) != len(names) or any(isinstance(p, exp.Star) for p in select.expressions):
                    continue
                select.set("expressions", [exp.alias_(p.this if isinstance(p, exp.Alias) else p, n)
                                           for p, n in zip(select.expressions, names)])
                alias.set("columns", None)

    def _from_columns(self, select: exp.Select, wanted: str, upto: exp.Expression | None = None
                      ) -> list[exp.Expression] | None:
        """The columns of the tables a select reads (of ``wanted`` only, when given; only those before
        ``upto``), qualified; ``None`` when one of them is not a table of known schema. A LATERAL subquery's
        select reads the relations before it too: a star of a relation it does not have is theirs
        (``LATERAL (SELECT t.*)``)."""
        frm = select.args.get("from_") or select.args.get("from")
        relations = ([frm.this] if frm is not None else []) + [j.this for j in select.args.get("joins") or []]
        out: list[exp.Expression] = []
        for relation in relations:
            if relation is upto:
                break
            name = relation.alias_or_name
            if wanted and name.lower() != wanted.lower():
                continue
            body = relation.this.this if isinstance(relation, exp.Lateral) and isinstance(
                relation.this, exp.Subquery) else relation.this if isinstance(relation, exp.Subquery) else None
            if isinstance(body, exp.Select):
                names = [p.alias_or_name for p in body.expressions]
                if not all(names) or "*" in names:
                    return None
            elif isinstance(relation, exp.Table) and isinstance(relation.this, exp.Identifier):
                info = self.catalog.get(self._table_name(relation))
                if info is None or not info.columns:
                    return None
                names = info.names
            else:
                return None
            out.extend(exp.column(c, table=name) if name else exp.column(c) for c in names)
        if not out and wanted:
            lateral = select.parent.parent if isinstance(select.parent, exp.Subquery) else None
            outer = lateral.parent.parent if isinstance(lateral, exp.Lateral) and isinstance(
                lateral.parent, (exp.From, exp.Join)) else None
            if isinstance(outer, exp.Select):
                return self._from_columns(outer, wanted, lateral)
        return out or None

    def _struct_excepts(self, query: exp.Expression) -> None:
        """``SELECT * EXCEPT (data.f1)``: what is left out is a field of the struct column ``data``, which Spark
        outputs as the struct of its other fields. Read as ``* REPLACE (struct(data.s2 AS s2) AS data)``, from
        the column's type in the schema (left as written where it is unknown)."""
        for star in list(query.find_all(exp.Star)):
            select = star.parent
            paths = [e for e in star.args.get("except_") or [] if isinstance(e, exp.Column) and e.table]
            if not isinstance(select, exp.Select) or not paths:
                continue
            frm = select.args.get("from_") or select.args.get("from")
            tables = [r for r in ([frm.this] if frm is not None else []) + [j.this for j in select.args.get("joins")
                      or []] if isinstance(r, exp.Table) and isinstance(r.this, exp.Identifier)]
            heads: dict[str, tuple[str, str, list[list[str]]]] = {}
            for path in paths:
                parts = [p.name for p in path.parts]
                if any(t.alias_or_name.lower() == parts[0].lower() for t in tables):
                    continue  # ``t.col``: a column of relation t
                for table in tables:
                    info = self.catalog.get(self._table_name(table))
                    found = info.lookup(parts[0]) if info is not None else None
                    if found and struct_fields(found[1]):
                        heads.setdefault(found[0].lower(), (found[0], found[1], []))[2].append(
                            [p.lower() for p in parts[1:]])
                        break
            if not heads:
                continue
            star.set("except_", [e for e in star.args.get("except_") or []
                                 if not (e in paths and e.parts[0].name.lower() in heads)] or None)
            replaced = list(star.args.get("replace") or [])
            for name, kind, left_out in heads.values():
                fields = _struct_items(exp.column(name), kind, left_out)
                replaced.append(exp.alias_(exp.Struct(expressions=[
                    exp.PropertyEQ(this=exp.to_identifier(n), expression=v) for n, v in fields]), name))
            star.set("replace", replaced)

    @staticmethod
    def _names_relation(select: exp.Select, name: str) -> bool:
        """Whether ``name`` is a relation the select (or the query a LATERAL select sits in) reads."""
        while select is not None:
            frm = select.args.get("from_") or select.args.get("from")
            relations = ([frm.this] if frm is not None else []) + [j.this for j in select.args.get("joins") or []]
            if any(r.alias_or_name.lower() == name.lower() for r in relations):
                return True
            select = select.parent.find_ancestor(exp.Select) if select.parent is not None else None
        return False

    def _expand_lateral_stars(self, query: exp.Expression) -> None:
        """``LATERAL (SELECT t1.*, t2.* FROM t2)``: a star of a relation before the LATERAL is its columns;
        ``LATERAL (SELECT *)`` with no FROM has none (Spark's star over no relation). sqlglot's qualify
        leaves both, and then every star above them, unexpanded."""
        for lateral in list(query.find_all(exp.Lateral)):
            select = lateral.this.this if isinstance(lateral.this, exp.Subquery) else None
            if not isinstance(select, exp.Select):
                continue
            frm = select.args.get("from_") or select.args.get("from")
            own = {r.alias_or_name.lower() for r in ([frm.this] if frm is not None else []) +
                   [j.this for j in select.args.get("joins") or []]}
            items: list[exp.Expression] = []
            changed = False
            for p in select.expressions:
                table = p.table if isinstance(p, exp.Column) and isinstance(p.this, exp.Star) else None
                star = p.this if table is not None else p if isinstance(p, exp.Star) else None
                if star is not None and table is None and frm is None:
                    changed = True  # ``SELECT *`` over no relation: no column (the ones before are not its)
                    continue
                outer = star is not None and not star.args.get("except_") and not star.args.get("replace") \
                    and table is not None and table.lower() not in own
                columns = self._from_columns(select, table) if outer else None
                if columns:
                    items.extend(columns)
                    changed = True
                else:
                    items.append(p)
            if changed and items:
                select.set("expressions", items)
            elif changed and isinstance(lateral.parent, exp.Join) and not any(
                    v for k, v in select.args.items() if k != "expressions"):
                lateral.parent.pop()  # ``LATERAL (SELECT *)``: one row of no column, joined to each row

    def _column_type(self, column: exp.Column) -> str | None:
        """The schema's type of a column of a table its SELECT reads (by its qualifier, else the one
        table that has it), before qualification: what a generator of a column makes depends on it."""
        select = column.find_ancestor(exp.Select)
        if select is None:
            return None
        tables = [t for t in select.find_all(exp.Table) if t.find_ancestor(exp.Select) is select]
        if column.table:
            tables = [t for t in tables if t.alias_or_name.lower() == column.table.lower()]
        types = []
        for table in tables:
            info = self.catalog.get(self._table_name(table))
            found = info.lookup(column.name) if info is not None else None
            if found:
                types.append(found[1])
        return types[0] if len(types) == 1 else None

    def _row_level(self, tree: exp.Expression, sql: str, index: int) -> list[StatementLineage]:
        """MERGE INTO, UPDATE, DELETE FROM: read as one query over the target (``sql/rowlevel.py``)."""
        target = tree.this
        if not isinstance(target, exp.Table):
            return [_none(index, sql, f"this {tree.key.upper()} form is not covered by the static extractor")]
        name = self._table_name(target)
        info = self.catalog.get(name)
        rewritten = row_level_query(tree, info.names if info is not None else None)
        result = self._lineage(rewritten.query)
        produced = {alias.lower(): origins for alias, origins in result.columns}
        gathered: dict[str, set[Origin]] = {c.lower(): set() for c in rewritten.columns}
        for alias, column in rewritten.feeds.items():
            if column.lower() in gathered:
                gathered[column.lower()] |= produced.get(alias.lower(), frozenset())
        columns = [(c, frozenset(gathered[c.lower()])) for c in rewritten.columns]
        result.warnings.extend(rewritten.warnings)
        if info is None:
            result.warnings.append(f"no schema for {name}: the columns its clauses leave as they are are unknown")
            result.confidence = min(result.confidence, UNCHECKED_CONFIDENCE)
        dataset = naming.from_location(info.location if info else None, table=name, mode=ROW_LEVEL_MODES[type(tree)])
        whens = tree.args.get("whens")
        writes = isinstance(tree, exp.Update) or any(
            isinstance(w.args.get("then"), (exp.Update, exp.Insert)) for w in (whens.expressions if whens else []))
        return [self._document(index, sql, dataset, result, columns, writes_values=writes)]

    def _directory(self, sql: str, index: int, m: re.Match[str]) -> list[StatementLineage]:
        path = _directory_path(m)
        try:
            query = parse(m.group("query"))
            if "|>" in sql:
                requalify_pipes(query)
        except SqlglotError as e:
            return [_none(index, sql, _parse_failed(e))]
        result = self._lineage(query)
        return [self._document(index, sql, naming.from_location(path, table=None, mode="overwrite"), result,
                               result.columns)]

    def _document(self, index: int, sql: str, target: Dataset | None, result: Result,
                  columns: list[tuple[str, frozenset[Origin]]], writes_values: bool = True) -> StatementLineage:
        """``writes_values``: False for a row-level write whose clauses only delete rows."""
        if self._pipe_notes:
            result.warnings.extend(self._pipe_notes)
            result.confidence = min(result.confidence, PARTIAL_CONFIDENCE)
        if self._unresolved:
            result.warnings.append(f"IDENTIFIER({', '.join(self._unresolved)}): the script gives the variable no "
                                   f"literal value, so what it names is unknown")
            result.confidence = min(result.confidence, PARTIAL_CONFIDENCE)
        if target is not None and not columns and writes_values:  # never silent: a write writes columns
            result.warnings.append("the static extractor found no column this write writes")
            result.confidence = min(result.confidence, PARTIAL_CONFIDENCE)
        warnings = tuple(dict.fromkeys(result.warnings))
        return StatementLineage.of(
            index=index, sql=sql, method="sql", confidence=result.confidence if warnings else 1.0, target=target,
            inputs=result.inputs, columns=[(output_name(c), o) for c, o in columns],
            indirect=result.indirect, warnings=warnings,
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

    def _lineage(self, query: exp.Expression) -> Result:
        query = _unparenthesized(query)
        if isinstance(query, exp.Values):  # rows of literals: ``AS v(k, w)`` names them, else col1, col2, ...
            width = len(query.expressions[0].expressions) if query.expressions else 0
            alias = query.args.get("alias")
            given = [c.name for c in alias.columns] if alias is not None and alias.columns else []
            return Result([(given[i] if i < len(given) else f"col{i + 1}", frozenset()) for i in range(width)])
        # Rewrites of rare constructs, each walk paid only when the statement's text can hold one.
        text = self._lower(self._sql)
        # A one-character test is found at once (a memchr), a word is a slower scan of the text: the star steps'
        # word tests are made only after a star is found, and each word once.
        star = "*" in text
        lateral = "lateral" in text
        if self.catalog.functions:
            expand_table_functions(query, self._table_function)
        # sqlglot reads a TRANSFORM only where the text it parsed says so: the statement's, or the one MAP / REDUCE
        # were written as (``self._sql`` may still say MAP)
        if self._mapped or "transform" in text:
            _expand_transforms(query)
        if lateral:
            _name_laterals(query)
        generators = any(part in text for part in _GENERATOR_PARTS)
        if generators:
            _generators_of_literals_as_queries(query)
            _expand_generators(query, self._column_type)
        if "struct" in text:
            _read_fields_made_in_place(query)
        if "range" in text or generators:
            _name_generator_relations(query, self._column_type)
        if _found(_PARENTHESIZED_FROM, text):
            _flatten_joins(query)
        self._notes = []
        if _alias_list(text):
            self._apply_alias_lists(query)
        if _STAR_ARGUMENT_END.search(text) and _STAR_ARGUMENT.search(text):
            self._expand_star_arguments(query)
        if lateral and star:
            self._expand_lateral_stars(query)
        if star and "except" in text:
            self._struct_excepts(query)
        qualified, names, using, root, wheres = qualify(query, self._sql, text, self.catalog.database, self.schema())
        if star and (".*" in text or ". *" in text):
            self._expand_struct_stars(qualified)
        result = Resolver(self.catalog, self._sql, text, qualified, using, root, wheres).run()
        if self._notes:
            result.warnings.extend(self._notes)
            result.confidence = min(result.confidence, PARTIAL_CONFIDENCE)
        if star and _recased(result.columns, names, self.catalog.spellings()) and _found(_STAR_PROJECTION, text):
            # A star brings columns up with the case the schema gives them (qualify's schema is lower case).
            for table in _TABLES(qualified):  # in ``find_all``'s order: a name's first case kept
                info = self.catalog.get(self._table_name(table))
                for c, _ in info.columns if info is not None else ():
                    names.setdefault(c.lower(), c)
        result.columns = [(names.get(c.lower(), c), o) for c, o in result.columns]
        return result


_TABLES = FindAll(exp.Table)
_SUBQUERIES = FindAll(exp.Subquery)


def _recased(columns: list[tuple[str, Any]], names: dict[str, str], spellings: dict[str, str] | None) -> bool:
    """Whether a table may give an output column another case: a column not named as written (``names``) whose
    name the catalog's tables spell otherwise (``Catalog.spellings``). Where none does, the walk of the query's
    tables for their case would change no name: a name any of them gives it is the one it has."""
    for c, _ in columns:
        lower = c.lower()
        if lower not in names and (spellings is None or spellings.get(lower, c) != c):
            return True
    return False


# ``MAP a, b USING 'cat' AS (..) FROM t``, ``FROM t MAP .. USING ..``: Hive's spellings of SELECT TRANSFORM.
_MAP_REDUCE = re.compile(r"^(?P<head>\s*(?:INSERT\s+(?:INTO|OVERWRITE)\s+(?:TABLE\s+)?[\w.`]+\s+|CREATE\s+.*?\bAS\s+))?"
                         r"\s*(?:FROM\s+(?P<source>.+?)\s+)?(?:MAP|REDUCE)\s+(?P<inputs>.+?)\s+USING\s+"
                         r"(?P<script>'(?:[^'\\]|\\.)*')(?P<rest>.*)$", re.I | re.S)
# How such a statement starts (matched first: an anchored match fails at once on the many that start otherwise, where
# the word tests read the whole text), and the word it holds.
_MAP_REDUCE_START = re.compile(r"\s*(?:MAP|REDUCE|FROM|INSERT|CREATE)\b", re.I)
_MAP_REDUCE_WORD = re.compile(r"\b(?:MAP|REDUCE)\s", re.I)
_AS_COLUMNS = re.compile(r"^\s*AS\s*(?:\([^()]*\)|\w+(?:\s*,\s*\w+)*)", re.I)


def _map_reduce(sql: str, lower: str) -> str:
    """``MAP``/``REDUCE`` (Hive) written as the ``SELECT TRANSFORM`` Spark reads them as; sqlglot knows only that.
    ``lower``: ``sql`` lower-cased."""
    # Cheapest first: how the statement starts, then the two words as substrings (a fast scan), then as words;
    # only a statement that passes all three is matched against the full pattern, which scans the whole text.
    if not _MAP_REDUCE_START.match(sql) or ("map" not in lower and "reduce" not in lower) \
            or not _MAP_REDUCE_WORD.search(sql):
        return sql
    m = _MAP_REDUCE.match(sql)
    if m is None:
        return sql
    rest = m.group("rest")
    columns = _AS_COLUMNS.match(rest)
    head = (f"{m.group('head') or ''}SELECT TRANSFORM({m.group('inputs')}) USING {m.group('script')}"
            f"{columns.group(0) if columns else ''}")
    tail = rest[columns.end():] if columns else rest
    return f"{head} FROM {m.group('source')}{tail}" if m.group("source") else f"{head}{tail}"


def _directory_path(m: re.Match[str]) -> str | None:
    """The path an ``INSERT OVERWRITE DIRECTORY`` writes: its quoted path, else its ``path`` option."""
    path = m.group("path")
    if path:
        return path[1:-1]
    opt = _OPTION_PATH.search(m.group("rest") or "")
    return opt.group(1) if opt else None


def _multi_insert_directories(sql: str, lower: str) -> tuple[str, dict[str, str | None]]:
    """sqlglot cannot read an ``INSERT OVERWRITE DIRECTORY 'p' [USING ..] [OPTIONS (..)]`` inside a
    multi-insert: each such head is written ``INSERT OVERWRITE TABLE __directory_<n>`` and its path kept.
    ``lower``: ``sql`` lower-cased."""
    if "directory" not in lower or not _MULTI_START.match(sql):
        return sql, {}
    directories: dict[str, str | None] = {}

    def placeholder(m: re.Match[str]) -> str:
        name = f"__directory_{len(directories)}"
        directories[name] = _directory_path(m)
        return f"INSERT OVERWRITE TABLE {name} "

    return _MULTI_DIRECTORY.sub(placeholder, sql), directories


_MULTI_START = re.compile(r"^\s*(?:WITH|FROM)\b", re.I)
_MULTI_DIRECTORY = re.compile(
    r"\bINSERT\s+OVERWRITE\s+(?:LOCAL\s+)?DIRECTORY\s*(?P<path>'(?:[^'\\]|\\.)*')?(?P<rest>.*?)(?=\bSELECT\b)",
    re.I | re.S)


_STRING = r"'(?:[^'\\]|\\.)*'"
_NAME = r"[A-Za-z_][\w.]*"
# ``IDENTIFIER(...)`` of string literals and session variables, concatenated with ``||``.
_IDENTIFIER = re.compile(rf"\bIDENTIFIER\s*\(\s*((?:{_STRING}|{_NAME})(?:\s*\|\|\s*(?:{_STRING}|{_NAME}))*)\s*\)", re.I)
_IDENTIFIER_PART = re.compile(rf"({_STRING})|({_NAME})")
_SESSION = re.compile(r"^(?:system\.)?session\.", re.I)
_PLAIN_NAME = re.compile(r"^[A-Za-z_][\w.]*$")


# sqlglot's name for a statement's WITH clause (``with_`` in recent releases).
_WITH = "with_" if "with_" in exp.Select.arg_types else "with"


def _with_outer_ctes(statement: exp.Expression, query: exp.Expression | None) -> exp.Expression | None:
    """Spark lets a statement's CTEs come first (``WITH c AS (..) INSERT INTO t SELECT .. FROM c``):
    sqlglot keeps them on the statement, so they go onto the query they name tables for."""
    outer = statement.args.get(_WITH)
    if outer is None or not isinstance(query, exp.Query):
        return query
    inner = query.args.get(_WITH)
    if inner is None:
        query.set(_WITH, outer)
    else:
        inner.set("expressions", [*outer.expressions, *inner.expressions])
        inner.set("recursive", bool(outer.args.get("recursive") or inner.args.get("recursive")))
    statement.set(_WITH, None)
    return query


def _unparenthesized(query: exp.Expression | None) -> exp.Expression | None:
    """The query a statement writes in parentheses (``AS (SELECT ..)``, ``INSERT INTO t ((WITH ..
    SELECT ..))``): sqlglot makes it an unnamed derived table, which names no output column. An ORDER
    BY or LIMIT written after the parentheses goes onto the query, or around it when it has its own."""
    while type(query) is exp.Subquery and not query.args.get("alias"):
        inner = query.this
        after = {k: v for k, v in query.args.items() if k != "this" and isinstance(v, exp.Expression)}
        takes = isinstance(inner, (exp.Select, exp.SetOperation)) and not any(inner.args.get(k) for k in after)
        if after and not takes:
            inner = exp.select(exp.Star()).from_(exp.Subquery(this=inner, alias=exp.TableAlias(
                this=exp.to_identifier("__query"))))
        for key, value in after.items():
            inner.set(key, value)
        query = inner
    return query


def _after_words(words: tuple[str, ...], rest: str) -> tuple[re.Pattern[str], ...]:
    """One pattern per word: the word (a whole word, by a lookbehind) followed by ``rest``. A pattern
    that starts with a literal word is searched by skipping to where the word is; one that starts with
    an alternation (``(?:from|join)``, ``f|j``) tests every letter of the text, three times slower."""
    return tuple(re.compile(rf"{w}(?<=\b{w}){rest}") for w in words)


def _found(patterns: tuple[re.Pattern[str], ...], text: str) -> bool:
    """Whether any of ``patterns`` is in ``text``."""
    return any(p.search(text) for p in patterns)


# ``name(a, b)`` after a relation: perhaps a list of column aliases (not IN (...), OVER (...), ...).
# Four patterns, each starting with a literal (``)``, ``,``, ``from``, ``join``), so that the engine skips to where
# it is; possessive quantifiers (a name is never followed by its own last letters) spare the backtracking at every
# comma. A tenth of a TPC-DS query's extraction once went to such searches; one alternation of them cost 2.3x what
# they cost apart.
_ALIAS_LIST_TAIL = r"(?!(?:over|using|on|filter|within)\b)\w++\s*+\(\s*+\w++(?:\s*+,\s*+\w++)*+\s*+\)"
_ALIAS_LISTS = (re.compile(r"\)\s++(?:as\s++)?" + _ALIAS_LIST_TAIL),
                *_after_words(("from", "join"), r"\s*+[\w.`]++\s++(?:as\s++)?" + _ALIAS_LIST_TAIL),
                re.compile(r",\s*+[\w.`]++\s++(?:as\s++)?" + _ALIAS_LIST_TAIL))


def _alias_list(text: str) -> bool:
    """Whether the (lower-cased) statement may hold a list of column aliases: ``FROM t AS x(a, b)``."""
    return _found(_ALIAS_LISTS, text)


# ``SELECT *``, ``, t.*``: a star in a select list (not ``count(*)``).
_STAR_PROJECTION = (*_after_words(("select",), r"(?:\s+distinct)?\s*(?:[\w`]++\.)?\*"),
                    re.compile(r",\s*(?:[\w`]++\.)?\*"))
# ``f(*)`` / ``f(x, t.*)`` other than count(*): a star as a function's argument; ``count(DISTINCT *)`` is one.
_STAR_ARGUMENT = re.compile(r"\((?:(?<!count\()(?:[^()]*,)?|\s*distinct\s*\(?)\s*(?:\w+\.)?\*\s*(?:[,)]|except\b)")
# How a ``_STAR_ARGUMENT`` match ends: a star not right after ``count(`` (the pattern's lookbehind rules that out),
# before a comma, a parenthesis or EXCEPT. Searched first: the engine skips to each star at once, where the full
# pattern, which starts at ``(``, is tried at every parenthesis (hundreds of times the cost on a TPC-DS query).
_STAR_ARGUMENT_END = re.compile(r"\*(?<!count\(\*)\s*(?:[,)]|except\b)")
# ``FROM (`` / ``JOIN (`` opening something other than a query: perhaps a join in parentheses.
_PARENTHESIZED_FROM = _after_words(("from", "join"), r"\s*\(\s*(?:\(|(?!(?:select|with|values|from|table)\b)\w)")


def _flatten_joins(query: exp.Expression) -> None:
    """``FROM (a JOIN b ON ..)``, ``JOIN ((b JOIN c ON ..)) ON ..``: a join in parentheses joins the
    same relations on the same conditions as one written out (sqlglot reads it as an unnamed derived
    table that hangs the joins on its first relation, which no column can name)."""
    for sub in _SUBQUERIES(query):  # every one, found before any is replaced
        holder = sub.parent
        if sub.args.get("alias") is not None or not isinstance(holder, (exp.From, exp.Join)):
            continue
        first, joins = _joined(sub)
        if first is sub:
            continue
        select = holder.parent
        if not isinstance(select, exp.Select):
            continue
        sub.replace(first)
        existing = list(select.args.get("joins") or [])
        at = 0 if isinstance(holder, exp.From) else existing.index(holder) + 1
        select.set("joins", existing[:at] + joins + existing[at:])


def _joined(node: exp.Expression) -> tuple[exp.Expression, list[exp.Expression]]:
    """(the first relation, the joins after it, each flattened too) of a relation in parentheses or
    one that carries joins; ``(node, [])`` for a relation with neither."""
    joins = list(node.args.get("joins") or [])
    if joins:
        node.set("joins", None)
    if type(node) is exp.Subquery and node.args.get("alias") is None and not isinstance(
            node.this, (exp.Select, exp.SetOperation)):  # parentheses around a relation or a join
        first, out = _joined(node.this)
    else:
        first, out = node, []
    for join in joins:
        inner_first, inner_joins = _joined(join.this)
        if inner_first is not join.this:
            join.set("this", inner_first)
        out = [*out, join, *inner_joins]
    return first, out


def _expand_transforms(query: exp.Expression) -> None:
    """``SELECT TRANSFORM (a, b) USING 'script' AS (x, y)``: an external program turns the input rows
    into the output rows, so each output column is a TRANSFORMATION of every input (the plan's rule);
    read as one call of all the inputs per output column. With no ``AS``, Spark names them key, value."""
    for transform in list(query.find_all(exp.QueryTransform)):
        select = transform.parent
        if not isinstance(select, exp.Select):
            continue
        schema = transform.args.get("schema")
        names = [c.name for c in schema.expressions] if isinstance(schema, exp.Schema) else ["key", "value"]
        calls = [exp.alias_(exp.Anonymous(this="TRANSFORM", expressions=[e.copy() for e in transform.expressions]),
                            name) for name in names]
        items = []
        for item in select.expressions:
            items.extend(calls if item is transform else [item])
        select.set("expressions", items)


_GENERATORS = frozenset({"explode", "explode_outer", "posexplode", "posexplode_outer", "inline", "inline_outer",
                         "stack", "json_tuple"})
# What the text of a statement calling one of them holds (``explode`` is in ``posexplode_outer`` too).
_GENERATOR_PARTS = ("explode", "inline", "stack", "json_tuple")
assert all(any(part in name for part in _GENERATOR_PARTS) for name in _GENERATORS)


def _generator_name(node: exp.Expression) -> str:
    return function_name(node)  # ``posexplode_outer``, not sqlglot's key ``posexplodeouter``


def _expand_generators(query: exp.Expression, column_type: Callable[[exp.Column], str | None]) -> None:
    """A generator in the select list makes several columns: ``posexplode(a) AS (pos, v)``, ``stack(2, ..)
    AS (x, y)``, ``inline(array(named_struct('p', ..)))`` or ``inline(items)`` (its structs' fields, from
    the literal or the column's type). Each is read as one call of the generator, a TRANSFORMATION of
    what it reads, as Spark's plan makes each of its outputs."""
    for select in list(query.find_all(exp.Select)):
        items: list[exp.Expression] = []
        changed = False
        for item in select.expressions:
            call = item.this if isinstance(item, exp.Aliases) else item
            names: list[str] = []
            if _generator_name(call) in _GENERATORS:
                if isinstance(item, exp.Aliases):  # ``AS (p, v)``; ``AS (null, null)`` names them null
                    names = [e.name if isinstance(e, exp.Identifier) else plain_sql(e).lower()
                             for e in item.expressions]
                else:  # unnamed: the names Spark gives (``col``, ``pos``, ``key``, ``value``, ``c0``, ..)
                    names = _generator_outputs(call, column_type)
            if len(names) > 1 or (names and isinstance(item, exp.Aliases)) or (names and item is call):
                items.extend(exp.alias_(call.copy(), name) for name in names)
                changed = True
            else:
                items.append(item)
        if changed:
            select.set("expressions", items)


def _name_laterals(query: exp.Expression) -> None:
    """``FROM t, LATERAL (SELECT ..), LATERAL (SELECT ..)``: each unnamed LATERAL subquery gets a name of its
    own (sqlglot's qualify names them ``_0``, ``_1`` per scope and fails on a chain of three, "Alias already
    used"); Spark's column names do not depend on it."""
    for i, lateral in enumerate(query.find_all(exp.Lateral)):
        alias = lateral.args.get("alias")
        if isinstance(lateral.this, exp.Subquery) and (alias is None or not alias.name):
            lateral.set("alias", exp.TableAlias(this=exp.to_identifier(f"__lateral_{i}"),
                                                columns=alias.columns if alias is not None else None))


def _generators_of_literals_as_queries(query: exp.Expression) -> None:
    """``FROM explode(array(1, 2)) t(v)``: a generator in FROM that reads no column and names its columns is
    the query ``(SELECT explode(array(1, 2)) AS v) t``, whose columns sqlglot's qualify knows (it takes a
    table function for a table of unknown schema, and then cannot place a column a later LATERAL reads)."""
    for table in list(query.find_all(exp.Table)):
        call, alias = table.this, table.args.get("alias")
        if not isinstance(call, exp.Func) or _generator_name(call) not in _GENERATORS or alias is None \
                or not alias.columns or call.find(exp.Column) is not None:
            continue
        names = [c.copy() for c in alias.columns]
        item = exp.alias_(call.copy(), names[0]) if len(names) == 1 else exp.Aliases(this=call.copy(),
                                                                                      expressions=names)
        table.replace(exp.Subquery(this=exp.select(item), alias=exp.TableAlias(this=alias.this)))


def _name_generator_relations(query: exp.Expression, column_type: Callable[[exp.Column], str | None]) -> None:
    """``FROM t, LATERAL explode(tags)``, ``FROM range(3)``, ``LATERAL VIEW`` with no column names: the
    columns Spark names (``col``; ``key``, ``value``; ``pos``; ``id``; ``c0``..; ``col0``..) become the
    relation's column aliases, so that a ``*`` over it expands to them as Spark's does."""
    for node in list(query.find_all(exp.Lateral, exp.Table)):
        call = node.this
        alias = node.args.get("alias")
        if isinstance(call, exp.Identifier) or not isinstance(call, exp.Func) or (alias is not None and alias.columns):
            continue
        names = _generator_outputs(call, column_type)
        if names:
            node.set("alias", exp.TableAlias(this=alias.this if alias is not None else None,
                                             columns=[exp.to_identifier(n) for n in names]))


def _generator_outputs(call: exp.Expression, column_type: Callable[[exp.Column], str | None]) -> list[str]:
    """The names Spark gives the columns of a generator or table function written without them."""
    name = _generator_name(call)
    args = list(call.expressions) if isinstance(call, exp.Anonymous) else [a for a in call.iter_expressions()]
    if name == "range":
        return ["id"]
    if name in ("explode", "explode_outer", "posexplode", "posexplode_outer"):
        first = args[0] if args else None
        kind = column_type(first) if isinstance(first, exp.Column) else None
        is_map = isinstance(first, (exp.Map, exp.VarMap)) or (isinstance(first, exp.Anonymous) and
                                                             first.name.lower() == "map") \
            or bool(kind and kind.strip().upper().startswith("MAP"))
        return (["pos"] if name.startswith("pos") else []) + (["key", "value"] if is_map else ["col"])
    if name in ("inline", "inline_outer"):
        return _inline_fields(call, column_type)
    if name == "json_tuple":
        return [f"c{i}" for i in range(len(args) - 1)]
    if name == "stack" and args and isinstance(args[0], exp.Literal) and args[0].is_int and int(args[0].name) > 0:
        rows = int(args[0].name)
        return [f"col{i}" for i in range(-(-(len(args) - 1) // rows))]
    return []


def _inline_fields(call: exp.Expression, column_type: Callable[[exp.Column], str | None]) -> list[str]:
    """The fields of the structs ``inline(array(named_struct('p', ..), ..))`` or ``inline(items)`` (an
    ``ARRAY<STRUCT<..>>`` column) makes rows of."""
    array = (call.expressions[0] if call.expressions else None) if isinstance(call, exp.Anonymous) else call.this
    if isinstance(array, exp.Column):
        found = _ARRAY_OF.match(column_type(array) or "")
        return _struct_fields(found.group(1)) if found else []
    first = array.expressions[0] if isinstance(array, exp.Array) and array.expressions else None
    if isinstance(first, exp.Struct):
        return [e.this.name for e in first.expressions if isinstance(e, exp.PropertyEQ)]
    if isinstance(first, exp.Anonymous) and first.name.lower() == "named_struct":
        return [e.name for e in first.expressions[0::2] if isinstance(e, exp.Literal)]
    return []


_ARRAY_OF = re.compile(r"\s*ARRAY\s*<(.*)>\s*$", re.IGNORECASE | re.DOTALL)


def _struct_items(base: exp.Expression, data_type: str, left_out: list[list[str]]
                  ) -> list[tuple[str, exp.Expression]]:
    """(name, value) of the fields of the struct ``base`` is, less the paths ``left_out`` (lower-case parts):
    a field with a path left out below it is the struct of what is left of it."""
    out: list[tuple[str, exp.Expression]] = []
    for name, kind in struct_fields(data_type):
        below = [p[1:] for p in left_out if p and p[0] == name.lower()]
        if [] in below:
            continue
        value: exp.Expression = exp.Dot(this=base.copy(), expression=exp.to_identifier(name))
        if below:
            value = exp.Struct(expressions=[exp.PropertyEQ(this=exp.to_identifier(n), expression=v)
                                            for n, v in _struct_items(value, kind, below)])
        out.append((name, value))
    return out


def _struct_literal_types(query: exp.Expression) -> dict[str, str]:
    """The types of the columns a query makes of struct literals (``VALUES (1, named_struct('a', ..)) AS
    t(k, s)``, ``SELECT named_struct(..) AS s``), by lower-case name: ``STRUCT<a: , ..>`` (fields only)."""
    values = query if isinstance(query, exp.Values) else None
    alias = values.args.get("alias") if values is not None else None
    frm = query.args.get("from_") or query.args.get("from") if isinstance(query, exp.Select) else None
    if frm is not None and [type(p) for p in query.expressions] == [exp.Star]:
        relation = frm.this
        if isinstance(relation, exp.Subquery) and isinstance(relation.this, exp.Values):  # (VALUES ..) AS v(a, b)
            values, alias = relation.this, relation.args.get("alias") or relation.this.args.get("alias")
        elif isinstance(relation, exp.Values):
            values, alias = relation, relation.args.get("alias")
    out: dict[str, str] = {}
    if values is not None:
        first = values.expressions[0] if values.expressions else None
        if alias is not None and isinstance(first, exp.Tuple):
            for column, value in zip(alias.columns, first.expressions):
                if _struct_literal_type(value):
                    out[column.name.lower()] = _struct_literal_type(value)
    elif isinstance(query, exp.Select):
        for p in query.expressions:
            if isinstance(p, exp.Alias) and _struct_literal_type(p.this):
                out[p.alias.lower()] = _struct_literal_type(p.this)
    return out


def _struct_literal_type(node: exp.Expression) -> str:
    """``STRUCT<a: , b: STRUCT<..>>`` of a struct literal (``named_struct('a', 1, ..)``; ``struct(1, 'x')``: Spark's
    ``col1``, ``col2``), ``ARRAY<..>`` of an array of them; ``""`` for anything else."""
    if isinstance(node, exp.Array):
        inner = _struct_literal_type(node.expressions[0]) if node.expressions else ""
        return f"ARRAY<{inner}>" if inner else ""
    if not isinstance(node, exp.Struct):
        return ""
    fields = []
    for i, e in enumerate(node.expressions):
        if isinstance(e, exp.PropertyEQ):
            fields.append(f"{e.this.name}: {_struct_literal_type(e.expression)}")
        elif isinstance(e, exp.Literal):
            fields.append(f"col{i + 1}: ")
        else:
            return ""
    return "STRUCT<" + ", ".join(fields) + ">"


def _struct_fields(data_type: str) -> list[str]:
    """The field names of ``STRUCT<a: T, b: STRUCT<..>>`` (top level only), ``[]`` for another type."""
    return [name for name, _ in struct_fields(data_type)]


def _read_fields_made_in_place(query: exp.Expression) -> None:
    """A field of a struct made in place (``STRUCT(info.*).city``, ``named_struct('n', name, ..).n``,
    ``struct(a, b).b``) is that field's value alone, as Spark's analyzed plan reads it: replaced by
    it (``info.city``, ``name``, ``b``), deepest first, so that ``STRUCT(STRUCT(info.*) AS s).s.zip`` is
    ``info.zip``. A field the struct does not name is left as it is."""
    for dot in reversed(list(query.find_all(exp.Dot))):
        struct, field = dot.this, dot.expression
        if not isinstance(struct, exp.Struct) or not isinstance(field, exp.Identifier):
            continue
        value: exp.Expression | None = None
        stars = []
        for item in struct.expressions:
            if isinstance(item, exp.Star):
                stars.append(exp.Column(this=item))
            elif isinstance(item, exp.Column) and isinstance(item.this, exp.Star):
                stars.append(item)
            elif item.alias_or_name.lower() == field.name.lower() and value is None:
                value = item.expression if isinstance(item, exp.PropertyEQ) else item.unalias()
        if value is None and len(stars) == 1:  # ``STRUCT(info.*)``: the field of what the star spreads
            value = stars[0].copy()
            value.set("this", field.copy())
        if value is None:
            continue
        replacement = value.copy()
        if isinstance(dot.parent, exp.Dot) and dot.parent.this is dot and isinstance(replacement, exp.Column) \
                and not replacement.args.get("catalog") and isinstance(dot.parent.expression, exp.Identifier):
            # ``STRUCT(info AS s).s.zip``: ``info.zip``, a column path as sqlglot reads one
            outer = dot.parent
            replacement = exp.Column(this=outer.expression.copy(), table=replacement.this,
                                     db=replacement.args.get("table"), catalog=replacement.args.get("db"))
            outer.replace(replacement)
            continue
        dot.replace(replacement)


PARSE_FAILED = "the SQL could not be parsed"
EXTRACTION_FAILED = "static extraction failed"


def _failure(error: Exception) -> str:
    """What went wrong, in a line: a statement nested deeper than Python's recursion limit said so."""
    if isinstance(error, RecursionError):
        return ("the statement is nested too deep for the static extractor (RecursionError: maximum recursion "
                "depth exceeded)")
    return f"{error.__class__.__name__}: {error}"
_SQLGLOT_LINE = re.compile(r"\.? ?Line (\d+), Col: (\d+)\.?")
_SQLGLOT_TOKEN = re.compile(r"<Token token_type: [\w.]+, text: (.*?), line: \d+, col: \d+, start: \d+, end: \d+, "
                            r"comments: \[.*?\]>")


def _parse_failed(error: SqlglotError) -> str:
    """sqlglot's first line, its token reprs written as the text they hold (what a user typed)."""
    return f"{PARSE_FAILED}: {_SQLGLOT_TOKEN.sub(lambda m: repr(m.group(1)), str(error).splitlines()[0])}"


def _located(statement: StatementLineage, line: int, total: int) -> StatementLineage:
    """A statement with no lineage, its warnings saying where it is in the script: which statement,
    and for a syntax error the line of the script (sqlglot counts lines within the statement)."""
    def where(warning: str) -> str:
        found = _SQLGLOT_LINE.search(warning) if warning.startswith(PARSE_FAILED) else None
        at = line + int(found.group(1)) - 1 if found else line
        if found:
            warning = _SQLGLOT_LINE.sub(f" (column {found.group(2)} of line {at})", warning, count=1)
        return f"statement {statement.index + 1} of {total} (line {at} of the script): {warning}"

    return replace(statement, warnings=tuple(where(w) for w in statement.warnings))


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
