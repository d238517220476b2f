"""The one lineage model: what XCom, the CLI, OpenLineage facets and the UI all read.

A ``LineageReport`` is a list of ``StatementLineage``, one per write (or per bare
query) of a submitted script. ``to_dict``/``from_dict`` give the JSON document
``airflow-lineage/1`` described in docs/document.md; nothing else defines its shape.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import partial
from operator import attrgetter
from typing import Any, Iterable, NamedTuple, NoReturn

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


class DocumentError(ValueError):
    """A value that is not a lineage document of this format, said as where and what.

    ``where`` walks down from the document (``statement 2 (index 4)``, ``column 'name'``, ``input 1``:
    statements and inputs are counted from 1, as a person reads the list); ``what`` is what is wrong
    there. The one error every reader of a document (CLI, UI API, OpenLineage) catches.
    """

    def __init__(self, what: str, where: tuple[str, ...] = ()) -> None:
        self.what = what
        self.where = where
        super().__init__(f"{', '.join(where)}: {what}" if where else what)

    def under(self, place: str) -> DocumentError:
        """The same error one level up: ``place`` is where the value that held it is."""
        return DocumentError(self.what, (place, *self.where))


_KINDS = {dict: "an object", list: "a list", str: "a string", int: "a number", float: "a number",
          bool: "a boolean", type(None): "null"}


def _kind(value: Any) -> str:
    return _KINDS.get(type(value), type(value).__name__)


def _wrong(d: dict[str, Any], key: str, expected: str) -> NoReturn:
    raise DocumentError(f"{key!r} is {_kind(d[key])}, not {expected}")


def _object(value: Any) -> dict[str, Any]:
    if type(value) is not dict:
        raise DocumentError(f"it is {_kind(value)}, not an object")
    return value


def _required(d: dict[str, Any], key: str) -> Any:
    try:
        return d[key]
    except KeyError:
        raise DocumentError(f"key {key!r} is missing") from None


def _string(d: dict[str, Any], key: str, default: str | None = "") -> Any:
    """``d[key]``, a string (or ``default`` when absent; a ``None`` default allows null too)."""
    value = d.get(key, default)
    if type(value) is not str and not (default is None and value is None):
        _wrong(d, key, "a string" if default is not None else "a string or null")
    return value


def _strings(d: dict[str, Any], key: str) -> tuple[str, ...]:
    value = d.get(key, [])
    if type(value) is not list:
        _wrong(d, key, "a list of strings")
    for n, item in enumerate(value, 1):
        if type(item) is not str:
            raise DocumentError(f"item {n} of {key!r} is {_kind(item)}, not a string")
    return tuple(value)


def stronger(a: str, b: str) -> str:
    """The subtype of two direct steps applied one after the other."""
    return a if _DIRECT_RANK.get(a, 1) >= _DIRECT_RANK.get(b, 1) else b


# Numeric types in widening order, under both Spark's JSON names and SQL's.
# Spark's numeric types in widening order (aliases beside): the one order both the cast rule below and
# the static extractor's set-operation widening (lineage/sql/widening.py) read.
NUMERIC_RANK = {"tinyint": 0, "byte": 0, "smallint": 1, "short": 1, "int": 2, "integer": 2, "bigint": 3, "long": 3,
             "float": 4, "real": 4, "double": 5}


def widens(source: str | None, target: str | None) -> bool:
    """The identity rule for casts: a cast that keeps every value (same type, or a wider number).

    Both extractors use it, so that a cast is IDENTITY or TRANSFORMATION the same way in each.
    """
    if not isinstance(source, str) or not isinstance(target, str):
        return False
    if source == target:
        return True
    if source in NUMERIC_RANK and target in NUMERIC_RANK:
        return NUMERIC_RANK[source] <= NUMERIC_RANK[target]
    return source in NUMERIC_RANK and target.startswith("decimal") and NUMERIC_RANK[source] <= 3


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
        """The dataset of a document; ``DocumentError`` saying what is wrong when ``d`` is not one."""
        d = _object(d)
        namespace, name = _required(d, "namespace"), _required(d, "name")
        if type(namespace) is not str:
            _wrong(d, "namespace", "a string")
        if type(name) is not str:
            _wrong(d, "name", "a string")
        return cls(namespace=namespace, name=name, table=_string(d, "table", None), mode=_string(d, "mode", None))

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
        """The input of a document; ``DocumentError`` saying what is wrong when ``d`` is not one."""
        return _input_of(d)


def _input_of(d: dict[str, Any]) -> ColumnInput:
    """``ColumnInput.from_dict`` through the fast constructor: a document holds thousands of them, so the
    types are checked in one test and the wrong one looked for only when it fails."""
    if type(d) is not dict:
        _object(d)
    get = d.get
    table, field = get("table"), get("field")
    kind, subtype = get("type", DIRECT), get("subtype", IDENTITY)
    expression, masking = get("expression", ""), get("masking", False)
    if (type(table) is not str or type(field) is not str or type(kind) is not str or type(subtype) is not str
            or type(expression) is not str or type(masking) is not bool):
        _input_problem(d)
    return ColumnInput.make(table, field, kind, subtype, expression, masking)


def _input_problem(d: dict[str, Any]) -> NoReturn:
    for key in ("table", "field"):
        _required(d, key)
        _string(d, key)
    for key in ("type", "subtype", "expression"):
        _string(d, key)
    _wrong(d, "masking", "true or false")


def _inputs(value: Any, what: str) -> tuple[ColumnInput, ...]:
    """A list of inputs; a wrong one is named by its place in the list, counted from 1."""
    if type(value) is not list:
        raise DocumentError(f"it is {_kind(value)}, not a list of inputs", (what,))
    try:
        return tuple(map(_input_of, value))
    except DocumentError:
        for n, item in enumerate(value, 1):
            try:
                _input_of(item)
            except DocumentError as e:
                raise e.under(f"input {n}").under(what) from None
        raise


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


# ``origin((table, field, subtype, expression, masking))``: an ``Origin`` made in C, at half the cost of
# ``Origin(...)``, whose NamedTuple ``__new__`` is a Python function (a resolver makes thousands).
origin = partial(tuple.__new__, Origin)


def direct_inputs(origins: Iterable[Origin]) -> tuple[ColumnInput, ...]:
    """A target column's direct inputs, in the document's order; a copy names its source column."""
    made = [ColumnInput.make(table, field, DIRECT, subtype, expression or field, masking)
            for table, field, subtype, expression, masking in origins]
    if len(made) > 1:  # most columns have one origin: nothing to order
        made.sort(key=INPUT_ORDER)
    return tuple(made)


def unique_names(columns: Iterable[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """``columns`` with each repeated name told apart by its occurrence: ``k``, ``k (2)``, ``k (3)``.

    A bare query may return two columns of one name (``SELECT a.k, b.k``, a star over a join);
    the document keys a statement's columns by name, so without this the last one would silently
    replace the first. A table never has two columns of one name, so no write is renamed.
    """
    columns = list(columns)
    if len({name for name, _ in columns}) == len(columns):
        return columns  # no name repeated (the common case): each is its own, told in one pass
    return _told_apart(columns)


def _told_apart(columns: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """``unique_names``' loop: each name taken in turn, a repeat given the first free ``name (n)``."""
    out: list[tuple[str, Any]] = []
    taken: set[str] = set()
    for name, value in columns:
        n, unique = 1, name
        while unique in taken:
            n += 1
            unique = f"{name} ({n})"
        taken.add(unique)
        out.append((unique, value))
    return out


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
        d = _object(d)
        return cls(static=_string(d, "static", UNAVAILABLE), only_plan=_strings(d, "only_plan"),
                   only_static=_strings(d, "only_static"), reason=_string(d, "reason"))


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
           inputs: Iterable[Dataset] | dict[str, Dataset], columns: Iterable[tuple[str, Iterable[Origin]]],
           indirect: Iterable[ColumnInput] | dict[tuple[str, str, str, bool], ColumnInput],
           warnings: tuple[str, ...]) -> StatementLineage:
        """What an extractor resolved, in the document's order: each target column's origins as its
        direct inputs, the inputs by label, the indirect inputs sorted. Both extractors build here.

        ``inputs`` may be a dict under their labels, ``indirect`` one under their ``(table, field, subtype,
        masking)`` (all of type INDIRECT with no expression, as the resolvers make them): their keys sort as
        they do, compared in C with no attribute read (reading six attributes of each input was two thirds
        of sorting a TPC-DS query's indirect inputs)."""
        # Made as ``ColumnInput.make`` makes an input: the frozen dataclass's ``__init__`` sets each of the ten
        # fields through ``object.__setattr__``, and every statement of both extractors is made here.
        obj = _object_new(cls)
        _object_setattr(obj, "__dict__", {
            "index": index, "sql": sql, "method": method, "confidence": confidence, "target": target,
            "inputs": tuple(map(inputs.__getitem__, sorted(inputs))) if type(inputs) is dict
            else tuple(sorted(inputs, key=attrgetter("label"))),
            "columns": tuple((name, direct_inputs(origins)) for name, origins in unique_names(columns)),
            "indirect": tuple(map(indirect.__getitem__, sorted(indirect))) if type(indirect) is dict
            else tuple(sorted(indirect, key=INPUT_ORDER)),
            "warnings": warnings, "agreement": None})
        return obj

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
        """A statement of a document; ``DocumentError`` saying where and what when ``d`` is not one."""
        d = _object(d)
        index = _required(d, "index")
        if type(index) is not int:
            _wrong(d, "index", "a whole number")
        confidence = d.get("confidence", 1.0)
        if type(confidence) is not float and type(confidence) is not int:
            _wrong(d, "confidence", "a number")
        target, agreement = d.get("target"), d.get("agreement")
        inputs, columns = d.get("inputs", []), d.get("columns", {})
        if type(inputs) is not list:
            _wrong(d, "inputs", "a list of datasets")
        if type(columns) is not dict:
            _wrong(d, "columns", "an object of column names and their inputs")
        return cls(
            index=index,
            sql=_string(d, "sql"),
            method=_string(d, "method", "plan"),
            confidence=float(confidence),
            target=None if target is None else _part(Dataset.from_dict, target, "target"),
            inputs=tuple(_part(Dataset.from_dict, x, f"input dataset {n}") for n, x in enumerate(inputs, 1)),
            columns=tuple((name, _inputs(srcs, f"column {name!r}")) for name, srcs in columns.items()),
            indirect=_inputs(d.get("indirect", []), "indirect inputs"),
            warnings=_strings(d, "warnings"),
            agreement=None if agreement is None else _part(Agreement.from_dict, agreement, "agreement"),
        )


