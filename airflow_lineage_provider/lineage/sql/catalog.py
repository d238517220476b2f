"""What the static extractor knows of tables: a catalog fed by DDL, a parameter and a cache.

Lookups go, in order, to the tables the script's own DDL created (CREATE / DROP /
ALTER TABLE ADD COLUMNS, tracked in order), the operator's ``schema`` parameter
(``{"db.table": {"col": "type", ...}}``, ``{"db.table": ["col", ...]}`` or DDL
files), and a ``SchemaCache`` (a JSON file the hook can fill from real runs). A
table dropped by the script is gone whatever the parameter or the cache say.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, NamedTuple

from airflow_lineage_provider.lineage import naming
from airflow_lineage_provider.lineage.model import IDENTITY, SPARK_CATALOG, ColumnInput, Dataset, Origin, origin
from airflow_lineage_provider.lineage.schema_cache import SchemaCache
from airflow_lineage_provider.lineage.sql.table_functions import TableFunction


@dataclass
class ViewLineage:
    """A view defined in the script: its columns' origins, and what its rows depend on."""

    columns: dict[str, frozenset[Origin]]
    indirect: frozenset[ColumnInput]
    inputs: dict[str, Dataset]
    warnings: tuple[str, ...] = ()


_NONE = object()  # not looked up yet (``TableInfo.origins``)


@dataclass
class TableInfo:
    """Columns (in order, with their type text) of a table or view; a view keeps its lineage."""

    name: str
    columns: list[tuple[str, str]]
    location: str | None = None
    partitions: tuple[str, ...] = ()
    view: Any = None  # a ViewLineage for views defined in the script
    source: str = "ddl"  # ddl | parameter | cache

    @property
    def names(self) -> list[str]:
        return [c for c, _ in self.columns]

    def lookup(self, column: str) -> tuple[str, str] | None:
        """(name as stored, type) of a column, case-insensitively (indexed once: wide tables stay linear)."""
        index = self.__dict__.get("_index")
        if index is None or index[0] is not self.columns:
            index = (self.columns, {})
            for c, t in self.columns:
                index[1].setdefault(c.lower(), (c, t))
            self.__dict__["_index"] = index
        return index[1].get(column.lower())

    def origins(self, label: str, column: str) -> frozenset[Origin] | None:
        """``column`` read as it is from this table (named ``label``), under the name the table stores it by;
        ``None`` when the table has no such column. Made once per table and column: statement after
        statement reads the same columns."""
        known = self.origins_made(label)
        found = known.get(column, _NONE)
        if found is _NONE:
            stored = self.lookup(column)
            found = known[column] = frozenset({origin((label, stored[0], IDENTITY, "", False))}) if stored else None
        return found

    def origins_made(self, label: str) -> dict[str, frozenset[Origin] | None]:
        """What ``origins`` made so far for the table named ``label``, per column as a query writes it: a
        resolver reads it first and asks ``origins`` for a column not in it (a dictionary look-up per column,
        not two calls). Valid while the table's column list is the same object (DDL replaces it)."""
        memo = self.__dict__.get("_origins")
        if memo is None or memo[0] is not self.columns:
            memo = self.__dict__["_origins"] = (self.columns, {})
        known = memo[1].get(label)
        if known is None:
            known = memo[1][label] = {}
        return known

    def type_of(self, column: str) -> str | None:
        found = self.lookup(column)
        return found[1] if found else None


class NamedTable(NamedTuple):
    """What a query's name for a table means (``Catalog.table``): the fields of the resolver's ``Source`` of a
    table, in their order."""

    name: str  # catalog.db.table, lower-cased
    info: TableInfo | None
    dataset: Dataset
    plain: bool  # a table with a schema, not a view: its columns are its own
    label: str  # the dataset's label: the table of its columns' origins
    made: dict[str, frozenset[Origin] | None] | None  # a plain table's origins made so far (``origins_made``)


