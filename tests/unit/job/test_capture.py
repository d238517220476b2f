"""job/capture.py: one write per user action (nest_writes) and one record per target (deduplicate)."""

from __future__ import annotations

import pytest

from airflow_lineage_provider.job.capture import deduplicate, nest_writes, target_key
from airflow_lineage_provider.lineage.plan.writes import rank as _rank

CMD = "org.apache.spark.sql.execution.command."
DS = "org.apache.spark.sql.execution.datasources."


def test_save_as_table_reports_one_write():
    # Measured on Spark 4.2: SaveAsV1TableCommand (id 3) runs a CTAS (5), which runs an insert (6);
    # the listener reports the innermost first.
    events = [(6, "InsertIntoHadoopFsRelationCommand"), (5, "CreateDataSourceTableAsSelectCommand"),
              (3, "SaveAsV1TableCommand")]
    assert nest_writes(events, _rank) == ["CreateDataSourceTableAsSelectCommand"]


def test_separate_writes_of_one_table_stay_separate():
    events = [(20, "InsertIntoHadoopFsRelationCommand"), (24, "InsertIntoHadoopFsRelationCommand"),
              (31, "InsertIntoHadoopFsRelationCommand"), (30, "CreateDataSourceTableAsSelectCommand"),
              (40, "InsertIntoHadoopFsRelationCommand")]
    assert nest_writes(events, _rank) == ["InsertIntoHadoopFsRelationCommand", "InsertIntoHadoopFsRelationCommand",
                                          "CreateDataSourceTableAsSelectCommand", "InsertIntoHadoopFsRelationCommand"]


def test_save_as_table_into_an_existing_table_keeps_the_insert():
    events = [(12, "InsertIntoHadoopFsRelationCommand"), (8, "SaveAsV1TableCommand")]
    assert nest_writes(events, _rank) == ["InsertIntoHadoopFsRelationCommand"]



def ctas(location: str, **extra) -> dict:
    return {"plan": [{"class": CMD + "CreateDataSourceTableAsSelectCommand", "num-children": 0}],
            "extras": {"write": {"location": location, "mode": "create"}}, **extra}


def insert(path: str, **extra) -> dict:
    return {"plan": [{"class": DS + "InsertIntoHadoopFsRelationCommand", "num-children": 1}],
            "extras": {"write": {"path": path}}, **extra}


def test_ctas_wins_over_its_nested_insert():
    outer, inner = ctas("file:/wh/t"), insert("file:/wh/t")
    assert deduplicate([outer, inner]) == [outer]
    assert deduplicate([outer, inner])[0] is outer


def test_ctas_wins_whatever_the_order():
    outer, inner = ctas("file:/wh/t"), insert("file:/wh/t")
    assert deduplicate([inner, outer]) == [outer]


def test_trailing_slash_is_the_same_target():
    outer, inner = ctas("file:/wh/t/"), insert("file:/wh/t")
    assert deduplicate([inner, outer]) == [outer]


def test_different_targets_are_all_kept_in_order():
    a, b, c = insert("file:/wh/a", tag=1), ctas("file:/wh/b", tag=2), insert("file:/wh/c", tag=3)
    assert deduplicate([a, b, c]) == [a, b, c]


def test_first_of_equal_rank_is_kept():
    first, second = insert("file:/wh/t", tag=1), insert("file:/wh/t", tag=2)
    assert deduplicate([first, second]) == [first]


def test_save_as_table_keeps_what_it_wraps():
    wrapper = {"plan": [{"class": CMD + "SaveAsV1TableCommand"}], "extras": {"write": {"location": "file:/wh/t"}}}
    outer, inner = ctas("file:/wh/t"), insert("file:/wh/t")
    assert deduplicate([wrapper, outer, inner]) == [outer]


def test_deduplicate_empty():
    assert deduplicate([]) == []


@pytest.mark.parametrize(
    ("rec", "key"),
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
    ],
)
def test_target_key(rec, key):
    assert target_key(rec) == key


def test_records_without_target_are_never_merged():
    a = {"plan": [{"class": "org.apache.spark.sql.catalyst.plans.logical.Project"}], "extras": {}}
    b = {"plan": [{"class": "org.apache.spark.sql.catalyst.plans.logical.Project"}], "extras": {}}
    assert a == b and target_key(a) != target_key(b)
    assert [id(r) for r in deduplicate([a, b])] == [id(a), id(b)]


@pytest.mark.parametrize("name", ["seed_join", "seed_single_table", "ctas_upper"])
def test_the_lineage_the_driver_resolves_is_the_one_the_hook_would(name):
    """The driver dumps each record's lineage beside its lean plan; the hook reads it instead of
    resolving again, and must read the very document it would have resolved."""
    from airflow_lineage_provider.job.capture import digested
    from airflow_lineage_provider.lineage.plan import resolve
    from airflow_lineage_provider.lineage.plan.digest import digest
    from tests.helpers import plan_record

    warnings: list[str] = []
    dumped = digested(plan_record(name), warnings)
    assert warnings == [] and resolve.RESOLVED in dumped and "sql" not in dumped[resolve.RESOLVED]
    plan_only = {k: v for k, v in digest(plan_record(name)).items() if k != resolve.RESOLVED}
    assert resolve.extract(dumped) == resolve.extract(plan_only)
    assert resolve.extract(dumped).to_dict() == resolve.extract(plan_record(name)).to_dict()


def test_one_directory_is_one_target_however_it_is_spelled():
    spelled = [{"plan": [{"class": "x"}], "extras": {"write": {"path": p}}}
               for p in ("file:/tmp/out", "file:///tmp/out/", "/tmp/out")]
    assert {target_key(r) for r in spelled} == {"/tmp/out"}
