"""lineage/naming.py: OpenLineage dataset names for storage URIs and catalog tables."""

from __future__ import annotations

import pytest

from airflow_lineage_provider.lineage.model import Dataset
from airflow_lineage_provider.lineage.naming import from_jdbc, from_location, is_uri, jdbc_name, split_uri, table_name


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


# -- JDBC: named by OpenLineage's naming spec ------------------------------------------


@pytest.mark.parametrize(
    ("url", "table", "namespace", "name"),
    [
        ("jdbc:postgresql://db.example.com:5433/shop", "public.orders", "postgres://db.example.com:5433",
         "shop.public.orders"),
        # default port and default schema of the system
        ("jdbc:postgresql://db.example.com/shop", "orders", "postgres://db.example.com:5432", "shop.public.orders"),
        ("jdbc:postgresql://u:pw@DB:5432/shop?ssl=true&password=x", "s.t", "postgres://db:5432", "shop.s.t"),
        ("jdbc:mysql://h/shop?user=a&password=b", "orders", "mysql://h:3306", "shop.orders"),
        ("jdbc:mariadb://h:3307/shop", "orders", "mysql://h:3307", "shop.orders"),
        ("jdbc:sqlserver://h:1433;databaseName=shop;user=a;password=b", "orders", "sqlserver://h:1433",
         "shop.dbo.orders"),
        ("jdbc:oracle:thin:scott/tiger@//h:1521/ORCL", "hr.emp", "oracle://h:1521", "ORCL.hr.emp"),
        ("jdbc:oracle:thin:@h:1521:XE", "emp", "oracle://h:1521", "XE.emp"),
        ("jdbc:redshift://c1.eu-west-1.redshift.amazonaws.com:5439/dev", "sales",
         "redshift://c1.eu-west-1:5439", "dev.public.sales"),
        ("jdbc:trino://h:8080/hive/sales?password=x", "orders", "trino://h:8080", "hive.sales.orders"),
        ("jdbc:db2://h:50000/BLU", "s.t", "db2://h:50000", "BLU.s.t"),
        # generic rule: scheme://host:port and database.table
        ("jdbc:vertica://h:5433/db?user=u&password=p", "t", "vertica://h:5433", "db.t"),
        # an embedded database has no server: the database file is the source
        ("jdbc:derby:/tmp/x/db;create=true;user=a;password=b", "APP.T", "derby:/tmp/x/db", "APP.T"),
        ("jdbc:h2:mem:test", "t", "h2:mem:test", "t"),
    ],
)
def test_jdbc_names_follow_the_openlineage_spec(url, table, namespace, name):
    assert jdbc_name(url, table) == (namespace, name)


def test_a_query_read_keeps_its_text():
    assert jdbc_name("jdbc:postgresql://h/shop", "SELECT id,\n  city FROM customers") == (
        "postgres://h:5432", "shop.SELECT id, city FROM customers")


def test_dataset_label_is_the_catalog_name_or_the_openlineage_uri():
    d = from_jdbc("jdbc:postgresql://h:5432/shop?password=pw", "public.orders", mode="append")
    assert (d.namespace, d.name, d.table, d.mode) == (
        "postgres://h:5432", "shop.public.orders", "postgres://h:5432/shop.public.orders", "append")
    assert from_jdbc("jdbc:postgresql://h/shop", "public.orders", catalog_name="pg.public.orders").table == \
        "pg.public.orders"


def test_dataset_uri_is_the_openlineage_dataset_as_an_airflow_asset_names_it():
    from airflow_lineage_provider.lineage.naming import dataset_uri

    assert dataset_uri("file", "/w/t") == "file:///w/t"
    assert dataset_uri("s3://bucket", "key/x") == "s3://bucket/key/x"
    assert dataset_uri("hdfs://nn:8020", "/a/b") == "hdfs://nn:8020/a/b"
    assert dataset_uri("postgres://db:5432", "shop.public.orders") == "postgres://db:5432/shop.public.orders"
    assert dataset_uri("spark_catalog", "default.t") is None
    assert dataset_uri("spark_sink", "console") is None


