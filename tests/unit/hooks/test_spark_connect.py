"""hooks/spark_connect.py and hooks/session_capture.py without a server: what the client reads of the
server's settings, how it waits for its key's result, and what it leaves behind. The real server's side is
tests/integration/test_spark_connect.py."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from airflow_lineage_provider.hooks import session_capture, spark_connect
from airflow_lineage_provider.hooks.jvm_listener import CONNECT_BASE_CONF, FLUSH_CONF, KEY_CONF, LISTENER_CLASS


class Conf:
    def __init__(self, values: dict[str, str]) -> None:
        self.values = dict(values)

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.values.get(key, default)

    def set(self, key: str, value: str) -> None:
        self.values[key] = value

    def unset(self, key: str) -> None:
        self.values.pop(key, None)


class Session:
    """A Connect session's surface the client uses: its conf and SET commands."""

    def __init__(self, conf: dict[str, str], on_sql=None) -> None:
        self.conf = Conf(conf)
        self.ran: list[str] = []
        self.on_sql = on_sql

    def sql(self, text: str) -> None:
        self.ran.append(text)
        if self.on_sql:
            self.on_sql(text)


LISTENING = {"spark.sql.queryExecutionListeners": f"com.acme.Audit, {LISTENER_CLASS}", CONNECT_BASE_CONF: "/srv/l"}


@pytest.mark.parametrize(("conf", "base", "why"), [
    (LISTENING, "/srv/l", ""),
    ({CONNECT_BASE_CONF: "/srv/l"}, None, "does not run the column lineage listener"),
    ({"spark.sql.queryExecutionListeners": "com.acme.Audit"}, None, "does not run the column lineage listener"),
    ({"spark.sql.queryExecutionListeners": LISTENER_CLASS}, None, f"without {CONNECT_BASE_CONF}"),
])
def test_the_server_says_whether_it_runs_the_listener_and_where_it_writes(conf, base, why):
    found, reason = spark_connect.server_base(Session(conf))
    assert found == base and why in reason


def test_a_server_whose_settings_cannot_be_read_gives_a_reason_not_an_exception():
    broken = SimpleNamespace(conf=SimpleNamespace(get=lambda *a: (_ for _ in ()).throw(RuntimeError("gone"))))
    assert spark_connect.server_base(broken) == (None, "the Spark Connect server's settings could not be read "
                                                       "(RuntimeError: gone)")


def write_result(base, key: str, barrier: str, records: list[dict]) -> None:
    directory = base / key
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "plans.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (directory / "result.json").write_text(json.dumps({"error": None, "spark_version": "4.2.0", "barrier": barrier}))


def test_the_result_of_this_barrier_is_read_and_the_keys_directories_removed(tmp_path):
    key = "dag/task/run/1-abc"
    write_result(tmp_path, "dag/task/run/0-old", "an earlier try's", [])  # a sibling stays
    # A result of an earlier barrier of the same key is there first: never taken for this one's.
    write_result(tmp_path, key, "stale", [{"stale": True}])

    def server(text: str) -> None:  # the server answers the barrier with the key's result
        token = text.split("=", 1)[1]
        write_result(tmp_path, key, token, [{"index": 0}])

    spark = Session({KEY_CONF: key}, on_sql=server)
    result = spark_connect.finish(spark, str(tmp_path), key, timeout=5)
    assert result.records == [{"index": 0}] and result.warnings == []
    assert spark.ran[0].startswith(f"SET {FLUSH_CONF}=") and KEY_CONF not in spark.conf.values
    assert not (tmp_path / key).exists() and (tmp_path / "dag/task/run/0-old").exists()


def test_a_key_whose_directories_are_all_its_own_leaves_none(tmp_path):
    write_result(tmp_path, "d/t/r/1-x", "tok", [])
    spark_connect.forget(str(tmp_path), "d/t/r/1-x")
    assert list(tmp_path.iterdir()) == []


def test_a_base_this_worker_does_not_see_is_given_up_early_saying_so(tmp_path, monkeypatch):
    monkeypatch.setattr(spark_connect, "_UNSEEN_S", 0.3)
    result = spark_connect.finish(Session({}), str(tmp_path / "elsewhere"), "k", timeout=60)
    assert result.records == [] and "is not a directory on this worker" in result.warnings[0]
    assert "connect_dump_base" in result.warnings[0]


def test_a_barrier_the_server_refuses_is_a_warning(tmp_path):
    def refuse(text: str) -> None:
        raise RuntimeError("session closed")

    spark = Session({KEY_CONF: "k"}, on_sql=refuse)
    result = spark_connect.finish(spark, str(tmp_path), "k", timeout=5)
    assert "barrier could not run" in result.warnings[0] and KEY_CONF not in spark.conf.values


def test_a_session_is_told_apart_by_its_class_not_by_importing_the_connect_client():
    connect = type("SparkSession", (), {"__module__": "pyspark.sql.connect.session"})()
    classic = type("SparkSession", (), {"__module__": "pyspark.sql.session"})()
    assert session_capture.is_connect(connect) and not session_capture.is_connect(classic)


def test_what_is_no_session_is_not_captured_and_says_why():
    capture, why = session_capture.begin(object(), "k")
    assert capture is None and "is not a SparkSession" in why


def test_a_connect_session_without_the_listener_is_not_captured_and_says_why():
    spark = type("SparkSession", (), {"__module__": "pyspark.sql.connect.session"})()
    spark.conf = Conf({})
    capture, why = session_capture.begin(spark, "k")
    assert capture is None and "does not run the column lineage listener" in why and KEY_CONF not in spark.conf.values
