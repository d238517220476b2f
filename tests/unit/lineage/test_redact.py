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


# -- one rule, every spelling ------------------------------------------------------------------------
# (text, what must survive). Every case plants PW (or a value holding it); the value must be gone from
# the scrubbed text, and ``secrets_in`` must name it for Airflow's masker.
PW = "Hunter2xyz"
SPELLINGS = [
    # OPTIONS: bare keys in any case and separator, quoted, backquoted, with or without =
    (f"OPTIONS (path '/data/in', password '{PW}')", ["path '/data/in'", "password '***'"]),
    (f"OPTIONS (path '/data/in', aws_secret_access_key '{PW}')", ["path '/data/in'", "aws_secret_access_key"]),
    (f"OPTIONS (sfURL 'acct.snowflakecomputing.com', sfPassword '{PW}')", ["sfURL 'acct.snowflakecomputing.com'",
                                                                          "sfPassword '***'"]),
    (f"OPTIONS (`fs.azure.account.key.acct.dfs.core.windows.net` '{PW}', path 'abfss://c@acct/x')",
     ["`fs.azure.account.key.acct.dfs.core.windows.net` '***'", "path 'abfss://c@acct/x'"]),
    (f"OPTIONS ('password' = '{PW}', 'dbtable' = 'orders')", ["'password' = '***'", "'dbtable' = 'orders'"]),
    (f'OPTIONS (password = "{PW}", dbtable "orders")', ['password = "***"', 'dbtable "orders"']),
    (f"OPTIONS (client_secret '{PW}', clientId 'app')", ["client_secret '***'", "clientId 'app'"]),
    (f"OPTIONS (sasToken '{PW}', container 'raw')", ["sasToken '***'", "container 'raw'"]),
    (f"OPTIONS ('x-api-key' '{PW}', endpoint 'https://api.example/v1')", ["'x-api-key' '***'", "https://api.example/v1"]),
    (f"OPTIONS (PRIVATE_KEY '{PW}', user_role 'etl')", ["PRIVATE_KEY '***'", "user_role 'etl'"]),
    (f"OPTIONS (pem_private_key_passphrase '{PW}')", ["pem_private_key_passphrase '***'"]),
    (f"OPTIONS (`kafka.ssl.truststore.password` '{PW}', subscribe 'events')", ["subscribe 'events'"]),
    (f"OPTIONS (ConnectionString \"Endpoint=sb://ns/;SharedAccessKey={PW}\")", ["ConnectionString"]),
    # the whole literal: doubled and backslash-escaped quotes, literals side by side, an open literal
    (f"OPTIONS (password 'ab''{PW}', path '/p')", ["password '***'", "path '/p'"]),
    (f"OPTIONS (password 'ab\\'{PW}', path '/p')", ["password '***'", "path '/p'"]),
    (f"OPTIONS (password 'ab' '{PW}', path '/p')", ["password '***'", "path '/p'"]),
    (f"CREATE TEMPORARY VIEW v USING jdbc OPTIONS (password 'ab{PW}", ["CREATE TEMPORARY VIEW v USING jdbc"]),
    # SET of a secret conf: = with or without spaces, quoted or not, backquoted key
    (f"SET spark.hadoop.fs.s3a.secret.key={PW};\nSELECT 1", ["SET spark.hadoop.fs.s3a.secret.key=***;", "SELECT 1"]),
    (f"SET spark.some.password = {PW} and more;", ["SET spark.some.password = ***;"]),
    (f"SET spark.hadoop.fs.s3a.access.key='{PW}'", ["spark.hadoop.fs.s3a.access.key='***'"]),
    (f"set `javax.jdo.option.ConnectionPassword`={PW}", ["`javax.jdo.option.ConnectionPassword`=***"]),
    (f"SELECT 1; SET spark.hadoop.fs.azure.sas.c.acct.blob.core.windows.net={PW}",
     ["SET spark.hadoop.fs.azure.sas.c.acct.blob.core.windows.net=***"]),
    # --conf on a command line, -D system properties, flags
    (f"spark-submit --conf spark.hadoop.fs.s3a.session.token={PW} --conf spark.app.name=etl --name x",
     ["spark.hadoop.fs.s3a.session.token=***", "spark.app.name=etl", "--name x"]),
    (f'spark-submit --conf "spark.some.password={PW} with space" --name x', ['"spark.some.password=***"', "--name x"]),
    (f"--conf spark.driver.extraJavaOptions=-Dspark.ssl.keyStorePassword={PW}", ["-Dspark.ssl.keyStorePassword=***"]),
    (f"beeline -u jdbc:hive2://h:10000 --password {PW} -e 'SELECT 1'", ["--password ***", "jdbc:hive2://h:10000"]),
    # URLs: parameters and user info
    (f"jdbc:postgresql://h/db?user=etl&password={PW}&ssl=true", ["ssl=true", "password=***"]),
    (f"jdbc:sqlserver://h:1433;databaseName=shop;pwd={PW}", ["databaseName=shop", "pwd=***"]),
    (f"https://acct.blob.core.windows.net/c/f.csv?sv=2022-11-02&sig={PW}", ["sv=2022-11-02", "sig=***"]),
    (f"abfss://etl:{PW}@acct.dfs.core.windows.net/path", ["abfss://acct.dfs.core.windows.net/path"]),
    (f"s3a://AKIAEXAMPLE:{PW}@bucket/key", ["s3a://bucket/key"]),
    (f"jdbc:oracle:thin:scott/{PW}@//h:1521/ORCL", ["//h:1521/ORCL"]),
    # JSON, named arguments, headers
    (f'{{"token": "{PW}", "table": "orders"}}', ['"token": "***"', '"table": "orders"']),
    (f"SELECT * FROM read_files(path => '/x', api_key => '{PW}')", ["path => '/x'", "api_key => '***'"]),
    (f"Authorization: Bearer {PW}abcdef", ["Authorization: Bearer ***"]),
    (f"SELECT '{{\"password\": \"{PW}\"}}' AS j FROM t", ['"password": "***"', "AS j FROM t"]),
    # connectors' own spellings: Kafka's JAAS line, Elasticsearch, Redis, Cassandra, MongoDB, GCS
    (f"OPTIONS (`kafka.sasl.jaas.config` 'org.apache.kafka.common.security.plain.PlainLoginModule required "
     f"username=\"etl\" password=\"{PW}\";', subscribe 'events')",
     ["PlainLoginModule required", "password=\"***\"", "subscribe 'events'"]),
    (f"OPTIONS (es.nodes 'es:9200', es.net.http.auth.pass '{PW}')", ["es.nodes 'es:9200'", "auth.pass '***'"]),
    (f"spark-submit --conf spark.redis.auth={PW} --conf spark.redis.host=r", ["spark.redis.auth=***", "spark.redis.host=r"]),
    (f"SET spark.cassandra.auth.password={PW}", ["SET spark.cassandra.auth.password=***"]),
    (f"OPTIONS (uri 'mongodb://etl:{PW}@m:27017/shop', collection 'orders')",
     ["mongodb://m:27017/shop", "collection 'orders'"]),
    (f"spark-submit --conf spark.hadoop.fs.gs.auth.service.account.private.key={PW} "
     "--conf spark.hadoop.fs.gs.auth.type=X",
     ["private.key=***", "fs.gs.auth.type=X"]),
    # comments: on their own line, after a statement, in a block, free text
    (f"-- password={PW}\nINSERT INTO t SELECT * FROM s", ["-- password=***", "INSERT INTO t SELECT * FROM s"]),
    (f"INSERT INTO t SELECT * FROM s; -- token: {PW}", ["INSERT INTO t SELECT * FROM s;", "-- token: ***"]),
    (f"SELECT a /* secret {PW} */ FROM t", ["SELECT a /* secret *** */ FROM t"]),
    (f"/* the prod password is\n   {PW} */\nSELECT 1", ["/* the prod password is\n   *** */", "SELECT 1"]),
    (f"SELECT 1 --sfPassword {PW}", ["SELECT 1 --sfPassword ***"]),
]


