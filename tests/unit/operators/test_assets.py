"""Asset events from a lineage document: one per written dataset, named as the OpenLineage dataset."""

from __future__ import annotations

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
