"""The one lineage model: what XCom, the CLI, OpenLineage facets and the UI all read.

A ``LineageReport`` is a list of ``StatementLineage``, one per write (or per bare
query) of a submitted script. ``to_dict``/``from_dict`` give the JSON document
``airflow-lineage/1`` described in docs/document.md; nothing else defines its shape.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, Iterable, NamedTuple

FORMAT = "airflow-lineage/1"
# The XCom key a task's lineage document is pushed under (operators) and read from (UI, CLI).
XCOM_KEY = "column_lineage"
# Spark's built-in session catalog: the first part of every catalog table's name, and the
# namespace of a table whose storage location is unknown.
SPARK_CATALOG = "spark_catalog"

DIRECT = "DIRECT"
INDIRECT = "INDIRECT"

# OpenLineage column-lineage facet 1-2-0 subtypes.
IDENTITY = "IDENTITY"
TRANSFORMATION = "TRANSFORMATION"
AGGREGATION = "AGGREGATION"
JOIN = "JOIN"
FILTER = "FILTER"
GROUP_BY = "GROUP_BY"
SORT = "SORT"
WINDOW = "WINDOW"
CONDITIONAL = "CONDITIONAL"

# How strong a direct subtype is when steps compose: a column that is
# aggregated anywhere on its path is an aggregation, and so on.
_DIRECT_RANK = {IDENTITY: 0, TRANSFORMATION: 1, AGGREGATION: 2}


def stronger(a: str, b: str) -> str:
    """The subtype of two direct steps applied one after the other."""
    return a if _DIRECT_RANK.get(a, 1) >= _DIRECT_RANK.get(b, 1) else b


# Numeric types in widening order, under both Spark's JSON names and SQL's.
_WIDENING = {"tinyint": 0, "byte": 0, "smallint": 1, "short": 1, "int": 2, "integer": 2, "bigint": 3, "long": 3,
             "float": 4, "real": 4, "double": 5}


def widens(source: str | None, target: str | None) -> bool:
    """The identity rule for casts: a cast that keeps every value (same type, or a wider number).

    Both extractors use it, so that a cast is IDENTITY or TRANSFORMATION the same way in each.
    """
    if not isinstance(source, str) or not isinstance(target, str):
        return False
    if source == target:
        return True
    if source in _WIDENING and target in _WIDENING:
        return _WIDENING[source] <= _WIDENING[target]
    return source in _WIDENING and target.startswith("decimal") and _WIDENING[source] <= 3


@dataclass(frozen=True)
class Dataset:
    """A table or path read or written. ``table`` is the catalog name, if any."""

    namespace: str
    name: str
    table: str | None = None
    mode: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"table": self.table, "namespace": self.namespace, "name": self.name}
        if self.mode is not None:
            out["mode"] = self.mode
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Dataset:
        return cls(namespace=d["namespace"], name=d["name"], table=d.get("table"), mode=d.get("mode"))

    @property
    def label(self) -> str:
        """What a person calls it: the table name, else the path."""
        return self.table or self.name


_object_new = object.__new__
_object_setattr = object.__setattr__


@dataclass(frozen=True, order=True)
class ColumnInput:
    """One source column of a target column (direct) or of a whole statement (indirect)."""

    table: str
    field: str
    type: str = DIRECT
    subtype: str = IDENTITY
    expression: str = ""
    masking: bool = False

    @classmethod
    def make(cls, table: str, field: str, type: str, subtype: str, expression: str, masking: bool) -> ColumnInput:
        """The same as ``ColumnInput(...)``, at half the cost: a frozen dataclass's ``__init__`` sets
        each field through ``object.__setattr__``, and an extraction builds thousands of these."""
        obj = _object_new(cls)
        _object_setattr(obj, "__dict__", {"table": table, "field": field, "type": type, "subtype": subtype,
                                          "expression": expression, "masking": masking})
        return obj

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "table": self.table,
            "field": self.field,
            "type": self.type,
            "subtype": self.subtype,
        }
        if self.type == DIRECT:
            out["expression"] = self.expression
        out["masking"] = self.masking
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ColumnInput:
        return cls(
            table=d["table"],
            field=d["field"],
            type=d.get("type", DIRECT),
            subtype=d.get("subtype", IDENTITY),
            expression=d.get("expression", ""),
            masking=bool(d.get("masking", False)),
        )


def _input_of(d: dict[str, Any]) -> ColumnInput:
    """``ColumnInput.from_dict`` through the fast constructor: a document holds thousands of them."""
    get = d.get
    return ColumnInput.make(d["table"], d["field"], get("type", DIRECT), get("subtype", IDENTITY),
                            get("expression", ""), bool(get("masking", False)))


# ColumnInput's own order as a sort key: compared field by field in C, not by the generated __lt__.
INPUT_ORDER = attrgetter("table", "field", "type", "subtype", "expression", "masking")


class Origin(NamedTuple):
    """One source column reached from an output column, with what happened on the way.

    What both extractors resolve a column to; ``direct_inputs`` turns them into the document's inputs.
    """

    table: str
    field: str
    subtype: str
    expression: str
    masking: bool


def direct_inputs(origins: Iterable[Origin]) -> tuple[ColumnInput, ...]:
    """A target column's direct inputs, in the document's order; a copy names its source column."""
    return tuple(sorted((ColumnInput.make(o.table, o.field, DIRECT, o.subtype, o.expression or o.field, o.masking)
                         for o in origins), key=INPUT_ORDER))


SAME = "same"
DIFFERS = "differs"
UNAVAILABLE = "unavailable"


@dataclass(frozen=True)
class Agreement:
    """Whether the static extractor, run on the same statement, found the plan's lineage.

    ``static``: ``same``, ``differs`` (the edges each found alone are listed, as
    ``column <- table.field SUBTYPE``, ``(indirect) <- table.field SUBTYPE`` for an
    indirect one) or ``unavailable`` (``reason`` says why: no SQL text, or the static
    extractor gave no lineage for it). A differing statement is the first place to look
    when lineage looks wrong.
    """

    static: str
    only_plan: tuple[str, ...] = ()
    only_static: tuple[str, ...] = ()
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"static": self.static, "only_plan": list(self.only_plan),
                               "only_static": list(self.only_static)}
        if self.reason:
            out["reason"] = self.reason
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Agreement:
        return cls(static=str(d.get("static", UNAVAILABLE)), only_plan=tuple(d.get("only_plan") or ()),
                   only_static=tuple(d.get("only_static") or ()), reason=str(d.get("reason") or ""))


@dataclass(frozen=True)
class StatementLineage:
    """Lineage of one write (or bare query) of the script's statement ``index``."""

    index: int
    sql: str
    method: str  # "plan", "sql" or "none"
    confidence: float
    target: Dataset | None
    inputs: tuple[Dataset, ...] = ()
    columns: tuple[tuple[str, tuple[ColumnInput, ...]], ...] = ()
    indirect: tuple[ColumnInput, ...] = ()
    warnings: tuple[str, ...] = ()
    agreement: Agreement | None = None  # plan lineage only: the static extractor's view of it

    @classmethod
    def of(cls, *, index: int, sql: str, method: str, confidence: float, target: Dataset | None,
           inputs: Iterable[Dataset], columns: Iterable[tuple[str, Iterable[Origin]]],
           indirect: Iterable[ColumnInput], warnings: tuple[str, ...]) -> StatementLineage:
        """What an extractor resolved, in the document's order: each target column's origins as its
        direct inputs, the inputs by label, the indirect inputs sorted. Both extractors build here."""
        return cls(index=index, sql=sql, method=method, confidence=confidence, target=target,
                   inputs=tuple(sorted(inputs, key=attrgetter("label"))),
                   columns=tuple((name, direct_inputs(origins)) for name, origins in columns),
                   indirect=tuple(sorted(indirect, key=INPUT_ORDER)), warnings=warnings)

    @property
    def column_map(self) -> dict[str, tuple[ColumnInput, ...]]:
        return dict(self.columns)

    def to_dict(self) -> dict[str, Any]:
        out = {
            "index": self.index,
            "sql": self.sql,
            "method": self.method,
            "confidence": self.confidence,
            "target": self.target.to_dict() if self.target else None,
            "inputs": [d.to_dict() for d in self.inputs],
            "columns": {name: [c.to_dict() for c in srcs] for name, srcs in self.columns},
            "indirect": [c.to_dict() for c in self.indirect],
            "warnings": list(self.warnings),
        }
        if self.agreement is not None:
            out["agreement"] = self.agreement.to_dict()
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> StatementLineage:
        return cls(
            index=d["index"],
            sql=d.get("sql", ""),
            method=d.get("method", "plan"),
            confidence=float(d.get("confidence", 1.0)),
            target=Dataset.from_dict(d["target"]) if d.get("target") else None,
            inputs=tuple(Dataset.from_dict(x) for x in d.get("inputs", [])),
            columns=tuple((name, tuple(map(_input_of, srcs))) for name, srcs in d.get("columns", {}).items()),
            indirect=tuple(map(_input_of, d.get("indirect", []))),
            warnings=tuple(d.get("warnings", [])),
            agreement=Agreement.from_dict(d["agreement"]) if d.get("agreement") else None,
        )


@dataclass(frozen=True)
class LineageReport:
    """Everything a task learned about its lineage; the XCom value ``column_lineage``."""

    statements: tuple[StatementLineage, ...] = ()
    warnings: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"format": FORMAT, "statements": [s.to_dict() for s in self.statements]}
        if self.warnings:
            out["warnings"] = list(self.warnings)
        return out

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(self.to_dict(), **kwargs)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> LineageReport:
        if d.get("format") != FORMAT:
            raise ValueError(f"not a lineage document of format {FORMAT!r}: {d.get('format')!r}")
        return cls(
            statements=tuple(StatementLineage.from_dict(s) for s in d.get("statements", [])),
            warnings=tuple(d.get("warnings", [])),
        )

    def with_warning(self, message: str) -> LineageReport:
        return LineageReport(self.statements, self.warnings + (message,))
