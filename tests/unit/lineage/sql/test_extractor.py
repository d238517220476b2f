"""lineage/sql/extractor.py: static field lineage from SQL text alone (no JVM)."""

from __future__ import annotations

import json

import pytest

from airflow_lineage_provider.lineage.model import (
    AGGREGATION,
    DIRECT,
    INDIRECT,
    JOIN,
    TRANSFORMATION,
    ColumnInput,
    LineageReport,
)
from airflow_lineage_provider.lineage.schema_cache import SchemaCache
from airflow_lineage_provider.lineage.sql import SqlExtractor, extract_script
from tests.helpers import SEED_DDL, SEED_JOIN, SEED_SINGLE, seed_join_edges, seed_single_edges

ODS = "spark_catalog.default.ods_users"
DIM = "spark_catalog.default.dim_company"
DWD = "spark_catalog.default.dwd_users"
SEED_SINGLE_EDGES = seed_single_edges("default")
SEED_JOIN_EDGES = seed_join_edges("default")

def edges(st) -> dict[str, set[tuple[str, str, str, str]]]:
    out = {}
    for column, inputs in st.columns:
        assert all(i.type == DIRECT for i in inputs)
        out[column] = {(i.table, i.field, i.subtype, i.expression) for i in inputs}
    return out


def short(st) -> dict[str, set[str]]:
    return {c: {f"{i.table.rsplit('.', 1)[-1]}.{i.field}:{i.subtype[0]}" for i in inputs} for c, inputs in st.columns}


def indirect(st) -> set[str]:
    return {f"{i.table.rsplit('.', 1)[-1]}.{i.field}:{i.subtype}" for i in st.indirect}


def last(script: str, **kwargs):
    return extract_script(script, **kwargs).statements[-1]


# -- the seed statements -------------------------------------------------------------------------


def test_seed_statements_give_the_seed_lineage_with_method_sql():
    report = extract_script(SEED_DDL + SEED_SINGLE + ";\n" + SEED_JOIN + ";")
    single, join = report.statements
    assert (single.index, join.index) == (3, 4)
    for st, expected in ((single, SEED_SINGLE_EDGES), (join, SEED_JOIN_EDGES)):
        assert st.method == "sql" and st.confidence == 1.0 and st.warnings == ()
        assert [c for c, _ in st.columns] == ["id", "name", "company_name", "birthday", "ts", "p"]
        assert edges(st) == expected
        assert st.target.table == DWD and st.target.mode == "append"
    assert single.indirect == ()
    assert join.indirect == (ColumnInput(DIM, "user_id", INDIRECT, JOIN, "", False),
                             ColumnInput(ODS, "id", INDIRECT, JOIN, "", False))
    assert [d.table for d in join.inputs] == [DIM, ODS]
    assert [i.table for i in join.column_map["name"]] == [DIM, ODS]
    doc = report.to_dict()
    assert LineageReport.from_dict(json.loads(json.dumps(doc))) == report


# -- schema tracking -----------------------------------------------------------------------------


def test_drop_forgets_a_table_and_create_brings_it_back():
    x = SqlExtractor()
    x.run("CREATE TABLE t (a INT, b STRING) USING parquet; DROP TABLE t")
    [st] = x.statement("SELECT * FROM t")
    assert st.columns == () and st.confidence < 1 and any("*" in w for w in st.warnings)
    x.run("CREATE TABLE t (c INT) USING parquet")
    [st] = x.statement("SELECT * FROM t")
    assert short(st) == {"c": {"t.c:I"}} and st.warnings == ()


def test_drop_hides_a_table_of_the_schema_parameter():
    st = last("DROP TABLE IF EXISTS t; SELECT * FROM t", schema={"t": {"a": "int"}})
    assert st.columns == () and st.confidence < 1


def test_alter_table_add_columns_extends_the_star():
    st = last("CREATE TABLE t (a INT) USING parquet; ALTER TABLE t ADD COLUMNS (b STRING, c INT); SELECT * FROM t")
    assert list(short(st)) == ["a", "b", "c"] and st.warnings == ()


def test_alter_table_add_columns_keeps_partitions_last():
    st = last("CREATE TABLE t (a INT, p STRING) USING parquet PARTITIONED BY (p);"
              "ALTER TABLE t ADD COLUMNS (b INT); INSERT INTO t SELECT 1, 2, 'x'")
    assert [c for c, _ in st.columns] == ["a", "b", "p"]


def test_use_changes_the_database_of_later_names():
    st = last("CREATE DATABASE d; USE d; CREATE TABLE t (a INT) USING parquet; SELECT a FROM t")
    assert st.columns[0][1][0].table == "spark_catalog.d.t"


def test_schema_parameter_and_ddl_files_and_cache(tmp_path):
    assert short(last("SELECT * FROM db.t", schema={"db.t": {"x": "int", "y": "string"}})) == {
        "x": {"t.x:I"}, "y": {"t.y:I"}}
    assert short(last("SELECT * FROM db.t", schema={"db.t": ["x"]})) == {"x": {"t.x:I"}}
    assert short(last("SELECT * FROM u", ddl=["CREATE TABLE u (k INT) USING parquet"])) == {"k": {"u.k:I"}}
    path = tmp_path / "schema.json"
    cache = SchemaCache(path)
    cache.put("spark_catalog.default.c", [("z", "int")])
    cache.save()
    assert short(last("SELECT * FROM c", cache=SchemaCache(path))) == {"z": {"c.z:I"}}


