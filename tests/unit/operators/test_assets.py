"""Asset events from a lineage document: one per written dataset, named as the OpenLineage dataset."""

from __future__ import annotations

import pytest

from airflow_lineage_provider.lineage.model import ColumnInput, Dataset, LineageReport, StatementLineage
from airflow_lineage_provider.operators import assets

SRC = Dataset(namespace="file", name="/data/in", table=None)
DIM = Dataset(namespace="s3://bucket", name="dim/x", table="spark_catalog.default.dim")
OUT = Dataset(namespace="file", name="/data/out", table="spark_catalog.default.out", mode="append")


def report() -> LineageReport:
    def write(index, inputs, columns, target=OUT):
        return StatementLineage(index=index, sql="", method="plan", confidence=1.0, target=target, inputs=inputs,
                                columns=tuple((c, (ColumnInput(table="t", field=c),)) for c in columns))

    return LineageReport(statements=(
        write(0, (SRC,), ["a", "b"]),
        write(1, (DIM, SRC), ["b", "c"]),
        write(2, (SRC,), ["x"], target=Dataset(namespace="spark_sink", name="console")),  # no URI: not an asset
        StatementLineage(index=3, sql="SELECT 1", method="plan", confidence=1.0, target=None),
    ))


def test_each_written_dataset_is_one_asset_with_what_it_read():
    assert assets.written(report()) == {
        "file:///data/out": {"inputs": ["file:///data/in", "s3://bucket/dim/x"], "columns": ["a", "b", "c"],
                             "table": "spark_catalog.default.out"},
    }
    assert assets.read(report()) == ["file:///data/in", "s3://bucket/dim/x"]


def test_publish_adds_the_alias_to_a_new_outlets_list_and_the_events_to_it():
    from airflow.sdk import Asset, AssetAlias
    from airflow.sdk.execution_time.context import OutletEventAccessors

    shared: list = []
    task = type("Task", (), {"dag_id": "d", "task_id": "t", "outlets": shared})()
    events = OutletEventAccessors()
    assert assets.publish(task, {"outlet_events": events}, report()) == ["file:///data/out"]
    alias = AssetAlias(name="column_lineage/d/t")
    assert task.outlets == [alias] and shared == []  # the DAG's own task keeps its list
    [event] = events[alias].asset_alias_events
    assert event.dest_asset_key.uri == Asset("file:///data/out").uri
    assert event.extra["inputs"] == ["file:///data/in", "s3://bucket/dim/x"]


def test_publish_never_raises():
    task = type("Task", (), {"dag_id": "d", "task_id": "t", "outlets": []})()
    assert assets.publish(task, {}, report()) == []
    assert assets.publish(task, {}, None) == []


def test_the_reads_go_to_the_hook_lineage_collector(monkeypatch):
    import airflow.sdk.lineage as sdk_lineage
    from airflow.sdk.execution_time.context import OutletEventAccessors

    collector = sdk_lineage.HookLineageCollector()
    monkeypatch.setattr(sdk_lineage, "get_hook_lineage_collector", lambda: collector)
    task = type("Task", (), {"dag_id": "d", "task_id": "t", "outlets": []})()
    assets.publish(task, {"outlet_events": OutletEventAccessors()}, report())
    assert [i.asset.uri for i in collector.collected_assets.inputs] == ["file:///data/in", "s3://bucket/dim/x"]
    assert all(i.context is task for i in collector.collected_assets.inputs)


# -- paths whose names hold what a URI cannot: every asset URI is one Airflow takes -------------------

# (namespace, name as Spark has it, the asset URI)
ODD = [
    ("file", "/data/out dir/ünï", "file:///data/out%20dir/%C3%BCn%C3%AF"),
    ("file", "/data/out dir/sp ace#1", "file:///data/out%20dir/sp%20ace%231"),
    ("file", "/data/100%", "file:///data/100%25"),
    ("file", "/data/p%20c", "file:///data/p%2520c"),
    ("file", "/data/a+b&c=d", "file:///data/a+b&c=d"),
    ("file", "/data/trail ", "file:///data/trail%20"),
    ("file", "/data/😀/数据", "file:///data/%F0%9F%98%80/%E6%95%B0%E6%8D%AE"),
    ("file", "/data/x/C:/y", "file:///data/x/C:/y"),
    ("file", "/data/q?x=1", "file:///data/q%3Fx=1"),
    ("s3://bucket", "key with space/ü", "s3://bucket/key%20with%20space/%C3%BC"),
    ("hdfs://nn:8020", "/a#b", "hdfs://nn:8020/a%23b"),
]
ODD_IDS = ["non-ascii", "space-hash", "percent", "percent-escape", "plus-amp-eq", "trailing-space", "emoji-cjk",
           "windows-segment", "question", "s3a-key", "hdfs-hash"]


def odd_report(namespace: str, name: str) -> LineageReport:
    """A write at the odd path that reads another odd path beside it (a table read and written)."""
    target = Dataset(namespace=namespace, name=name, table="spark_catalog.default.odd", mode="append")
    source = Dataset(namespace=namespace, name=name + "/in", table=None)
    return LineageReport(statements=(
        StatementLineage(index=0, sql="", method="plan", confidence=1.0, target=target, inputs=(source,),
                         columns=(("b", (ColumnInput(table="in", field="b"),)),)),
    ))


