"""hooks/jvm_listener.py without a JVM: the contract with the Java sources, the jar's check and copy, and the
Spark conf that registers the listener after what the user set (never instead of it)."""

from __future__ import annotations

import re
import shutil
import zipfile

import pytest

from airflow_lineage_provider.hooks import jvm_listener
from airflow_lineage_provider.hooks.jvm_listener import (
    CLASS_ENTRIES,
    DUMP_CONF,
    LISTENER_CLASS,
    LISTENERS_CONF,
    STREAM_LISTENER_CLASS,
    STREAM_LISTENERS_CONF,
    checked_copy,
    is_jvm_application,
    jars_with,
    listener_conf,
    parse_properties,
    spark_defaults,
)
from tests.helpers import damage_crc

OURS = LISTENER_CLASS
CLASS_ENTRY = CLASS_ENTRIES[0]  # the query listener's: each check below is the same for the stream listener's


# -- the contract with the Java side ---------------------------------------------------------------


def test_the_class_names_and_conf_are_the_java_sources_own():
    def declared(entry: str, kind: str) -> str:
        source = (jvm_listener.JAVA_SOURCES / (entry[: -len(".class")] + ".java")).read_text()
        package = re.search(r"^package ([\w.]+);", source, re.M).group(1)
        name = re.search(r"public final class (\w+) " + kind, source).group(1)
        return f"{package}.{name}"

    assert declared(CLASS_ENTRIES[0], "implements QueryExecutionListener") == LISTENER_CLASS
    assert declared(CLASS_ENTRIES[1], "extends StreamingQueryListener") == STREAM_LISTENER_CLASS
    listener = (jvm_listener.JAVA_SOURCES / (CLASS_ENTRY[: -len(".class")] + ".java")).read_text()
    assert f'DUMP_CONF = "{DUMP_CONF}"' in listener
    for name in ("CONNECT_BASE_CONF", "KEY_CONF", "FLUSH_CONF"):
        assert f'{name} = "{getattr(jvm_listener, name)}"' in listener, name


# -- Spark Connect: the key a client may name, the server's conf -------------------------------------


@pytest.mark.parametrize("key", ["../x", "a/../b", "/abs", "s3a://bucket/x", "file:/x", ".hidden", "a/.b", "a\\b",
                                 "a%2F..", "", "a//b", "a/", "a b", "x/" * 8 + "x", "k" * 129])
def test_a_key_that_could_leave_the_base_is_refused(key):
    """The server refuses these (the jar holds the same pattern: test_listener_jar), so no client chooses
    where the server writes: never above the base, never a scheme, never a hidden or shared spelling."""
    assert not re.fullmatch(jvm_listener.KEY_PATTERN, key)


def test_a_task_try_gets_a_key_the_server_accepts_whatever_its_ids_hold():
    key = jvm_listener.connect_key("etl.daily", "load/../users", "manual__2026-11-27T00:52:09+00:00", "2-ab12")
    assert key == "etl.daily/load_.._users/manual__2026-11-27T00_52_09+00_00/2-ab12"
    assert re.fullmatch(jvm_listener.KEY_PATTERN, key)
    assert re.fullmatch(jvm_listener.KEY_PATTERN, jvm_listener.connect_key("..", ".x", "", "k" * 300))


def test_the_connect_server_conf_names_the_base_and_keeps_the_sites_listeners():
    conf = jvm_listener.connect_server_conf("s3a://b/lineage", {LISTENERS_CONF: "com.site.Audit"})
    assert conf == {LISTENERS_CONF: f"com.site.Audit,{OURS}", STREAM_LISTENERS_CONF: STREAM_LISTENER_CLASS,
                    jvm_listener.CONNECT_BASE_CONF: "s3a://b/lineage"}
    assert DUMP_CONF not in conf  # the base is no application's dump: each client key gets one under it