@pytest.mark.parametrize(("text", "kept"), SPELLINGS, ids=[t[:48] for t, _ in SPELLINGS])
def test_every_spelling_of_a_secret_is_masked_and_nothing_else(text, kept):
    assert_masked(text, kept)


def assert_masked(text: str, kept: list[str]) -> None:
    """The secret is gone from ``text``, the ``kept`` parts stay, and scrubbing keeps lines and is idempotent."""
    from airflow_lineage_provider.lineage.redact import scrub, secrets_in

    out = scrub(text)
    assert PW not in out, out
    for part in kept:
        assert part in out, (part, out)
    assert any(PW in value for value in secrets_in(text)), secrets_in(text)
    assert out.count("\n") == text.count("\n")  # a script's line numbers stay
    assert scrub(out) == out  # scrubbing twice changes nothing


@pytest.mark.parametrize("text", [
    "SELECT * FROM t WHERE user = 'bob' AND token_count > 3",
    "CREATE TABLE t (password STRING COMMENT 'hashed', token_id INT) USING parquet LOCATION '/data/t'",
    "SET spark.sql.shuffle.partitions=4",
    "SET spark.authenticate.enableSaslEncryption=true",
    "--conf spark.hadoop.fs.s3a.aws.credentials.provider=org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
    "INFO HadoopDelegationTokenManager: Attempting to login to KDC",
    "INSERT INTO passwords_archive SELECT * FROM secrets_staging -- nightly copy",
    "SELECT 'a--b', col FROM t",
    "OPTIONS (path '/data/password_reset/events', header 'true')",
    "jdbc:postgresql://db.example:5432/shop?ssl=true",
    "A user's application: the user's tables and the token's scope",
])
def test_what_is_no_secret_is_left_as_it_is(text):
    assert_untouched(text)


