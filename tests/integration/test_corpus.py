"""The plan extractor over the corpus, on real Spark (one shared session, analysis only)."""

from __future__ import annotations

import json

import pytest

from airflow_lineage_provider.lineage.model import StatementLineage
from tests.helpers import internal_texts
from tests.integration.corpus import CASES, Case

pytestmark = pytest.mark.spark

LETTER = {"IDENTITY": "I", "TRANSFORMATION": "T", "AGGREGATION": "A"}


def short(table: str) -> str:
    return table.rsplit(".", 1)[-1].rsplit("/", 1)[-1]


def direct(st: StatementLineage) -> dict[str, set[str]]:
    return {
        col: {f"{short(i.table)}.{i.field}:{LETTER[i.subtype]}{'!' if i.masking else ''}" for i in inputs}
        for col, inputs in st.columns
    }


def indirect(st: StatementLineage) -> set[str]:
    return {f"{short(i.table)}.{i.field}:{i.subtype}" for i in st.indirect}


def test_corpus_is_large_and_names_are_unique():
    assert len(CASES) >= 80
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case(corpus_plans, case: Case):
    st = corpus_plans.lineage(case)
    names = [c for c, _ in st.columns]
    assert all(names) and len(set(names)) == len(names), "a target column is never unnamed, never named twice"
    assert direct(st) == case.columns
    assert list(dict(st.columns)) == list(case.columns), "columns in the target's order"
    assert indirect(st) == case.indirect
    assert st.warnings == () and st.confidence == 1.0
    if case.target == "path":
        assert st.target is not None and st.target.table is None and st.target.namespace == "file"
    elif case.target:
        assert st.target is not None and st.target.table == f"spark_catalog.corpus.{case.target}"
    else:
        assert st.target is None


def test_self_join_keeps_two_distinct_paths(corpus, analyze):
    st = analyze("SELECT a.name, b.name AS boss FROM emp a JOIN emp b ON a.mgr_id = b.id")
    cols = st.column_map
    assert [i.expression for i in cols["name"]] == ["a.name"]
    assert [i.expression for i in cols["boss"]] == ["b.name"]


def test_expressions_are_written_in_sql_terms(corpus, analyze):
    st = analyze("SELECT concat(e.name, d.dname) AS x, CASE WHEN e.age > 30 THEN 'old' END AS y "
                 "FROM emp e JOIN dept d ON e.dept = d.dept")
    cols = st.column_map
    assert {i.expression for i in cols["x"]} == {"concat(e.name, d.dname)"}
    assert "#" not in json.dumps(st.to_dict())


def test_dataframe_only_nodes_pass_lineage_through(corpus, spark):
    """Deduplicate and unionByName come from the DataFrame API.

    A batch plan's watermark is removed by Spark's analyzer; streaming plans keep it.
    """
    from pyspark.sql import functions as F

    from airflow_lineage_provider.job.capture import PlanCapture
    from airflow_lineage_provider.lineage.plan import resolve

    emp = spark.table("corpus.emp")
    dept = spark.table("corpus.dept")
    df = (emp.withWatermark("ts", "1 hour").dropDuplicates(["id"])
          .select(F.col("name").alias("n"), "dept")
          .unionByName(dept.select(F.col("dname").alias("n"), "dept")))
    record = PlanCapture(spark).describe(df._jdf.queryExecution().analyzed())
    record.update(index=0, sql="")
    st = resolve.extract(record)
    assert direct(st) == {"n": {"emp.name:I", "dept.dname:I"}, "dept": {"emp.dept:I", "dept.dept:I"}}
    assert st.warnings == ()
    classes = {n["class"].rsplit(".", 1)[-1] for n in record["plan"]}
    assert {"Deduplicate", "Union"} <= classes


def test_unknown_node_warns_and_lowers_confidence(corpus, analyze, monkeypatch):
    from airflow_lineage_provider.lineage.plan import digest

    monkeypatch.setattr(digest, "PASS_THROUGH", digest.PASS_THROUGH - {"Sample"})
    st = analyze("SELECT name FROM emp TABLESAMPLE (50 PERCENT)")
    assert direct(st) == {"name": {"emp.name:I"}}
    assert st.confidence < 1.0
    assert any("Sample" in w for w in st.warnings)


def test_path_read_is_named_by_its_path(corpus, spark, analyze, tmp_path):
    path = str(tmp_path / "people")
    spark.range(3).selectExpr("id", "cast(id AS string) AS label").write.parquet(path)
    st = analyze(f"SELECT label FROM parquet.`{path}`")
    [source] = st.column_map["label"]
    assert source.table == path and source.field == "label" and source.subtype == "IDENTITY"
    assert [(d.namespace, d.name) for d in st.inputs] == [("file", path)]


