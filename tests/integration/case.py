"""One corpus case: SQL and the lineage a person expects of it (see ``corpus.py`` for the notation)."""

from __future__ import annotations

from dataclasses import dataclass, field


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