def test_script_ddl_wins_over_the_parameter_and_the_parameter_over_the_cache(tmp_path):
    cache = SchemaCache(tmp_path / "s.json")
    cache.put("spark_catalog.default.t", ["from_cache"])
    assert list(short(last("SELECT * FROM t", schema={"t": ["from_param"]}, cache=cache))) == ["from_param"]
    assert list(short(last("CREATE TABLE t (from_ddl INT) USING parquet; SELECT * FROM t",
                           schema={"t": ["from_param"]}, cache=cache))) == ["from_ddl"]


def test_views_defined_earlier_resolve_to_their_tables():
    script = ("CREATE TABLE emp (id BIGINT, name STRING, dept STRING) USING parquet;"
              "CREATE TEMP VIEW tv AS SELECT id, upper(name) AS uname FROM emp WHERE dept = 'x';"
              "SELECT uname FROM tv")
    report = extract_script(script)
    [st] = report.statements  # a temporary view is not a dataset
    assert short(st) == {"uname": {"emp.name:T"}}
    assert indirect(st) == {"emp.dept:FILTER"}


def test_persistent_view_is_a_write_with_its_own_columns():
    st = last("CREATE TABLE emp (id BIGINT, name STRING) USING parquet; CREATE OR REPLACE VIEW v (a, b) AS "
              "SELECT id, name FROM emp")
    assert st.target.table == "spark_catalog.default.v" and st.target.mode == "overwrite"
    assert short(st) == {"a": {"emp.id:I"}, "b": {"emp.name:I"}}


# -- stars, ambiguity, no schema --------------------------------------------------------------------


def test_star_and_qualified_star_expand_from_the_schema():
    ddl = "CREATE TABLE a (x INT, y INT) USING parquet; CREATE TABLE b (z INT) USING parquet;"
    assert short(last(ddl + "SELECT * FROM a JOIN b ON a.x = b.z")) == {
        "x": {"a.x:I"}, "y": {"a.y:I"}, "z": {"b.z:I"}}
    assert short(last(ddl + "SELECT b.*, a.y FROM a JOIN b ON a.x = b.z")) == {"z": {"b.z:I"}, "y": {"a.y:I"}}


def test_without_schema_the_star_is_not_invented_and_the_result_says_so():
    st = last("SELECT * FROM unknown_t")
    assert st.columns == ()
    assert st.confidence < 1
    assert any("no schema" in w and "unknown_t" in w for w in st.warnings)


def test_without_schema_named_columns_still_resolve_with_lower_confidence():
    st = last("SELECT name, upper(city) AS c FROM people")
    assert short(st) == {"name": {"people.name:I"}, "c": {"people.city:T"}}
    assert 0 < st.confidence < 1 and any("no schema" in w for w in st.warnings)


def test_an_unqualified_column_two_tables_could_own_is_ambiguous_without_schema():
    st = last("SELECT name, a.id FROM t1 a JOIN t2 b ON a.id = b.id")
    assert short(st) == {"name": set(), "id": {"t1.id:I"}}
    assert st.confidence < 1
    assert any("ambiguous" in w and "name" in w for w in st.warnings)


def test_the_schema_decides_which_table_owns_an_unqualified_column():
    st = last("CREATE TABLE t1 (id INT, name STRING) USING parquet; CREATE TABLE t2 (id INT, city STRING) USING parquet;"
              "SELECT name, city FROM t1 a JOIN t2 b ON a.id = b.id")
    assert short(st) == {"name": {"t1.name:I"}, "city": {"t2.city:I"}}
    assert st.warnings == () and st.confidence == 1.0


def test_one_unknown_table_among_known_ones_owns_what_the_others_lack():
    st = last("CREATE TABLE t1 (id INT) USING parquet; SELECT id, city FROM t1 JOIN t2 ON t1.id = t2.k")
    assert short(st) == {"id": {"t1.id:I"}, "city": {"t2.city:I"}}


# -- writes ---------------------------------------------------------------------------------------


def test_insert_with_a_column_list_maps_by_name_in_the_target_order():
    st = last("CREATE TABLE out2 (a STRING, b DOUBLE) USING parquet; CREATE TABLE emp (name STRING, salary DOUBLE) "
              "USING parquet; INSERT INTO out2 (b, a) SELECT salary, name FROM emp")
    assert [c for c, _ in st.columns] == ["a", "b"]
    assert short(st) == {"a": {"emp.name:I"}, "b": {"emp.salary:I"}}


def test_insert_column_list_without_target_schema_uses_the_list():
    st = last("INSERT OVERWRITE TABLE o (x, y) SELECT a, b FROM s")
    assert list(short(st)) == ["x", "y"] and st.target.mode == "overwrite"


def test_static_partition_has_no_source():
    st = last("CREATE TABLE s (id INT, name STRING) USING parquet;"
              "CREATE TABLE hp (id INT, name STRING) PARTITIONED BY (ds STRING) STORED AS PARQUET;"
              "INSERT OVERWRITE TABLE hp PARTITION (ds = '2024') SELECT id, name FROM s")
    assert short(st) == {"id": {"s.id:I"}, "name": {"s.name:I"}, "ds": set()}


