"""`airflow-lineage extract` as a user runs it: a real spark-submit on the embedded Spark."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.conftest import venv_bin
from tests.helpers import SEED_DDL, SEED_JOIN

pytestmark = pytest.mark.spark

def extract(tmp_path, script: str, *args: str) -> subprocess.CompletedProcess:
    sql = tmp_path / "script.sql"
    sql.write_text(script)
    return subprocess.run([venv_bin("airflow-lineage"), "extract", "--sql", str(sql), *args],
                          capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_dry_run_json_follows_the_document_format_and_writes_nothing(tmp_path):
    out_dir = tmp_path / "out_dir"
    script = SEED_DDL + SEED_JOIN + ";\n" + f"INSERT OVERWRITE DIRECTORY '{out_dir}' USING parquet SELECT id FROM ods_users;"
    proc = extract(tmp_path, script, "--dry-run", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["format"] == "airflow-lineage/1"
    first, second = doc["statements"]
    assert set(first) == {"index", "sql", "method", "confidence", "target", "inputs", "columns", "indirect", "warnings",
                          "agreement"}
    assert first["agreement"] == {"static": "same", "only_plan": [], "only_static": []}
    assert first["index"] == 3 and first["sql"] == SEED_JOIN and first["method"] == "plan"
    assert first["target"]["table"] == "spark_catalog.default.dwd_users"
    assert set(first["target"]) >= {"table", "namespace", "name"}
    name_inputs = first["columns"]["name"]
    assert {(i["table"], i["field"]) for i in name_inputs} == {
        ("spark_catalog.default.ods_users", "name"), ("spark_catalog.default.dim_company", "company_name"),
    }
    assert all(set(i) == {"table", "field", "type", "subtype", "expression", "masking"} for i in name_inputs)
    assert all(i["type"] == "INDIRECT" and "expression" not in i for i in first["indirect"])
    assert second["index"] == 4
    assert second["target"] == {"table": None, "namespace": "file", "name": str(out_dir), "mode": "overwrite"}
    assert second["columns"] == {"id": [{"table": "spark_catalog.default.ods_users", "field": "id", "type": "DIRECT",
                                         "subtype": "IDENTITY", "expression": "ods_users.id", "masking": False}]}
    assert not out_dir.exists(), "a dry run must not execute writes"


@pytest.mark.slow
def test_keep_going_reports_the_failing_statement_and_extracts_the_rest(tmp_path):
    script = (
        "CREATE TABLE kg_t (a INT, b STRING) USING parquet;\n"
        "INSERT INTO kg_t SELECT 1, 'x';\n"
        "INSERT INTO kg_t SELECT a FROM no_such_table;\n"
        "INSERT INTO kg_t SELECT a + 1, upper(b) FROM kg_t;\n"
    )
    proc = extract(tmp_path, script, "--dry-run", "--keep-going", "--format", "json")
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)
    assert [s["index"] for s in doc["statements"]] == [1, 3]
    last = doc["statements"][1]["columns"]
    assert last["a"][0]["expression"] == "(kg_t.a + 1)" and last["a"][0]["subtype"] == "TRANSFORMATION"
    assert last["b"][0]["expression"] == "upper(kg_t.b)"
    [error] = doc["errors"]
    assert error["statement"] == 3 and error["line"] == 3
    assert "TABLE_OR_VIEW_NOT_FOUND" in error["spark_message"]
    assert "Statement 3 of 4 failed at line 3" in proc.stderr


@pytest.mark.slow
def test_without_keep_going_the_first_failure_stops_the_script(tmp_path):
    script = "SELECT * FROM missing_table;\nCREATE TABLE never_created (a INT) USING parquet;\n"
    proc = extract(tmp_path, script, "--dry-run", "--format", "table")
    assert proc.returncode == 1
    assert "Statement 1 of 2 failed at line 1" in proc.stderr
    assert "TABLE_OR_VIEW_NOT_FOUND" in proc.stderr


def test_unreadable_script_is_a_clear_error(tmp_path):
    proc = subprocess.run([venv_bin("airflow-lineage"), "extract", "--sql", str(tmp_path / "nope.sql")],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert "cannot read" in proc.stderr and "nope.sql" in proc.stderr


@pytest.mark.slow
def test_driver_dumps_lean_plans_that_the_hook_reads_back(tmp_path):
    """The driver digests each plan while Spark runs on: the dump holds lean records, not Spark's JSON."""
    from airflow_lineage_provider.hooks import local_spark
    from airflow_lineage_provider.job.dump import SCRIPT, read_dump
    from airflow_lineage_provider.lineage.extract import from_records
    from airflow_lineage_provider.lineage.plan import digest

    dump = tmp_path / "dump"
    dump.mkdir()
    (dump / SCRIPT).write_text(SEED_DDL + SEED_JOIN + ";")
    code, stderr = local_spark.run_driver(str(dump), conf=local_spark.local_conf(str(tmp_path / "state")),
                                          dry_run=True, quiet=True)
    assert code == 0, stderr
    result = read_dump(str(dump))
    [record] = result.records
    assert digest.is_lean(record) and "plan" not in record and record["index"] == 3
    assert (dump / "plans.jsonl").stat().st_size < 4_000  # Spark's compacted JSON of this plan: ~17 KB
    [statement] = from_records(result.records, result.warnings).statements
    assert statement.method == "plan" and statement.confidence == 1.0
    name = {c: {(i.table.rsplit(".", 1)[-1], i.field, i.subtype) for i in inputs} for c, inputs in statement.columns}
    assert name["name"] == {("ods_users", "name", "TRANSFORMATION"), ("dim_company", "company_name", "TRANSFORMATION")}
    assert name["p"] == {("ods_users", "birthday", "TRANSFORMATION")}
    assert name["id"] == {("ods_users", "id", "IDENTITY")}


