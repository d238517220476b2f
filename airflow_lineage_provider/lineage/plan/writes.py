"""Every Spark write command lineage knows: one table, read by the capture and the digest.

A write command is the root of an analyzed plan that writes a dataset. For each,
the table says its family (how its target and query are found), its rank (Spark
reports one write several times, and the outermost command is kept) and, for
DataSource V2 commands, which child is the query. ``find_write`` reads a decoded
plan's target and query from it; the reduction of Spark's events (``events.py``) ranks by it.
``job/jvm._WRITE_READERS`` reads what a command's JSON loses; a test ties both tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from airflow_lineage_provider.lineage import naming
from airflow_lineage_provider.lineage.model import Dataset
from airflow_lineage_provider.lineage.plan import record as raw
from airflow_lineage_provider.lineage.plan.tree import Tree

# Families: how a command's target and query are found.
INSERT = "insert"        # into a catalog table or path; the query is the only child
CTAS = "ctas"            # CREATE TABLE AS SELECT; the query is a field or the child
DIRECTORY = "directory"  # INSERT OVERWRITE DIRECTORY
VIEW = "view"            # CREATE VIEW: persistent views only, a temporary view is not a dataset
SAVE = "save"            # DataFrameWriter.save to a data source (files, JDBC)
V2 = "v2"                # DataSource V2 writes; the capture names the target
STREAM = "stream"        # a streaming sink
WRAPPER = "wrapper"      # wraps another write command: the one it wraps is kept
ROW_LEVEL = "row-level"  # MERGE / UPDATE / DELETE: the command is its own query (``rowlevel.py``)

UNRANKED = 5  # the rank of a command this table does not know


@dataclass(frozen=True)
class WriteCommand:
    family: str
    rank: int  # for one target, the lower rank is kept (outermost first)
    query_child: int = 0  # V2 and streams: the query's position among the children


WRITES: dict[str, WriteCommand] = {
    "SaveAsV1TableCommand": WriteCommand(WRAPPER, 9),
    "CreateDataSourceTableAsSelectCommand": WriteCommand(CTAS, 0),
    "CreateHiveTableAsSelectCommand": WriteCommand(CTAS, 0),
    "OptimizedCreateHiveTableAsSelectCommand": WriteCommand(CTAS, 0),
    "InsertIntoHiveTable": WriteCommand(INSERT, 1),
    "InsertIntoHadoopFsRelationCommand": WriteCommand(INSERT, 2),
    "InsertIntoDataSourceCommand": WriteCommand(INSERT, 1),
    "SaveIntoDataSourceCommand": WriteCommand(SAVE, 1),
    "InsertIntoDataSourceDirCommand": WriteCommand(DIRECTORY, 0),
    "InsertIntoHiveDirCommand": WriteCommand(DIRECTORY, 0),
    "CreateViewCommand": WriteCommand(VIEW, 0),
    "CreateTableAsSelect": WriteCommand(V2, 0, query_child=-1),
    "ReplaceTableAsSelect": WriteCommand(V2, 0, query_child=-1),
    "AppendData": WriteCommand(V2, 1),
    "OverwriteByExpression": WriteCommand(V2, 1),
    "OverwritePartitionsDynamic": WriteCommand(V2, 1),
    "WriteToMicroBatchDataSourceV1": WriteCommand(STREAM, 1),
    "WriteToMicroBatchDataSource": WriteCommand(STREAM, 1),
    "MergeIntoTable": WriteCommand(ROW_LEVEL, 1),
    "UpdateTable": WriteCommand(ROW_LEVEL, 1),
    "DeleteFromTable": WriteCommand(ROW_LEVEL, 1),
    "ReplaceData": WriteCommand(ROW_LEVEL, 1),
    "WriteDelta": WriteCommand(ROW_LEVEL, 1),
    "InsertOnlyMerge": WriteCommand(ROW_LEVEL, 1),
}
# Commands whose lineage is their clauses', not a query's output.
ROW_LEVEL_COMMANDS = frozenset(name for name, command in WRITES.items() if command.family == ROW_LEVEL)

# Parsed (not yet analyzed) statements that write: a dry run analyzes them and never executes them.
PARSED_WRITES = frozenset({
    "InsertIntoStatement", "CreateTableAsSelect", "ReplaceTableAsSelect", "InsertIntoDir",
    "OverwriteByExpression", "OverwritePartitionsDynamic", "AppendData", "MergeIntoTable",
    "UpdateTable", "DeleteFromTable", "CreateTableAsSelectStatement",
})

# Spark's SaveMode as the document's write mode.
SAVE_MODES = {"Append": "append", "Overwrite": "overwrite", "ErrorIfExists": "create", "Ignore": "create"}


def rank(name: str) -> int:
    """The rank of the command class ``name``: of one write's events, the lowest is kept."""
    command = WRITES.get(name)
    return command.rank if command is not None else UNRANKED


