"""Capture every write's analyzed plan inside the Spark driver.

A py4j ``QueryExecutionListener`` sees each executed command, whether it came
from SQL or the DataFrame API. For each write it keeps the analyzed plan's JSON
and what that JSON loses (table locations, output paths, write mode, static
partitions), read from the JVM objects. Spark reports one write several times
(``saveAsTable``: three events, CTAS: two), so each target is kept once per
statement: the outermost command wins. Imports only pyspark, the standard library and the
project's stdlib-only naming module (one catalog-name rule for capture and extraction).
"""

from __future__ import annotations

import json
import threading
import traceback
from typing import Any

from airflow_lineage_provider.lineage.naming import strip_jdbc_credentials, table_name

# Write commands, outermost first: for one target, the lower rank is kept.
WRITE_RANK = {
    "SaveAsV1TableCommand": 9,  # wraps a CTAS or an insert: keep what it wraps
    "CreateDataSourceTableAsSelectCommand": 0,
    "CreateHiveTableAsSelectCommand": 0,
    "OptimizedCreateHiveTableAsSelectCommand": 0,
    "InsertIntoHiveTable": 1,
    "InsertIntoHadoopFsRelationCommand": 2,
    "InsertIntoDataSourceCommand": 1,
    "SaveIntoDataSourceCommand": 1,
    "InsertIntoDataSourceDirCommand": 0,
    "InsertIntoHiveDirCommand": 0,
    "CreateViewCommand": 0,  # persistent views only: a temporary view is not a dataset
    # DataSource V2 writes (DataFrameWriterV2, JDBC and other V2 catalogs), and streaming sinks.
    "CreateTableAsSelect": 0,
    "ReplaceTableAsSelect": 0,
    "AppendData": 1,
    "OverwriteByExpression": 1,
    "OverwritePartitionsDynamic": 1,
    "WriteToMicroBatchDataSourceV1": 1,
    "WriteToMicroBatchDataSource": 1,
}


def is_write(plan: Any) -> bool:
    """A command whose target is a dataset (temporary views are not)."""
    name = simple_name(plan)
    if name == "CreateViewCommand":
        return "Temp" not in plan.viewType().toString()
    return name in WRITE_RANK


# Fields of Spark's plan JSON that lineage never reads: dropped from the dump, which halves it.
_UNUSED_FIELDS = frozenset({
    "jvmId", "product-class", "metadata", "nullable", "explicitMetadata", "nonInheritableMetadataKeys",
    "timeZoneId", "evalMode", "nullOnOverflow", "failOnError", "ansiEnabled",
})
_CATALOG_FIELDS = frozenset({"catalogTable", "tableMeta", "table", "tableDesc"})


