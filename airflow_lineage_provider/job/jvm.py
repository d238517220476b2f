"""What the plan JSON loses, read from Spark's JVM objects through py4j.

Spark's ``toJSON`` leaves out table locations, the paths of file sources, the
write mode and static partitions, JDBC and DataSource V2 tables, streaming
sources and sinks, and sometimes an Expand's projections. The capture asks the
JVM for them here, a few milliseconds per plan. JDBC URLs lose their credentials
before they are recorded. What it finds goes to a raw record's ``extras``, under the
names ``lineage/plan/record.py`` gives them. Imports nothing but the standard library and
lineage's ground floor: it runs inside the Spark driver.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Iterator

from airflow_lineage_provider.lineage.model import SPARK_CATALOG
from airflow_lineage_provider.lineage.naming import table_name
from airflow_lineage_provider.lineage.plan import record as raw
from airflow_lineage_provider.lineage.plan.record import all_nodes
from airflow_lineage_provider.lineage.plan.record import short_class as short
from airflow_lineage_provider.lineage.plan.writes import PARSED_WRITES, SAVE_MODES
from airflow_lineage_provider.lineage.redact import strip_jdbc_credentials
from airflow_lineage_provider.lineage.statements import split_statements

_CATALOG_FIELDS = ("catalogTable", "tableMeta", "table", "tableDesc")
_SOURCE_LEAVES = frozenset({"LogicalRelation", "DataSourceV2Relation", "StreamingExecutionRelation",
                            "StreamingDataSourceV2Relation", "StreamingDataSourceV2ScanRelation"})
# The first words of the statements that write a query they hold (CTAS, CREATE VIEW AS, INSERT, MERGE ...): a
# query whose text they precede is that write's (Describe.WRITE_HEADS in the JVM listener, a test ties the two).
WRITE_HEADS = frozenset({"ALTER", "CREATE", "DELETE", "INSERT", "MERGE", "REPLACE", "UPDATE"})


def simple_name(obj: Any) -> str:
    """A JVM object's class name without its package (and without Scala's ``$``)."""
    return obj.getClass().getSimpleName().rstrip("$")


def statement_kind(parsed: Any) -> str:
    """The kind of statement a parsed plan is, seen through what hides it: a WITH before a write
    (``WITH s AS (...) MERGE INTO t ...``) is the write's kind; a multi-insert (``FROM s INSERT INTO a
    SELECT ... INSERT INTO b SELECT ...``, parsed as a Union of inserts) is its inserts' kind."""
    name = simple_name(parsed)
    if name == "UnresolvedWith":
        return statement_kind(parsed.child())
    if name == "Union":
        kinds = _insert_kinds(parsed)
        if kinds:
            return kinds[0]
    return name


def is_multi_insert(parsed: Any) -> bool:
    """``FROM s INSERT INTO a SELECT ... INSERT INTO b SELECT ...`` (after a WITH or not): several writes."""
    name = simple_name(parsed)
    if name == "UnresolvedWith":
        return is_multi_insert(parsed.child())
    return name == "Union" and bool(_insert_kinds(parsed))


def _insert_kinds(union: Any) -> list[str]:
    """The kinds of a Union's children when every one is a write (a multi-insert), else none."""
    kids = union.children()
    kinds = [statement_kind(kids.apply(i)) for i in range(kids.size())]
    return kinds if kinds and set(kinds) <= PARSED_WRITES else []


def analyze_only(spark: Any, plan: Any) -> Any:
    """The analyzed plan of a statement (its SQL text, or its parsed plan) without executing it.

    ``CommandExecutionMode.SKIP``: a command is analyzed, never run. Statements must be
    analyzed in order, as a table an earlier statement creates must exist.
    """
    state = spark._jsparkSession.sessionState()
    if isinstance(plan, str):
        plan = state.sqlParser().parsePlan(plan)
    module = getattr(spark._jvm.org.apache.spark.sql.execution, "CommandExecutionMode$")
    return state.executePlan(plan, getattr(module, "MODULE$").SKIP()).analyzed()