def assert_untouched(text: str) -> None:
    from airflow_lineage_provider.lineage.redact import scrub, secrets_in

    assert scrub(text) == text
    assert secrets_in(text) == []


@pytest.mark.parametrize("name", [
    "password", "Password", "PASSWORD", "sfPassword", "db_passwd", "pwd", "spark.some.password",
    "javax.jdo.option.ConnectionPassword", "aws_secret_access_key", "client_secret", "spark.hadoop.fs.s3a.secret.key",
    "spark.hadoop.fs.s3a.access.key", "fs.s3a.session.token", "fs.azure.account.key.acct.dfs.core.windows.net",
    "fs.azure.sas.c.acct.blob.core.windows.net", "sasToken", "x-api-key", "apiKey", "private_key", "privateKey",
    "pem_private_key_passphrase", "google.cloud.auth.service.account.json.credential", "AuthPassword",
    "ssl.truststore.password", "spark.io.encryption.key", "ConnectionString",
])
def test_secret_names_are_known_by_spelling(name):
    from airflow_lineage_provider.lineage.redact import is_secret_name

    assert is_secret_name(name)


@pytest.mark.parametrize("name", [
    "path", "dbtable", "user_role", "spark.authenticate.enableSaslEncryption", "spark.app.name", "keyspace",
    "spark.hadoop.fs.s3a.aws.credentials.provider", "hadoop.security.credential.provider.path", "primaryKey",
])
def test_names_that_merely_look_secret_are_not(name):
    from airflow_lineage_provider.lineage.redact import is_secret_name

    assert not is_secret_name(name)


def test_scrub_is_linear_on_hostile_input():
    import time

    from airflow_lineage_provider.lineage.redact import scrub

    for text in ("'" * 20000, "`" * 20000, "a.b-" * 20000, "a:/" * 20000, "password '" + "\\'" * 20000,
                 "/* " + "`a" * 20000, "'a' = " * 20000, " /?token=" * 20000, "`/" + "a&b" * 20000,
                 "Authorization: " + "Basic " * 20000, "SET a.password=\n" * 20000):
        start = time.perf_counter()
        scrub(text)
        assert time.perf_counter() - start < 2, text[:20]


def test_the_rule_is_a_table_of_forms_each_with_an_example_it_masks():
    from airflow_lineage_provider.lineage.redact import FORMS, REDACTED, scrub

    for form in FORMS:
        for example in form.example.split(", "):
            out = scrub(example) or ""
            assert REDACTED in out or "v@" not in out and out != example, (form.name, example, out)


def test_user_names_are_masked_but_never_given_to_the_log_masker():
    from airflow_lineage_provider.lineage.redact import scrub, secrets_in

    text = "OPTIONS (user 'etl_loader', password 'Pw12345') jdbc:postgresql://h/db?user=etl_loader&password=Pw67890"
    assert "etl_loader" not in scrub(text)
    assert set(secrets_in(text)) == {"Pw12345", "Pw67890"}


