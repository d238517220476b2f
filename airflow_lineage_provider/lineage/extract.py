"""The extraction front door: a job's plan records into a ``LineageReport``, and its printed form.

Extraction failures never propagate: a record that cannot be read becomes a
statement with ``method: none`` and a warning saying why. Static lineage (the SQL
text's) is ``lineage/sql/static.py``'s.
"""

from __future__ import annotations

import logging
import re
from typing import Any, Iterable

from airflow_lineage_provider.lineage.model import LineageReport, StatementLineage
from airflow_lineage_provider.lineage.plan import events, resolve
from airflow_lineage_provider.lineage.plan import record as raw
from airflow_lineage_provider.lineage.redact import scrub

log = logging.getLogger(__name__)


def from_records(records: Iterable[dict[str, Any]], warnings: Iterable[str] = ()) -> LineageReport:
    """Field lineage of every captured write, in script order: the records of a dump (``record.py``,
    raw or lean), less the events Spark reported twice for one write (``events.py``)."""
    statements: list[StatementLineage] = []
    for rec in events.reduce(list(records)):
        if rec.get(raw.SQL):  # SQL text goes to XCom and events: never with a JDBC password in it
            rec = {**rec, raw.SQL: scrub(str(rec[raw.SQL]))}
        try:
            statements.append(resolve.extract(rec))
        except Exception as e:  # lineage never breaks the job
            where = rec.get(raw.INDEX)
            where = where + 1 if isinstance(where, int) else where  # counted from 1, as Spark's messages do
            log.warning("plan lineage of statement %s: extraction failed: %s: %s", where, e.__class__.__name__, e)
            log.debug("plan lineage of statement %s failed", where, exc_info=True)
            statements.append(StatementLineage(
                index=int(rec.get(raw.INDEX, 0)), sql=str(rec.get(raw.SQL, "")), method="none", confidence=0.0,
                target=None, warnings=(f"plan extraction failed: {e.__class__.__name__}: {e}",),
            ))
    statements.sort(key=lambda s: s.index)
    return LineageReport(statements=tuple(statements), warnings=tuple(scrub(str(w)) for w in warnings))


# What a terminal would act on rather than show: C0 and C1 controls (ESC starts an ANSI sequence that can
# clear or recolour the screen), DEL, and the bidirectional overrides that reorder what is shown.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_CONTROL_OR_NEWLINE_KEPT = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(m: re.Match[str]) -> str:
    c = m.group()
    return _NAMED.get(c) or (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")


def printable(text: str, *, newlines: bool = False) -> str:
    """``text`` safe to print to a terminal: each control character written as its escape (``\\x1b``,
    ``\\n``), so names, SQL and messages from a document are shown, never obeyed. ``newlines``: keep
    line breaks (a message of several lines)."""
    return (_CONTROL_OR_NEWLINE_KEPT if newlines else _CONTROL).sub(_escape, text)


def format_table(report: LineageReport) -> str:
    """One line per edge: target column <- source column, with subtype and expression. Every text of the
    document is ``printable``: a column named with an ANSI escape sequence is shown, not obeyed."""
    p = printable
    lines: list[str] = []
    for st in report.statements:
        target = p(st.target.label) if st.target else "(no lineage)" if st.method == "none" else "(query result)"
        head = f"statement {st.index + 1} -> {target}  [method={p(st.method)}, confidence={st.confidence:g}]"
        lines.append(head)
        names = [(p(c), inputs) for c, inputs in st.columns]
        width = max((len(c) for c, _ in names), default=0)
        for column, inputs in names:
            if not inputs:
                lines.append(f"  {column.ljust(width)} <- (no source column)")
            for inp in inputs:
                expr = f"  {p(inp.expression)}" if inp.subtype != "IDENTITY" else ""
                mask = " masked" if inp.masking else ""
                lines.append(f"  {column.ljust(width)} <- {p(inp.table)}.{p(inp.field)}  {p(inp.subtype)}{mask}{expr}")
        for inp in st.indirect:
            lines.append(f"  {'(indirect)'.ljust(width)} <- {p(inp.table)}.{p(inp.field)}  {p(inp.subtype)}")
        for w in st.warnings:
            lines.append(f"  warning: {p(w, newlines=True)}")
        if st.agreement is not None and st.agreement.static != "same":
            note = f" ({p(st.agreement.reason, newlines=True)})" if st.agreement.reason else ""
            lines.append(f"  static lineage: {p(st.agreement.static)}{note}")
            lines += [f"    only plan:   {p(e)}" for e in st.agreement.only_plan]
            lines += [f"    only static: {p(e)}" for e in st.agreement.only_static]
    for w in report.warnings:
        lines.append(f"warning: {p(w, newlines=True)}")
    return "\n".join(lines)


# A cell a spreadsheet would run as a formula: = + - @ (and their full-width forms) first, also after
# leading whitespace a spreadsheet may trim, or a leading tab or line break (the page's csvCell, in Python).
_FORMULA = re.compile("^\\s*[=+\\-@\uff1d\uff0b\uff0d\uff20]|^[\t\r\n]")


def spreadsheet_text(value: object) -> str:
    """``value`` as a CSV cell a spreadsheet shows as text: a formula is prefixed with ``'``, and control
    characters are written as their escapes (``printable``)."""
    text = "" if value is None else str(value)
    if _FORMULA.search(text):
        text = "'" + text
    return printable(text)
