"""One corpus case: SQL and the lineage a person expects of it (see ``corpus.py`` for the notation)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from airflow_lineage_provider.lineage.model import StatementLineage
from airflow_lineage_provider.lineage.statements import split_statements


@dataclass(frozen=True)
class Case:
    name: str
    sql: str
    columns: dict[str, set[str]]
    indirect: set[str] = field(default_factory=set)
    target: str | None = None  # table (last part) or "path" for a path write
    # Why the static extractor cannot give this lineage yet ("" when it must agree with the plan's):
    # the coverage matrix shows it, and the agreement tests leave the case out.
    static: str = ""
    # Statements run before ``sql`` (tables and views the case reads), in Spark and the static extractor
    # alike: a script's earlier DDL is part of what a statement means.
    setup: str = ""
    # Of a statement that makes several writes (a multi-insert), the one the case checks, in the order Spark
    # makes them: one case per write.
    write: int = 0


@dataclass(frozen=True)
class Analyzed:
    """Corpus cases run once for several modules (the ``corpus_plans`` and ``rowlevel_plans`` fixtures): each
    case's plan record, or the error its setup, analysis or run raised, raised again by whichever test asks for
    that case (and mode, for a row-level write run in each mode of the row-level catalog)."""

    records: dict[str | tuple[str, str], dict[str, Any] | Exception]

    def record(self, case: Case, mode: str | None = None) -> dict[str, Any]:
        found = self.records[case.name if mode is None else (case.name, mode)]
        if isinstance(found, Exception):
            raise found
        return found

    def lineage(self, case: Case, mode: str | None = None) -> StatementLineage:
        from airflow_lineage_provider.lineage.plan import resolve

        return resolve.extract(self.record(case, mode))


def prepare(spark: Any, case: Case) -> None:
    """Run a case's setup statements in ``spark`` (they are written to run again harmlessly)."""
    for statement in split_statements(case.setup):
        spark.sql(statement.sql)
