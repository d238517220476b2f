"""The plan's lineage checked against the static extractor's, statement by statement, on every run.

Two extractors that work nothing alike (Spark's analyzed plan, the SQL text through sqlglot)
agreeing on a statement's edges is strong evidence both are right; where they differ, the
statement is the first place to look when lineage looks wrong, and the differing edges make
the bug report. An edge is a target column (or the statement, for an indirect input), a source
column and a subtype; expression texts are not compared, as each extractor writes its own.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Iterable

from airflow_lineage_provider.lineage.model import (
    DIFFERS,
    SAME,
    UNAVAILABLE,
    Agreement,
    LineageReport,
    StatementLineage,
)


def edges(statement: StatementLineage) -> set[str]:
    """``column <- table.field SUBTYPE`` per direct input, ``(indirect) <- table.field SUBTYPE`` per
    indirect one: the notation of ``airflow-lineage extract`` and of the document's agreement."""
    out = {f"{column} <- {i.table}.{i.field} {i.subtype}" for column, inputs in statement.columns for i in inputs}
    out.update(f"(indirect) <- {i.table}.{i.field} {i.subtype}" for i in statement.indirect)
    return out


def agreement(plan: StatementLineage, static: StatementLineage | None) -> Agreement:
    if static is None:
        return Agreement(UNAVAILABLE, reason="the static extractor found no statement here")
    if static.method != "sql":
        return Agreement(UNAVAILABLE, reason="; ".join(static.warnings) or "no static lineage")
    if (static.target.table if static.target else None) != (plan.target.table if plan.target else None):
        target = static.target.label if static.target else "a query result"
        return Agreement(UNAVAILABLE, reason=f"the static extractor read another statement here (it writes {target})")
    mine, theirs = edges(plan), edges(static)
    if mine == theirs and not static.warnings:
        return Agreement(SAME)
    return Agreement(DIFFERS, only_plan=tuple(sorted(mine - theirs)), only_static=tuple(sorted(theirs - mine)),
                     reason="; ".join(static.warnings))


def with_agreement(plan: LineageReport, static: LineageReport) -> LineageReport:
    """``plan`` with each plan statement's agreement with ``static`` (the same script's static lineage).

    A statement is matched by its index in the script; where one statement made several writes (a
    multi-insert, a scripting block), each is matched to the static write of the same target (the k-th of
    a target written k times, in the text's order). Where the counts differ (a scripting block's loop
    writes a table more times than its text names it) or a write has no SQL text
    (a PySpark application), static lineage cannot be matched to it: its agreement is ``unavailable``,
    with the reason.
    """
    by_index: dict[int, list[StatementLineage]] = {}
    for st in static.statements:
        by_index.setdefault(st.index, []).append(st)
    counts: dict[int, int] = {}
    for st in plan.statements:
        counts[st.index] = counts.get(st.index, 0) + 1
    out: list[StatementLineage] = []
    for st in plan.statements:
        if st.method != "plan":
            out.append(st)
            continue
        found = by_index.get(st.index) or []
        if not st.sql:
            note = Agreement(UNAVAILABLE, reason="the write has no SQL text (a DataFrame write)")
        elif counts[st.index] > 1 or len(found) > 1:
            same = [s for s in found if _target(s) == _target(st)]
            mine = [p for p in plan.statements if p.index == st.index and _target(p) == _target(st)]
            if same and len(same) == len(mine):
                # One target written n times by both (a multi-insert into one table twice): both sides list
                # a statement's writes in the order of its text, so the k-th matches the k-th.
                note = agreement(st, same[next(k for k, p in enumerate(mine) if p is st)])
            elif not found:
                note = agreement(st, None)
            else:
                note = Agreement(UNAVAILABLE, reason="one statement made several writes into one place (a scripting "
                                                      "block): static lineage cannot tell them apart")
        else:
            note = agreement(st, found[0] if found else None)
        out.append(replace(st, agreement=note))
    return LineageReport(statements=tuple(out), warnings=plan.warnings)


def _target(statement: StatementLineage) -> str | None:
    return statement.target.label if statement.target else None


def summary(statements: Iterable[StatementLineage]) -> dict[str, int]:
    """How many plan statements the static extractor agreed with, differed from, or could not read."""
    out = {SAME: 0, DIFFERS: 0, UNAVAILABLE: 0}
    for st in statements:
        if st.agreement is not None:
            out[st.agreement.static] = out.get(st.agreement.static, 0) + 1
    return out
