"""The extraction front door: a job's plan records, or SQL text, into a ``LineageReport``.

Extraction failures never propagate: a record that cannot be read becomes a
statement with ``method: none`` and a warning saying why. The static extractor
(``lineage/sql``, sqlglot) is imported only when static lineage is asked for.
"""

from __future__ import annotations

import logging
from typing import Any, Iterable

from airflow_lineage_provider.lineage import naming
from airflow_lineage_provider.lineage.model import SPARK_CATALOG, Dataset, LineageReport, StatementLineage
from airflow_lineage_provider.lineage.plan import resolve
from airflow_lineage_provider.lineage.plan.digest import digest
from airflow_lineage_provider.lineage.plan.lean import unpack_columns
from airflow_lineage_provider.lineage.redact import scrub

log = logging.getLogger(__name__)


def from_records(records: Iterable[dict[str, Any]], warnings: Iterable[str] = ()) -> LineageReport:
    """Field lineage of every captured write, in script order."""
    statements: list[StatementLineage] = []
    for rec in records:
        if rec.get("sql"):  # SQL text goes to XCom and events: never with a JDBC password in it
            rec = {**rec, "sql": scrub(str(rec["sql"]))}
        try:
            statements.append(resolve.extract(rec))
        except Exception as e:  # lineage never breaks the job
            log.warning("lineage extraction failed for statement %s: %s", rec.get("index"), e, exc_info=True)
            statements.append(StatementLineage(
                index=int(rec.get("index", 0)), sql=str(rec.get("sql", "")), method="none", confidence=0.0,
                target=None, warnings=(f"plan extraction failed: {e.__class__.__name__}: {e}",),
            ))
    statements.sort(key=lambda s: s.index)
    return LineageReport(statements=tuple(statements), warnings=tuple(scrub(str(w)) for w in warnings))


def static(sql: str, *, schema: Any = None, warehouse: str | None = None, cache: Any = None) -> LineageReport:
    """Lineage from the SQL text alone (no JVM): for START events and when no plan was captured.

    ``cache``: a ``SchemaCache`` of the tables earlier runs saw. ``warehouse``: the directory
    where the Spark that runs the SQL keeps its managed tables, when known (the embedded
    Spark's): catalog tables then get the same dataset names as the plan extractor gives
    them; elsewhere they keep catalog names.
    """
    from dataclasses import replace

    from airflow_lineage_provider.lineage.sql import SqlExtractor

    try:
        report = SqlExtractor(schema=schema, cache=cache).run(sql)
    except Exception as e:  # lineage never breaks the job
        log.warning("static lineage failed: %s", e, exc_info=True)
        return LineageReport(warnings=(f"static lineage failed: {e.__class__.__name__}: {e}",))
    if warehouse is None:
        return report

    def locate(d: Dataset | None) -> Dataset | None:
        if d is None or not d.table or d.namespace != SPARK_CATALOG:
            return d
        return naming.from_location(naming.warehouse_location(d.table, warehouse), table=d.table, mode=d.mode)

    return LineageReport(
        statements=tuple(replace(s, target=locate(s.target), inputs=tuple(locate(d) for d in s.inputs))
                         for s in report.statements),
        warnings=report.warnings,
    )


def with_static_agreement(report: LineageReport, sql: str, records: Iterable[dict[str, Any]] = (), *,
                          schema: Any = None, cache: Any = None, warehouse: str | None = None) -> LineageReport:
    """The plan ``report`` with each statement's agreement with the static lineage of its script
    (``lineage/agreement.py``). The static extractor is told every table the plans saw, with its
    columns, as a run's next START lineage would be. Never raises: a failure is a report warning."""
    from airflow_lineage_provider.lineage.agreement import with_agreement
    from airflow_lineage_provider.lineage.schema_cache import SchemaCache

    try:
        seen = SchemaCache(None)
        if cache is not None:
            for table in cache.tables():
                seen.put(table, cache.get(table) or [])
        for record in records:
            for table, columns in (record.get("schemas") or {}).items():
                seen.put(table, unpack_columns(columns))
        return with_agreement(report, static(sql, schema=schema, warehouse=warehouse, cache=seen))
    except Exception as e:  # lineage never breaks the job
        log.warning("the agreement check failed: %s", e, exc_info=True)
        return report.with_warning(f"the static agreement check failed: {e.__class__.__name__}: {e}")


def format_table(report: LineageReport) -> str:
    """One line per edge: target column <- source column, with subtype and expression."""
    lines: list[str] = []
    for st in report.statements:
        target = st.target.label if st.target else "(no lineage)" if st.method == "none" else "(query result)"
        head = f"statement {st.index + 1} -> {target}  [method={st.method}, confidence={st.confidence:g}]"
        lines.append(head)
        width = max((len(c) for c, _ in st.columns), default=0)
        for column, inputs in st.columns:
            if not inputs:
                lines.append(f"  {column.ljust(width)} <- (no source column)")
            for inp in inputs:
                expr = f"  {inp.expression}" if inp.subtype != "IDENTITY" else ""
                mask = " masked" if inp.masking else ""
                lines.append(f"  {column.ljust(width)} <- {inp.table}.{inp.field}  {inp.subtype}{mask}{expr}")
        for inp in st.indirect:
            lines.append(f"  {'(indirect)'.ljust(width)} <- {inp.table}.{inp.field}  {inp.subtype}")
        for w in st.warnings:
            lines.append(f"  warning: {w}")
        if st.agreement is not None and st.agreement.static != "same":
            note = f" ({st.agreement.reason})" if st.agreement.reason else ""
            lines.append(f"  static lineage: {st.agreement.static}{note}")
            lines += [f"    only plan:   {e}" for e in st.agreement.only_plan]
            lines += [f"    only static: {e}" for e in st.agreement.only_static]
    for w in report.warnings:
        lines.append(f"warning: {w}")
    return "\n".join(lines)


def remember_schemas(cache: Any, records: list[dict[str, Any]]) -> int:
    """Put the catalog tables a run's plans read and wrote into ``cache`` and save it; how many."""
    count = 0
    for record in records:
        for table, columns in (digest(record).get("schemas") or {}).items():
            cache.put(table, unpack_columns(columns))
            count += 1
    if count:
        cache.save()
    return count
