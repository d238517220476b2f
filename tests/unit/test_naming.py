"""lineage/naming.py: OpenLineage dataset names for storage URIs and catalog tables."""

from __future__ import annotations

import pytest

from airflow_lineage_provider.lineage.model import Dataset
from airflow_lineage_provider.lineage.naming import from_location, split_uri, table_name


@pytest.mark.parametrize(
    ("uri", "namespace", "name"),
    [
        ("file:/a/b", "file", "/a/b"),
        ("file:///a/b/", "file", "/a/b"),
        ("file:/", "file", "/"),
        ("/a/b", "file", "/a/b"),
        ("/a/b/", "file", "/a/b"),
        ("/", "file", "/"),
        ("hdfs://nn:8020/wh/t", "hdfs://nn:8020", "/wh/t"),
        ("hdfs://nn:8020/wh/t/", "hdfs://nn:8020", "/wh/t"),
        ("hdfs://nn:8020", "hdfs://nn:8020", "/"),
        ("HDFS://nn:8020/x", "hdfs://nn:8020", "/x"),
        ("hdfs://someone@nn:8020/x", "hdfs://nn:8020", "/x"),
        ("s3a://bucket/key/part", "s3://bucket", "key/part"),
        ("s3n://bucket/key/", "s3://bucket", "key"),
        ("s3://bucket/k", "s3://bucket", "k"),
        ("s3://user:secret@bucket/k", "s3://bucket", "k"),
        ("s3a://AKIA:s3cr3t@bucket/data", "s3://bucket", "data"),
        ("gs://bucket/p/q/", "gs://bucket", "p/q"),
    ],
)
def test_split_uri(uri, namespace, name):
    assert split_uri(uri) == (namespace, name)


@pytest.mark.parametrize("uri", ["s3://user:secret@bucket/k", "s3a://AKIA:s3cr3t@bucket/data",
                                 "hdfs://someone:pw@nn:8020/x"])
def test_credentials_never_kept(uri):
    namespace, name = split_uri(uri)
    assert "secret" not in namespace + name and "s3cr3t" not in namespace + name
    assert "@" not in namespace and "pw" not in namespace


@pytest.mark.parametrize(
    ("uri", "namespace", "name"),
    [
        # OpenLineage's naming spec: abfss://{container}@{service}.dfs.core.windows.net, name {path};
        # the part before "@" is the container, not a credential.
        ("abfss://data@acct.dfs.core.windows.net/wh/t", "abfss://data@acct.dfs.core.windows.net", "wh/t"),
        ("wasbs://data@acct.blob.core.windows.net/wh/t", "wasbs://data@acct.blob.core.windows.net", "wh/t"),
    ],
    ids=["abfss", "wasbs"],
)
def test_split_uri_azure_keeps_container(uri, namespace, name):
    assert split_uri(uri) == (namespace, name)


def test_from_location_without_location_uses_catalog_name():
    assert from_location(None, table="spark_catalog.demo.t", mode="create") == Dataset(
        namespace="spark_catalog", name="spark_catalog.demo.t", table="spark_catalog.demo.t", mode="create"
    )


@pytest.mark.parametrize("location", [None, ""])
def test_from_location_with_nothing_known(location):
    assert from_location(location) == Dataset(namespace="spark_catalog", name="unknown", table=None, mode=None)


def test_from_location_with_location():
    assert from_location("s3a://lake/wh/t/", table="spark_catalog.db.t", mode="append") == Dataset(
        namespace="s3://lake", name="wh/t", table="spark_catalog.db.t", mode="append"
    )


@pytest.mark.parametrize(
    ("identifier", "expected"),
    [
        ({"table": "T", "database": "Demo", "catalog": "spark_catalog"}, "spark_catalog.demo.t"),
        ({"table": "t", "database": "db"}, "spark_catalog.db.t"),
        ({"table": "t"}, "spark_catalog.default.t"),
        ({"table": "t", "database": None, "catalog": None}, "spark_catalog.default.t"),
        ({"table": "t", "database": "d", "catalog": "cat"}, "cat.d.t"),
        ({"table": ""}, None),
        ({}, None),
        (None, None),
        ("spark_catalog.db.t", None),
    ],
)
def test_table_name(identifier, expected):
    assert table_name(identifier) == expected