def compact(value: Any) -> Any:
    """The plan JSON without what lineage never reads (a catalog table keeps its identifier)."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key in _UNUSED_FIELDS:
                continue
            if key in _CATALOG_FIELDS and isinstance(item, dict) and "identifier" in item:
                item = {"identifier": item["identifier"]}
            out[key] = compact(item)
        return out
    if isinstance(value, list):
        return [compact(v) for v in value]
    return value


def simple_name(obj: Any) -> str:
    return obj.getClass().getSimpleName().rstrip("$")


class PlanCapture:
    """Collects the writes Spark reports; the driver flushes them after each statement.

    The listener only keeps a reference to each write's analyzed plan: turning it
    into JSON (tens of milliseconds in the JVM) happens in ``describe``, which the
    driver runs on a background thread while Spark goes on with the next statement.
    """

    def __init__(self, spark: Any) -> None:
        self.spark = spark
        self.jvm = spark.sparkContext._jvm
        self._lock = threading.Lock()
        self._pending: list[tuple[str, str, Any]] = []
        self.warnings: list[str] = []
        self._location_cache: dict[str, str | None] = {}
        self._listener: _Listener | None = None
        self._java_listener: Any = None

    # -- listener ------------------------------------------------------------------

    def install(self) -> None:
        """Register the listener (starts py4j's callback server if needed)."""
        from pyspark.java_gateway import ensure_callback_server_started

        ensure_callback_server_started(self.spark.sparkContext._gateway)
        manager = self.spark._jsparkSession.listenerManager()
        before = len(manager.listListeners())
        self._listener = _Listener(self)
        manager.register(self._listener)
        # py4j hands Spark a new proxy each time a Python object is passed: keep the one
        # Spark holds (registration appends it), so that uninstall removes it.
        listeners = manager.listListeners()
        self._java_listener = listeners[len(listeners) - 1] if len(listeners) == before + 1 else None

    def uninstall(self) -> None:
        if self._listener is not None:
            self._listener.closed = True
            if self._java_listener is not None:
                self.spark._jsparkSession.listenerManager().unregister(self._java_listener)
            self._listener = self._java_listener = None

    def flush(self) -> list[Any]:
        """Wait for Spark's listener bus; the analyzed plans of the writes since the last flush.

        Spark reports some writes more than once: the insert a CTAS runs inside is a
        "file source write" of its own, and ``saveAsTable`` wraps a CTAS or an insert.
        Those inner and outer events are dropped here, before any plan is described.
        """
        self.spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty(60_000)
        with self._lock:
            pending, self._pending = self._pending, []
        creates = any(WRITE_RANK.get(name) == 0 and func == "command" for func, name, _ in pending)
        kept = [(func, name, plan) for func, name, plan in pending
                if not (creates and func != "command") and not (name == "SaveAsV1TableCommand" and len(pending) > 1)]
        return [plan for _, _, plan in kept]

    def on_success(self, func_name: str, qe: Any) -> None:
        try:
            plan = qe.analyzed()
            if is_write(plan):
                with self._lock:
                    self._pending.append((func_name, simple_name(plan), plan))
        except Exception as e:  # lineage never breaks the job
            self.warnings.append(f"plan capture failed: {e}\n{traceback.format_exc(limit=3)}")

    def describe_all(self, plans: list[Any]) -> list[dict[str, Any]]:
        """Records of a statement's writes, one per target."""
        return deduplicate(self.describe_each(plans))

    def describe_each(self, plans: list[Any]) -> list[dict[str, Any]]:
        """One record per plan; a plan that cannot be described is a warning."""
        records = []
        for plan in plans:
            try:
                records.append(self.describe(plan))
            except Exception as e:  # lineage never breaks the job
                self.warnings.append(f"plan capture failed: {e}")
        return records

    # -- describing a plan -------------------------------------------------------------

    def describe(self, plan: Any) -> dict[str, Any]:
        """The record of one analyzed plan: its JSON and what the JSON loses."""
        text = plan.toJSON()
        parsed = json.loads(text)
        extras: dict[str, Any] = {"tables": {}, "relations": {}}
        try:
            self._add_table_locations(parsed, extras)
            self._add_path_relations(plan, parsed, extras)
            self._add_expand_projections(plan, parsed, extras)
            add_source_relations(plan, parsed, extras)
            write = self._write_details(plan) or write_details_v2(plan, self)
            if write:
                extras["write"] = write
        except Exception as e:
            self.warnings.append(f"could not read locations from the JVM: {e}")
        return {"kind": "write" if simple_name(plan) in WRITE_RANK else "query", "plan": compact(parsed),
                "extras": extras}

    def _add_table_locations(self, flat: list[dict[str, Any]], extras: dict[str, Any]) -> None:
        for ident in _identifiers(flat):
            name = table_name(ident)
            if name and name not in extras["tables"]:
                extras["tables"][name] = self.location(ident.get("database") or "default", ident["table"])

    def location(self, database: str, table: str) -> str | None:
        key = f"{database}.{table}".lower()
        if key not in self._location_cache:
            try:
                external = self.spark._jsparkSession.sessionState().catalog().externalCatalog()
                self._location_cache[key] = external.getTable(database, table).location().toString()
            except Exception:
                self._location_cache[key] = None
        return self._location_cache[key]

    def _add_path_relations(self, plan: Any, flat: list[dict[str, Any]], extras: dict[str, Any]) -> None:
        """Sources read by path have no catalog table: ask the JVM relation for its paths."""
        def by_path(n: dict[str, Any]) -> bool:
            cls = _short(n["class"])
            return (cls == "LogicalRelation" and not n.get("catalogTable")) or cls == "StreamingRelation"

        if not any(by_path(n) for n in _all_nodes(flat)):
            return
        for node in _jvm_nodes(plan):
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
            extras["relations"][str(first)] = {"paths": paths, "format": fmt}

    def _add_expand_projections(self, plan: Any, flat: list[dict[str, Any]], extras: dict[str, Any]) -> None:
        """Spark's JSON sometimes writes an Expand's projections as null: read them from the JVM."""
        if not any(_short(n["class"]) == "Expand" and n.get("projections") is None for n in _all_nodes(flat)):
            return
        found: dict[str, Any] = {}
        for node in _jvm_nodes(plan):
            if simple_name(node) != "Expand":
                continue
            rows = node.projections()
            found[str(node.output().apply(0).exprId().id())] = [
                [compact(json.loads(row.apply(j).toJSON())) for j in range(row.size())]
                for row in (rows.apply(i) for i in range(rows.size()))
            ]
        extras["expand"] = found

    def _write_details(self, plan: Any) -> dict[str, Any] | None:
        name = simple_name(plan)
        if name == "InsertIntoHadoopFsRelationCommand":
            out: dict[str, Any] = {
                "path": plan.outputPath().toString(),
                "mode": plan.mode().toString().lower(),
                "static_partitions": _scala_map(plan.staticPartitions()),
            }
            return out
        if name in ("CreateDataSourceTableAsSelectCommand",):
            ident = plan.table().identifier()
            db = ident.database().get() if ident.database().isDefined() else "default"
            # saveAsTable on an existing table is a CTAS in append or overwrite mode.
            mode = _SAVE_MODES.get(plan.mode().toString(), "create")
            return {"location": self.location(db, ident.table()), "mode": mode}
        if name in ("InsertIntoHiveTable",):
            ident = plan.table().identifier()
            db = ident.database().get() if ident.database().isDefined() else "default"
            return {
                "location": self.location(db, ident.table()),
                "mode": "overwrite" if plan.overwrite() else "append",
                "static_partitions": {
                    k: v for k, v in _scala_map(plan.partition()).items()
                },
            }
        if name in ("InsertIntoDataSourceDirCommand",):
            uri = plan.storage().locationUri()
            return {"path": uri.get().toString() if uri.isDefined() else None, "mode": "overwrite"}
        if name == "SaveIntoDataSourceCommand":
            options = _scala_map(plan.options())
            if "jdbc" in plan.dataSource().getClass().getName().lower() or "url" in options:
                # write.jdbc: the URL without credentials, the table; never the options themselves.
                table = options.get("dbtable") or options.get("query")
                return {"jdbc": {"url": strip_jdbc_credentials(options.get("url", "")), "table": table},
                        "mode": plan.mode().toString().lower()}
            return {"path": options.get("path"), "mode": plan.mode().toString().lower(),
                    "format": plan.dataSource().getClass().getName()}
        return None


class _Listener:
    """The py4j side of ``org.apache.spark.sql.util.QueryExecutionListener``."""

    def __init__(self, capture: PlanCapture) -> None:
        self.capture = capture
        self.closed = False

    def onSuccess(self, funcName: str, qe: Any, durationNs: int) -> None:  # noqa: N802, N803
        if not self.closed:
            self.capture.on_success(funcName, qe)

    def onFailure(self, funcName: str, qe: Any, exception: Any) -> None:  # noqa: N802, N803
        return None

    class Java:
        implements = ["org.apache.spark.sql.util.QueryExecutionListener"]


def digested(record: dict[str, Any], warnings: list[str]) -> dict[str, Any]:
    """The record with its lean plan (``lineage/digest.py``), digested in the driver while Spark
    runs on; Spark's own JSON, with a warning, if that fails (the hook digests it again)."""
    try:
        from airflow_lineage_provider.lineage.digest import digest

        return digest(record)
    except Exception as e:  # lineage never breaks the job
        warnings.append(f"plan digest failed, dumped Spark's JSON: {e.__class__.__name__}: {e}")
        return record


def deduplicate(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Keep one record per target: Spark reports a CTAS or ``saveAsTable`` more than once."""
    best: dict[str, dict[str, Any]] = {}
    order: list[str] = []
    for rec in records:
        key = target_key(rec)
        rank = WRITE_RANK.get(_short(rec["plan"][0]["class"]), 5)
        if key not in best:
            order.append(key)
            best[key] = rec
        elif rank < WRITE_RANK.get(_short(best[key]["plan"][0]["class"]), 5):
            best[key] = rec
    return [best[k] for k in order]


def target_key(rec: dict[str, Any]) -> str:
    """Where a write lands: its location when known (a CTAS and the insert it runs share it)."""
    write = rec.get("extras", {}).get("write") or {}
    where = write.get("path") or write.get("location")
    if where:
        return str(where).rstrip("/")
    root = rec["plan"][0]
    for fname in ("catalogTable", "table", "tableDesc"):
        meta = root.get(fname)
        if isinstance(meta, dict) and isinstance(meta.get("identifier"), dict):
            return table_name(meta["identifier"]) or ""
    return str(id(rec))


def _short(cls: str) -> str:
    return cls.rsplit(".", 1)[-1].rstrip("$")


def _all_nodes(flat: Any):
    """Every JSON object that is a tree node, nested plans and expressions included."""
    stack = [flat]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            if "class" in item:
                yield item
            stack.extend(v for v in item.values() if isinstance(v, (list, dict)))


def _identifiers(flat: list[dict[str, Any]]):
    for node in _all_nodes(flat):
        for fname in ("catalogTable", "tableMeta", "table", "tableDesc"):
            meta = node.get(fname)
            if isinstance(meta, dict) and isinstance(meta.get("identifier"), dict):
                yield meta["identifier"]


def _jvm_nodes(plan: Any):
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


def _scala_map(m: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    try:
        it = m.iterator()
        while it.hasNext():
            kv = it.next()
            out[str(kv._1())] = str(kv._2())
    except Exception:
        pass
    return out


# -- sources and targets the JSON leaves null: JDBC, DataSource V2, streaming ---------------
# Spark's JSON writes ``relation``, ``table``, ``source`` and ``sink`` as null; they are read
# from the JVM objects here. JDBC URLs lose their credentials before they are recorded.

_SAVE_MODES = {"Append": "append", "Overwrite": "overwrite", "ErrorIfExists": "create", "Ignore": "create"}
_SOURCE_LEAVES = frozenset({"LogicalRelation", "DataSourceV2Relation", "StreamingExecutionRelation",
                            "StreamingDataSourceV2Relation", "StreamingDataSourceV2ScanRelation"})


def add_source_relations(plan: Any, flat: list[dict[str, Any]], extras: dict[str, Any]) -> None:
    """JDBC tables, V2 tables and started streaming sources, keyed by their first output exprId."""
    wanted = {"DataSourceV2Relation", "StreamingExecutionRelation", "StreamingDataSourceV2Relation"}
    if not any(_short(n["class"]) in wanted or (_short(n["class"]) == "LogicalRelation" and n.get("relation") is None
                                                and not n.get("catalogTable"))
               for n in _all_nodes(flat)):
        return
    for node in _jvm_nodes(plan):
        name = simple_name(node)
        if name not in _SOURCE_LEAVES:
            continue
        try:
            info = describe_source(node)
            if info and node.output().size() > 0:
                key = str(node.output().apply(0).exprId().id())
                extras["relations"][key] = {**extras["relations"].get(key, {}), **info}
        except Exception as e:  # noqa: BLE001 - a source we cannot read is named by what the JSON has
            extras.setdefault("source_warnings", []).append(f"could not read the source of {name}: {e}")


def describe_source(node: Any) -> dict[str, Any] | None:
    """What names one relation: a JDBC URL and table, a V2 table, or a stream's files."""
    name = simple_name(node)
    if name == "LogicalRelation":
        relation = node.relation()
        if "JDBCRelation" in relation.getClass().getName():
            return {"jdbc": _jdbc_options(relation.jdbcOptions())}
        return None
    if name == "DataSourceV2Relation" or name.startswith("StreamingDataSourceV2"):
        return describe_v2_table(node.table(), node.catalog(), node.identifier())
    if name == "StreamingExecutionRelation":
        text = node.source().toString()  # FileStreamSource[file:/data/in]
        if text.startswith("FileStreamSource[") and text.endswith("]"):
            return {"paths": [text[len("FileStreamSource["):-1]], "format": "stream"}
        return {"table": text}
    return None


def describe_v2_table(table: Any, catalog: Any = None, identifier: Any = None) -> dict[str, Any]:
    label = None
    if catalog is not None and identifier is not None and catalog.isDefined() and identifier.isDefined():
        label = f"{catalog.get().name()}.{identifier.get().toString()}".lower()
    out: dict[str, Any] = {"table": label or str(table.name()).lower()}
    if "JDBCTable" in table.getClass().getName():
        out["jdbc"] = {**_jdbc_options(table.jdbcOptions()), "table": str(table.name())}
    else:
        location = table.properties().get("location")
        if location:
            out["paths"] = [str(location)]
    return out


def _jdbc_options(options: Any) -> dict[str, Any]:
    table = str(options.tableOrQuery())
    if table.startswith("(") and ") SPARK_GEN_SUBQ_" in table:  # the query option
        table = table[1:table.rindex(") SPARK_GEN_SUBQ_")]
    return {"url": strip_jdbc_credentials(str(options.url())), "table": table}


def write_details_v2(plan: Any, capture: PlanCapture) -> dict[str, Any] | None:
    """Targets of V2 writes and streaming sinks."""
    name = simple_name(plan)
    if name in ("AppendData", "OverwriteByExpression", "OverwritePartitionsDynamic"):
        target = plan.table()
        info = describe_v2_table(target.table(), target.catalog(), target.identifier()) \
            if simple_name(target) == "DataSourceV2Relation" else {}
        mode = "append" if name == "AppendData" else "overwrite"
        return {**info, "mode": mode, "location": (info.get("paths") or [None])[0]}
    if name in ("CreateTableAsSelect", "ReplaceTableAsSelect"):
        resolved = plan.name()
        label = f"{resolved.catalog().name()}.{resolved.identifier().toString()}".lower()
        out: dict[str, Any] = {"table": label, "mode": "create" if name.startswith("Create") else "overwrite"}
        try:
            loaded = resolved.catalog().loadTable(resolved.identifier())
            out.update({k: v for k, v in describe_v2_table(loaded).items() if k != "table"})
        except Exception:  # noqa: BLE001 - the table may not exist yet (a dry run)
            pass
        return out
    if name in ("WriteToMicroBatchDataSourceV1", "WriteToMicroBatchDataSource"):
        out = {"mode": plan.outputMode().toString().lower().rstrip("$")}
        table = plan.catalogTable() if name.endswith("V1") else None
        if table is not None and table.isDefined():
            ident = table.get().identifier()
            db = ident.database().get() if ident.database().isDefined() else "default"
            out["table"] = f"spark_catalog.{db}.{ident.table()}".lower()
            out["location"] = capture.location(db, ident.table())
        sink = plan.sink().toString() if name.endswith("V1") else str(plan.write())
        if sink.startswith("FileSink[") and sink.endswith("]"):
            out["path"] = sink[len("FileSink["):-1]
        elif "table" not in out:
            out["sink"] = sink
        return out
    return None
