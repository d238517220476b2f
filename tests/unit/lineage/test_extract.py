"""The table print of a document (``format_table``): what ``extract`` and ``show`` put on a terminal."""

from __future__ import annotations

import pytest

from airflow_lineage_provider.lineage.extract import format_table, printable
from airflow_lineage_provider.lineage.model import Agreement, ColumnInput, Dataset, LineageReport, StatementLineage


@pytest.mark.parametrize(("text", "shown"), [
    ("plain name", "plain name"),
    ("a\x1b[2Jb", "a\\x1b[2Jb"),  # clear the screen
    ("\x1b]0;title\x07x", "\\x1b]0;title\\x07x"),  # set the window title
    ("l1\nl2\r\t", "l1\\nl2\\r\\t"),
    ("\x9b31m\x7f", "\\x9b31m\\x7f"),  # the C1 form of ESC [, and DEL
    ("abc\u202edcb", "abc\\u202edcb"),  # right-to-left override
    ("ünïcode ok", "ünïcode ok"),
])
def test_printable_writes_every_control_character_as_its_escape(text, shown):
    assert printable(text) == shown


def test_printable_can_keep_line_breaks_of_a_message():
    assert printable("one\x1b[31m\ntwo", newlines=True) == "one\\x1b[31m\ntwo"


def test_format_table_escapes_every_text_of_the_document():
    evil = "\x1b[2J\x1b[31m"
    statement = StatementLineage(
        index=0, sql="", method="plan", confidence=1.0, target=Dataset("file", "/w/t", "db.t" + evil),
        columns=(("c" + evil, (ColumnInput("db.s" + evil, "f" + evil, subtype="TRANSFORMATION",
                                           expression="upper(f)" + evil),)),),
        indirect=(ColumnInput("db.s", "k" + evil, "INDIRECT", "FILTER"),),
        warnings=("careful" + evil,),
        agreement=Agreement("differs", only_plan=("c <- db.s.f" + evil,), reason="why" + evil))
    text = format_table(LineageReport((statement,), warnings=("report" + evil,)))
    assert "\x1b" not in text
    assert text.count("\\x1b[2J\\x1b[31m") == 10
    assert "  c\\x1b[2J\\x1b[31m <- db.s\\x1b[2J\\x1b[31m.f\\x1b[2J\\x1b[31m  TRANSFORMATION" in text


@pytest.mark.parametrize(("value", "shown"), [
    ("=1+1", "'=1+1"), (" =HYPERLINK(x)", "' =HYPERLINK(x)"), ("+cmd", "'+cmd"), ("@SUM(A1)", "'@SUM(A1)"),
    ("\uff1d1", "'\uff1d1"), ("\tx", "'\\tx"), ("a=b", "a=b"), ("company_name", "company_name"),
    ("x\x1b[2J", "x\\x1b[2J"), (None, ""), (3, "3"),
])
def test_a_csv_cell_never_runs_as_a_spreadsheet_formula(value, shown):
    from airflow_lineage_provider.lineage.extract import spreadsheet_text

    assert spreadsheet_text(value) == shown
