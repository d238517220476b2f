"""JDBC sources and sinks on a real PostgreSQL (started by the test on 127.0.0.1): named as
OpenLineage names them, and no credential in the lineage document nor in the OpenLineage events."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.conftest import DATA, venv_bin
from tests.integration import postgres
from tests.integration.postgres import PASSWORD, USER

pytestmark = [pytest.mark.spark, pytest.mark.slow]


@pytest.fixture(scope="module")
def jdbc_run(pg, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("jdbc_app")
    url = f"jdbc:postgresql://127.0.0.1:{pg.port}/shop"
    out = tmp / "totals"
    env = {**os.environ, "AIRFLOW_LINEAGE_LOCAL_DIR": str(tmp / "state")}
    proc = subprocess.run(
        [venv_bin("airflow-lineage"), "extract", "--app", str(DATA / "apps" / "jdbc_sales.py"), "--format", "json",
         "--conf", f"spark.jars={postgres.JAR}", "--conf", "spark.sql.catalogImplementation=in-memory",
         "--", url, USER, PASSWORD, str(out)],
        capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout), proc.stdout, pg, out


def test_jdbc_tables_are_named_as_openlineage_names_them(jdbc_run):
    doc, _, pg, out = jdbc_run
    namespace = f"postgres://127.0.0.1:{pg.port}"
    customers, orders = f"{namespace}/shop.public.customers", f"{namespace}/shop.public.orders"
    to_pg, to_parquet = doc["statements"]
    assert to_pg["target"] == {"table": f"{namespace}/shop.public.city_totals", "namespace": namespace,
                               "name": "shop.public.city_totals", "mode": "overwrite"}
    assert {(d["namespace"], d["name"]) for d in to_pg["inputs"]} == {
        (namespace, "shop.public.customers"), (namespace, "shop.public.orders")}
    edges = {c: {(i["table"], i["field"], i["subtype"]) for i in inputs} for c, inputs in to_pg["columns"].items()}
    assert edges == {"city": {(customers, "city", "IDENTITY")}, "total": {(orders, "amount", "AGGREGATION")}}
    assert {(i["table"], i["field"], i["subtype"]) for i in to_pg["indirect"]} == {
        (customers, "city", "GROUP_BY"), (customers, "id", "JOIN"), (orders, "customer_id", "JOIN")}
    assert to_parquet["target"]["name"] == str(out)
    assert to_parquet["columns"]["city"][0]["subtype"] == "TRANSFORMATION"
    assert pg.psql("SELECT count(*) FROM city_totals", user=USER, database="shop").split()[2] == "2"


def test_no_credential_in_the_document_nor_in_openlineage_events(jdbc_run):
    doc, stdout, _, _ = jdbc_run
    from openlineage.client.serde import Serde

    from airflow_lineage_provider.lineage.model import LineageReport
    from airflow_lineage_provider.openlineage.facets import lineage_on_complete

    lineage = lineage_on_complete(LineageReport.from_dict(doc), None)
    events = json.dumps([Serde.to_dict(d) for d in lineage.inputs + lineage.outputs]) + json.dumps(
        {k: Serde.to_dict(v) for k, v in lineage.run_facets.items()})
    for text in (stdout, events):
        assert PASSWORD not in text and USER not in text
    assert "postgres://127.0.0.1" in events and "shop.public.city_totals" in events