def plan_only(spark: Any, plan: Any) -> None:
    """Plan a statement as Spark would to run it, and never run it: raises what Spark would refuse at
    planning, as a MERGE, UPDATE or DELETE into a table whose format cannot run one (plain parquet:
    ``UNSUPPORTED_FEATURE.TABLE_OPERATION``), which analysis alone lets through."""
    state = spark._jsparkSession.sessionState()
    module = getattr(spark._jvm.org.apache.spark.sql.execution, "CommandExecutionMode$")
    state.executePlan(plan, getattr(module, "MODULE$").SKIP()).sparkPlan()


def unwrap(plan: Any) -> Any:
    """The command a ``CommandResult`` holds: Spark runs the statement EXECUTE IMMEDIATE names while
    analyzing it, and the analyzed plan is then the result of the command it ran."""
    if simple_name(plan) == "CommandResult":
        return plan.commandLogicalPlan()
    return plan


def sql_text(plan: Any) -> str:
    """The text of the ``spark.sql`` call that made a write, as written; "" for a DataFrame write.

    Spark keeps a parsed statement's whole text in the origin of the nodes it parsed. An insert keeps it
    on the write itself; a command the analyzer makes anew (a CTAS, CREATE VIEW) only on its query, whose
    text then starts with the write's head. A DataFrame write's query can come from ``spark.sql("SELECT
    ...")`` too: its text starts with the query itself, and it is not the write's. Only the write and its
    query root are read: a cached relation deeper down keeps the origin of the statement that first read it.
    """
    plan = unwrap(plan)
    own = plan.origin().sqlText()
    if own.isDefined():
        return str(own.get())
    for child in _children(plan):
        origin = child.origin()
        text, start = origin.sqlText(), origin.startIndex()
        if text.isDefined() and start.isDefined() and sql_head(str(text.get())[:int(start.get())]) in WRITE_HEADS:
            return str(text.get())
    return ""


def sql_head(text: str) -> str:
    """The first word of ``text``'s code (comments skipped), upper-cased; "" if it has none."""
    statements = split_statements(text)
    word = statements[0].sql.split(None, 1)[0] if statements else ""
    end = next((i for i, ch in enumerate(word) if not (ch.isalnum() or ch == "_")), len(word))
    return word[:end].upper()


def _children(plan: Any) -> Iterator[Any]:
    """A plan's children, then its inner children (a CTAS's query)."""
    for seq in (plan.children(), plan.innerChildren()):
        for i in range(seq.size()):
            yield seq.apply(i)


class TableLocations:
    """Storage locations of catalog tables, asked of the session's external catalog once each."""

    def __init__(self, spark: Any) -> None:
        self.spark = spark
        self._cache: dict[str, str | None] = {}

    def __call__(self, database: str, table: str) -> str | None:
        key = f"{database}.{table}".lower()
        if key not in self._cache:
            try:
                external = self.spark._jsparkSession.sessionState().catalog().externalCatalog()
                self._cache[key] = external.getTable(database, table).location().toString()
            except Exception:  # noqa: BLE001 - no such table (yet): no location
                self._cache[key] = None
        return self._cache[key]


# -- what a plan reads --------------------------------------------------------------------------

def add_table_locations(flat: list[dict[str, Any]], extras: dict[str, Any], location: TableLocations) -> None:
    for ident in identifiers(flat):
        name = table_name(ident)
        if name and name not in extras[raw.TABLES]:
            extras[raw.TABLES][name] = location(ident.get("database") or "default", ident["table"])


def add_path_relations(plan: Any, flat: list[dict[str, Any]], extras: dict[str, Any]) -> None:
    """Sources read by path have no catalog table: ask the JVM relation for its paths."""
    def by_path(n: dict[str, Any]) -> bool:
        cls = short(n["class"])
        return (cls == "LogicalRelation" and not n.get("catalogTable")) or cls == "StreamingRelation"

    if not any(by_path(n) for n in all_nodes(flat)):
        return
    for node in jvm_nodes(plan):
        name = simple_name(node)
        if name == "LogicalRelation" and not node.catalogTable().isDefined():
            relation = node.relation()
            if simple_name(relation) != "HadoopFsRelation":
                continue
            roots = relation.location().rootPaths()
            paths = [roots.apply(i).toString() for i in range(roots.size())]
            fmt = relation.fileFormat().toString()
        elif name == "StreamingRelation":
            source = node.dataSource()
            seq = source.paths()
            paths = [seq.apply(i) for i in range(seq.size())]
            option = source.options().get("path")
            if not paths and option.isDefined():
                paths = [option.get()]
            fmt = source.className()
        else:
            continue
        first = node.output().apply(0).exprId().id()
        extras[raw.RELATIONS][str(first)] = {raw.PATHS: paths, raw.SOURCE_FORMAT: fmt}


