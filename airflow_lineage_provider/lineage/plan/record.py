"""The raw capture record (``raw/1``): what a producer writes of one Spark event, and how it is read.

A producer is whatever watches Spark run: the py4j listener of ``job/capture.py`` today, a JVM
``QueryExecutionListener`` tomorrow. It writes one JSON object per line of ``plans.jsonl``
(``job/dump.py``) for every event whose plan writes a dataset, in the order the listener
received them. The reader (``lineage/plan/``) turns such a record into lineage, and drops the
events Spark reports more than once for one write (``events.py``): a producer may dump every
event as it comes. The py4j producer digests records into the lean form (``lean.py``) before
dumping them; a lean record keeps every top-level key below but ``plan`` and ``extras``.

Top-level keys (a key marked *optional* may be left out; ``null`` is read as absent)::

    format        "raw/1". Optional: a record without it was written before the marker (read as raw/1).
    index         int. A script's record: the statement's 0-based position in the script, DDL
                  included. An application's: its write's number; the reader numbers an
                  application's kept writes 0..n-1 in dump order.
    sql           str. The statement's text. A scripting block's write: the text of the block's
                  statement that wrote, when Spark kept it (the plan's origin), else the block's.
                  An application's: the text of the ``spark.sql`` call that wrote, else "".
    line          int or null. The statement's first line in the script (1-based); null in an
                  application.
    kind          "write" when the plan's root is a write command (``writes.WRITES``), else
                  "query" (a script's bare SELECT: its result columns are the lineage).
    plan          list. ``qe.analyzed().toJSON()`` parsed: Spark's flat pre-order list of nodes,
                  each with "class" (the full class name) and "num-children". A ``CommandResult``
                  (EXECUTE IMMEDIATE) is replaced by the command it holds. A producer may leave
                  out the fields no reader reads (``job/capture._UNUSED_FIELDS``).
    extras        object. What the JSON loses, read from the JVM objects (below).
    execution_id  int, optional. The event's ``QueryExecution.id``. Absent for a plan that is no
                  listener event (a dry run's analysis, a bare query, a streaming query's plan):
                  the reader keeps such a record as it is.
    func          str, with execution_id. The listener's ``funcName``: "command" for a command
                  run on its own, "file source write" for the insert a CTAS runs, ...
    command       str, optional. The root command's class without package and trailing "$"
                  (``plan[0]["class"]``'s last part); the reader derives it when absent.
    statement     int. A script's record: the index of the statement whose run reported it (a
                  script's records are reduced statement by statement). Absent in an application.
    block         true, optional. The statement is a SQL scripting block (BEGIN ... END): each
                  of its statements' writes is its own, even two into one table.
    refused       str, optional. A dry run's only: Spark's reason it would refuse to run the write it
                  analyzed (found by planning it, never running it: a MERGE, UPDATE or DELETE into a
                  table whose format cannot run one, such as plain parquet). The reader adds it to the
                  statement's warnings; the lineage is the analyzed plan's.
    event         str, in records of early versions only: the funcName, now ``func``. Not read.

``extras`` (each key optional)::

    tables           {catalog table: location or null}: every catalog table the plan's JSON names
                     (fields catalogTable, tableMeta, table, tableDesc holding an "identifier"),
                     as ``naming.table_name`` spells it ("catalog.db.table", lower case), with its
                     storage location URI from the catalog (null: none, or not created yet).
    relations        {first output exprId, as a string: relation}: sources the JSON cannot name.
                     A relation has ``paths`` [str] (files read by path, a V2 table's location),
                     ``format`` str (the file format, a streaming source's class, "stream"),
                     ``table`` str (a V2 table "catalog.ident", lower case; a stream's source
                     description), ``jdbc`` {"url": str without credentials, "table": str}
                     (the table, or the query a JDBC read runs).
    expand           {first output exprId of an Expand, as a string: [[expression JSON, ...], ...]}:
                     its projections, row by row, when Spark's JSON writes them as null.
    write            the write command's details (below); absent when its JSON tells all.
    source_warnings  [str]: sources the producer could not read (not reported by readers yet).

``write`` (each key optional)::

    path               str or null. The directory or file URI written: a file insert's output
                       path, INSERT OVERWRITE DIRECTORY's location, ``save``'s path option, a
                       streaming file sink's path.
    location           str or null. The target table's storage location (from the catalog; a V2
                       table's "location" property).
    mode               str. "append", "overwrite" or "create"; a DataFrameWriter save's own
                       SaveMode in lower case ("errorifexists", "ignore"); a stream's output mode
                       ("append", "complete", "update").
    table              str. The target's catalog name ("catalog.db.table", lower case) where the
                       JSON does not hold it (V2 writes, streams into a table).
    jdbc               {"url": str without credentials, "table": str or null}: a JDBC target.
    columns            [str]. A view's own column names (``CREATE VIEW v (a, b)``).
    sink               str. A streaming sink that is no dataset (console, memory, foreachBatch...).
    static_partitions  {column: value}: an insert's static partition values (both str).
    format             str. The data source class of a DataFrameWriter ``save``.
    paths              [str]. A V2 table's location property, as read with ``location``.

How a location is spelled (what the JVM object holds, printed with its ``toString``)::

    java.net.URI       percent-encoded: a space is %20, "#" %23, "%" %25; letters beyond ASCII
                       stay raw (``file:/a/out%20dir/%C3%BC`` never occurs, ``file:/a/out%20dir/ü``
                       does). Used by: ``tables`` values (the catalog's location); ``write.location``
                       of the V1 commands in ``URI_SPELLED`` (read from the catalog);
                       ``write.path`` of INSERT OVERWRITE DIRECTORY (its storage URI, without a
                       scheme when the user gave none: ``/a/out%20dir``).
    as written         a Hadoop ``Path`` or the user's own string, nothing encoded
                       (``file:/a/out dir/sp ace#1``, ``/a/100%``). Every other location:
                       ``write.path`` (a file insert, ``save``, a streaming file sink),
                       ``relations`` paths, a V2 table's ``location`` property.

The readers read locations through ``table_location`` and ``write_location``, which give each as
written, decoded once where it is a URI: a dataset is then named alike whichever command or key
reported it, and alike in the plan and the SQL text (``naming.split_uri``).

This module holds the names, the builder the producers write through, the accessors the
readers read through, and the one readable-check of both record formats.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Iterator, Mapping

from airflow_lineage_provider.lineage.naming import as_written
from airflow_lineage_provider.lineage.plan.lean import LEAN

RAW = "raw/1"

# Top-level keys.
FORMAT = "format"
INDEX = "index"
SQL = "sql"
LINE = "line"
KIND = "kind"
PLAN = "plan"
EXTRAS = "extras"
EXECUTION_ID = "execution_id"
FUNC = "func"
COMMAND = "command"
STATEMENT = "statement"
BLOCK = "block"
REFUSED = "refused"
# A lean record's only: where its write lands, as the reader's reduction compares targets
# (``events.target_key``), kept because the lean record has no plan or extras to work it out from.
TARGET_KEY = "target_key"

# Values of ``kind``.
WRITE_KIND = "write"
QUERY_KIND = "query"
# The listener's funcName of a command Spark ran on its own (not inside another command).
COMMAND_FUNC = "command"

# ``extras`` keys.
TABLES = "tables"
RELATIONS = "relations"
EXPAND = "expand"
WRITE = "write"
SOURCE_WARNINGS = "source_warnings"

# ``write`` keys; a relation's are PATHS, SOURCE_FORMAT, TABLE and JDBC.
PATH = "path"
LOCATION = "location"
MODE = "mode"
TABLE = "table"
JDBC = "jdbc"
COLUMNS = "columns"
SINK = "sink"
STATIC_PARTITIONS = "static_partitions"
SOURCE_FORMAT = "format"
PATHS = "paths"
# ``jdbc`` keys: the URL, and TABLE.
URL = "url"

_NO_DICT: Mapping[str, Any] = MappingProxyType({})  # an absent object, read without building one


# -- writing ----------------------------------------------------------------------------------------

def event(execution_id: int, func: str, command: str) -> dict[str, Any]:
    """What a listener event tells before its plan is described: the head of its record. The
    reduction (``events.py``) reads only these keys, so a producer can drop events before paying
    for ``toJSON``."""
    return {FORMAT: RAW, EXECUTION_ID: execution_id, FUNC: func, COMMAND: command}


def new_extras() -> dict[str, Any]:
    """The ``extras`` a producer fills in: the two maps every plan may add to."""
    return {TABLES: {}, RELATIONS: {}}


def make(kind: str, plan: list[dict[str, Any]], extras: dict[str, Any],
         head: dict[str, Any] | None = None) -> dict[str, Any]:
    """A raw record of a described plan; ``head``: its event's keys (``event``), if it was one."""
    out = dict(head) if head else {FORMAT: RAW}
    out[KIND] = kind
    out[PLAN] = plan
    out[EXTRAS] = extras
    return out


