"""The lineage document as OpenLineage: ``LineageReport`` -> ``OperatorLineage``.

Built from openlineage-python's generated facet classes, never from hand-made dicts:

- one output dataset per written table or path, each with its own
  ``ColumnLineageDatasetFacet`` (1-2-0: ``fields`` with ``inputFields`` and their
  transformations, ``dataset`` for the indirect inputs), a ``SchemaDatasetFacet``
  and, for a catalog table, a ``SymlinksDatasetFacet`` with the table name;
- every input dataset with the fields the lineage knows of it;
- a ``SQLJobFacet`` with the submitted script;
- the run facet ``airflowLineage_extraction`` (``AirflowLineageExtractionRunFacet``):
  extraction method(s), confidence and warnings, so a reader can judge the lineage.

Datasets are named by the document's ``namespace``/``name`` (OpenLineage naming,
worked out in ``lineage.naming``). A ``ColumnInput`` names its table only by
label (catalog name, else path), so it is mapped through the statement's
``inputs`` to the dataset's namespace/name.

Imported only by the operator's OpenLineage methods: the OpenLineage provider
stays optional for running the operator.
"""

from __future__ import annotations

import traceback
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import attr
from openlineage.client.event_v2 import InputDataset, OutputDataset
from openlineage.client.facet_v2 import RunFacet, column_lineage_dataset, schema_dataset, sql_job, symlinks_dataset

from airflow_lineage_provider.lineage.model import INDIRECT, SPARK_CATALOG, ColumnInput, Dataset, LineageReport

if TYPE_CHECKING:
    from airflow.providers.openlineage.extractors import OperatorLineage

# Where this project publishes its facet schema. The repository address is a placeholder until the
# project's public home is settled; the tag pins one immutable version of the schema, as the spec asks.
PROJECT_URL = "https://github.com/airflow-lineage-provider/airflow-lineage-provider"
PROJECT_VERSION = "0.1.0"
PRODUCER = f"{PROJECT_URL}/tree/v{PROJECT_VERSION}"
EXTRACTION_FACET_KEY = "airflowLineage_extraction"
EXTRACTION_FACET_SCHEMA_FILE = "schemas/AirflowLineageExtractionRunFacet.json"
EXTRACTION_FACET_SCHEMA_URL = (
    f"{PROJECT_URL}/raw/v{PROJECT_VERSION}/airflow_lineage_provider/openlineage/{EXTRACTION_FACET_SCHEMA_FILE}"
    "#/$defs/AirflowLineageExtractionRunFacet"
)
SQL_DIALECT = "spark"
SYMLINK_TYPE_TABLE = "TABLE"

START_WARNING = "column lineage is extracted from Spark's plans while the job runs: it is reported on completion"
NOT_COMPUTED_WARNING = "no column lineage was computed for this run"
FAILED_WARNING = "the task failed: no column lineage is reported"


@attr.define
class StaticAgreement:
    """Whether the static extractor found the plan's lineage for a statement (``lineage/agreement.py``)."""

    static: str
    only_plan: list[str] = attr.field(factory=list)
    only_static: list[str] = attr.field(factory=list)
    reason: str | None = attr.field(default=None)


@attr.define
class StatementExtraction:
    """How one statement's lineage was extracted (an item of the run facet's ``statements``)."""

    index: int
    method: str
    confidence: float
    target: str | None = attr.field(default=None)
    warnings: list[str] = attr.field(factory=list)
    agreement: StaticAgreement | None = attr.field(default=None)


@attr.define
class AirflowLineageExtractionRunFacet(RunFacet):
    """How the column lineage of this run was extracted, so a reader can judge it.

    ``methods``: each extraction method used (``plan``, ``sql`` or ``none``);
    ``confidence``: the lowest of the statements'; ``warnings``: all of them,
    statement warnings prefixed with the statement's number; ``statements``: one
    entry per write (or bare query).
    """

    methods: list[str] = attr.field(factory=list)
    confidence: float = attr.field(default=1.0)
    warnings: list[str] = attr.field(factory=list)
    statements: list[StatementExtraction] = attr.field(factory=list)

    @staticmethod
    def _get_schema() -> str:
        return EXTRACTION_FACET_SCHEMA_URL


# -- the three moments ------------------------------------------------------------------


def lineage_on_start(sql: str | None, static: LineageReport | None = None) -> OperatorLineage:
    """Job facets, and the static lineage of the SQL text when there is one (``method: sql``);
    the plan's lineage replaces it on completion."""
    if static is None or not static.statements:
        return _operator_lineage(
            job_facets=job_facets(sql),
            run_facets={EXTRACTION_FACET_KEY: _no_lineage_facet(START_WARNING)},
        )
    return lineage_on_complete(static, sql)