def add_expand_projections(plan: Any, flat: list[dict[str, Any]], extras: dict[str, Any],
                           compact: Callable[[Any], Any]) -> None:
    """Spark's JSON sometimes writes an Expand's projections as null: read them from the JVM."""
    if not any(short(n["class"]) == "Expand" and n.get("projections") is None for n in all_nodes(flat)):
        return
    found: dict[str, Any] = {}
    for node in jvm_nodes(plan):
        if simple_name(node) != "Expand":
            continue
        rows = node.projections()
        found[str(node.output().apply(0).exprId().id())] = [
            [compact(json.loads(row.apply(j).toJSON())) for j in range(row.size())]
            for row in (rows.apply(i) for i in range(rows.size()))
        ]
    extras[raw.EXPAND] = found


def add_source_relations(plan: Any, flat: list[dict[str, Any]], extras: dict[str, Any]) -> None:
    """JDBC tables, V2 tables and started streaming sources, keyed by their first output exprId."""
    wanted = {"DataSourceV2Relation", "StreamingExecutionRelation", "StreamingDataSourceV2Relation"}
    if not any(short(n["class"]) in wanted or (short(n["class"]) == "LogicalRelation" and n.get("relation") is None
                                               and not n.get("catalogTable"))
               for n in all_nodes(flat)):
        return
    for node in jvm_nodes(plan):
        name = simple_name(node)
        if name not in _SOURCE_LEAVES:
            continue
        try:
            info = describe_source(node)
            if info and node.output().size() > 0:
                key = str(node.output().apply(0).exprId().id())
                extras[raw.RELATIONS][key] = {**extras[raw.RELATIONS].get(key, {}), **info}
        except Exception as e:  # noqa: BLE001 - a source we cannot read is named by what the JSON has
            extras.setdefault(raw.SOURCE_WARNINGS, []).append(f"could not read the source of {name}: {e}")


def describe_source(node: Any) -> dict[str, Any] | None:
    """What names one relation: a JDBC URL and table, a V2 table, or a stream's files."""
    name = simple_name(node)
    if name == "LogicalRelation":
        relation = node.relation()
        if "JDBCRelation" in relation.getClass().getName():
            return {raw.JDBC: _jdbc_options(relation.jdbcOptions())}
        return None
    if name == "DataSourceV2Relation" or name.startswith("StreamingDataSourceV2"):
        return describe_v2_table(node.table(), node.catalog(), node.identifier())
    if name == "StreamingExecutionRelation":
        text = node.source().toString()  # FileStreamSource[file:/data/in]
        if text.startswith("FileStreamSource[") and text.endswith("]"):
            return {raw.PATHS: [text[len("FileStreamSource["):-1]], raw.SOURCE_FORMAT: "stream"}
        return {raw.TABLE: text}
    return None


def describe_v2_table(table: Any, catalog: Any = None, identifier: Any = None) -> dict[str, Any]:
    label = None
    if catalog is not None and identifier is not None and catalog.isDefined() and identifier.isDefined():
        label = f"{catalog.get().name()}.{identifier.get().toString()}".lower()
    out: dict[str, Any] = {raw.TABLE: label or str(table.name()).lower()}
    if "JDBCTable" in table.getClass().getName():
        out[raw.JDBC] = {**_jdbc_options(table.jdbcOptions()), raw.TABLE: str(table.name())}
    else:
        location = table.properties().get("location")
        if location:
            out[raw.PATHS] = [str(location)]
    return out


def _jdbc_options(options: Any) -> dict[str, Any]:
    table = str(options.tableOrQuery())
    if table.startswith("(") and ") SPARK_GEN_SUBQ_" in table:  # the query option
        table = table[1:table.rindex(") SPARK_GEN_SUBQ_")]
    return {raw.URL: strip_jdbc_credentials(str(options.url())), raw.TABLE: table}


