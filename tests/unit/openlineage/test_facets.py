"""openlineage/facets.py and the operator's OpenLineage methods, without a JVM."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import uuid
from dataclasses import replace

import pytest
from openlineage.client.event_v2 import Job, Run, RunEvent, RunState
from openlineage.client.serde import Serde

from airflow_lineage_provider.lineage.model import ColumnInput, Dataset, LineageReport, StatementLineage
from airflow_lineage_provider.lineage.plan import resolve
from airflow_lineage_provider.openlineage import facets as olf
from tests.conftest import ROOT
from tests.helpers import plan_record
from tests.openlineage_spec import registry, validate_event

WH = "/wh/warehouse/demo.db/"
T = "spark_catalog.demo."


def load_plan(name: str) -> StatementLineage:
    return resolve.extract(plan_record(name))


@pytest.fixture(scope="module")
def seed_join() -> LineageReport:
    return LineageReport(statements=(load_plan("seed_join"),))


@pytest.fixture(scope="module")
def schemas():
    return registry()


def event_of(lineage, event_type=RunState.COMPLETE) -> dict:
    """The lineage as the listener sends it: a RunEvent, serialized."""
    event = RunEvent(
        eventType=event_type,
        eventTime="2026-01-01T00:00:00+00:00",
        run=Run(runId=str(uuid.uuid4()), facets=lineage.run_facets),
        job=Job(namespace="default", name="dag.task", facets=lineage.job_facets),
        inputs=lineage.inputs,
        outputs=lineage.outputs,
        producer=olf.PRODUCER,
    )
    return json.loads(Serde.to_json(event))


def column_edges(output: dict) -> dict[str, set[tuple]]:
    return {
        column: {
            (f["namespace"], f["name"], f["field"], t["type"], t["subtype"], t.get("description"), t["masking"])
            for f in entry["inputFields"]
            for t in f["transformations"]
        }
        for column, entry in output["facets"]["columnLineage"]["fields"].items()
    }


# -- the seed join -----------------------------------------------------------------------------


def test_seed_join_converts_to_one_output_with_column_lineage_edge_by_edge(seed_join):
    event = event_of(olf.lineage_on_complete(seed_join, seed_join.statements[0].sql))
    (output,) = event["outputs"]
    assert (output["namespace"], output["name"]) == ("file", WH + "dwd_users")
    ods, dim = ("file", WH + "ods_users"), ("file", WH + "dim_company")
    concat = "concat(a.name, b.company_name)"
    assert column_edges(output) == {
        "id": {(*ods, "id", "DIRECT", "IDENTITY", "a.id", False)},
        "name": {(*ods, "name", "DIRECT", "TRANSFORMATION", concat, False),
                 (*dim, "company_name", "DIRECT", "TRANSFORMATION", concat, False)},
        "company_name": {(*dim, "company_name", "DIRECT", "IDENTITY", "b.company_name", False)},
        "birthday": {(*ods, "birthday", "DIRECT", "IDENTITY", "a.birthday", False)},
        "ts": {(*ods, "ts", "DIRECT", "IDENTITY", "a.ts", False)},
        "p": {(*ods, "birthday", "DIRECT", "TRANSFORMATION", "date_format(a.birthday, 'yyyyMMdd')", False)},
    }
    indirect = {
        (f["namespace"], f["name"], f["field"], t["type"], t["subtype"], t.get("description"))
        for f in output["facets"]["columnLineage"]["dataset"]
        for t in f["transformations"]
    }
    assert indirect == {(*ods, "id", "INDIRECT", "JOIN", None), (*dim, "user_id", "INDIRECT", "JOIN", None)}


def test_input_fields_reference_the_input_datasets_by_namespace_and_name(seed_join):
    event = event_of(olf.lineage_on_complete(seed_join, "x"))
    inputs = {(d["namespace"], d["name"]): d for d in event["inputs"]}
    assert set(inputs) == {("file", WH + "ods_users"), ("file", WH + "dim_company")}
    (output,) = event["outputs"]
    lineage = output["facets"]["columnLineage"]
    referenced = {(f["namespace"], f["name"]) for e in lineage["fields"].values() for f in e["inputFields"]}
    referenced |= {(f["namespace"], f["name"]) for f in lineage["dataset"]}
    assert referenced == set(inputs)
    # Every field an edge names is in its input's schema.
    for e in list(lineage["fields"].values()) + [{"inputFields": lineage["dataset"]}]:
        for f in e["inputFields"]:
            assert f["field"] in [x["name"] for x in inputs[(f["namespace"], f["name"])]["facets"]["schema"]["fields"]]


def test_schemas_have_names_only_and_symlinks_the_catalog_table(seed_join):
    event = event_of(olf.lineage_on_complete(seed_join, "x"))
    (output,) = event["outputs"]
    assert output["facets"]["schema"]["fields"] == [
        {"name": c} for c in ["id", "name", "company_name", "birthday", "ts", "p"]
    ]
    assert output["facets"]["symlinks"]["identifiers"] == [
        {"namespace": "spark_catalog", "name": T + "dwd_users", "type": "TABLE"}
    ]
    inputs = {d["name"]: d["facets"] for d in event["inputs"]}
    assert inputs[WH + "ods_users"]["schema"]["fields"] == [{"name": c} for c in ["id", "name", "birthday", "ts"]]
    assert inputs[WH + "dim_company"]["schema"]["fields"] == [{"name": "company_name"}, {"name": "user_id"}]
    assert inputs[WH + "dim_company"]["symlinks"]["identifiers"][0]["name"] == T + "dim_company"


def test_events_and_facets_are_valid_against_the_spec(seed_join, schemas):
    sql = seed_join.statements[0].sql
    checked = set()
    for lineage, kind in (
        (olf.lineage_on_start(sql), RunState.START),
        (olf.lineage_on_complete(seed_join, sql), RunState.COMPLETE),
        (olf.lineage_on_failure(sql, _raised(RuntimeError("boom"))), RunState.FAIL),
    ):
        checked.update(validate_event(event_of(lineage, kind), schemas))
    assert {url.split("#")[0].rsplit("/", 1)[1] for url in checked} == {
        "ColumnLineageDatasetFacet.json", "SchemaDatasetFacet.json", "SymlinksDatasetFacet.json",
        "SQLJobFacet.json", "ErrorMessageRunFacet.json", "AirflowLineageExtractionRunFacet.json",
    }


def test_the_custom_facet_schema_is_the_one_its_schema_url_names():
    path = ROOT / "airflow_lineage_provider" / "openlineage" / olf.EXTRACTION_FACET_SCHEMA_FILE
    schema = json.loads(path.read_text())
    document, pointer = olf.EXTRACTION_FACET_SCHEMA_URL.split("#")
    assert schema["$id"] == document
    assert pointer == "/$defs/AirflowLineageExtractionRunFacet"
    assert olf.EXTRACTION_FACET_KEY in schema["properties"]


def test_an_invalid_facet_is_caught_by_the_validation(seed_join, schemas):
    import jsonschema

    event = event_of(olf.lineage_on_complete(seed_join, "x"))
    del event["outputs"][0]["facets"]["columnLineage"]["fields"]["id"]["inputFields"][0]["field"]
    with pytest.raises(jsonschema.ValidationError):
        validate_event(event, schemas)


# -- several statements ------------------------------------------------------------------------


def test_each_written_table_gets_its_own_output_and_facet():
    report = LineageReport(statements=(load_plan("seed_single_table"), load_plan("seed_join"), load_plan("ctas_upper")))
    event = event_of(olf.lineage_on_complete(report, "x"))
    outputs = {d["name"]: d for d in event["outputs"]}
    assert list(outputs) == [WH + "dwd_users", WH + "t_ctas"]
    assert set(outputs[WH + "t_ctas"]["facets"]["columnLineage"]["fields"]) == {"id", "uname"}
    assert column_edges(outputs[WH + "t_ctas"])["uname"] == {
        ("file", WH + "ods_users", "name", "DIRECT", "TRANSFORMATION", "upper(ods_users.name)", False)
    }
    # dwd_users is written by two statements: one output, the union of their lineage.
    dwd = column_edges(outputs[WH + "dwd_users"])
    assert {(e[2], e[4], e[5]) for e in dwd["company_name"]} == {
        ("name", "IDENTITY", "ods_users.name"), ("company_name", "IDENTITY", "b.company_name")
    }
    (name_field,) = [f for f in outputs[WH + "dwd_users"]["facets"]["columnLineage"]["fields"]["name"]["inputFields"]
                     if f["field"] == "name"]
    assert [t["subtype"] for t in name_field["transformations"]] == ["IDENTITY", "TRANSFORMATION"]
    assert {d["name"] for d in event["inputs"]} == {WH + "ods_users", WH + "dim_company"}


def test_path_datasets_are_mapped_through_inputs_and_have_no_symlink():
    src = Dataset(namespace="s3://bucket", name="raw/events", table=None)
    dst = Dataset(namespace="hdfs://nn:8020", name="/out/daily", table=None, mode="overwrite")
    statement = StatementLineage(
        index=0, sql="INSERT OVERWRITE DIRECTORY ...", method="plan", confidence=1.0, target=dst, inputs=(src,),
        columns=(
            ("n", (ColumnInput("raw/events", "id", subtype="AGGREGATION", expression="count(id)", masking=True),)),
        ),
        indirect=(ColumnInput("raw/events", "day", type="INDIRECT", subtype="GROUP_BY"),),
    )
    event = event_of(olf.lineage_on_complete(LineageReport(statements=(statement,)), "x"))
    (output,) = event["outputs"]
    assert (output["namespace"], output["name"]) == ("hdfs://nn:8020", "/out/daily")
    assert "symlinks" not in output["facets"]
    assert column_edges(output) == {
        "n": {("s3://bucket", "raw/events", "id", "DIRECT", "AGGREGATION", "count(id)", True)}
    }
    (source,) = event["inputs"]
    assert (source["namespace"], source["name"]) == ("s3://bucket", "raw/events")
    assert source["facets"]["schema"]["fields"] == [{"name": "id"}, {"name": "day"}]


def test_a_column_of_an_unlisted_table_still_names_an_input_dataset():
    statement = StatementLineage(
        index=0, sql="x", method="plan", confidence=1.0,
        target=Dataset(namespace="file", name="/w/t", table="spark_catalog.default.t"),
        columns=(("a", (ColumnInput("spark_catalog.default.s", "a"),)),),
    )
    event = event_of(olf.lineage_on_complete(LineageReport(statements=(statement,)), "x"))
    (source,) = event["inputs"]
    assert (source["namespace"], source["name"]) == ("spark_catalog", "spark_catalog.default.s")
    field = event["outputs"][0]["facets"]["columnLineage"]["fields"]["a"]["inputFields"][0]
    assert (field["namespace"], field["name"]) == (source["namespace"], source["name"])


def test_a_bare_query_adds_inputs_but_no_output():
    statement = StatementLineage(
        index=2, sql="SELECT p FROM t", method="plan", confidence=1.0, target=None,
        inputs=(Dataset(namespace="file", name="/w/t", table="spark_catalog.default.t"),),
        columns=(("p", (ColumnInput("spark_catalog.default.t", "p"),)),),
    )
    lineage = olf.lineage_on_complete(LineageReport(statements=(statement,)), "SELECT p FROM t")
    assert lineage.outputs == []
    assert [(d.namespace, d.name) for d in lineage.inputs] == [("file", "/w/t")]


# -- run and job facets ------------------------------------------------------------------------


def test_extraction_facet_reports_methods_lowest_confidence_and_warnings():
    good = load_plan("seed_join")
    shaky = StatementLineage(index=3, sql="y", method="sql", confidence=0.5, target=good.target,
                             warnings=("no handler for plan node Foo: passed through",))
    report = LineageReport(statements=(good, shaky), warnings=("dump truncated",))
    facet = event_of(olf.lineage_on_complete(report, "x"))["run"]["facets"][olf.EXTRACTION_FACET_KEY]
    assert facet["methods"] == ["plan", "sql"]
    assert facet["confidence"] == 0.5
    assert facet["warnings"] == ["dump truncated", "statement 4: no handler for plan node Foo: passed through"]
    assert facet["statements"][1] == {"index": 3, "method": "sql", "confidence": 0.5, "target": T + "dwd_users",
                                      "warnings": ["no handler for plan node Foo: passed through"]}
    assert facet["_producer"] == olf.PRODUCER and facet["_schemaURL"] == olf.EXTRACTION_FACET_SCHEMA_URL


def test_a_failed_extraction_says_method_none():
    report = LineageReport(warnings=("lineage extraction failed: boom",))
    facet = event_of(olf.lineage_on_complete(report, "x"))["run"]["facets"][olf.EXTRACTION_FACET_KEY]
    assert facet["methods"] == ["none"] and facet["confidence"] == 0.0


def test_on_start_has_the_sql_and_no_lineage():
    lineage = olf.lineage_on_start("INSERT INTO t SELECT 1")
    assert lineage.inputs == [] and lineage.outputs == []
    event = event_of(lineage, RunState.START)
    assert event["job"]["facets"]["sql"]["query"] == "INSERT INTO t SELECT 1"
    assert event["job"]["facets"]["sql"]["dialect"] == "spark"
    facet = event["run"]["facets"][olf.EXTRACTION_FACET_KEY]
    assert facet["methods"] == ["none"] and facet["statements"] == [] and facet["warnings"] == [olf.START_WARNING]


def test_on_failure_has_the_error_and_no_datasets():
    raised = _raised(ValueError("Statement 1 of 1 has a syntax error"))
    lineage = olf.lineage_on_failure("INSERT INTO t SELEC 1", raised)
    assert lineage.inputs == [] and lineage.outputs == []
    event = event_of(lineage, RunState.FAIL)
    error = event["run"]["facets"]["errorMessage"]
    assert error["message"] == "Statement 1 of 1 has a syntax error"
    assert error["programmingLanguage"] == "python"
    assert "ValueError: Statement 1 of 1 has a syntax error" in error["stackTrace"]
    assert event["run"]["facets"][olf.EXTRACTION_FACET_KEY]["warnings"] == [olf.FAILED_WARNING]
    assert "errorMessage" not in olf.lineage_on_failure("x", None).run_facets


def test_on_complete_accepts_the_xcom_document_and_nothing(seed_join):
    from_dict = olf.lineage_on_complete(seed_join.to_dict(), "x")
    assert event_of(from_dict)["outputs"] == event_of(olf.lineage_on_complete(seed_join, "x"))["outputs"]
    missing = olf.lineage_on_complete(None, "x")
    assert missing.outputs == [] and missing.run_facets[olf.EXTRACTION_FACET_KEY].methods == ["none"]


# -- the operator ------------------------------------------------------------------------------


class _FakeTI:
    def __init__(self) -> None:
        self.pushed: dict = {}

    def xcom_push(self, key, value):
        self.pushed[key] = value


def _operator(**kwargs):
    from airflow_lineage_provider.operators.spark_lineage import SparkSqlLineageOperator

    return SparkSqlLineageOperator(task_id="t", sql="INSERT INTO dwd_users SELECT 1", **kwargs)


def test_operator_methods_convert_what_execute_computed(seed_join):
    op = _operator()
    start = op.get_openlineage_facets_on_start()
    assert start.job_facets["sql"].query == "INSERT INTO dwd_users SELECT 1"
    # The static lineage of the SQL text: the target is known before Spark runs.
    assert [d.facets["symlinks"].identifiers[0].name for d in start.outputs] == ["spark_catalog.default.dwd_users"]
    op.lineage_reporter.lineage = seed_join
    complete = op.get_openlineage_facets_on_complete(None)
    assert [(d.namespace, d.name) for d in complete.outputs] == [("file", WH + "dwd_users")]
    assert set(complete.outputs[0].facets) == {"columnLineage", "schema", "symlinks"}


def test_operator_failure_carries_the_error_of_execute(monkeypatch):
    from airflow_lineage_provider.hooks.spark_lineage import SparkJobError, SparkLineageHook

    def failing(self, sql, **kwargs):
        raise SparkJobError("Statement 2 of 2 failed: [TABLE_OR_VIEW_NOT_FOUND]")

    monkeypatch.setattr(SparkLineageHook, "run_sql", failing)
    op = _operator()
    with pytest.raises(SparkJobError):
        op.execute({"ti": _FakeTI()})
    failure = op.get_openlineage_facets_on_failure(None)
    assert failure.outputs == [] and failure.inputs == []
    assert failure.run_facets["errorMessage"].message == "Statement 2 of 2 failed: [TABLE_OR_VIEW_NOT_FOUND]"
    assert failure.job_facets["sql"].query == "INSERT INTO dwd_users SELECT 1"


def test_injection_flags_default_to_the_openlineage_conf_and_reach_the_hook(monkeypatch):
    from airflow.providers.common.compat.openlineage.utils import spark as compat

    from airflow_lineage_provider.hooks.spark_lineage import SparkLineageHook
    from airflow_lineage_provider.job.dump import JobResult

    assert _operator().openlineage_inject_parent_job_info is False
    monkeypatch.setenv("AIRFLOW__OPENLINEAGE__SPARK_INJECT_PARENT_JOB_INFO", "true")
    monkeypatch.setenv("AIRFLOW__OPENLINEAGE__SPARK_INJECT_TRANSPORT_INFO", "true")
    op = _operator(conf={"spark.x": "1"})
    assert op.openlineage_inject_parent_job_info and op.openlineage_inject_transport_info
    assert _operator(openlineage_inject_transport_info=False).openlineage_inject_transport_info is False

    seen = {}
    monkeypatch.setattr(compat, "inject_parent_job_information_into_spark_properties",
                        lambda props, ctx: {**props, "spark.openlineage.parentRunId": "r1"})
    monkeypatch.setattr(compat, "inject_transport_information_into_spark_properties",
                        lambda props, ctx: {**props, "spark.openlineage.transport.type": "http"})

    def run_sql(self, sql, **kwargs):
        seen["conf"] = dict(self._conf)
        return JobResult()

    monkeypatch.setattr(SparkLineageHook, "run_sql", run_sql)
    ti = _FakeTI()
    op.execute({"ti": ti})
    assert seen["conf"]["spark.x"] == "1"
    assert seen["conf"]["spark.openlineage.parentRunId"] == "r1"
    assert seen["conf"]["spark.openlineage.transport.type"] == "http"
    assert ti.pushed["column_lineage"]["format"] == "airflow-lineage/1"


def test_operator_runs_and_pushes_xcom_without_the_openlineage_provider():
    script = textwrap.dedent(
        """
        import importlib.metadata, sys
        # As if neither the OpenLineage provider nor openlineage-python were installed:
        # no distribution metadata (so no provider entry point) and no importable module.
        HIDDEN = ("openlineage", "airflow.providers.openlineage")
        def without_openlineage(distributions):
            def visible(*args, **kwargs):
                return [d for d in distributions(*args, **kwargs)
                        if "openlineage" not in ((d.metadata or {}).get("name") or "").lower()]
            return visible
        importlib.metadata.distributions = without_openlineage(importlib.metadata.distributions)
        try:
            import importlib_metadata
            importlib_metadata.distributions = without_openlineage(importlib_metadata.distributions)
        except ImportError:
            pass
        class Hide:
            def find_spec(self, name, path=None, target=None):
                if any(name == h or name.startswith(h + ".") for h in HIDDEN):
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
                return None
        sys.meta_path.insert(0, Hide())
        from airflow_lineage_provider.hooks.spark_lineage import SparkLineageHook
        from airflow_lineage_provider.job.dump import JobResult
        from airflow_lineage_provider.operators.spark_lineage import SparkSqlLineageOperator
        SparkLineageHook.run_sql = lambda self, sql, **kw: JobResult()
        class TI:
            pushed = {}
            def xcom_push(self, key, value):
                self.pushed[key] = value
        ti = TI()
        op = SparkSqlLineageOperator(task_id="t", sql="SELECT 1", openlineage_inject_parent_job_info=True)
        op.execute({"ti": ti})
        assert ti.pushed["column_lineage"]["format"] == "airflow-lineage/1", ti.pushed
        assert not [m for m in sys.modules if any(m == h or m.startswith(h + ".") for h in HIDDEN)]
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().endswith("ok")