def lineage_on_complete(report: LineageReport | dict[str, Any] | None, sql: str | None) -> OperatorLineage:
    """The full lineage of a successful run: datasets with column lineage, job and run facets."""
    if isinstance(report, dict):
        report = LineageReport.from_dict(report)
    if report is None:
        return _operator_lineage(
            job_facets=job_facets(sql),
            run_facets={EXTRACTION_FACET_KEY: _no_lineage_facet(NOT_COMPUTED_WARNING)},
        )
    try:
        inputs, outputs = datasets(report)
        facet = extraction_facet(report)
    except Exception as e:  # noqa: BLE001 - a document this code cannot read: say so, keep the job facets
        inputs, outputs = [], []
        facet = _no_lineage_facet(f"column lineage could not be converted to OpenLineage: {e.__class__.__name__}: {e}")
    return _operator_lineage(
        inputs=inputs, outputs=outputs, job_facets=job_facets(sql), run_facets={EXTRACTION_FACET_KEY: facet}
    )


def lineage_on_failure(sql: str | None, error: BaseException | str | None = None) -> OperatorLineage:
    """Job facets and the error; no datasets, so nothing reads as if the write had happened."""
    run_facets: dict[str, RunFacet] = {EXTRACTION_FACET_KEY: _no_lineage_facet(FAILED_WARNING)}
    error_facet = error_message_facet(error)
    if error_facet is not None:
        run_facets["errorMessage"] = error_facet
    return _operator_lineage(job_facets=job_facets(sql), run_facets=run_facets)


# -- facets -----------------------------------------------------------------------------


def job_facets(sql: str | None) -> dict[str, Any]:
    if not sql or not sql.strip():
        return {}
    return {"sql": sql_job.SQLJobFacet(query=sql, dialect=SQL_DIALECT, producer=PRODUCER)}


def extraction_facet(report: LineageReport) -> AirflowLineageExtractionRunFacet:
    statements = [
        StatementExtraction(
            index=s.index,
            method=s.method,
            confidence=float(s.confidence),
            target=s.target.label if s.target else None,
            warnings=list(s.warnings),
            agreement=StaticAgreement(static=s.agreement.static, only_plan=list(s.agreement.only_plan),
                                      only_static=list(s.agreement.only_static),
                                      reason=s.agreement.reason or None) if s.agreement else None,
        )
        for s in report.statements
    ]
    warnings = list(report.warnings) + [f"statement {s.index + 1}: {w}" for s in report.statements for w in s.warnings]
    methods = _unique(s.method for s in report.statements)
    if not methods and report.warnings:  # extraction failed as a whole
        methods = ["none"]
    if report.statements:
        confidence = min(float(s.confidence) for s in report.statements)
    else:
        confidence = 0.0 if report.warnings else 1.0
    return AirflowLineageExtractionRunFacet(
        methods=methods, confidence=confidence, warnings=warnings, statements=statements, producer=PRODUCER
    )


def error_message_facet(error: BaseException | str | None) -> RunFacet | None:
    """``ErrorMessageRunFacet`` of ``error``, if there is one and openlineage-python has the class."""
    if error is None:
        return None
    try:
        from openlineage.client.facet_v2 import error_message_run
    except ImportError:  # pragma: no cover - every supported openlineage-python has it
        return None
    stack = None
    if isinstance(error, BaseException) and error.__traceback__ is not None:
        stack = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    return error_message_run.ErrorMessageRunFacet(
        message=str(error), programmingLanguage="python", stackTrace=stack, producer=PRODUCER
    )


def _no_lineage_facet(warning: str) -> AirflowLineageExtractionRunFacet:
    return AirflowLineageExtractionRunFacet(methods=["none"], confidence=0.0, warnings=[warning], producer=PRODUCER)


# -- datasets ---------------------------------------------------------------------------


class _Fields:
    """Input fields in first-seen order, each with its distinct transformations in order."""

    def __init__(self) -> None:
        self._fields: dict[tuple[str, str, str], list[column_lineage_dataset.Transformation]] = {}

    def add(self, dataset: Dataset, column: ColumnInput) -> None:
        transformation = column_lineage_dataset.Transformation(
            type=column.type,
            subtype=column.subtype,
            description=(column.expression or None) if column.type != INDIRECT else None,
            masking=column.masking,
        )
        seen = self._fields.setdefault((dataset.namespace, dataset.name, column.field), [])
        if transformation not in seen:
            seen.append(transformation)

    def __bool__(self) -> bool:
        return bool(self._fields)

    def input_fields(self) -> list[column_lineage_dataset.InputField]:
        return [
            column_lineage_dataset.InputField(namespace=ns, name=name, field=field, transformations=list(ts))
            for (ns, name, field), ts in self._fields.items()
        ]


class _Output:
    def __init__(self, dataset: Dataset) -> None:
        self.dataset = dataset
        self.table = dataset.table
        self.columns: dict[str, _Fields] = {}
        self.indirect = _Fields()


class _Input:
    def __init__(self, dataset: Dataset) -> None:
        self.dataset = dataset
        self.table = dataset.table
        self.fields: dict[str, None] = {}


