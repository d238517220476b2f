"""lineage/statements.py: where a Spark SQL script's statements start and end."""

from __future__ import annotations

import pytest

from airflow_lineage_provider.lineage.statements import Statement, split_statements


def sqls(script: str) -> list[str]:
    return [s.sql for s in split_statements(script)]


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        pytest.param("SELECT ';' AS semi; SELECT 2", ["SELECT ';' AS semi", "SELECT 2"], id="single-quoted"),
        pytest.param('SELECT "a;b"; SELECT 2;', ['SELECT "a;b"', "SELECT 2"], id="double-quoted"),
        pytest.param("SELECT `odd;col` FROM t; SELECT 2", ["SELECT `odd;col` FROM t", "SELECT 2"], id="backquoted"),
        pytest.param(r"SELECT 'it\'s; here'; SELECT 2", [r"SELECT 'it\'s; here'", "SELECT 2"], id="backslash-escape"),
        pytest.param('SELECT "say \\"x;y\\""; SELECT 2', ['SELECT "say \\"x;y\\""', "SELECT 2"],
                     id="backslash-escape-double"),
        pytest.param("SELECT 'it''s; here'; SELECT 2", ["SELECT 'it''s; here'", "SELECT 2"], id="doubled-quote"),
        pytest.param("SELECT `a``;b`; SELECT 2", ["SELECT `a``;b`", "SELECT 2"], id="doubled-backquote"),
        # In a backquoted identifier a backslash is an ordinary character: the backquote closes it.
        pytest.param("SELECT `a\\`; SELECT 2", ["SELECT `a\\`", "SELECT 2"], id="backslash-in-backquotes"),
        pytest.param("SELECT 1 -- not the end; really\n; SELECT 2",
                     ["SELECT 1 -- not the end; really", "SELECT 2"], id="line-comment"),
        pytest.param("SELECT 1 /* a; /* b; */ still; comment */ + 1; SELECT 2",
                     ["SELECT 1 /* a; /* b; */ still; comment */ + 1", "SELECT 2"], id="nested-block-comment"),
        pytest.param(";;SELECT 1;;;SELECT 2;;", ["SELECT 1", "SELECT 2"], id="empty-statements"),
        pytest.param("SELECT 1;\n-- only a comment;\n/* and; another */ ;\nSELECT 2",
                     ["SELECT 1", "SELECT 2"], id="comment-only-chunks"),
        pytest.param("SELECT 1; SELECT 2", ["SELECT 1", "SELECT 2"], id="trailing-without-semicolon"),
        pytest.param("SELECT 10/2; SELECT 3-2", ["SELECT 10/2", "SELECT 3-2"], id="lone-slash-and-dash"),
        pytest.param("/**/SELECT 1", ["SELECT 1"], id="empty-block-comment"),
    ],
)
def test_split(script, expected):
    assert sqls(script) == expected


@pytest.mark.parametrize("script", ["", "   \n\t ", "-- only\n/* comments; here */\n", ";;;", "/* a /* b */ ; */"])
def test_no_statements(script):
    assert split_statements(script) == []


def test_unterminated_string_runs_to_the_end():
    assert sqls("SELECT 'open; SELECT 2") == ["SELECT 'open; SELECT 2"]


def test_unterminated_block_comment_runs_to_the_end():
    assert sqls("SELECT 1 /* open ; SELECT 2") == ["SELECT 1 /* open ; SELECT 2"]


def test_index_and_line_of_each_statement():
    script = (
        "-- header comment; with a semicolon\n"   # line 1
        "\n"                                      # line 2
        "CREATE TABLE t (id INT);\n"              # line 3
        "/* block\n"                              # line 4
        "   comment; */\n"                        # line 5
        "  INSERT INTO t\n"                       # line 6
        "  SELECT 1;;\n"                          # line 7
        "SELECT 'a\n"                             # line 8
        "b'; SELECT 3"                            # line 9
    )
    assert split_statements(script) == [
        Statement(index=0, sql="CREATE TABLE t (id INT)", line=3),
        Statement(index=1, sql="INSERT INTO t\n  SELECT 1", line=6),
        Statement(index=2, sql="SELECT 'a\nb'", line=8),
        Statement(index=3, sql="SELECT 3", line=9),
    ]


def test_leading_comment_on_same_line_is_dropped():
    [stmt] = split_statements("\n\n/* note */ SELECT 1")
    assert (stmt.index, stmt.sql, stmt.line) == (0, "SELECT 1", 3)


def test_statement_starting_with_a_quote():
    [stmt] = split_statements("\n`weird`.tbl")
    assert (stmt.sql, stmt.line) == ("`weird`.tbl", 2)


def test_multi_line_statement_keeps_inner_text():
    script = "\nSELECT a,\n       b -- trailing; comment\nFROM t\nWHERE x = ';'\n;\n"
    [stmt] = split_statements(script)
    assert stmt.line == 2
    assert stmt.sql == "SELECT a,\n       b -- trailing; comment\nFROM t\nWHERE x = ';'"


@pytest.mark.parametrize(
    ("sql", "first_line"),
    [
        ("SELECT 1", "SELECT 1"),
        ("INSERT INTO t\nSELECT 1\nFROM u", "INSERT INTO t"),
        ("\n  SELECT 2  \n FROM t", "SELECT 2  "),
        ("", ""),
        ("   \n ", ""),
    ],
)
def test_first_line(sql, first_line):
    assert Statement(index=0, sql=sql, line=1).first_line == first_line


def test_first_line_of_split_statement():
    [stmt] = split_statements("  -- c\n  INSERT OVERWRITE t\n  SELECT * FROM u;")
    assert stmt.first_line == "INSERT OVERWRITE t"


SCRIPTING = """CREATE TABLE a (x INT);
BEGIN
  DECLARE v INT DEFAULT 1;
  INSERT INTO a VALUES (v);
  IF v > 0 THEN INSERT INTO a SELECT CASE WHEN x > 1 THEN x END FROM a; END IF;
  WHILE v < 3 DO SET v = v + 1; END WHILE;
  REPEAT SET v = v - 1; UNTIL v < 1 END REPEAT;
  inner: BEGIN SELECT 1; END;
  CASE v WHEN 0 THEN SELECT 'zero'; ELSE SELECT 'other'; END CASE;
END;
lbl: BEGIN INSERT INTO a VALUES (1); END;
SELECT CASE WHEN 1 = 1 THEN 'end' END AS begin_x;
SELECT 1"""


def test_a_scripting_block_is_one_statement_with_its_inner_semicolons():
    statements = split_statements(SCRIPTING)
    assert [s.line for s in statements] == [1, 2, 11, 12, 13]
    block = statements[1].sql
    assert block.startswith("BEGIN\n  DECLARE v INT DEFAULT 1;") and block.endswith("END CASE;\nEND")
    assert statements[2].sql == "lbl: BEGIN INSERT INTO a VALUES (1); END"
    # BEGIN and END inside a string, a name or a plain statement's CASE change nothing.
    assert statements[3].sql == "SELECT CASE WHEN 1 = 1 THEN 'end' END AS begin_x"


def test_begin_inside_a_string_or_comment_opens_no_block():
    statements = split_statements("SELECT 'BEGIN'; -- BEGIN\nSELECT `begin`; /* BEGIN */ SELECT 2")
    assert [s.sql for s in statements] == ["SELECT 'BEGIN'", "SELECT `begin`", "SELECT 2"]