def test_the_shipped_jar_holds_the_listener_classes_and_passes_the_check(tmp_path):
    with zipfile.ZipFile(jvm_listener.JAR) as archive:
        assert set(CLASS_ENTRIES) <= set(archive.namelist())
        assert archive.testzip() is None
    copy, why = checked_copy(str(tmp_path))
    assert (copy, why) == (str(tmp_path / jvm_listener.JAR.name), "")


# -- the check and the copy --------------------------------------------------------------------------


@pytest.fixture
def shipped(tmp_path, monkeypatch):
    """The jar the check reads, pointed at a copy of the real one the test may damage or remove."""
    jar = tmp_path / "shipped" / "airflow-lineage-listener.jar"
    jar.parent.mkdir()
    shutil.copy(jvm_listener.JAR, jar)
    monkeypatch.setattr(jvm_listener, "JAR", jar)
    staging = tmp_path / "staging"
    staging.mkdir()
    return jar, staging


def test_a_checked_copy_is_the_jar_byte_for_byte_and_outlives_the_shipped_one(shipped):
    jar, staging = shipped
    copy, why = checked_copy(str(staging))
    assert why == "" and open(copy, "rb").read() == jar.read_bytes()
    jar.unlink()  # removed (an upgrade, a cleaner) after the check: the run's copy is its own
    with zipfile.ZipFile(copy) as archive:
        assert archive.testzip() is None and CLASS_ENTRY in archive.namelist()
    assert [p.name for p in staging.iterdir()] == [jar.name]  # no partial file left beside it


def test_a_missing_jar_is_not_added_and_says_why(shipped):
    jar, staging = shipped
    jar.unlink()
    assert checked_copy(str(staging)) == (None, f"the listener jar {jar} cannot be read (No such file or directory)")
    assert list(staging.iterdir()) == []


def test_a_file_that_is_no_zip_is_not_added(shipped):
    jar, staging = shipped
    jar.write_bytes(b"PK\x03\x04 a truncated download")
    copy, why = checked_copy(str(staging))
    assert copy is None and why.startswith(f"the listener jar {jar} is not a jar (")


def test_an_entry_that_fails_its_crc_is_found(shipped):
    jar, staging = shipped
    damage_crc(jar, CLASS_ENTRY)
    assert checked_copy(str(staging)) == (None, f"the listener jar {jar} is damaged (its entry {CLASS_ENTRY} fails "
                                                "its CRC check)")
    assert list(staging.iterdir()) == []


def test_a_jar_without_the_listener_class_is_not_added(shipped):
    jar, staging = shipped
    with zipfile.ZipFile(jar, "w") as archive:
        archive.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
    assert checked_copy(str(staging)) == (None, f"the listener jar {jar} does not hold the listener's "
                                                f"{', '.join(CLASS_ENTRIES)}")


def test_a_staging_directory_that_cannot_be_written_is_said(tmp_path):
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    copy, why = checked_copy(str(not_a_dir))
    assert copy is None and why.startswith(f"the listener jar could not be copied to {not_a_dir} (")


# -- what is a JVM application -----------------------------------------------------------------------


@pytest.mark.parametrize(("application", "java_class", "jvm"), [
    ("/jobs/etl.jar", None, True), ("hdfs://nn/jobs/ETL.JAR", "com.x.Etl", True), ("/jobs/etl", "com.x.Etl", True),
    ("/jobs/app.py", None, False), ("/jobs/app.py", "com.x.Etl", False), ("/jobs/report.R", None, False),
])
def test_a_jar_or_a_main_class_is_a_jvm_application(application, java_class, jvm):
    assert is_jvm_application(application, java_class) is jvm


# -- the conf: ours after the user's ---------------------------------------------------------------------


def test_the_listeners_are_added_with_the_dump_when_the_user_set_none():
    ours = {LISTENERS_CONF: OURS, STREAM_LISTENERS_CONF: STREAM_LISTENER_CLASS}
    assert listener_conf({}, "/tmp/dump") == {**ours, DUMP_CONF: "/tmp/dump"}
    assert listener_conf(None, "hdfs://nn/d/run-1") == {**ours, DUMP_CONF: "hdfs://nn/d/run-1"}


