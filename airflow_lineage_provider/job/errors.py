"""How a failed statement or application is told: which one, where, and Spark's own words.

Standard library only; both the script runner and the application runner use it.
"""

from __future__ import annotations

import re
from typing import Any

from airflow_lineage_provider.lineage.redact import scrub
from airflow_lineage_provider.lineage.statements import Statement

# How the dump says the job ran without its capture (the hook then falls back to static lineage).
CAPTURE_UNAVAILABLE = "the plan capture could not be loaded"


def spark_message(exc: BaseException) -> str:
    """Spark's own error text (with its line/position and SQL excerpt), without Java stacks."""
    text = str(exc).strip()
    if not text:
        getter = getattr(exc, "getMessage", None)
        text = str(getter()).strip() if callable(getter) else ""
    # Spark quotes the failing statement (``== SQL ==``): its credentials never leave the job.
    return scrub(text.split("\n\nJVM stacktrace:")[0]) or exc.__class__.__name__


def shown_line(stmt: Statement, width: int = 80) -> str:
    """A statement's first line as logs and errors show it: credentials hidden first, then cut."""
    return (scrub(stmt.first_line) or "")[:width]


def parse_line_offset(message: str) -> int | None:
    """The 1-based line inside the statement that a Spark ParseException names."""
    m = re.search(r"\(line (\d+), pos \d+\)", message)
    return int(m.group(1)) if m else None


class StatementError(Exception):
    """A statement failed: says which one, at which line of the script, and Spark's own message."""

    def __init__(self, stmt: Statement, total: int, phase: str, message: str) -> None:
        self.stmt = stmt
        self.phase = phase
        self.spark_message = message
        offset = parse_line_offset(message) if phase == "parse" else None
        self.line = stmt.line + (offset - 1 if offset else 0)
        what = "has a syntax error" if phase == "parse" else "failed"
        super().__init__(
            f"Statement {stmt.index + 1} of {total} {what} at line {self.line} of the script "
            f"({shown_line(stmt)!r}): {scrub(message)}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "statement": self.stmt.index + 1,
            "index": self.stmt.index,
            "line": self.line,
            "first_line": scrub(self.stmt.first_line),
            "phase": self.phase,
            "spark_message": self.spark_message,
            "message": str(self),
        }
