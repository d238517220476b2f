"""job/jvm.py: every write command of ``writes.WRITES`` has a reader of what its JSON loses, or a
reason to need none, and every reader reads a command the table knows."""

from __future__ import annotations

import pytest

from airflow_lineage_provider.job import jvm
from airflow_lineage_provider.job.jvm import _WRITE_READERS, NO_READER
from airflow_lineage_provider.lineage.plan.writes import WRITES


@pytest.mark.parametrize("command", sorted(_WRITE_READERS))
def test_every_reader_reads_a_write_command(command):
    assert command in WRITES, f"job/jvm.py reads {command}, which lineage/plan/writes.py WRITES does not know"


@pytest.mark.parametrize("command", sorted(WRITES))
def test_every_write_command_has_a_reader_or_a_reason(command):
    assert command in _WRITE_READERS or NO_READER.get(command), (
        f"{command} is in lineage/plan/writes.py WRITES but job/jvm.py neither reads it (_WRITE_READERS) "
        f"nor says why it needs no reader (NO_READER)")


def test_a_command_is_read_or_excused_not_both():
    assert not _WRITE_READERS.keys() & NO_READER.keys()
    assert NO_READER.keys() <= WRITES.keys(), sorted(NO_READER.keys() - WRITES.keys())


# -- issue 42: the text of the spark.sql call that made a write (jvm.sql_text) -----------------------------

class _Option:
    def __init__(self, value=None):
        self.value = value

    def isDefined(self):  # noqa: N802 - Scala's Option
        return self.value is not None

    def get(self):
        return self.value


class _Seq:
    def __init__(self, items):
        self.items = list(items)

    def size(self):
        return len(self.items)

    def apply(self, i):
        return self.items[i]


class _Origin:
    def __init__(self, text=None, start=None):
        self._text, self._start = text, start

    def sqlText(self):  # noqa: N802
        return _Option(self._text)

    def startIndex(self):  # noqa: N802
        return _Option(self._start)


class _Class:
    def __init__(self, name):
        self.name = name

    def getSimpleName(self):  # noqa: N802
        return self.name


class _Plan:
    """A plan node as py4j shows it: its class, origin, children and inner children (a CTAS's query)."""

    def __init__(self, name, text=None, start=None, children=(), inner=()):
        self.name, self._origin, self._children, self._inner = name, _Origin(text, start), children, inner

    def getClass(self):  # noqa: N802
        return _Class(self.name)

    def origin(self):
        return self._origin

    def children(self):
        return _Seq(self._children)

    def innerChildren(self):  # noqa: N802
        return _Seq(self._inner)

    def commandLogicalPlan(self):  # noqa: N802 - a CommandResult's
        return self._children[0]


def _query_of(text, query):
    """The root of the query ``text`` holds at ``query``, with the statement's whole text in its origin."""
    return _Plan("Project", text, text.index(query))


def test_an_insert_keeps_its_text_from_its_own_origin():
    text = "/* lead */ INSERT INTO t SELECT 2"
    plan = _Plan("InsertIntoHadoopFsRelationCommand", text, 11, children=[_query_of(text, "SELECT")])
    assert jvm.sql_text(plan) == text


@pytest.mark.parametrize("text, query, where", [
    ("CREATE TABLE t USING parquet AS SELECT 1 AS a", "SELECT", "inner"),
    ("CREATE TABLE t SELECT 1 AS a", "SELECT", "inner"),  # AS is optional
    ("-- a note\n/* and /* a nested */ one */\ncreate table t stored as parquet as\n  select 1 as a", "select",
     "inner"),
    ("CREATE TABLE t USING parquet AS WITH c AS (SELECT 1 AS a) SELECT a FROM c", "WITH c", "inner"),
    ("CREATE OR REPLACE VIEW v AS -- why\n SELECT a FROM t", "SELECT", "children"),
    ("REPLACE TABLE t USING foo AS SELECT 1 AS a", "SELECT", "children"),
])
def test_a_command_the_analyzer_made_anew_keeps_its_text_from_its_query(text, query, where):
    root = _query_of(text, query)
    plan = _Plan("CreateDataSourceTableAsSelectCommand", **{where: [root]})
    assert jvm.sql_text(plan) == text


@pytest.mark.parametrize("text, query", [
    ("SELECT a FROM t ORDER BY a", "ORDER BY"),  # the Sort's origin starts inside the query
    ("/* x */ SELECT 1 AS a", "SELECT"),
    ("FROM t SELECT a", "SELECT"),
    ("(SELECT a FROM t)", "SELECT"),
    ("WITH c AS (SELECT 1 AS a) SELECT a FROM c", "SELECT a FROM c"),
    ("SELECT a FROM t", "SELECT"),
])
def test_a_dataframe_write_of_a_spark_sql_query_keeps_no_text(text, query):
    plan = _Plan("CreateDataSourceTableAsSelectCommand", inner=[_query_of(text, query)])
    assert jvm.sql_text(plan) == ""
    assert jvm.sql_text(_Plan("InsertIntoHadoopFsRelationCommand", children=[_query_of(text, query)])) == ""


def test_only_the_query_root_is_read_never_a_cached_relation_below_it():
    stale = _Plan("LogicalRelation", "CREATE VIEW v AS SELECT a FROM t", 31)  # the first statement that read t
    plan = _Plan("InsertIntoHadoopFsRelationCommand", children=[_Plan("Project", children=[
        _Plan("SubqueryAlias", children=[stale])])])
    assert jvm.sql_text(plan) == ""


def test_the_statement_execute_immediate_ran_is_its_text():
    inner = "INSERT INTO t SELECT 7"
    plan = _Plan("CommandResult", children=[_Plan("InsertIntoHadoopFsRelationCommand", inner, 0)])
    assert jvm.sql_text(plan) == inner


@pytest.mark.parametrize("text, head", [
    ("CREATE TABLE t AS ", "CREATE"),
    ("  insert overwrite t ", "INSERT"),
    ("-- c\n/* a /* b */ c */ merge INTO t USING s ", "MERGE"),
    ("/* only a comment */ ", ""),
    ("", ""),
    ("(", ""),
    ("`CREATE` ", ""),
    ("update_log ", "UPDATE_LOG"),
])
def test_the_head_of_a_text_is_its_first_word_of_code(text, head):
    assert jvm.sql_head(text) == head