def test_the_users_listeners_are_kept_in_order_and_ours_appended_once():
    conf = {LISTENERS_CONF: "com.a.First, com.b.Second", STREAM_LISTENERS_CONF: "com.a.Streams"}
    added = listener_conf(conf, "/d")
    assert added[LISTENERS_CONF] == f"com.a.First,com.b.Second,{OURS}"
    assert added[STREAM_LISTENERS_CONF] == f"com.a.Streams,{STREAM_LISTENER_CLASS}"
    again = {LISTENERS_CONF: f"com.a.First,{OURS},com.a.First,"}  # ours already there, a repeat, a blank
    assert listener_conf(again, "/d")[LISTENERS_CONF] == f"com.a.First,{OURS}"


def test_a_listener_set_in_the_defaults_file_is_kept_and_the_tasks_conf_wins_over_it():
    defaults = {LISTENERS_CONF: "com.site.Audit", STREAM_LISTENERS_CONF: "com.site.Streams"}
    added = listener_conf({}, "/d", defaults)
    assert added[LISTENERS_CONF] == f"com.site.Audit,{OURS}"
    assert added[STREAM_LISTENERS_CONF] == f"com.site.Streams,{STREAM_LISTENER_CLASS}"
    # spark-submit takes the --conf value over the file's: so does the merge.
    assert listener_conf({LISTENERS_CONF: "com.task.Own"}, "/d", defaults)[LISTENERS_CONF] == f"com.task.Own,{OURS}"


def test_our_jar_is_appended_to_the_jars_the_user_gave():
    assert jars_with(None, {}, {}, "/s/l.jar") == "/s/l.jar"
    assert jars_with("/a.jar,/b.jar", {}, {}, "/s/l.jar") == "/a.jar,/b.jar,/s/l.jar"
    assert jars_with("/a.jar,/s/l.jar", {}, {}, "/s/l.jar") == "/a.jar,/s/l.jar"


def test_spark_jars_from_the_conf_or_the_defaults_survive_our_jars_flag():
    """spark-submit's --jars replaces spark.jars: without a --jars of the user's, theirs is carried over."""
    assert jars_with(None, {"spark.jars": "/c.jar"}, {"spark.jars": "/d.jar"}, "/l.jar") == "/c.jar,/l.jar"
    assert jars_with(None, {}, {"spark.jars": "/d.jar"}, "/l.jar") == "/d.jar,/l.jar"
    assert jars_with("/a.jar", {"spark.jars": "/c.jar"}, {}, "/l.jar") == "/a.jar,/l.jar"  # as spark-submit does


# -- the properties spark-submit loads -----------------------------------------------------------------------


def test_properties_are_read_as_spark_reads_them():
    text = ("# a comment\n! another\n\nspark.a  one\nspark.b=two\nspark.c : three \n"
            "spark.sql.queryExecutionListeners com.a.X,\\\n    com.b.Y\n  spark.d\n")
    assert parse_properties(text) == {"spark.a": "one", "spark.b": "two", "spark.c": "three",
                                      LISTENERS_CONF: "com.a.X,com.b.Y", "spark.d": ""}


