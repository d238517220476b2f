"""lineage/plan/events.py: one record per write out of every event Spark reports."""

from __future__ import annotations

import pytest

from airflow_lineage_provider.lineage.plan import events
from airflow_lineage_provider.lineage.plan import record as raw

CMD = "org.apache.spark.sql.execution.command."
DS = "org.apache.spark.sql.execution.datasources."
CLASSES = {
    "CreateDataSourceTableAsSelectCommand": CMD, "SaveAsV1TableCommand": CMD, "InsertIntoDataSourceDirCommand": CMD,
    "InsertIntoHadoopFsRelationCommand": DS,
}
FSW = "file source write"  # the funcName of the insert a CTAS runs


def rec(command: str, qid: int | None = None, func: str = raw.COMMAND_FUNC, **write) -> dict:
    """The raw record of one event: only what the rules read (its root's class, its write)."""
    out = raw.make(raw.WRITE_KIND, [{"class": CLASSES.get(command, CMD) + command, "num-children": 0}],
                   {raw.WRITE: write} if write else {},
                   raw.event(qid, func, command) if qid is not None else None)
    if qid is not None:
        del out[raw.COMMAND]  # a producer may leave it out: the reader reads the plan's root
    return out


def ctas(location: str, qid: int | None = None, **kw) -> dict:
    return rec("CreateDataSourceTableAsSelectCommand", qid, location=location, mode="create", **kw)


def insert(path: str, qid: int | None = None, func: str = raw.COMMAND_FUNC, **kw) -> dict:
    return rec("InsertIntoHadoopFsRelationCommand", qid, func, path=path, **kw)


def names(records: list[dict]) -> list[str]:
    return [raw.command(r) for r in records]


# -- one per user action: nesting by execution id ------------------------------------------------------

def test_save_as_table_reports_one_write():
    # Measured on Spark 4.2: SaveAsV1TableCommand (id 18) runs a CTAS (20), which runs an insert (21);
    # the listener reports the innermost first.
    got = events.one_per_action([insert("file:/wh/t", 21, FSW), ctas("file:/wh/t", 20),
                                 rec("SaveAsV1TableCommand", 18)])
    assert names(got) == ["CreateDataSourceTableAsSelectCommand"]


def test_separate_writes_of_one_table_stay_separate():
    got = events.one_per_action([insert("file:/wh/t", 20), insert("file:/wh/t", 24), insert("file:/wh/t", 31, FSW),
                                 ctas("file:/wh/t", 30), insert("file:/wh/t", 40)])
    assert names(got) == ["InsertIntoHadoopFsRelationCommand", "InsertIntoHadoopFsRelationCommand",
                          "CreateDataSourceTableAsSelectCommand", "InsertIntoHadoopFsRelationCommand"]


def test_save_as_table_into_an_existing_table_keeps_the_insert():
    got = events.one_per_action([insert("file:/wh/t", 12), rec("SaveAsV1TableCommand", 8)])
    assert names(got) == ["InsertIntoHadoopFsRelationCommand"]


def test_a_record_that_is_no_event_never_nests():
    stream = insert("file:/out")  # a streaming query's plan: no execution id
    got = events.one_per_action([insert("file:/wh/a", 3), stream, insert("file:/wh/b", 2)])
    assert got[0] is stream and len(got) == 2


# -- one per target: a script statement's -------------------------------------------------------------

def test_ctas_wins_over_its_nested_insert():
    outer, inner = ctas("file:/wh/t", 5), insert("file:/wh/t", 6)
    assert events.one_per_target([outer, inner]) == [outer]
    assert events.one_per_target([outer, inner])[0] is outer


def test_ctas_wins_whatever_the_order():
    outer, inner = ctas("file:/wh/t", 5), insert("file:/wh/t", 6)
    assert events.one_per_target([inner, outer]) == [outer]


def test_trailing_slash_is_the_same_target():
    outer, inner = ctas("file:/wh/t/", 5), insert("file:/wh/t", 6)
    assert events.one_per_target([inner, outer]) == [outer]


def test_different_targets_are_all_kept_in_order():
    a, b, c = insert("file:/wh/a", 1), ctas("file:/wh/b", 2), insert("file:/wh/c", 3)
    assert events.one_per_target([a, b, c]) == [a, b, c]