def test_streaming_watermark_passes_lineage_through(corpus, spark, tmp_path):
    from pyspark.sql import functions as F

    from airflow_lineage_provider.job.capture import PlanCapture
    from airflow_lineage_provider.lineage.plan import resolve

    path = str(tmp_path / "events")
    spark.range(2).selectExpr("id", "current_timestamp() AS ts", "'x' AS kind").write.parquet(path)
    stream = spark.readStream.schema("id BIGINT, ts TIMESTAMP, kind STRING").parquet(path)
    df = stream.withWatermark("ts", "10 minutes").select("ts", F.upper("kind").alias("k"))
    record = PlanCapture(spark).describe(df._jdf.queryExecution().analyzed())
    record.update(index=0, sql="")
    st = resolve.extract(record)
    classes = {n["class"].rsplit(".", 1)[-1] for n in record["plan"]}
    assert "EventTimeWatermark" in classes
    assert direct(st) == {"ts": {"events.ts:I"}, "k": {"events.kind:T"}}
    assert st.warnings == ()


# -- expression texts a person recognizes, and every target column named ------------------------------------

def test_no_expression_text_of_the_corpus_names_an_internal_class(corpus_plans):
    found = {case.name: internal_texts(corpus_plans.lineage(case)) for case in CASES}
    assert {name: texts for name, texts in found.items() if texts} == {}


@pytest.fixture(scope="module")
def nested(corpus):
    corpus.sql("USE corpus")
    corpus.sql("CREATE TABLE IF NOT EXISTS nested (id BIGINT, info STRUCT<city: STRING, zip: INT>, "
               "m MAP<STRING, INT>, tags ARRAY<STRING>) USING parquet")
    corpus.sql("DECLARE OR REPLACE VARIABLE bonus INT DEFAULT 5")
    return corpus


@pytest.mark.parametrize(("sql", "column", "source", "text"), [
    ("SELECT transform(tags, x -> upper(x)) AS t FROM nested", "t", "tags", "transform(nested.tags, x -> upper(x))"),
    ("SELECT filter(tags, t -> t <> 'a') AS f FROM nested", "f", "tags", "filter(nested.tags, t -> (NOT (t = 'a')))"),
    ("SELECT upper(info.city) AS c FROM nested", "c", "info.city", "upper(nested.info.city)"),
    ("SELECT tags[0] AS t0 FROM nested", "t0", "tags", "nested.tags[0]"),
    ("SELECT m['k'] AS v FROM nested", "v", "m", "nested.m['k']"),
    ("SELECT id + bonus AS b FROM nested", "b", "id", "(nested.id + bonus)"),
])
def test_expressions_read_as_the_sql_written(nested, analyze, sql, column, source, text):
    st = analyze(sql)
    [edge] = st.column_map[column]
    assert (edge.table, edge.field, edge.subtype, edge.expression) == (
        "spark_catalog.corpus.nested", source, "TRANSFORMATION", text)
    assert internal_texts(st) == [] and st.warnings == ()


def test_a_view_column_list_names_the_target_columns(corpus, analyze):
    corpus.sql("USE corpus")
    st = analyze("CREATE VIEW corpus.v_named (who, pay COMMENT 'yearly') AS SELECT name, salary * 12 FROM emp")
    assert st.target.table == "spark_catalog.corpus.v_named"
    assert [(c, [(i.field, i.subtype) for i in inputs]) for c, inputs in st.columns] == [
        ("who", [("name", "IDENTITY")]), ("pay", [("salary", "TRANSFORMATION")])]
    assert st.warnings == ()


# -- recursive CTEs and pipe syntax (Spark 4) -----------------------------------------------------------------

@pytest.mark.parametrize(("sql", "columns", "indirect_inputs"), [
    pytest.param("WITH RECURSIVE r(n) AS (SELECT age FROM emp UNION ALL SELECT n + 1 FROM r WHERE n < 100) "
                 "SELECT n FROM r", {"n": {"emp.age:I", "emp.age:T"}}, {"emp.age:FILTER"}, id="counter"),
    pytest.param("WITH RECURSIVE chain(id, top) AS (SELECT id, name FROM emp WHERE mgr_id IS NULL UNION ALL "
                 "SELECT e.id, c.top FROM emp e JOIN chain c ON e.mgr_id = c.id) SELECT id, top FROM chain",
                 {"id": {"emp.id:I"}, "top": {"emp.name:I"}},
                 {"emp.mgr_id:FILTER", "emp.mgr_id:JOIN", "emp.id:JOIN"}, id="hierarchy"),
    pytest.param("WITH RECURSIVE r(a, b) AS (SELECT name, dept FROM emp UNION ALL SELECT b, a FROM r WHERE a > 'm') "
                 "SELECT a, b FROM r", {"a": {"emp.name:I", "emp.dept:I"}, "b": {"emp.name:I", "emp.dept:I"}},
                 {"emp.name:FILTER", "emp.dept:FILTER"}, id="columns-that-swap-each-round"),
    pytest.param("FROM emp |> WHERE salary > 100 |> SELECT name, dept", {"name": {"emp.name:I"}, "dept": {"emp.dept:I"}},
                 {"emp.salary:FILTER"}, id="pipe-syntax"),
])
def test_spark4_recursive_ctes_and_pipes(corpus, analyze, sql, columns, indirect_inputs):
    corpus.sql("USE corpus")
    st = analyze(sql)
    assert direct(st) == columns
    assert indirect(st) == indirect_inputs
    assert st.warnings == () and st.confidence == 1.0
