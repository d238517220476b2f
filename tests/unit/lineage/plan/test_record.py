"""lineage/plan/record.py: the raw record's contract, its builder, its accessors and the one readable-check."""

from __future__ import annotations

import json
import re

import pytest

from airflow_lineage_provider.lineage.plan import digest, events, record, resolve
from airflow_lineage_provider.lineage.plan.lean import LEAN
from tests.helpers import PLANS, plan_record

FIXTURES = sorted(p.stem for p in PLANS.glob("*.json"))


def test_an_event_record_is_built_in_the_order_it_is_learnt():
    head = record.event(12, record.COMMAND_FUNC, "InsertIntoHadoopFsRelationCommand")
    out = record.make(record.WRITE_KIND, [{"class": "x", "num-children": 0}], record.new_extras(), head)
    record.place(out, index=3, sql="INSERT ...", line=4, statement=3)
    assert out == {"format": "raw/1", "execution_id": 12, "func": "command",
                   "command": "InsertIntoHadoopFsRelationCommand", "kind": "write",
                   "plan": [{"class": "x", "num-children": 0}], "extras": {"tables": {}, "relations": {}},
                   "index": 3, "sql": "INSERT ...", "line": 4, "statement": 3}
    assert head == {"format": "raw/1", "execution_id": 12, "func": "command",
                    "command": "InsertIntoHadoopFsRelationCommand"}  # the head is not changed
    assert record.is_event(out)


def test_a_plan_that_is_no_event_has_only_the_format_added():
    out = record.make(record.QUERY_KIND, [], {})
    record.place(out, index=0, sql="SELECT 1", line=1)
    assert out == {"format": "raw/1", "kind": "query", "plan": [], "extras": {}, "index": 0, "sql": "SELECT 1",
                   "line": 1}
    assert not record.is_event(out)


def test_an_application_record_has_no_statement():
    out = record.make(record.WRITE_KIND, [], {})
    record.place(out, index=0, sql="", line=None)
    assert record.STATEMENT not in out and record.BLOCK not in out and out[record.LINE] is None
    record.place(out, index=0, sql="", line=1, statement=0, block=True)
    assert out[record.STATEMENT] == 0 and out[record.BLOCK] is True


@pytest.mark.parametrize("fmt", [None, "raw/1", LEAN])
def test_formats_this_version_reads(fmt):
    record.check_readable({} if fmt is None else {"format": fmt})


@pytest.mark.parametrize(
    ("fmt", "message"),
    [
        ("raw/2", r"a raw/2 plan record, written by another version .*reads lean/2 and raw/1.*run the job again"),
        ("lean/1", r"a lean/1 plan dump, written by another version .*run the job again"),
        ("lean/3", r"a lean/3 plan dump"),
        ("something/else", r"a something/else plan record"),
    ],
)
def test_an_unknown_version_is_refused_with_what_to_do(fmt, message):
    with pytest.raises(ValueError, match=message):
        record.check_readable({"format": fmt, "plan": [], "nodes": []})


def test_the_reader_checks_before_anything_else():
    # The one call every reader goes through (the digest): a record of an unknown version never
    # reaches the resolver, lean or raw.
    with pytest.raises(ValueError, match=r"raw/2 plan record"):
        digest.digest({**plan_record("seed_join"), "format": "raw/2"})
    with pytest.raises(ValueError, match=r"lean/9 plan dump"):
        resolve.extract({"format": "lean/9", "lineage": {}, "index": 0})


def test_accessors_read_absent_objects_as_empty():
    bare = {"plan": []}
    extras = record.extras_of(bare)
    assert dict(extras) == {} and dict(record.write_of(extras)) == {}
    assert dict(record.relation(extras, 7)) == {} and record.table_location(extras, "spark_catalog.db.t") is None
    assert record.expand_rows(extras, 7) is None and dict(record.static_partitions(extras)) == {}
    assert dict(record.write_of({"write": None})) == {}
    with pytest.raises(TypeError):
        extras["x"] = 1  # type: ignore[index]  # shared: never written to


def test_accessors_read_what_a_producer_wrote():
    extras = {"tables": {"spark_catalog.db.t": "file:/wh/t"}, "relations": {"7": {"paths": ["/in"]}},
              "expand": {"9": [[{"class": "x"}]]},
              "write": {"path": "/out", "static_partitions": {"p": "1"}}}
    rec = {"extras": extras}
    assert record.extras_of(rec) is extras and record.write_of(extras)["path"] == "/out"
    assert record.relation(extras, 7) == {"paths": ["/in"]} and record.relation(extras, "7") == {"paths": ["/in"]}
    assert record.table_location(extras, "spark_catalog.db.t") == "file:/wh/t"
    assert record.expand_rows(extras, 9) == [[{"class": "x"}]]
    assert record.static_partitions(extras) == {"p": "1"}


@pytest.mark.parametrize(
    ("rec", "command"),
    [
        ({"plan": [{"class": "org.apache.spark.sql.execution.command.CreateViewCommand"}]}, "CreateViewCommand"),
        ({"plan": [{"class": "org.apache.spark.sql.catalyst.plans.logical.Foo$"}]}, "Foo"),
        ({"command": "AppendData", "plan": [{"class": "x.Other"}]}, "AppendData"),  # a producer's word wins
        ({"format": LEAN, "command": "AppendData"}, "AppendData"),
        ({"format": LEAN}, ""),
    ],
)
def test_the_root_command(rec, command):
    assert record.command(rec) == command