def test_the_defaults_file_is_found_where_spark_submit_looks(tmp_path):
    conf_dir, home = tmp_path / "conf_dir", tmp_path / "spark"
    (home / "conf").mkdir(parents=True)
    (home / "bin").mkdir()
    (home / "bin" / "spark-submit").write_text("#!/bin/sh\n")
    conf_dir.mkdir()
    (conf_dir / "spark-defaults.conf").write_text("spark.x from-conf-dir\n")
    (home / "conf" / "spark-defaults.conf").write_text("spark.x from-home\n")
    props = tmp_path / "job.properties"
    props.write_text("spark.x from-properties-file\n")

    assert spark_defaults({"SPARK_CONF_DIR": str(conf_dir), "SPARK_HOME": str(home)}) == {"spark.x": "from-conf-dir"}
    assert spark_defaults({"SPARK_HOME": str(home)}) == {"spark.x": "from-home"}
    assert spark_defaults({}, spark_home=str(home)) == {"spark.x": "from-home"}
    assert spark_defaults({}, spark_binary=str(home / "bin" / "spark-submit")) == {"spark.x": "from-home"}
    # --properties-file: spark-submit loads it instead of spark-defaults.conf
    assert spark_defaults({"SPARK_CONF_DIR": str(conf_dir)}, properties_file=str(props)) == {
        "spark.x": "from-properties-file"}
    assert spark_defaults({"SPARK_CONF_DIR": str(tmp_path / "none")}) == {}  # best effort: nothing there
    assert spark_defaults({}) == {}


# -- issue 42: a user's jar that holds listener classes -------------------------------------------------------

OLD = b"\xca\xfe\xba\xbe an older LineageListener"
WHY = "an older copy of the listener would be loaded and fail the run"


def _ours() -> dict[str, bytes]:
    with zipfile.ZipFile(jvm_listener.JAR) as archive:
        return {n: archive.read(n) for n in archive.namelist() if n.startswith("airflow_lineage/") and n[-1] != "/"}


def _jar(path, entries: dict[str, bytes], manifest: str = "Manifest-Version: 1.0\n"):
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("META-INF/MANIFEST.MF", manifest)
        archive.writestr("lineagetest/Etl.class", b"\xca\xfe\xba\xbe the user's own")
        for name, data in entries.items():
            archive.writestr(name, data)
    return str(path)


def _shaded(tmp_path, name: str = "app.jar", entry: str = CLASS_ENTRY) -> str:
    return _jar(tmp_path / name, {entry: OLD})


def _shadowing(application=None, jars=None, conf=None, defaults=None, driver_class_path=None):
    return jvm_listener.shadowing(str(jvm_listener.JAR), application, jars, conf, defaults, driver_class_path)


def test_an_old_listener_class_in_the_application_jar_is_found_naming_the_jar_and_the_class(tmp_path):
    app = _shaded(tmp_path)
    assert _shadowing(app) == (f"{app} holds another copy of the listener's class {OURS}: {WHY}", [])


@pytest.mark.parametrize("place", ["--jars", "--jars second", "--jars glob", "--jars file: URI", "--jars local: URI",
                                   "spark.jars conf", "spark.jars defaults", "extraClassPath conf jar",
                                   "extraClassPath defaults", "--driver-class-path", "extraClassPath dir/*",
                                   "extraClassPath class directory"])
def test_an_old_copy_is_found_wherever_the_driver_loads_the_jobs_classes_from(tmp_path, place):
    dep = _shaded(tmp_path / "libs", "dep.jar")
    other = _jar(tmp_path / "libs" / "a-other.jar", {})
    classes = tmp_path / "classes"
    (classes / "airflow_lineage" / "listener").mkdir(parents=True)
    (classes / CLASS_ENTRY).write_bytes(OLD)
    app = _jar(tmp_path / "app.jar", {})
    given = {
        "--jars": {"jars": dep}, "--jars second": {"jars": f"{other}, {dep}"},
        "--jars glob": {"jars": f"{tmp_path}/libs/*.jar"}, "--jars file: URI": {"jars": f"file://{dep}"},
        "--jars local: URI": {"jars": f"local:{dep}"}, "spark.jars conf": {"conf": {"spark.jars": f"{other},{dep}"}},
        "spark.jars defaults": {"defaults": {"spark.jars": dep}},
        "extraClassPath conf jar": {"conf": {"spark.driver.extraClassPath": f"{other}:{dep}"}},
        "extraClassPath defaults": {"defaults": {"spark.driver.extraClassPath": dep}},
        "--driver-class-path": {"driver_class_path": f"/nowhere/x.jar:{dep}"},
        "extraClassPath dir/*": {"conf": {"spark.driver.extraClassPath": f"{tmp_path}/libs/*"}},
        "extraClassPath class directory": {"conf": {"spark.driver.extraClassPath": str(classes)}},
    }[place]
    found = str(classes) if place.endswith("directory") else dep
    assert _shadowing(app, **given) == (f"{found} holds another copy of the listener's class {OURS}: {WHY}", [])