def test_first_of_equal_rank_is_kept():
    first, second = insert("file:/wh/t", 1), insert("file:/wh/t", 2)
    assert events.one_per_target([first, second]) == [first]
    assert events.one_per_target([first, second])[0] is first


def test_save_as_table_keeps_what_it_wraps():
    wrapper = rec("SaveAsV1TableCommand", 1, location="file:/wh/t")
    outer, inner = ctas("file:/wh/t", 2), insert("file:/wh/t", 3)
    assert events.one_per_target([wrapper, outer, inner]) == [outer]


def test_one_per_target_of_nothing():
    assert events.one_per_target([]) == []


def test_the_inner_events_of_a_creating_command_are_dropped_before_describing():
    # Only the heads are read: what the py4j capture has before it describes a plan.
    heads = [raw.event(6, FSW, "InsertIntoHadoopFsRelationCommand"),
             raw.event(5, raw.COMMAND_FUNC, "CreateDataSourceTableAsSelectCommand")]
    assert events.drop_inner(heads) == heads[1:]
    wrapped = [raw.event(9, raw.COMMAND_FUNC, "InsertIntoHadoopFsRelationCommand"),
               raw.event(8, raw.COMMAND_FUNC, "SaveAsV1TableCommand")]
    assert events.drop_inner(wrapped) == wrapped[:1]
    alone = [raw.event(8, raw.COMMAND_FUNC, "SaveAsV1TableCommand")]
    assert events.drop_inner(alone) == alone


def test_a_hive_ctas_is_one_write_though_its_insert_is_a_command_of_its_own():
    # CREATE TABLE t STORED AS PARQUET AS SELECT ...: Spark runs the insert as a "command" of its own,
    # whose target (a path) is no key the CTAS's (a catalog name) can match: it ran inside it by its id.
    heads = [raw.event(49, raw.COMMAND_FUNC, "InsertIntoHadoopFsRelationCommand"),
             raw.event(47, raw.COMMAND_FUNC, "CreateHiveTableAsSelectCommand")]
    assert events.drop_inner(heads) == heads[1:]
    assert events.one_per_statement(heads) == heads[1:]
    # An insert that ran before the creating command is no part of it (not one statement's, but kept).
    before = [raw.event(3, raw.COMMAND_FUNC, "InsertIntoHadoopFsRelationCommand"),
              raw.event(4, raw.COMMAND_FUNC, "CreateHiveTableAsSelectCommand")]
    assert events.drop_inner(before) == before


@pytest.mark.parametrize(
    ("record", "key"),
    [
        (insert("file:/wh/t/"), "/wh/t"),  # a local path, however it is spelled
        (ctas("hdfs://nn:8020/wh/t"), "hdfs://nn:8020/wh/t"),
        # path is preferred to location when both are known
        ({"plan": [{"class": "x"}], "extras": {"write": {"path": "file:/p", "location": "file:/l"}}}, "/p"),
        ({"plan": [{"class": "x", "catalogTable": {"identifier": {"table": "T", "database": "Db"}}}],
          "extras": {}}, "spark_catalog.db.t"),
        ({"plan": [{"class": "x", "table": {"identifier": {"table": "t", "database": "d", "catalog": "c"}}}]},
         "c.d.t"),
        ({"plan": [{"class": "x", "tableDesc": {"identifier": {"table": "t"}}}], "extras": {"write": None}},
         "spark_catalog.default.t"),
        ({"format": "lean/2", "target_key": "/wh/t"}, "/wh/t"),  # a lean record keeps it
        ({"plan": [{"class": "x"}], "extras": None}, None),
    ],
)
def test_target_key(record, key):
    assert events.target_key(record) == key


def test_records_without_target_are_never_merged():
    a = {"plan": [{"class": "org.apache.spark.sql.catalyst.plans.logical.Project"}], "extras": {}, "execution_id": 1}
    b = {"plan": [{"class": "org.apache.spark.sql.catalyst.plans.logical.Project"}], "extras": {}, "execution_id": 1}
    assert a == b and events.target_key(a) is None
    assert [id(r) for r in events.one_per_target([a, b])] == [id(a), id(b)]


def test_records_that_are_no_events_are_never_merged():
    a, b = ctas("file:/wh/t"), insert("file:/wh/t")  # two dry-run analyses, say
    assert events.target_key(a) == events.target_key(b)
    assert events.one_per_target([a, b]) == [a, b]