def is_write(name: str, view_type: str = "") -> bool:
    """A command whose target is a dataset; a view only when ``view_type`` is not a temporary one."""
    if name == "CreateViewCommand":
        return "Temp" not in view_type
    return name in WRITES


def creates(name: str) -> bool:
    """A command that creates its target (and runs an insert of its own inside)."""
    return rank(name) == 0


Write = tuple[Dataset | None, Tree, tuple[str, ...] | None]


def find_write(root: Tree, extras: Mapping[str, Any]) -> Write | None:
    """(target, query, user-given column names) of a write command; ``None`` for a plain query.
    ``extras``: the raw record's (``record.py``), whose ``write`` names what the JSON cannot."""
    command = WRITES.get(root.cls)
    if command is None:
        return None
    write = raw.write_of(extras)
    mode = write.get(raw.MODE)
    location = (raw.write_location(extras, root.cls, raw.LOCATION)
                or raw.write_location(extras, root.cls, raw.PATH))
    family = command.family
    if family == INSERT:
        meta = root.get("catalogTable") or root.get("table")
        table = naming.table_name(meta.get("identifier")) if isinstance(meta, dict) else write.get(raw.TABLE)
        if root.cls == "InsertIntoHiveTable" and mode is None:
            mode = "overwrite" if root.get("overwrite") else "append"
        return naming.from_location(location, table=table, mode=mode), root.children[0], None
    if family == CTAS:
        meta = root.get("table") or root.get("tableDesc")
        table = naming.table_name(meta.get("identifier")) if isinstance(meta, dict) else write.get(raw.TABLE)
        query = _query_field(root)
        if query is None:
            return None
        return naming.from_location(location, table=table, mode=mode or "create"), query, None
    if family == DIRECTORY:
        query = _query_field(root)
        if query is None:
            return None
        return naming.from_location(location, table=None, mode=mode or "overwrite"), query, None
    if family == VIEW:
        view_type = str((root.get("viewType") or {}).get("object", ""))
        query = root.plan("plan")
        if query is None or "Temp" in view_type:
            return None  # a temporary view is not a dataset: lineage flows through it
        table = naming.table_name(root.get("name"))
        # The view's own column names: Spark's JSON writes them as nulls, the capture reads them.
        columns = tuple(write.get(raw.COLUMNS) or ()) or None
        return (naming.from_location(None, table=table, mode="overwrite" if root.get("replace") else "create"),
                query, columns)
    if family == SAVE:
        query = _query_field(root)
        if query is None:
            return None
        jdbc = write.get(raw.JDBC)
        if jdbc:
            return naming.from_jdbc(jdbc.get(raw.URL, ""), jdbc.get(raw.TABLE), mode=mode), query, None
        return naming.from_location(location, table=write.get(raw.TABLE), mode=mode), query, None
    if family == ROW_LEVEL:
        return None, root, None  # the digest names the target from the plan's target relation
    if family in (V2, STREAM) and root.children:
        return _v2_target(root, write, location, mode), root.children[command.query_child], None
    return None


def _query_field(root: Tree) -> Tree | None:
    """A command that keeps its query in a field (``query``), else as its child."""
    return root.plan("query") or (root.children[0] if root.children else None)


def _v2_target(root: Tree, write: Mapping[str, Any], location: str | None, mode: str | None) -> Dataset:
    """DataSource V2 writes and streaming sinks: the target comes from the capture."""
    table = write.get(raw.TABLE)
    jdbc = write.get(raw.JDBC)
    if jdbc:
        return naming.from_jdbc(jdbc.get(raw.URL, ""), jdbc.get(raw.TABLE), mode=mode, catalog_name=table)
    if location or table:
        return naming.from_location(location, table=table, mode=mode)
    # A streaming sink with no dataset behind it (console, memory, foreachBatch, Kafka...).
    return Dataset(namespace="spark_sink", name=str(write.get(raw.SINK) or root.cls), mode=mode)