def datasets(report: LineageReport) -> tuple[list[InputDataset], list[OutputDataset]]:
    """Input and output datasets of every statement, merged by namespace/name.

    Statements writing the same dataset share one output whose column lineage is
    the union of theirs (an input field used by several statements lists each
    distinct transformation once).
    """
    inputs: dict[tuple[str, str], _Input] = {}
    outputs: dict[tuple[str, str], _Output] = {}

    def input_of(dataset: Dataset) -> _Input:
        entry = inputs.setdefault((dataset.namespace, dataset.name), _Input(dataset))
        entry.table = entry.table or dataset.table
        return entry

    for statement in report.statements:
        by_label: dict[str, Dataset] = {}
        for dataset in statement.inputs:
            input_of(dataset)
            by_label.setdefault(dataset.label, dataset)
            if dataset.table:
                by_label.setdefault(dataset.table, dataset)

        def resolve(column: ColumnInput) -> Dataset:
            dataset = by_label.get(column.table)
            if dataset is None:
                # Not among the statement's inputs (should not happen): name it as lineage.naming
                # names a table of unknown location, and list it as an input all the same.
                dataset = Dataset(namespace=SPARK_CATALOG, name=column.table, table=column.table)
                by_label[column.table] = dataset
            input_of(dataset).fields.setdefault(column.field, None)
            return dataset

        output = None
        if statement.target is not None:
            key = (statement.target.namespace, statement.target.name)
            output = outputs.setdefault(key, _Output(statement.target))
            output.table = output.table or statement.target.table
        for column_name, sources in statement.columns:
            fields = output.columns.setdefault(column_name, _Fields()) if output else None
            for column in sources:
                dataset = resolve(column)
                if fields is not None:
                    fields.add(dataset, column)
        for column in statement.indirect:
            dataset = resolve(column)
            if output is not None:
                output.indirect.add(dataset, column)

    return [_input_dataset(i) for i in inputs.values()], [_output_dataset(o) for o in outputs.values()]


def _input_dataset(entry: _Input) -> InputDataset:
    facets: dict[str, Any] = {}
    if entry.fields:
        facets["schema"] = _schema(entry.fields)
    if entry.table and "://" not in entry.table:  # a JDBC table without a Spark catalog name has none
        facets["symlinks"] = _symlinks(entry.table)
    return InputDataset(namespace=entry.dataset.namespace, name=entry.dataset.name, facets=facets)


def _output_dataset(entry: _Output) -> OutputDataset:
    facets: dict[str, Any] = {}
    if entry.columns:
        facets["schema"] = _schema(entry.columns)
    facets["columnLineage"] = column_lineage_dataset.ColumnLineageDatasetFacet(
        fields={
            name: column_lineage_dataset.Fields(inputFields=fields.input_fields())
            for name, fields in entry.columns.items()
            if fields  # a column made of literals only has no input field: it is in the schema alone
        },
        dataset=entry.indirect.input_fields(),
        producer=PRODUCER,
    )
    if entry.table and "://" not in entry.table:  # a JDBC table without a Spark catalog name has none
        facets["symlinks"] = _symlinks(entry.table)
    return OutputDataset(namespace=entry.dataset.namespace, name=entry.dataset.name, facets=facets)


def _schema(names: Iterable[str]) -> schema_dataset.SchemaDatasetFacet:
    # Only names: the lineage does not know column types, and a guessed type is worse than none.
    return schema_dataset.SchemaDatasetFacet(fields=_nested_fields(names), producer=PRODUCER)


def _nested_fields(names: Iterable[str]) -> list[schema_dataset.SchemaDatasetFacetFields]:
    """Schema fields from column names; a struct field read alone (``info.geo.lat``) is nested under
    its column (``info`` > ``geo`` > ``lat``), as OpenLineage's schema facet nests struct fields."""
    tree: dict[str, dict] = {}
    for name in names:
        node = tree
        for part in name.split("."):
            node = node.setdefault(part, {})

    def fields(level: dict[str, dict]) -> list[schema_dataset.SchemaDatasetFacetFields]:
        return [schema_dataset.SchemaDatasetFacetFields(name=name, fields=fields(sub) if sub else None)
                for name, sub in level.items()]

    return fields(tree)


def _symlinks(table: str) -> symlinks_dataset.SymlinksDatasetFacet:
    """The catalog name beside the storage name; the namespace is the catalog (``spark_catalog``)."""
    catalog = table.split(".", 1)[0] if "." in table else SPARK_CATALOG
    return symlinks_dataset.SymlinksDatasetFacet(
        identifiers=[symlinks_dataset.Identifier(namespace=catalog, name=table, type=SYMLINK_TYPE_TABLE)],
        producer=PRODUCER,
    )


# -- helpers ----------------------------------------------------------------------------


def _operator_lineage(**kwargs: Any) -> OperatorLineage:
    from airflow.providers.openlineage.extractors import OperatorLineage

    return OperatorLineage(**kwargs)


def _unique(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))