SCRIPTED = """CREATE TABLE src_s (x INT, y STRING) USING parquet;
CREATE TABLE dst_s (x INT, y STRING) USING parquet;
INSERT INTO src_s VALUES (1, 'a'), (2, 'b');
BEGIN
  DECLARE v INT DEFAULT 10;
  INSERT INTO dst_s SELECT x + v, upper(y) FROM src_s;
  IF v > 5 THEN
    INSERT INTO dst_s SELECT x, y FROM src_s WHERE x > 1;
  END IF;
END;
EXECUTE IMMEDIATE 'INSERT INTO dst_s SELECT x * 2, y FROM src_s';
SELECT count(*) AS n FROM dst_s;
"""


@pytest.mark.slow
def test_a_scripting_block_and_execute_immediate_report_each_write_they_run(tmp_path):
    proc = extract(tmp_path, SCRIPTED, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    writes = [s for s in doc["statements"] if s["target"] and s["target"]["table"] == "spark_catalog.default.dst_s"]
    edges = [{(c, i["field"], i["subtype"]) for c, inputs in s["columns"].items() for i in inputs} for s in writes]
    # Two writes inside the block (statement 4), each its own, and the one EXECUTE IMMEDIATE ran (5).
    assert [s["index"] for s in writes] == [3, 3, 4]
    assert edges == [{("x", "x", "TRANSFORMATION"), ("y", "y", "TRANSFORMATION")},
                     {("x", "x", "IDENTITY"), ("y", "y", "IDENTITY")},
                     {("x", "x", "TRANSFORMATION"), ("y", "y", "IDENTITY")}]
    assert {i["field"] + ":" + i["subtype"] for i in writes[1]["indirect"]} == {"x:FILTER"}
    assert {e for s in writes for _, inputs in s["columns"].items() for e in (i["expression"] for i in inputs)} >= {
        "(src_s.x + v)", "(src_s.x * 2)"}


@pytest.mark.slow
def test_a_dry_run_skips_what_spark_would_run_to_analyze_it_and_says_so(tmp_path):
    proc = extract(tmp_path, SCRIPTED, "--dry-run", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert [s["index"] for s in doc["statements"] if s["target"]] == [2]  # the INSERT ... VALUES only
    assert any("statement 4 (line 4): a SQL scripting block is not analyzed in a dry run" in w for w in doc["warnings"])
    assert any("statement 5 (line 11): EXECUTE IMMEDIATE is not analyzed in a dry run" in w for w in doc["warnings"])


def test_method_sql_fails_on_a_syntax_error_naming_the_statement_and_the_script_line(tmp_path):
    proc = extract(tmp_path, "CREATE TABLE a (x INT) USING parquet;\n\nINSERT INTO a\n  SELEC x FROM a;\nSELECT 1;\n",
                   "--method", "sql")
    assert proc.returncode == 1
    assert "error: statement 2 of 3 (line 4 of the script): the SQL could not be parsed" in proc.stderr
    assert "statement 2 -> (no lineage)  [method=none, confidence=0]" in proc.stdout


@pytest.mark.parametrize("script", ["", "-- only a comment\n/* and this */\n"])
def test_an_empty_script_is_said_to_be_empty_and_starts_nothing(tmp_path, script):
    proc = extract(tmp_path, script)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "has no SQL statement (it is empty or holds only comments): nothing to extract" in proc.stderr


def test_a_file_that_is_not_utf8_is_named_with_the_byte_that_is_not(tmp_path):
    sql = tmp_path / "latin1.sql"
    sql.write_bytes("SELECT 'café' AS x".encode("latin-1"))
    proc = subprocess.run([venv_bin("airflow-lineage"), "extract", "--sql", str(sql), "--method", "sql"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == (f"airflow-lineage: {sql} is not UTF-8 text: byte 11 (0xe9) cannot be decoded; "
                                   "save the file as UTF-8")


def test_diff_of_two_documents_says_what_changed_and_exits_1(tmp_path):
    from airflow_lineage_provider.lineage.model import ColumnInput, Dataset, LineageReport, StatementLineage

    def doc(subtype: str, path: str) -> str:
        st = StatementLineage(index=0, sql="x", method="plan", confidence=1.0,
                              target=Dataset("file", "/wh/t", "spark_catalog.default.t"),
                              columns=(("a", (ColumnInput("spark_catalog.default.s", "a", subtype=subtype),)),))
        (tmp_path / path).write_text(LineageReport((st,)).to_json())
        return str(tmp_path / path)

    old, new = doc("IDENTITY", "old.json"), doc("TRANSFORMATION", "new.json")
    proc = subprocess.run([venv_bin("airflow-lineage"), "diff", old, new], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.splitlines() == [
        f"column lineage: {old} -> {new}",
        "~ spark_catalog.default.t.a <- spark_catalog.default.s.a: IDENTITY -> TRANSFORMATION"]
    same = subprocess.run([venv_bin("airflow-lineage"), "diff", old, old], capture_output=True, text=True, timeout=60)
    assert same.returncode == 0 and same.stdout.splitlines()[-1] == "no change in the column lineage"


DEEP = ("CREATE TABLE deep (a INT) USING parquet;\nCREATE TABLE deep_out (a INT) USING parquet;\n"
        "INSERT INTO deep_out SELECT " + "(a + " * 1000 + "a" + ")" * 1000 + " FROM deep;\n")
NESTED = ("static extraction failed: the statement is nested too deep for the static extractor (RecursionError: "
          "maximum recursion depth exceeded)")


def test_method_sql_fails_on_a_statement_nested_too_deep_in_one_line_as_on_a_syntax_error(tmp_path):
    proc = extract(tmp_path, DEEP, "--method", "sql")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.splitlines() == [f"static lineage of statement 3: {NESTED}",
                                        f"error: statement 3 of 3 (line 3 of the script): {NESTED}"]
    assert "statement 3 -> (no lineage)  [method=none, confidence=0]" in proc.stdout


@pytest.mark.slow
def test_plan_mode_on_a_statement_nested_too_deep_says_it_once_numbered_as_spark_does(tmp_path):
    """Spark refuses the statement as too complex (its "Statement 3 of 3"); the static extractor's check of it
    is one line with the same number, never a traceback."""
    proc = extract(tmp_path, DEEP)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "error: Statement 3 of 3 has a syntax error at line 3 of the script" in proc.stderr
    assert proc.stderr.count("static lineage of statement") == 1
    assert f"static lineage of statement 3: {NESTED}" in proc.stderr


@pytest.mark.slow
def test_a_dry_run_of_a_row_level_write_says_when_the_tables_format_cannot_run_it(tmp_path):
    """A real run of MERGE/UPDATE/DELETE into a parquet table is refused by Spark when it plans it
    (UNSUPPORTED_FEATURE.TABLE_OPERATION); the dry run plans it too, never runs it, and says so. A table
    that can run them (the test catalog rowcat) gets no such warning."""
    from tests.rowlevel import CATALOG_CLASS, rowlevel_conf

    script = ("CREATE TABLE pq_t (id INT, v STRING) USING parquet;\nCREATE TABLE pq_s (id INT, v STRING) USING parquet;\n"
              "MERGE INTO pq_t USING pq_s ON pq_t.id = pq_s.id WHEN MATCHED THEN UPDATE SET v = pq_s.v;\n"
              "UPDATE pq_t SET v = 'x' WHERE id = 1;\nDELETE FROM pq_t WHERE id = 2;\n"
              "CREATE NAMESPACE IF NOT EXISTS rowcat.dry;\nCREATE TABLE rowcat.dry.t (id INT, v STRING);\n"
              "MERGE INTO rowcat.dry.t t USING pq_s ON t.id = pq_s.id WHEN MATCHED THEN UPDATE SET v = pq_s.v;\n"
              "UPDATE rowcat.dry.t SET v = 'x' WHERE id = 1;\nDELETE FROM rowcat.dry.t WHERE id = 2;\n")
    proc = extract(tmp_path, script, "--dry-run", "--format", "json", "--conf",
                   f"spark.jars={rowlevel_conf()['spark.jars']}", "--conf", f"spark.sql.catalog.rowcat={CATALOG_CLASS}")
    assert proc.returncode == 0, proc.stderr
    statements = {s["index"]: s for s in json.loads(proc.stdout)["statements"]}
    for index, what in ((2, "MERGE INTO TABLE"), (3, "UPDATE TABLE"), (4, "DELETE")):
        assert statements[index]["warnings"] == [
            "dry run only: a real run of this statement would be refused by Spark ([UNSUPPORTED_FEATURE.TABLE_OPERATION] "
            f"The feature is not supported: Table `spark_catalog`.`default`.`pq_t` does not support {what})"]
        assert statements[index]["method"] == "plan" and statements[index]["confidence"] == 1.0
    assert statements[2]["columns"]["v"][0]["field"] == "v"  # the lineage of the analyzed plan stands
    for index in (7, 8, 9):
        assert statements[index]["target"]["table"] == "rowcat.dry.t" and statements[index]["warnings"] == [], index


def test_control_characters_in_names_are_shown_escaped_never_sent_to_the_terminal(tmp_path):
    """A column named with ANSI escape sequences (clear the screen, red) is printed as its escapes by the
    table output and by diff."""
    proc = extract(tmp_path, "SELECT 1 AS `a\x1b[2J\x1b[31mb`;\n", "--method", "sql")
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout and "a\\x1b[2J\\x1b[31mb" in proc.stdout
    from airflow_lineage_provider.lineage.model import ColumnInput, Dataset, LineageReport, StatementLineage

    files = []
    for n, field in enumerate(("x", "y\x1b[2J")):
        st = StatementLineage(index=0, sql="", method="plan", confidence=1.0, target=Dataset("file", "/w", "t\x1b[5m"),
                              columns=(("c\x1b]0;pwned\x07", (ColumnInput("s", field),)),))
        files.append(tmp_path / f"{n}.json")
        files[-1].write_text(LineageReport((st,)).to_json())
    diffed = subprocess.run([venv_bin("airflow-lineage"), "diff", *map(str, files)], capture_output=True, text=True,
                            timeout=60)
    assert diffed.returncode == 1 and "\x1b" not in diffed.stdout and "\x07" not in diffed.stdout
    assert "t\\x1b[5m.c\\x1b]0;pwned\\x07" in diffed.stdout and "s.y\\x1b[2J" in diffed.stdout


@pytest.mark.parametrize(("schema", "said"), [
    ("[1, 2]", "is not a table schema file: it is a list, not an object"),
    ('"x"', "is not a table schema file: it is a string, not an object"),
    ('{"t": 5}', "is not a table schema file: table 't': its columns are neither an object nor a list"),
    ('{"t": {"a": 5}}', "is not a table schema file: table 't': the type of column 'a' is not a string"),
    ('{"t": [1]}', "is not a table schema file: table 't': column 1 is neither a name nor a [name, type] pair"),
    ("{not json", "cannot read a schema file: "),
    ("[" * 100_000, "cannot read a schema file: maximum recursion depth exceeded"),
])
def test_a_schema_file_of_the_wrong_shape_is_a_clear_error(tmp_path, schema, said):
    (tmp_path / "schema.json").write_text(schema)
    proc = extract(tmp_path, "INSERT INTO t SELECT a FROM s;\n", "--method", "sql", "--schema",
                   str(tmp_path / "schema.json"))
    assert proc.returncode == 2 and proc.stdout == "" and "Traceback" not in proc.stderr
    [line] = proc.stderr.splitlines()
    assert line.startswith("airflow-lineage: ") and said in line, line


@pytest.mark.slow
def test_extract_app_runs_a_jar_under_the_jvm_listener(tmp_path):
    """``--app x.jar --class Main``: the jar runs itself with the listener added, as the hook runs it."""
    from tests.rowlevel import jvm_app_jar

    out = tmp_path / "out"
    base = [venv_bin("airflow-lineage"), "extract", "--app", jvm_app_jar(), "--class", "lineagetest.WriteRange"]
    env = {**os.environ, "AIRFLOW_LINEAGE_LOCAL_DIR": str(tmp_path / "state")}
    proc = subprocess.run([*base, "--format", "json", "--", str(out / "range"), str(out / "total")],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(proc.stdout)
    source = str(out / "range")
    assert [(s["target"]["name"], {c: {(i["table"], i["field"], i["subtype"]) for i in inputs}
                                   for c, inputs in s["columns"].items()}) for s in doc["statements"]] == [
        (source, {"id": set(), "tens": set()}),
        (str(out / "total"), {"id": {(source, "id", "IDENTITY")},
                              "total": {(source, "id", "TRANSFORMATION"), (source, "tens", "TRANSFORMATION")}}),
    ]
    # A jar that fails: its own error, and no lineage printed as if it had succeeded.
    failed = subprocess.run(base, capture_output=True, text=True, timeout=300, env=env)  # no arguments: it throws
    assert failed.returncode == 1 and failed.stdout == ""
    assert "ArrayIndexOutOfBoundsException" in failed.stderr and "the Spark job failed" in failed.stderr
