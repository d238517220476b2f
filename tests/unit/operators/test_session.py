"""operators/session.py without Spark: the texts of spark.sql a block runs, kept for its static lineage."""

from __future__ import annotations

from airflow_lineage_provider.operators.session import SqlTexts


class Session:
    def sql(self, query, args=None, **kwargs):
        return ("ran", query, args, kwargs)


def test_the_sql_a_block_runs_is_kept_and_the_session_put_back():
    spark = Session()
    texts = SqlTexts(spark)
    assert spark.sql(" INSERT INTO t SELECT 1;\n", {"x": 1}, y=2) == ("ran", " INSERT INTO t SELECT 1;\n", {"x": 1},
                                                                       {"y": 2})
    spark.sql("SELECT 2")
    texts.restore()
    spark.sql("SELECT 3")  # after the block: not kept
    assert texts.texts == ["INSERT INTO t SELECT 1", "SELECT 2"]
    assert "sql" not in vars(spark)


def test_a_session_that_cannot_be_watched_is_left_alone():
    class Frozen:
        __slots__ = ()

        def sql(self, query):
            return query

    spark = Frozen()
    texts = SqlTexts(spark)
    assert spark.sql("SELECT 1") == "SELECT 1" and texts.texts == []
    texts.restore()
