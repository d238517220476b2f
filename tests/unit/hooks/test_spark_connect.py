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


# -- issue 42: sealed files, bounded waits, what a log shows, what cleanup touches --------------------------

def sealed_server(base, key: str, secret: str, records: list[dict], *, tamper=None):
    """A server that answers the barrier with the key's files sealed under ``secret`` (as the listener's
    DumpFiles seals them), then lets ``tamper`` change them."""
    import hashlib
    import hmac

    def answer(text: str) -> None:
        if not text.startswith(f"SET {FLUSH_CONF}="):
            return
        token = text.split("=", 1)[1]
        directory = base / key
        directory.mkdir(parents=True, exist_ok=True)
        plans = "".join(json.dumps(r) + "\n" for r in records).encode()
        result = json.dumps({"error": None, "barrier": token, "warnings": []}).encode()
        (directory / "plans.jsonl").write_bytes(plans)
        (directory / spark_connect.SEAL).write_text(hmac.new(secret.encode(), plans + result, hashlib.sha256).hexdigest())
        (directory / "result.json").write_bytes(result)
        if tamper:
            tamper(directory)

    return answer


def appended(directory) -> None:
    with open(directory / "plans.jsonl", "a") as f:
        f.write(json.dumps({"index": 9, "forged": True}) + "\n")


@pytest.mark.parametrize(("tamper", "taken"), [
    (None, True),
    (appended, False),
    (lambda d: (d / "plans.jsonl").write_text(""), False),  # records dropped
    (lambda d: (d / spark_connect.SEAL).unlink(), False),  # no seal at all
    (lambda d: (d / spark_connect.SEAL).write_text("0" * 64), False),
    (lambda d: (d / "result.json").write_text((d / "result.json").read_text().replace('"warnings": []',
                                                                                    '"warnings": ["x"]')), False),
])
def test_a_keys_files_are_taken_only_with_the_servers_seal(tmp_path, tamper, taken):
    key, secret = "d/t/r/1-abcdef12", "s" * 64
    spark = Session({}, on_sql=sealed_server(tmp_path, key, secret, [{"index": 0}], tamper=tamper))
    result = spark_connect.finish(spark, str(tmp_path), key, secret=secret, timeout=5)
    if taken:
        assert result.records == [{"index": 0}] and result.warnings == []
    else:
        assert result.records == []
        assert result.warnings == ["no plan lineage: the lineage files of key d/t/r/1-******** do not carry the Spark "
                                   "Connect server's seal: something other than the server wrote or changed them, so "
                                   "they are refused"]
    assert not (tmp_path / "d").exists()  # read or refused, the key's files are gone


def test_a_result_planted_before_the_barrier_is_never_taken_for_it(tmp_path):
    """A result under the key that answers another token (planted, or an earlier barrier's) is passed over;
    the server's own result, when it comes, is taken."""
    key, secret = "d/t/r/1-abcdef12", "s" * 64
    (tmp_path / key).mkdir(parents=True)
    (tmp_path / key / "result.json").write_text(json.dumps({"barrier": "guessed", "error": None}))
    spark = Session({}, on_sql=sealed_server(tmp_path, key, secret, [{"index": 0}]))
    assert spark_connect.finish(spark, str(tmp_path), key, secret=secret, timeout=5).records == [{"index": 0}]


def test_the_client_names_its_secret_before_its_key_and_unsets_both_after_the_barrier(tmp_path):
    from airflow_lineage_provider.hooks.jvm_listener import SECRET_CONF

    spark = Session({})
    seen: list[tuple[str, str | None]] = []
    spark.on_sql = lambda text: seen.append((text, spark.conf.get(SECRET_CONF)))
    secret = spark_connect.start(spark, "d/t/r/1-abcdef12")
    assert len(secret) == 64 and seen == [(f"SET {KEY_CONF}=d/t/r/1-abcdef12", secret)]
    spark_connect.finish(spark, str(tmp_path), "d/t/r/1-abcdef12", secret=secret, timeout=0.3)
    assert SECRET_CONF not in spark.conf.values and KEY_CONF not in spark.conf.values


@pytest.mark.parametrize("step", ["start", "barrier", "settings"])
def test_a_server_that_never_answers_costs_the_timeout_and_says_so(tmp_path, step):
    import threading

    hang = threading.Event()
    spark = Session({**LISTENING}, on_sql=lambda text: hang.wait(30))
    if step == "start":
        with pytest.raises(spark_connect.ServerTimeoutError, match="did not answer the start of the lineage capture "
                                                                   "within 0.3 s"):
            spark_connect.start(spark, "k", timeout=0.3)
    elif step == "barrier":
        result = spark_connect.finish(spark, str(tmp_path), "k", timeout=0.3)
        assert result.warnings == ["no plan lineage: the Spark Connect server did not answer the lineage barrier "
                                   "within 0.3 s (is it still running and reachable?)"]
    else:
        spark.conf.get = lambda *a: hang.wait(30)
        assert spark_connect.server_base(spark, timeout=0.3)[1] == (
            "the Spark Connect server did not answer the lineage settings' read within 0.3 s (is it still running "
            "and reachable?)")
    hang.set()


@pytest.mark.parametrize(("key", "shown"), [
    ("dag/task/manual__2026-01-01/1-0a1b2c3d", "dag/task/manual__2026-01-01/1-********"),
    ("dag/task/run/12-ffffffffffff", "dag/task/run/12-********"),
    ("etl/load", "etl/load"),  # a key of the user's own: nothing to hide
    ("single-abc", "single-abc"),
    ("a/b-1234567", "a/b-********"),
])
def test_a_logged_key_never_shows_its_nonce(key, shown):
    assert spark_connect.shown_key(key) == shown


@pytest.mark.parametrize("link", ["d", "d/t", "d/t/r", "d/t/r/1-abcdef12"])
def test_cleanup_never_follows_a_link_planted_in_the_base(tmp_path, link):
    base, outside = tmp_path / "base", tmp_path / "outside"
    (outside / "t" / "r" / "1-abcdef12").mkdir(parents=True)
    (outside / "t" / "r" / "1-abcdef12" / "plans.jsonl").write_text("theirs")
    (outside / "plans.jsonl").write_text("theirs")
    (base / link).parent.mkdir(parents=True, exist_ok=True)
    (base / link).symlink_to(outside)
    spark_connect.forget(str(base), "d/t/r/1-abcdef12")
    assert sorted(p.relative_to(outside).as_posix() for p in outside.rglob("plans.jsonl")) == [
        "plans.jsonl", "t/r/1-abcdef12/plans.jsonl"]
    assert (base / link).is_symlink()