# -- what a write command writes -------------------------------------------------------------------

def write_details(plan: Any, location: TableLocations) -> dict[str, Any] | None:
    """A raw record's ``write``: where a write command writes, how (mode) and its static partitions;
    ``None`` for a command whose JVM object tells nothing more than its JSON (``NO_READER``)."""
    reader = _WRITE_READERS.get(simple_name(plan))
    return reader(plan, location) if reader is not None else None


def _file_insert(plan: Any, location: TableLocations) -> dict[str, Any]:
    return {raw.PATH: plan.outputPath().toString(), raw.MODE: plan.mode().toString().lower(),
            raw.STATIC_PARTITIONS: scala_map(plan.staticPartitions())}


def _data_source_ctas(plan: Any, location: TableLocations) -> dict[str, Any]:
    ident = plan.table().identifier()
    db = ident.database().get() if ident.database().isDefined() else "default"
    # saveAsTable on an existing table is a CTAS in append or overwrite mode.
    return {raw.LOCATION: location(db, ident.table()), raw.MODE: SAVE_MODES.get(plan.mode().toString(), "create")}


def _hive_insert(plan: Any, location: TableLocations) -> dict[str, Any]:
    ident = plan.table().identifier()
    db = ident.database().get() if ident.database().isDefined() else "default"
    return {raw.LOCATION: location(db, ident.table()), raw.MODE: "overwrite" if plan.overwrite() else "append",
            raw.STATIC_PARTITIONS: scala_map(plan.partition())}


def _directory(plan: Any, location: TableLocations) -> dict[str, Any]:
    uri = plan.storage().locationUri()
    return {raw.PATH: uri.get().toString() if uri.isDefined() else None, raw.MODE: "overwrite"}


def _save(plan: Any, location: TableLocations) -> dict[str, Any]:
    options = scala_map(plan.options())
    if "jdbc" in plan.dataSource().getClass().getName().lower() or "url" in options:
        # write.jdbc: the URL without credentials, the table; never the options themselves.
        table = options.get("dbtable") or options.get("query")
        return {raw.JDBC: {raw.URL: strip_jdbc_credentials(options.get("url", "")), raw.TABLE: table},
                raw.MODE: plan.mode().toString().lower()}
    return {raw.PATH: options.get("path"), raw.MODE: plan.mode().toString().lower(),
            raw.SOURCE_FORMAT: plan.dataSource().getClass().getName()}


def _view(plan: Any, location: TableLocations) -> dict[str, Any]:
    """A view's own column names (``CREATE VIEW v (a, b) AS ...``): the JSON writes them as nulls."""
    given = plan.userSpecifiedColumns()
    return {raw.COLUMNS: [str(given.apply(i)._1()) for i in range(given.size())]} if given.size() else {}


def _v2_write(plan: Any, location: TableLocations) -> dict[str, Any]:
    target = plan.table()
    info = describe_v2_table(target.table(), target.catalog(), target.identifier()) \
        if simple_name(target) == "DataSourceV2Relation" else {}
    mode = "append" if simple_name(plan) == "AppendData" else "overwrite"
    return {**info, raw.MODE: mode, raw.LOCATION: (info.get(raw.PATHS) or [None])[0]}


def _row_level(plan: Any, location: TableLocations) -> dict[str, Any]:
    """ReplaceData / WriteDelta: the table a MERGE, UPDATE or DELETE rewrites (the mode is the
    digest's to tell, from the plan)."""
    target = plan.table()
    info = describe_v2_table(target.table(), target.catalog(), target.identifier()) \
        if simple_name(target) == "DataSourceV2Relation" else {}
    return {**info, raw.LOCATION: (info.get(raw.PATHS) or [None])[0]}


def _v2_ctas(plan: Any, location: TableLocations) -> dict[str, Any]:
    resolved = plan.name()
    label = f"{resolved.catalog().name()}.{resolved.identifier().toString()}".lower()
    out: dict[str, Any] = {raw.TABLE: label,
                           raw.MODE: "create" if simple_name(plan).startswith("Create") else "overwrite"}
    try:
        loaded = resolved.catalog().loadTable(resolved.identifier())
        out.update({k: v for k, v in describe_v2_table(loaded).items() if k != raw.TABLE})
    except Exception:  # noqa: BLE001 - the table may not exist yet (a dry run)
        pass
    return out