# -- paths as Spark has them: names keep them exactly; URIs percent-encode them -----------------
# Each variant: the location as a user writes it in SQL (and as Spark prints a Hadoop Path: a file
# insert's output path, a path read, a PySpark write), as the catalog spells it (a java.net.URI:
# spellings recorded from Spark 4.2's catalog and INSERT OVERWRITE DIRECTORY), the OpenLineage name,
# and the asset URI.
PATH_VARIANTS = [
    # (as written, as the catalog's URI, name, dataset URI)
    ("/d/out dir/sp ace#1", "file:/d/out%20dir/sp%20ace%231", "/d/out dir/sp ace#1",
     "file:///d/out%20dir/sp%20ace%231"),
    ("/d/out dir/ünï", "file:/d/out%20dir/ünï", "/d/out dir/ünï", "file:///d/out%20dir/%C3%BCn%C3%AF"),
    ("/d/p%20c", "file:/d/p%2520c", "/d/p%20c", "file:///d/p%2520c"),
    ("/d/100%", "file:/d/100%25", "/d/100%", "file:///d/100%25"),
    ("/d/a+b&c=d", "file:/d/a+b&c=d", "/d/a+b&c=d", "file:///d/a+b&c=d"),
    ("/d/trail ", "file:/d/trail%20", "/d/trail ", "file:///d/trail%20"),
    ("/d/😀/数据", "file:/d/😀/数据", "/d/😀/数据", "file:///d/%F0%9F%98%80/%E6%95%B0%E6%8D%AE"),
    ("/d/x/C:/y", "file:/d/x/C:/y", "/d/x/C:/y", "file:///d/x/C:/y"),
    ("/d/q?x=1", "file:/d/q%3Fx=1", "/d/q?x=1", "file:///d/q%3Fx=1"),
]
VARIANT_IDS = ["space-hash", "non-ascii", "percent-escape", "percent", "plus-amp-eq", "trailing-space", "emoji-cjk",
               "windows-segment", "question"]


@pytest.mark.parametrize(("written", "catalog", "name", "uri"), PATH_VARIANTS, ids=VARIANT_IDS)
def test_a_path_is_named_exactly_as_written_whichever_way_spark_spells_it(written, catalog, name, uri):
    from airflow_lineage_provider.lineage.naming import as_written

    assert split_uri(written) == ("file", name)  # the SQL text (START), a path as a user gave it
    assert split_uri("file:" + written) == ("file", name)  # a Hadoop Path: a file insert, a read, PySpark
    assert split_uri("file://" + written) == ("file", name)
    assert split_uri(as_written(catalog)) == ("file", name)  # the catalog's location
    assert split_uri(as_written(catalog[len("file:"):])) == ("file", name)  # INSERT OVERWRITE DIRECTORY's URI


@pytest.mark.parametrize(("written", "catalog", "name", "uri"), PATH_VARIANTS, ids=VARIANT_IDS)
def test_a_dataset_uri_is_ascii_percent_encoded_and_decodes_to_the_same_name(written, catalog, name, uri):
    from urllib.parse import urlsplit

    from airflow_lineage_provider.lineage.naming import dataset_uri, name_of_uri

    assert dataset_uri("file", name) == uri
    assert uri.isascii() and " " not in uri
    parts = urlsplit(uri)
    assert not parts.query and not parts.fragment  # nothing a URL parser would cut off
    assert name_of_uri(uri) == ("file", name)


@pytest.mark.parametrize(
    ("location", "namespace", "name", "uri"),
    [
        ("s3a://bucket/key with space/ü", "s3://bucket", "key with space/ü", "s3://bucket/key%20with%20space/%C3%BC"),
        ("s3a://bucket/k#1?v=2", "s3://bucket", "k#1?v=2", "s3://bucket/k%231%3Fv=2"),
        ("hdfs://nn:8020/a#b", "hdfs://nn:8020", "/a#b", "hdfs://nn:8020/a%23b"),
        ("hdfs://nn:8020/wh/ü dir/", "hdfs://nn:8020", "/wh/ü dir", "hdfs://nn:8020/wh/%C3%BC%20dir"),
        ("gs://b/p q/ä", "gs://b", "p q/ä", "gs://b/p%20q/%C3%A4"),
        ("abfss://c@acct.dfs.core.windows.net/a b#1", "abfss://c@acct.dfs.core.windows.net", "a b#1",
         "abfss://c@acct.dfs.core.windows.net/a%20b%231"),
    ],
    ids=["s3a-space-non-ascii", "s3-hash-question", "hdfs-hash", "hdfs-non-ascii", "gs", "abfss"],
)
def test_object_store_keys_and_hdfs_paths_keep_every_character(location, namespace, name, uri):
    from airflow_lineage_provider.lineage.naming import as_written, dataset_uri, name_of_uri

    assert split_uri(location) == (namespace, name)
    assert dataset_uri(namespace, name) == uri
    assert name_of_uri(uri) == (namespace, name)
    # The same location spelled as a java.net.URI (a catalog's) names the same dataset.
    assert split_uri(as_written(dataset_uri(namespace, name).replace("s3://", "s3a://", 1))) == (namespace, name)


