"""The JVM listener's committed jar: built from its sources, and told what the Python side knows."""

from __future__ import annotations

import importlib.util
import re
import zipfile

import pytest

from airflow_lineage_provider.hooks import jvm_listener
from tests.helpers import ROOT

JAR = jvm_listener.JAR
LISTENER = JAR.parent


def _build_script():
    spec = importlib.util.spec_from_file_location("build_listener", ROOT / "scripts" / "build_listener.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build_listener = _build_script()


def _entries(jar) -> dict[str, bytes]:
    with zipfile.ZipFile(jar) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def test_the_jar_holds_every_source_class_and_the_python_sides_tables():
    entries = _entries(JAR)
    for source in (LISTENER / "java").rglob("*.java"):
        name = source.relative_to(LISTENER / "java").with_suffix(".class").as_posix()
        assert name in entries, f"{name} is missing: run python scripts/build_listener.py"
    # What the listener knows of writes.py and naming.py is generated from them, never typed twice.
    props = entries["airflow_lineage/listener/lineage.properties"].decode()
    assert props == build_listener.properties(), "lineage.properties is stale: run python scripts/build_listener.py"
    from airflow_lineage_provider.lineage.plan.writes import WRITES

    commands = re.search(r"^commands=(.*)$", props, re.M).group(1).split(",")
    assert set(commands) == set(WRITES)


def test_class_files_target_java_17():
    for name, data in _entries(JAR).items():
        if name.endswith(".class"):
            major = int.from_bytes(data[6:8], "big")
            assert major == 61, f"{name} is class file version {major}, not Java 17's 61"


def test_the_build_is_reproducible_byte_for_byte(tmp_path):
    if build_listener.javac() is None:
        pytest.skip("no javac (a JDK) here: the committed jar cannot be rebuilt to compare")
    local = build_listener.javac_version(build_listener.javac())
    manifest = _entries(JAR)["META-INF/MANIFEST.MF"].decode()
    built_with = re.search(r"Javac-Version: (\S+)", manifest).group(1)
    if local.split(".")[0] != built_with.split(".")[0]:
        pytest.skip(f"javac {local} here, the jar was built with javac {built_with}: their class files may differ")
    rebuilt = _entries(build_listener.build(tmp_path))
    committed = _entries(JAR)
    stale = sorted(n for n in set(rebuilt) | set(committed)
                   if n != "META-INF/MANIFEST.MF" and rebuilt.get(n) != committed.get(n))
    assert not stale, f"the committed jar differs from its sources in {stale}: run python scripts/build_listener.py"


def test_the_package_ships_the_jar_and_its_sources():
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '"job/listener/*.jar"' in pyproject and '"job/listener/java/**/*.java"' in pyproject


def test_the_java_reads_every_write_command_the_python_capture_reads():
    """``Describe.writeDetails`` has a case for each command of ``job/jvm._WRITE_READERS``: a command
    read in one producer and not the other names its target differently in each."""
    from airflow_lineage_provider.job.jvm import _WRITE_READERS

    source = (LISTENER / "java" / "airflow_lineage" / "listener" / "Describe.java").read_text()
    cases = set(re.findall(r'case "(\w+)":', source))
    assert cases == set(_WRITE_READERS), (sorted(set(_WRITE_READERS) - cases), sorted(cases - set(_WRITE_READERS)))


def test_the_java_reads_a_writes_sql_text_after_the_same_heads_as_the_python_capture():
    """``Describe.WRITE_HEADS`` is ``job/jvm.WRITE_HEADS``: a CTAS's text kept by one producer and not the
    other would make their documents differ."""
    from airflow_lineage_provider.job.jvm import WRITE_HEADS

    source = (LISTENER / "java" / "airflow_lineage" / "listener" / "Describe.java").read_text()
    heads = re.search(r"WRITE_HEADS = Set\.of\(([^)]*)\)", source).group(1)
    assert set(re.findall(r'"(\w+)"', heads)) == WRITE_HEADS