# -- issue 42: credentials that are not names ------------------------------------------------------------
# Signatures, credentials and tokens of pre-signed URLs, Authorization headers under any option name, secret
# keys of properties, SET values on the next line, and secrets inside a path's directories.
NOT_NAMES = [
    # pre-signed URLs: AWS, GCS, Azure SAS, OAuth tokens; in a backquoted path, a literal, free text
    (f"SELECT * FROM parquet.`s3a://b/k.parquet?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential={PW}%2F20260101"
     f"&X-Amz-Signature={PW}`", ["X-Amz-Algorithm=AWS4-HMAC-SHA256", "X-Amz-Credential=***", "X-Amz-Signature=***`"]),
    (f"SELECT x FROM csv.`https://b.s3.amazonaws.com/k?X-Amz-Security-Token={PW}&X-Amz-Date=20260101T0`",
     ["X-Amz-Security-Token=***&X-Amz-Date=20260101T0"]),
    (f"https://storage.googleapis.com/b/o?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Credential=sa%40p%2F{PW}"
     f"&X-Goog-Signature={PW}", ["X-Goog-Algorithm=GOOG4-RSA-SHA256", "X-Goog-Credential=***", "X-Goog-Signature=***"]),
    (f"OPTIONS (path 'wasbs://c@acct.blob.core.windows.net/p?sv=2022-11-02&se=2026&sig={PW}')",
     ["wasbs://c@acct.blob.core.windows.net/p?sv=2022-11-02&se=2026&sig=***'"]),
    (f"https://api.example/v1/x?alt=media&access_token={PW}", ["alt=media&access_token=***"]),
    (f"https://api.example/v1/x?token={PW}#top", ["?token=***#top"]),
    (f"SELECT * FROM parquet.`https://acct.blob.core.windows.net/c/f?sv=2022&sig={PW}`;\nSELECT 1",
     ["sig=***`;\nSELECT 1"]),  # the backquote closing the path stays
    (f"https://h/k?X-Goog-Signature=ab/{PW}&x=1", ["X-Goog-Signature=***&x=1"]),  # a query value holds "/"
    (f"OPTIONS ('X-Amz-Signature' '{PW}', path '/p')", ["'X-Amz-Signature' '***'", "path '/p'"]),
    # Authorization: Basic/Bearer inside an OPTIONS value, under any option name, in JSON, on a --conf
    (f"OPTIONS (url 'https://api/x', headers \"Authorization: Basic {PW}\")", ["url 'https://api/x'", "headers \""]),
    (f"OPTIONS (authorization \"Bearer {PW}\", format 'json')", ['authorization "***"', "format 'json'"]),
    (f"OPTIONS ('http.header.Authorization' = 'Basic {PW}')", ["'http.header.Authorization' = '***'"]),
    (f"OPTIONS (headers '{{\"Accept\": \"json\", \"Authorization\": \"Basic {PW}\"}}')",
     ['"Accept": "json"', '"Authorization": "***"']),
    (f"OPTIONS (headers 'Accept: json\nAuthorization: Basic {PW}\nX-Trace: 1')", ["Accept: json", "X-Trace: 1",
                                                                                "Authorization: Basic ***"]),
    (f"spark-submit --conf spark.hadoop.fs.http.header.Authorization=Basic {PW} --name x",
     ["Authorization=Basic ***", "--name x"]),
    (f"curl -H 'Proxy-Authorization: Negotiate {PW}' https://h/x", ["'Proxy-Authorization: ***'", "https://h/x"]),
    (f"Proxy-Authorization: Negotiate {PW}", ["Proxy-Authorization: Negotiate ***"]),
    (f"Authorization: AWS4-HMAC-SHA256 Credential=AKIA{PW}/20260101/us-east-1/s3/aws4_request, "
     f"SignedHeaders=host, Signature={PW}", ["SignedHeaders=host", "Signature=***"]),
    # secret keys of OPTIONS, TBLPROPERTIES, SERDEPROPERTIES: password, secret, token, credential, sas, key
    (f"CREATE TABLE t (a INT) TBLPROPERTIES ('aws.secret' = '{PW}', 'comment' = 'x')",
     ["'aws.secret' = '***'", "'comment' = 'x'"]),
    (f"ALTER TABLE t SET SERDEPROPERTIES ('serde.password' = '{PW}', 'field.delim' = ',')",
     ["'serde.password' = '***'", "'field.delim' = ','"]),
    (f"CREATE TABLE t (a INT) ROW FORMAT SERDE 's' WITH SERDEPROPERTIES ('credential'='{PW}') STORED AS TEXTFILE",
     ["'credential'='***'", "STORED AS TEXTFILE"]),
    (f"OPTIONS (key '{PW}', path '/p')", ["key '***'", "path '/p'"]),
    (f"TBLPROPERTIES ('key' = '{PW}', 'owner' = 'etl')", ["'key' = '***'", "'owner' = 'etl'"]),
    (f"OPTIONS (sas '{PW}', gcpCredentials \"{PW}\", 'api.token' = '{PW}')",
     ["sas '***'", 'gcpCredentials "***"', "'api.token' = '***'"]),
    (f"OPTIONS (cosmos.masterkey '{PW}', sharedKey '{PW}')", ["cosmos.masterkey '***'", "sharedKey '***'"]),
    # SET: the value on the next line, quoted, over several lines (Spark reads it to the ";")
    (f"SET spark.hadoop.fs.s3a.secret.key=\n  {PW};\nSELECT 1", ["SET spark.hadoop.fs.s3a.secret.key=\n  ***;",
                                                                 "SELECT 1"]),
    (f"SET spark.hadoop.fs.s3a.secret.key =\n'{PW}';\nSELECT 2", ["=\n'***';", "SELECT 2"]),
    (f"SET spark.some.password=\n  \"{PW}\"\n;", ['=\n  "***"\n;']),
    (f"SET spark.some.password = ab\n  {PW};\nSELECT 3", ["SET spark.some.password = ***\n;", "SELECT 3"]),
    (f"SELECT 1;SET `spark.hadoop.fs.s3a.session.token`=\r\n{PW}", ["SELECT 1;SET `spark.hadoop.fs.s3a.session.token`="]),
    # a secret in a path's directory: masked to that directory's end, the rest of the path kept
    (f"INSERT OVERWRITE DIRECTORY '/data/out?x=1&password={PW}/ü' USING parquet SELECT 1",
     ["'/data/out?x=1&password=***/ü'", "USING parquet SELECT 1"]),
    (f"INSERT INTO t SELECT * FROM parquet.`/data/in&token={PW}/part=1`", ["/data/in&token=***/part=1`"]),
    (f"CREATE TABLE t USING parquet LOCATION 'hdfs://nn:8020/d/access_token={PW}/dt=2026-01-01'",
     ["hdfs://nn:8020/d/access_token=***/dt=2026-01-01'"]),
    (f"CREATE TABLE t USING parquet LOCATION 'file:/data/password={PW}/ü'", ["'file:/data/password=***/ü'"]),
    (f"INSERT OVERWRITE DIRECTORY '/data/out dir/x;sig={PW}/y' SELECT 1", ["'/data/out dir/x;sig=***/y'"]),
    (f"WARN FileOutputCommitter: writing s3a://b/out?X-Amz-Signature={PW}/_temporary done",
     ["s3a://b/out?X-Amz-Signature=***/_temporary done"]),
]


