"""Split a Spark SQL script into statements.

Runs inside the Spark driver, so it imports only the standard library. Spark's
parser takes one statement at a time; this splitter only needs to find the
semicolons that end statements, which means skipping strings, quoted
identifiers and comments (Spark allows nested ``/* */`` comments).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Statement:
    """One statement of a script: ``index`` is 0-based, ``line`` 1-based."""

    index: int
    sql: str
    line: int

    @property
    def first_line(self) -> str:
        return self.sql.strip().splitlines()[0] if self.sql.strip() else ""


def split_statements(script: str) -> list[Statement]:
    """Return the non-empty statements of ``script`` in order.

    A chunk made only of comments and white space is not a statement.
    """
    statements: list[Statement] = []
    i = 0
    n = len(script)
    has_code = False
    code_start = 0
    while i < n:
        ch = script[i]
        nxt = script[i + 1] if i + 1 < n else ""
        if ch in ("'", '"', "`"):
            if not has_code:
                code_start, has_code = i, True
            i = _skip_quoted(script, i)
            continue
        if ch == "-" and nxt == "-":
            end = script.find("\n", i)
            i = n if end < 0 else end + 1
            continue
        if ch == "/" and nxt == "*":
            i = _skip_block_comment(script, i)
            continue
        if ch == ";":
            if has_code:
                _append(statements, script, code_start, i)
            has_code = False
        elif not has_code and not ch.isspace():
            code_start, has_code = i, True
        i += 1
    if has_code:
        _append(statements, script, code_start, n)
    return statements


def _append(out: list[Statement], script: str, start: int, end: int) -> None:
    """Add the statement whose first code character is at ``start`` (leading comments dropped)."""
    line = script.count("\n", 0, start) + 1
    out.append(Statement(index=len(out), sql=script[start:end].strip(), line=line))


def _skip_quoted(script: str, i: int) -> int:
    """Index just past the quoted text starting at ``i``.

    Strings honour backslash escapes and doubled quotes; backquoted identifiers
    only doubled backquotes. An unterminated quote runs to the end, and Spark's
    parser then reports it with the statement's position.
    """
    quote = script[i]
    i += 1
    n = len(script)
    while i < n:
        ch = script[i]
        if ch == "\\" and quote != "`":
            i += 2
            continue
        if ch == quote:
            if i + 1 < n and script[i + 1] == quote:
                i += 2
                continue
            return i + 1
        i += 1
    return n


def _skip_block_comment(script: str, i: int) -> int:
    depth = 0
    n = len(script)
    while i < n:
        if script.startswith("/*", i):
            depth += 1
            i += 2
        elif script.startswith("*/", i):
            depth -= 1
            i += 2
            if depth == 0:
                return i
        else:
            i += 1
    return n