def _raised(error: BaseException) -> BaseException:
    try:
        raise error
    except BaseException as e:  # noqa: BLE001 - the test keeps the error to inspect it
        return e


def test_a_document_that_cannot_be_converted_still_gives_the_job_facets():
    broken = StatementLineage(index=0, sql="x", method="plan", confidence=1.0, target=None,
                              columns=(("a", (None,)),))  # type: ignore[arg-type]
    lineage = olf.lineage_on_complete(LineageReport(statements=(broken,)), "INSERT INTO t SELECT 1")
    assert lineage.outputs == [] and lineage.job_facets["sql"].query == "INSERT INTO t SELECT 1"
    facet = lineage.run_facets[olf.EXTRACTION_FACET_KEY]
    assert facet.methods == ["none"] and "could not be converted" in facet.warnings[0]


def test_struct_fields_read_alone_are_nested_in_the_input_schema(schemas):
    """``SELECT info.city, info.geo.lat FROM cust``: the inputs name field paths, and the input's
    schema facet nests them under their column, as OpenLineage's nested schema fields do."""
    cust = Dataset(namespace="file", name="/wh/cust", table="spark_catalog.default.cust")
    out = Dataset(namespace="file", name="/wh/out", table="spark_catalog.default.out")
    statement = StatementLineage(
        index=0, sql="INSERT INTO out SELECT info.city, info.geo.lat, id FROM cust", method="plan", confidence=1.0,
        target=out, inputs=(cust,),
        columns=(("city", (ColumnInput(cust.table, "info.city", expression="info.city"),)),
                 ("lat", (ColumnInput(cust.table, "info.geo.lat", expression="info.geo.lat"),)),
                 ("id", (ColumnInput(cust.table, "id", expression="id"),))))
    event = event_of(olf.lineage_on_complete(LineageReport(statements=(statement,)), statement.sql))
    validate_event(event, schemas)
    (source,) = event["inputs"]
    assert source["facets"]["schema"]["fields"] == [
        {"name": "info", "fields": [{"name": "city"}, {"name": "geo", "fields": [{"name": "lat"}]}]},
        {"name": "id"},
    ]
    (target,) = event["outputs"]
    fields = target["facets"]["columnLineage"]["fields"]
    assert [f["field"] for f in fields["lat"]["inputFields"]] == ["info.geo.lat"]


def test_the_run_facet_carries_each_statements_agreement_and_stays_valid(seed_join, schemas):
    from airflow_lineage_provider.lineage.agreement import with_agreement

    plan = seed_join.statements[0]
    static = LineageReport(statements=(replace(plan, method="sql", indirect=()),))
    checked = with_agreement(seed_join, static)
    event = event_of(olf.lineage_on_complete(checked, plan.sql))
    validate_event(event, schemas)
    [entry] = event["run"]["facets"][olf.EXTRACTION_FACET_KEY]["statements"]
    assert entry["agreement"]["static"] == "differs" and entry["agreement"]["only_static"] == []
    assert entry["agreement"]["only_plan"] == sorted(
        f"(indirect) <- {i.table}.{i.field} {i.subtype}" for i in plan.indirect)