@pytest.mark.parametrize(("text", "kept"), NOT_NAMES, ids=[t[:48] for t, _ in NOT_NAMES])
def test_credentials_that_are_not_names_are_masked_and_nothing_else(text, kept):
    assert_masked(text, kept)


@pytest.mark.parametrize("text", [
    "s3a://b/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-SignedHeaders=host&X-Amz-Date=20260101T000000Z",
    "--conf spark.hadoop.fs.s3a.signing-algorithm=S3SignerType --conf signature_version=s3v4",
    "SELECT * FROM kv WHERE key = 'k1' AND value = 'v'",
    "SELECT '{\"key\": \"order-1\", \"n\": 2}' AS j",
    "CREATE TABLE t USING parquet LOCATION '/warehouse/events/dt=2026-01-01/hour=3'",
    "ERROR Authorization failed for user etl",
    "INSERT INTO t SELECT * FROM parquet.`/data/secret_area/part=1`",
])
def test_what_merely_looks_like_a_credential_is_left_as_it_is(text):
    assert_untouched(text)


def test_a_value_no_credential_has_is_never_given_to_the_log_masker():
    from airflow_lineage_provider.lineage.redact import scrub, secrets_in

    text = "spark-submit --conf spark.hadoop.hadoop.security.authorization=true --conf spark.x.password=Pw3secret"
    assert scrub(text) == ("spark-submit --conf spark.hadoop.hadoop.security.authorization=*** "
                           "--conf spark.x.password=***")
    assert secrets_in(text) == ["Pw3secret"]  # "true" would hide every "true" of the task log