def _stream(plan: Any, location: TableLocations) -> dict[str, Any]:
    v1 = simple_name(plan).endswith("V1")
    out: dict[str, Any] = {raw.MODE: plan.outputMode().toString().lower().rstrip("$")}
    table = plan.catalogTable() if v1 else None
    if table is not None and table.isDefined():
        ident = table.get().identifier()
        db = ident.database().get() if ident.database().isDefined() else "default"
        out[raw.TABLE] = f"{SPARK_CATALOG}.{db}.{ident.table()}".lower()
        out[raw.LOCATION] = location(db, ident.table())
    sink = plan.sink().toString() if v1 else str(plan.write())
    if sink.startswith("FileSink[") and sink.endswith("]"):
        out[raw.PATH] = sink[len("FileSink["):-1]
    elif raw.TABLE not in out:
        out[raw.SINK] = sink
    return out


_WRITE_READERS: dict[str, Callable[[Any, TableLocations], dict[str, Any]]] = {
    "InsertIntoHadoopFsRelationCommand": _file_insert,
    "CreateDataSourceTableAsSelectCommand": _data_source_ctas,
    "InsertIntoHiveTable": _hive_insert,
    "InsertIntoDataSourceDirCommand": _directory,
    "SaveIntoDataSourceCommand": _save,
    "CreateViewCommand": _view,
    "AppendData": _v2_write,
    "OverwriteByExpression": _v2_write,
    "OverwritePartitionsDynamic": _v2_write,
    "ReplaceData": _row_level,
    "WriteDelta": _row_level,
    "InsertOnlyMerge": _row_level,
    "CreateTableAsSelect": _v2_ctas,
    "ReplaceTableAsSelect": _v2_ctas,
    "WriteToMicroBatchDataSourceV1": _stream,
    "WriteToMicroBatchDataSource": _stream,
}
# The write commands of ``writes.WRITES`` that have no reader above, and why none is needed (or
# what is missed without one). A command added to WRITES goes in one table or the other: a test
# (tests/unit/job/test_jvm.py) names the one that is in neither.
NO_READER: dict[str, str] = {
    "SaveAsV1TableCommand": "a wrapper: the CTAS or insert it runs reports the same write, read above",
    "CreateHiveTableAsSelectCommand": "its JSON names the table it creates (tableDesc); the mode is create",
    "OptimizedCreateHiveTableAsSelectCommand": "its JSON names the table it creates (tableDesc); the mode is create",
    "InsertIntoDataSourceCommand": "an insert into a V1 InsertableRelation: the target is read from its JSON alone",
    "InsertIntoHiveDirCommand": "read from its JSON alone, which leaves out the directory (storage.locationUri): "
                                "Spark turns the usual Hive directory write (parquet, ORC) into "
                                "InsertIntoDataSourceDirCommand, which is read above",
    "MergeIntoTable": "row-level, as analyzed: the digest names the target from the plan's target relation",
    "UpdateTable": "row-level, as analyzed: the digest names the target from the plan's target relation",
    "DeleteFromTable": "row-level, as analyzed: the digest names the target from the plan's target relation",
}


# -- walking plans ---------------------------------------------------------------------------------

def identifiers(flat: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The ``TableIdentifier`` JSON of every catalog table a plan's JSON names."""
    for node in all_nodes(flat):
        for fname in _CATALOG_FIELDS:
            meta = node.get(fname)
            if isinstance(meta, dict) and isinstance(meta.get("identifier"), dict):
                yield meta["identifier"]


def jvm_nodes(plan: Any) -> Iterator[Any]:
    """Pre-order walk of a JVM plan: children, and plans held as inner children."""
    stack = [plan]
    while stack:
        node = stack.pop()
        yield node
        for seq in (node.children(), node.innerChildren()):
            for i in range(seq.size()):
                child = seq.apply(i)
                if hasattr(child, "children"):
                    stack.append(child)


def scala_map(m: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    try:
        it = m.iterator()
        while it.hasNext():
            kv = it.next()
            out[str(kv._1())] = str(kv._2())
    except Exception:  # noqa: BLE001 - a map py4j cannot walk is an empty one
        pass
    return out