def test_ctas_names_its_target_and_later_statements_read_it():
    x = SqlExtractor(database="corpus")
    report = x.run("CREATE TABLE emp (dept STRING, salary DOUBLE) USING parquet;"
                   "CREATE TABLE c1 USING parquet AS SELECT dept, avg(salary) AS a FROM emp GROUP BY dept;"
                   "SELECT * FROM corpus.c1")
    ctas, read = report.statements
    assert ctas.target.table == "spark_catalog.corpus.c1" and ctas.target.mode == "create"
    assert short(ctas) == {"dept": {"emp.dept:I"}, "a": {"emp.salary:A"}}
    assert indirect(ctas) == {"emp.dept:GROUP_BY"}
    assert short(read) == {"dept": {"c1.dept:I"}, "a": {"c1.a:I"}}


def test_insert_overwrite_directory_targets_the_path():
    st = last("CREATE TABLE s (id INT) USING parquet;"
              "INSERT OVERWRITE DIRECTORY '/tmp/out' USING parquet SELECT id FROM s")
    assert st.target.table is None and (st.target.namespace, st.target.name) == ("file", "/tmp/out")
    assert short(st) == {"id": {"s.id:I"}}


def test_a_path_read_keeps_its_case_and_ddl_names_keep_theirs():
    # Spark compares table and column names case-insensitively, but a path is a path: START's
    # static lineage must name it as the plan does, or the two events would not merge. Columns
    # declared in upper case are found whatever case the query uses, and keep the DDL's case.
    st = last("CREATE TABLE Dim (K INT, Label STRING) USING parquet;"
              "INSERT OVERWRITE DIRECTORY '/Out/Day' USING parquet "
              "SELECT d.label AS Label FROM parquet.`/Data/In` AS p JOIN DIM d ON d.k = p.k")
    assert [d.name for d in st.inputs] == ["/Data/In", "spark_catalog.default.dim"]
    assert st.target.name == "/Out/Day"
    assert short(st) == {"Label": {"dim.Label:I"}}
    assert {(i.table, i.field, i.subtype) for i in st.indirect} == {
        ("/Data/In", "k", JOIN), ("spark_catalog.default.dim", "K", JOIN)}


# -- transformation rules -----------------------------------------------------------------------------

EMP = ("CREATE TABLE emp (id BIGINT, name STRING, dept STRING, salary DOUBLE, tags ARRAY<STRING>, ts TIMESTAMP, "
       "mgr_id BIGINT, age INT) USING parquet; CREATE TABLE dept (dept STRING, dname STRING, region STRING) USING parquet;")


@pytest.mark.parametrize("sql, columns, ind", [
    ("SELECT CAST(age AS BIGINT) AS a, CAST(salary AS INT) AS s FROM emp", {"a": {"emp.age:I"}, "s": {"emp.salary:T"}},
     set()),
    ("SELECT md5(name) AS h, count(name) AS n FROM emp", None, set()),
    ("SELECT name, rank() OVER (PARTITION BY dept ORDER BY salary DESC) AS r FROM emp",
     {"name": {"emp.name:I"}, "r": set()}, {"emp.dept:WINDOW", "emp.salary:WINDOW"}),
    ("SELECT id, word FROM emp LATERAL VIEW explode(split(name, ' ')) t AS word",
     {"id": {"emp.id:I"}, "word": {"emp.name:T"}}, set()),
    ("WITH a AS (SELECT id, salary * 2 AS s2 FROM emp), b AS (SELECT id, s2 + 1 AS s3 FROM a) SELECT s3 FROM b",
     {"s3": {"emp.salary:T"}}, set()),
    ("SELECT name FROM emp UNION SELECT dname FROM dept", {"name": {"emp.name:I", "dept.dname:I"}}, set()),
    ("SELECT * FROM (SELECT dept, age, salary FROM emp) PIVOT (sum(salary) FOR dept IN ('a' AS a, 'b' AS b))",
     {"age": {"emp.age:I"}, "a": {"emp.salary:A"}, "b": {"emp.salary:A"}},
     {"emp.age:GROUP_BY", "emp.dept:GROUP_BY", "emp.dept:CONDITIONAL"}),
    ("SELECT * FROM dept UNPIVOT (val FOR col IN (dname, region))",
     {"dept": {"dept.dept:I"}, "col": set(), "val": {"dept.dname:I", "dept.region:I"}},
     {"dept.dname:FILTER", "dept.region:FILTER"}),
    ("SELECT name FROM emp e WHERE EXISTS (SELECT 1 FROM dept d WHERE d.dept = e.dept)", {"name": {"emp.name:I"}},
     {"dept.dept:FILTER", "emp.dept:FILTER"}),
    ("SELECT CASE WHEN age > 30 THEN name ELSE dept END AS c FROM emp", {"c": {"emp.name:T", "emp.dept:T"}},
     {"emp.age:CONDITIONAL"}),
    ("SELECT dept FROM emp FULL JOIN dept USING (dept)", {"dept": {"emp.dept:T", "dept.dept:T"}},
     {"emp.dept:JOIN", "dept.dept:JOIN"}),
])
def test_rules_match_the_plan_extractor(sql, columns, ind):
    st = last(EMP + sql)
    if columns is not None:
        assert short(st) == columns
    else:
        assert all(i.masking and i.subtype in (TRANSFORMATION, AGGREGATION) for _, inputs in st.columns for i in inputs)
    assert indirect(st) == ind
    assert st.warnings == ()


