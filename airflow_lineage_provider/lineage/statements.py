"""Split a Spark SQL script into statements.

Runs inside the Spark driver, so it imports only the standard library. Spark's
parser takes one statement at a time; this splitter only needs to find the
semicolons that end statements, which means skipping strings, quoted
identifiers and comments (Spark allows nested ``/* */`` comments). A SQL
scripting block (``BEGIN ... END``, Spark 4) is one statement with semicolons
inside: it ends at the semicolon after its own ``END``.
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
    block = _Block()
    while i < n:
        ch = script[i]
        nxt = script[i + 1] if i + 1 < n else ""
        if ch.isalpha() or ch == "_":
            end = i + 1
            while end < n and (script[end].isalnum() or script[end] == "_"):
                end += 1
            if not has_code:
                code_start, has_code = i, True
                block = _Block.starting(script, i, end)
            elif block.depth:
                block.word(script, i, end)
            i = end
            continue
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
        if ch == ";" and not block.depth:
            if has_code:
                _append(statements, script, code_start, i)
            has_code = False
        elif not has_code and not ch.isspace():
            code_start, has_code = i, True
        i += 1
    if has_code:
        _append(statements, script, code_start, n)
    return statements


# Blocks closed by ``END <keyword>``: they never opened one (only BEGIN and CASE count).
_END_KEYWORDS = frozenset({"IF", "WHILE", "LOOP", "REPEAT", "FOR"})


class _Block:
    """Nesting inside a scripting block: BEGIN and CASE open, a bare END or END CASE closes.
    Other statements never count, so ``depth`` stays 0 and semicolons end them."""

    __slots__ = ("depth", "closing")

    def __init__(self, depth: int = 0) -> None:
        self.depth = depth
        self.closing = False  # the word after END names what it closes (END IF, END CASE): not an opener

    @classmethod
    def starting(cls, script: str, start: int, end: int) -> _Block:
        """The block a statement starts: ``BEGIN`` or ``label: BEGIN`` opens one."""
        word = script[start:end].upper()
        if word != "BEGIN":
            rest = script[end:end + 200].lstrip()
            if not rest.startswith(":") or not rest[1:].lstrip().upper().startswith("BEGIN"):
                return cls()
        return cls(1 if word == "BEGIN" else -1)  # -1: the label's BEGIN, still to come, opens it

    def word(self, script: str, start: int, end: int) -> None:
        word = script[start:end].upper()
        if self.closing:
            self.closing = False
            if word in _END_KEYWORDS or word == "CASE":
                return
        if word in ("BEGIN", "CASE"):
            self.depth = 1 if self.depth == -1 else self.depth + 1
        elif word == "END" and self.depth > 0:
            after = script[end:end + 12].lstrip()
            following = after.split(None, 1)[0].rstrip(";").upper() if after else ""
            self.closing = following in _END_KEYWORDS or following == "CASE"
            if following not in _END_KEYWORDS:
                self.depth -= 1


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
