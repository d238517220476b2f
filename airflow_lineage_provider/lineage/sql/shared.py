"""What the static extractor's steps hand each other: a query's result, a source in scope, confidences."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlglot.optimizer.scope import Scope

from airflow_lineage_provider.lineage.model import ColumnInput, Dataset, Origin
from airflow_lineage_provider.lineage.sql.catalog import TableInfo

# Confidence when part of the lineage could not be known from the text.
PARTIAL_CONFIDENCE = 0.5
# Confidence when tables had no schema but every column was still resolved unambiguously.
UNCHECKED_CONFIDENCE = 0.9


@dataclass(slots=True)  # slots: a statement makes one per relation per scope, and reads them per column
class Source:
    """A relation in a FROM clause, as a column reference reaches it."""

    kind: str  # table | scope | udtf | func | pivot | values
    node: Any = None  # exp.Table / Scope / exp.Lateral / exp.Pivot / exp.Values
    # A table's, in the order of ``catalog.NamedTable`` (what ``Catalog.table`` tells of a table's name):
    name: str | None = None  # table: catalog name (or path)
    info: TableInfo | None = None
    dataset: Dataset | None = None
    # A table with a schema, not a view: its columns are the table's own (``Resolver.column_origins``' fast path).
    plain: bool = False
    label: str = ""  # a table: its dataset's label, the table of its columns' origins
    # A plain table: its columns' origins made so far (``TableInfo.origins_made``), read before asking for one.
    made: dict[str, frozenset[Origin] | None] | None = None
    inner: Source | None = None  # pivot: the pivoted relation
    outer_scope: Scope | None = None  # udtf/func/pivot: the scope whose columns they read
    hidden: bool = False  # a pivoted relation: only its pivot's output is visible by column name
    noted: bool = False  # a plain table: its dataset is in the result's inputs (at its first column read)


@dataclass
class Result:
    """A query's lineage as the resolver hands it to the extractor: each output column with its origins,
    the indirect inputs, the datasets read, what could not be known and how sure it is.

    ``indirect``: each input under (table, field, subtype, masking), what tells indirect inputs apart: the
    conditions name the same columns again and again, and a key looked up costs less than an input made."""

    columns: list[tuple[str, frozenset[Origin]]]
    indirect: dict[tuple[str, str, str, bool], ColumnInput] = field(default_factory=dict)
    inputs: dict[str, Dataset] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    confidence: float = 1.0