def _part(read: Any, value: Any, place: str) -> Any:
    """``read(value)``, a part of the document at ``place``: an error in it says so."""
    try:
        return read(value)
    except DocumentError as e:
        raise e.under(place) from None


def _statement_place(n: int, d: Any) -> str:
    index = d.get("index") if type(d) is dict else None
    return f"statement {n} (index {index})" if type(index) is int else f"statement {n}"


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
        """The document ``d`` (parsed JSON); ``DocumentError`` saying where and what is wrong when it is
        not a lineage document of this format, whatever else it is."""
        if type(d) is not dict:
            raise DocumentError(f"it is {_kind(d)}, not an object with \"format\": {FORMAT!r}")
        if "format" not in d:
            raise DocumentError(f"key 'format' is missing: a lineage document says \"format\": {FORMAT!r}")
        if d["format"] != FORMAT:
            raise DocumentError(f"its format is {d['format']!r}, not {FORMAT!r}")
        statements = d.get("statements", [])
        if type(statements) is not list:
            _wrong(d, "statements", "a list of statements")
        return cls(statements=tuple(_part(StatementLineage.from_dict, s, _statement_place(n, s))
                                    for n, s in enumerate(statements, 1)),
                   warnings=_strings(d, "warnings"))

    def with_warning(self, message: str) -> LineageReport:
        return LineageReport(self.statements, self.warnings + (message,))