@pytest.mark.parametrize(("entries", "said"), [
    ({"airflow_lineage/listener/Keys.class": OLD}, "class airflow_lineage.listener.Keys"),
    ({"airflow_lineage/listener/Capture$1.class": OLD}, "class airflow_lineage.listener.Capture$1"),
    ({CLASS_ENTRIES[1]: OLD}, f"class {STREAM_LISTENER_CLASS}"),
    ({"airflow_lineage/listener/lineage.properties": b"key.pattern=.*\n"},
     "entry airflow_lineage/listener/lineage.properties"),
    # several: the listener class is named, the rest counted
    ({"airflow_lineage/listener/Keys.class": OLD, "airflow_lineage/listener/Scala.class": OLD, CLASS_ENTRY: OLD},
     f"class {OURS} and 2 more of its entries"),
])
def test_any_entry_of_ours_with_other_bytes_is_a_copy_that_would_be_loaded(tmp_path, entries, said):
    app = _jar(tmp_path / "app.jar", entries)
    assert _shadowing(app) == (f"{app} holds another copy of the listener's {said}: {WHY}", [])


def test_an_identical_copy_of_our_classes_is_ours_and_no_conflict(tmp_path):
    app = _jar(tmp_path / "app.jar", _ours())  # the listener shaded in from this very release
    partial = _jar(tmp_path / "dep.jar", {CLASS_ENTRY: _ours()[CLASS_ENTRY],
                                          "airflow_lineage/listener/OldHelper.class": OLD})  # not one of ours
    assert _shadowing(app, jars=partial) == ("", [])


@pytest.mark.parametrize("entry", ["BOOT-INF/classes/" + CLASS_ENTRY, "WEB-INF/classes/" + CLASS_ENTRY,
                                   "shaded/" + CLASS_ENTRY, "/" + CLASS_ENTRY, "Airflow_Lineage/listener/LineageListener"
                                   ".class", "META-INF/versions/17/" + CLASS_ENTRY, "airflow_lineage/listener/"])
def test_an_entry_no_class_loader_reads_as_ours_is_no_conflict(tmp_path, entry):
    """Spring Boot's and a war's nested classes, a relocated copy, other spellings, a versioned entry of a jar that is
    not multi-release, a directory entry."""
    assert _shadowing(_jar(tmp_path / "app.jar", {entry: OLD})) == ("", [])


def test_a_jar_nested_in_the_jar_is_not_read_by_the_class_loader(tmp_path):
    inner = _shaded(tmp_path / "inner")
    app = _jar(tmp_path / "app.jar", {"lib/old-lineage.jar": open(inner, "rb").read()})
    assert _shadowing(app) == ("", [])


def test_a_multi_release_jars_versioned_copy_is_loaded_on_a_newer_jdk_so_it_counts(tmp_path):
    entry = "META-INF/versions/11/" + CLASS_ENTRY
    app = _jar(tmp_path / "app.jar", {CLASS_ENTRY: _ours()[CLASS_ENTRY], entry: OLD},
               manifest="Manifest-Version: 1.0\nMulti-Release: true\n")
    assert _shadowing(app) == (f"{app} holds another copy of the listener's class {OURS} (as {entry}): {WHY}", [])