def test_as_written_decodes_a_uri_once():
    from airflow_lineage_provider.lineage.naming import as_written

    assert as_written("file:/d/p%2520c") == "file:/d/p%20c"
    assert as_written("file:/d/plain") == "file:/d/plain"
    assert as_written("file:/d/a+b") == "file:/d/a+b"  # "+" is no space in a path


def test_a_jdbc_query_name_is_encoded_in_its_uri():
    from airflow_lineage_provider.lineage.naming import dataset_uri

    assert dataset_uri("postgres://h:5432", "shop.SELECT id, city FROM customers") == \
        "postgres://h:5432/shop.SELECT%20id,%20city%20FROM%20customers"


@pytest.mark.parametrize(("written", "catalog", "name", "uri"), PATH_VARIANTS, ids=VARIANT_IDS)
def test_the_sql_text_names_a_path_as_the_plan_does(written, catalog, name, uri):
    """START (the static lineage of the SQL text) and the plan must name one path alike."""
    from airflow_lineage_provider.lineage.sql.static import static

    sql = (f"CREATE TABLE t (b INT) USING parquet LOCATION '{written}';\n"
           f"INSERT INTO t SELECT 7;\n"
           f"CREATE TABLE c USING parquet LOCATION '{written}/ctas' AS SELECT b FROM t;\n"
           f"INSERT OVERWRITE DIRECTORY '{written}/dir' USING parquet SELECT b FROM t;\n"
           f"INSERT INTO t SELECT b FROM parquet.`{written}/dir`;\n")
    report = static(sql)
    got = [(s.target.namespace, s.target.name, [(d.namespace, d.name) for d in s.inputs]) for s in report.statements
           if s.target is not None]
    assert got == [
        ("file", name, []),
        ("file", f"{name}/ctas", [("file", name)]),
        ("file", f"{name}/dir", [("file", name)]),
        ("file", name, [("file", f"{name}/dir")]),
    ]


@pytest.mark.parametrize("location, uri", [
    ("s3a://bucket/key", True), ("file:///x", True), ("file:/x", True), ("hdfs://nn:8020/a#b", True),
    ("/data/out dir", False), ("relative/dir", False), ("C:/data", False), ("C:\\data", False),
])
def test_a_location_is_a_uri_when_it_has_a_scheme_and_a_drive_letter_is_none(location, uri):
    """The driver, the hook and the dump location read a dump_uri by this one rule; naming splits by it."""
    assert is_uri(location) is uri
    if not uri:
        assert split_uri(location)[0] == "file"


@pytest.mark.parametrize(("written", "namespace", "name"), [
    ("/data/out?x=1&password=Planted9xyz/ü", "file", "/data/out?x=1&password=***/ü"),
    ("file:/data/out&token=Planted9xyz/part=1", "file", "/data/out&token=***/part=1"),
    ("/data/out dir/x;sig=Planted9xyz/y", "file", "/data/out dir/x;sig=***/y"),
    ("s3a://b/k?X-Amz-Credential=Planted9xyz%2F20260101&X-Amz-Signature=Planted9xyz", "s3://b",
     "k?X-Amz-Credential=***&X-Amz-Signature=***"),
    ("gs://b/o?X-Goog-Signature=Planted9xyz/part-0", "gs://b", "o?X-Goog-Signature=***/part-0"),
    ("hdfs://nn:8020/d/access_token=Planted9xyz/dt=2026-01-01", "hdfs://nn:8020", "/d/access_token=***/dt=2026-01-01"),
])
def test_a_path_holding_a_credential_has_one_name_in_the_sql_text_and_the_plan(written, namespace, name):
    """Issue 42: the secret is masked in its own directory, alike in the plan's name (the path as Spark ran it)
    and the SQL text's (the script, scrubbed); the directories after it stay."""
    from airflow_lineage_provider.lineage.naming import from_location
    from airflow_lineage_provider.lineage.sql.static import static

    plan = from_location(written)
    assert (plan.namespace, plan.name) == (namespace, name)
    report = static(f"INSERT OVERWRITE DIRECTORY '{written}' USING parquet SELECT 1 AS a;\n"
                    f"INSERT OVERWRITE DIRECTORY '/data/copy' USING parquet SELECT a FROM parquet.`{written}`;\n")
    first, second = report.statements
    assert (first.target.namespace, first.target.name) == (namespace, name)
    assert [(d.namespace, d.name) for d in second.inputs] == [(namespace, name)]
    assert "Planted9xyz" not in first.sql + second.sql