def place(record: dict[str, Any], *, index: int, sql: str, line: int | None,
          statement: int | None = None, block: bool = False) -> None:
    """Say where the record belongs: its position, its SQL and, in a script, its statement."""
    record[INDEX] = index
    record[SQL] = sql
    record[LINE] = line
    if statement is not None:
        record[STATEMENT] = statement
    if block:
        record[BLOCK] = True


# -- reading ----------------------------------------------------------------------------------------

# The Spark release lines whose plan JSON the readers are tested on (tests/integration/test_spark_versions.py
# runs the driver and the JVM listener on each and compares the documents): the node and field names the digest
# reads are theirs. Another line may spell a node or field otherwise, and what the digest cannot read is then
# lost: the reader says so instead of trusting it silently.
SPARK_LINES = ("3.5", "4.0", "4.1", "4.2", "4.3")


def release_warning(spark_version: str | None) -> str | None:
    """The warning for a plan dumped by a Spark release whose plan JSON the readers were never tested on;
    ``None`` for a tested release (or an unknown one: a dump without a version says nothing)."""
    if not spark_version:
        return None
    parts = spark_version.split(".")
    if ".".join(parts[:2]) in SPARK_LINES:
        return None
    return (f"Spark {spark_version} is a release this version of airflow-lineage-provider was not tested on "
            f"(tested: Spark {', '.join(SPARK_LINES)}): a plan node or field it names otherwise is not read, "
            "so check its lineage")


