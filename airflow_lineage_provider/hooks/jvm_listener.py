"""The JVM listener the hook adds to a JVM application (a jar): the shipped jar, checked and copied, and
the Spark conf that registers it.

The listener (``job/listener/java/``, built into ``job/listener/airflow-lineage-listener.jar``, package
data) is a ``QueryExecutionListener``, with a ``StreamingQueryListener`` beside it for streaming sinks,
that writes the same dump our Python driver writes (raw records in ``plans.jsonl``, ``result.json`` at
application end) into the directory named by the Spark conf ``spark.airflow.lineage.dump``, so the
worker reads a jar's dump as a ``.py`` application's.

Spark fails session creation when a class named in ``spark.sql.queryExecutionListeners`` (or
``spark.sql.streaming.streamingQueryListeners``) cannot be loaded, so the user's job would fail for
lineage's sake: only a jar checked here is ever added, and the copy that was checked is the one
submitted (``checked_copy``). No Airflow import: a plain helper of the hook.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import tempfile
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

# The contract with the Java side (job/listener/java/): a unit test holds these to its sources and the jar.
JAR = Path(__file__).resolve().parents[1] / "job" / "listener" / "airflow-lineage-listener.jar"
JAVA_SOURCES = JAR.parent / "java"
LISTENER_CLASS = "airflow_lineage.listener.LineageListener"
STREAM_LISTENER_CLASS = "airflow_lineage.listener.LineageStreamListener"
LISTENERS_CONF = "spark.sql.queryExecutionListeners"  # Spark's own: a comma-separated list of classes
STREAM_LISTENERS_CONF = "spark.sql.streaming.streamingQueryListeners"  # the same, for streaming queries
# Each Spark list and the class of ours it gets; the jar must hold every one's class file.
LISTENERS = {LISTENERS_CONF: LISTENER_CLASS, STREAM_LISTENERS_CONF: STREAM_LISTENER_CLASS}
CLASS_ENTRIES = tuple(name.replace(".", "/") + ".class" for name in LISTENERS.values())
DUMP_CONF = "spark.airflow.lineage.dump"  # the listener's: where it writes; without it, it does nothing
# On a Spark Connect server (docs/spark-connect.md): the admin's static base, under which each client
# session's records go to <base>/<key>/; the client's runtime conf naming its key; the conf whose SET
# command is the client's completion barrier (its value comes back in result.json's "barrier"); the
# client's secret that seals its key's files (a runtime conf no other session reads; Spark redacts a conf
# whose name says "secret"); the admin's bounds on keys (seconds idle, keys open at once).
CONNECT_BASE_CONF = "spark.airflow.lineage.connect.base"
KEY_CONF = "spark.airflow.lineage.key"
FLUSH_CONF = "spark.airflow.lineage.flush"
SECRET_CONF = "spark.airflow.lineage.secret"
IDLE_TIMEOUT_CONF = "spark.airflow.lineage.connect.idleTimeout"
MAX_KEYS_CONF = "spark.airflow.lineage.connect.maxKeys"
# A key the server accepts: up to eight "/"-separated parts of a safe charset, none starting with a dot.
# So a key can never climb out of the base ("..", a leading "/"), name a scheme (no ":"), hide a file or
# reach another key's directory by a spelling trick (no "\\", no "%"). The server refuses (does not
# rewrite) any other key, so the client and the server never disagree on the directory; the jar reads
# this pattern from lineage.properties (scripts/build_listener.py).
KEY_CHARS = "A-Za-z0-9_.+=-"  # a regex class's body
_KEY_PART = rf"[{KEY_CHARS.replace('.', '')}][{KEY_CHARS}]{{0,127}}"
KEY_PATTERN = rf"{_KEY_PART}(/{_KEY_PART}){{0,7}}"
JARS_CONF = "spark.jars"


def is_jvm_application(application: str | None, java_class: str | None) -> bool:
    """Whether spark-submit runs ``application`` on the JVM: a jar, or a main class named beside a
    file that is no Python script (spark-submit reads a jar's ``Main-Class`` when none is named)."""
    app = str(application or "").lower()
    return app.endswith(".jar") or (bool(java_class) and not app.endswith(".py"))


def checked_copy(directory: str) -> tuple[str | None, str]:
    """A copy of the shipped listener jar in ``directory`` (the run's own staging directory), or
    ``None`` and why it cannot be added.

    The jar's bytes are read once, checked in memory (a zip whose every entry passes its CRC check,
    holding the listener classes) and the same bytes written: what is submitted is exactly what was
    checked, and a jar removed or damaged in the package after the check cannot reach Spark.
    """
    source = JAR
    try:
        data = source.read_bytes()
    except OSError as e:
        return None, f"the listener jar {source} cannot be read ({e.strerror or e})"
    why = _damage(data)
    if why:
        return None, f"the listener jar {source} {why}"
    target = os.path.join(directory, source.name)
    try:
        fd, partial = tempfile.mkstemp(dir=directory, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(partial, target)
    except OSError as e:
        return None, f"the listener jar could not be copied to {directory} ({e.strerror or e})"
    return target, ""


def jar_damage() -> str:
    """What is wrong with the package's listener jar ("" when nothing is)."""
    try:
        return _damage(JAR.read_bytes())
    except OSError as e:
        return f"cannot be read ({e.strerror or e})"


def _damage(data: bytes) -> str:
    """What is wrong with a jar's bytes ("" when nothing is)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            bad = archive.testzip()
            if bad is not None:
                return f"is damaged (its entry {bad} fails its CRC check)"
            missing = [entry for entry in CLASS_ENTRIES if entry not in archive.namelist()]
            if missing:
                return f"does not hold the listener's {', '.join(missing)}"
    except zipfile.BadZipFile as e:
        return f"is not a jar ({e})"
    except Exception as e:  # noqa: BLE001 - zlib, EOF, an unsupported compression: all mean "damaged"
        return f"is damaged ({type(e).__name__}: {e})"
    return ""


def listener_conf(conf: Mapping[str, Any] | None, dump: str, defaults: Mapping[str, str] | None = None
                  ) -> dict[str, str]:
    """The Spark conf that adds the listeners to a job whose own conf is ``conf``.

    ``spark.sql.queryExecutionListeners`` (and its streaming twin) is a list, and a ``--conf`` replaces the
    whole of it: so the listeners the user set are kept, from the task's conf, else from the properties
    spark-submit would load (``defaults``, see ``spark_defaults``), and ours is appended once.
    """
    out = {}
    for key, ours in LISTENERS.items():
        listeners = _names(_given(key, conf, defaults))
        if ours not in listeners:
            listeners.append(ours)
        out[key] = ",".join(listeners)
    return {**out, DUMP_CONF: dump}


def connect_server_conf(base: str, defaults: Mapping[str, str] | None = None) -> dict[str, str]:
    """The Spark conf that starts a Spark Connect server with the listener, each client's records going to
    ``<base>/<key>/`` (``docs/spark-connect.md``): ``listener_conf``'s listeners, with the base in the
    place of the one application's dump."""
    conf = listener_conf(None, base, defaults)
    del conf[DUMP_CONF]
    return {**conf, CONNECT_BASE_CONF: base}


def connect_key(*parts: Any) -> str:
    """A key the server accepts (``KEY_PATTERN``) made of ``parts`` (a DAG id, a run id...): each part's
    other characters become ``_``, a leading dot too, and it is cut to 128 characters."""
    safe = []
    for part in parts[:8]:
        text = re.sub(f"[^{KEY_CHARS}]", "_", str(part))[:128] or "_"
        safe.append("_" + text[1:] if text.startswith(".") else text)
    return "/".join(safe)


def jars_with(jars: str | None, conf: Mapping[str, Any] | None, defaults: Mapping[str, str] | None,
              listener_jar: str) -> str:
    """The ``--jars`` value that adds ``listener_jar`` to the jars the user gave.

    spark-submit's ``--jars`` replaces ``spark.jars`` (from ``--conf`` or the properties file) rather
    than adding to it: so when the user gave no ``--jars``, their ``spark.jars`` is carried over.
    """
    given = jars if jars else _given(JARS_CONF, conf, defaults)
    names = _names(given)
    if listener_jar not in names:
        names.append(listener_jar)
    return ",".join(names)


def _given(key: str, conf: Mapping[str, Any] | None, defaults: Mapping[str, str] | None) -> str | None:
    if conf and conf.get(key) is not None:
        return str(conf[key])
    return (defaults or {}).get(key)


def _names(value: str | None) -> list[str]:
    """A comma-separated Spark list, in order, without blanks or repeats."""
    out: list[str] = []
    for name in str(value or "").split(","):
        name = name.strip()
        if name and name not in out:
            out.append(name)
    return out


def spark_defaults(env: Mapping[str, str], *, spark_home: str | None = None, spark_binary: str | None = None,
                   properties_file: str | None = None) -> dict[str, str]:
    """The properties spark-submit loads before the command line's ``--conf``: ``properties_file``
    when given (spark-submit then skips the defaults file), else ``spark-defaults.conf`` in
    ``SPARK_CONF_DIR``, else in ``<SPARK_HOME>/conf`` (``spark_home``, else ``SPARK_HOME`` in ``env``,
    else the Spark the ``spark_binary`` belongs to). Best effort: a file not found or not readable
    gives no properties."""
    path = properties_file or _defaults_file(env, spark_home, spark_binary)
    if not path:
        return {}
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return parse_properties(f.read())
    except OSError:
        return {}


def _defaults_file(env: Mapping[str, str], spark_home: str | None, spark_binary: str | None) -> str | None:
    conf_dir = env.get("SPARK_CONF_DIR")
    if not conf_dir:
        home = spark_home or env.get("SPARK_HOME")
        if not home and spark_binary:
            found = shutil.which(spark_binary) if os.sep not in spark_binary else spark_binary
            if found:  # <SPARK_HOME>/bin/spark-submit, as spark-submit's own find-spark-home sees it
                home = str(Path(os.path.realpath(found)).parent.parent)
        if not home:
            return None
        conf_dir = os.path.join(home, "conf")
    return os.path.join(conf_dir, "spark-defaults.conf")


def parse_properties(text: str) -> dict[str, str]:
    """A Java properties file as Spark reads ``spark-defaults.conf``: ``key value``, ``key=value`` or
    ``key:value``, ``#`` and ``!`` comments, a trailing backslash continuing the line; values trimmed."""
    out: dict[str, str] = {}
    logical = ""
    for raw in text.splitlines():
        line = raw.lstrip() if not logical else raw.strip()
        if not logical and (not line or line[0] in "#!"):
            continue
        if _continues(line):
            logical += line[:-1]
            continue
        logical += line
        key, value = _split_property(logical)
        logical = ""
        if key:
            out[key] = value.strip()
    if logical:
        key, value = _split_property(logical)
        if key:
            out[key] = value.strip()
    return out


def _continues(line: str) -> bool:
    """An odd number of trailing backslashes continues the line (an even number is escaped ones)."""
    return (len(line) - len(line.rstrip("\\"))) % 2 == 1


def _split_property(line: str) -> tuple[str, str]:
    for i, char in enumerate(line):
        if char in "=: \t\f":
            rest = line[i:].lstrip(" \t\f")
            if rest[:1] in ("=", ":") and char in " \t\f":
                rest = rest[1:]
            elif char in "=:":
                rest = line[i + 1:]
            return line[:i], rest.lstrip(" \t\f")
    return line, ""
