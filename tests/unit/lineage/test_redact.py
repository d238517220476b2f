"""lineage/redact.py: credentials removed from every text (URLs, SQL, JSON)."""

from __future__ import annotations

import pytest

from airflow_lineage_provider.lineage.naming import jdbc_name
from airflow_lineage_provider.lineage.redact import scrub, strip_jdbc_credentials


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
