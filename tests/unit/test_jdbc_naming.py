"""JDBC datasets named by OpenLineage's naming spec, and credentials removed from every text."""

from __future__ import annotations

import pytest

from airflow_lineage_provider.lineage.naming import from_jdbc, jdbc_name, scrub, strip_jdbc_credentials


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


@pytest.mark.parametrize(
    ("url", "clean"),
    [
        ("jdbc:postgresql://h:5432/shop?user=lineage&password=s3cret", "jdbc:postgresql://h:5432/shop"),
        ("jdbc:postgresql://h/shop?ssl=true&password=s3cret&x=1", "jdbc:postgresql://h/shop?ssl=true&x=1"),
        ("jdbc:postgresql://lineage:s3cret@h/shop", "jdbc:postgresql://h/shop"),
        ("jdbc:sqlserver://h:1433;databaseName=shop;user=a;password=s3cret", "jdbc:sqlserver://h:1433;databaseName=shop"),
        ("jdbc:oracle:thin:scott/s3cret@//h:1521/ORCL", "jdbc:oracle:thin:@//h:1521/ORCL"),
        ("jdbc:snowflake://acct.snowflakecomputing.com/?private_key_file_pwd=s3cret&db=x",
         "jdbc:snowflake://acct.snowflakecomputing.com/?db=x"),
    ],
)
def test_urls_lose_their_credentials(url, clean):
    assert strip_jdbc_credentials(url) == clean
    assert "s3cret" not in jdbc_name(url, "t")[0] + jdbc_name(url, "t")[1]


def test_scrub_removes_credentials_from_sql_and_json_text():
    sql = ("CREATE TEMPORARY VIEW v USING jdbc OPTIONS (url 'jdbc:postgresql://bob:pw1@h/db?password=pw2&x=1', "
           "dbtable 't', user 'bob', password 'pw3'); SELECT * FROM t WHERE user = 'x'")
    out = scrub(sql)
    for secret in ("pw1", "pw2", "pw3", "'bob'", "bob:"):
        assert secret not in out
    assert "dbtable 't'" in out and "x=1" in out and "WHERE user = 'x'" in out
    assert scrub('{"password": "pw", "user": "bob", "url": "jdbc:mysql://h/db;password=p"}') == \
        '{"password": "***", "user": "***", "url": "jdbc:mysql://h/db;password=***"}'
    assert scrub("s3a://AKIA:secretkey@bucket/x") == "s3a://bucket/x"
    assert scrub(None) is None and scrub("") == ""