def test_one_directory_is_one_target_however_it_is_spelled():
    spelled = [{"plan": [{"class": "x"}], "extras": {"write": {"path": p}}}
               for p in ("file:/tmp/out", "file:///tmp/out/", "/tmp/out")]
    assert {events.target_key(r) for r in spelled} == {"/tmp/out"}


# -- the reader's pass over a dump ----------------------------------------------------------------------

def placed(record: dict, index: int, statement: int | None = None, block: bool = False) -> dict:
    raw.place(record, index=index, sql=f"statement {index}", line=None if statement is None else index + 1,
              statement=statement, block=block)
    return record


def test_a_dump_written_before_raw_1_is_read_as_it_is():
    # Two writes of one table by one scripting block, one application write: no execution ids, no
    # statement keys: what older drivers dumped, already reduced.
    old = [{k: v for k, v in placed(insert("file:/wh/t"), 3).items() if k != raw.FORMAT},
           {k: v for k, v in placed(insert("file:/wh/t"), 3).items() if k != raw.FORMAT},
           placed(ctas("file:/wh/u"), 7)]
    assert events.reduce(old) == old


def test_each_statement_is_reduced_on_its_own():
    one = [placed(insert("file:/wh/t", 6, FSW), 0, 0), placed(ctas("file:/wh/t", 5), 0, 0)]
    two = [placed(insert("file:/wh/t", 9), 1, 1)]  # the same table again, by the next statement
    got = events.reduce(one + two)
    assert got == [one[1], two[0]]


def test_an_applications_writes_are_numbered_in_write_order():
    dumped = [placed(insert("file:/wh/t", 21, FSW), 0), placed(ctas("file:/wh/t", 20), 1),
              placed(rec("SaveAsV1TableCommand", 18), 2), placed(insert("file:/out", 31), 3)]
    got = events.reduce(dumped)
    assert names(got) == ["CreateDataSourceTableAsSelectCommand", "InsertIntoHadoopFsRelationCommand"]
    assert [r[raw.INDEX] for r in got] == [0, 1]
    assert dumped[1][raw.INDEX] == 1 and dumped[3][raw.INDEX] == 3  # renumbered copies: the dump is not changed


def test_the_pass_is_idempotent():
    dumped = [placed(insert("file:/wh/t", 6, FSW), 0, 0), placed(ctas("file:/wh/t", 5), 0, 0),
              placed(insert("file:/wh/t", 13), 1, 1, block=True), placed(insert("file:/wh/t", 15), 1, 1, block=True)]
    once = events.reduce(dumped)
    assert len(once) == 3 and events.reduce(once) == once


def test_lean_keys_are_what_the_rules_read():
    event = ctas("file:/wh/t/", 5)
    kept = events.lean_keys(event)
    assert kept == {raw.COMMAND: "CreateDataSourceTableAsSelectCommand", raw.TARGET_KEY: "/wh/t"}
    lean = {**{k: v for k, v in event.items() if k not in (raw.PLAN, raw.EXTRAS)}, **kept, raw.FORMAT: "lean/2"}
    assert events.target_key(lean) == events.target_key(event)
    assert raw.command(lean) == raw.command(event)
    assert events.lean_keys(ctas("file:/wh/t")) == {}  # no event: nothing to reduce


def test_a_ctas_and_its_insert_are_one_target_at_a_path_the_catalog_encodes():
    """The CTAS names the catalog's URI (percent-encoded), the insert it runs the path as written."""
    ctas = {"command": "CreateDataSourceTableAsSelectCommand",
            "extras": {"write": {"location": "file:/d/out%20dir/sp%20ace%231"}}}
    insert = {"command": "InsertIntoHadoopFsRelationCommand", "extras": {"write": {"path": "file:/d/out dir/sp ace#1"}}}
    directory = {"command": "InsertIntoDataSourceDirCommand", "extras": {"write": {"path": "/d/out%20dir/sp%20ace%231"}}}
    assert {events.target_key(r) for r in (ctas, insert, directory)} == {"/d/out dir/sp ace#1"}
    literal = {"command": "InsertIntoHadoopFsRelationCommand", "extras": {"write": {"path": "file:/d/100%25"}}}
    assert events.target_key(literal) == "/d/100%25"  # as written: a user's "%25" is no escape here