def test_a_repeated_entry_counts_each_copy(tmp_path):
    app = tmp_path / "app.jar"
    with zipfile.ZipFile(app, "w") as archive, pytest.warns(UserWarning, match="Duplicate name"):
        archive.writestr(CLASS_ENTRY, _ours()[CLASS_ENTRY])
        archive.writestr(CLASS_ENTRY, OLD)
    assert _shadowing(str(app))[0] == f"{app} holds another copy of the listener's class {OURS}: {WHY}"


def test_a_copy_that_cannot_be_read_back_is_not_taken_for_ours(tmp_path):
    app = tmp_path / "app.jar"
    _jar(app, {CLASS_ENTRY: _ours()[CLASS_ENTRY]})
    damage_crc(app, CLASS_ENTRY)
    assert _shadowing(str(app))[0] == f"{app} holds another copy of the listener's class {OURS}: {WHY}"


def test_jars_spark_submit_does_not_load_are_not_looked_into(tmp_path):
    dep = _shaded(tmp_path, "dep.jar")
    mine = _jar(tmp_path / "mine.jar", {})
    # --jars replaces spark.jars; --driver-class-path replaces spark.driver.extraClassPath
    assert _shadowing(jars=mine, conf={"spark.jars": dep}) == ("", [])
    assert _shadowing(jars=mine, defaults={"spark.jars": dep}) == ("", [])
    assert _shadowing(driver_class_path=mine, conf={"spark.driver.extraClassPath": dep}) == ("", [])
    assert _shadowing(conf={"spark.executor.extraClassPath": dep}) == ("", [])  # executors never load the listener


@pytest.mark.parametrize("content", [b"not a zip at all", b"PK\x03\x04 a truncated download", b""])
def test_a_jar_that_cannot_be_opened_holds_nothing_a_class_loader_reads(tmp_path, content):
    broken = tmp_path / "broken.jar"
    broken.write_bytes(content)
    assert _shadowing(str(broken), jars=f"{tmp_path}/missing.jar") == ("", [])


def test_a_remote_jar_cannot_be_looked_into_it_is_returned_not_held_against_the_job(tmp_path):
    remote = ["hdfs://nn:8020/jobs/etl.jar", "s3a://bucket/libs/dep.jar", "https://repo.example/x.jar"]
    assert _shadowing(remote[0], jars=",".join(remote[1:])) == ("", remote)
    # a local copy next to them is still found
    dep = _shaded(tmp_path, "dep.jar")
    why, unseen = _shadowing(remote[0], jars=f"{remote[1]},{dep}")
    assert why == f"{dep} holds another copy of the listener's class {OURS}: {WHY}" and unseen == remote[:2]


def test_a_jar_named_in_a_jars_manifest_class_path_is_looked_into_too(tmp_path):
    """The class loader opens the jars a jar's manifest lists (relative to it); a wrapped header line too."""
    old = _shaded(tmp_path / "app" / "lib dir", "old-lineage.jar")
    _jar(tmp_path / "app" / "lib dir" / "first.jar", {})  # looked into first: holds nothing of ours
    # wrapped as the jar tool wraps at 72 bytes: the continuation's first space is dropped, the rest joined
    header = "Class-Path: lib%20dir/first.jar missing.jar \n lib%20dir/old-line\n age.jar\n"
    app = _jar(tmp_path / "app" / "app.jar", {}, manifest=f"Manifest-Version: 1.0\n{header}")
    assert _shadowing(app) == (f"{old} holds another copy of the listener's class {OURS}: {WHY}", [])


def test_a_manifest_class_path_that_loops_or_leaves_the_worker_ends(tmp_path):
    a = tmp_path / "a.jar"
    _jar(tmp_path / "b.jar", {}, manifest="Manifest-Version: 1.0\nClass-Path: a.jar https://repo.example/c.jar\n")
    _jar(a, {}, manifest="Manifest-Version: 1.0\nClass-Path: b.jar\n")
    assert _shadowing(str(a)) == ("", ["https://repo.example/c.jar"])
