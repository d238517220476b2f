"""The tests' Java fixtures, compiled with the JDK against the jars pyspark ships, once per source version:
the row-level catalog (``tests/java/rowlevel``) with the Spark settings that make it catalog ``rowcat``,
a JVM application (``tests/java/jvmapp``), and an old copy of the listener class (``tests/java/oldlistener``).

No Iceberg or Delta jar can be downloaded where the tests run; this catalog's tables support
MERGE, UPDATE and DELETE as theirs do, so Spark's analyzer makes the same rewritten plans
(``ReplaceData`` copy-on-write, ``WriteDelta`` merge-on-read) and the statements really run.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

SOURCES = Path(__file__).resolve().parent / "java" / "rowlevel"
CATALOG = "rowcat"
CATALOG_CLASS = "lineagetest.RowLevelCatalog"


def _pyspark_jars() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent / "jars"


def compiled_jar(sources: Path, name: str) -> str:
    """The jar of a test fixture's Java sources, compiled by ``javac`` against the jars pyspark ships
    into the system temp directory under a name that holds the sources' hash: a second test run, or
    a changed source, finds its own jar."""
    files = sorted(sources.rglob("*.java"))
    digest = hashlib.sha1(b"".join(f.read_bytes() for f in files)).hexdigest()[:12]
    jar = Path(tempfile.gettempdir()) / f"airflow-lineage-{name}-{digest}.jar"
    if jar.exists():
        return str(jar)
    javac = shutil.which("javac") or (os.path.join(os.environ["JAVA_HOME"], "bin", "javac")
                                      if os.environ.get("JAVA_HOME") else None)
    if not javac:
        raise RuntimeError(f"the test fixture {name} needs a JDK (javac) to compile")
    with tempfile.TemporaryDirectory() as out:
        classpath = os.pathsep.join(str(j) for j in sorted(_pyspark_jars().glob("*.jar")))
        subprocess.run([javac, "-nowarn", "-encoding", "UTF-8", "-d", out, "-cp", classpath, *map(str, files)],
                       check=True, capture_output=True, text=True)
        partial = jar.with_suffix(f".{os.getpid()}.tmp")
        with zipfile.ZipFile(partial, "w") as archive:
            for compiled in Path(out).rglob("*.class"):
                archive.write(compiled, compiled.relative_to(out).as_posix())
        os.replace(partial, jar)  # atomic: two test processes compiling at once both end with one jar
    return str(jar)


def rowlevel_jar() -> str:
    """The row-level catalog's jar."""
    return compiled_jar(SOURCES, "rowlevel")


def jvm_app_jar() -> str:
    """A JVM Spark application (``lineagetest.WriteRange``, ``tests/java/jvmapp``): what the capture
    cannot run under, for the stock operators' untouched path."""
    return compiled_jar(SOURCES.parent / "jvmapp", "jvmapp")


def old_listener_jar() -> str:
    """A jar holding only an old ``airflow_lineage.listener.LineageListener`` (``tests/java/oldlistener``): a class of
    the listener's name that is no ``QueryExecutionListener``."""
    return compiled_jar(SOURCES.parent / "oldlistener", "oldlistener")


def jvm_app_with_old_listener() -> str:
    """The JVM application's jar with the old listener class shaded into it, as a user's fat jar holds one."""
    parts = [jvm_app_jar(), old_listener_jar()]
    digest = hashlib.sha1("\n".join(parts).encode()).hexdigest()[:12]  # each part's name holds its sources' hash
    jar = Path(tempfile.gettempdir()) / f"airflow-lineage-jvmapp-shaded-{digest}.jar"
    if not jar.exists():
        partial = jar.with_suffix(f".{os.getpid()}.tmp")
        with zipfile.ZipFile(partial, "w") as out:
            for part in parts:
                with zipfile.ZipFile(part) as archive:
                    for info in archive.infolist():
                        out.writestr(info, archive.read(info))
        os.replace(partial, jar)
    return str(jar)


def rowlevel_conf() -> dict[str, str]:
    """Spark settings for a session (or a spark-submit) with the catalog ``rowcat``."""
    return {"spark.jars": rowlevel_jar(), f"spark.sql.catalog.{CATALOG}": CATALOG_CLASS}