def test_unnamed_columns_get_spark_names():
    st = last(EMP + "SELECT sum(salary), salary * 2, substr(name, 1, 2), count(*) FROM emp GROUP BY salary, name")
    assert [c for c, _ in st.columns] == ["sum(salary)", "(salary * 2)", "substr(name, 1, 2)", "count(1)"]


def test_a_syntax_error_is_method_none_not_an_exception():
    [st] = extract_script("SELEC broken FROM").statements
    assert st.method == "none" and st.warnings


def test_one_pass_per_statement_scales_to_wide_queries():
    cols = ", ".join(f"c{i}" for i in range(200))
    ddl = f"CREATE TABLE w ({', '.join(f'c{i} BIGINT' for i in range(200))}) USING parquet;"
    ctes = ", ".join([f"t0 AS (SELECT {cols} FROM w)"] + [
        f"t{k} AS (SELECT {', '.join(f'c{i} + {k} AS c{i}' for i in range(200))} FROM t{k - 1})" for k in range(1, 5)])
    st = last(ddl + f"WITH {ctes} SELECT * FROM t4")
    assert len(st.columns) == 200 and all(len(inputs) == 1 for _, inputs in st.columns)
    assert st.column_map["c7"][0].subtype == TRANSFORMATION and st.column_map["c7"][0].field == "c7"


# -- the command line without a JVM --------------------------------------------------------------------


