"""Where a job's dump lives, seen from the Airflow side (the hook and the CLI).

A local directory (the default, for client deploy mode), or a ``dump_uri`` that both the
Airflow worker and a Spark driver running elsewhere can reach: ``file:///shared/...`` on a
mount both see, ``hdfs://...``, ``s3a://...``. The driver writes it through Spark's Hadoop
FileSystem API; the hook reads it back through the same scheme: ``file:`` URIs and bare
paths directly, other schemes with ``fsspec`` (``s3a``/``s3n`` read as ``s3``; install the
matching fsspec implementation, e.g. ``s3fs``, or ``pyarrow`` for HDFS).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from contextlib import contextmanager
from typing import Iterator
from urllib.parse import unquote, urlsplit

from airflow_lineage_provider.job.dump import PLANS, RESULT
from airflow_lineage_provider.lineage.naming import is_uri

_FSSPEC_PROTOCOL = {"s3a": "s3", "s3n": "s3"}


class DumpLocationError(RuntimeError):
    """The dump location cannot be used from here: says which one and why."""


def local_path(location: str) -> str | None:
    """The local path of a bare path or ``file:`` URI; None for other schemes."""
    if not is_uri(location):
        return location
    parts = urlsplit(location)
    if parts.scheme.lower() == "file" and parts.netloc in ("", "localhost"):
        return unquote(parts.path)
    return None


def run_location(base: str) -> str:
    """A fresh directory for one run under ``base`` (many tasks share one ``dump_uri``)."""
    return f"{base.rstrip('/')}/run-{uuid.uuid4().hex[:16]}"


def _fs(location: str):
    scheme = urlsplit(location).scheme.lower()
    try:
        import fsspec

        return fsspec.filesystem(_FSSPEC_PROTOCOL.get(scheme, scheme))
    except (ImportError, ValueError) as e:
        raise DumpLocationError(
            f"The dump at {location} cannot be reached from this Airflow worker: no fsspec file system "
            f"for {scheme!r} ({e}). Install it (s3fs for s3a://, pyarrow for hdfs://) or use a file:// "
            f"directory that both the Spark driver and the worker mount."
        ) from e


def _fs_path(location: str) -> str:
    scheme = urlsplit(location).scheme.lower()
    if scheme in _FSSPEC_PROTOCOL:
        return "s3://" + location.split("://", 1)[1]
    return location


def write_file(location: str, name: str, data: str | bytes) -> str:
    """Write ``name`` (text, or bytes as they are) under the directory ``location``; the file's location."""
    mode, encoding = ("wb", None) if isinstance(data, bytes) else ("w", "utf-8")
    path = local_path(location)
    if path is not None:
        os.makedirs(path, exist_ok=True)
        with open(os.path.join(path, name), mode, encoding=encoding) as f:
            f.write(data)
        return location.rstrip("/") + "/" + name if is_uri(location) else os.path.join(path, name)
    fs = _fs(location)
    target = _fs_path(location).rstrip("/") + "/" + name
    with fs.open(target, mode) as f:
        f.write(data)
    return location.rstrip("/") + "/" + name


def copy_file(location: str, source: str) -> str:
    """Copy the local file ``source`` (a script, a jar: its bytes as they are) into the directory
    ``location``; the copy's location."""
    with open(source, "rb") as f:
        return write_file(location, os.path.basename(source), f.read())


def make_dir(location: str) -> None:
    """Create the directory ``location`` (and its parents); raises ``OSError`` (or ``DumpLocationError``)
    where it cannot be made."""
    path = local_path(location)
    if path is not None:
        os.makedirs(path, exist_ok=True)
        return
    _fs(location).makedirs(_fs_path(location), exist_ok=True)


@contextmanager
def fetched(location: str) -> Iterator[str]:
    """A local directory holding the dump's files (a temporary copy for remote schemes)."""
    path = local_path(location)
    if path is not None:
        yield path
        return
    fs = _fs(location)
    tmp = tempfile.mkdtemp(prefix="airflow-lineage-dump-")
    try:
        for name in (PLANS, RESULT):
            remote = _fs_path(location).rstrip("/") + "/" + name
            if fs.exists(remote):
                fs.get(remote, os.path.join(tmp, name))
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def remove(location: str) -> None:
    path = local_path(location)
    if path is not None:
        shutil.rmtree(path, ignore_errors=True)
        return
    try:
        _fs(location).rm(_fs_path(location), recursive=True)
    except Exception:  # noqa: BLE001 - cleaning up is best effort
        pass
