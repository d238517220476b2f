"""A Spark Connect client's side of the capture on the server (``docs/spark-connect.md``).

The server runs the JVM listener with a base dump location (``jvm_listener.connect_server_conf``); the
client names its key under that base (``start``), and when it is done runs the barrier and reads what the
server wrote for the key (``finish``). The client never reaches the server's JVM: the key travels as a
runtime conf of its session, the barrier as a ``SET`` command, and the records through a location both
can reach (a shared directory, ``file://`` on a shared mount, ``hdfs://``, ``s3a://``: ``dump_location``).
No Airflow import: the operator side (``hooks/session_capture.py``, ``operators/session.py``) calls it.
"""

from __future__ import annotations

import logging
import os
import time
import uuid
from typing import Any

from airflow_lineage_provider.hooks import dump_location
from airflow_lineage_provider.hooks.jvm_listener import (
    CONNECT_BASE_CONF,
    FLUSH_CONF,
    KEY_CONF,
    LISTENER_CLASS,
    LISTENERS_CONF,
)
from airflow_lineage_provider.job.dump import RESULT, JobResult, read_dump

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 120.0
_POLL_S = 0.2
_UNSEEN_S = 10.0


def server_base(spark: Any) -> tuple[str | None, str]:
    """The base the server's listener writes under, as the server names it, or ``None`` and why there is
    none. A client reads the server's static confs like any other: so a task learns from the server itself
    whether it runs the listener, and where (``docs/spark-connect.md``)."""
    try:
        listeners = spark.conf.get(LISTENERS_CONF, "") or ""
        base = spark.conf.get(CONNECT_BASE_CONF, "") or ""
    except Exception as e:  # noqa: BLE001 - lineage never breaks the job
        return None, f"the Spark Connect server's settings could not be read ({type(e).__name__}: {e})"
    if LISTENER_CLASS not in [c.strip() for c in listeners.split(",")]:
        return None, (f"the Spark Connect server does not run the column lineage listener ({LISTENERS_CONF} "
                      f"has no {LISTENER_CLASS}: see airflow-lineage connect-server-conf)")
    if not base:
        return None, f"the Spark Connect server runs the column lineage listener without {CONNECT_BASE_CONF}"
    return base, ""


def start(spark: Any, key: str) -> None:
    """Name this session's key: the server captures its writes from now on into ``<base>/<key>/``."""
    spark.conf.set(KEY_CONF, key)


def stop(spark: Any) -> None:
    """This session's later statements are no longer captured (best effort: the session may be gone)."""
    try:
        spark.conf.unset(KEY_CONF)
    except Exception as e:  # noqa: BLE001 - lineage never breaks the job
        log.debug("The lineage key could not be unset: %s", e)


def key_location(base: str, key: str) -> str:
    """Where the server writes ``key``'s dump: ``<base>/<key>``, as the listener joins them."""
    return f"{base.rstrip('/')}/{key}"


def finish(spark: Any, base: str, key: str, *, timeout: float = DEFAULT_TIMEOUT_S, keep: bool = False) -> JobResult:
    """Run the barrier, wait (at most ``timeout`` seconds) for the server's result of ``key``, read the key's
    dump and remove it (``keep``: leave it); the session's key is unset. Never raises: what went wrong is
    the result's warning.

    The barrier's token is fresh, so a result left by an earlier barrier of the same key is never taken
    for this one's. A local base this worker does not see is given up after ``_UNSEEN_S``, not ``timeout``:
    the server writes where this worker cannot look, and waiting longer would only delay the task.
    """
    token = uuid.uuid4().hex
    try:
        spark.sql(f"SET {FLUSH_CONF}={token}")
    except Exception as e:  # noqa: BLE001 - the session failed: the job's own error is the user's to see
        stop(spark)
        return _nothing(f"the lineage barrier could not run on the Spark Connect server: {e}")
    stop(spark)
    location = key_location(base, key)
    local_base = dump_location.local_path(base)
    started = time.monotonic()
    while True:
        try:
            with dump_location.fetched(location) as local:
                if os.path.exists(os.path.join(local, RESULT)):
                    result = read_dump(local)
                    if result.barrier == token:
                        if not keep:
                            forget(base, key)  # read: the server's base keeps no task's records
                        return result
        except (dump_location.DumpLocationError, OSError) as e:
            return _nothing(str(e))
        waited = time.monotonic() - started
        if local_base is not None and not os.path.isdir(local_base) and waited >= min(_UNSEEN_S, timeout):
            return _nothing(f"the Spark Connect server's lineage location {base} is not a directory on this worker "
                            f"(set [column_lineage] connect_dump_base to where this worker reaches it)")
        if waited >= timeout:
            return _nothing(
                f"the Spark Connect server wrote no lineage result for key {key} in {location} within {timeout:g} s "
                f"(is it running the listener with {CONNECT_BASE_CONF}={base}, and is that location shared with "
                "this worker? the listener's warning is in the server's log)")
        time.sleep(_POLL_S)


def forget(base: str, key: str) -> None:
    """Remove ``key``'s records, and the directories of a local base it leaves empty (best effort)."""
    dump_location.remove(key_location(base, key))
    local = dump_location.local_path(base)
    if local is None:
        return
    parts = key.split("/")[:-1]
    while parts:
        try:
            os.rmdir(os.path.join(local, *parts))  # only an empty one: another try's key may share it
        except OSError:
            return
        parts.pop()


def _nothing(why: str) -> JobResult:
    log.warning("No plan column lineage: %s", why)
    return JobResult(warnings=[f"no plan lineage: {why}"])
