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
submitted (``checked_copy``). For the same reason a job whose own jars hold another copy of the listener's
classes (an old shaded copy), which the driver would load instead of ours, runs without it (``shadowing``).
No Airflow import: a plain helper of the hook.
"""

from __future__ import annotations

import glob
import io
import os
import re
import shutil
import tempfile
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

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
DRIVER_CLASS_PATH_CONF = "spark.driver.extraClassPath"  # what spark-submit's --driver-class-path sets
PACKAGE = "airflow_lineage/"  # every class and resource of the listener's jar lives under it
# A multi-release jar's class loader reads META-INF/versions/<n>/<name> before <name> (JDK n and later).
_VERSIONED = re.compile(r"META-INF/versions/\d+/(.+)")


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


def shadowing(listener_jar: str, application: str | None, jars: str | None, conf: Mapping[str, Any] | None,
              defaults: Mapping[str, str] | None, driver_class_path: str | None = None) -> tuple[str, list[str]]:
    """Why the listener cannot be added to this job ("" when it can), and the jars not looked into.

    The driver loads a class from the first place on its class path that holds it: the extra class path
    (``--driver-class-path``, else ``spark.driver.extraClassPath``), then the application jar, then ``--jars`` (else
    ``spark.jars``, as ``jars_with`` reads them), each jar followed by those its manifest ``Class-Path`` lists, our
    jar last. So an entry under ``airflow_lineage/`` in any of those
    whose bytes differ from ``listener_jar``'s (an old shaded copy) is what Spark would load instead of ours, and
    fail the run. A byte-identical copy is ours; an entry ours does not hold is never loaded by ours; a jar a class
    loader cannot open holds nothing. A remote jar (``hdfs://``, ``s3a://``, ``https://``) cannot be looked into
    from here: it is returned, not held against the job.
    """
    try:
        with zipfile.ZipFile(listener_jar) as archive:
            ours = {name: archive.read(name) for name in archive.namelist()
                    if name.startswith(PACKAGE) and not name.endswith("/")}
    except (OSError, zipfile.BadZipFile) as e:  # checked_copy's copy: only a vanished file gets here
        return f"the listener jar {listener_jar} cannot be read ({e})", []
    extra = driver_class_path or _given(DRIVER_CLASS_PATH_CONF, conf, defaults)
    sources = [(entry, _class_path_entry(entry)) for entry in str(extra or "").split(os.pathsep) if entry.strip()]
    listed = _names(jars if jars else _given(JARS_CONF, conf, defaults))
    if application and application not in listed:
        listed.insert(0, str(application))
    sources += [(entry, _jar_list_entry(entry)) for entry in listed]
    unseen: list[str] = []
    seen: set[str] = set()
    for given, local in sources:
        if local is None:
            unseen.append(given)
            continue
        queue = list(local)
        while queue:
            path = queue.pop(0)
            if path in seen:
                continue
            seen.add(path)
            differing, listed_by_manifest = _differing(path, ours)
            if differing:
                return _shadow_reason(path, differing), unseen
            for url in listed_by_manifest:  # the jar's manifest Class-Path: the class loader opens those next
                if url.startswith("file:"):
                    queue.append(unquote(urlsplit(url).path))
                else:
                    unseen.append(url)
    return "", unseen


def _class_path_entry(entry: str) -> list[str]:
    """The files and directories a JVM class path entry names: a jar, a directory of classes, or ``dir/*`` (the
    jars in it, as Java reads the wildcard)."""
    entry = entry.strip()
    if os.path.basename(entry) == "*":
        return sorted(glob.glob(os.path.join(glob.escape(os.path.dirname(entry) or "."), "*.[jJ][aA][rR]")))
    return [entry]


def _jar_list_entry(entry: str) -> list[str] | None:
    """The local files a ``--jars`` entry names (a path, ``file:`` or ``local:`` URI, or a glob, which spark-submit
    expands), or ``None`` for a jar elsewhere (another scheme)."""
    parts = urlsplit(entry)
    if len(parts.scheme) > 1 and parts.scheme not in ("file", "local"):
        return None
    path = unquote(parts.path) if parts.scheme else entry
    return sorted(glob.glob(path)) if glob.has_magic(path) else [path]


def _differing(path: str, ours: Mapping[str, bytes]) -> tuple[list[str], list[str]]:
    """The entries of ours that the jar or class directory at ``path`` holds with other bytes (or unreadable), and
    the URLs of the jar's manifest ``Class-Path``."""
    if os.path.isdir(path):
        found: dict[str, list[str]] = {}
        for root, _, files in os.walk(os.path.join(path, PACKAGE)):
            for name in files:
                full = os.path.join(root, name)
                found.setdefault(os.path.relpath(full, path).replace(os.sep, "/"), []).append(full)
        return [name for name, files in sorted(found.items()) if name in ours
                and any(_file_bytes(f) != ours[name] for f in files)], []
    try:
        with zipfile.ZipFile(path) as archive:
            return _differing_entries(archive, ours, Path(os.path.abspath(path)).as_uri())
    except (OSError, zipfile.BadZipFile):  # not there, or not a jar: no class loader reads it
        return [], []


def _differing_entries(archive: zipfile.ZipFile, ours: Mapping[str, bytes], url: str) -> tuple[list[str], list[str]]:
    """``_differing`` for an open jar whose URL is ``url``."""
    try:
        # A manifest line starting with one space continues the one before (lines wrap at 72 bytes).
        manifest = archive.read("META-INF/MANIFEST.MF").decode("utf-8", "replace").replace("\r\n", "\n")
        manifest = manifest.replace("\n ", "")
    except Exception:  # noqa: BLE001 - no manifest, or an unreadable one: not multi-release, no Class-Path
        manifest = ""
    versioned = re.search(r"^Multi-Release:\s*true\s*$", manifest, re.I | re.M) is not None
    class_path = re.search(r"^Class-Path:(.*)$", manifest, re.I | re.M)
    listed = [urljoin(url, ref) for ref in (class_path.group(1).split() if class_path else [])]
    out = []
    for info in archive.infolist():  # every entry, a repeated name's each copy too
        name = info.filename
        match = _VERSIONED.fullmatch(name) if versioned else None
        base = match.group(1) if match else name
        if base not in ours or info.is_dir():
            continue
        try:
            same = archive.read(info) == ours[base]
        except Exception:  # noqa: BLE001 - CRC, zlib, an unknown compression: a copy Spark may still load, not ours
            same = False
        if not same and name not in out:
            out.append(name)
    return out, listed


def _file_bytes(path: str) -> bytes | None:
    """A class file's bytes; ``None`` when it cannot be read (never equal to ours)."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def _shadow_reason(path: str, entries: list[str]) -> str:
    """One sentence: which jar, which class, and what it would do."""
    ours = {entry: i for i, entry in enumerate(CLASS_ENTRIES)}
    first = min(entries, key=lambda e: (ours.get(_VERSIONED.sub(r"\1", e), len(ours)), entries.index(e)))
    base = _VERSIONED.sub(r"\1", first)
    what = f"class {base[:-len('.class')].replace('/', '.')}" if base.endswith(".class") else f"entry {base}"
    if base != first:
        what += f" (as {first})"
    more = f" and {len(entries) - 1} more of its entries" if len(entries) > 1 else ""
    return (f"{path} holds another copy of the listener's {what}{more}: an older copy of the listener would be "
            "loaded and fail the run")


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
