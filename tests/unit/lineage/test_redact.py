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


def test_secret_conf_keys_are_access_keys_secrets_tokens_and_passwords():
    from airflow_lineage_provider.lineage.redact import is_secret_conf

    for key in ("spark.hadoop.fs.s3a.access.key", "spark.hadoop.fs.s3a.secret.key", "spark.hadoop.fs.s3a.session.token",
                "spark.hadoop.fs.azure.account.key.x.dfs.core.windows.net.secret", "spark.jdbc.password"):
        assert is_secret_conf(key), key
    for key in ("spark.sql.shuffle.partitions", "spark.app.name", "spark.hadoop.fs.s3a.endpoint"):
        assert not is_secret_conf(key), key


def test_the_secrets_a_text_holds_are_the_ones_scrub_hides():
    from airflow_lineage_provider.lineage.redact import scrub, secrets_in

    text = ("OPTIONS (url 'jdbc:postgresql://etl:Pw1secret@h/db?user=u&password=Pw2secret', password 'Pw3secret'); "
            "jdbc:oracle:thin:scott/Pw4secret@host:1521/x")
    found = secrets_in(text)
    assert {"Pw1secret", "Pw2secret", "Pw3secret", "Pw4secret"} <= set(found)
    assert not any(secret in scrub(text) for secret in found)
    assert secrets_in("SELECT 1") == [] and secrets_in(None) == []
