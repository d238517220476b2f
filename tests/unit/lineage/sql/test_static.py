"""lineage/sql/static.py: a task's static lineage names datasets as the plan extractor does."""

from __future__ import annotations

from airflow_lineage_provider.hooks import local_spark
from airflow_lineage_provider.lineage.sql.static import static
from tests.helpers import SRC_DST as SQL


def test_embedded_names_tables_by_their_warehouse_location(monkeypatch, tmp_path):
    monkeypatch.setenv("AIRFLOW_LINEAGE_LOCAL_DIR", str(tmp_path))
    [st] = static(SQL, warehouse=local_spark.warehouse()).statements
    assert (st.target.namespace, st.target.name, st.target.table) == (
        "file", str(tmp_path / "warehouse" / "dst"), "spark_catalog.default.dst")
    assert [(d.namespace, d.name) for d in st.inputs] == [("file", str(tmp_path / "warehouse" / "src"))]
    assert {c: [(i.field, i.subtype) for i in ins] for c, ins in st.columns} == {
        "id": [("id", "IDENTITY")], "label": [("name", "TRANSFORMATION")]}


def test_elsewhere_tables_keep_their_catalog_names():
    [st] = static(SQL).statements
    assert (st.target.namespace, st.target.name) == ("spark_catalog", "spark_catalog.default.dst")