@pytest.mark.parametrize(("location", "clean"), [
    (f"/data/out?x=1&password={PW}/ü", "/data/out?x=1&password=***/ü"),
    (f"file:/data/out&token={PW}/part=1", "file:/data/out&token=***/part=1"),
    (f"s3a://AKIA:{PW}@b/k?X-Amz-Signature={PW}/x", "s3a://b/k?X-Amz-Signature=***/x"),
    (f"/data/out dir/password={PW}/sp ace", "/data/out dir/password=***/sp ace"),
    (f"relative/token={PW}/x", "relative/token=***/x"),
    (f"https://h/k?X-Goog-Signature={PW}/x&a=1", "https://h/k?X-Goog-Signature=***&a=1"),
    ("/data/out/dt=2026-01-01", "/data/out/dt=2026-01-01"),
])
def test_a_location_keeps_each_directory_where_it_was_with_its_credential_masked(location, clean):
    from airflow_lineage_provider.lineage.redact import scrub, scrub_location

    assert scrub_location(location) == clean
    assert scrub_location(clean) == clean
    assert PW not in scrub(f"INSERT OVERWRITE DIRECTORY '{location}' SELECT 1")


# The sample of the issue: the stock masker took "JARARGSECRET9" for a key and hid the flag after it.
COMMANDS = [
    (["spark-submit", "app.py", "JARARGSECRET9", "--db-password", PW], "app.py JARARGSECRET9 --db-password ***"),
    (["spark-submit", "app.py", f"--password={PW}", "--out", "/o"], "app.py --password=*** --out /o"),
    (["spark-submit", "app.py", "--token", PW, "--api-key", PW], "--token *** --api-key ***"),
    (["spark-submit", "app.py", "--client-secret", f"a b {PW}", "--verbose"], "--client-secret *** --verbose"),
    (["beeline", "-u", "jdbc:hive2://h:10000", "-n", "etl", "-p", PW], "-n etl -p ***"),
    (["spark-submit", "app.py", "HivePassword", PW, "--mode", "secret", "/out"],
     "HivePassword *** --mode secret /out"),
    (["spark-submit", "--conf", f"spark.hadoop.fs.s3a.secret.key={PW}", "--conf", "spark.app.name=x", "app.py"],
     "spark.hadoop.fs.s3a.secret.key=*** --conf spark.app.name=x app.py"),
    (["spark-submit", "app.py", "--jdbc-url", f"jdbc:postgresql://h/db?user=etl&password={PW}"],
     "--jdbc-url jdbc:postgresql://h/db?user=***&password=***"),
    (["spark-submit", "app.py", f"s3a://b/k?X-Amz-Signature={PW}", "-Dx.password=" + PW],
     "app.py s3a://b/k?X-Amz-Signature=*** -Dx.password=***"),
    (["spark-submit", "driver.py", "--", f"/data/secrets/out&password={PW}/ü", "--db-password", PW],
     "driver.py -- /data/secrets/out&password=***/ü --db-password ***"),  # "--" is no SQL comment here
    (["spark-submit", "app.py", "--use-secret-manager", "--region", "eu", "--input", "/data/secret_area", "/o"],
     "app.py --use-secret-manager --region eu --input /data/secret_area /o"),
]


@pytest.mark.parametrize(("args", "shown"), COMMANDS, ids=[" ".join(a[1:4]) for a, _ in COMMANDS])
def test_a_command_hides_the_values_of_secret_flags_and_keeps_the_flags(args, shown):
    from airflow_lineage_provider.lineage.redact import scrub_command, secrets_in_command

    out = scrub_command(args)
    assert PW not in out and shown in out, out
    found = secrets_in_command(args)
    assert all(any(PW in v for v in found) for a in args if PW in a), found
    assert not any(v in ("secret", "/out", "eu", "/o") for v in found)