@pytest.mark.parametrize(("namespace", "name", "uri"), ODD, ids=ODD_IDS)
def test_an_odd_path_is_an_asset_under_a_uri_airflow_takes_as_it_is(namespace, name, uri):
    from airflow.sdk import Asset
    from airflow.sdk.execution_time.context import OutletEventAccessors

    from airflow_lineage_provider.lineage.naming import dataset_uri

    source_uri = dataset_uri(namespace, name + "/in")
    assert assets.refusal(uri) is None and assets.refusal(source_uri) is None
    assert Asset(uri).uri == uri  # Airflow records it unchanged: nothing is cut at "#" or "?"
    report = odd_report(namespace, name)
    assert assets.written(report) == {uri: {"inputs": [source_uri], "columns": ["b"],
                                            "table": "spark_catalog.default.odd"}}
    assert assets.read(report) == [source_uri] and assets.refused(report) == []
    task = type("Task", (), {"dag_id": "d", "task_id": "t", "outlets": []})()
    events = OutletEventAccessors()
    assert assets.publish(task, {"outlet_events": events}, report) == [uri]
    [event] = events[task.outlets[0]].asset_alias_events
    assert event.dest_asset_key.uri == uri


@pytest.mark.parametrize(
    ("namespace", "name", "why"),
    [
        ("hdfs://nämenode:8020", "/a", "ASCII"),  # a host name beyond ASCII: AssetModel refuses it
        ("file", "/" + "x" * 1600, "1500"),
        ("airflow://x", "a", "reserved"),
    ],
    ids=["non-ascii-host", "too-long", "reserved-scheme"],
)
def test_a_uri_airflow_would_refuse_is_left_out_with_a_warning_never_an_exception(namespace, name, why, caplog):
    from airflow.sdk.execution_time.context import OutletEventAccessors

    from airflow_lineage_provider.lineage.naming import dataset_uri

    report = odd_report(namespace, name)
    assert assets.written(report) == {} and assets.read(report) == []
    [for_source, for_target] = assets.refused(report)  # the read first, as the statement reads then writes
    uri = dataset_uri(namespace, name)
    assert for_target.startswith(uri[:200]) and " is not reported as an Airflow asset: " in for_target
    assert len(for_target) < 500  # a very long URI is cut in the middle
    assert why in for_target and why in for_source
    task = type("Task", (), {"dag_id": "d", "task_id": "t", "outlets": []})()
    events = OutletEventAccessors()
    assert assets.publish(task, {"outlet_events": events}, report) == []
    assert events[task.outlets[0]].asset_alias_events == []
    assert "is not reported as an Airflow asset" in caplog.text


def test_a_uri_airflow_would_record_as_another_is_refused(monkeypatch):
    """A provider's normalizer that changes the URI: the asset would not name the dataset."""
    import airflow.sdk.definitions.asset as sdk_asset

    monkeypatch.setattr(sdk_asset, "_get_uri_normalizer",
                        lambda scheme: (lambda parts: parts._replace(path=parts.path.lower())))
    assert "would record it as s3://bucket/key" in assets.refusal("s3://bucket/KEY")
    assert assets.refusal("s3://bucket/key") is None


def test_the_refusal_is_a_warning_of_the_document_the_task_pushes():
    from airflow_lineage_provider.lineage.model import XCOM_KEY
    from airflow_lineage_provider.operators.reporting import LineageReporter

    pushed = {}
    ti = type("TI", (), {"xcom_push": lambda self, key, value: pushed.__setitem__(key, value)})()
    task = type("Task", (), {"dag_id": "d", "task_id": "t", "outlets": []})()
    reporter = LineageReporter()
    reporter.report(task, {"ti": ti}, odd_report("hdfs://nämenode:8020", "/a"))  # no outlet_events: no raise
    warnings = pushed[XCOM_KEY]["warnings"]
    assert any("hdfs://nämenode:8020/a is not reported as an Airflow asset" in w for w in warnings)
    assert reporter.lineage.warnings == tuple(warnings)


def test_a_check_that_breaks_costs_the_assets_a_warning_never_the_task(monkeypatch, caplog):
    from airflow.sdk.execution_time.context import OutletEventAccessors

    def broken(uri):
        raise RuntimeError("the providers manager broke")

    monkeypatch.setattr(assets, "refusal", broken)
    report = odd_report("file", "/data/out dir/ünï")
    assert assets.with_asset_warnings(report) is report
    task = type("Task", (), {"dag_id": "d", "task_id": "t", "outlets": []})()
    assert assets.publish(task, {"outlet_events": OutletEventAccessors()}, report) == []
    assert "the providers manager broke" in caplog.text


def test_a_path_holding_a_credential_is_one_asset_named_as_its_dataset_never_cut():
    """Issue 42: the dataset's name masks the secret in its directory; the asset URI is that very name, encoded,
    not a shorter one naming another directory; a URI still holding a credential is left out, saying so masked."""
    from airflow_lineage_provider.lineage.naming import from_location

    target = from_location("/data/out?x=1&password=Planted9xyz/ü", mode="overwrite")
    assert (target.namespace, target.name) == ("file", "/data/out?x=1&password=***/ü")
    raw = Dataset(namespace="file", name="/data/in&token=Planted8xyz/part=1")  # named by no naming of ours
    lineage = LineageReport(statements=(StatementLineage(
        index=0, sql="", method="plan", confidence=1.0, target=target, inputs=(raw,),
        columns=(("a", (ColumnInput(table="t", field="a"),)),)),))
    assert assets.written(lineage) == {"file:///data/out%3Fx=1&password=***/%C3%BC": {"inputs": [], "columns": ["a"]}}
    [warning] = assets.refused(lineage)
    assert "Planted8xyz" not in warning and "token=***/part=1" in warning and "credential" in warning