def check_readable(record: dict[str, Any]) -> None:
    """Refuse a record of a format this version does not read (raw or lean), saying what to do.

    The one check of both formats: a reader calls it before anything else."""
    fmt = record.get(FORMAT)
    if fmt is None or fmt == RAW or fmt == LEAN:
        return
    what = "plan dump" if str(fmt).startswith("lean/") else "plan record"
    raise ValueError(f"a {fmt} {what}, written by another version of airflow-lineage-provider "
                     f"(this one reads {LEAN} and {RAW}, Spark's plan JSON): run the job again")


def extras_of(record: dict[str, Any]) -> Mapping[str, Any]:
    """A raw record's ``extras`` (empty when the producer read none)."""
    return record.get(EXTRAS) or _NO_DICT


def write_of(extras: Mapping[str, Any]) -> Mapping[str, Any]:
    """The ``write`` details of a record's ``extras`` (empty when the JSON tells all)."""
    return extras.get(WRITE) or _NO_DICT


def relation(extras: Mapping[str, Any], first_output: int | str) -> Mapping[str, Any]:
    """What the producer read of the relation whose first output column has this exprId."""
    return (extras.get(RELATIONS) or _NO_DICT).get(str(first_output)) or _NO_DICT


def table_location(extras: Mapping[str, Any], table: str) -> str | None:
    """A catalog table's storage location as written (the producer's URI, decoded once)."""
    location = (extras.get(TABLES) or _NO_DICT).get(table)
    return as_written(location) if isinstance(location, str) else location


# The commands whose ``write`` key holds a java.net.URI (percent-encoded), by key; every other
# location a producer writes is as written (see "How a location is spelled").
URI_SPELLED: Mapping[str, frozenset[str]] = MappingProxyType({
    "CreateDataSourceTableAsSelectCommand": frozenset({LOCATION}),
    "InsertIntoHiveTable": frozenset({LOCATION}),
    "WriteToMicroBatchDataSourceV1": frozenset({LOCATION}),
    "InsertIntoDataSourceDirCommand": frozenset({PATH}),
})


def write_location(extras: Mapping[str, Any], command: str, key: str) -> str | None:
    """The write's ``path`` or ``location`` (``key``) as written: decoded once where ``command``'s
    producer spells it as a URI (``URI_SPELLED``)."""
    value = write_of(extras).get(key)
    if isinstance(value, str) and key in URI_SPELLED.get(command, ()):
        return as_written(value)
    return value


def expand_rows(extras: Mapping[str, Any], first_output: int | str) -> list[list[Any]] | None:
    """The projections of the Expand whose first output has this exprId, when the JSON lost them."""
    return (extras.get(EXPAND) or _NO_DICT).get(str(first_output))


def static_partitions(extras: Mapping[str, Any]) -> Mapping[str, str]:
    """An insert's static partition values (``PARTITION (p = 'x')``), column by column."""
    return write_of(extras).get(STATIC_PARTITIONS) or _NO_DICT


def all_nodes(flat: Any) -> Iterator[dict[str, Any]]:
    """Every JSON object of a plan's JSON that is a tree node (it has a ``class``), nested plans and
    expressions included: the one walk over Spark's raw JSON, for the capture and the digest alike."""
    stack = [flat]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            if "class" in item:
                yield item
            stack.extend(v for v in item.values() if isinstance(v, (list, dict)))


def short_class(cls: str) -> str:
    """A plan JSON node's class name without its package (and without Scala's ``$``)."""
    return cls.rsplit(".", 1)[-1].rstrip("$")


def command(record: dict[str, Any]) -> str:
    """The class of the record's root command (raw or lean), ``""`` when unknown."""
    found = record.get(COMMAND)
    if found:
        return str(found)
    plan = record.get(PLAN)
    return short_class(str(plan[0].get("class", ""))) if plan else ""


def is_event(record: dict[str, Any]) -> bool:
    """A listener event's record (an execution id): one the reduction may drop."""
    return record.get(EXECUTION_ID) is not None