@dataclass
class Catalog:
    """Tables known to one extraction: script DDL first, then the parameter, then the cache."""

    database: str = "default"
    tables: dict[str, TableInfo] = field(default_factory=dict)
    parameter: dict[str, TableInfo] = field(default_factory=dict)
    cache: SchemaCache | None = None
    dropped: set[str] = field(default_factory=set)
    version: int = 0
    functions: dict[str, TableFunction] = field(default_factory=dict)  # SQL table functions the script defined

    def copy(self) -> Catalog:
        return Catalog(self.database, dict(self.tables), self.parameter, self.cache, set(self.dropped), self.version,
                       dict(self.functions))

    def full_name(self, parts: Iterable[str]) -> str:
        """``catalog.db.table`` in lower case, from 1 to 3 name parts."""
        parts = [p for p in parts if p]
        if len(parts) == 1:
            parts = [SPARK_CATALOG, self.database, parts[0]]
        elif len(parts) == 2:
            parts = [SPARK_CATALOG, *parts]
        return ".".join(p.lower() for p in parts)

    def get(self, name: str) -> TableInfo | None:
        if name in self.tables:
            return self._typed(self.tables[name])
        if name in self.dropped:
            return None
        if name in self.parameter:
            return self.parameter[name]
        if self.cache is not None:
            cols = self.cache.get(name)
            if cols is not None:
                return TableInfo(name, cols, source="cache")
        return None

    def table(self, parts: tuple[str, str, str]) -> NamedTable:
        """The table a query names by ``parts`` (catalog, database, name).

        Remembered while neither the script's DDL nor its USE change what a name means (statement after
        statement reads the same tables; DDL puts a new ``TableInfo``, so a table's origins made stay its
        own); a table the cache gives, or none gives, is looked up again each time (the cache may learn it)."""
        state = (self.version, self.database)
        memo = self.__dict__.get("_tables_named")
        if memo is None or memo[0] != state:
            memo = self.__dict__["_tables_named"] = (state, {})
        found = memo[1].get(parts)
        if found is None:
            name = self.full_name(parts)
            info = self.get(name)
            dataset = naming.from_location(info.location if info else None, table=name)
            plain = info is not None and info.view is None
            label = dataset.label
            found = NamedTable(name, info, dataset, plain, label, info.origins_made(label) if plain else None)
            if info is not None and info.source != "cache":
                memo[1][parts] = found
        return found

    def put(self, info: TableInfo) -> None:
        self.tables[info.name] = info
        self.dropped.discard(info.name)
        self.version += 1

    def drop(self, name: str) -> None:
        self.tables.pop(name, None)
        self.dropped.add(name)
        self.version += 1

    def known(self) -> dict[str, TableInfo]:
        """Every table a lookup can reach (for the sqlglot schema): cache < parameter < script."""
        out: dict[str, TableInfo] = {}
        if self.cache is not None:
            for name in self.cache.tables():
                cols = self.cache.get(name)
                if cols is not None:
                    out[name] = TableInfo(name, cols, source="cache")
        out.update(self.parameter)
        for name in self.dropped:
            out.pop(name, None)
        out.update((name, self._typed(info)) for name, info in self.tables.items())
        return out

    def spellings(self) -> dict[str, str] | None:
        """Per column name in lower case, the one case the tables a lookup reaches give it (``""`` where two give
        two): whether a star's column can take another case from a table of its query, told without finding the
        query's tables (``SqlExtractor._lineage``). ``None`` with a cache, which may learn a table at any time.
        Made once per version of the script's tables."""
        if self.cache is not None:
            return None
        memo = self.__dict__.get("_spellings")
        if memo is None or memo[0] != self.version:
            found: dict[str, str] = {}
            for info in self.known().values():
                for column, _ in info.columns:
                    lower = column.lower()
                    seen = found.setdefault(lower, column)
                    if seen != column:
                        found[lower] = ""
            memo = self.__dict__["_spellings"] = (self.version, found)
        return memo[1]

    def _typed(self, info: TableInfo) -> TableInfo:
        """A table the script created with a query (its column types are not inferred from the text), its
        types those the cache saw of the same columns: what a run's plans (or the last run's) read of it."""
        if self.cache is None or info.view is not None or all(t for _, t in info.columns):
            return info
        memo = self.__dict__.setdefault("_typed_memo", {})  # per table made: one typed copy (its lookup index)
        found = memo.get(id(info))
        if found is not None and found[0] is info:
            return found[1]
        memo[id(info)] = (info, self._with_cache_types(info))
        return memo[id(info)][1]

    def _with_cache_types(self, info: TableInfo) -> TableInfo:
        seen = self.cache.get(info.name) if self.cache is not None else None
        if not seen:
            return info
        types = {c.lower(): t for c, t in seen}
        if [c.lower() for c, _ in info.columns] != [c.lower() for c, _ in seen]:
            return info
        return TableInfo(info.name, [(c, t or types.get(c.lower(), "")) for c, t in info.columns], info.location,
                         info.partitions, info.view, info.source)


def parameter_tables(schema: Mapping[str, Any] | None, database: str = "default") -> dict[str, TableInfo]:
    """The operator's ``schema`` parameter as tables: ``{table: {col: type} | [col, ...] | [[col, type], ...]}``."""
    out: dict[str, TableInfo] = {}
    helper = Catalog(database)
    for table, cols in (schema or {}).items():
        name = helper.full_name(str(table).replace("`", "").split("."))
        if isinstance(cols, Mapping):
            columns = [(str(c), str(t or "")) for c, t in cols.items()]
        else:
            columns = [(c, "") if isinstance(c, str) else (str(c[0]), str(c[1]) if len(c) > 1 else "") for c in cols]
        out[name] = TableInfo(name, columns, source="parameter")
    return out


def struct_fields(data_type: str) -> list[tuple[str, str]]:
    """(name, type) of the fields of ``STRUCT<a: T, b: STRUCT<..>>`` (top level), ``[]`` for another type."""
    text = data_type.strip()
    if not text.upper().startswith("STRUCT<") or not text.endswith(">"):
        return []
    body, depth, start, parts = text[7:-1], 0, 0, []
    for i, ch in enumerate(body):
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(body[start:i])
            start = i + 1
    parts.append(body[start:])
    out = []
    for part in (p.strip() for p in parts if p.strip()):
        name, _, kind = part.partition(":") if ":" in part.split("<")[0] else part.partition(" ")
        out.append((name.strip().strip("`"), kind.strip()))
    return out


def spelled_path(data_type: str | None, path: str) -> str:
    """``path`` (``geo.lat``, as a query writes it) with each field named as the struct type names it
    (``Geo.Lat``): Spark names a field it reads by the type's spelling. As given where the type is unknown."""
    parts = path.split(".")
    out = []
    for i, part in enumerate(parts):
        fields = {n.lower(): (n, t) for n, t in struct_fields(data_type or "")}
        found = fields.get(part.lower())
        if found is None:
            return ".".join(out + parts[i:])
        out.append(found[0])
        data_type = found[1]
    return ".".join(out)