def test_cli_method_sql_needs_no_spark(tmp_path, capsys):
    from airflow_lineage_provider import cli

    ddl = tmp_path / "ddl.sql"
    ddl.write_text(SEED_DDL)
    script = tmp_path / "job.sql"
    script.write_text(SEED_JOIN + ";")
    assert cli.main(["extract", "--method", "sql", "--sql", str(script), "--ddl", str(ddl), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    [st] = doc["statements"]
    assert st["method"] == "sql" and st["target"]["table"] == DWD
    assert {(i["table"], i["field"]) for i in st["columns"]["name"]} == {(ODS, "name"), (DIM, "company_name")}


def test_cli_schema_json_and_auto_falls_back_to_sql_without_spark(tmp_path, capsys, monkeypatch):
    from airflow_lineage_provider import cli

    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"db.t": {"a": "int", "b": "string"}}))
    monkeypatch.setattr(cli, "_spark_available", lambda: False)
    assert cli.main(["extract", "--method", "auto", "-e", "SELECT * FROM db.t", "--schema", str(schema),
                     "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert "static lineage" in captured.err
    assert list(json.loads(captured.out)["statements"][0]["columns"]) == ["a", "b"]


def test_a_cte_reads_no_column_of_the_query_around_it_a_correlated_subquery_does() -> None:
    x = SqlExtractor()
    x.run("CREATE TABLE emp (id BIGINT, name STRING, dept STRING); CREATE TABLE dept (dept STRING, dname STRING)")
    # `name` is no column of dept: the CTE's output `name` must not be taken for itself through the outer query.
    [st] = x.statement("WITH a AS (SELECT name FROM dept) SELECT a.name FROM a")
    assert st.warnings == ("column name is not in any relation of its query",) and st.confidence < 1
    [st] = x.statement("SELECT name FROM emp e "
                       "WHERE EXISTS (SELECT 1 FROM dept d WHERE d.dept = e.dept AND dname = name)")
    assert not st.warnings
    assert {(i.table.rsplit(".", 1)[-1], i.field, i.subtype) for i in st.indirect} == {
        ("dept", "dept", "FILTER"), ("dept", "dname", "FILTER"), ("emp", "dept", "FILTER"), ("emp", "name", "FILTER")}


def test_a_scripting_block_is_named_not_parsed():
    from airflow_lineage_provider.lineage.sql import SqlExtractor

    report = SqlExtractor().run("CREATE TABLE a (x INT) USING parquet;\nlbl: BEGIN INSERT INTO a VALUES (1); END;\n")
    [block] = report.statements
    assert block.index == 1 and block.method == "none"
    assert block.warnings[0].startswith("statement 2 of 2 (line 2 of the script): a SQL scripting block (BEGIN ... END) "
                                        "is not read by the static extractor")


def test_execute_immediate_of_a_literal_is_the_statement_it_runs_and_of_a_variable_says_so():
    from airflow_lineage_provider.lineage.sql import SqlExtractor

    x = SqlExtractor()
    x.run("CREATE TABLE s (a INT, b STRING) USING parquet; CREATE TABLE t (a INT, b STRING) USING parquet;")
    [st] = x.statement("EXECUTE IMMEDIATE 'INSERT INTO t SELECT a + ?, b FROM s WHERE b = :who' USING 1, 'x' AS who", 2)
    assert st.target.table == "spark_catalog.default.t" and st.sql.startswith("EXECUTE IMMEDIATE")
    assert {c: {(i.field, i.subtype) for i in inputs} for c, inputs in st.columns} == {
        "a": {("a", "TRANSFORMATION")}, "b": {("b", "IDENTITY")}}
    [var] = x.statement("EXECUTE IMMEDIATE stmt_text", 3)
    assert var.method == "none" and "its statement is known only when it runs" in var.warnings[0]


def test_a_syntax_error_names_the_statement_and_the_line_of_the_script():
    from airflow_lineage_provider.lineage.sql import SqlExtractor

    report = SqlExtractor().run("CREATE TABLE a (x INT) USING parquet;\n\nINSERT INTO a\n  SELEC x FROM a;\nSELECT 1;\n")
    bad = report.statements[0]
    assert bad.method == "none" and bad.target is None
    assert bad.warnings[0].startswith("statement 2 of 3 (line 4 of the script): the SQL could not be parsed")
    # sqlglot's tokens read as the text the user typed, its line as the script's.
    report = SqlExtractor().run("CREATE TABLE a (x INT) USING parquet;\nINSERT INTO a\nSELECT FROM WHERE;\n")
    assert report.statements[0].warnings == (
        "statement 2 of 2 (line 3 of the script): the SQL could not be parsed: "
        "Expected table name but got 'WHERE' (column 17 of line 3)",)


def test_inline_of_an_array_of_structs_column_makes_one_column_per_field():
    """``inline(items)`` of an ``ARRAY<STRUCT<..>>`` column: the struct's fields, from the column's type
    (both DDL spellings of a field), by qualifier or by the one table that has the column."""
    ddl = ("CREATE TABLE b1 (id INT, items ARRAY<STRUCT<sku: STRING, qty: INT>>) USING parquet;\n"
           "CREATE TABLE b2 (id INT, lines ARRAY<STRUCT<sku STRING, qty INT>>) USING parquet;\n")
    st = last(ddl + "SELECT x.id, inline(x.items) FROM b1 x")
    assert short(st) == {"id": {"b1.id:I"}, "sku": {"b1.items:T"}, "qty": {"b1.items:T"}}
    st = last(ddl + "SELECT inline_outer(lines) FROM b1 JOIN b2 ON b1.id = b2.id")
    assert short(st) == {"sku": {"b2.lines:T"}, "qty": {"b2.lines:T"}}
    # A column of another type (or one no schema knows) is left as Spark would fail or name it.
    st = last("CREATE TABLE b3 (id INT, tags ARRAY<STRING>) USING parquet;\nSELECT inline(tags) FROM b3")
    assert [c for c, _ in st.columns] == ["inline(tags)"]


DEEP = ("CREATE TABLE deep (a INT) USING parquet;\nCREATE TABLE deep_out (a INT) USING parquet;\n"
        "INSERT INTO deep_out SELECT " + "(a + " * 1000 + "a" + ")" * 1000 + " FROM deep;\n")


def test_a_statement_nested_too_deep_is_one_warning_line_counted_from_1(caplog):
    """1000 nested parentheses exceed Python's recursion limit in sqlglot: the statement has no lineage and
    says why, in one log line numbered as Spark numbers it; the traceback is at debug level only."""
    with caplog.at_level("DEBUG", logger="airflow_lineage_provider.lineage.sql.extractor"):
        report = extract_script(DEEP)
    [statement] = report.statements
    assert statement.method == "none" and statement.index == 2
    assert statement.warnings == ("statement 3 of 3 (line 3 of the script): static extraction failed: the statement "
                                  "is nested too deep for the static extractor (RecursionError: maximum recursion "
                                  "depth exceeded)",)
    warned = [r for r in caplog.records if r.levelname == "WARNING"]
    assert [r.getMessage() for r in warned] == [
        "static lineage of statement 3: static extraction failed: the statement is nested too deep for the static "
        "extractor (RecursionError: maximum recursion depth exceeded)"]
    assert warned[0].exc_info is None
    assert any(r.levelname == "DEBUG" and r.exc_info for r in caplog.records)


# -- issue 27: multi-insert, SQL table functions, fields of structs made in place, scalar subquery names ----------

MI_DDL = ("CREATE TABLE src (id INT, name STRING, age INT) USING parquet;\n"
          "CREATE TABLE t1 (a STRING, b INT) USING parquet;\nCREATE TABLE t2 (id INT) USING parquet;\n")


def test_a_multi_insert_is_one_write_per_insert_of_one_statement():
    report = extract_script(MI_DDL + "WITH w AS (SELECT * FROM src WHERE age > 1) FROM w s "
                            "INSERT OVERWRITE TABLE t1 SELECT s.name, s.age WHERE s.id > 0 INSERT INTO t2 SELECT id;")
    first, second = report.statements
    assert first.index == second.index == 3
    assert (first.target.table, first.target.mode, second.target.table) == (
        "spark_catalog.default.t1", "overwrite", "spark_catalog.default.t2")
    assert short(first) == {"a": {"src.name:I"}, "b": {"src.age:I"}}
    assert indirect(first) == {"src.age:FILTER", "src.id:FILTER"}
    assert short(second) == {"id": {"src.id:I"}} and indirect(second) == {"src.age:FILTER"}


TF = ("CREATE TABLE src (id INT, name STRING, age INT) USING parquet;\n"
      "CREATE FUNCTION tf(lo INT, hi INT DEFAULT 99) RETURNS TABLE (k INT, n STRING) "
      "RETURN SELECT id, upper(name) FROM src WHERE age BETWEEN lo AND hi;\n")


def test_a_sql_table_function_is_its_body_with_its_parameters_bound():
    st = last(TF + "SELECT n, k FROM tf(hi => 5, lo => 1)")
    assert short(st) == {"n": {"src.name:T"}, "k": {"src.id:I"}} and indirect(st) == {"src.age:FILTER"}
    st = last(TF + "SELECT t.* FROM tf(1) AS t")  # the default of ``hi``; the columns the function returns
    assert short(st) == {"k": {"src.id:I"}, "n": {"src.name:T"}} and st.warnings == ()
    st = last(TF + "DROP FUNCTION tf;\nSELECT n FROM tf(1)")  # dropped: no longer read as its body
    assert short(st) == {"n": set()}


def test_a_field_of_a_struct_made_in_place_is_that_field_alone():
    ddl = "CREATE TABLE s1 (id INT, name STRING, info STRUCT<city: STRING, zip: STRING>) USING parquet;\n"
    st = last(ddl + "SELECT struct(info AS s, name).s.zip AS z, STRUCT(*).name AS n, struct(id, name).name AS m FROM s1")
    assert short(st) == {"z": {"s1.info.zip:I"}, "n": {"s1.name:I"}, "m": {"s1.name:I"}}
    st = last(ddl + "SELECT struct(id, name).nope AS x FROM s1")  # a field it does not make: left as written
    assert short(st) == {"x": {"s1.id:T", "s1.name:T"}}


def test_an_unaliased_scalar_subquery_is_named_by_the_outer_columns_it_reads():
    ddl = "CREATE TABLE e (id INT, dept STRING, salary DOUBLE) USING parquet;\nCREATE TABLE d (dept STRING) USING parquet;\n"
    st = last(ddl + "SELECT (SELECT max(d.dept) FROM d WHERE d.dept = e.dept AND e.salary > 0), "
                    "((SELECT salary)), (SELECT max(dept) FROM d) FROM e")
    assert [c for c, _ in st.columns] == ["scalarsubquery(dept, salary)", "scalarsubquery(salary)", "scalarsubquery()"]


def test_a_multi_inserts_directory_is_a_path_write():
    """sqlglot reads no ``INSERT OVERWRITE DIRECTORY 'p' USING ..`` inside a multi-insert: read as a path write."""
    first, second = extract_script(MI_DDL + "FROM src INSERT OVERWRITE DIRECTORY '/tmp/out' USING parquet "
                                   "OPTIONS ('compression' = 'snappy') SELECT name INSERT INTO t2 SELECT id").statements
    assert (first.target.name, first.target.table, first.target.mode) == ("/tmp/out", None, "overwrite")
    assert short(first) == {"name": {"src.name:I"}} and short(second) == {"id": {"src.id:I"}}


# -- issue 27: SQL written elsewhere -------------------------------------------------------------------

SHOP = ("CREATE TABLE o (id INT, cust STRING, amount DOUBLE, qty INT, jan INT, feb INT) USING parquet;\n"
        "CREATE TABLE c (cid STRING, region STRING) USING parquet;\n"
        "CREATE TABLE t (a STRING, b DOUBLE, c STRING) USING parquet;\n")


@pytest.mark.parametrize("sql", [
    "CREATE TABLE p USING parquet AS (SELECT cust AS a, amount AS b, cust AS c FROM o)",
    "INSERT INTO t (SELECT cust, amount, cust FROM o)",
    "INSERT INTO t ((WITH w AS (SELECT cust, amount FROM o) SELECT cust, amount, cust FROM w))",
    "CREATE VIEW v (a, b, c) AS (SELECT cust, amount, cust FROM o)",
    "INSERT INTO t ((SELECT cust, amount, cust FROM o) UNION ALL (SELECT cust, amount, cust FROM o)) LIMIT 3",
])
def test_a_query_in_parentheses_is_the_query(sql):
    st = last(SHOP + sql)
    assert short(st) == {"a": {"o.cust:I"}, "b": {"o.amount:I"}, "c": {"o.cust:I"}}
    assert st.warnings == () and st.confidence == 1.0


def test_an_order_by_after_a_parenthesized_query_is_kept():
    st = last(SHOP + "CREATE TABLE p USING parquet AS (SELECT id FROM o ORDER BY qty LIMIT 2) ORDER BY id LIMIT 1")
    assert short(st) == {"id": {"o.id:I"}} and indirect(st) == {"o.qty:SORT", "o.id:SORT"}


def test_empty_string_literals_in_unaliased_columns_are_named_as_spark_names_them():
    st = last(SHOP + "SELECT concat(cust, ''), coalesce(cust, ''), cust || '' FROM o")
    # Spark names the first and the third alike; the document tells the repeat apart.
    assert [c for c, _ in st.columns] == ["concat(cust, )", "coalesce(cust, )", "concat(cust, ) (2)"]
    assert st.warnings == ()


def test_parentheses_are_no_part_of_a_spark_name():
    st = last(SHOP + "SELECT o.id, (amount + qty), ((amount + qty) * 2), upper((cust)), ((qty)) FROM o")
    assert [c for c, _ in st.columns] == ["id", "(amount + qty)", "((amount + qty) * 2)", "upper(cust)", "qty"]


def test_a_cte_under_unpivot_or_pivot_is_the_cte():
    st = last(SHOP + "WITH s AS (SELECT id, jan, feb FROM o) SELECT id, m, val FROM s UNPIVOT (val FOR m IN (jan, feb))")
    assert short(st) == {"id": {"o.id:I"}, "m": set(), "val": {"o.jan:I", "o.feb:I"}} and st.warnings == ()
    st = last(SHOP + "WITH s AS (SELECT cust, qty FROM o) SELECT * FROM s PIVOT (sum(qty) FOR cust IN ('x' AS x))")
    assert short(st) == {"x": {"o.qty:A"}} and st.warnings == ()


@pytest.mark.parametrize("joined", [
    "((o AS x JOIN c AS y ON x.cust = y.cid))",
    "(o x JOIN c y ON x.cust = y.cid)",
    "o x JOIN ((c y)) ON x.cust = y.cid",
    "(((o x) JOIN c y ON x.cust = y.cid))",
    "(SELECT * FROM o) x JOIN (c y JOIN t ON y.cid = t.a) ON x.cust = y.cid",
])
def test_a_join_in_parentheses_joins_what_it_names(joined):
    st = last(SHOP + f"SELECT x.id, y.region FROM {joined}")
    assert short(st) == {"id": {"o.id:I"}, "region": {"c.region:I"}} and st.warnings == ()
    assert {"o.cust:JOIN", "c.cid:JOIN"} <= indirect(st)


def test_identifier_of_a_session_variable_names_what_its_value_names():
    st = last(SHOP + "DECLARE VARIABLE n STRING DEFAULT 'o';\nSET VAR n = 'default.' || 'c';\n"
              "DECLARE OR REPLACE m = 'c';\nCREATE TABLE p USING parquet AS SELECT id, cust FROM IDENTIFIER(n)")
    assert short(st) == {"id": set(), "cust": set()} and st.warnings  # n has no literal value any more: said
    assert any("IDENTIFIER(n)" in w for w in st.warnings) and st.confidence < 1
    st = last(SHOP + "DECLARE VARIABLE n STRING DEFAULT 'o';\nCREATE TABLE p USING parquet AS SELECT id, cust FROM "
              "IDENTIFIER(n)")
    assert short(st) == {"id": {"o.id:I"}, "cust": {"o.cust:I"}} and st.warnings == ()
    st = last(SHOP + "DECLARE m = 'c';\nSELECT region FROM IDENTIFIER('default.' || session.m)")
    assert short(st) == {"region": {"c.region:I"}} and st.warnings == ()


def test_merge_not_matched_values_read_the_source_and_not_matched_by_source_the_target():
    ddl = ("CREATE TABLE stock (sku STRING, qty INT, seen BIGINT) USING parquet;\n"
           "CREATE TABLE delta_in (sku STRING, qty INT, ts BIGINT) USING parquet;\n")
    st = last(ddl + "MERGE INTO stock s USING delta_in d ON s.sku = d.sku WHEN MATCHED THEN UPDATE SET s.qty = d.qty "
                    "WHEN NOT MATCHED AND qty > 0 THEN INSERT (sku, qty, seen) VALUES (sku, qty, ts) "
                    "WHEN NOT MATCHED BY SOURCE AND seen < 5 THEN UPDATE SET qty = qty + 1")
    assert short(st) == {"sku": {"stock.sku:I", "delta_in.sku:I"}, "qty": {"delta_in.qty:I", "stock.qty:T"},
                         "seen": {"stock.seen:I", "delta_in.ts:I"}}
    assert {"delta_in.qty:CONDITIONAL", "stock.seen:CONDITIONAL"} <= indirect(st)
    assert st.warnings == ()


def test_a_write_with_no_column_is_never_silent():
    st = last(SHOP + "CREATE TABLE p USING parquet AS SELECT * FROM nowhere")
    assert st.columns == () and st.confidence < 1
    assert "the static extractor found no column this write writes" in st.warnings
    st = last(SHOP + "INSERT INTO t (a, b, c) SELECT cust, amount FROM o")
    assert st.confidence < 1 and any("the column list names 3" in w for w in st.warnings)


def test_an_exception_inside_the_extractor_is_the_columns_warning_naming_what_it_could_not_read(monkeypatch):
    from airflow_lineage_provider.lineage.sql import scope

    real = scope.collect_refs

    def failing(node, *args):
        if "boom" in node.sql().lower():
            raise ValueError("cannot read this")
        return real(node, *args)

    monkeypatch.setattr(scope, "collect_refs", failing)
    st = last(SHOP + "INSERT INTO t SELECT cust, amount, boom(cust) FROM o")
    assert short(st) == {"a": {"o.cust:I"}, "b": {"o.amount:I"}, "c": set()}
    assert st.method == "sql" and st.confidence < 1
    assert st.warnings == ("column boom(cust): the static extractor could not read `boom(o.cust)` (ValueError: "
                           "cannot read this)",)


@pytest.mark.parametrize("sql, names", [
    ("SELECT * FROM g, LATERAL explode(tags)", ["id", "tags", "props", "col"]),
    ("SELECT * FROM g, LATERAL explode(props)", ["id", "tags", "props", "key", "value"]),
    ("SELECT * FROM g LATERAL VIEW posexplode(tags) t", ["id", "tags", "props", "pos", "col"]),
    ("SELECT * FROM range(3)", ["id"]),
    ("SELECT * FROM stack(2, 'a', 1, 'b', 2)", ["col0", "col1"]),
    ("SELECT * FROM g, LATERAL json_tuple('{}', 'a', 'b')", ["id", "tags", "props", "c0", "c1"]),
])
def test_a_star_over_a_generator_expands_to_the_columns_spark_names(sql, names):
    st = last("CREATE TABLE g (id INT, tags ARRAY<STRING>, props MAP<STRING, INT>) USING parquet;\n" + sql)
    assert [c for c, _ in st.columns] == names and st.warnings == ()


def test_create_as_values_is_a_write_whose_columns_later_statements_read():
    report = extract_script("CREATE TABLE v1 USING parquet AS VALUES (1, 'a') AS v(k, w);\n"
                            "CREATE VIEW v2 AS (VALUES (1, 2));\nSELECT * FROM v1 JOIN v2 ON v1.k = v2.col1")
    ctas, view, query = report.statements
    assert [c for c, _ in ctas.columns] == ["k", "w"] and ctas.target.table == "spark_catalog.default.v1"
    assert [c for c, _ in view.columns] == ["col1", "col2"] and view.warnings == ()
    assert [c for c, _ in query.columns] == ["k", "w", "col1", "col2"] and query.warnings == ()


def test_a_star_as_a_function_argument_passes_every_column_of_the_from_clause():
    ddl = "CREATE TABLE e (id INT, n STRING) USING parquet;\nCREATE TABLE d (k INT, v STRING) USING parquet;\n"
    st = last(ddl + "SELECT struct(*), concat_ws(',', e.*), count(*) FROM e JOIN d ON e.id = d.k")
    assert short(st) == {"struct(id, n, k, v)": {"e.id:T", "e.n:T", "d.k:T", "d.v:T"},
                         "concat_ws(,, id, n)": {"e.id:T", "e.n:T"}, "count(1)": set()} and st.warnings == ()
    st = last(ddl + "SELECT hash(*) FROM nowhere")
    assert st.confidence < 1 and any(w.startswith("hash(*): the star is not expanded") for w in st.warnings)


def test_a_column_alias_list_renames_a_relations_columns_in_order():
    ddl = "CREATE TABLE d (k INT, v STRING) USING parquet;\n"
    st = last(ddl + "SELECT x.a, b FROM d AS x(a, b)")
    assert short(st) == {"a": {"d.k:I"}, "b": {"d.v:I"}} and st.warnings == ()
    st = last(ddl + "SELECT s.p FROM d, LATERAL (SELECT k + 1, v) s(p, q)")
    assert short(st) == {"p": {"d.k:T"}} and st.warnings == ()


def test_a_struct_star_with_except_leaves_those_fields_out():
    st = last("CREATE TABLE c (id INT, info STRUCT<city: STRING, zip: STRING, geo: STRUCT<lat: DOUBLE>>) USING parquet;\n"
              "SELECT x.info.* EXCEPT (zip) FROM c x")
    assert short(st) == {"city": {"c.info.city:I"}, "geo": {"c.info.geo:I"}} and st.warnings == ()


@pytest.mark.parametrize(("text", "may_hold"), [
    ("select x.a from dept as x(a, b)", True),
    ("select * from dept x(a,b) join emp as y ( i , n ) on x.a = y.i", True),
    ("select * from emp e, dept d(k, n)", True),  # a comma join
    ("select s from (select name from emp) as q(s)", True),  # a derived table
    ("select e.n, s.p from emp e, lateral (select e.salary) s(p)", True),
    ("select sum(a) over (partition by b) from t", False),
    ("select a, sum(b), count(c) from t group by a", False),  # function calls after commas
    ("select a from t where a in (b, c)", False),
    ("select a from t join u using (k)", False),
    ("select count(x) filter (where y) from t", False),
])
def test_the_alias_list_gate_opens_for_every_list_of_column_aliases(text, may_hold):
    from airflow_lineage_provider.lineage.sql.extractor import _alias_list

    assert _alias_list(text) is may_hold


CASED = ("CREATE TABLE up (ID INT, Name STRING, amount DOUBLE) USING parquet;"
         "CREATE TABLE low (id INT, name STRING, Region STRING) USING parquet;"
         "CREATE TABLE plain (k INT, v STRING) USING parquet;")


@pytest.mark.parametrize("sql", [
    "SELECT * FROM up",  # the table's own case
    "SELECT * FROM up JOIN low ON up.ID = low.id",  # two spellings of id and name: the first table's kept
    "SELECT * FROM low JOIN up ON up.ID = low.id",
    "SELECT * FROM (SELECT id, name AS NAME, region FROM low) s",  # an alias as written wins over the table
    "WITH c AS (SELECT `ID`, amount FROM up) SELECT * FROM c",
    "SELECT * FROM plain UNION ALL SELECT id, name FROM low",  # names the catalog spells as the query does
    "SELECT * FROM (SELECT * FROM (SELECT up.*, low.Region FROM up JOIN low USING (id)) t) u",
    "SELECT s.* FROM plain p JOIN (SELECT ID AS k2, amount FROM up) s ON p.k = s.k2",
])
def test_a_star_s_case_told_without_walking_the_tables_is_the_walk_s(sql, monkeypatch):
    # ``_recased`` skips the walk of the query's tables where no table can spell an output column otherwise: the
    # names must be those the walk gives.
    from airflow_lineage_provider.lineage.sql import extractor

    fast = last(CASED + sql)
    monkeypatch.setattr(extractor, "_recased", lambda columns, names, spellings: True)
    slow = last(CASED + sql)
    assert fast.to_dict() == slow.to_dict()