def _documented(section: str) -> set[str]:
    """The keys a section of the module's docstring lists (the first word of its indented lines)."""
    text = record.__doc__ or ""
    body = text.split(section, 1)[1].split("::", 1)[1].split("\n\n", 2)[1]
    return {m.group(1) for m in re.finditer(r"^    (\w+)\s", body, re.M)}


def test_every_key_is_documented():
    top = {record.FORMAT, record.INDEX, record.SQL, record.LINE, record.KIND, record.PLAN, record.EXTRAS,
           record.EXECUTION_ID, record.FUNC, record.COMMAND, record.STATEMENT, record.BLOCK,
           record.REFUSED}
    assert _documented("Top-level keys") == top | {"event"}  # early versions' funcName, not read
    assert _documented("``extras`` (") == {record.TABLES, record.RELATIONS, record.EXPAND, record.WRITE,
                                          record.SOURCE_WARNINGS}
    assert _documented("``write`` (") == {record.PATH, record.LOCATION, record.MODE, record.TABLE, record.JDBC,
                                         record.COLUMNS, record.SINK, record.STATIC_PARTITIONS,
                                         record.SOURCE_FORMAT, record.PATHS}


@pytest.mark.parametrize("name", FIXTURES)
def test_recorded_plans_hold_only_documented_keys(name):
    # The plans of tests/data were recorded before the format marker: they must still be read.
    rec = plan_record(name)
    record.check_readable(rec)
    assert set(rec) <= _documented("Top-level keys")
    extras = record.extras_of(rec)
    assert set(extras) <= _documented("``extras`` (")
    assert set(record.write_of(extras)) <= _documented("``write`` (")


@pytest.mark.parametrize("name", FIXTURES)
def test_the_digest_keeps_what_the_reduction_reads(name):
    event = {**plan_record(name), **record.event(42, record.COMMAND_FUNC, "")}
    del event[record.COMMAND]  # left out by the producer: worked out from the plan
    lean = json.loads(json.dumps(digest.digest(event)))
    assert lean[record.EXECUTION_ID] == 42 and lean[record.FUNC] == record.COMMAND_FUNC
    assert lean[record.COMMAND] == record.command(plan_record(name))
    assert lean.get(record.TARGET_KEY) == events.target_key(event)  # None: no place known, never merged
    assert record.TARGET_KEY not in digest.digest(plan_record(name))  # no event: nothing to reduce


# -- how a location is spelled ---------------------------------------------------------------------
# tests/data/plans/odd_paths.jsonl: raw records Spark 4.2 dumped for tables, directories and PySpark
# paths whose names hold a space and "#", letters beyond ASCII, "%", a trailing space, an emoji and CJK
# (six writes each: INSERT into a table, CTAS, an INSERT into a Hive-format table, INSERT OVERWRITE
# DIRECTORY, a PySpark write.parquet, a PySpark read + write). The catalog spells them as URIs, the
# file writes and reads as written; every dataset must be named as written.
ODD = ["out dir/sp ace#1", "out dir/ünï", "100%", "trail ", "😀/数据"]


def _odd_records() -> list[dict]:
    return [json.loads(line) for line in (PLANS / "odd_paths.jsonl").read_text(encoding="utf-8").splitlines()]


def test_the_catalog_spells_locations_as_uris_and_file_writes_as_written():
    recs = _odd_records()
    assert record.extras_of(recs[0])["tables"]["spark_catalog.default.t0"] == "file:/data/out%20dir/sp%20ace%231"
    assert record.write_of(record.extras_of(recs[0]))["path"] == "file:/data/out dir/sp ace#1"
    ctas = record.extras_of(recs[1])
    assert record.write_location(ctas, "CreateDataSourceTableAsSelectCommand", record.LOCATION) == \
        "file:/data/ctas/out dir/sp ace#1"
    assert record.table_location(ctas, "spark_catalog.default.t0") == "file:/data/out dir/sp ace#1"
    directory = record.extras_of(recs[3])
    assert record.write_of(directory)["path"] == "/data/dir/out%20dir/sp%20ace%231"
    assert record.write_location(directory, "InsertIntoDataSourceDirCommand", record.PATH) == \
        "/data/dir/out dir/sp ace#1"
    # A path as written is never decoded: "%" a user wrote stays.
    assert record.write_location({"write": {"path": "file:/d/p%20c"}}, "InsertIntoHadoopFsRelationCommand",
                                 record.PATH) == "file:/d/p%20c"


def test_every_write_and_read_at_an_odd_path_is_named_as_written():
    from airflow_lineage_provider.lineage.extract import from_records

    report = from_records(_odd_records(), [])
    got = [(s.target.name, s.target.table, [d.name for d in s.inputs]) for s in report.statements]
    want = []
    for i, path in zip((0, 1, 3, 5, 6), ODD):
        want += [
            (f"/data/{path}", f"spark_catalog.default.t{i}", []),
            (f"/data/ctas/{path}", f"spark_catalog.default.c{i}", [f"/data/{path}"]),
            (f"/data/hive/{path}", f"spark_catalog.default.h{i}", [f"/data/ctas/{path}"]),
            (f"/data/dir/{path}", None, [f"/data/{path}"]),
            (f"/data/py/{path}", None, []),
            (f"/data/py2/{path}", None, [f"/data/py/{path}"]),
        ]
    assert got == want
    assert all(s.target.namespace == "file" for s in report.statements)
